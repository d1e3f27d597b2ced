#pragma once

#include "core/engine/jobs/observer.h"
#include "core/model/tableref.h"
#include "core/model/workspace.h"

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace driftless::core {

class StateStore;

/// The tables a DBA paused, as a running engine sees them: the scheduler refreshes it from the
/// workspace file about once a second; its workers and CDC pipelines read it between batches.
///
/// What a pause means, per strategy (docs/pause.md):
/// - full refresh and cursor: the scheduler skips the table (a pass under way is stopped between
///   batches; what it committed stays). Its state and checkpoint stay; Resume runs a pass at
///   once, which catches up from the checkpoint.
/// - CDC: the pipeline's stream goes on for its other tables; the paused table's changes are
///   not applied and its checkpoint stops moving, marked `"paused": true` in the target so a
///   restart (even with the pause lifted meanwhile) knows the gap. Resume re-copies the table
///   from a fresh snapshot through the guarded merge while the stream goes on (a re-backfill:
///   only rows that differ are written, rows the source no longer has are removed), so the
///   changes made during the pause all arrive.
///
/// Thread safety: every method may be called from any thread.
class PauseSet {
public:
    using Key = std::pair<std::string, TableRef>;
    bool contains(const std::string &pipeline, const TableRef &table) const;
    /// Replaces the set; returns true when it changed.
    bool assign(std::set<Key> paused);
    std::set<Key> keys() const;

private:
    mutable std::mutex m_mutex;
    std::set<Key> m_keys;
};

/// The paused tables of a workspace file, as a PauseSet takes them. Throws Error.
std::set<PauseSet::Key> readPauses(StateStore &store);

/// What a paused table's state message says, per strategy.
std::string pausedMessage(Strategy strategy);

/// One table that `setTablesPaused` paused or resumed.
struct PauseChange {
    TableKey key;
    bool changed = false; ///< false: it already was as asked
    std::string message;  ///< what happens now, in words for the CLI and the app
};

/// Pauses (`pause` true) or resumes tables of a pipeline, every table when `tables` is empty:
/// records it in the workspace file (a running engine, in this process or another, takes it
/// within a second; the next one starts with it), marks the table's status and adds an event.
/// Talks to no database server, so it never waits on one.
/// Throws ConfigError (unknown pipeline or table), Error (the file).
std::vector<PauseChange> setTablesPaused(StateStore &store, const Workspace &ws, const std::string &pipeline,
                                         const std::vector<std::string> &tables, bool pause);

} // namespace driftless::core
