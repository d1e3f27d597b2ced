#pragma once

#include "core/db/sqlitedb.h"
#include "core/model/conflictpolicy.h"
#include "core/model/staterecords.h"
#include "core/model/strategy.h"
#include "core/model/tableref.h"
#include "core/model/workspace.h"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// The workspace's local state in SQLite: endpoints (no secrets), pipelines, table specs, a
/// mirror of each table's checkpoint and status, runs, lag samples and events.
///
/// The authority for sync progress is the checkpoint table in each target; this file mirrors it
/// for the CLI and the app and can be rebuilt from the targets.
///
/// Thread safety: all methods lock one internal mutex, so any thread may call them. Several
/// processes may open the same file (WAL mode; writers wait up to 10 s for each other).
/// Failure: throws Error (transient for a busy or full database).
class StateStore {
public:
    /// Opens or creates the file (0600, parent folder 0700), switches to WAL and runs forward
    /// migrations. Throws Error when the file is from a newer Driftless.
    explicit StateStore(const std::string &path);

    /// `$XDG_DATA_HOME/driftless/workspace.db`, or `~/.local/share/driftless/workspace.db`.
    static std::string defaultPath();
    static constexpr int kSchemaVersion = 6; ///< the number of migrations (state/migrations.cpp)
    const std::string &path() const { return m_path; }

    // Workspace ---------------------------------------------------------------------------
    Workspace loadWorkspace();
    using ApplySummary = core::ApplySummary;
    /// Makes the stored workspace equal to `ws`, in one transaction. Writes nothing when they are
    /// already equal, so applying the same file twice changes nothing the second time.
    ApplySummary applyWorkspace(const Workspace &ws);
    /// A table a pipeline's include_tables picked up, as recorded when it was: the strategy
    /// chosen then and its cursor, or why it was not taken (`refused`: it never syncs).
    struct DiscoveredTable {
        std::string pipeline;
        TableRef table;
        Strategy strategy = Strategy::FullRefresh;
        std::optional<std::string> cursor;
        std::string refused;
        std::int64_t foundAtMs = 0;
    };
    std::vector<DiscoveredTable> discoveredTables(const std::string &pipeline = {});
    /// Records `t` once; false (and nothing written) when it was recorded before.
    bool addDiscoveredTable(const DiscoveredTable &t);

    // Status mirror -------------------------------------------------------------------------
    using TableStatus = core::TableStatus;
    void upsertTableStatus(const TableStatus &s);
    /// Updates state and message only, keeping the rest.
    void setTableState(const std::string &pipeline, const TableRef &table, Strategy strategy, TableState state,
                       const std::string &message, std::optional<double> progress = std::nullopt);
    std::optional<TableStatus> tableStatus(const std::string &pipeline, const TableRef &table);
    std::vector<TableStatus> tableStatuses();

    // Pauses --------------------------------------------------------------------------------
    using PausedTable = core::PausedTable;
    /// Pauses or resumes one table; returns false when it already was as asked.
    bool setPaused(const std::string &pipeline, const TableRef &table, bool paused);
    std::vector<PausedTable> pausedTables();

    // Runs, events, lag --------------------------------------------------------------------
    std::int64_t startRun(const std::string &pipeline, const TableRef &table, Strategy strategy);
    void finishRun(std::int64_t runId, const std::string &status, std::int64_t rows, const std::string &error);

    using Event = core::EventRecord;
    void addEvent(Level level, const std::string &pipeline, const std::string &table, const std::string &kind,
                  const std::string &message);
    /// Newest first; `pipeline` and `table` (as TableRef::display() writes it) empty for all.
    std::vector<Event> events(int limit = 100, const std::string &pipeline = {}, const std::string &table = {});

    using LagSample = core::LagSample;
    void addLagSample(const LagSample &s);
    std::vector<LagSample> lagSamples(const std::string &pipeline, const std::string &table, std::int64_t sinceMs);
    /// Drops samples older than `keepMs` and thins those older than an hour to one a minute.
    void pruneLagSamples(std::int64_t nowMs, std::int64_t keepMs);

    using SlotSample = core::SlotSample;
    void addSlotSamples(const std::vector<SlotSample> &samples);
    std::vector<SlotSample> slotSamples(const std::string &source, const std::string &slot, std::int64_t sinceMs);
    /// As pruneLagSamples, keeping the highest retained WAL of each minute.
    void pruneSlotSamples(std::int64_t nowMs, std::int64_t keepMs);

    using ReconcileSummary = core::ReconcileSummary;
    /// Stores a report (its JSON as reportJsonValue makes it) and its per-table summaries; returns
    /// the report's id.
    std::int64_t addReconcileReport(const std::string &pipeline, std::int64_t startedMs, std::int64_t finishedMs,
                                    std::int64_t drift, const std::string &reportJson,
                                    const std::vector<ReconcileSummary> &tables);
    /// Replaces a stored report's JSON (to record its id, or what a repair did).
    void updateReconcileReport(std::int64_t id, const std::string &reportJson);
    std::optional<std::string> reconcileReport(std::int64_t id);
    /// Newest first; `pipeline` empty for all.
    std::vector<ReconcileSummary> reconcileSummaries(int limit = 200, const std::string &pipeline = {});
    /// The newest summary of each table.
    std::vector<ReconcileSummary> latestReconciles();
    using PendingReconcile = core::PendingReconcile;
    void addPendingReconcile(const PendingReconcile &p);
    std::vector<PendingReconcile> pendingReconciles();
    void clearPendingReconcile(const std::string &pipeline, const std::string &table);

    // Conflict queue (two-way pipelines) --------------------------------------------------
    using Conflict = core::QueuedConflict;
    /// Queues a conflict, or refreshes the open one of the same row (both directions see the
    /// same conflict, each from its side). Returns its id.
    std::int64_t addConflict(const ConflictRecord &c);
    /// Open conflicts (every one when `includeResolved`), oldest first; `pipeline` empty for all.
    std::vector<Conflict> conflicts(const std::string &pipeline = {}, bool includeResolved = false);
    std::optional<Conflict> conflict(std::int64_t id);
    void markConflictResolved(std::int64_t id, const std::string &resolution);

    /// Milliseconds since the Unix epoch, workstation clock.
    static std::int64_t nowMs();

private:
    /// Drops rows of `table` older than `keepMs`; past an hour keeps, per `series` and minute, the
    /// row with the highest `worst`. Identifiers are ours, never user input.
    void pruneSamples(const char *table, const char *series, const char *worst, std::int64_t nowMs,
                      std::int64_t keepMs);
    void migrate();
    std::mutex m_mutex;
    std::string m_path;
    SqliteDb m_db;
};

} // namespace driftless::core
