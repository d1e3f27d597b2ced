#pragma once

#include "ui/enginesnapshot.h"
#include "ui/slotsample.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <cstdint>
#include <memory>

namespace driftless::ui {

class EngineBridge;

/// Reads the replication slots of the shown workspace's Postgres sources, and drops one on
/// request, through the engine's door (GET /api/v1/slots?fresh=true, POST /api/v1/drop-slot):
/// where the engine runs, the app's or an agent's, connects to the sources.
///
/// - setSnapshot() follows EngineBridge: the workspace (endpoints) comes from its snapshots, so
///   the monitor never opens the workspace file itself. A new workspace is read at once.
/// - refresh() reads now (F5, the Slots page's 15 s timer); otherwise a background read runs
///   every kBackgroundIntervalMs, so the alerts that come from slots (orphaned, lost, inactive)
///   open even while the Slots page is not shown.
/// - One read at a time: a refresh asked for while one runs runs once more when it ends.
///
/// Thread affinity: a UI-thread object. Results
/// of a previous workspace (generation) are dropped. Failures arrive as SourceSlots::error or
/// dropFinished()'s message, never as exceptions.
class SlotMonitor final : public QObject {
    Q_OBJECT
public:
    explicit SlotMonitor(EngineBridge *engine, QObject *parent = nullptr);

    static constexpr int kBackgroundIntervalMs = 60'000;

    const SlotSample &sample() const { return m_sample; }
    bool reading() const { return m_inFlight; }

    /// `SELECT pg_drop_replication_slot('name');`, quoted the way the server reads it. What the
    /// confirmation shows is exactly what dropSlot() runs.
    static QString dropSql(const QString &slot);

public slots:
    void setSnapshot(const driftless::ui::EngineSnapshot &snapshot);
    void refresh();
    /// While held, reads wait (one runs when released): the keychain is being asked for the
    /// sources' passwords, and a reading without them would only raise "no password" alerts.
    void setHeld(bool held);
    /// Drops `slot` on `source` (an endpoint of the current workspace) with dropSql(). The
    /// server refuses an active slot; that refusal comes back as dropFinished()'s error.
    void dropSlot(const QString &source, const QString &slot);

signals:
    void sampleReady(const driftless::ui::SlotSample &sample);
    /// `error` is empty when the slot was dropped.
    void dropFinished(const QString &source, const QString &slot, const QString &error);

private:
    void startRead();
    void onReadDone(SlotSample sample);
    void onDropDone(std::uint64_t generation, const QString &source, const QString &slot, const QString &error);

    EngineBridge *m_engine;
    QString m_path;
    std::shared_ptr<const core::Workspace> m_workspace;
    std::uint64_t m_generation = 0;
    bool m_inFlight = false;
    bool m_again = false;
    bool m_held = false;
    SlotSample m_sample;
    QTimer m_background;
};

} // namespace driftless::ui
