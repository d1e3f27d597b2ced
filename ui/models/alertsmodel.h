#pragma once

#include "core/engine/status/alerts.h"

#include <QAbstractTableModel>

#include <vector>

namespace driftless::ui {

/// The open alerts (core::Alert, from AlertCenter): what is wrong and what to do about it.
///
/// setAlerts() updates in place (one dataChanged) while the same alerts stay open in the same
/// order, since a lag alert's message changes with every snapshot; alerts opening or clearing
/// reset the model.
class AlertsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Level, Subject, Message, Action, Since, ColumnCount };
    Q_ENUM(Column)

    enum Role {
        SortRole = Qt::UserRole + 1,
        /// warn, error.
        LevelRole,
        /// lag_breach, table_error, slot_orphaned, ... (core::Alert::kind).
        KindRole,
    };
    Q_ENUM(Role)

    explicit AlertsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setAlerts(const std::vector<core::Alert> &alerts);
    const core::Alert &alert(int row) const { return m_alerts.at(static_cast<std::size_t>(row)); }

    /// `pipeline/table` or `source/slot`: what the alert is about.
    static QString subject(const core::Alert &a);

private:
    std::vector<core::Alert> m_alerts;
};

} // namespace driftless::ui
