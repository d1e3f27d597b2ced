#pragma once

#include "core/engine/jobs/observer.h"
#include "core/model/workspace.h"

#include <optional>

#include <string>
#include <vector>

namespace driftless::core {

/// Prepares CDC tables for a fresh initial load, after their slot was lost or invalidated, or a
/// schema change paused them: removes their checkpoints from the target (so the next run loads
/// them again, merging into the rows already there and removing rows the source no longer has),
/// and, when every CDC table of the pipeline is re-snapshotted, drops the pipeline's slot so the
/// next run creates a new one.
///
/// Refuses while the slot is being read (a `run` is streaming): stop it first.
/// Returns one line per thing done. Throws Error / ConfigError.
std::vector<std::string> resnapshot(const Workspace &ws, const std::string &pipeline,
                                    const std::vector<std::string> &tables);

/// `driftless-cli recover PIPELINE`: leaves the `recover` request in the checkpoint of every CDC
/// table of the pipeline that has one, so that when the source has changed in a way the stream
/// cannot read on from, the next run (or the running one, at its next start) brings the tables
/// back instead of stopping: by diff (docs/failover.md).
/// Returns one line per table. Throws ConfigError (unknown pipeline, no CDC tables, nothing
/// synced yet).
std::vector<std::string> requestRecovery(const Workspace &ws, const std::string &pipeline);

/// What `requestRebackfill` found and did.
struct RebackfillRequest {
    enum class What {
        Requested,   ///< a request was left in the target
        InFlight,    ///< a re-backfill of the table is already under way (it resumes after restarts)
        InitialLoad, ///< the table has not finished its initial load, which is its backfill
    };
    What what = What::Requested;
    TableKey key;
    std::string message;
    /// The walsender serving the pipeline's slot: a sync is running and picks the request up
    /// within seconds. Unset when none runs.
    std::optional<int> runningPid;
};

/// Asks for a re-backfill of one CDC table while its pipeline keeps streaming: leaves a request
/// in the target that the running sync (or the next one) picks up within seconds. The table is
/// copied again in a fresh snapshot through the guarded merge, without locks, and rows the
/// source no longer has are removed; the other tables keep streaming meanwhile.
/// Throws Error / ConfigError (not a CDC table, unknown table or pipeline).
RebackfillRequest requestRebackfill(const Workspace &ws, const std::string &pipeline, const std::string &table);

/// Asks to cancel a re-backfill of one CDC table (under way, interrupted, or only requested).
/// The rows merged so far stay; rows the source no longer has are not looked for. A running
/// sync applies it within a second, the next sync before anything else. `what` is Requested
/// when there was something to cancel, InFlight never, InitialLoad when nothing runs.
RebackfillRequest cancelRebackfill(const Workspace &ws, const std::string &pipeline, const std::string &table);

} // namespace driftless::core
