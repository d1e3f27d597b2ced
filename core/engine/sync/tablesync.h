#pragma once

#include "core/engine/jobs/observer.h"
#include "core/engine/jobs/tablejob.h"
#include "core/model/workspace.h"

#include <stop_token>

namespace driftless::core {

class ConnectionPool;

/// Runs one sync pass of one table: a full refresh reloads it; a cursor table finishes (or
/// starts) its initial load, then reads everything changed up to the source's current time.
///
/// Inside, a reader thread (source connection) and the calling thread (target connection) are
/// joined by a bounded queue, so reading page n+1 overlaps applying page n. Every batch commits
/// with its checkpoint in the target, so a crash at any point resumes at the next batch.
///
/// Stop: a stop request ends the pass between batches (a full refresh is rolled back and
/// throws Cancelled). Failure: throws Error; nothing of an unfinished batch is visible.
class TableSync {
public:
    /// With `pool`, Postgres connections are taken from it and given back after a pass that ended
    /// well (the scheduler keeps one pool per run).
    TableSync(TableJob job, EngineObserver &observer, ConnectionPool *pool = nullptr);

    struct Outcome {
        long long rowsRead = 0;
        long long rowsWritten = 0;
        int batches = 0;
        /// Set when a schema change paused the table (`schema_changes:` policies, docs/
        /// schema-changes.md): what changed and what to do. Nothing was read or written.
        std::string paused;
    };
    Outcome runOnce(std::stop_token stop);

private:
    Outcome fullRefresh(std::stop_token stop);
    Outcome cursorPass(std::stop_token stop);

    TableJob m_job;
    EngineObserver &m_observer;
    ConnectionPool *m_pool = nullptr;
};

} // namespace driftless::core
