#pragma once

#include "core/model/duration.h"
#include "core/model/vocabulary.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace driftless::core {

/// Apply lag in seconds: how far behind the source the target is, from the time the target is
/// known fresh as of. nullopt when the table never completed a sync.
std::optional<double> lagSeconds(std::optional<std::int64_t> freshAsOfMs, std::int64_t nowMs);
Freshness freshnessOf(std::optional<double> lagSeconds, Millis sla);

} // namespace driftless::core
