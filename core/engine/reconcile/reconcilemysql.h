#pragma once

#include "core/db/mysqlcatalog.h"
#include "core/db/mysqlconnection.h"
#include "core/engine/reconcile/reconcileside.h"
#include "core/engine/rows/mysqlcanon.h"

#include <chrono>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace driftless::core::recon {

/// A MySQL/MariaDB table as one side of a comparison, every value's canonical text and every
/// row's 60-bit hash computed in SQL on the server (rowhash.h), so an equal table costs one
/// aggregate query and no rows.
///
/// The columns are described twice: `schema` in Postgres terms (what the other side compares
/// against: the source's own description for a MySQL target, pgColumnFor for a MySQL source) and
/// `physical` as the server stores them (parallel to schema.columns). Canonical text follows one
/// of two forms: `postgresText` is what Postgres prints for the value (timestamps and MySQL TIME
/// without trailing fractional zeros, char(n) padded), for comparisons with Postgres; otherwise
/// it is the text the MySQL readers deliver (mysqlcatalog::appendValue), which SQLite and
/// MySQL/MariaDB targets of a MySQL source store as it came. Numerics are trimmed, floats are
/// their IEEE bytes and bytes are hex in both forms.
///
/// Thread affinity: one thread at a time (it owns its connection). Failure: the connection's
/// Error, or Error naming a target column that is missing.
class MysqlSide final : public Side {
public:
    /// Rows whose time column is recent are in flight: a cursor table's cursor within `window` of
    /// the source's clock; a full refresh table's column at or after `sinceUtc` (its last pass's
    /// snapshot, UTC text), when set.
    struct Recent {
        size_t column = 0;
        std::chrono::milliseconds window{0};
        std::optional<std::string> sinceUtc;
    };

    MysqlSide(MysqlConnection conn, TableRef table, const TableSchema &schema,
              std::vector<mysqlcatalog::MysqlColumn> physical, bool postgresText, std::optional<Recent> recent = {});

    /// Reads only the rows a row filter (`where:`) holds for.
    void setRowFilter(const std::string &filter);

    std::map<int, rowhash::Checksum> checksums(const Plan &plan) override;
    std::vector<std::pair<int, RawKey>> sample(const Plan &plan, long long step) override;
    void hashes(const Plan &plan, const std::function<void(CanonicalKey &&, std::int64_t)> &row) override;
    void rangeHashes(const std::optional<RawKey> &lo, const std::optional<RawKey> &hi,
                     const std::function<void(CanonicalKey &&, std::int64_t)> &row, bool loExclusive) override;
    std::unordered_map<std::string, RowData> rows(const std::vector<CanonicalKey> &keys) override;
    std::vector<RowData> rowsByHash(const std::vector<std::int64_t> &hashes) override;
    std::string describe() const override;
    bool keysOrderable() const override;

    MysqlConnection &connection() { return m_conn; }
    /// The SQL of column `column`'s canonical text (over the table's own column names), and of a
    /// row's 60-bit hash: what a reader of the table can select beside the row.
    const std::string &canonicalSql(size_t column) const { return m_cols[column].value; }
    const std::string &hashSql() const { return m_hash; }
    /// Marks rows RowData::recent from now on (rows() reads it).
    void setRecent(Recent recent) { m_recent = std::move(recent); }

    /// Repair: the rows with these keys as the COPY lines the MySQL readers produce (what the
    /// sync itself would apply), by record text of the canonical key. `table` is the source's
    /// description (the same columns as this side).
    std::unordered_map<std::string, std::string> copyLines(const std::vector<CanonicalKey> &keys,
                                                           const mysqlcatalog::MysqlTable &table);

    /// Matches a target table's columns to the source's (by name): the physical columns, parallel
    /// to schema.columns. Throws Error naming a column the target lacks.
    static std::vector<mysqlcatalog::MysqlColumn> targetColumns(MysqlConnection &conn, const TableRef &table,
                                                                const TableSchema &schema);

private:
    struct Col {
        std::string value; ///< canonical text, NULL for NULL
        std::string field; ///< the value as a field of the record text (never NULL)
    };

    std::string keyExpr(size_t k, const std::string &text) const;
    std::string treeSql(const Plan &plan) const;
    std::string whereKeys(const std::vector<CanonicalKey> &keys, size_t from, size_t to) const;
    std::string recentExpr();

    MysqlConnection m_conn;
    TableRef m_table;
    std::string m_from;
    std::vector<ColumnInfo> m_logical;
    std::vector<mysqlcatalog::MysqlColumn> m_physical;
    std::vector<size_t> m_keys; ///< indexes of the key columns
    bool m_pgText;
    std::optional<Recent> m_recent;
    std::vector<Col> m_cols;
    std::string m_hash;
};

} // namespace driftless::core::recon
