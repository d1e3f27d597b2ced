#include "core/engine/schema/columnbackfillmysql.h"

#include "core/base/copytext.h"
#include "core/db/mysqlconnection.h"
#include "core/engine/rows/mysqlcanon.h"
#include "core/engine/rows/rowhash.h"
#include "core/model/error.h"

namespace driftless::core {

MysqlColumnFillSource::MysqlColumnFillSource(MysqlConnection &src, const mysqlcatalog::MysqlTable &table,
                                             const TableSpec &spec, bool postgresText)
    : m_src(src), m_table(table), m_spec(spec), m_pgText(postgresText)
{
}

namespace {

size_t columnAt(const mysqlcatalog::MysqlTable &t, const std::string &name)
{
    const int i = t.schema.columnIndex(name);
    if (i < 0)
        throw Error(ErrorKind::Permanent, "column " + name + " of " + t.schema.table.display() +
                                              " is not on the source any more; the backfill cannot read it");
    return static_cast<size_t>(i);
}

} // namespace

ColumnFill MysqlColumnFillSource::readChunk(const std::vector<std::string> &columns,
                                            const std::vector<std::string> &after, long long limit)
{
    ColumnFill out;
    out.keyColumns = keyColumnNames(m_table.schema);
    out.columns = columns;
    std::vector<size_t> read; // keys first, then the filled columns
    for (int k : m_table.schema.primaryKey)
        read.push_back(static_cast<size_t>(k));
    for (const auto &c : columns)
        read.push_back(columnAt(m_table, c));
    std::string select, order;
    for (size_t i = 0; i < read.size(); ++i)
        select += (i ? ", " : "") + mysqlcatalog::selectExpr(m_table.columns[read[i]]);
    for (int k : m_table.schema.primaryKey)
        order += (order.empty() ? "" : ", ") + mysqlIdent(m_table.columns[static_cast<size_t>(k)].name);
    std::string where;
    mysqlcatalog::bindKeyset(m_src, after);
    if (!after.empty()) {
        where = "(" + mysqlcatalog::keysetAfter(m_table, m_table.schema.primaryKey, 1) + ")";
    }
    if (m_spec.where)
        where += (where.empty() ? "(" : " AND (") + *m_spec.where + ")";
    const std::string sql = "SELECT " + select + " FROM " + mysqlIdent(m_table.schema.table.schema) + "." +
                            mysqlIdent(m_table.schema.table.name) + (where.empty() ? "" : " WHERE " + where) +
                            " ORDER BY " + order + " LIMIT " + std::to_string(limit);
    const size_t keys = m_table.schema.primaryKey.size();
    std::string field, value;
    m_src.stream(sql, [&](const MysqlRowView &row) {
        std::vector<std::optional<std::string>> values;
        values.reserve(read.size());
        for (size_t i = 0; i < read.size(); ++i) {
            const auto idx = static_cast<unsigned>(i);
            if (i < keys) {
                // The key as paramExpr() reads it back: where the next chunk starts.
                values.emplace_back(mysqlcatalog::paramText(m_table.columns[read[i]], row, idx));
                continue;
            }
            // The value as the stream delivers it (COPY text), unescaped: Postgres text.
            field.clear();
            mysqlcatalog::appendValue(m_table, read[i], row, idx, field);
            if (copytext::isNull(field)) {
                values.emplace_back(std::nullopt);
            } else {
                value.clear();
                copytext::unescape(field, value);
                values.emplace_back(value);
            }
        }
        out.rows.push_back(std::move(values));
    });
    return out;
}

std::string MysqlColumnFillSource::checksum(const std::vector<std::string> &columns)
{
    std::vector<size_t> cols;
    for (int k : m_table.schema.primaryKey) {
        const auto &c = m_table.schema.columns[static_cast<size_t>(k)];
        if (rowhash::canonFor(c) != rowhash::Canon::Integer)
            return {};
        cols.push_back(static_cast<size_t>(k));
    }
    for (const auto &name : columns) {
        const size_t i = columnAt(m_table, name);
        const auto &l = m_table.schema.columns[i];
        const auto &m = m_table.columns[i];
        const auto canon = rowhash::canonFor(l);
        const bool plainText = canon == rowhash::Canon::Text && !l.isArray &&
                               (m.dataType == "varchar" || m.dataType == "text" || m.dataType == "date" ||
                                m.dataType == "mediumtext" || m.dataType == "longtext" || m.dataType == "tinytext");
        // These print the same in both canonical forms, so a MariaDB/MySQL target (which computes
        // them as Postgres prints them) compares too.
        if (!(canon == rowhash::Canon::Integer || canon == rowhash::Canon::Boolean || plainText))
            return {};
        cols.push_back(i);
    }
    std::string record, order;
    for (size_t n = 0; n < cols.size(); ++n)
        record += (n ? ", ',', " : "") +
                  recon::mysqlCanonical(m_table.schema.columns[cols[n]], m_table.columns[cols[n]], m_pgText).field;
    for (int k : m_table.schema.primaryKey)
        order += (order.empty() ? "" : ", ") + mysqlIdent(m_table.columns[static_cast<size_t>(k)].name);
    // GROUP_CONCAT stops at group_concat_max_len: as large as the server allows, for this session.
    m_src.exec("SET SESSION group_concat_max_len = 4294967295");
    const std::string sql = "SELECT CONCAT(COUNT(*), ':', COALESCE(MD5(GROUP_CONCAT(CONCAT('(', " + record +
                            ", ')') ORDER BY " + order + " SEPARATOR ',')), '')) FROM " +
                            mysqlIdent(m_table.schema.table.schema) + "." + mysqlIdent(m_table.schema.table.name) +
                            (m_spec.where ? " WHERE (" + *m_spec.where + ")" : std::string());
    std::string out;
    m_src.stream(sql, [&](const MysqlRowView &row) { out = row.text(0); });
    return out;
}

} // namespace driftless::core
