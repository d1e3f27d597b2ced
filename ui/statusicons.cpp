#include "ui/statusicons.h"

#include "ui/displayformat.h"
#include "ui/resources.h"

#include <QHash>

namespace driftless::ui {

QIcon namedIcon(const QString &name)
{
    // data() asks for decorations on every repaint; parsing an SVG each time would show.
    static QHash<QString, QIcon> cache;
    auto it = cache.constFind(name);
    if (it != cache.constEnd())
        return *it;
    initResources();
    QIcon icon(QStringLiteral(":/icons/%1.svg").arg(name));
    cache.insert(name, icon);
    return icon;
}

QIcon freshnessIcon(const QString &freshness)
{
    if (freshness == QLatin1String("ok") || freshness == QLatin1String("warn") || freshness == QLatin1String("breach"))
        return namedIcon(freshness);
    return namedIcon(QStringLiteral("unknown"));
}

QIcon freshnessIcon(core::Freshness freshness)
{
    return freshnessIcon(spelled(freshness));
}

QIcon stateIcon(core::TableState state)
{
    switch (state) {
    case core::TableState::Error:
        return namedIcon(QStringLiteral("error"));
    case core::TableState::SourceChanged:
        return namedIcon(QStringLiteral("sourcechanged"));
    case core::TableState::Retrying:
        return namedIcon(QStringLiteral("warn"));
    case core::TableState::Paused:
        return namedIcon(QStringLiteral("pause"));
    default:
        return {};
    }
}

QIcon levelIcon(const QString &level)
{
    if (level == QLatin1String("error"))
        return namedIcon(QStringLiteral("error"));
    if (level == QLatin1String("warn") || level == QLatin1String("warning"))
        return namedIcon(QStringLiteral("warn"));
    return namedIcon(QStringLiteral("info"));
}

QIcon levelIcon(core::Level level)
{
    return levelIcon(spelled(level));
}

} // namespace driftless::ui
