#pragma once

#include "core/model/strategy.h"
#include "core/model/tableref.h"
#include "core/model/vocabulary.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// The records a workspace's state file keeps (core/state/statestore.h) and faces read through
/// WorkspaceState (core/engine/workspacestate.h): plain values, no database handle.

struct ApplySummary {
    bool changed = false;
    std::vector<std::string> lines; ///< human-readable: "+ pipeline app_to_dw", "~ table ...".
};

struct TableStatus {
    std::string pipeline;
    TableRef table;
    Strategy strategy = Strategy::FullRefresh;
    TableState state = TableState::Idle;
    std::string message;
    std::string checkpoint; ///< strategy-specific JSON, as stored in the target
    std::int64_t version = 0;
    std::int64_t rowsApplied = 0;
    std::optional<std::int64_t> lastSyncAtMs;  ///< last successful commit, workstation clock
    std::optional<std::int64_t> freshAsOfMs;   ///< target holds the source as of this time
    std::optional<double> progress;            ///< 0..1 while a backfill runs
    std::optional<std::int64_t> backfillRows;  ///< while a backfill runs: rows copied so far
    std::optional<std::int64_t> backfillTotal; ///< ... the estimate of its rows
    std::optional<double> backfillEtaSeconds;  ///< ... its expected remaining time, as of updatedAtMs
    std::int64_t updatedAtMs = 0;
};

/// A table a DBA paused: the engine leaves it alone (keeping its state and checkpoint) until
/// it is resumed, across restarts.
struct PausedTable {
    std::string pipeline;
    TableRef table;
    std::int64_t pausedAtMs = 0;
};

struct EventRecord {
    std::int64_t id = 0;
    std::int64_t tsMs = 0;
    Level level = Level::Info;
    std::string pipeline;
    std::string table;
    std::string kind;
    std::string message;
};

struct LagSample {
    std::string pipeline;
    std::string table;
    std::int64_t tsMs = 0;
    double lagSeconds = 0;
    double rowsPerSecond = 0;
};

/// What a replication slot held at one moment (sampled by the slot monitor).
struct SlotSample {
    std::string source;
    std::string slot;
    std::int64_t tsMs = 0;
    std::optional<std::int64_t> retainedBytes;
    std::optional<std::int64_t> unconfirmedBytes;
    std::optional<std::int64_t> safeWalSize;
};

/// One table of a reconciliation report, for lists, badges and alerts.
struct ReconcileSummary {
    std::int64_t reportId = 0;
    std::string pipeline;
    std::string table;
    std::int64_t finishedMs = 0;
    std::int64_t sourceRows = 0, targetRows = 0, missing = 0, extra = 0, different = 0, inFlight = 0;
    double driftRatio = 0;
    std::string error;
    /// History marks (StateStore::reconcileSummaries only): a repair was run from this report for
    /// this table; the next report that compared the table again (0: none, this is the latest).
    bool repaired = false;
    std::int64_t supersededBy = 0;
};

/// A reconciliation owed to a table (after a slot guard fallback): run after the table's
/// next successful pass since `sinceMs`, repairing what it finds when `repair`.
struct PendingReconcile {
    std::string pipeline;
    std::string table;
    std::string reason;
    std::int64_t sinceMs = 0;
    bool repair = false;
};

} // namespace driftless::core
