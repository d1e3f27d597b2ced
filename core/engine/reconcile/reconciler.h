#pragma once

#include "core/engine/jobs/tablejob.h"
#include "core/engine/reconcile/canonicalkey.h"
#include "core/model/staterecords.h"
#include "core/model/workspace.h"

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace driftless::core {

/// One column of a differing row: its canonical text on each side (nullopt: NULL).
struct ColumnDiff {
    std::string column;
    std::optional<std::string> source;
    std::optional<std::string> target;
};

struct DifferentRow {
    CanonicalKey key;
    std::vector<ColumnDiff> columns;
};

/// A missing or extra row with its values as the side that has it holds them (canonical text,
/// nullopt: NULL), in the order of TableReconcile::columns.
struct RowValues {
    CanonicalKey key; ///< empty for a table without a primary key
    std::vector<std::optional<std::string>> values;
    /// A table without a primary key: how many copies of this row one side has more of.
    long long copies = 1;
};

/// What reconciling one table found.
struct TableReconcile {
    std::string pipeline;
    std::string table;  ///< source table, display form
    std::string target; ///< target table, display form
    /// Two-way pipelines: "forward" (the pipeline's source side compared with its target side,
    /// which covers both directions: the comparison is symmetric); else empty.
    std::string direction;
    std::string strategy;
    std::vector<std::string> keyColumns;
    /// Integer key columns print as JSON numbers.
    std::vector<bool> keyIsInteger;
    long long sourceRows = 0;
    long long targetRows = 0;
    long long missing = 0;   ///< in the source, not in the target
    long long extra = 0;     ///< in the target, not in the source
    long long different = 0; ///< in both, with different values
    /// Rows that differed while the sync had not yet applied them (changed during the run, or
    /// within the recent window of a cursor table): not drift.
    long long inFlight = 0;
    double driftRatio = 0;
    /// Up to the report's key limit per class.
    std::vector<CanonicalKey> missingKeys, extraKeys;
    std::vector<DifferentRow> differentRows;
    /// The compared columns, in order (the names of RowValues::values).
    std::vector<std::string> columns;
    /// The missing and extra rows with their values, as far as they were read (keyed tables:
    /// those of missingKeys/extraKeys once rechecked; a table without a primary key: its only
    /// listing, each row with its count of copies).
    std::vector<RowValues> missingRows, extraRows;
    long long elapsedMs = 0;
    int sourceQueries = 0, targetQueries = 0;
    /// Table rows (or keys) fetched to the workstation, per side; aggregates not counted.
    long long sourceRowsFetched = 0, targetRowsFetched = 0;
    std::string skipped; ///< why the table was not compared, when it was not
    std::string note;    ///< what the figures mean beyond themselves (lag, limits)
    std::string error;
    /// `compare --where`: the condition both sides were read under, or empty.
    std::string where;

    long long drift() const { return missing + extra + different; }
};

struct ReconcileReport {
    std::int64_t id = 0; ///< assigned when stored
    std::string pipeline;
    std::int64_t startedAtMs = 0;
    std::int64_t finishedAtMs = 0;
    std::vector<TableReconcile> tables;

    long long drift() const;
};

struct ReconcileOptions {
    /// Differing keys kept per class and table (the counts are always complete).
    int maxKeys = 100;
    /// CDC tables: how long to wait for the target to apply up to the source position read after
    /// the comparison, before rechecking the differing rows. Rows that change or converge in
    /// that time are in flight, not drift.
    std::chrono::milliseconds settle{30'000};
    /// Cursor tables: differing rows whose cursor value is this recent (source clock) are in
    /// flight; unset: the table's lookback when it is a duration, else 10 minutes.
    std::optional<std::chrono::milliseconds> recentWindow;
    /// Progress and test hook: (table, phase) with phases `checksum`, `bisect`, `fetch`, `settle`,
    /// `recheck`, `done`.
    std::function<void(const std::string &table, std::string_view phase)> onPhase;
    std::stop_token stop;
    /// Internal tuning (tests lower them to exercise bisection on small tables).
    long long fetchRows = 250'000; ///< rows of differing ranges fetched as key+hash at once
    int maxSegments = 4096;        ///< segments per bisection level
    long long minSegmentRows = 64; ///< smallest segment a level aims for
    /// A one-column integer key between two Postgres sides: the first pass checksums buckets of
    /// about this many keys (at most maxBuckets of them) in its one scan per side.
    long long bucketKeys = 64;
    long long maxBuckets = 65536;
    /// Two tables compared as they are (compareTables): no sync to wait for, so nothing is in
    /// flight but rows that change while they are looked at.
    bool asTheyAre = false;
    /// compareTables only (`compare --key`, `--columns`, `--where`): rows matched by these
    /// columns instead of the first table's primary key (unique and never NULL on both sides, or
    /// the comparison is refused); only these columns compared, besides the key; only the rows
    /// this SQL condition holds for, on both sides (write it in SQL both engines take).
    std::vector<std::string> compareKey;
    std::vector<std::string> compareColumns;
    std::optional<std::string> compareWhere;
};

/// Compares the tables of a pipeline (or the named ones) between source and target: counts, then
/// checksums pushed into each database over primary-key ranges, narrowed level by level to the
/// differing rows, which are then fetched and classified. Rows still in flight are rechecked
/// and not reported as drift. A table without a primary key is compared as a multiset of whole
/// rows: counts and a checksum of every row, then (up to fetchRows rows a side) the rows one side
/// has more copies of, as missing and extra; it has no "different" rows and is not repaired row
/// by row. Nothing is written anywhere; store the report with StateStore.
/// Throws ConfigError for an unknown pipeline or table; a table that fails carries its error.
ReconcileReport reconcile(const Workspace &ws, const std::string &pipeline, const std::vector<std::string> &tables,
                          const ReconcileOptions &options = {});

/// The pseudo-pipeline of a report `compareTables` made (reports list it under this name).
inline constexpr const char *kComparePipeline = "(compare)";

/// `driftless-cli compare LEFT RIGHT`: compares two tables of any two endpoints of the workspace,
/// no pipeline needed, with the same checksums, bisection and report as reconcile: LEFT
/// (`ENDPOINT:TABLE`, a Postgres or MySQL/MariaDB endpoint) is read as the source, RIGHT (any
/// endpoint, SQLite too) as the target: `missing` rows are those only LEFT has, `extra` those only
/// RIGHT has. TABLE is `schema.table` or `table` (Postgres: schema public; MySQL: the DSN's
/// database). Both tables must have LEFT's columns; rows match by LEFT's primary key (a table
/// without one is compared as a multiset of whole rows). Nothing is written anywhere.
/// Throws ConfigError for an unknown endpoint or a malformed argument.
ReconcileReport compareTables(const Workspace &ws, const std::string &left, const std::string &right,
                              ReconcileOptions options = {});

/// The pseudo-job of `compare LEFT RIGHT` (no pipeline): LEFT as its source, RIGHT as its target.
/// Throws ConfigError for an unknown endpoint or a malformed argument.
TableJob compareJob(const Workspace &ws, const std::string &left, const std::string &right);

/// `repair REPORT --sql FILE`: the repair of a reconcile or compare report (or of its table
/// `table`) as a script of plain statements on the target's SQL, in one transaction (BEGIN ...
/// COMMIT), for a DBA to review and run (psql -v ON_ERROR_STOP=1 -f FILE, sqlite3 DB < FILE,
/// mariadb --database=DB < FILE): an INSERT per missing row and an UPDATE per different one with
/// the values the source has now, in the target's own literals (a MySQL/MariaDB target's as its
/// merger writes them), a DELETE per extra key; a key the source no longer agrees with is left
/// out with a comment. Nothing is written anywhere. Postgres, SQLite and MySQL/MariaDB targets.
/// Throws ConfigError for what it cannot write (soft deletes, a table without a key), naming the
/// way to repair it instead.
std::string repairScript(const Workspace &ws, const ReconcileReport &report, const std::optional<std::string> &table);

/// One statement a repair runs against the target, and the rows it takes.
struct RepairStatement {
    std::string kind; ///< `stage`, `upsert` or `delete`
    std::string sql;  ///< its shape, identifiers quoted as the target quotes them
    long long rows = 0;
    /// The whole SQL, as the target's merger runs it: every column, the guard, the staging and
    /// tombstone tables by name (several statements for some targets, one to a line).
    std::string full;
    bool operator==(const RepairStatement &) const = default;
};

/// What repairing one table did.
struct RepairOutcome {
    std::string pipeline;
    std::string table;
    long long keys = 0;     ///< differing keys looked at
    long long written = 0;  ///< rows inserted or updated in the target
    long long deleted = 0;  ///< rows deleted from the target (the source no longer has them)
    long long verified = 0; ///< keys equal on both sides afterwards
    /// Keys still different afterwards: a newer change the sync has not applied yet keeps its
    /// place (the guard), and shows here until it lands.
    long long stillDifferent = 0;
    /// Planned keys left alone because the source no longer agrees with the plan (a planned
    /// write whose source row is gone, a planned delete whose row came back).
    long long skipped = 0;
    /// The statements run, with the rows each took: equal to the plan's unless keys were skipped.
    std::vector<RepairStatement> statements;
    std::string error;
};

/// What repairing one table will do, decided before anything is written: the keys to write
/// from the source and to delete from the target, and the statements that does.
struct TableRepairPlan {
    std::string pipeline;
    std::string table;  ///< source table, display form
    std::string target; ///< target table, display form
    std::vector<bool> keyIsInteger;
    std::vector<CanonicalKey> upsertKeys; ///< the rows to insert, then those to update
    std::vector<CanonicalKey> deleteKeys;
    long long inserts = 0; ///< of upsertKeys: keys the target lacks
    long long updates = 0; ///< of upsertKeys: keys whose target row differs
    std::vector<RepairStatement> statements;
    /// Why the table cannot be repaired (nothing of it runs); empty otherwise.
    std::string error;
};

/// A repair planned from a report: previewed (`repair --dry-run`), then run by executeRepair().
struct RepairPlan {
    std::int64_t reportId = 0;
    std::string pipeline;
    std::vector<TableRepairPlan> tables;
};

/// Plans the repair of every table of a report that has drift (or of `table`): missing rows are
/// inserted and different rows updated from the source, extra rows deleted. A table whose
/// differing keys were not all kept in the report is compared again first (uncapped), so the
/// plan covers every differing row. Writes nothing. Throws ConfigError for an unknown table.
RepairPlan planRepair(const Workspace &ws, const ReconcileReport &report, const std::optional<std::string> &table = {});
/// Plans the repair of `keys` of one table, as repairKeys() runs it: a key whose row the source
/// has is written, one it lacks deleted. Reads the source; writes nothing.
TableRepairPlan planKeys(const Workspace &ws, const std::string &pipeline, const std::string &table,
                         const std::vector<CanonicalKey> &keys);
/// Runs a plan, table by table (each one transaction): exactly the planned statements, over the
/// planned keys, through the guarded merge; a key the source no longer agrees with is skipped.
std::vector<RepairOutcome> executeRepair(const Workspace &ws, const RepairPlan &plan);

/// Re-reads `keys` from the source and applies them to the target through the guarded merge
/// (deletes for keys the source no longer has), never overwriting a newer row: each row carries
/// the highest of the table's checkpoint version and the target row's own version, so a change
/// the sync has yet to apply still wins. Then compares those keys again.
RepairOutcome repairKeys(const Workspace &ws, const std::string &pipeline, const std::string &table,
                         const std::vector<CanonicalKey> &keys);

/// Repairs every table of a report that has drift: executeRepair(planRepair(...)).
std::vector<RepairOutcome> repairReport(const Workspace &ws, const ReconcileReport &report,
                                        const std::optional<std::string> &table = {});

/// `{"report_id", "pipeline", "started_at", "finished_at", "drift", "tables": [{table, target,
/// strategy, source_rows, target_rows, missing, extra, different, in_flight, drift_ratio,
/// keys: {missing, extra, different}, differences: [{key, columns: [{column, source, target}]}],
/// columns, rows: {missing, extra: [{key, values, copies}]}, elapsed_ms, queries, rows_fetched,
/// skipped, note, error}]}`.
nlohmann::json reportJsonValue(const ReconcileReport &report);
ReconcileReport reportFromJson(const nlohmann::json &j);
nlohmann::json repairJsonValue(const std::vector<RepairOutcome> &outcomes);
std::vector<RepairOutcome> repairFromJson(const nlohmann::json &j);
/// `{"report_id", "pipeline", "tables": [{table, target, inserts, updates, deletes, keys:
/// {upsert, delete}, statements: [{kind, sql, rows, full_sql}], error}]}`; and back.
nlohmann::json repairPlanJsonValue(const RepairPlan &plan);
RepairPlan repairPlanFromJson(const nlohmann::json &j);
/// The plan as a DBA reads it before saying yes: per table, the statements and their rows.
std::string repairPlanText(const RepairPlan &plan);
/// repairPlanText() with each statement's whole SQL in place of its shape (the app's Show
/// Details).
std::string repairPlanDetails(const RepairPlan &plan);
/// `[{report, pipeline, table, finished_at_ms, source_rows, target_rows, missing, extra,
/// different, in_flight, drift_ratio, error, repaired, superseded_by}]`, as the agent API lists
/// reports; and back.
nlohmann::json summariesJsonValue(const std::vector<ReconcileSummary> &summaries);
std::vector<ReconcileSummary> summariesFromJson(const nlohmann::json &j);
/// One key as JSON: a scalar for a one-column key (a number for integer columns), else an array.
nlohmann::json keyJson(const CanonicalKey &key, const std::vector<bool> &isInteger);
CanonicalKey keyFromJson(const nlohmann::json &j);

} // namespace driftless::core

namespace driftless::core {

class StateStore;

/// Stores a report in the state file (setting its id) and records one event per table: drift
/// found (warn, with the counts and the repair command), none, or the error.
void storeReport(StateStore &store, ReconcileReport &report);
/// A stored report, or nullopt.
std::optional<ReconcileReport> loadReport(StateStore &store, std::int64_t id);
/// Records what a repair did as events, and in the report's JSON under `repairs`.
void recordRepair(StateStore &store, const ReconcileReport &report, const std::vector<RepairOutcome> &outcomes);

/// One stored report in a list of them: its totals over its tables.
struct ReportListing {
    std::int64_t id = 0;
    std::string pipeline;
    std::int64_t finishedMs = 0;
    int tables = 0;
    long long missing = 0, extra = 0, different = 0;
    int failedTables = 0;
    /// A repair was run from it (recordRepair).
    bool repaired = false;
};
/// The stored reports, newest first, at most `limit`; `pipeline` empty for all.
std::vector<ReportListing> listReports(StateStore &store, int limit, const std::string &pipeline = {});
/// `[{report_id, pipeline, finished_at, finished_at_ms, tables, missing, extra, different,
/// failed_tables, repaired}]`.
nlohmann::json reportListingJsonValue(const std::vector<ReportListing> &reports);

} // namespace driftless::core

#include <thread>

namespace driftless::core {

/// Runs each pipeline's scheduled reconciliation (`reconcile: { every: ... }`) while the sync
/// runs: on its own thread, a pipeline at a time, storing every report (and so its events, its
/// drift alert and its badge). The first run of a pipeline comes one interval after the newest
/// stored report (at once when there is none). Also runs the reconciliations owed after a slot
/// guard fallback. Reads the workspace from the store each time (a fallback changes it).
class ReconcileScheduler {
public:
    ReconcileScheduler(StateStore &store, Workspace ws, std::string onlyPipeline = {});
    ~ReconcileScheduler();
    /// Starts the thread (a no-op when no pipeline has a schedule).
    void start();
    /// Runs the reconciliations due at `nowMs` (owed ones first); returns how many ran.
    int runDue(std::int64_t nowMs, std::stop_token stop = {});
    /// Runs only the owed ones (after a slot guard fallback: once the table has completed a pass,
    /// reconcile it and repair what is found); returns how many ran.
    int runPending(std::stop_token stop = {});

private:
    StateStore &m_store;
    Workspace m_ws;
    std::string m_only;
    std::jthread m_thread;
};

} // namespace driftless::core
