#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace driftless::core {

/// `2026-11-29T10:00:00.123Z`: ms since the Unix epoch, in UTC, as events, reports and the
/// agent API spell times.
std::string formatIso8601(std::int64_t ms);
/// What formatIso8601() wrote (the fraction optional), in ms since the epoch; nullopt otherwise.
std::optional<std::int64_t> parseIso8601(const std::string &text);

} // namespace driftless::core
