#pragma once

#include <QString>

#include <cstdint>
#include <optional>
#include <string>

namespace driftless::ui {

/// `4 s`, `12 min`, `3 h 05 min`, `2 d`; an em dash when the table never synced.
QString formatLag(std::optional<double> seconds);
/// A duration without rounding to the largest unit only: `2 min`, `1 h`, `90 s`.
QString formatDuration(double seconds);
/// Local time, `2026-11-29 10:00:00`: DBAs compare it with server logs, so no "5 minutes ago".
QString formatTimestamp(std::int64_t msSinceEpoch);
/// `full_refresh` -> `full refresh`.
QString strategyLabel(const std::string &strategy);

} // namespace driftless::ui
