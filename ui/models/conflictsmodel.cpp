#include "ui/models/conflictsmodel.h"

#include <nlohmann/json.hpp>

#include <QDateTime>
#include <QLocale>
#include <QStringList>

namespace driftless::ui {

namespace {

/// A JSON value as a DBA reads it: strings without quotes, anything else as JSON.
QString plain(const nlohmann::json &v)
{
    return v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString::fromStdString(v.dump());
}

nlohmann::json parsed(const std::string &text)
{
    return nlohmann::json::parse(text, nullptr, false);
}

QString detectedText(std::int64_t ms)
{
    if (ms <= 0)
        return ConflictsModel::tr("unknown");
    return QLocale().toString(QDateTime::fromMSecsSinceEpoch(ms), QLocale::ShortFormat);
}

} // namespace

ConflictsModel::ConflictsModel(QObject *parent) : QAbstractTableModel(parent) {}

int ConflictsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ConflictsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString ConflictsModel::keyText(const std::string &keyJson)
{
    const auto key = parsed(keyJson);
    if (!key.is_object())
        return QString::fromStdString(keyJson);
    QStringList parts;
    for (const auto &[name, value] : key.items())
        parts << QString::fromStdString(name) + QStringLiteral(": ") + plain(value);
    return parts.join(QStringLiteral(", "));
}

QString ConflictsModel::columnsText(const std::string &columnsJson)
{
    const auto columns = parsed(columnsJson);
    if (!columns.is_array())
        return QString::fromStdString(columnsJson);
    QStringList names;
    for (const auto &c : columns)
        names << plain(c);
    return names.join(QStringLiteral(", "));
}

QVariant ConflictsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &c = m_rows[static_cast<std::size_t>(index.row())];
    if (role == IdRole)
        return QVariant::fromValue<qlonglong>(c.id);
    if (role == SortRole && index.column() == DetectedAt)
        return QVariant::fromValue<qlonglong>(c.detectedAtMs);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != SortRole)
        return {};
    switch (index.column()) {
    case Pipeline:
        return QString::fromStdString(c.record.pipeline);
    case Table:
        return QString::fromStdString(c.record.table);
    case Key:
        return keyText(c.record.key);
    case Columns:
        if (role == Qt::ToolTipRole)
            return tr("Both sides changed %1 of this row since the last exchange").arg(columnsText(c.record.columns));
        return columnsText(c.record.columns);
    case DetectedAt:
        if (role == Qt::ToolTipRole)
            return tr("Conflict %1, detected %2").arg(c.id).arg(detectedText(c.detectedAtMs));
        return detectedText(c.detectedAtMs);
    }
    return {};
}

QVariant ConflictsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Pipeline:
        return tr("Pipeline");
    case Table:
        return tr("Table");
    case Key:
        return tr("Key");
    case Columns:
        return tr("Changed on both");
    case DetectedAt:
        return tr("Detected");
    }
    return {};
}

void ConflictsModel::setConflicts(std::vector<core::QueuedConflict> conflicts)
{
    beginResetModel();
    m_rows = std::move(conflicts);
    endResetModel();
}

int ConflictsModel::rowOfId(std::int64_t id) const
{
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].id == id)
            return static_cast<int>(i);
    return -1;
}

ConflictsModel::CountByTable ConflictsModel::countByTable() const
{
    CountByTable out;
    for (const auto &c : m_rows)
        ++out[{c.record.pipeline, c.record.table}];
    return out;
}

} // namespace driftless::ui
