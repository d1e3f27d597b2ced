#pragma once

#include "core/model/batch.h"
#include "core/model/error.h"
#include "core/model/rowversion.h"
#include "core/model/tableschema.h"
#include "core/model/workspace.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace driftless::core {

/// Identifies one synced table on the target side.
struct MergeTarget {
    std::string pipeline;
    TableRef source;
    TargetName target;
    Strategy strategy = Strategy::FullRefresh;
    /// `deletes: soft`: a delete that wins the guard marks the row (`_driftless_deleted_at`, see
    /// core/mergers/softdelete.h) instead of removing it; a later insert or update clears the mark.
    bool softDeletes = false;
    /// `adopt: true`: a target table that exists without the engine's version column is taken:
    /// prepare() checks that it has the source's columns and a key the merge can match rows on,
    /// then adds the version column (every row at version 0, below every real change), and
    /// adoptedNow() says so. Else such a table is refused.
    bool adopt = false;
};

struct ApplyResult {
    long long rowsInBatch = 0;
    /// Rows the target actually changed (inserted, updated or deleted); replays write 0.
    long long rowsWritten = 0;
    /// True when the batch went straight in with COPY/INSERT (initial load), false when merged.
    bool direct = false;
    /// Partial rows (with unchanged columns) whose key the target did not have: not applied,
    /// because the source did not send all their values. Reported, never silently dropped.
    long long partialRowsMissing = 0;
};

/// Values of some columns for some keys, as text (Postgres text format; nullopt for NULL): the
/// key columns' values first, then the filled columns', one vector per row.
struct ColumnFill {
    std::vector<std::string> keyColumns;
    std::vector<std::string> columns;
    std::vector<std::vector<std::optional<std::string>>> rows;
};

/// Lands batches in one target table: staging + guarded merge + checkpoint, one transaction.
///
/// The guard: a row is written only when its version is newer than the target row's, for
/// updates AND deletes; a delete that wins leaves a tombstone (key, version) so an older insert
/// replayed later cannot resurrect the row. Replaying any batch any number of times leaves the
/// target the same (P2).
///
/// Thread affinity: one thread (it owns a target connection). Failure: Error from the target;
/// the transaction is rolled back, so nothing of the batch is visible and the checkpoint is
/// unchanged.
class Merger {
public:
    virtual ~Merger() = default;

    /// The source epoch this merger writes under (core/model/rowversion.h): every version it is
    /// given (rows, checkpoints, the thresholds of deletes and fills) is a position of that
    /// epoch and is stored composed with it; versions it returns (readCheckpoint) are positions
    /// again. Learnt from the stored checkpoint by prepare() and readCheckpoint(), never lowered
    /// by them; raised by the engine at a re-seed or a change of source (startEpoch()).
    virtual int epoch() const { return m_epoch; }
    virtual void setEpoch(int epoch) { m_epoch = epoch; }
    /// The highest version the target holds for this table, composed: its rows', its
    /// tombstones' and its checkpoint's (a scan of the table; for the start of a re-seed).
    virtual std::int64_t highestVersion() = 0;

    /// Creates the target table (and bookkeeping: staging, tombstones, checkpoints) when missing;
    /// adds columns the source gained. Throws SchemaError when the existing table cannot take the
    /// source's rows.
    virtual void prepare(const TableSchema &source) = 0;
    /// prepare() took a target table that existed without the version column (MergeTarget::adopt):
    /// its rows are the DBA's, at version 0, not yet compared with the source.
    virtual bool adoptedNow() const { return false; }

    /// The checkpoint stored in the target for this table, the authority for where to resume.
    virtual std::optional<Checkpoint> readCheckpoint() = 0;
    /// Removes the stored checkpoint (used before a fresh initial load).
    virtual void clearCheckpoint() = 0;
    /// True when the target table holds no rows.
    virtual bool targetEmpty() = 0;

    /// Applies a batch and stores its checkpoint in one transaction. With `batch.directLoad`
    /// the rows are copied straight in; should a key already exist, the batch is merged instead.
    virtual ApplyResult apply(const Batch &batch) = 0;

    /// Full refresh: load every row into a shadow, then swap it in with the checkpoint in one
    /// transaction. `rows` is called with a sink that takes COPY text (rows ending in newline,
    /// the source columns followed by the row version); readers of the target see the old table
    /// until the swap commits. Returns the number of rows loaded.
    virtual long long replaceAll(const std::function<void(const std::function<void(std::string_view)> &sink)> &rows,
                                 const Checkpoint &checkpoint) = 0;

    virtual std::string describeTarget() const = 0;

protected:
    /// `v`, a position of this merger's epoch, as the target stores it.
    std::int64_t versioned(std::int64_t v) const { return rowversion::compose(m_epoch, v); }
    /// A stored (composed) checkpoint version read: its epoch is at least this merger's.
    std::int64_t learnt(std::int64_t stored)
    {
        m_epoch = std::max(m_epoch, rowversion::epochOf(stored));
        return rowversion::positionOf(stored);
    }

public:
    // The pieces of apply(), for callers that own the transaction (CDC applies one source
    // transaction's changes to many tables in one target transaction, see TargetSession).
    /// Stages and merges `rows` (guarded, as apply() does) inside the open transaction.
    virtual ApplyResult mergeInTransaction(const RowSet &rows) = 0;
    /// Copies `rows` straight into the table (initial load into an empty table).
    virtual long long loadInTransaction(const RowSet &rows) = 0;
    /// Removes every row: a replicated TRUNCATE.
    virtual long long truncateInTransaction() = 0;
    virtual void writeCheckpointInTransaction(const Checkpoint &cp, long long rows) = 0;
    /// Adds target columns for source columns it lacks (the source gained a column).
    virtual void addMissingColumns(const TableSchema &source) = 0;
    /// Deletes rows whose version is older than `version`: after a re-snapshot merged at that
    /// version, those are the rows the source no longer has.
    virtual long long deleteOlderInTransaction(std::int64_t version) = 0;
    /// A chunk of a snapshot copy (a re-backfill while streaming): merges `rows` under the guard
    /// but writes only rows that differ from the target (an equal row keeps its version, so a
    /// re-backfill of an unchanged table writes nothing), and remembers their keys as seen.
    virtual ApplyResult mergeSnapshotChunkInTransaction(const RowSet &rows) = 0;
    /// After the snapshot's last chunk: deletes the rows older than `version` whose key no chunk
    /// had (the rows the source no longer has), then forgets the seen keys. Returns rows removed.
    virtual long long deleteUnseenInTransaction(std::int64_t version) = 0;
    /// Forgets seen keys left by an earlier, abandoned snapshot copy.
    virtual void clearSeenInTransaction() = 0;
    /// How many keys are remembered as seen (one per row merged by snapshot chunks). Lower than
    /// the rows a resumed copy merged: they were lost (a server crash empties unlogged tables),
    /// and the copy must start over.
    virtual long long seenCount() = 0;
    /// Rows of `rows` that carry unchanged columns (values the source did not send) but whose
    /// key the target does not have, so nothing can fill them in: their indexes.
    virtual std::vector<size_t> partialRowsWithoutTarget(const RowSet &rows) = 0;
    /// A request another process left for this table in the target's checkpoint row (e.g.
    /// `rebackfill`), or empty. Requests live in the target, next to the progress they affect.
    virtual std::string pendingRequest() = 0;
    /// The requests left for every table of this merger's pipeline in the same target, by source
    /// table (its display name), in one query: what a stream polls between batches, at a cost
    /// that does not grow with the pipeline's tables.
    virtual std::map<std::string, std::string> pendingRequests() = 0;
    /// Sets (or, with an empty string, clears) the request. Throws when the table has no
    /// checkpoint yet (nothing to act on).
    virtual void setRequest(const std::string &request) = 0;
    /// Per row of `rows`, the version the guard holds for its key (composed, as stored): the
    /// highest of the target row's version and its tombstone's, 0 when the target has neither. A repair writes each row
    /// at no lower version than this, so it wins over the row it corrects.
    virtual std::vector<std::int64_t> guardVersions(const RowSet &rows) = 0;
    /// The target's rows whose `columns` (source names) hold one of `values` (per tuple one COPY
    /// text field per column; a tuple with a NULL matches nothing), as COPY lines in the source's
    /// layout with only the columns `fields` (source column indexes) filled, the rest NULL: what a
    /// parent's change reaches in this (child) table through a foreign key whose action the source
    /// performed without logging it (ARCHITECTURE.md P7). Only for columns of integer and string
    /// types; throws Error naming the column otherwise. Inside or outside a transaction.
    virtual std::vector<std::string> rowsReferencing(const std::vector<std::string> &columns,
                                                     const std::vector<std::vector<std::string>> &values,
                                                     const std::vector<int> &fields)
    {
        (void)columns;
        (void)values;
        (void)fields;
        throw Error(ErrorKind::Permanent, "foreign-key actions are not applied to " + describeTarget() + " yet");
    }
    /// The target table's own columns (bookkeeping columns left out): name and declared type.
    virtual std::vector<std::pair<std::string, std::string>> targetColumns() = 0;
    /// The target table exists without the version column: a table the engine did not create,
    /// which prepare() refuses or (MergeTarget::adopt) adopts. Its columns are the DBA's, not a
    /// layout the source changed since. Also before prepare().
    virtual bool unmanagedTarget() = 0;
    /// targetColumns() named as at the source whose schema is `source`, also before prepare():
    /// differs from it only behind a `columns:` mapping (withColumnMapping()).
    virtual std::vector<std::pair<std::string, std::string>> targetColumnsAsSource(const TableSchema &source)
    {
        (void)source;
        return targetColumns();
    }
    /// Fills `fill.columns` of existing rows from the source's values (add-column backfill): sets
    /// only those columns, and only on rows whose version is older than `below` (rows written
    /// since came with the values and are never overwritten); the row's version is kept. Returns
    /// the rows changed. Targets that cannot fill say so with fillsColumns().
    virtual long long fillColumnsInTransaction(const ColumnFill &fill, std::int64_t below)
    {
        (void)fill;
        (void)below;
        throw Error(ErrorKind::Permanent, "filling added columns is not available for " + describeTarget());
    }
    virtual bool fillsColumns() const { return false; }
    /// False when source column `column` does not reach the target (a `columns:` mapping leaves
    /// it out), so nothing there is added, filled or changed for it.
    virtual bool writesColumn(const std::string &column) const
    {
        (void)column;
        return true;
    }
    /// The target's side of a column-scoped comparison: a row count and an md5 over (key,
    /// columns) in key order, computed in SQL; empty when the target cannot compute it.
    virtual std::string columnChecksum(const std::vector<std::string> &keyColumns,
                                       const std::vector<std::string> &columns)
    {
        (void)keyColumns;
        (void)columns;
        return {};
    }
    /// The columns the target computes itself (a Postgres target's generated columns), as of
    /// prepare(): rows still carry a field for them, which is never written. Every other target
    /// stores the values it is sent, generated at the source or not.
    virtual std::vector<std::string> generatedColumns() const { return {}; }
    /// True when dropColumn() and widenColumn() work for this target.
    virtual bool changesColumns() const { return false; }
    /// True when a target column of `targetType` (as targetColumns() spells it) is the type this
    /// target gives source column `c` (`key`: part of the primary key): a Postgres target's
    /// types are the source's; MariaDB/MySQL and SQLite map them to their own.
    virtual bool holdsType(const ColumnInfo &c, bool key, const std::string &targetType) const
    {
        (void)key;
        return c.typeSql == targetType;
    }
    /// The source dropped `column` (`source` is its schema without it): stop writing it, and
    /// with `drop` remove it from the target too, else keep it (nullable, so new rows get NULL or
    /// its default). Returns what the target did, for the event log ("kept on the target, no
    /// longer written"), or empty when it was kept before (a restart). Inside the caller's
    /// transaction; throws Error when the target refuses.
    virtual std::string dropColumn(const TableSchema &source, const std::string &column, bool drop)
    {
        (void)source;
        (void)column;
        (void)drop;
        throw Error(ErrorKind::Permanent, "a dropped column is not handled for " + describeTarget() + " yet");
    }
    /// The source widened `column` (its new type is in `source`): widen it on the target too.
    /// Returns where the change landed, for the event log ("on the target"). Inside the caller's
    /// transaction; throws Error when the target refuses.
    virtual std::string widenColumn(const TableSchema &source, const std::string &column)
    {
        (void)source;
        (void)column;
        throw Error(ErrorKind::Permanent, "a retyped column is not handled for " + describeTarget() + " yet");
    }
    /// The source renamed `from` to `to` (`source` is its schema with the new name): rename it on
    /// the target (and in the merger's own tables). Returns where the change landed, for the
    /// event log. Inside the caller's transaction; throws Error when the target refuses.
    virtual std::string renameColumn(const TableSchema &source, const std::string &from, const std::string &to)
    {
        (void)source;
        (void)from;
        (void)to;
        throw Error(ErrorKind::Permanent, "a renamed column is not handled for " + describeTarget() + " yet");
    }

private:
    int m_epoch = 0;
};

/// The epoch a re-seed of `merger`'s table (a load into a table that may hold rows, a
/// resnapshot) writes under: above every version the target holds for it, so each row the
/// re-seed copies overwrites what is there whatever server wrote it (ARCHITECTURE.md P6); 0 for
/// a table that holds nothing. Sets it on the merger and returns it. Throws Error past
/// rowversion::kMaxEpoch, with what to do.
int startEpoch(Merger &merger);

/// A target table's unique keys: each unique index (or its primary key) by name, with its columns.
using UniqueKeys = std::map<std::string, std::vector<std::string>>;
/// Whether the target table `table` (its `columns` and `uniqueKeys`) can be adopted for `source`
/// (MergeTarget::adopt): it must have the source's columns (as mapped), no more and no fewer,
/// under their names (a column of its own could be taken for one the source dropped, and a schema
/// policy would act on it), and a unique key on exactly the source's key columns (the merge
/// matches rows on them). Else throws SchemaError listing every difference; when only the key is
/// missing, naming the statement that adds it: `addKey` of the key's columns, each `quote`d.
void checkAdoptable(const std::string &table, const TableSchema &source, const std::vector<std::string> &columns,
                    const UniqueKeys &uniqueKeys, const std::function<std::string(const std::string &)> &quote,
                    const std::function<std::string(const std::string &)> &addKey);

/// Whether values of `c` read back from any target are the text its source gave them (integers
/// and strings): the columns rowsReferencing() handles.
bool readsBackExactly(const ColumnInfo &c);

/// Why a target table cannot take the source's rows as they are now (a column the source no
/// longer has, or one whose type changed), or empty when it can. Columns the source gained are
/// fine: prepare() adds them.
std::string schemaDrift(const TableSchema &source, const std::vector<std::pair<std::string, std::string>> &target,
                        bool compareTypes);

/// One connection to a target shared by several mergers, so the changes of one source
/// transaction to many tables commit together. Thread affinity: one thread.
class TargetSession {
public:
    virtual ~TargetSession() = default;
    virtual void begin() = 0;
    virtual void commit() = 0;
    virtual void rollback() noexcept = 0;
    /// Runs `body` in one transaction: committed when it returns, rolled back when it (or the
    /// commit) throws, the exception passed on.
    template <typename Body> void inTransaction(Body &&body)
    {
        begin();
        try {
            body();
            commit();
        } catch (...) {
            rollback();
            throw;
        }
    }
    /// A merger for one table that works on this session's connection.
    virtual std::unique_ptr<Merger> merger(const MergeTarget &target) = 0;
    virtual std::string describe() const = 0;
};

} // namespace driftless::core
