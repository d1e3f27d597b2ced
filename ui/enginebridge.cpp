#include "ui/enginebridge.h"
#include "ui/agentlink.h"
#include "ui/displayformat.h"
#include "ui/enginepriority.h"
#include "ui/localdoor.h"

#include "ui/liveobserver.h"
#include "ui/mailbox.h"
#include "ui/workpool.h"

#include "core/agent/agentapi.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/config/workspacefile.h"
#include "core/engine/endpoints/endpointtls.h"
#include "core/engine/run/enginerun.h"
#include "core/engine/run/stateobserver.h"
#include "core/engine/status/statusreport.h"
#include "core/model/error.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <QThreadPool>

#include <QTimer>
#include <atomic>
#include <thread>

#include <filesystem>
#include <mutex>
#include <set>
#include <unistd.h>
#include <utility>
#include <vector>

namespace driftless::ui {

/// What a running engine shares with the UI: the workspace it runs and the in-memory mirror.
/// It holds no database handle, so whichever thread lets go of it last may destroy it.
struct EngineBridge::Run {
    Run(core::Workspace ws, std::vector<core::EventRecord> events)
        : workspace(std::make_shared<const core::Workspace>(std::move(ws))),
          live(std::move(events), EngineBridge::kEventLimit)
    {
    }
    const std::shared_ptr<const core::Workspace> workspace;
    LiveObserver live;

    /// The paused tables as the engine last read them (about once a second).
    std::vector<core::PausedTable> paused() const
    {
        std::lock_guard lock(pausedMutex);
        return pausedTables;
    }
    void setPaused(std::vector<core::PausedTable> tables)
    {
        std::lock_guard lock(pausedMutex);
        pausedTables = std::move(tables);
    }
    /// Each table's newest reconciliation as the workspace file has it (read every few seconds),
    /// so the running engine's snapshots say what a stopped one's and `status --json` say.
    std::vector<core::StateStore::ReconcileSummary> reconciles() const
    {
        std::lock_guard lock(pausedMutex);
        return latestReconciles;
    }
    void setReconciles(std::vector<core::StateStore::ReconcileSummary> summaries)
    {
        std::lock_guard lock(pausedMutex);
        latestReconciles = std::move(summaries);
    }

private:
    mutable std::mutex pausedMutex;
    std::vector<core::PausedTable> pausedTables;
    std::vector<core::StateStore::ReconcileSummary> latestReconciles;
};

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("driftless::ui::EngineBridge", text);
}

/// Runs on a pool thread: the file may be busy (another process writing) for seconds.
EngineSnapshot readStored(const std::string &path, std::uint64_t generation)
{
    EngineSnapshot s;
    s.generation = generation;
    s.statePath = QString::fromStdString(path);
    s.takenAtMs = core::wallClockMs();
    std::error_code ec;
    // Opening would create an empty workspace; a typo in --state should not leave files behind.
    if (!std::filesystem::exists(path, ec)) {
        s.error = tr("There is no workspace at %1 yet: on the Workspace page, Import YAML\u2026 stores one "
                     "from a file, or Add Endpoint\u2026 starts one")
                      .arg(s.statePath);
        s.noWorkspaceYet = true;
        return s;
    }
    try {
        auto stored = core::WorkspaceState(path).snapshot(s.takenAtMs, EngineBridge::kEventLimit);
        s.workspace = std::make_shared<const core::Workspace>(std::move(stored.workspace));
        s.tables = std::move(stored.tables);
        s.events = std::move(stored.events);
        // The ledger is this process's: what the app's engine (or doctor) last connected with.
        s.endpointsTls = core::endpointsTlsStatus(*s.workspace);
    } catch (const std::exception &e) {
        s.error = describe(e);
    }
    return s;
}

std::string countOf(std::size_t n, const std::string &noun)
{
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

/// Engine lifecycle notes go to the file (so the CLI and a later session see them) and to the
/// live log at once. A failing mirror never stops the engine, as in StateObserver.
void noteEngineEvent(core::WorkspaceState &state, LiveObserver &live, const std::string &kind,
                     const std::string &message)
{
    try {
        state.note(kind, message);
    } catch (const core::Error &) {
    }
    core::EventRecord e;
    e.tsMs = core::wallClockMs();
    e.level = core::Level::Info;
    e.kind = kind;
    e.message = message;
    live.addEvent(std::move(e));
}

} // namespace

/// What the app hears of a run: each start (again after the workspace changed) gets a Run the
/// UI shows, following the engine's mirror until that start ends.
class EngineBridge::Face final : public core::EngineRunListener {
public:
    Face(std::shared_ptr<Mailbox<EngineBridge>> mailbox, std::uint64_t generation)
        : m_mailbox(std::move(mailbox)), m_generation(generation)
    {
    }
    core::EngineObserver *started(const Start &s) override
    {
        m_state = &s.state;
        m_run = std::make_shared<Run>(s.workspace, s.state.events(EngineBridge::kEventLimit));
        m_run->live.follow(s.mirror);
        readReconciles(true);
        noteEngineEvent(s.state, m_run->live, s.restarts ? "engine_restarted" : "engine_started",
                        (s.restarts ? "the workspace changed: engine started again for " : "engine started for ") +
                            countOf(s.jobs.size(), "table"));
        m_mailbox->post(
            [generation = m_generation, run = m_run](EngineBridge &b) { b.onEngineStarted(generation, run); });
        return &m_run->live;
    }
    void pausesRead(const std::vector<core::PausedTable> &paused) override
    {
        if (!m_run)
            return;
        m_run->setPaused(paused);
        readReconciles(false);
    }
    void finished(int errors, bool restarting) override
    {
        if (!m_run)
            return;
        if (!restarting)
            noteEngineEvent(*m_state, m_run->live, "engine_stopped",
                            errors
                                ? "engine stopped; " + countOf(static_cast<std::size_t>(errors), "table") + " in error"
                                : std::string("engine stopped"));
        // The UI may hold the run longer than the mirror lives.
        m_run->live.unfollow();
    }

private:
    /// On the run's thread, as the engine reads the pauses: a reconciliation stored by Reconcile
    /// Now, the schedule or a driftless-cli on the same file shows within kReconcileReadMs.
    void readReconciles(bool now)
    {
        const auto at = core::wallClockMs();
        if (!now && at - m_reconcilesReadMs < kReconcileReadMs)
            return;
        m_reconcilesReadMs = at;
        try {
            m_run->setReconciles(m_state->store().latestReconciles());
        } catch (const core::Error &) {
            // Kept as last read; the stored snapshot after the run shows the file's anyway.
        }
    }

    static constexpr std::int64_t kReconcileReadMs = 2000;
    std::shared_ptr<Mailbox<EngineBridge>> m_mailbox;
    std::uint64_t m_generation;
    core::WorkspaceState *m_state = nullptr;
    std::shared_ptr<Run> m_run;
    std::int64_t m_reconcilesReadMs = 0;
};

EngineBridge::EngineBridge(QObject *parent) : QObject(parent), m_mailbox(Mailbox<EngineBridge>::create(this))
{
    m_publishTimer.setInterval(kPublishIntervalMs);
    connect(&m_publishTimer, &QTimer::timeout, this, [this] { publishLive(false); });
    m_idleTimer.setInterval(kIdleRereadMs);
    connect(&m_idleTimer, &QTimer::timeout, this, [this] {
        if (m_state == State::Stopped && m_readsInFlight == 0 && !m_agent)
            startRead();
    });
    m_idleTimer.start();
    m_agentTimer.setInterval(kAgentPollMs);
    connect(&m_agentTimer, &QTimer::timeout, this, &EngineBridge::pollAgent);
}

EngineBridge::~EngineBridge()
{
    m_mailbox->close();
    m_engine.request_stop();
    // The only place the UI thread waits for the engine: the app is quitting and its window is
    // gone. Leaving the thread running would let it outlive the objects it uses.
    if (m_engine.joinable())
        m_engine.join();
    if (m_reaper.joinable())
        m_reaper.join();
}

bool EngineBridge::canStart() const
{
    return m_state == State::Stopped && !m_path.isEmpty() && (!m_agent || m_agentReachable);
}

void EngineBridge::open(const QString &statePath)
{
    showInstead(statePath, nullptr);
    startRead();
}

void EngineBridge::showInstead(const QString &path, EngineDoor *remote)
{
    if (m_agent)
        detachAgent();
    else if (m_state == State::Starting || m_state == State::Running)
        stop(); // the local engine lets go of the file; its last snapshots are dropped below
    m_agent = remote;
    m_path = path;
    if (m_localDoor)
        m_localDoor->deleteLater(); // its replies in flight are dropped with it
    m_localDoor = nullptr;
    if (!remote && !path.isEmpty())
        m_localDoor = new LocalDoor(
            path,
            [this](bool run) {
                if (run)
                    start();
                else
                    stop();
            },
            this);
    ++m_generation;
    emit statePathChanged(m_path);
    // Clear at once: the previous workspace's tables must not sit under the new name while the
    // new one is read.
    EngineSnapshot empty;
    empty.generation = m_generation;
    empty.statePath = m_path;
    empty.takenAtMs = core::wallClockMs();
    publish(std::move(empty));
}

void EngineBridge::start()
{
    if (!canStart())
        return;
    if (m_agent) {
        sendAgentEngine(true);
        return;
    }
    retireEngineThread();
    const std::uint64_t generation = ++m_generation;
    m_runGeneration = generation;
    setState(State::Starting, {});
    m_engine = std::jthread([mailbox = m_mailbox, generation, path = m_path.toStdString()](std::stop_token stop) {
        // The window must stay responsive while the engine works on the same cores: the engine's
        // threads (this one and every thread it starts, which inherit it) give way to the UI
        // thread (enginepriority.h). Only in the app; driftless-cli runs at the priority it is
        // given (B12).
        core::log(core::LogLevel::Debug, applyEnginePriority(chooseEnginePriority()));
        QString error;
        try {
            core::WorkspaceState state(path);
            core::EngineRun::loadRunnable(state, {});
            Face face(mailbox, generation);
            core::EngineRun(state, {}).run(stop, &face);
        } catch (const std::exception &e) {
            error = describe(e);
        } catch (...) {
            error = tr("internal error: unknown exception");
        }
        mailbox->post([generation, error](EngineBridge &b) { b.onEngineFinished(generation, error); });
    });
}

void EngineBridge::stop()
{
    if (m_state != State::Starting && m_state != State::Running)
        return;
    if (m_agent) {
        sendAgentEngine(false);
        return;
    }
    m_engine.request_stop();
    setState(State::Stopping, {});
    retireEngineThread();
}

void EngineBridge::refresh()
{
    if (m_agent)
        pollAgent();
    else if (m_run)
        publishLive(true);
    else if (m_state == State::Stopped)
        startRead();
}

EngineDoor *EngineBridge::door() const
{
    // An agent is asked for nothing else until it has accepted the token once: a wrong token is
    // refused once, not by every page at the same moment.
    if (m_agent)
        return m_agentAccepted ? m_agent : nullptr;
    return m_localDoor;
}

void EngineBridge::setState(State state, const QString &message)
{
    if (m_localDoor)
        m_localDoor->setEngineRunning(state == State::Running);
    if (state == m_state && message == m_message)
        return;
    m_state = state;
    m_message = message;
    emit stateChanged(m_state, m_message);
}

void EngineBridge::publish(EngineSnapshot snapshot)
{
    m_snapshot = std::move(snapshot);
    m_lastPublishMs = m_snapshot.takenAtMs;
    emit snapshotReady(m_snapshot);
}

EngineSnapshot EngineBridge::liveSnapshot(const Run &run, std::uint64_t generation, const QString &path,
                                          std::int64_t nowMs)
{
    EngineSnapshot s;
    s.generation = generation;
    s.statePath = path;
    s.takenAtMs = nowMs;
    s.live = true;
    s.tables = core::buildStatus(*run.workspace, run.live.tables(), nowMs, run.reconciles(), run.paused());
    s.workspace = run.workspace;
    s.events = run.live.events();
    s.endpointsTls = core::endpointsTlsStatus(*run.workspace);
    return s;
}

void EngineBridge::publishLive(bool force)
{
    // A run superseded by open() of another file may still be stopping: show nothing of it.
    if (!m_run || m_runGeneration != m_generation)
        return;
    const auto changes = m_run->live.changes();
    const auto now = core::wallClockMs();
    // Lag grows while nothing happens, so publish once a second even without changes.
    if (!force && changes == m_publishedChanges && now - m_lastPublishMs < 1000)
        return;
    // One build at a time. A start or F5 meanwhile is not lost: it builds again once the one in
    // flight has landed.
    if (m_liveBuildInFlight) {
        m_liveForcePending = m_liveForcePending || force;
        return;
    }
    m_publishedChanges = changes;
    buildLive(m_run, now, false);
}

void EngineBridge::buildLive(const std::shared_ptr<Run> &run, std::int64_t nowMs, bool last)
{
    // Built on a pool thread, a start, an F5 and a stop included: joining 10,000 statuses with
    // the workspace is a tenth of a second the UI thread need not spend (B12). It shows within
    // that time, not after the next timer.
    m_liveBuildInFlight = true;
    workPool()->start([mailbox = m_mailbox, run, generation = m_generation, path = m_path, nowMs, last] {
        EngineSnapshot s = liveSnapshot(*run, generation, path, nowMs);
        mailbox->post(
            [s = std::move(s), run, last](EngineBridge &b) mutable { b.onLiveBuilt(std::move(s), run, last); });
    });
}

void EngineBridge::onLiveBuilt(EngineSnapshot snapshot, const std::shared_ptr<Run> &run, bool last)
{
    m_liveBuildInFlight = false;
    // Stale: the run ended or another file was opened meanwhile, or a snapshot newer than this
    // one is already on screen. A run's last snapshot (its tables idle, "stopped") lands after
    // the bridge let go of the run, unless another run has started since.
    const bool ours = last ? !m_run : run == m_run;
    if (ours && snapshot.generation == m_generation && snapshot.takenAtMs >= m_lastPublishMs)
        publish(std::move(snapshot));
    if (m_liveForcePending) {
        m_liveForcePending = false;
        publishLive(true);
    }
}

void EngineBridge::startRead()
{
    if (m_path.isEmpty())
        return;
    ++m_readsInFlight;
    workPool()->start([mailbox = m_mailbox, generation = m_generation, path = m_path.toStdString()] {
        EngineSnapshot s = readStored(path, generation);
        mailbox->post([s = std::move(s)](EngineBridge &b) mutable { b.onReadDone(std::move(s)); });
    });
}

void EngineBridge::onReadDone(EngineSnapshot snapshot)
{
    --m_readsInFlight;
    // Stale: another file was opened or an engine started since the read began. An engine of
    // a previous file that is still stopping does not count: its snapshots are not shown.
    const bool liveRunShown = m_run && m_runGeneration == m_generation;
    if (snapshot.generation != m_generation || liveRunShown)
        return;
    publish(std::move(snapshot));
}

void EngineBridge::onEngineStarted(std::uint64_t generation, std::shared_ptr<Run> run)
{
    if (generation != m_runGeneration)
        return;
    m_run = std::move(run);
    m_publishedChanges = 0;
    m_publishTimer.start();
    // stop() may have come first; then the engine is already on its way out.
    if (m_state == State::Starting)
        setState(State::Running, {});
    publishLive(true);
}

void EngineBridge::onEngineFinished(std::uint64_t generation, const QString &error)
{
    if (generation != m_runGeneration)
        return;
    // The engine's last states (idle, "stopped") are in memory: show them, built from the run
    // the bridge lets go of now.
    if (m_run && m_runGeneration == m_generation)
        buildLive(m_run, core::wallClockMs(), true);
    m_run.reset();
    m_publishTimer.stop();
    retireEngineThread();
    setState(State::Stopped, error);
}

void EngineBridge::retireEngineThread()
{
    if (!m_engine.joinable())
        return;
    // The captured threads are destroyed, and so joined, on the reaper thread. A previous reaper
    // is handed on the same way, so only the last one is ever joined by the destructor.
    m_reaper = std::jthread([engine = std::move(m_engine), previous = std::move(m_reaper)]() mutable {
        engine.join();
        if (previous.joinable())
            previous.join();
    });
}

void EngineBridge::attach(const AgentEndpoint &endpoint)
{
    attachDoor(new AgentLink(endpoint, this), endpoint.url);
}

AgentLink *EngineBridge::agent() const
{
    return qobject_cast<AgentLink *>(m_agent);
}

void EngineBridge::attachDoor(EngineDoor *door, const QString &label)
{
    door->setParent(this);
    showInstead(label, door);
    setState(State::Stopped, tr("connecting to the agent\u2026"));
    pollAgent();
    m_agentTimer.start();
}

void EngineBridge::detachAgent()
{
    m_agentTimer.stop();
    m_agent->deleteLater(); // its replies in flight are dropped with it
    m_agent = nullptr;
    m_agentPollInFlight = false;
    m_agentReachable = false;
    m_agentAccepted = false;
    m_agentYaml.clear();
    setState(State::Stopped, {});
}

void EngineBridge::pollAgent()
{
    // One snapshot request at a time: a slow agent is not asked again before it answered.
    if (!m_agent || m_agentPollInFlight)
        return;
    m_agentPollInFlight = true;
    const std::uint64_t generation = m_generation;
    m_agent->request("GET", QStringLiteral("/api/v1/snapshot?events=%1").arg(kEventLimit), {}, m_agent,
                     [this, generation](const EngineDoor::Reply &r) {
                         m_agentPollInFlight = false;
                         if (generation != m_generation || !m_agent)
                             return;
                         EngineSnapshot s;
                         s.generation = m_generation;
                         s.statePath = m_path;
                         s.takenAtMs = core::wallClockMs();
                         if (!r.ok()) {
                             // What was last seen stays on screen, marked as not current: how fresh
                             // the copies are now is not known while the agent does not answer.
                             s.workspace = m_snapshot.workspace;
                             s.tables = m_snapshot.tables;
                             for (auto &t : s.tables.edit()) {
                                 t.freshness = core::Freshness::Unknown;
                                 t.lagSeconds.reset();
                             }
                             s.events = m_snapshot.events;
                             s.endpointsTls = m_snapshot.endpointsTls;
                             s.error = r.error;
                             m_agentReachable = false;
                             if (r.certificateRefused || r.status == 401)
                                 m_agentTimer.stop(); // asking again cannot help, and a token is not guessed at
                             publish(std::move(s));
                             setState(State::Stopped, r.error);
                             return;
                         }
                         try {
                             const auto &b = r.body;
                             const std::string yaml = b.value("workspace_yaml", std::string());
                             if (yaml == m_agentYaml && m_snapshot.workspace) {
                                 s.workspace = m_snapshot.workspace; // models keep their rows
                             } else {
                                 s.workspace = std::make_shared<const core::Workspace>(
                                     core::WorkspaceFile::parse(yaml, "the agent's workspace", {}));
                                 m_agentYaml = yaml;
                             }
                             s.tables = core::tablesFromJson(b.value("tables", nlohmann::json::array()));
                             s.events = core::eventsFromJson(b.value("events", nlohmann::json::array()));
                             s.endpointsTls = core::endpointsTlsFromJson(b.value("endpoints", nlohmann::json::array()));
                             s.takenAtMs = b.value("generated_at_ms", s.takenAtMs);
                             s.live = b.contains("engine") && b["engine"].value("running", false);
                         } catch (const std::exception &e) {
                             s.error = tr("the agent's snapshot could not be read: %1").arg(describe(e));
                         }
                         m_agentReachable = true;
                         m_agentAccepted = true;
                         const bool running = s.live;
                         publish(std::move(s));
                         setState(running ? State::Running : State::Stopped,
                                  running ? QString() : tr("stopped on the agent"));
                     });
}

void EngineBridge::sendAgentEngine(bool run)
{
    setState(run ? State::Starting : State::Stopping, {});
    const std::uint64_t generation = m_generation;
    m_agent->request("POST", run ? QStringLiteral("/api/v1/engine/start") : QStringLiteral("/api/v1/engine/stop"), {},
                     m_agent, [this, generation](const EngineDoor::Reply &r) {
                         if (generation != m_generation)
                             return;
                         if (!r.ok())
                             setState(State::Stopped, r.error);
                         pollAgent();
                     });
}

} // namespace driftless::ui
