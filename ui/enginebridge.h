#pragma once

#include "ui/enginesnapshot.h"
#include "ui/mailbox.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <cstdint>
#include <memory>
#include <thread>

namespace driftless::ui {

class AgentLink;
class EngineDoor;
class LocalDoor;
struct AgentEndpoint;

/// Runs the core engine for one workspace file and hands the UI immutable EngineSnapshot values.
///
/// - open() reads the stored status on a pool thread and publishes it; while no engine runs the
///   file is read again every few seconds (cheaply, off the UI thread), so a headless
///   driftless-cli working on the same file shows up too.
/// - start() runs core::Scheduler on its own std::jthread with a StateObserver mirroring into
///   the file and a LiveObserver keeping the same in memory; a timer on the UI thread turns that
///   memory into a snapshot at most twice a second, and only when something changed (or once a
///   second, because lag grows by itself).
/// - stop() asks the engine to stop between batches and returns at once; a reaper thread joins
///   the engine thread, never the UI thread. stateChanged() says when it has stopped.
///
/// Thread affinity: a UI-thread object; workers only post queued calls to it, and never wait
/// for it. Every read and run carries a generation (job id); results of older generations are
/// dropped. Failures (unreadable file, no pipelines) arrive as EngineSnapshot::error or as the
/// message of stateChanged(), never as exceptions.
///
/// Destroying the bridge while an engine runs stops it and waits for the batches in flight:
/// that happens only when the app quits, after its window is gone.
class EngineBridge final : public QObject {
    Q_OBJECT
public:
    enum class State { Stopped, Starting, Running, Stopping };
    Q_ENUM(State)

    explicit EngineBridge(QObject *parent = nullptr);
    ~EngineBridge() override;

    /// The workspace file shown, or the agent's URL while attached to one.
    QString statePath() const { return m_path; }
    /// The agent this bridge shows and drives (attach()), or null for a workspace file.
    AgentLink *agent() const;
    /// True while the bridge shows an engine across a door of its own (an agent, attachDoor()),
    /// not the app's own engine on a file.
    bool remote() const { return m_agent != nullptr; }
    /// The door to the engine shown (ui/enginedoor.h): the agent's, or the app's own over the
    /// workspace file; null while nothing is shown, and while an agent has not yet answered with
    /// the token. Runners and pages send everything through it.
    EngineDoor *door() const;
    State state() const { return m_state; }
    /// Why the last run ended or could not start; empty after a clean stop.
    QString message() const { return m_message; }
    /// The last snapshot published.
    const EngineSnapshot &snapshot() const { return m_snapshot; }
    /// True when start() would do something.
    bool canStart() const;

    static constexpr int kPublishIntervalMs = 500;
    static constexpr int kIdleRereadMs = 5000;
    static constexpr int kEventLimit = 200;
    /// How often an attached agent is asked for its snapshot (again after it was unreachable).
    static constexpr int kAgentPollMs = 1000;

public slots:
    /// Shows another workspace file; stops a running engine first.
    void open(const QString &statePath);
    void start();
    void stop();
    /// Publishes a fresh snapshot now: from memory while the engine runs, else read from the file.
    void refresh();
    /// Shows, and drives, the engine of an agent (driftless-cli serve) instead of a file: its
    /// snapshots every kAgentPollMs; start() and stop() start and stop the agent's engine. A
    /// local engine is stopped first. An agent that stops answering is shown as unreachable and
    /// asked again until it answers; a refused token or certificate ends the polling (the
    /// message says what to do). open() goes back to a file.
    void attach(const driftless::ui::AgentEndpoint &endpoint);
    /// Shows, and drives, the engine behind `door` as attach() does an agent's (the bridge
    /// takes it): its snapshots (GET /api/v1/snapshot), its engine/start and engine/stop. `label`
    /// is what statePath() says. attach() is this over an AgentLink; a test stands a recorded
    /// engine here, so every page runs on recorded answers without a server.
    void attachDoor(driftless::ui::EngineDoor *door, const QString &label);

signals:
    void snapshotReady(const driftless::ui::EngineSnapshot &snapshot);
    void stateChanged(driftless::ui::EngineBridge::State state, const QString &message);
    void statePathChanged(const QString &statePath);

private:
    struct Run;
    /// What the bridge hears of the core engine's run (core::EngineRunListener).
    class Face;

    void setState(State state, const QString &message);
    void publish(EngineSnapshot snapshot);
    void publishLive(bool force);
    /// Builds a snapshot of `run` on a pool thread, published by onLiveBuilt(); `last` for the
    /// run being let go of.
    void buildLive(const std::shared_ptr<Run> &run, std::int64_t nowMs, bool last);
    void onLiveBuilt(EngineSnapshot snapshot, const std::shared_ptr<Run> &run, bool last);
    /// A snapshot of a running engine's memory; any thread.
    static EngineSnapshot liveSnapshot(const Run &run, std::uint64_t generation, const QString &path,
                                       std::int64_t nowMs);
    void startRead();
    void onReadDone(EngineSnapshot snapshot);
    void onEngineStarted(std::uint64_t generation, std::shared_ptr<Run> run);
    void onEngineFinished(std::uint64_t generation, const QString &error);
    void retireEngineThread();
    /// Shows `path` (a file, or an agent's URL with `agent`) from now on: stops a local engine or
    /// lets go of an agent first, and publishes an empty snapshot of the new one.
    void showInstead(const QString &path, EngineDoor *remote);
    void detachAgent();
    void pollAgent();
    void sendAgentEngine(bool run);

    std::shared_ptr<Mailbox<EngineBridge>> m_mailbox;
    QString m_path;
    State m_state = State::Stopped;
    QString m_message;
    std::uint64_t m_generation = 0;
    std::uint64_t m_runGeneration = 0;
    int m_readsInFlight = 0;
    std::shared_ptr<Run> m_run;
    std::uint64_t m_publishedChanges = 0;
    std::int64_t m_lastPublishMs = 0;
    bool m_liveBuildInFlight = false;
    /// A start or F5 came while a build was in flight: build again when it lands.
    bool m_liveForcePending = false;
    EngineSnapshot m_snapshot;
    QTimer m_publishTimer;
    QTimer m_idleTimer;
    /// The engine shown across a door of its own (an agent's AgentLink), or null.
    EngineDoor *m_agent = nullptr;
    LocalDoor *m_localDoor = nullptr;
    QTimer m_agentTimer;
    bool m_agentPollInFlight = false;
    bool m_agentReachable = false;
    /// The agent answered a snapshot once: the door is open to the pages.
    bool m_agentAccepted = false;
    std::string m_agentYaml;
    std::jthread m_engine;
    std::jthread m_reaper;
};

} // namespace driftless::ui
