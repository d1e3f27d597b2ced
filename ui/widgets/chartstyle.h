#pragma once

#include <cstdint>
#include <vector>

class QCategoryAxis;
class QChart;
class QDateTimeAxis;
class QPalette;
class QValueAxis;

namespace driftless::ui {

/// How the app's charts (LagChart, SlotHistoryChart) look and scale, in one place so they read
/// alike: the system palette's theme, no animation, the legend left to a LegendStrip.
void styleChart(QChart *chart, const QPalette &palette);

/// Sets `axis` from 0 to a round value above `top` (with headroom), in ticks of the first of
/// `steps` that gives at most `maxIntervals` (eight by default; doubling the last one beyond), so
/// labels stay readable. `top` <= 0 uses `emptyTop`.
void setRoundedRange(QValueAxis *axis, double top, const std::vector<double> &steps, double emptyTop,
                     int maxIntervals = 8);

/// As setRoundedRange() for seconds, the ticks labelled in the one unit the axis' top reads best
/// in (s up to 2 min, min up to 2 h, h up to 2 d, then d): "7200" past two hours was neither
/// readable nor short enough for a narrow chart, which cut it to "...".
void setDurationRange(QCategoryAxis *axis, double topSeconds, double emptyTopSeconds);

/// 1, 2, 5, 10, 20, 50, ...: steps for a value in any unit.
const std::vector<double> &decimalSteps();

/// Shows [fromMs, toMs] on `axis` with labels that tell the ticks apart: seconds under ten
/// minutes, the weekday past six hours.
void setTimeRange(QDateTimeAxis *axis, std::int64_t fromMs, std::int64_t toMs);

} // namespace driftless::ui
