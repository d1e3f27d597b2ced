#include "ui/models/alertsmodel.h"

#include "core/base/isotime.h"
#include "ui/alertwording.h"

#include "ui/displayformat.h"
#include "ui/statusicons.h"

#include "core/engine/status/statusreport.h"

namespace driftless::ui {

AlertsModel::AlertsModel(QObject *parent) : QAbstractTableModel(parent) {}

int AlertsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_alerts.size());
}

int AlertsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AlertsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Level:
        return tr("Level");
    case Subject:
        return tr("About");
    case Message:
        return tr("What is wrong");
    case Action:
        return tr("What to do");
    case Since:
        return tr("Since");
    }
    return {};
}

QString AlertsModel::subject(const core::Alert &a)
{
    if (!a.slot.empty())
        return QString::fromStdString(a.source + "/" + a.slot);
    if (!a.table.empty())
        return QString::fromStdString(a.pipeline + "/" + a.table);
    if (!a.source.empty())
        return QString::fromStdString(a.source);
    return QString::fromStdString(a.pipeline);
}

QVariant AlertsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &a = m_alerts[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Level:
            return a.level == core::Level::Error ? tr("error") : tr("warning");
        case Subject:
            return subject(a);
        case Message:
            return QString::fromStdString(a.message);
        case Action:
            return appAction(a);
        case Since:
            return formatTimestamp(a.sinceMs);
        }
        return {};
    case Qt::DecorationRole:
        if (index.column() == Level)
            return levelIcon(spelled(a.level));
        return {};
    case Qt::ToolTipRole:
        switch (index.column()) {
        case Message:
        case Action:
            return QString::fromStdString(a.message) + tr("\n\nWhat to do: ") + appAction(a);
        case Level:
            return QString::fromStdString(a.kind);
        case Since:
            return QString::fromStdString(core::formatIso8601(a.sinceMs));
        }
        return {};
    case SortRole:
        if (index.column() == Since)
            return static_cast<qlonglong>(a.sinceMs);
        if (index.column() == Level)
            return a.level == core::Level::Error ? 0 : 1;
        return data(index, Qt::DisplayRole);
    case LevelRole:
        return spelled(a.level);
    case KindRole:
        return QString::fromStdString(a.kind);
    }
    return {};
}

void AlertsModel::setAlerts(const std::vector<core::Alert> &alerts)
{
    bool sameRows = alerts.size() == m_alerts.size();
    for (std::size_t i = 0; sameRows && i < alerts.size(); ++i)
        sameRows = alerts[i].id == m_alerts[i].id;
    if (!sameRows) {
        beginResetModel();
        m_alerts = alerts;
        endResetModel();
        return;
    }
    m_alerts = alerts;
    if (!m_alerts.empty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

} // namespace driftless::ui
