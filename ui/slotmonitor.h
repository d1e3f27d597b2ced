#pragma once

#include "ui/enginesnapshot.h"
#include "ui/mailbox.h"
#include "ui/slotsample.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

#include <cstdint>
#include <memory>

namespace driftless::ui {

class AgentLink;

/// Reads the replication slots of the open workspace's Postgres sources, and drops one on
/// request, always on a pool thread (each read opens its own connection per source, which
/// lives and dies on that thread).
///
/// - setSnapshot() follows EngineBridge: the workspace (endpoints) comes from its snapshots, so
///   the monitor never opens the workspace file itself. A new workspace is read at once.
/// - refresh() reads now (F5, the Slots page's 15 s timer); otherwise a background read runs
///   every kBackgroundIntervalMs, so the alerts that come from slots (orphaned, lost, inactive)
///   open even while the Slots page is not shown.
/// - One read at a time: a refresh asked for while one runs runs once more when it ends.
///
/// Thread affinity: a UI-thread object; workers only post to it and never wait for it. Results
/// of a previous workspace (generation) are dropped. Failures arrive as SourceSlots::error or
/// dropFinished()'s message, never as exceptions.
class SlotMonitor final : public QObject {
    Q_OBJECT
public:
    explicit SlotMonitor(QObject *parent = nullptr);
    ~SlotMonitor() override;

    static constexpr int kBackgroundIntervalMs = 60'000;

    const SlotSample &sample() const { return m_sample; }
    bool reading() const { return m_inFlight; }

    /// `SELECT pg_drop_replication_slot('name');`, quoted the way the server reads it. What the
    /// confirmation shows is exactly what dropSlot() runs.
    static QString dropSql(const QString &slot);

    /// Reads the slots from an agent (its monitor's latest reading, GET /api/v1/slots) and drops
    /// them through it, instead of from this machine; null: from here again.
    void setAgent(AgentLink *agent);

public slots:
    void setSnapshot(const driftless::ui::EngineSnapshot &snapshot);
    void refresh();
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

    std::shared_ptr<Mailbox<SlotMonitor>> m_mailbox;
    QString m_path;
    std::shared_ptr<const core::Workspace> m_workspace;
    std::uint64_t m_generation = 0;
    bool m_inFlight = false;
    bool m_again = false;
    SlotSample m_sample;
    QTimer m_background;
    QPointer<AgentLink> m_agent;
};

} // namespace driftless::ui
