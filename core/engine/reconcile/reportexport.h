#pragma once

#include "core/engine/reconcile/reconciler.h"

#include <string>

namespace driftless::core {

/// A report as CSV (RFC 4180: CRLF line ends, fields with a comma, quote or line break quoted,
/// quotes doubled): a header, then one row per differing row kept in the report, table by table:
/// `pipeline,table,key,kind,columns,source,target`. `key` is the key's text for a one-column key,
/// else a JSON array; `kind` is missing, extra or different; for a different row `columns` names
/// the differing columns (", " between them) and `source` and `target` are JSON objects of their
/// values (null for NULL); the three are empty for missing and extra rows.
std::string reportCsv(const ReconcileReport &report);

/// A report as one standalone HTML page (no scripts, no outside resources, every value escaped):
/// a summary per table, then its differing rows.
std::string reportHtml(const ReconcileReport &report);

/// `text` with & < > " ' as HTML entities.
std::string htmlEscape(const std::string &text);

} // namespace driftless::core
