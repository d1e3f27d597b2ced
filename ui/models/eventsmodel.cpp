#include "ui/models/eventsmodel.h"

#include "core/base/isotime.h"
#include "ui/displayformat.h"
#include "ui/statusicons.h"

#include <algorithm>

namespace driftless::ui {

namespace {

bool sameEvent(const core::EventRecord &a, const core::EventRecord &b)
{
    return a.id == b.id && a.tsMs == b.tsMs && a.level == b.level && a.pipeline == b.pipeline && a.table == b.table &&
           a.kind == b.kind && a.message == b.message;
}

/// How many events at the top of `next` are new, when `next` is `current` with events added at
/// the top and possibly cut at the bottom; -1 when it is not.
int newAtTop(const std::vector<core::EventRecord> &current, const std::vector<core::EventRecord> &next)
{
    if (current.empty())
        return static_cast<int>(next.size());
    for (std::size_t added = 0; added < next.size(); ++added) {
        if (!sameEvent(next[added], current.front()))
            continue;
        const std::size_t overlap = std::min(current.size(), next.size() - added);
        for (std::size_t i = 0; i < overlap; ++i)
            if (!sameEvent(next[added + i], current[i]))
                return -1;
        return static_cast<int>(added);
    }
    return -1;
}

} // namespace

EventsModel::EventsModel(QObject *parent) : QAbstractTableModel(parent) {}

int EventsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_events.size());
}

int EventsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant EventsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Time:
        return tr("Time");
    case Level:
        return tr("Level");
    case Pipeline:
        return tr("Pipeline");
    case Table:
        return tr("Table");
    case Kind:
        return tr("Kind");
    case Message:
        return tr("Message");
    }
    return {};
}

QVariant EventsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &e = m_events[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Time:
            return formatTimestamp(e.tsMs);
        case Level:
            return spelled(e.level);
        case Pipeline:
            return QString::fromStdString(e.pipeline);
        case Table:
            return QString::fromStdString(e.table);
        case Kind:
            return QString::fromStdString(e.kind);
        case Message:
            return QString::fromStdString(e.message);
        }
        return {};
    case Qt::DecorationRole:
        if (index.column() == Level)
            return levelIcon(spelled(e.level));
        return {};
    case Qt::ToolTipRole:
        if (index.column() == Message && !e.message.empty())
            return QString::fromStdString(e.message);
        if (index.column() == Time)
            return QString::fromStdString(core::formatIso8601(e.tsMs));
        return {};
    case SortRole:
        if (index.column() == Time)
            return static_cast<qlonglong>(e.tsMs);
        return data(index, Qt::DisplayRole);
    case LevelRole:
        return spelled(e.level);
    }
    return {};
}

void EventsModel::setSnapshot(const EngineSnapshot &snapshot)
{
    setEvents(snapshot.events);
}

void EventsModel::setEvents(const std::vector<core::EventRecord> &events)
{
    const int added = newAtTop(m_events, events);
    if (added < 0) {
        beginResetModel();
        m_events = events;
        endResetModel();
        return;
    }
    // Cut first, so the rows removed are the old ones at the bottom.
    const auto keep = events.size() - static_cast<std::size_t>(added);
    if (keep < m_events.size()) {
        beginRemoveRows({}, static_cast<int>(keep), static_cast<int>(m_events.size()) - 1);
        m_events.resize(keep);
        endRemoveRows();
    } else if (keep > m_events.size()) {
        // Older events than we had (a larger cap): they belong at the bottom.
        const auto have = m_events.size();
        beginInsertRows({}, static_cast<int>(have), static_cast<int>(keep) - 1);
        m_events.insert(m_events.end(), events.begin() + added + static_cast<std::ptrdiff_t>(have), events.end());
        endInsertRows();
    }
    if (added > 0) {
        beginInsertRows({}, 0, added - 1);
        m_events.insert(m_events.begin(), events.begin(), events.begin() + added);
        endInsertRows();
    }
}

} // namespace driftless::ui
