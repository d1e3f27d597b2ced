#pragma once

#include "core/db/sqlitedb.h"
#include "core/mergers/merger.h"
#include "core/mergers/sqlitetypes.h"

#include <memory>

namespace driftless::core {

/// Opens a SQLite target file as mergers use it (WAL, synchronous NORMAL, a batch-sized cache).
std::shared_ptr<SqliteDb> openSqliteTarget(const std::string &path);

/// Merger into a SQLite file.
///
/// The batch arrives folded (one row per key) and SQLite applies a whole batch as one local
/// transaction, so rows go straight from the batch into guarded statements
/// (INSERT ... ON CONFLICT ... WHERE newer; DELETE ... WHERE older) without a staging table:
/// the same semantics as the Postgres merge at a fraction of the writes. Bookkeeping tables are
/// prefixed `_driftless_` (SQLite has no schemas).
class SqliteMerger final : public Merger {
public:
    SqliteMerger(const std::string &path, MergeTarget target);
    /// Shares an open database with the other mergers of one CDC pipeline (one thread).
    SqliteMerger(std::shared_ptr<SqliteDb> db, MergeTarget target);

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
    ApplyResult mergeInTransaction(const RowSet &rows) override;
    long long loadInTransaction(const RowSet &rows) override;
    long long truncateInTransaction() override;
    void writeCheckpointInTransaction(const Checkpoint &cp, long long rows) override;
    void addMissingColumns(const TableSchema &source) override;
    bool changesColumns() const override { return true; }
    bool holdsType(const ColumnInfo &c, bool key, const std::string &targetType) const override;
    std::string dropColumn(const TableSchema &source, const std::string &column, bool drop) override;
    std::string widenColumn(const TableSchema &source, const std::string &column) override;
    std::string renameColumn(const TableSchema &source, const std::string &from, const std::string &to) override;
    ApplyResult mergeSnapshotChunkInTransaction(const RowSet &rows) override;
    long long deleteUnseenInTransaction(std::int64_t version) override;
    void clearSeenInTransaction() override;
    long long seenCount() override;
    long long deleteOlderInTransaction(std::int64_t version) override;
    std::vector<std::pair<std::string, std::string>> targetColumns() override;
    bool unmanagedTarget() override;
    std::vector<size_t> partialRowsWithoutTarget(const RowSet &rows) override;
    std::vector<std::int64_t> guardVersions(const RowSet &rows) override;
    std::vector<std::string> rowsReferencing(const std::vector<std::string> &columns,
                                             const std::vector<std::vector<std::string>> &values,
                                             const std::vector<int> &fields) override;
    std::string pendingRequest() override;
    std::map<std::string, std::string> pendingRequests() override;
    void setRequest(const std::string &request) override;
    long long fillColumnsInTransaction(const ColumnFill &fill, std::int64_t below) override;
    bool fillsColumns() const override { return true; }

    std::string tombstoneTable() const;
    std::string seenTable() const;
    SqliteDb &db() { return *m_db; }

private:
    /// The target (with every source column), the checkpoint, tombstone and seen-key tables
    /// all exist, so prepare() needs no DDL.
    bool tablesReady();
    void ensureTable();
    /// The table exists without the version column and MergeTarget::adopt is set: checks it
    /// (checkAdoptable) and adds the column.
    void adoptTable();
    void buildStatements();
    /// Removes (or, with soft deletes, marks deleted) the rows older than `?1`; a condition may follow.
    std::string removeOlderSql() const;
    long long insertRow(SqliteStmt &st, std::string_view line, std::int64_t version);
    long long updatePartialRow(std::string_view line, std::string_view mask, std::int64_t version);

    std::shared_ptr<SqliteDb> m_db;
    bool m_adopted = false; ///< prepare() adopted the table (adoptedNow)
    MergeTarget m_target;
    TableSchema m_source;
    std::vector<SqliteStorage> m_storage;
    std::string m_table;
    SqliteStmt m_insert;         ///< plain insert (direct load, full refresh)
    SqliteStmt m_upsert;         ///< guarded upsert
    SqliteStmt m_snapshotUpsert; ///< guarded upsert writing only differing rows (re-backfill)
    SqliteStmt m_seenInsert;     ///< remembers a re-backfilled key
    SqliteStmt m_delete;         ///< guarded delete
    SqliteStmt m_tomb;           ///< tombstone upsert
    SqliteStmt m_partial;        ///< guarded update keeping columns marked unchanged
    SqliteStmt m_exists;         ///< does the key exist
    SqliteStmt m_checkpoint;
    std::vector<std::string_view> m_fields;
    std::string m_scratch;
};

/// A SQLite target file shared by the mergers of one CDC pipeline.
class SqliteTargetSession final : public TargetSession {
public:
    explicit SqliteTargetSession(const std::string &path);
    void begin() override { m_db->exec("BEGIN IMMEDIATE"); }
    void commit() override { m_db->exec("COMMIT"); }
    void rollback() noexcept override;
    std::unique_ptr<Merger> merger(const MergeTarget &target) override
    {
        return std::make_unique<SqliteMerger>(m_db, target);
    }
    std::string describe() const override { return m_db->path(); }

private:
    std::shared_ptr<SqliteDb> m_db;
};

} // namespace driftless::core
