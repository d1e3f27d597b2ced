#pragma once

#include "ui/enginesnapshot.h"
#include "ui/slotsample.h"

#include "core/engine/status/alerts.h"

#include <QObject>
#include <QString>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace driftless::ui {

/// The open alerts of the workspace on screen: core::computeAlerts() over the newest engine
/// snapshot (tables) and slot sample (slots), tracked so that each alert opens once.
///
/// It keeps since when each slot has been seen inactive (core::SlotActivity, as serve does),
/// from one slot sample to the next. Everything here is computation on values already read: no
/// database is touched, so it runs on the UI thread whenever a snapshot or sample lands.
///
/// Opening another workspace forgets everything; the alerts it already has open then arrive in
/// one alertsOpened(), like any new ones.
class AlertCenter final : public QObject {
    Q_OBJECT
public:
    explicit AlertCenter(QObject *parent = nullptr);

    /// Open alerts, errors first, then by when they opened.
    const std::vector<core::Alert> &alerts() const { return m_alerts; }
    const std::map<std::string, std::int64_t> &inactiveSince() const { return m_activity.inactiveSince(); }

public slots:
    void setSnapshot(const driftless::ui::EngineSnapshot &snapshot);
    void setSlotSample(const driftless::ui::SlotSample &sample);

signals:
    void alertsChanged(const std::vector<driftless::core::Alert> &alerts);
    /// Alerts that were not open at the previous update.
    void alertsOpened(const std::vector<driftless::core::Alert> &opened);

private:
    void reset(const QString &statePath);
    void update(std::int64_t nowMs);

    QString m_path;
    std::shared_ptr<const core::Workspace> m_workspace;
    SharedList<core::TableReport> m_tables; // the snapshot's, shared
    std::vector<core::SourceSlots> m_sources;
    core::SlotActivity m_activity;
    core::AlertTracker m_tracker;
    std::vector<core::Alert> m_alerts;
};

} // namespace driftless::ui

Q_DECLARE_METATYPE(std::vector<driftless::core::Alert>)
