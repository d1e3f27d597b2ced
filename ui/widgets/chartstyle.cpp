#include "ui/widgets/chartstyle.h"

#include <QCategoryAxis>
#include <QChart>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLegend>
#include <QPalette>
#include <QStringList>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <utility>

namespace driftless::ui {

void styleChart(QChart *chart, const QPalette &palette)
{
    // Follow the system palette: a dark desktop gets the dark chart theme.
    const bool dark = palette.color(QPalette::Window).lightness() < 128;
    chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(4, 4, 4, 4));
    // The legend is a widget of its own under the chart (LegendStrip): Qt Charts' legend keeps
    // one row and cut twenty names to a few letters.
    chart->legend()->hide();
    chart->setAnimationOptions(QChart::NoAnimation);
}

namespace {
/// The rounded top and how many ticks up to it (see setRoundedRange()).
std::pair<double, int> roundedRange(double top, const std::vector<double> &steps, double emptyTop, int maxIntervals = 8)
{
    // Headroom above the highest line, rounded to a readable step.
    const double span = top <= 0 ? emptyTop : top * 1.15;
    const double most = std::max(1, maxIntervals);
    double step = steps.empty() ? 1 : steps.back();
    for (double candidate : steps)
        if (span / candidate <= most) {
            step = candidate;
            break;
        }
    while (span / step > most)
        step *= 2;
    return {std::ceil(span / step) * step, static_cast<int>(std::ceil(span / step)) + 1};
}
} // namespace

void setRoundedRange(QValueAxis *axis, double top, const std::vector<double> &steps, double emptyTop, int maxIntervals)
{
    const auto [max, ticks] = roundedRange(top, steps, emptyTop, maxIntervals);
    axis->setRange(0, max);
    axis->setTickCount(ticks);
}

void setDurationRange(QCategoryAxis *axis, double topSeconds, double emptyTopSeconds)
{
    static const std::vector<double> steps{1,   2,    5,    10,   15,    30,    60,    120,   300,    600,
                                           900, 1800, 3600, 7200, 14400, 21600, 43200, 86400, 172800, 604800};
    // A category axis counts its ticks from its categories, not from setTickCount().
    const auto [max, ticks] = roundedRange(topSeconds, steps, emptyTopSeconds);
    // One unit for the whole axis, the one its top reads best in: 90 s, 3.5 min, 2 h, 3 d.
    struct Unit {
        double seconds;
        const char *name;
    };
    const Unit unit = max <= 120      ? Unit{1, "s"}
                      : max <= 7200   ? Unit{60, "min"}
                      : max <= 172800 ? Unit{3600, "h"}
                                      : Unit{86400, "d"};
    QStringList labels;
    for (int i = 1; i < ticks; ++i) {
        const double n = max * i / (ticks - 1) / unit.seconds;
        const QString number =
            std::abs(n - std::round(n)) < 1e-9 ? QString::number(std::llround(n)) : QString::number(n, 'f', 1);
        labels << QStringLiteral("%1 %2").arg(number, QLatin1String(unit.name));
    }
    if (labels == axis->categoriesLabels() && axis->max() == max)
        return;
    for (const QString &label : axis->categoriesLabels())
        axis->remove(label);
    axis->setStartValue(0);
    for (int i = 1; i < ticks; ++i)
        axis->append(labels[i - 1], max * i / (ticks - 1));
    axis->setRange(0, max);
}

const std::vector<double> &decimalSteps()
{
    static const std::vector<double> steps = [] {
        std::vector<double> s;
        for (double decade = 0.01; decade < 1e7; decade *= 10)
            for (double m : {1.0, 2.0, 5.0})
                s.push_back(m * decade);
        return s;
    }();
    return steps;
}

void setTimeRange(QDateTimeAxis *axis, std::int64_t fromMs, std::int64_t toMs)
{
    constexpr std::int64_t kMinute = 60'000;
    const std::int64_t span = toMs - fromMs;
    if (span > 6 * 60 * kMinute)
        axis->setFormat(QStringLiteral("ddd HH:mm"));
    else if (span < 10 * kMinute)
        axis->setFormat(QStringLiteral("HH:mm:ss"));
    else
        axis->setFormat(QStringLiteral("HH:mm"));
    axis->setTickCount(span > 6 * 60 * kMinute ? 7 : 6);
    axis->setRange(QDateTime::fromMSecsSinceEpoch(fromMs), QDateTime::fromMSecsSinceEpoch(toMs));
}

} // namespace driftless::ui
