#pragma once

#include "core/db/mysqlconnection.h"
#include "core/mergers/merger.h"
#include "core/mergers/mysqltypes.h"

#include <memory>

namespace driftless::core {

/// Merger into a MySQL 8 / MariaDB 10.11 table (InnoDB, utf8mb4).
///
/// Bookkeeping lives in the target database itself, prefixed `_driftless_` (no global CREATE
/// needed): `_driftless_checkpoints`, `_driftless_tomb_<table>`, `_driftless_seen_<table>`. A
/// batch is loaded into a per-connection TEMPORARY staging table with multi-row INSERTs, then
/// applied with guarded statements (UPDATE ... JOIN, INSERT ... SELECT, DELETE ... JOIN) and the
/// checkpoint in one transaction. The session runs in strict sql_mode, so the server refuses a
/// value it would otherwise truncate.
///
/// MySQL commits implicitly around DDL: prepare() and addMissingColumns() (CREATE/ALTER TABLE)
/// commit whatever transaction is open, and the full-refresh swap (RENAME TABLE) commits before
/// its checkpoint is written, so a crash between the two re-runs the (idempotent) refresh.
///
/// Thread affinity: one thread (it owns, or shares within one thread, a target connection).
/// Failure: Error from the server (strict mode: a value that does not fit) or from the type
/// conversion; the transaction is rolled back and the checkpoint is unchanged.
class MysqlMerger final : public Merger {
public:
    MysqlMerger(MysqlConnection conn, MergeTarget target);
    /// Shares a connection with the other mergers of one CDC pipeline (one thread).
    MysqlMerger(std::shared_ptr<MysqlConnection> conn, MergeTarget target);

    void prepare(const TableSchema &source) override;
    std::optional<Checkpoint> readCheckpoint() override;
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
    ApplyResult mergeSnapshotChunkInTransaction(const RowSet &rows) override;
    long long deleteUnseenInTransaction(std::int64_t version) override;
    void clearSeenInTransaction() override;
    long long seenCount() override;
    long long deleteOlderInTransaction(std::int64_t version) override;
    std::vector<std::pair<std::string, std::string>> targetColumns() override;
    std::vector<size_t> partialRowsWithoutTarget(const RowSet &rows) override;
    std::vector<std::int64_t> guardVersions(const RowSet &rows) override;
    std::string pendingRequest() override;
    void setRequest(const std::string &request) override;

    /// Bookkeeping names (quoted), for tests and the doctor.
    std::string tombstoneTable() const;
    std::string stagingTable() const;
    std::string seenTable() const;
    MysqlConnection &connection() { return *m_conn; }

    /// Sets the session up for writing: strict sql_mode, UTC. Done once per connection.
    static void configureSession(MysqlConnection &conn);

private:
    void ensureTable();
    void ensureStaging();
    void buildSql();
    long long rowCount();
    /// Appends `(v1, v2, ..., version[, op, mask])` for one COPY-text row.
    void appendRowValues(std::string &sql, std::string_view line, std::int64_t version, bool staging, char op,
                         std::string_view mask);
    /// Loads `rows` into the target (`staging` false) or the staging table: LOAD DATA LOCAL
    /// INFILE for big sets where the server allows it, else multi-row INSERTs.
    long long insertRows(const RowSet &rows, bool staging);
    long long insertRows(const RowSet &rows, const std::string &table, bool staging);
    /// One LOAD DATA LOCAL INFILE of `rows`; false when LOCAL INFILE is refused (then never tried
    /// again on this merger). Throws on any warning: LOCAL turns errors into warnings.
    bool loadDataLocal(const RowSet &rows, const std::string &table, bool staging);
    void appendLoadLine(std::string &out, std::string_view line, std::int64_t version, bool staging, char op,
                        std::string_view mask);
    /// Stages `rows` and applies them under the guard; `onlyDiffering` keeps equal rows as they are.
    ApplyResult stageAndMerge(const RowSet &rows, bool onlyDiffering, bool rememberSeen);
    std::string keyJoin(const std::string &a, const std::string &b) const;
    std::string columnDdl(size_t i, bool forStaging) const;

    std::shared_ptr<MysqlConnection> m_conn;
    MergeTarget m_target;
    TableSchema m_source;
    std::vector<MysqlColumnType> m_types;
    std::string m_table;      ///< quoted target table name
    std::string m_columnList; ///< `c1`, `c2`, ...
    std::string m_textCollation;
    bool m_stagingReady = false;
    bool m_loadData = true;
    std::vector<std::string_view> m_fields;
    std::string m_scratch;
};

/// A MySQL/MariaDB target connection shared by the mergers of one CDC pipeline.
class MysqlTargetSession final : public TargetSession {
public:
    explicit MysqlTargetSession(MysqlConnection conn);
    void begin() override { m_conn->exec("START TRANSACTION"); }
    void commit() override { m_conn->exec("COMMIT"); }
    void rollback() noexcept override;
    std::unique_ptr<Merger> merger(const MergeTarget &target) override
    {
        return std::make_unique<MysqlMerger>(m_conn, target);
    }
    std::string describe() const override { return m_conn->dsn().display(); }
    MysqlConnection &connection() { return *m_conn; }

private:
    std::shared_ptr<MysqlConnection> m_conn;
};

} // namespace driftless::core
