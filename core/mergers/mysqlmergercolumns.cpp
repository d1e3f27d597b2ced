// MysqlMerger's side of schema changes under the stream (docs/schema-changes.md): filling added
// columns, the column-scoped checksum, and dropped, widened and renamed columns.

#include "core/base/asciitext.h"
#include "core/mergers/mysqlmerger.h"

#include "core/base/copytext.h"
#include "core/model/error.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace driftless::core {

namespace {

constexpr const char *kVersionColumnSql = "`_driftless_version`";
constexpr const char *kDeletedAtColumnSql = "`_driftless_deleted_at`";
/// The COMMENT that marks a column kept after the source dropped it (drop_column: keep).
constexpr const char *kKeptComment = "dropped on the source; kept by Driftless, no longer written";
/// A fill's multi-row INSERT is sent once its text passes this size.
constexpr size_t kFillStatementBytes = 4 << 20;

/// A column type as information_schema.COLUMN_TYPE or our mapping writes it, comparable: lower
/// case, an integer's display width (`int(11)`, dropped by MySQL 8) left out.
std::string comparableType(const std::string &type)
{
    static const std::regex width(R"(^(smallint|mediumint|int|bigint)\(\d+\))");
    return std::regex_replace(asciiLower(type), width, "$1");
}

} // namespace

void MysqlMerger::adopt(const TableSchema &source)
{
    m_source = source;
    m_types.clear();
    for (size_t i = 0; i < source.columns.size(); ++i) {
        const bool key = std::find(source.primaryKey.begin(), source.primaryKey.end(), static_cast<int>(i)) !=
                         source.primaryKey.end();
        m_types.push_back(mysqlColumnFor(source.columns[i], key));
    }
    buildSql();
}

void MysqlMerger::ddlInTransaction(const std::string &sql)
{
    m_conn->exec(sql);
    // The DDL committed what the caller's transaction held so far (replayed, if it crashes now,
    // under the guard: effectively once); the rest of the batch and its checkpoint go in a new one.
    if (!m_conn->isMariaDb() || m_conn->scalar("SELECT @@in_transaction") != "1")
        m_conn->exec("START TRANSACTION");
}

std::optional<std::vector<std::optional<std::string>>> MysqlMerger::columnInfo(const std::string &table,
                                                                               const std::string &column)
{
    auto r = m_conn->query("SELECT IS_NULLABLE, COLUMN_COMMENT, COLUMN_TYPE, CHARACTER_SET_NAME, COLLATION_NAME, "
                           "COLUMN_DEFAULT, EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
                           "TABLE_NAME = ? AND COLUMN_NAME = ?",
                           {table, column});
    if (r.empty())
        return std::nullopt;
    return r.rows[0];
}

long long MysqlMerger::fillColumnsInTransaction(const ColumnFill &fill, std::int64_t below)
{
    if (fill.rows.empty())
        return 0;
    // The chunk goes into a TEMPORARY table (private to this connection; creating and dropping it
    // commits nothing), then one guarded UPDATE ... JOIN sets only the filled columns, only on
    // rows older than `below` whose value differs; the row keeps its version and other values.
    std::vector<size_t> at; // the schema column of each field: keys first, then filled columns
    auto indexOf = [&](const std::string &name) {
        const int i = m_source.columnIndex(name);
        if (i < 0)
            throw SchemaError("target table " + m_target.target.name + " in " + m_conn->dsn().display() +
                                  " has no column " + name,
                              "re-snapshot the table");
        return static_cast<size_t>(i);
    };
    for (const auto &k : fill.keyColumns)
        at.push_back(indexOf(k));
    for (const auto &c : fill.columns)
        at.push_back(indexOf(c));
    const std::string f = mysqlIdent(bookkeepingName("_driftless_fill_", m_target.target.name));
    std::string ddl = "CREATE TEMPORARY TABLE " + f + " (";
    std::string names, pk, on;
    for (size_t n = 0; n < at.size(); ++n) {
        ddl += columnDdl(at[n], true) + ", ";
        names += (n ? ", " : "") + mysqlIdent(m_source.columns[at[n]].name);
    }
    for (const auto &k : fill.keyColumns) {
        pk += (pk.empty() ? "" : ", ") + mysqlIdent(k);
        on += (on.empty() ? "" : " AND ") + m_table + "." + mysqlIdent(k) + " = " + f + "." + mysqlIdent(k);
    }
    m_conn->exec("DROP TEMPORARY TABLE IF EXISTS " + f);
    m_conn->exec(ddl + "PRIMARY KEY (" + pk + ")) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");

    const std::string head = "INSERT INTO " + f + " (" + names + ") VALUES ";
    std::string sql, field;
    for (const auto &row : fill.rows) {
        sql += sql.empty() ? head : ", ";
        sql += '(';
        for (size_t n = 0; n < at.size(); ++n) {
            field.clear();
            if (n < row.size() && row[n])
                copytext::escape(*row[n], field);
            else
                field = copytext::kNull;
            appendMysqlValue(sql, field, m_types[at[n]], m_source.columns[at[n]].name, m_scratch);
            sql += n + 1 < at.size() ? ", " : ")";
        }
        if (sql.size() >= kFillStatementBytes) {
            m_conn->exec(sql);
            sql.clear();
        }
    }
    if (!sql.empty())
        m_conn->exec(sql);

    std::string set, differs;
    for (const auto &c : fill.columns) {
        const std::string q = mysqlIdent(c);
        set += (set.empty() ? "" : ", ") + m_table + "." + q + " = " + f + "." + q;
        differs +=
            (differs.empty() ? "" : " OR ") + std::string("NOT (") + m_table + "." + q + " <=> " + f + "." + q + ")";
    }
    m_conn->exec("UPDATE " + m_table + " JOIN " + f + " ON " + on + " SET " + set + " WHERE " + m_table + "." +
                 kVersionColumnSql + " < " + std::to_string(versioned(below)) + " AND (" + differs + ")");
    const long long changed = rowCount();
    m_conn->exec("DROP TEMPORARY TABLE " + f);
    return changed;
}

std::string MysqlMerger::columnChecksum(const std::vector<std::string> &keyColumns,
                                        const std::vector<std::string> &columns)
{
    // Each value as a field of Postgres's ROW()::text: NULL empty, integers as digits, booleans
    // t/f, dates ISO, text quoted when empty or holding a double quote, backslash, parenthesis,
    // comma or white space (quotes and backslashes doubled inside). Other types print
    // differently on the two servers: not compared here.
    auto fieldOf = [&](const std::string &name, bool key) -> std::string {
        const int i = m_source.columnIndex(name);
        if (i < 0)
            return {};
        const auto &type = m_types[static_cast<size_t>(i)];
        const std::string q = mysqlIdent(name);
        switch (type.storage) {
        case MysqlStorage::Integer:
            return "COALESCE(CAST(" + q + " AS CHAR), '')";
        case MysqlStorage::Boolean:
            return key ? std::string()
                       : "CASE WHEN " + q + " IS NULL THEN '' WHEN " + q + " <> 0 THEN 't' ELSE 'f' END";
        case MysqlStorage::Date:
            return key ? std::string() : "COALESCE(CAST(" + q + " AS CHAR), '')";
        case MysqlStorage::Text:
            if (key || (type.declared.rfind("VARCHAR", 0) != 0 && type.declared != "LONGTEXT"))
                return {};
            return "IF(" + q + " IS NULL, '', IF(CHAR_LENGTH(" + q + ") = 0 OR " + q +
                   " REGEXP '[\"\\\\\\\\(), \\\\t\\\\n\\\\r\\\\x0b\\\\f]', CONCAT('\"', REPLACE(REPLACE(" + q +
                   ", '\\\\', '\\\\\\\\'), '\"', '\"\"'), '\"'), " + q + "))";
        default:
            return {};
        }
    };
    std::string record, order;
    for (const auto &k : keyColumns) {
        const std::string fld = fieldOf(k, true); // integer keys only: text orders differently
        if (fld.empty())
            return {};
        record += (record.empty() ? "" : ", ',', ") + fld;
        order += (order.empty() ? "" : ", ") + mysqlIdent(k);
    }
    for (const auto &c : columns) {
        const std::string fld = fieldOf(c, false);
        if (fld.empty())
            return {};
        record += ", ',', " + fld;
    }
    // GROUP_CONCAT stops at group_concat_max_len: as large as the server allows, for this session
    // (set outside strict mode, which refuses a value past the server's maximum instead of
    // taking the maximum).
    m_conn->exec("SET @_driftless_mode = @@SESSION.sql_mode");
    m_conn->exec("SET SESSION sql_mode = ''");
    m_conn->exec("SET SESSION group_concat_max_len = 4294967295");
    m_conn->exec("SET SESSION sql_mode = @_driftless_mode");
    const std::string where = m_target.softDeletes ? std::string(" WHERE ") + kDeletedAtColumnSql + " IS NULL" : "";
    return m_conn
        ->scalar("SELECT CONCAT(COUNT(*), ':', COALESCE(MD5(GROUP_CONCAT(CONCAT('(', " + record + ", ')') ORDER BY " +
                 order + " SEPARATOR ',')), '')) FROM " + m_table + where)
        .value_or("");
}

std::string MysqlMerger::dropColumn(const TableSchema &source, const std::string &column, bool drop)
{
    const auto info = columnInfo(m_target.target.name, column);
    if (drop) {
        // Gone already: a restart after the DROP committed and before the batch did.
        if (info)
            ddlInTransaction("ALTER TABLE " + m_table + " DROP COLUMN " + mysqlIdent(column));
        adopt(source);
        return "dropped on the target";
    }
    if (!info) {
        adopt(source);
        return {};
    }
    const auto &c = *info;
    auto text = [&](size_t i) { return c[i].value_or(""); };
    if (text(0) == "YES" && text(1) == kKeptComment) {
        // Kept before (this runs at every start): neither altered nor reported again.
        adopt(source);
        return {};
    }
    // MODIFY restates the whole column: its type, character set and default as they are, made
    // nullable (rows inserted from now on get NULL or the default) and marked kept.
    std::string def = mysqlIdent(column) + " " + text(2);
    if (c[3] && c[4])
        def += " CHARACTER SET " + *c[3] + " COLLATE " + *c[4];
    def += " NULL";
    if (c[5] && asciiLower(*c[5]) != "null") {
        // MariaDB shows a default as SQL (literals quoted); MySQL 8 shows a literal's value, and
        // an expression (DEFAULT_GENERATED) as SQL without its parentheses.
        if (m_conn->isMariaDb())
            def += " DEFAULT " + *c[5];
        else if (text(6).find("DEFAULT_GENERATED") != std::string::npos)
            def += " DEFAULT (" + *c[5] + ")";
        else
            def += " DEFAULT " + mysqlLiteral(*c[5]);
    }
    def += " COMMENT " + mysqlLiteral(kKeptComment);
    ddlInTransaction("ALTER TABLE " + m_table + " MODIFY COLUMN " + def);
    adopt(source);
    return "kept on the target, no longer written";
}

bool MysqlMerger::holdsType(const ColumnInfo &c, bool key, const std::string &targetType) const
{
    return comparableType(targetType) == comparableType(mysqlColumnFor(c, key).declared);
}

std::string MysqlMerger::widenColumn(const TableSchema &source, const std::string &column)
{
    adopt(source);
    const int i = source.columnIndex(column);
    if (i < 0)
        throw Error(ErrorKind::Permanent, "column " + column + " is not in the source's schema");
    const auto idx = static_cast<size_t>(i);
    const std::string &wanted = m_types[idx].declared;
    const bool key = std::find(source.primaryKey.begin(), source.primaryKey.end(), i) != source.primaryKey.end();
    std::vector<std::string> tables{m_target.target.name};
    if (key) {
        tables.push_back(bookkeepingName("_driftless_tomb_", m_target.target.name));
        tables.push_back(bookkeepingName("_driftless_seen_", m_target.target.name));
    }
    bool altered = false;
    for (const auto &table : tables) {
        const auto info = columnInfo(table, column);
        if (!info || comparableType((*info)[2].value_or("")) == comparableType(wanted))
            continue; // the mapped type is the same (or a restart after the ALTER committed)
        ddlInTransaction("ALTER TABLE " + mysqlIdent(table) + " MODIFY COLUMN " + columnDdl(idx, false));
        altered = true;
    }
    if (!altered)
        return "at the source; the target's column is " + wanted + " already, which holds the wider values";
    return "on the target";
}

std::string MysqlMerger::renameColumn(const TableSchema &source, const std::string &from, const std::string &to)
{
    const int i = source.columnIndex(to);
    const bool key =
        i >= 0 && std::find(source.primaryKey.begin(), source.primaryKey.end(), i) != source.primaryKey.end();
    std::vector<std::string> tables{m_target.target.name};
    if (key) {
        tables.push_back(bookkeepingName("_driftless_tomb_", m_target.target.name));
        tables.push_back(bookkeepingName("_driftless_seen_", m_target.target.name));
    }
    for (const auto &table : tables) {
        // Renamed already (a restart after the ALTER committed): nothing to do.
        if (!columnInfo(table, from) || columnInfo(table, to))
            continue;
        ddlInTransaction("ALTER TABLE " + mysqlIdent(table) + " RENAME COLUMN " + mysqlIdent(from) + " TO " +
                         mysqlIdent(to));
    }
    adopt(source);
    return "renamed on the target";
}

} // namespace driftless::core
