#pragma once

#include "core/db/sqlitedb.h"
#include "core/mergers/merger.h"
#include "core/mergers/sqlitetypes.h"

namespace driftless::core {

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

    void prepare(const TableSchema &source) override;
    std::optional<Checkpoint> readCheckpoint() override;
    void clearCheckpoint() override;
    bool targetEmpty() override;
    ApplyResult apply(const Batch &batch) override;
    long long replaceAll(const std::function<void(const std::function<void(std::string_view)> &sink)> &rows,
                         const Checkpoint &checkpoint) override;
    std::string describeTarget() const override;

    std::string tombstoneTable() const;
    SqliteDb &db() { return m_db; }

private:
    void ensureTable();
    void buildStatements();
    void writeCheckpoint(const Checkpoint &cp, long long rows);
    long long insertRow(SqliteStmt &st, std::string_view line, std::int64_t version);

    SqliteDb m_db;
    MergeTarget m_target;
    TableSchema m_source;
    std::vector<SqliteStorage> m_storage;
    std::string m_table;
    SqliteStmt m_insert;  ///< plain insert (direct load, full refresh)
    SqliteStmt m_upsert;  ///< guarded upsert
    SqliteStmt m_delete;  ///< guarded delete
    SqliteStmt m_tomb;    ///< tombstone upsert
    SqliteStmt m_checkpoint;
    std::vector<std::string_view> m_fields;
    std::string m_scratch;
};

} // namespace driftless::core
