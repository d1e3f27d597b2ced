#include "ui/mappingtext.h"

#include <QCoreApplication>
#include <QStringList>

namespace driftless::ui {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("driftless::ui::Mapping", text);
}

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

QString names(const std::vector<std::string> &list)
{
    QStringList out;
    for (const auto &n : list)
        out << qs(n);
    return out.join(QStringLiteral(", "));
}

} // namespace

QString maskText(const core::ColumnMask &mask)
{
    switch (mask.kind) {
    case core::ColumnMask::Kind::Null:
        return tr("null");
    case core::ColumnMask::Kind::Truncate:
        return tr("truncate to %1").arg(mask.count);
    case core::ColumnMask::Kind::KeepLast:
        return tr("keep last %1").arg(mask.count);
    case core::ColumnMask::Kind::Hash:
        return QStringLiteral("hmac-sha256");
    }
    return {};
}

QString mappingText(const core::TableSpec &spec)
{
    if (!spec.columns || spec.columns->empty())
        return tr("every column, as it is");
    const core::ColumnMapping &m = *spec.columns;
    QStringList lines;
    if (m.hasInclude)
        lines << tr("only: %1").arg(names(m.include));
    else if (!m.exclude.empty())
        lines << tr("left out: %1").arg(names(m.exclude));
    if (!m.rename.empty()) {
        QStringList parts;
        for (const auto &[from, to] : m.rename)
            parts << QStringLiteral("%1 \u2192 %2").arg(qs(from), qs(to));
        lines << tr("renamed: %1").arg(parts.join(QStringLiteral(", ")));
    }
    if (!m.mask.empty()) {
        QStringList parts;
        for (const auto &[column, mask] : m.mask)
            parts << QStringLiteral("%1 (%2)").arg(qs(column), maskText(mask));
        lines << tr("masked: %1").arg(parts.join(QStringLiteral(", ")));
    }
    return lines.join(QLatin1Char('\n'));
}

QString filterText(const core::TableSpec &spec)
{
    return spec.where ? tr("where %1").arg(qs(*spec.where)) : tr("every row");
}

QString deletesText(const core::TableSpec &spec)
{
    const std::string d = spec.deletes.value_or("hard");
    if (d == "ignore")
        return tr("ignore: the target keeps rows deleted at the source (each delete is logged)");
    if (d == "soft")
        return tr("soft: a deleted row stays, with _driftless_deleted_at set");
    return spec.deletes ? tr("hard: deleted at the source, deleted on the target")
                        : tr("hard (default): deleted at the source, deleted on the target");
}

} // namespace driftless::ui
