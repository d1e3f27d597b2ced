#include "core/engine/run/enginerun.h"

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/engine/endpoints/tablepatterns.h"
#include "core/engine/jobs/pauses.h"
#include "core/engine/reconcile/reconciler.h"
#include "core/engine/run/scheduler.h"
#include "core/engine/run/stateobserver.h"
#include "core/engine/slots/binlogretention.h"
#include "core/engine/slots/slotguard.h"
#include "core/engine/slots/slotprojection.h"
#include "core/model/error.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <set>
#include <thread>

namespace driftless::core {

namespace {

/// `ws` with only `pipeline` (all of it when empty).
Workspace only(Workspace ws, const std::string &pipeline)
{
    if (!pipeline.empty())
        std::erase_if(ws.pipelines, [&](const PipelineSpec &p) { return p.name != pipeline; });
    return ws;
}

} // namespace

struct EngineRun::Monitor {
    AlertTracker tracker;
    SlotActivity activity;
    /// When each slot (`source/slot`) was last stored as a sample; a slot seen for the first
    /// time is stored at once, so its history starts when it appears.
    std::map<std::string, std::int64_t> lastSampleMs;
    std::int64_t lastPruneMs = 0;
    std::int64_t lastRoundMs = 0; ///< the last sampling round without `monitor`
};

EngineRun::EngineRun(WorkspaceState &state, EngineRunOptions options)
    : m_state(state), m_store(state.store()), m_options(std::move(options)), m_monitor(std::make_unique<Monitor>())
{
}

EngineRun::~EngineRun() = default;

Workspace EngineRun::loadRunnable(WorkspaceState &state, const std::string &pipeline)
{
    Workspace ws = state.workspace();
    if (ws.pipelines.empty())
        throw ConfigError("the workspace has no pipelines; run 'driftless-cli apply FILE' first", state.path());
    if (!pipeline.empty() && !ws.pipeline(pipeline))
        throw ConfigError("no pipeline named '" + pipeline + "'", state.path());
    return ws;
}

bool EngineRun::discoverDueTables(const Workspace &ws, bool now)
{
    bool recorded = false;
    const auto at = std::chrono::steady_clock::now();
    for (const auto &p : ws.pipelines) {
        if (p.includeTables.empty() || (!m_options.pipeline.empty() && p.name != m_options.pipeline))
            continue;
        auto next = m_nextDiscovery.find(p.name);
        if (!now && next != m_nextDiscovery.end() && at < next->second)
            continue;
        m_nextDiscovery[p.name] = at + p.discoverEvery.value_or(PipelineSpec::kDefaultDiscoverEvery);
        try {
            std::set<TableRef> known;
            for (const auto &d : m_store.discoveredTables(p.name))
                known.insert(d.table);
            for (const auto &found : lookForNewTables(ws, p, known)) {
                StateStore::DiscoveredTable d{p.name, found.table, found.strategy, found.cursor, found.refused, 0};
                if (!m_store.addDiscoveredTable(d))
                    continue;
                recorded = true;
                const bool taken = found.refused.empty();
                const std::string said = taken ? found.message : found.refused + "; " + found.fix;
                m_store.addEvent(taken ? Level::Info : Level::Warn, p.name, found.table.display(),
                                 taken ? "table_discovered" : "table_refused", said);
                log(taken ? LogLevel::Info : LogLevel::Warn, "pipeline " + p.name + ": " + said);
            }
        } catch (const std::exception &e) {
            log(LogLevel::Warn, std::string("looking for new tables: ") + e.what());
        }
    }
    return recorded;
}

bool EngineRun::fallBackWhereBreached(const Workspace &ws, const std::vector<SourceSlots> &sources)
{
    bool fellBack = false;
    for (const auto &b : slotGuardBreaches(ws, sources)) {
        try {
            fallBack(m_store, b);
            log(LogLevel::Warn, "slot guard: pipeline " + b.pipeline + ": " + b.reason + "; slot " + b.slot +
                                    " dropped, CDC tables switched to cursor sync; restarting with them "
                                    "(driftless-cli promote " +
                                    b.pipeline + " goes back)");
            fellBack = true;
        } catch (const Error &e) {
            log(LogLevel::Warn, "slot guard fallback failed: " + e.describe());
        }
    }
    return fellBack;
}

bool EngineRun::guardAndSample(const Workspace &ws)
{
    const auto now = wallClockMs();
    bool guarded = false, cdc = false;
    for (const auto &[name, e] : ws.endpoints)
        guarded = guarded || (e.slotGuard && e.slotGuard->action == SlotGuard::Action::Fallback);
    for (const auto &p : ws.pipelines)
        for (const auto &t : p.tables)
            cdc = cdc || t.strategy == Strategy::Cdc;
    const bool sampleDue = cdc && now - m_monitor->lastRoundMs >= m_options.slotSampleEvery.count();
    if (!guarded && !sampleDue)
        return false;
    try {
        auto sources = listSlots(ws);
        if (sampleDue) {
            addBinlogs(sources, ws, m_store.tableStatuses(), now);
            m_monitor->lastRoundMs = now;
            recordSlotSamples(sources, now);
        }
        return guarded && fallBackWhereBreached(ws, sources);
    } catch (const Error &e) {
        log(LogLevel::Warn, "slot guard check failed: " + e.describe());
        return false;
    }
}

void EngineRun::pausesNow(EngineRunListener *listener)
{
    auto paused = m_store.pausedTables();
    if (listener)
        listener->pausesRead(paused);
    std::lock_guard lock(m_mutex);
    m_paused = std::move(paused);
}

EngineRun::Status EngineRun::status(std::int64_t nowMs) const
{
    std::lock_guard lock(m_mutex);
    Status s;
    s.workspace = m_workspace;
    s.monitor = m_sample;
    if (m_workspace)
        s.tables = buildStatus(*m_workspace, m_mirror ? m_mirror->snapshot() : m_lastTables, nowMs, m_sample.reconciles,
                               m_paused);
    return s;
}

MonitorSample EngineRun::monitorSample() const
{
    std::lock_guard lock(m_mutex);
    return m_sample;
}

void EngineRun::recordSlotSamples(const std::vector<SourceSlots> &sources, std::int64_t now)
{
    Monitor &m = *m_monitor;
    std::vector<StateStore::SlotSample> samples;
    std::map<std::string, std::int64_t> sampled;
    for (const auto &ss : sources) {
        if (!ss.error.empty()) { // unread this time: keep when its slots were last stored
            for (auto it = m.lastSampleMs.lower_bound(ss.source + "/");
                 it != m.lastSampleMs.end() && it->first.starts_with(ss.source + "/"); ++it)
                sampled.insert(*it);
            continue;
        }
        for (const auto &s : ss.replicationSlots) {
            const std::string key = s.source + "/" + s.slot;
            auto last = m.lastSampleMs.find(key);
            if (last != m.lastSampleMs.end() && now - last->second < m_options.slotSampleEvery.count()) {
                sampled.insert(*last);
                continue;
            }
            sampled[key] = now;
            samples.push_back({s.source, s.slot, now, s.retainedBytes, s.unconfirmedBytes, s.safeWalSize});
        }
        // A binlog pipeline's bytes behind are charted like a slot's retained WAL.
        for (const auto &b : ss.binlogs) {
            if (!b.bytesBehind)
                continue;
            const std::string key = b.source + "/" + binlogSampleKey(b.pipeline);
            auto last = m.lastSampleMs.find(key);
            if (last != m.lastSampleMs.end() && now - last->second < m_options.slotSampleEvery.count()) {
                sampled.insert(*last);
                continue;
            }
            sampled[key] = now;
            samples.push_back({b.source, binlogSampleKey(b.pipeline), now, b.bytesBehind, std::nullopt, std::nullopt});
        }
    }
    m.lastSampleMs = std::move(sampled); // slots that went away are forgotten
    try {
        m_store.addSlotSamples(samples);
        if (now - m.lastPruneMs >= 600'000) {
            m.lastPruneMs = now;
            m_store.pruneSlotSamples(now, StateObserver::kSampleKeepMs);
        }
    } catch (const Error &e) {
        log(LogLevel::Warn, "slot samples not recorded: " + e.describe());
    }
}

bool EngineRun::monitorOnce(const Workspace &ws, const Workspace *whole)
{
    auto sources = listSlots(ws, whole);
    const auto now = wallClockMs();
    try {
        addBinlogs(sources, ws, m_store.tableStatuses(), now);
    } catch (const Error &e) {
        log(LogLevel::Warn, "binlog retention not read: " + e.describe());
    }
    // Slot guards with action: fallback protect the source first; the run then starts again
    // with the workspace the fallback wrote.
    const bool fellBack = fallBackWhereBreached(ws, sources);
    Monitor &m = *m_monitor;
    m.activity.observe(sources, now);
    recordSlotSamples(sources, now);
    try {
        projectSlots(m_store, ws, sources, now);
    } catch (const Error &e) {
        log(LogLevel::Warn, "slot samples not read for the time to the limit: " + e.describe());
    }
    std::vector<StateStore::ReconcileSummary> reconciles;
    try {
        reconciles = m_store.latestReconciles();
    } catch (const Error &e) {
        log(LogLevel::Warn, "reconciliation results not read: " + e.describe());
    }
    std::vector<TableReport> tables;
    {
        std::lock_guard lock(m_mutex);
        tables = buildStatus(ws, m_mirror ? m_mirror->snapshot() : m_lastTables, now, reconciles, m_paused);
    }
    auto change = m.tracker.update(computeAlerts(ws, tables, sources, m.activity.inactiveSince(), now), now);
    auto record = [&](Level level, const Alert &a, const std::string &kind, const std::string &message) {
        try {
            m_store.addEvent(level, a.pipeline, a.table, kind, message);
        } catch (const Error &e) {
            log(LogLevel::Warn, "alert not recorded: " + e.describe());
        }
        log(level == Level::Info ? LogLevel::Info : LogLevel::Warn, message);
    };
    for (const auto &a : change.opened)
        record(a.level, a, "alert", a.message + ". " + a.action);
    for (const auto &a : change.cleared)
        record(Level::Info, a, "alert_cleared", "cleared: " + a.message);
    std::lock_guard lock(m_mutex);
    m_sample = {std::move(sources), m.tracker.open(), now, std::move(reconciles)};
    return fellBack;
}

int EngineRun::run(std::stop_token stop, EngineRunListener *listener)
{
    // A slot past its guard is given up before anything reads it (and the slots are sampled).
    guardAndSample(loadRunnable(m_state, m_options.pipeline));
    int errors = 0;
    std::shared_ptr<const Workspace> last;
    for (int restarts = 0;; ++restarts) {
        // Tables the patterns pick up are in the workspace this run starts with.
        Workspace stored = loadRunnable(m_state, m_options.pipeline);
        if (discoverDueTables(stored, restarts == 0))
            stored = loadRunnable(m_state, m_options.pipeline);
        auto ws = std::make_shared<const Workspace>(only(stored, m_options.pipeline));
        last = ws;
        auto jobs = jobsFor(*ws);
        if (m_options.onlyStrategy)
            std::erase_if(jobs, [&](const TableJob &j) { return j.spec.strategy != *m_options.onlyStrategy; });
        StateObserver mirror(m_store, jobs);
        try {
            pausesNow(nullptr);
        } catch (const Error &e) {
            log(LogLevel::Warn, "paused tables not read: " + e.describe());
        }
        {
            std::lock_guard lock(m_mutex);
            m_workspace = ws;
            m_mirror = &mirror;
        }
        // The mirror is let go of however this run ends.
        struct Unpublish {
            EngineRun &self;
            const StateObserver &mirror;
            ~Unpublish()
            {
                auto tables = mirror.snapshot();
                std::lock_guard lock(self.m_mutex);
                self.m_lastTables = std::move(tables);
                self.m_mirror = nullptr;
            }
        } unpublish{*this, mirror};
        EngineObserver *next = listener ? listener->started({*ws, jobs, mirror, m_state, restarts}) : nullptr;
        mirror.setNext(next);
        if (listener) { // the pauses read above, so the face need not read them again
            std::vector<StateStore::PausedTable> paused;
            {
                std::lock_guard lock(m_mutex);
                paused = m_paused;
            }
            listener->pausesRead(paused);
        }

        // The engine stops when asked, or to start again with a workspace that changed.
        std::stop_source engineStop;
        std::stop_callback onStop(stop, [&] { engineStop.request_stop(); });
        std::atomic<bool> restart{false};
        std::unique_ptr<ReconcileScheduler> reconciles;
        std::jthread watcher;
        try {
            if (!m_options.once) {
                reconciles = std::make_unique<ReconcileScheduler>(m_store, *ws, m_options.pipeline);
                reconciles->start();
                watcher = std::jthread([&](std::stop_token st) {
                    bool first = true;
                    while (!st.stop_requested()) {
                        // The monitor reads at once (serve shows the slots from the start); the
                        // guards were checked just before this run.
                        if (!first || !m_options.monitor)
                            for (auto waited = Millis(0); waited < m_options.checkEvery && !st.stop_requested();
                                 waited += Millis(100))
                                std::this_thread::sleep_for(Millis(100));
                        first = false;
                        if (st.stop_requested())
                            break;
                        // The guards are those stored now: a DBA who lowers one while the
                        // apply side is stuck (so this run cannot stop yet) is obeyed at once.
                        std::optional<Workspace> now;
                        try {
                            discoverDueTables(stored, false); // a table picked up changes the stored workspace
                            now = m_store.loadWorkspace();
                        } catch (const Error &) {
                        }
                        bool changed = false;
                        try {
                            changed = m_options.monitor ? (now ? monitorOnce(only(*now, m_options.pipeline), &*now)
                                                               : monitorOnce(*ws))
                                                        : guardAndSample(now ? *now : *ws);
                        } catch (const std::exception &e) {
                            log(LogLevel::Warn, std::string("slot monitor: ") + e.what());
                        }
                        changed = changed || (now && *now != stored);
                        if (changed) {
                            restart = true;
                            engineStop.request_stop();
                            break;
                        }
                    }
                });
            }
            Scheduler::Options so;
            so.once = m_options.once;
            so.pausedTables = [this, listener] {
                pausesNow(listener);
                std::set<PauseSet::Key> keys;
                std::lock_guard lock(m_mutex);
                for (const auto &p : m_paused)
                    keys.insert({p.pipeline, p.table});
                return keys;
            };
            errors = Scheduler(jobs, mirror, so).run(engineStop.get_token());
        } catch (...) {
            if (watcher.joinable()) {
                watcher.request_stop();
                watcher.join();
            }
            reconciles.reset();
            if (listener)
                listener->finished(0, false);
            throw;
        }
        if (watcher.joinable()) {
            watcher.request_stop();
            watcher.join();
        }
        reconciles.reset();
        const bool again = restart && !stop.stop_requested();
        if (listener)
            listener->finished(errors, again);
        if (!again)
            break;
        // Shown as a warning: a DBA reading serve's log wants to see why the sync started again.
        log(LogLevel::Warn, "the stored workspace changed (a slot guard fallback, promote or apply): the sync "
                            "starts again with it");
    }
    if (m_options.once)
        ReconcileScheduler(m_store, *last, m_options.pipeline).runPending(stop); // what a fallback owes
    return errors;
}

} // namespace driftless::core
