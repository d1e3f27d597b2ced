#pragma once

#include "core/db/pgconnection.h"
#include "core/mergers/merger.h"

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

    void prepare(const TableSchema &source) override;
    std::optional<Checkpoint> readCheckpoint() override;
    void clearCheckpoint() override;
    bool targetEmpty() override;
    ApplyResult apply(const Batch &batch) override;
    long long replaceAll(const std::function<void(const std::function<void(std::string_view)> &sink)> &rows,
                         const Checkpoint &checkpoint) override;
    std::string describeTarget() const override;

    PgConnection &connection() { return m_conn; }
    /// Bookkeeping names, for tests and the doctor.
    std::string stagingTable() const;
    std::string tombstoneTable() const;

    /// Creates `_driftless` and its checkpoint table if missing (safe to race with other
    /// processes doing the same).
    static void ensureBookkeeping(PgConnection &conn);

private:
    void ensureTypes();
    void ensureTable();
    void ensureStaging();
    void buildSql();
    ApplyResult merge(const Batch &batch);
    ApplyResult directLoad(const Batch &batch);
    void writeCheckpoint(const Checkpoint &cp, long long rows);
    void streamRows(const Batch &batch, bool withOp);
    std::string columnTypeSql(const ColumnInfo &c);

    PgConnection m_conn;
    MergeTarget m_target;
    TableSchema m_source;
    std::string m_targetSql;  ///< "schema"."table"
    std::string m_columnList; ///< "c1", "c2", ...
    std::string m_copyStaging;
    std::string m_copyTarget;
    std::string m_mergeSql;
    std::string m_tombSql;
    std::string m_truncateSql;
};

} // namespace driftless::core
