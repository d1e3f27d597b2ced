#include "ui/displayformat.h"

#include "core/model/error.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QLocale>

#include <algorithm>
#include <cmath>

namespace driftless::ui {

QString describe(const std::exception &e)
{
    return QString::fromStdString(core::describe(e));
}

QString formatLag(std::optional<double> seconds)
{
    if (!seconds)
        return QStringLiteral("\u2014");
    const double s = *seconds;
    if (s < 1)
        return QStringLiteral("<1 s");
    const auto whole = static_cast<long long>(std::floor(s));
    if (whole < 120)
        return QStringLiteral("%1 s").arg(whole);
    if (whole < 7200)
        return QStringLiteral("%1 min").arg(whole / 60);
    if (whole < 2 * 86400)
        return QStringLiteral("%1 h %2 min").arg(whole / 3600).arg((whole % 3600) / 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1 d").arg(whole / 86400);
}

QString formatDuration(double seconds)
{
    const auto whole = static_cast<long long>(std::llround(seconds));
    if (whole % 86400 == 0 && whole >= 86400)
        return QStringLiteral("%1 d").arg(whole / 86400);
    if (whole % 3600 == 0 && whole >= 3600)
        return QStringLiteral("%1 h").arg(whole / 3600);
    if (whole % 60 == 0 && whole >= 60)
        return QStringLiteral("%1 min").arg(whole / 60);
    return QStringLiteral("%1 s").arg(whole);
}

QString formatTimestamp(std::int64_t msSinceEpoch)
{
    return QDateTime::fromMSecsSinceEpoch(msSinceEpoch).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QString formatBytes(std::int64_t bytes)
{
    const char *const units[] = {"kB", "MB", "GB", "TB", "PB"};
    const bool negative = bytes < 0;
    // Through double: the magnitude of INT64_MIN does not fit in an int64.
    double v = std::fabs(static_cast<double>(bytes));
    const QString sign = negative ? QStringLiteral("-") : QString();
    if (v < 1024)
        return sign + QStringLiteral("%1 bytes").arg(static_cast<long long>(v));
    int unit = -1;
    while (v >= 1024 && unit < 4) {
        v /= 1024;
        ++unit;
    }
    // One decimal while it says something (1.5 MB), none past 10 (120 MB).
    const int decimals = v < 10 ? 1 : 0;
    return sign + QStringLiteral("%1 %2").arg(v, 0, 'f', decimals).arg(QLatin1String(units[unit]));
}

QString formatEta(double seconds)
{
    const auto s = std::max(0LL, static_cast<long long>(std::llround(seconds)));
    if (s >= 3600)
        return QStringLiteral("%1h %2m").arg(s / 3600).arg(s % 3600 / 60, 2, 10, QLatin1Char('0'));
    if (s >= 60)
        return QStringLiteral("%1m %2s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1s").arg(s);
}

QString formatBackfill(const core::TableReport::Backfill &b)
{
    const QLocale locale;
    const QString rows = locale.toString(static_cast<qlonglong>(b.rows));
    if (!b.total || !b.percent)
        return QStringLiteral("%1 rows copied").arg(rows);
    QString text = QStringLiteral("%1% \u00b7 %2 of %3 rows")
                       .arg(static_cast<int>(std::floor(*b.percent)))
                       .arg(rows, locale.toString(static_cast<qlonglong>(*b.total)));
    if (b.etaSeconds)
        text += QStringLiteral(" \u00b7 ~%1 left").arg(formatEta(*b.etaSeconds));
    return text;
}

QString directionLabel(const core::TableReport &r)
{
    if (r.twoWay.empty())
        return {};
    const auto endpoint = [](const std::string &side) {
        return QString::fromStdString(side.substr(0, side.find(':')));
    };
    return QStringLiteral("%1 \u2192 %2").arg(endpoint(r.source), endpoint(r.target));
}

QString strategyLabel(core::Strategy strategy)
{
    return spelled(strategy).replace(QLatin1Char('_'), QLatin1Char(' '));
}

QString stateLabel(core::TableState state)
{
    return spelled(state).replace(QLatin1Char('_'), QLatin1Char(' '));
}

QString sourceIdentityText(const core::SourceIdentity &id)
{
    const QString none = QCoreApplication::translate("driftless::ui", "not recorded");
    if (id.postgres)
        return QCoreApplication::translate("driftless::ui", "system id %1, timeline %2")
            .arg(id.systemId.empty() ? none : QString::fromStdString(id.systemId),
                 id.timeline ? QString::number(id.timeline) : none);
    return QCoreApplication::translate("driftless::ui", "server_id %1, GTID %2")
        .arg(id.serverId ? QString::number(id.serverId) : none,
             id.gtid.empty() ? none : QString::fromStdString(id.gtid));
}

} // namespace driftless::ui
