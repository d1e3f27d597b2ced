#pragma once

#include "core/db/pgconnection.h"
#include "core/mergers/merger.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>

namespace driftless::core {

/// Merger into a Postgres table (15+, uses MERGE).
///
/// Bookkeeping lives in schema `_driftless`: `checkpoints` (the authority for progress), one
/// UNLOGGED staging table and one tombstone table per synced table. Staging is append-only and
/// holds only the batch in flight: it is filled by COPY, merged and truncated inside the batch's
/// transaction.
class PgMerger final : public Merger {
public:
    /// Takes a connection of its own (one thread).
    PgMerger(PgConnection conn, MergeTarget target);
    /// Shares a connection with the other mergers of one target (CDC applies the changes of
    /// all its tables in one transaction). All users must run on the same thread.
    PgMerger(std::shared_ptr<PgConnection> conn, MergeTarget target);

    void prepare(const TableSchema &source) override;
    bool adoptedNow() const override { return m_adopted; }
    std::optional<Checkpoint> readCheckpoint() override;
    std::int64_t highestVersion() override;
    void clearCheckpoint() override;
    bool targetEmpty() override;
    ApplyResult apply(const Batch &batch) override;
    long long replaceAll(const std::function<void(const std::function<void(std::string_view)> &sink)> &rows,
                         const Checkpoint &checkpoint) override;
    std::string describeTarget() const override;

    PgConnection &connection() { return *m_conn; }

    ApplyResult mergeInTransaction(const RowSet &rows) override;
    long long loadInTransaction(const RowSet &rows) override;
    long long truncateInTransaction() override;
    void writeCheckpointInTransaction(const Checkpoint &cp, long long rows) override;
    void addMissingColumns(const TableSchema &source) override;
    bool changesColumns() const override { return true; }
    std::string dropColumn(const TableSchema &source, const std::string &column, bool drop) override;
    std::string widenColumn(const TableSchema &source, const std::string &column) override;
    std::string renameColumn(const TableSchema &source, const std::string &from, const std::string &to) override;
    ApplyResult mergeSnapshotChunkInTransaction(const RowSet &rows) override;
    /// What a re-backfill that compared first (RebackfillCompare) deletes of the target: the rows
    /// `DELETE FROM target t [USING usingSql] WHERE whereSql` selects (`$1`.. are `params`).
    struct SnapshotScope {
        std::string usingSql;
        std::string whereSql;
        Params params;
    };
    /// Merges `rows`, the snapshot's rows of the key ranges the scopes select, under the version
    /// guard, and deletes the target's rows in those scopes that `rows` lacks and whose version is
    /// below `below` (the source no longer has them). Returns the result and the rows deleted.
    std::pair<ApplyResult, long long>
    mergeSnapshotScopesInTransaction(const RowSet &rows, const std::vector<SnapshotScope> &scopes, std::int64_t below);
    long long deleteUnseenInTransaction(std::int64_t version) override;
    void clearSeenInTransaction() override;
    long long seenCount() override;
    long long deleteOlderInTransaction(std::int64_t version) override;
    std::vector<std::pair<std::string, std::string>> targetColumns() override;
    bool unmanagedTarget() override;
    std::vector<std::string> generatedColumns() const override;
    long long fillColumnsInTransaction(const ColumnFill &fill, std::int64_t below) override;
    bool fillsColumns() const override { return true; }
    std::string columnChecksum(const std::vector<std::string> &keyColumns,
                               const std::vector<std::string> &columns) override;
    std::vector<size_t> partialRowsWithoutTarget(const RowSet &rows) override;
    std::vector<std::int64_t> guardVersions(const RowSet &rows) override;
    std::vector<std::string> rowsReferencing(const std::vector<std::string> &columns,
                                             const std::vector<std::vector<std::string>> &values,
                                             const std::vector<int> &fields) override;
    std::string pendingRequest() override;
    std::map<std::string, std::string> pendingRequests() override;
    void setRequest(const std::string &request) override;
    /// Bookkeeping names, for tests and the doctor.
    std::string stagingTable() const;
    std::string tombstoneTable() const;
    /// The keys a re-backfill has merged (or found equal), for deleteUnseenInTransaction.
    std::string seenTable() const;

    /// Creates `_driftless` and its checkpoint table if missing (safe to race with other
    /// processes doing the same).
    static void ensureBookkeeping(PgConnection &conn);

private:
    /// What prepare() finds on the target before creating anything.
    struct Layout {
        bool bookkeeping = false;            ///< _driftless.checkpoints with its newest column
        std::vector<std::string> target;     ///< the target table's columns; empty: no such table
        std::set<std::string> generated;     ///< those of them the target generates
        std::map<std::string, bool> staging; ///< staging column -> NOT NULL; empty: none
        bool tombstones = false;
        bool seen = false;
    };
    Layout readLayout();
    /// The staging table (and tombstones and seen keys, for a keyed table) holds every column
    /// a batch stages, none of them NOT NULL but Driftless's own.
    bool stagingReady(const Layout &layout) const;
    void ensureTypes();
    /// Creates the target table (its schema exists) when the layout has none; else checks Driftless
    /// manages it and adds the columns the source gained. Sets m_generated.
    void ensureTable(const Layout &layout);
    /// The table exists without the version column and MergeTarget::adopt is set: checks it
    /// (checkAdoptable) and adds the column.
    void adoptTable();
    /// True when the target creates `c` as a generated column: a Postgres source's generated
    /// column that is no key column.
    bool generatedHere(const ColumnInfo &c) const;
    std::string columnDdl(const ColumnInfo &c, bool generated);
    void ensureStaging();
    void matchStagingStorage();
    /// The target's schema, enum types, table and (unless a full refresh) staging, as far as
    /// `layout` says they are missing.
    void ensureTargetTables(const Layout &layout);
    void buildSql();
    /// Staging, tombstones and the guarded merge: every strategy but a full refresh that swaps.
    bool mergesRows() const { return m_target.strategy != Strategy::FullRefresh || m_target.softDeletes; }
    /// `UPDATE target t SET <deleted now, version at least $1> WHERE true`, for a condition to follow.
    std::string softDeleteSql() const;
    /// One batch and its checkpoint in one transaction: copied straight in, or merged.
    ApplyResult commitBatch(const Batch &batch, bool direct);
    void streamRows(const RowSet &rows, bool staging);
    /// A re-backfill's rows into the (begun) staging table, then the snapshot merge: rows written.
    long long stageAndMergeSnapshot(const RowSet &rows);
    std::string columnTypeSql(const ColumnInfo &c);

    std::shared_ptr<PgConnection> m_conn;
    MergeTarget m_target;
    TableSchema m_source;
    std::string m_targetSql;           ///< "schema"."table"
    std::string m_columnList;          ///< "c1", "c2", ... (the columns the target does not generate)
    std::set<std::string> m_generated; ///< target columns the target generates
    std::vector<bool> m_skipFields;    ///< per source column: generated here, its field not sent
    bool m_anySkipped = false;
    std::string m_copyStaging;
    std::string m_copyTarget;
    std::string m_mergeSql;
    std::string m_tombSql;
    std::string m_truncateSql;
    std::string m_clearSql; ///< DELETE FROM the staging table
    /// Before a merge stages rows: the first time, empties the staging table (what a crashed
    /// server may have left in it); after that it is empty already, as every merge empties it
    /// in its own transaction (endStaging).
    void beginStaging();
    /// After a merge, in its transaction: empties the staging table of the `rows` it staged.
    /// By DELETE, which costs the rows; a TRUNCATE (a new file, and a scan of every shared
    /// buffer when the transaction ends: 8 ms a batch with 256 MB of shared_buffers, where the
    /// DELETE of 50 rows costs well under 1) only once kStagedRowsPerTruncate rows have gone
    /// through since the last, so the dead rows the DELETEs leave stay few.
    void endStaging(size_t rows);
    static constexpr size_t kStagedRowsPerTruncate = 10000;
    bool m_stagingEmptied = false;
    size_t m_stagedSinceTruncate = 0;
    std::string m_orphanSql; ///< counts staged partial rows whose key the target lacks
    std::string m_mergeNoTombSql;
    std::string m_snapshotMergeSql; ///< merge writing only differing rows (re-backfill)
    std::string m_snapshotMergeNoTombSql;
    std::string m_seenInsertSql;
    void ensureSeen();
    bool m_tombstonesMaybe = true;
    bool m_adopted = false; ///< prepare() adopted the table (adoptedNow)
    double m_rowEstimate = 0;
    std::chrono::steady_clock::time_point m_estimateAt{};
    /// The target's rows as of now, estimated as the planner does: its statistics' rows per
    /// page times the pages it has now (so a table grown since its last ANALYZE counts at its
    /// size). Read at most once a minute, unless `fresh`.
    double targetRowEstimate(bool fresh = false);
    /// Whether a batch of `rows` rows joined to the target by key should probe the key index
    /// (small next to the table) rather than let the planner hash or sort the whole target.
    /// A cached estimate that says "scan" is read again first: a table filling up (a stream
    /// into a new target) would otherwise be scanned whole by every batch until the next read.
    bool probesKeys(size_t rows)
    {
        return static_cast<double>(rows) * 5 < targetRowEstimate() ||
               static_cast<double>(rows) * 5 < targetRowEstimate(true);
    }
    /// Runs a statement joining a batch to the target by key, with the planner told to probe
    /// the key index per batch row when `probe` (SET LOCAL: in the caller's transaction), so it
    /// costs the batch, not the table. JIT is off: a statement run once per batch never pays.
    PgResult execJoinedByKey(bool probe, std::string_view sql, const Params &params = {});
};

/// A Postgres target connection shared by the mergers of one CDC pipeline.
class PgTargetSession final : public TargetSession {
public:
    explicit PgTargetSession(PgConnection conn) : m_conn(std::make_shared<PgConnection>(std::move(conn))) {}
    void begin() override { m_conn->begin(); }
    void commit() override { m_conn->commit(); }
    void rollback() noexcept override { m_conn->rollback(); }
    std::unique_ptr<Merger> merger(const MergeTarget &target) override
    {
        return std::make_unique<PgMerger>(m_conn, target);
    }
    std::string describe() const override { return m_conn->describe(); }
    PgConnection &connection() { return *m_conn; }

private:
    std::shared_ptr<PgConnection> m_conn;
};

/// The query of a column-scoped comparison over `fromSql` (with `where`, e.g. a row filter, or
/// empty): one row, "count:md5" of (keys, columns) as row text in key order. The same query on
/// two Postgres servers gives the same text when those columns hold the same values.
std::string pgColumnChecksumSql(const std::string &fromSql, const std::vector<std::string> &keyColumns,
                                const std::vector<std::string> &columns, const std::string &where);

} // namespace driftless::core
