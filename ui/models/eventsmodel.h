#pragma once

#include "ui/enginesnapshot.h"

#include "core/model/staterecords.h"

#include <QAbstractTableModel>

#include <vector>

namespace driftless::ui {

/// The newest events of a workspace, newest first, over the events of an EngineSnapshot.
///
/// Events only ever arrive at the top and fall off the bottom, so setSnapshot() inserts the new
/// ones at row 0 and removes what the cap pushed out, instead of resetting: a DBA reading an old
/// error does not lose their place twice a second. Anything else (another workspace) resets.
class EventsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Time, Level, Pipeline, Table, Kind, Message, ColumnCount };
    Q_ENUM(Column)

    enum Role {
        SortRole = Qt::UserRole + 1,
        /// The engine's word: info, warn, error.
        LevelRole,
    };
    Q_ENUM(Role)

    explicit EventsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setSnapshot(const EngineSnapshot &snapshot);
    /// `events`: newest first.
    void setEvents(const std::vector<core::EventRecord> &events);

    const core::EventRecord &event(int row) const { return m_events.at(static_cast<std::size_t>(row)); }

private:
    std::vector<core::EventRecord> m_events;
};

} // namespace driftless::ui
