#pragma once

#include "core/engine/status/freshness.h"
#include "core/model/cdcposition.h"
#include "core/state/statestore.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// One table's status as the CLI, the status endpoint and the app show it.
struct TableReport {
    std::string pipeline;
    std::string table;
    std::string target;
    /// A two-way pipeline's rows, one per direction of each table: `pipeline` is the direction's
    /// name (the pipeline's for source to target, PipelineSpec::reverseName() for target to
    /// source, as the state store and /metrics name them), `twoWay` the pipeline's, `reverse`
    /// which direction, `source` the side read ("endpoint:table"). `twoWay` is empty for one-way
    /// pipelines.
    std::string twoWay;
    bool reverse = false;
    std::string source;
    Strategy strategy = Strategy::FullRefresh;
    TableState state = TableState::Idle;
    std::string message;
    std::int64_t rowsApplied = 0;
    std::optional<std::int64_t> lastSyncAtMs;
    std::string checkpoint; ///< JSON position, as stored
    std::int64_t version = 0;
    std::optional<double> lagSeconds;
    Freshness freshness = Freshness::Unknown;
    double slaSeconds = 0;
    std::optional<double> progress;
    /// While a backfill runs (an initial load or a re-backfill while streaming).
    struct Backfill {
        std::int64_t rows = 0;
        std::optional<std::int64_t> total; ///< unknown for a table the planner has no estimate of
        std::optional<double> percent;
        std::optional<double> etaSeconds; ///< unknown until a rate has been measured
    };
    std::optional<Backfill> backfill;
    /// A CDC table copying its rows again while its stream goes on (state `backfilling`), as
    /// opposed to its initial load: the stream keeps applying changes meanwhile.
    bool rebackfill = false;
    /// The newest reconciliation of the table, when one ran.
    std::optional<StateStore::ReconcileSummary> reconcile;
    /// The newest reconciliation found drift above the pipeline's `alert_above` (the badge
    /// shows warn while it lasts; a repair and a clean run clear it).
    bool driftAlert = false;
    /// The slot guard switched this table from CDC to cursor sync (`promote` goes back).
    bool fellBackFromCdc = false;
    /// Picked up by the pipeline's `include_tables` while it ran (TableSpec::discovered), not
    /// listed under `tables:`; its settings come from `table_defaults`.
    bool pickedUp = false;
    double driftAlertAbove = 0;
    /// A CDC table's source as its checkpoint records it (system id and timeline, or server id
    /// and GTID state); none for other strategies and for tables without a checkpoint.
    std::optional<SourceIdentity> sourceIdentity;
    /// A DBA paused the table (its state reads `paused` while it is); since when.
    bool paused = false;
    std::optional<std::int64_t> pausedAtMs;
};

/// Joins the workspace's tables with their mirrored status (tables never run show `idle`). A
/// table in `paused` shows state `paused` even before an engine took the pause; one whose
/// checkpoint is stopped by a change of source shows `source_changed`.
std::vector<TableReport> buildStatus(const Workspace &ws, const std::vector<StateStore::TableStatus> &statuses,
                                     std::int64_t nowMs,
                                     const std::vector<StateStore::ReconcileSummary> &reconciles = {},
                                     const std::vector<StateStore::PausedTable> &paused = {});

/// `{"generated_at": ..., "tables": [ {pipeline, table, strategy, state, rows_applied,
/// last_sync_at, checkpoint, last_synced_lsn, cursor, lag_seconds, freshness, backfill: {rows,
/// total, percent, eta_seconds} or null, paused, paused_at, source_identity: {system_id,
/// timeline} or {server_id, gtid} or null, ...} ]}`.
std::string statusJson(const std::vector<TableReport> &tables, std::int64_t nowMs);
/// The `tables` array of statusJson.
nlohmann::json tablesJsonValue(const std::vector<TableReport> &tables);

/// The reports tablesJsonValue() wrote, read back (a client of the agent API). Unknown keys are
/// ignored, missing ones left at their defaults. Throws Error for what is not such an array.
std::vector<TableReport> tablesFromJson(const nlohmann::json &tables);

/// A backfill in words: `420000 of 1000000 rows (42.0%), about 1m 20s left`.
std::string describeBackfill(const TableReport::Backfill &b);

} // namespace driftless::core
