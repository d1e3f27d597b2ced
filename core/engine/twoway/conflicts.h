#pragma once

#include "core/engine/jobs/observer.h"
#include "core/model/batch.h"
#include "core/model/conflictpolicy.h"
#include "core/model/tableref.h"
#include "core/model/tableschema.h"
#include "core/model/workspace.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

class PgConnection;

/// What one two-way batch of one table did about conflicts.
struct ConflictOutcome {
    long long merged = 0;    ///< disjoint column edits: only the incoming change's columns written
    long long sourceWon = 0; ///< decided for the pipeline's source side
    long long targetWon = 0; ///< decided for the pipeline's target side
    long long queued = 0;    ///< parked for a person; neither side written
    std::vector<ConflictRecord> queue;
};

/// Where a two-way batch is applied: the target's table and the stream's layout.
struct ConflictScope {
    std::string pipeline;             ///< the two-way pipeline's name
    std::string table;                ///< the pipeline's source table, for the queue and the counters
    std::string targetSql;            ///< the quoted table the batch merges into
    std::vector<std::string> columns; ///< the stream's columns (the rows' layout)
    /// SQL types of `columns` (newer_wins reads its timestamp column as this type); may be empty.
    std::vector<std::string> columnTypes;
    std::vector<std::string> keyColumns;
    std::vector<std::string> keyTypes; ///< SQL types of the key columns
    bool incomingIsSource = true;      ///< forward direction: the change comes from the source
    /// The change was read from the other engine (a Postgres<->MariaDB pair): its values are
    /// spelled as that server spells them, and ConflictTarget::spellIncoming() respells them.
    bool crossEngine = false;
};

/// The side a two-way batch is applied to, as conflict detection sees it: the rows it holds now
/// and its server's reading of timestamps. One per engine (Postgres here, MariaDB/MySQL in
/// conflictsmysql.h), so both mergers' targets share one set of rules (resolveConflicts).
///
/// Thread affinity: the thread that owns the target's connection, inside its open transaction.
class ConflictTarget {
public:
    using Values = std::vector<std::optional<std::string>>;
    struct Held {
        Values values;                        ///< in the scope's column layout; synced columns as text, others nullopt
        std::optional<std::int64_t> commitUs; ///< when asked for and known
    };
    virtual ~ConflictTarget() = default;
    /// The target's rows for the keys of `rows` at `picked` (at most 1,000 of them), by index
    /// into `rows`; keys the target lacks are absent. Values must read as the stream's text for
    /// the same value. `commitTime`: also the commit time of the transaction that wrote each.
    virtual std::map<size_t, Held> rowsFor(const ConflictScope &scope, const RowSet &rows,
                                           const std::vector<size_t> &picked, const std::vector<int> &keyIdx,
                                           const std::vector<size_t> &synced, bool commitTime) = 0;
    /// Two values of a timestamp column of SQL type `type` as microseconds since the epoch, read
    /// by the target's server; each nullopt when it has none (NULL, infinite).
    virtual std::pair<std::optional<std::int64_t>, std::optional<std::int64_t>>
    timestampsUs(const std::string &type, const std::optional<std::string> &mine,
                 const std::optional<std::string> &theirs) = 0;
    /// Cross-engine pairs (scope.crossEngine): rewrites the `synced` columns of each of `values`
    /// (rows of the incoming change in the scope's layout, as the other engine spells them) into
    /// the text rowsFor() gives the same values here, converted as this side's one-way merger
    /// converts them (so `t` and `1`, or a timestamp with and without its zone, read the same).
    /// Throws Error when a value cannot be held by this side's column.
    virtual void spellIncoming(const ConflictScope &scope, const std::vector<size_t> &synced,
                               const std::vector<Values *> &values) = 0;
};

/// Detects and resolves the conflicts of `rows` (folded, with before-images) against the rows
/// `target` holds now, inside the caller's open transaction on it: one lookup per 1,000 keys.
ConflictOutcome resolveConflicts(ConflictTarget &target, const ConflictScope &scope, const ConflictPolicy &policy,
                                 RowSet &rows);

/// Detects and resolves the conflicts of `rows` (folded, with before-images) against the rows
/// the target holds now, inside the caller's open transaction on `target`: one query per 1,000
/// keys. A change whose before-image equals the target's row (or whose after-image the target
/// already holds) is no conflict and stays as it is. Otherwise `policy` decides: a losing or
/// queued change is removed from `rows`; a field-level merge keeps only the incoming change's
/// changed columns (the others marked unchanged, so the merge keeps the target's values).
/// Values are compared as Postgres's text output on both sides. Only `newer_wins` looks at
/// times: the timestamp column of both versions, or the incoming change's commit time (the
/// rows' commitTime) against pg_xact_commit_timestamp(xmin) of the target's row. Times that
/// differ by max_skew or less, an unknown time, or a delete on either side queue the conflict.
ConflictOutcome resolveConflicts(PgConnection &target, const ConflictScope &scope, const ConflictPolicy &policy,
                                 RowSet &rows);

/// Counts `o` (countConflicts) and hands its queued conflicts to `observer`, with one event
/// saying what the batch's conflicts came to.
void reportConflicts(EngineObserver &observer, const TableKey &key, const ConflictScope &scope,
                     const ConflictOutcome &o);

/// The replication origin `driftless-cli resolve` writes a Postgres side under,
/// `driftless_<direction>_resolve`, where `direction` is the direction that reads that side (the
/// pipeline's name for its source, `<name>_rev` for its target): that direction's reader drops
/// it, so a resolution is never read back. One per side, because resolve holds both sides'
/// transactions at once and replication origins are per cluster: two databases of one cluster
/// could not both write under one origin at the same time.
std::string resolveOriginName(const std::string &direction);

/// Counts conflicts by outcome (merged, source_won, target_won, queued, resolved). Thread-safe.
void countConflicts(const std::string &pipeline, const std::string &table, const std::string &outcome, long long n);
struct ConflictCountSample {
    std::string pipeline;
    std::string table;
    std::string outcome;
    long long count = 0;
};
std::vector<ConflictCountSample> conflictCountsSnapshot();

/// `driftless-cli resolve` on one side of a conflict: one transaction on that side's server,
/// marked as Driftless's own (resolveOriginName on Postgres, skip_replication on MariaDB/MySQL)
/// so neither direction reads the write back, holding the row of the conflict's key locked from
/// the read to the write. Without the lock a change committed between resolve's check of the
/// rows and its write would be overwritten on that side only, with no conflict left to show it.
/// Rolled back unless commit() is called. Every call throws Error (with what to do) on failure.
class ResolutionSide {
public:
    virtual ~ResolutionSide() = default;
    /// The row as it is now, locked until the end of the transaction: `columns` as Postgres's
    /// text output (MariaDB/MySQL: as the binlog reader spells the values), as resolveConflicts()
    /// compares them; a JSON object of column -> text or null, or `null` when there is no row.
    virtual std::string lockRow(const std::vector<std::string> &columns) = 0;
    /// Writes `rowJson` (a JSON object of column -> text, or null for "no row") over the row.
    virtual void write(const std::string &rowJson) = 0;
    virtual void commit() = 0;
};

/// Opens the transaction of a ResolutionSide on `endpoint` for the row of `keyJson` ({"column":
/// "text"}) in `table`; `direction` is the direction that reads this side (resolveOriginName). `postgresColumns` (a
/// Postgres<->MariaDB pair, on the MariaDB side): the Postgres side's columns, whose text the written values are
/// converted from as the one-way merger converts them.
std::unique_ptr<ResolutionSide> openResolutionSide(const Endpoint &endpoint, const std::string &direction,
                                                   const TargetName &table, const std::string &keyJson,
                                                   const TableSchema *postgresColumns = nullptr);

/// openResolutionSide() on a Postgres side (resolutionsides.cpp picks the side's kind).
std::unique_ptr<ResolutionSide> openPgResolutionSide(const Endpoint &endpoint, const std::string &direction,
                                                     const TargetName &table, const std::string &keyJson);

/// Writes `rowJson` over the row of `keyJson` on one side in one transaction of its own (a
/// ResolutionSide written and committed).
void writeResolution(const Endpoint &endpoint, const std::string &direction, const TargetName &table,
                     const std::string &keyJson, const std::string &rowJson,
                     const TableSchema *postgresColumns = nullptr);

/// A Postgres<->MariaDB pair: the Postgres side's table `table` on `endpoint` (its columns'
/// types). Blocking; throws Error when it cannot be read.
TableSchema postgresColumnsOf(const Endpoint &endpoint, const TargetName &table);

/// A Postgres<->MariaDB pair: `rows` (each a JSON object of column -> text, or `null`) with every
/// value read by the Postgres side as its column's type and printed back (`::type::text`), so the
/// two servers' spellings of one value (`1` and `t`, a DATETIME and a timestamp, `1.5` and
/// `1.50`) compare equal. Columns the table lacks are left as they are. Blocking.
std::vector<std::string> spellAsPostgres(const Endpoint &endpoint, const TableSchema &columns,
                                         const std::vector<std::string> &rows);

} // namespace driftless::core
