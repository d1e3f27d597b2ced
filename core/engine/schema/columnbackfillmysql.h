#pragma once

#include "core/db/mysqlcatalog.h"
#include "core/engine/schema/columnbackfill.h"

namespace driftless::core {

class MysqlConnection;

/// A MariaDB/MySQL source of an add-column backfill (docs/schema-changes.md): reads (key,
/// columns) in key chunks, values as the binlog reader delivers them, and computes the
/// column-scoped comparison with the reconciler's canonical text (recon::mysqlCanonical).
///
/// Thread affinity: the connection's. Failure: Error from the source.
class MysqlColumnFillSource final : public ColumnFillSource {
public:
    /// `postgresText`: the target is Postgres (its checksum prints values as Postgres does).
    MysqlColumnFillSource(MysqlConnection &src, const mysqlcatalog::MysqlTable &table, const TableSpec &spec,
                          bool postgresText);
    ColumnFill readChunk(const std::vector<std::string> &columns, const std::vector<std::string> &after,
                         long long limit) override;
    /// Empty unless every key is an integer and every filled column's canonical text is what
    /// Postgres prints for it (integers, booleans, text, dates): the target's sum (Postgres, or
    /// MariaDB/MySQL computing the same text) is ROW()::text in key order, which other types
    /// (trimmed numerics, float bytes) or text keys (collation order) would not match.
    std::string checksum(const std::vector<std::string> &columns) override;

private:
    MysqlConnection &m_src;
    const mysqlcatalog::MysqlTable &m_table;
    const TableSpec &m_spec;
    bool m_pgText;
};

} // namespace driftless::core
