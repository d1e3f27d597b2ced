#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace driftless::ui {

class AlertsModel;
class EventsModel;

/// Alerts & Log: the open alerts (what is wrong, and what to do about it) above the workspace's
/// event log, which can be narrowed to warnings and errors.
class AlertsPage final : public QWidget {
    Q_OBJECT
public:
    AlertsPage(AlertsModel *alerts, EventsModel *events, QWidget *parent = nullptr);

    QTableView *alertsView() const { return m_alertsView; }
    QTableView *eventsView() const { return m_eventsView; }
    QComboBox *levelFilter() const { return m_level; }
    /// How many alerts are open right now.
    int alertCount() const;

signals:
    void alertCountChanged(int count);

private:
    void updateAlerts();
    void applyLevel(int index);
    void fitEventColumns();

    AlertsModel *m_alerts;
    QSortFilterProxyModel *m_events;
    QTableView *m_alertsView;
    QTableView *m_eventsView;
    QLabel *m_alertsTitle;
    QLabel *m_allClear;
    QComboBox *m_level;
    int m_lastAlertCount = -1;
};

} // namespace driftless::ui
