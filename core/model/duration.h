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
/// Parses a share of a table's rows as the workspace file writes it: a percentage (`0.1%`) or a
/// fraction (`0.001`), from 0 to 100%. Returns the fraction, or nullopt on anything else.
std::optional<double> parseShare(std::string_view text);
/// A fraction as a percentage, exactly enough for parseShare() to read it back: `0.1%`.
std::string formatShare(double fraction);

/// For people: `220 kB`, `11.5 MB`, `3.2 GB` (powers of 1024, one decimal below 10).
std::string humanBytes(std::int64_t bytes);

} // namespace driftless::core
