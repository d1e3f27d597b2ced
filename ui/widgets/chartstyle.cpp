#include "ui/widgets/chartstyle.h"

#include <QChart>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLegend>
#include <QPalette>
#include <QValueAxis>

#include <cmath>

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

void setRoundedRange(QValueAxis *axis, double top, const std::vector<double> &steps, double emptyTop)
{
    // Headroom above the highest line, rounded to a readable step.
    const double span = top <= 0 ? emptyTop : top * 1.15;
    double step = steps.empty() ? 1 : steps.back();
    for (double candidate : steps)
        if (span / candidate <= 8) {
            step = candidate;
            break;
        }
    while (span / step > 8)
        step *= 2;
    axis->setRange(0, std::ceil(span / step) * step);
    axis->setTickCount(static_cast<int>(std::ceil(span / step)) + 1);
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
