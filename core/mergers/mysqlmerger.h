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

    // Column changes (docs/schema-changes.md), in mysqlmergercolumns.cpp. MySQL commits the open
    // transaction before a DDL statement: the DDL ones start a new transaction after it, so the
    // rest of the caller's batch and its checkpoint still commit together, and each checks the
    // target first, so a restart after a crash between the DDL and that commit does not alter
    // again.
    long long fillColumnsInTransaction(const ColumnFill &fill, std::int64_t below) override;
    bool fillsColumns() const override { return true; }
    /// Computed in SQL as Postgres prints ROW(key, columns)::text, for integer keys and integer,
    /// boolean, date and VARCHAR/LONGTEXT columns; empty for other types.
    std::string columnChecksum(const std::vector<std::string> &keyColumns,
                               const std::vector<std::string> &columns) override;
    bool changesColumns() const override { return true; }
    bool holdsType(const ColumnInfo &c, bool key, const std::string &targetType) const override;
    /// Keep: the column made nullable and marked kept by its COMMENT; drop: ALTER TABLE DROP COLUMN.
    std::string dropColumn(const TableSchema &source, const std::string &column, bool drop) override;
    /// ALTER TABLE MODIFY COLUMN to the mapped wider type (docs/type-mapping.md), the key's
    /// bookkeeping tables too; nothing when the mapped type is the same (VARCHAR(n) -> TEXT both
    /// LONGTEXT, for example).
    std::string widenColumn(const TableSchema &source, const std::string &column) override;
    /// ALTER TABLE RENAME COLUMN (MariaDB 10.5+, MySQL 8), the key's bookkeeping tables too.
    std::string renameColumn(const TableSchema &source, const std::string &from, const std::string &to) override;

    /// Bookkeeping names (quoted), for tests and the doctor.
    std::string tombstoneTable() const;
    std::string stagingTable() const;
    std::string seenTable() const;
    MysqlConnection &connection() { return *m_conn; }

    /// Sets the session up for writing: strict sql_mode, UTC. Done once per connection.
    static void configureSession(MysqlConnection &conn);

private:
    /// A bookkeeping table name within MySQL's 64-character limit: long names keep a readable
    /// prefix and a hash of the whole name.
    static std::string bookkeepingName(const std::string &prefix, const std::string &table);
    /// Takes `source` as the table's schema: types, column list and staging follow it.
    void adopt(const TableSchema &source);
    /// Runs a DDL statement inside the caller's transaction (see above).
    void ddlInTransaction(const std::string &sql);
    /// The target column's definition from information_schema, or nullopt when it has none.
    std::optional<std::vector<std::optional<std::string>>> columnInfo(const std::string &table,
                                                                      const std::string &column);
    void ensureTable();
    /// The table exists without the version column and MergeTarget::adopt is set: checks it
    /// (checkAdoptable) and adds the column.
    void adoptTable();
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
    /// LOAD DATA LOCAL INFILE of a file of load lines into `table`; false when the server or
    /// the client refuses LOCAL INFILE (nothing loaded), an Error when a row does not fit.
    bool runLoadData(const std::string &path, const std::string &table, bool staging);
    /// A full refresh's rows into `shadow` by LOAD DATA, each 50,000 rows' file written while
    /// the one before loads. Returns the rows loaded.
    long long loadPipelined(const std::function<void(const std::function<void(std::string_view)> &)> &rows,
                            const std::string &shadow);
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
    bool m_adopted = false;   ///< prepare() adopted the table (adoptedNow)
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
