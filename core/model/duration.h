#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace driftless::core {

using Millis = std::chrono::milliseconds;

/// Parses `500ms`, `30s`, `10m`, `1h`, `2d`, or a bare number of seconds; also sums such as
/// `1h30m`. Returns nullopt on anything else.
std::optional<Millis> parseDuration(std::string_view text);

/// The shortest exact spelling: 600000 ms → "10m", 90000 ms → "90s".
std::string formatDuration(Millis d);

/// Parses byte sizes: `512`, `64kB`, `10MB`, `10GB`, `1TB` (powers of 1024, as Postgres does).
std::optional<std::int64_t> parseByteSize(std::string_view text);
std::string formatByteSize(std::int64_t bytes);
/// For people: `220 kB`, `11.5 MB`, `3.2 GB` (powers of 1024, one decimal below 10).
std::string humanBytes(std::int64_t bytes);

} // namespace driftless::core
