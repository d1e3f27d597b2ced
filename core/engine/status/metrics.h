#pragma once

#include "core/engine/slots/slots.h"
#include "core/engine/status/alerts.h"
#include "core/engine/status/statusreport.h"

#include <string>
#include <vector>

namespace driftless::core {

/// The Prometheus text exposition (format 0.0.4) of the tables, slots and open alerts:
/// `driftless_lag_seconds{pipeline,table}`, `driftless_rows_applied_total{pipeline,table,strategy}`,
/// `driftless_slot_retained_bytes{source,slot}` and the rest, each with HELP and TYPE.
std::string prometheusText(const std::vector<TableReport> &tables, const std::vector<SourceSlots> &sources,
                           const std::vector<Alert> &alerts);

/// A label value escaped for the text format (backslash, double quote, newline).
std::string prometheusEscape(const std::string &value);

} // namespace driftless::core
