#pragma once

#include "core/engine/jobs/observer.h"
#include "core/engine/jobs/pauses.h"
#include "core/engine/sync/tablesync.h"

#include <functional>
#include <set>
#include <stop_token>
#include <vector>

namespace driftless::core {

/// Runs table jobs on their schedules with a small pool of worker threads.
///
/// Full refresh and cursor tables run every `every` (default 1 h and 1 min). A transient error
/// (server down, lock timeout) is retried with exponential backoff up to a minute; a permanent
/// one (wrong password, missing table) turns the table red and is retried every 5 minutes, so
/// the table recovers once the DBA fixed the cause. Other tables keep running either way.
///
/// Paused tables (Options::pausedTables, read at start and about once a second) are left alone
/// as PauseSet describes: a full refresh or cursor table is skipped (a pass under way stops
/// between batches) and runs at once when resumed; a CDC table's pipeline keeps streaming the
/// others and re-copies it when resumed.
///
/// Thread affinity: run() blocks the calling thread; observers are called from workers.
class Scheduler {
public:
    struct Options {
        /// One pass of every table, then return.
        bool once = false;
        int maxParallel = 4;
        /// Attempts per table in `once` mode for transient errors.
        int onceAttempts = 3;
        /// The tables paused now, e.g. `[&store] { return readPauses(store); }`; called from the
        /// scheduler's ticker. Unset: nothing is ever paused. A call that throws keeps the last set.
        std::function<std::set<PauseSet::Key>()> pausedTables = nullptr;
    };
    Scheduler(std::vector<TableJob> jobs, EngineObserver &observer, Options options);

    /// Runs until `stop` is requested, or with `once` until every table did one pass.
    /// Returns how many tables ended in an error state.
    int run(std::stop_token stop);

private:
    std::vector<TableJob> m_jobs;
    EngineObserver &m_observer;
    Options m_options;
};

} // namespace driftless::core
