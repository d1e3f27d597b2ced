#pragma once

#include "core/engine/jobs/observer.h"
#include "core/engine/run/workspacestate.h"
#include "core/engine/slots/slots.h"
#include "core/engine/status/alerts.h"
#include "core/engine/status/statusreport.h"
#include "core/engine/sync/tablesync.h"
#include "core/model/duration.h"
#include "core/model/workspace.h"
#include "core/state/statestore.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace driftless::core {

class StateObserver;

struct EngineRunOptions {
    /// Only this pipeline; empty: all of them.
    std::string pipeline;
    /// One pass of every table, then the reconciliations a slot guard fallback owes, then return.
    bool once = false;
    /// How often (not in `once`) the slot guards and the stored workspace are checked, and, with
    /// `monitor`, the slots read and the alerts kept.
    Millis checkEvery{5000};
    /// Read every source's slots at every check, keep the alerts (recorded as events when they
    /// open and clear), and keep the latest reconciliation results: what serve shows.
    bool monitor = false;
    /// Each replication slot of the Postgres sources is stored as a sample (the slot history
    /// behind seconds_to_limit and the charts) at most this often, with or without `monitor`, by
    /// every face (run, serve, the app); a slot seen for the first time at once. Thinned and
    /// pruned like lag samples.
    Millis slotSampleEvery{15000};
    /// Only the tables of this strategy (promote and backfill run a pipeline's CDC tables);
    /// unset: every table.
    std::optional<Strategy> onlyStrategy;
};

/// What the monitor read last (EngineRunOptions::monitor).
struct MonitorSample {
    std::vector<SourceSlots> sources;
    std::vector<Alert> alerts;
    std::int64_t atMs = 0;
    std::vector<StateStore::ReconcileSummary> reconciles;
};

/// What a face of the engine (driftless-cli run, serve, the app) hears of a run, on the run's
/// thread. Each method must return quickly.
class EngineRunListener {
public:
    virtual ~EngineRunListener() = default;
    struct Start {
        const Workspace &workspace; ///< as run (only EngineRunOptions::pipeline, when set)
        const std::vector<TableJob> &jobs;
        const StateObserver &mirror; ///< every table's status, mirrored into the state file
        WorkspaceState &state;       ///< the face may read it and note events in it
        int restarts = 0;            ///< 0 the first time; then how many times the workspace changed
    };
    /// The engine starts with `start.workspace` (again, after a change). What it returns is
    /// chained after the mirror, and must live until finished().
    virtual EngineObserver *started(const Start &) { return nullptr; }
    /// The paused tables, as the engine read them: right after started(), then about once a second.
    virtual void pausesRead(const std::vector<StateStore::PausedTable> &) {}
    /// That run ended: `restarting` when it starts again at once with a changed workspace (a slot
    /// guard fallback, promote, apply), `errors` the tables it left in error. Also called when the
    /// run fails (errors 0, not restarting) before run() throws.
    virtual void finished(int /*errors*/, bool /*restarting*/) {}
};

/// The engine's run lifecycle, once for every face:
///  - checks the stored workspace (ConfigError: no pipelines, no such pipeline);
///  - gives up slots past their guard before anything reads them (slotguard.h);
///  - runs the tables (Scheduler) with the state file's mirror (StateObserver) and the pauses
///    stored there, and the scheduled reconciliations (ReconcileScheduler);
///  - every `checkEvery`: acts on the slot guards as stored then (also while the run is stuck on
///    a stalled target), reads the slots, projects each one's time to its limit and keeps alerts
///    (`monitor`; slot samples stored every `slotSampleEvery`), and starts again, in place, when
///    the stored workspace changed (a fallback, promote, apply);
///  - with `once`: one pass, then the reconciliations a fallback owes.
///
/// Thread affinity: run() blocks the calling thread; status() and monitorSample() may be called
/// from any thread while it runs (and after).
class EngineRun {
public:
    EngineRun(WorkspaceState &state, EngineRunOptions options);
    ~EngineRun();
    EngineRun(const EngineRun &) = delete;
    EngineRun &operator=(const EngineRun &) = delete;

    /// Runs until `stop` (or, with `once`, one pass). Returns how many tables ended in error.
    /// Throws ConfigError for a workspace it cannot run, Error for what stops the whole engine.
    int run(std::stop_token stop, EngineRunListener *listener = nullptr);

    struct Status {
        std::shared_ptr<const Workspace> workspace; ///< null before the first start
        std::vector<TableReport> tables;
        MonitorSample monitor;
    };
    /// Every table's status as of `nowMs`, with the paused tables and (with `monitor`) the
    /// latest reconciliations.
    Status status(std::int64_t nowMs) const;
    MonitorSample monitorSample() const;

    /// The stored workspace, checked as run() checks it. Throws ConfigError.
    static Workspace loadRunnable(WorkspaceState &state, const std::string &pipeline);

private:
    struct Monitor;
    /// Without `monitor`: acts on the slot guards of `ws` (the stored workspace, every pipeline),
    /// and samples its slots when they are due; true when a guard fell back. Reads the slots only
    /// when a guard or a sample needs them. Logs, never throws.
    bool guardAndSample(const Workspace &ws);
    /// Looks for new tables on the sources of `ws`'s pipelines with include_tables whose
    /// discover_every has passed (all of them with `now`), and records what the patterns picked
    /// up, with an event each (docs/patterns.md). True when it recorded a table. Logs, never throws.
    bool discoverDueTables(const Workspace &ws, bool now);
    /// One monitor round over `ws`; true when a slot guard fell back.
    /// `whole`: the stored workspace with every pipeline, whose slots on `ws`'s sources are
    /// theirs (not orphans) when `ws` is one pipeline of it.
    bool monitorOnce(const Workspace &ws, const Workspace *whole = nullptr);
    /// Acts on the fallback guards `sources` breach; true when one fell back. Logs, never throws.
    bool fallBackWhereBreached(const Workspace &ws, const std::vector<SourceSlots> &sources);
    /// Stores the slots of `sources` whose sample is due (slotSampleEvery); logs, never throws.
    void recordSlotSamples(const std::vector<SourceSlots> &sources, std::int64_t nowMs);
    /// Reads the paused tables into m_paused (and tells the listener). Throws Error.
    void pausesNow(EngineRunListener *listener);

    WorkspaceState &m_state;
    StateStore &m_store;
    EngineRunOptions m_options;
    std::unique_ptr<Monitor> m_monitor;
    /// discoverDueTables: when each pipeline looks for new tables next (watcher thread or run()).
    std::map<std::string, std::chrono::steady_clock::time_point> m_nextDiscovery;

    mutable std::mutex m_mutex; ///< guards what follows
    std::shared_ptr<const Workspace> m_workspace;
    const StateObserver *m_mirror = nullptr;
    std::vector<StateStore::TableStatus> m_lastTables; ///< the mirror's last copy, between runs
    std::vector<StateStore::PausedTable> m_paused;
    MonitorSample m_sample;
};

} // namespace driftless::core
