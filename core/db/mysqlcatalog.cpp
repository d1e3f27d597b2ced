#include "core/db/mysqlcatalog.h"

#include "core/base/copytext.h"
#include "core/model/error.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <set>

namespace driftless::core::mysqlcatalog {

namespace {

int toInt(const std::optional<std::string> &s)
{
    if (!s)
        return 0;
    return std::atoi(s->c_str());
}

bool isOneOf(const std::string &s, std::initializer_list<const char *> list)
{
    for (const char *x : list)
        if (s == x)
            return true;
    return false;
}

ValueForm formFor(const MysqlColumn &c)
{
    const std::string &t = c.dataType;
    if (t == "float")
        return ValueForm::Float;
    if (t == "double" || t == "real")
        return ValueForm::Double;
    if (t == "bit")
        return ValueForm::Bit;
    if (t == "date")
        return ValueForm::Date;
    if (t == "datetime")
        return ValueForm::Datetime;
    if (t == "timestamp")
        return ValueForm::Timestamp;
    if (isOneOf(t, {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry", "point",
                    "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection"}))
        return ValueForm::Bytes;
    return ValueForm::Text;
}

ColumnInfo col(std::string typeSql, std::string base, char category)
{
    ColumnInfo c;
    c.typeSql = std::move(typeSql);
    c.baseType = std::move(base);
    c.category = category;
    c.typeSchema = "pg_catalog";
    return c;
}

} // namespace

bool isTemporal(const MysqlColumn &c)
{
    return isOneOf(c.dataType, {"date", "datetime", "timestamp"});
}

bool isNumeric(const MysqlColumn &c)
{
    return isOneOf(c.dataType, {"tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal", "numeric"});
}

ColumnInfo pgColumnFor(const MysqlColumn &c)
{
    const std::string &t = c.dataType;
    const std::string fsp = "(" + std::to_string(c.fsp) + ")";
    ColumnInfo out;
    if (t == "tinyint")
        out = col("smallint", "int2", 'N');
    else if (t == "smallint")
        out = c.isUnsigned ? col("integer", "int4", 'N') : col("smallint", "int2", 'N');
    else if (t == "mediumint")
        out = col("integer", "int4", 'N');
    else if (t == "int" || t == "integer")
        out = c.isUnsigned ? col("bigint", "int8", 'N') : col("integer", "int4", 'N');
    else if (t == "bigint")
        out = c.isUnsigned ? col("numeric(20,0)", "numeric", 'N') : col("bigint", "int8", 'N');
    else if (t == "decimal" || t == "numeric")
        out = col("numeric(" + std::to_string(c.precision) + "," + std::to_string(c.scale) + ")", "numeric", 'N');
    else if (t == "float")
        out = col("real", "float4", 'N');
    else if (t == "double" || t == "real")
        out = col("double precision", "float8", 'N');
    else if (t == "bit")
        out = col("bit(" + std::to_string(c.precision) + ")", "bit", 'V');
    else if (t == "date")
        out = col("date", "date", 'D');
    else if (t == "datetime")
        out = col("timestamp" + fsp + " without time zone", "timestamp", 'D');
    else if (t == "timestamp")
        out = col("timestamp" + fsp + " with time zone", "timestamptz", 'D');
    else if (t == "time")
        out = col(c.fsp ? "interval" + fsp : std::string("interval"), "interval", 'T');
    else if (t == "year")
        out = col("smallint", "int2", 'N');
    else if (t == "char")
        out = col("character(" + std::to_string(std::max(1LL, c.maxChars)) + ")", "bpchar", 'S');
    else if (t == "varchar")
        out = col("character varying(" + std::to_string(c.maxChars) + ")", "varchar", 'S');
    else if (c.isJson || t == "json")
        out = col("json", "json", 'U');
    else if (isOneOf(t, {"tinytext", "text", "mediumtext", "longtext", "enum", "set"}))
        out = col("text", "text", 'S');
    else if (formFor(c) == ValueForm::Bytes)
        out = col("bytea", "bytea", 'U');
    else
        throw SchemaError("column " + c.name + " has type " + c.columnType + ", which Driftless cannot carry yet",
                          "leave the column out with a view on the source, or change its type");
    out.name = c.name;
    out.generated = c.generated;
    return out;
}

MysqlTable describeTable(MysqlConnection &conn, const TableRef &table,
                         const std::optional<std::vector<std::string>> &key)
{
    MysqlTable t = describeTable(conn, table);
    if (key)
        t.schema.declareKey(*key);
    return t;
}

std::optional<std::string> declaredKeyProblem(MysqlConnection &conn, const MysqlTable &t)
{
    std::string cols, nulls;
    for (int k : t.schema.primaryKey) {
        const std::string q = mysqlIdent(t.schema.columns[static_cast<size_t>(k)].name);
        cols += (cols.empty() ? "" : ", ") + q;
        nulls += (nulls.empty() ? "" : " OR ") + q + " IS NULL";
    }
    const std::string from = mysqlIdent(t.schema.table.schema) + "." + mysqlIdent(t.schema.table.name);
    auto r = conn.query("SELECT (SELECT COUNT(*) FROM " + from + " WHERE " + nulls +
                        "), (SELECT COUNT(*) FROM (SELECT 1 FROM " + from + " GROUP BY " + cols +
                        " HAVING COUNT(*) > 1) d)");
    return keyProblemText(t.schema, std::atoll(r.rows.at(0)[0].value_or("0").c_str()),
                          std::atoll(r.rows.at(0)[1].value_or("0").c_str()));
}

MysqlTable describeTable(MysqlConnection &conn, const TableRef &table)
{
    MysqlTable out;
    out.schema.table = table;
    auto cols = conn.query("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, NUMERIC_PRECISION, NUMERIC_SCALE, "
                           "DATETIME_PRECISION, CHARACTER_MAXIMUM_LENGTH, CHARACTER_SET_NAME, EXTRA, COLLATION_NAME "
                           "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? "
                           "ORDER BY ORDINAL_POSITION",
                           {table.schema, table.name});
    if (cols.empty()) {
        auto db =
            conn.scalar("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", {table.schema});
        if (!db)
            throw SchemaError("database " + table.schema + " does not exist on " + conn.dsn().display(),
                              "write the table as database.table (MySQL's database is the schema part)");
        throw SchemaError("table " + table.display() + " does not exist on " + conn.dsn().display() +
                              " (or the endpoint's user cannot see it)",
                          "check the name, or GRANT SELECT ON " + mysqlIdent(table.schema) + "." +
                              mysqlIdent(table.name) + " to the user");
    }
    // MariaDB's JSON is longtext with a CHECK (json_valid(`col`)) constraint of the column's name.
    std::vector<std::string> jsonChecks;
    try {
        auto checks = conn.query("SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS "
                                 "WHERE CONSTRAINT_SCHEMA = ? AND TABLE_NAME = ?",
                                 {table.schema, table.name});
        for (const auto &r : checks.rows)
            if (r[0])
                jsonChecks.push_back(*r[0]);
    } catch (const Error &) {
        // Servers without CHECK_CONSTRAINTS (MySQL 5.7): no JSON alias to detect.
    }
    for (const auto &r : cols.rows) {
        MysqlColumn c;
        c.name = r[0].value_or("");
        c.dataType = r[1].value_or("");
        for (auto &ch : c.dataType)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        c.columnType = r[2].value_or("");
        c.isUnsigned = c.columnType.find("unsigned") != std::string::npos;
        c.precision = toInt(r[4]);
        c.scale = toInt(r[5]);
        c.fsp = toInt(r[6]);
        c.maxChars = r[7] ? std::atoll(r[7]->c_str()) : 0;
        c.charset = r[8].value_or("");
        const std::string extra = r[9].value_or("");
        c.collation = r[10].value_or("");
        c.generated = extra.find("GENERATED") != std::string::npos;
        if (c.dataType == "bit") {
            // NUMERIC_PRECISION holds the width.
            auto open = c.columnType.find('(');
            c.precision = open == std::string::npos ? 1 : std::atoi(c.columnType.c_str() + open + 1);
        }
        if (c.dataType == "longtext" || c.dataType == "json") {
            const std::string needle = "json_valid(`" + c.name + "`)";
            for (const auto &chk : jsonChecks)
                if (chk.find(needle) != std::string::npos)
                    c.isJson = true;
            c.isJson = c.isJson || c.dataType == "json";
        }
        c.form = formFor(c);
        ColumnInfo info = pgColumnFor(c);
        info.notNull = r[3].value_or("YES") == "NO";
        out.schema.columns.push_back(std::move(info));
        out.columns.push_back(std::move(c));
    }
    auto pk = conn.query("SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND "
                         "TABLE_NAME = ? AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX",
                         {table.schema, table.name});
    for (const auto &r : pk.rows)
        out.schema.primaryKey.push_back(out.schema.columnIndex(r[0].value_or("")));
    if (out.schema.primaryKey.empty()) {
        // No primary key: its unique index on NOT NULL columns (whole columns, not prefixes), the
        // one with the fewest columns, then the first by name, as InnoDB itself picks its key.
        auto uk = conn.query(
            "SELECT s.INDEX_NAME, s.COLUMN_NAME FROM information_schema.STATISTICS s JOIN (SELECT INDEX_NAME, "
            "COUNT(*) AS n FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND "
            "NON_UNIQUE = 0 GROUP BY INDEX_NAME HAVING SUM(NULLABLE = 'YES' OR SUB_PART IS NOT NULL OR COLUMN_NAME IS "
            "NULL) = 0 ORDER BY n, INDEX_NAME LIMIT 1) best ON best.INDEX_NAME = s.INDEX_NAME WHERE s.TABLE_SCHEMA = ? "
            "AND s.TABLE_NAME = ? ORDER BY s.SEQ_IN_INDEX",
            {table.schema, table.name, table.schema, table.name});
        for (const auto &r : uk.rows) {
            out.schema.keyIndex = r[0].value_or("");
            out.schema.primaryKey.push_back(out.schema.columnIndex(r[1].value_or("")));
        }
    }
    auto est = conn.scalar("SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                           {table.schema, table.name});
    out.schema.estimatedRows = est ? std::atoll(est->c_str()) : -1;
    return out;
}

std::string selectExpr(const MysqlColumn &c)
{
    const std::string q = mysqlIdent(c.name);
    switch (c.form) {
    case ValueForm::Float:
        // The text protocol prints FLOAT with 6 digits; the double holds the float exactly.
        return "CAST(" + q + " AS DOUBLE)";
    case ValueForm::Bit:
        return "LPAD(BIN(" + q + "), " + std::to_string(c.precision) + ", '0')";
    default:
        break;
    }
    if (c.dataType == "year")
        return q + " + 0";
    return q;
}

std::string paramExpr(const MysqlColumn &c, const std::string &var)
{
    const std::string &t = c.dataType;
    if (isOneOf(t, {"tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year"}))
        return "CAST(" + var + (c.isUnsigned ? " AS UNSIGNED)" : " AS SIGNED)");
    if (t == "decimal" || t == "numeric")
        return "CAST(" + var + " AS DECIMAL(" + std::to_string(c.precision) + "," + std::to_string(c.scale) + "))";
    if (t == "float" || t == "double" || t == "real")
        return "CAST(" + var + " AS DOUBLE)";
    if (t == "date")
        return "CAST(" + var + " AS DATE)";
    if (t == "datetime" || t == "timestamp")
        return "CAST(" + var + " AS DATETIME(6))";
    if (t == "time")
        return "CAST(" + var + " AS TIME(6))";
    if (t == "bit")
        return "CAST(CONV(" + var + ", 2, 10) AS UNSIGNED)";
    if (c.form == ValueForm::Bytes)
        return "UNHEX(" + var + ")";
    if (!c.charset.empty() && !c.collation.empty())
        return "CONVERT(" + var + " USING " + c.charset + ") COLLATE " + c.collation;
    return var;
}

std::string paramText(const MysqlColumn &c, const MysqlRowView &row, unsigned index)
{
    std::string v = row.text(index);
    if (c.form != ValueForm::Bytes)
        return v;
    std::string out;
    copytext::appendHex(v, out);
    return out;
}

namespace {

std::string keyText(const MysqlTable &t, const MysqlRowView &row)
{
    std::string k;
    for (int idx : t.schema.primaryKey) {
        if (!k.empty())
            k += ", ";
        const auto &c = t.columns[static_cast<size_t>(idx)];
        k += c.name + "=" + (row.isNull(static_cast<unsigned>(idx)) ? "NULL" : row.text(static_cast<unsigned>(idx)));
    }
    return k.empty() ? "(no primary key)" : k;
}

bool zeroDate(std::string_view v)
{
    // YYYY-MM-DD...: a zero year, month or day is not a date Postgres (or SQLite's functions) know.
    return v.size() >= 10 && (v.substr(0, 4) == "0000" || v.substr(5, 2) == "00" || v.substr(8, 2) == "00");
}

[[noreturn]] void refuse(const MysqlTable &t, const MysqlColumn &c, const MysqlRowView &row, const std::string &v)
{
    throw SchemaError("table " + t.schema.table.display() + ", column " + c.name + ", row " + keyText(t, row) +
                          ": the value '" + v + "' is not a real date, and the target cannot hold it",
                      "fix the row on the source (e.g. set it to NULL), or leave the column out with a view");
}

} // namespace

void appendValue(const MysqlTable &t, size_t column, const MysqlRowView &row, unsigned index, std::string &line)
{
    if (row.isNull(index)) {
        line += copytext::kNull;
        return;
    }
    const MysqlColumn &c = t.columns[column];
    std::string v = row.text(index);
    switch (c.form) {
    case ValueForm::Text:
    case ValueForm::Bit:
        copytext::escape(v, line);
        return;
    case ValueForm::Float:
    case ValueForm::Double: {
        char *end = nullptr;
        double d = std::strtod(v.c_str(), &end);
        char buf[64];
        std::to_chars_result r = c.form == ValueForm::Float
                                     ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(d))
                                     : std::to_chars(buf, buf + sizeof buf, d);
        line.append(buf, r.ptr);
        return;
    }
    case ValueForm::Bytes:
        copytext::appendBytea(v, line);
        return;
    case ValueForm::Date:
    case ValueForm::Datetime:
        if (zeroDate(v))
            refuse(t, c, row, v);
        line += v;
        return;
    case ValueForm::Timestamp:
        if (zeroDate(v))
            refuse(t, c, row, v);
        line += v;
        line += "+00";
        return;
    }
}

bool ForeignKey::acts() const
{
    auto acting = [](const std::string &rule) {
        return rule == "CASCADE" || rule == "SET NULL" || rule == "SET DEFAULT";
    };
    return acting(onDelete) || acting(onUpdate);
}

std::vector<ForeignKey> foreignKeys(MysqlConnection &conn, const std::vector<TableRef> &tables)
{
    std::set<std::string> schemas;
    for (const auto &t : tables)
        schemas.insert(t.schema);
    if (schemas.empty())
        return {};
    std::string in;
    std::vector<std::optional<std::string>> params;
    for (int side = 0; side < 2; ++side)
        for (const auto &schema : schemas) {
            params.emplace_back(schema);
            if (side == 0)
                in += in.empty() ? "?" : ", ?";
        }
    const std::set<TableRef> wanted(tables.begin(), tables.end());
    auto r =
        conn.query("SELECT rc.CONSTRAINT_NAME, rc.CONSTRAINT_SCHEMA, rc.TABLE_NAME, k.REFERENCED_TABLE_SCHEMA, "
                   "rc.REFERENCED_TABLE_NAME, rc.DELETE_RULE, rc.UPDATE_RULE, k.COLUMN_NAME, k.REFERENCED_COLUMN_NAME "
                   "FROM information_schema.REFERENTIAL_CONSTRAINTS rc JOIN information_schema.KEY_COLUMN_USAGE k "
                   "ON k.CONSTRAINT_SCHEMA = rc.CONSTRAINT_SCHEMA AND k.CONSTRAINT_NAME = rc.CONSTRAINT_NAME AND "
                   "k.TABLE_NAME = rc.TABLE_NAME WHERE (rc.CONSTRAINT_SCHEMA IN (" +
                       in + ") OR k.REFERENCED_TABLE_SCHEMA IN (" + in +
                       ")) AND k.REFERENCED_TABLE_NAME IS NOT NULL "
                       "ORDER BY rc.CONSTRAINT_SCHEMA, rc.TABLE_NAME, rc.CONSTRAINT_NAME, k.ORDINAL_POSITION",
                   params);
    std::vector<ForeignKey> out;
    for (const auto &row : r.rows) {
        auto text = [&](size_t i) { return row.at(i).value_or(""); };
        const TableRef child{text(1), text(2)}, parent{text(3), text(4)};
        if (!wanted.count(child) && !wanted.count(parent))
            continue;
        if (out.empty() || out.back().name != text(0) || out.back().child != child)
            out.push_back({text(0), child, parent, {}, {}, text(5), text(6)});
        out.back().childColumns.push_back(text(7));
        out.back().parentColumns.push_back(text(8));
    }
    return out;
}

std::int64_t currentVersion(MysqlConnection &conn)
{
    try {
        auto r = conn.query("SHOW MASTER STATUS");
        if (!r.empty() && r.at(0, 0) && r.at(0, 1))
            return binlog::positionVersion({*r.at(0, 0), std::strtoull(r.at(0, 1)->c_str(), nullptr, 10)});
    } catch (const Error &) {
        // No BINLOG MONITOR / REPLICATION CLIENT privilege: fall back to the clock.
    }
    auto us = conn.scalar("SELECT CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)");
    return us ? std::atoll(us->c_str()) : 0;
}

std::optional<binlog::Position> snapshotPosition(MysqlConnection &conn)
{
    try {
        auto r = conn.query("SHOW STATUS LIKE 'binlog_snapshot_%'");
        std::string file, pos;
        for (const auto &row : r.rows) {
            if (row[0] == std::optional<std::string>("Binlog_snapshot_file"))
                file = row[1].value_or("");
            else if (row[0] == std::optional<std::string>("Binlog_snapshot_position"))
                pos = row[1].value_or("");
        }
        if (!file.empty() && !pos.empty())
            return binlog::Position{file, std::strtoull(pos.c_str(), nullptr, 10)};
    } catch (const Error &) {
    }
    return std::nullopt;
}

std::string keysetAfter(const MysqlTable &t, const std::vector<int> &cols, int first)
{
    std::string out;
    for (size_t i = 0; i < cols.size(); ++i) {
        std::string clause;
        for (size_t j = 0; j <= i; ++j) {
            const MysqlColumn &c = t.columns[static_cast<size_t>(cols[j])];
            const std::string var = "@p" + std::to_string(first + static_cast<int>(j));
            clause += (j ? " AND " : "") + mysqlIdent(c.name) + (j == i ? " > " : " = ") + paramExpr(c, var);
        }
        out += (i ? " OR (" : "(") + clause + ")";
    }
    return "(" + out + ")";
}

void bindKeyset(MysqlConnection &conn, const std::vector<std::string> &values)
{
    if (values.empty())
        return;
    std::string set = "SET ";
    std::vector<std::optional<std::string>> params;
    for (size_t i = 0; i < values.size(); ++i) {
        set += (i ? ", @p" : "@p") + std::to_string(i + 1) + " = ?";
        params.emplace_back(values[i]);
    }
    conn.execParams(set, params);
}

std::string sourceNowUtc(MysqlConnection &conn)
{
    return conn.scalar("SELECT DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%d %H:%i:%s.%f')").value_or("");
}

} // namespace driftless::core::mysqlcatalog
