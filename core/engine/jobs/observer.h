#pragma once

#include "core/mergers/merger.h"
#include "core/model/batch.h"
#include "core/model/conflictpolicy.h"
#include "core/model/strategy.h"
#include "core/model/tableref.h"
#include "core/model/vocabulary.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace driftless::core {

struct TableKey {
    std::string pipeline;
    TableRef table;
    Strategy strategy = Strategy::FullRefresh;
    std::string display() const { return pipeline + "/" + table.display(); }
};

/// The message of a CDC table's `backfilling` state while it copies its rows again under a running
/// stream (a re-backfill), as opposed to its initial load; buildStatus tells the two apart by it
/// and by the re-backfill's progress in the checkpoint (TableReport::rebackfill).
inline constexpr const char *kRebackfillMessage = "re-backfill while streaming";
/// The message of that state while the copy is a recovery after a change of source (`recover`,
/// docs/failover.md): the table is compared with the new server and what differs copied.
inline constexpr const char *kRecoveryMessage = "recovering after a source change";
/// The message of that state while the copy brings an adopted table up to date (docs/adopt.md):
/// its rows are compared with the source and only those that differ copied.
inline constexpr const char *kAdoptMessage = "adopting the existing table: comparing its rows with the source";

/// How far a backfill (an initial load, or a re-backfill while streaming) has got.
struct Progress {
    long long rows = 0;  ///< rows copied so far, counting those copied before a restart
    long long total = 0; ///< estimate of the rows to copy (the planner's), at least `rows`
    double fraction() const
    {
        return total > 0 ? std::min(1.0, static_cast<double>(rows) / static_cast<double>(total)) : 0.0;
    }
};

/// Receives what the engine does, from worker threads. Implementations must be thread-safe and
/// must not block for long (they run between batches): the workspace mirror, the CLI's status
/// line, the app's snapshot publisher.
class EngineObserver {
public:
    virtual ~EngineObserver() = default;
    /// `progress` is set during a backfill.
    virtual void tableState(const TableKey &key, TableState state, const std::string &message,
                            std::optional<Progress> progress) = 0;
    /// A batch and its checkpoint committed in the target. `freshAsOfMs` is set when the batch
    /// completed a pass (the target now holds the source as of that workstation time).
    virtual void batchApplied(const TableKey &key, const ApplyResult &result, const Checkpoint &checkpoint,
                              std::optional<std::int64_t> freshAsOfMs) = 0;
    virtual void event(Level level, const TableKey &key, const std::string &kind, const std::string &message) = 0;
    /// A pass of one table starts / ends (status: ok, error, cancelled).
    virtual void runStarted(const TableKey &) {}
    virtual void runFinished(const TableKey &, const std::string & /*status*/, long long /*rows*/,
                             const std::string & /*error*/)
    {
    }
    /// A two-way direction parked a conflict for a person (the conflict queue).
    virtual void conflict(const ConflictRecord &) {}
    /// Called about once a second by the scheduler, from its own thread.
    virtual void tick() {}
};

} // namespace driftless::core
