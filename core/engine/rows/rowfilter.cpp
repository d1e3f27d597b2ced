#include "core/engine/rows/rowfilter.h"

#include "core/base/copytext.h"
#include "core/db/mysqlcatalog.h"
#include "core/db/mysqlconnection.h"
#include "core/db/pgcatalog.h"
#include "core/db/pgconnection.h"
#include "core/engine/endpoints/connect.h"
#include "core/model/error.h"

#include <map>
#include <optional>

namespace driftless::core {

std::string rowFilterAnd(const TableSpec &spec)
{
    return spec.where ? " AND (" + *spec.where + ")" : std::string();
}

std::string rowFilterWhere(const TableSpec &spec)
{
    return spec.where ? " WHERE (" + *spec.where + ")" : std::string();
}

std::string rowFilterFromSql(const TableSchema &schema, const TableSpec &spec)
{
    return spec.where ? "(SELECT * FROM " + schema.fromSql() + " WHERE (" + *spec.where + "))" : schema.fromSql();
}

std::string rowFilterProblem(PgConnection &src, const TableSchema &schema, const std::string &filter)
{
    try {
        src.exec("SELECT 1 FROM " + schema.fromSql() + " WHERE (" + filter + ") LIMIT 0");
    } catch (const Error &e) {
        if (e.isTransient())
            throw;
        return e.what();
    }
    return {};
}

std::string rowFilterProblem(MysqlConnection &src, const TableRef &table, const std::string &filter)
{
    try {
        src.query("SELECT 1 FROM " + mysqlIdent(table.schema) + "." + mysqlIdent(table.name) + " WHERE (" + filter +
                  ") LIMIT 0");
    } catch (const Error &e) {
        if (e.isTransient())
            throw;
        return e.what();
    }
    return {};
}

namespace {

[[noreturn]] void refuseRowFilter(const TableSpec &spec, const std::string &problem)
{
    throw Error(ErrorKind::Permanent,
                "table " + spec.table.display() + ": the source refuses its row filter (where: " + *spec.where +
                    "): " + problem,
                {}, "fix the table's where: in the workspace file and apply it again");
}

} // namespace

void requireRowFilter(PgConnection &src, const TableSchema &schema, const TableSpec &spec)
{
    if (!spec.where)
        return;
    if (const auto problem = rowFilterProblem(src, schema, *spec.where); !problem.empty())
        refuseRowFilter(spec, problem);
}

void requireRowFilter(MysqlConnection &src, const TableSpec &spec)
{
    if (!spec.where)
        return;
    if (const auto problem = rowFilterProblem(src, spec.table, *spec.where); !problem.empty())
        refuseRowFilter(spec, problem);
}

std::vector<RowFilterRefusal> checkRowFilters(const Workspace &ws)
{
    std::vector<RowFilterRefusal> out;
    std::map<std::string, PgConnection> pg;
    std::map<std::string, MysqlConnection> my;
    for (size_t pi = 0; pi < ws.pipelines.size(); ++pi) {
        const auto &p = ws.pipelines[pi];
        const Endpoint *src = ws.endpoint(p.source);
        if (!src)
            continue;
        for (size_t ti = 0; ti < p.tables.size(); ++ti) {
            const auto &t = p.tables[ti];
            if (!t.where)
                continue;
            std::string problem;
            if (src->kind == EndpointKind::Postgres) {
                auto it = pg.find(src->name);
                if (it == pg.end()) {
                    try {
                        it = pg.emplace(src->name, connectPostgres(*src, "driftless apply", false)).first;
                    } catch (const Error &) {
                        continue; // an unreachable source is the doctor's finding
                    }
                }
                TableSchema schema;
                try {
                    schema = pgcatalog::describeTable(it->second, t.table);
                } catch (const Error &) {
                    continue; // a missing table is the doctor's finding
                }
                problem = rowFilterProblem(it->second, schema, *t.where);
            } else if (src->kind == EndpointKind::Mysql) {
                auto it = my.find(src->name);
                if (it == my.end()) {
                    try {
                        it = my.emplace(src->name, connectMysql(*src, false)).first;
                    } catch (const Error &) {
                        continue;
                    }
                }
                problem = rowFilterProblem(it->second, t.table, *t.where);
            }
            if (!problem.empty())
                out.push_back({pi, ti, problem});
        }
    }
    return out;
}

namespace {

/// Rewrites the rows not in `keep` as deletes of their keys.
long long toDeletes(const std::vector<int> &primaryKey, const std::vector<bool> &keep, RowSet &rows)
{
    long long moved = 0;
    RowSet out;
    out.reserve(rows.size(), rows.bytes());
    std::vector<std::string_view> fields;
    std::string line;
    for (size_t r = 0; r < rows.size(); ++r) {
        if (keep[r]) {
            out.append(rows.line(r), rows.row(r).op, rows.row(r).version, rows.unchangedMask(r));
            continue;
        }
        ++moved;
        copytext::split(rows.line(r), fields);
        line.clear();
        for (size_t c = 0; c < fields.size(); ++c) {
            if (c)
                line += '\t';
            bool isKey = false;
            for (int k : primaryKey)
                isKey = isKey || static_cast<size_t>(k) == c;
            line += isKey ? fields[c] : copytext::kNull;
        }
        out.append(line, ChangeOp::Delete, rows.row(r).version);
    }
    rows = std::move(out);
    return moved;
}

} // namespace

long long applyRowFilter(PgConnection &src, const TableSchema &schema, const std::string &filter, RowSet &rows)
{
    std::vector<size_t> candidates, partial;
    for (size_t r = 0; r < rows.size(); ++r)
        if (rows.row(r).op != ChangeOp::Delete)
            (rows.unchangedMask(r).empty() ? candidates : partial).push_back(r);
    if (candidates.empty() && partial.empty())
        return 0;
    std::vector<bool> keep(rows.size(), true);
    for (size_t r : candidates)
        keep[r] = false;
    for (size_t r : partial)
        keep[r] = false;
    constexpr size_t kRowsPerQuery = 1000;
    if (!partial.empty()) {
        // An update that did not send its unchanged large values: the filter is read on the
        // source's current row of the key (as new as the change; a later change follows).
        std::string arrays, names, on;
        const auto &pk = schema.primaryKey;
        for (size_t i = 0; i < pk.size(); ++i) {
            const auto &k = schema.columns[static_cast<size_t>(pk[i])];
            const std::string kn = "k" + std::to_string(i + 1);
            arrays += (i ? ", $" : "$") + std::to_string(i + 1) + "::text[]";
            names += kn + ", ";
            on += (i ? " AND s." : "s.") + quoteIdent(k.name) + " = k." + kn + "::" + k.typeSql;
        }
        const std::string sql =
            "SELECT t.\"_driftless_ord\" FROM (SELECT k.ord AS \"_driftless_ord\", s.* FROM unnest(" + arrays +
            ") WITH ORDINALITY AS k(" + names + "ord) JOIN " + schema.fromSql() + " s ON " + on + ") AS t WHERE (" +
            filter + ")";
        for (size_t from = 0; from < partial.size(); from += kRowsPerQuery) {
            const size_t to = std::min(partial.size(), from + kRowsPerQuery);
            Params params;
            for (auto &a : pgKeyArrays(rows, partial, from, to, pk))
                params.emplace_back(std::move(a));
            auto res = src.execParams(sql, params);
            for (int i = 0; i < res.rows(); ++i)
                keep[partial[from + static_cast<size_t>(res.toInt(i, 0)) - 1]] = true;
        }
    }
    // The row's values as one text[] per column, cast to the column's type on the source, under
    // the column's own name: the filter reads them as it would read the table.
    const size_t n = schema.columns.size();
    std::string arrays, names, cols;
    for (size_t c = 0; c < n; ++c) {
        const std::string k = "c" + std::to_string(c + 1);
        arrays += (c ? ", $" : "$") + std::to_string(c + 1) + "::text[]";
        names += k + ", ";
        cols += ", k." + k + "::" + schema.columns[c].typeSql + " AS " + quoteIdent(schema.columns[c].name);
    }
    const std::string sql = "SELECT t.\"_driftless_ord\" FROM (SELECT k.ord AS \"_driftless_ord\"" + cols +
                            " FROM unnest(" + arrays + ") WITH ORDINALITY AS k(" + names + "ord)) AS t WHERE (" +
                            filter + ")";
    std::vector<std::string_view> fields;
    std::string value;
    for (size_t from = 0; from < candidates.size(); from += kRowsPerQuery) {
        const size_t to = std::min(candidates.size(), from + kRowsPerQuery);
        std::vector<std::string> a(n, "{");
        for (size_t p = from; p < to; ++p) {
            copytext::split(rows.line(candidates[p]), fields);
            for (size_t c = 0; c < n; ++c) {
                if (p > from)
                    a[c] += ',';
                if (c >= fields.size() || copytext::isNull(fields[c])) {
                    a[c] += "NULL";
                    continue;
                }
                value.clear();
                copytext::unescape(fields[c], value);
                appendPgArrayElement(value, a[c]);
            }
        }
        Params params;
        for (auto &s : a)
            params.emplace_back(s + '}');
        auto res = src.execParams(sql, params);
        for (int i = 0; i < res.rows(); ++i)
            keep[candidates[from + static_cast<size_t>(res.toInt(i, 0)) - 1]] = true;
    }
    return toDeletes(schema.primaryKey, keep, rows);
}

namespace {

/// A parameter as the column's own kind of value, so the filter compares numbers as numbers
/// and times as times.
std::string mysqlTyped(const mysqlcatalog::MysqlColumn &c)
{
    const std::string &t = c.dataType;
    if (t == "tinyint" || t == "smallint" || t == "mediumint" || t == "int" || t == "bigint" || t == "year")
        return c.isUnsigned ? "CAST(? AS UNSIGNED)" : "CAST(? AS SIGNED)";
    if (t == "decimal")
        return "CAST(? AS DECIMAL(" + std::to_string(std::max(c.precision, 1)) + "," + std::to_string(c.scale) + "))";
    if (t == "float" || t == "double")
        return "CAST(? AS DOUBLE)";
    if (t == "datetime" || t == "timestamp")
        return "CAST(? AS DATETIME(" + std::to_string(c.fsp) + "))";
    if (t == "date")
        return "CAST(? AS DATE)";
    if (t == "time")
        return "CAST(? AS TIME(" + std::to_string(c.fsp) + "))";
    return "?";
}

} // namespace

long long applyRowFilter(MysqlConnection &src, const mysqlcatalog::MysqlTable &table, const std::string &filter,
                         RowSet &rows)
{
    const auto &schema = table.schema;
    std::vector<size_t> candidates, partial;
    for (size_t r = 0; r < rows.size(); ++r)
        if (rows.row(r).op != ChangeOp::Delete)
            (rows.unchangedMask(r).empty() ? candidates : partial).push_back(r);
    if (candidates.empty() && partial.empty())
        return 0;
    std::vector<bool> keep(rows.size(), true);
    for (size_t r : candidates)
        keep[r] = false;
    for (size_t r : partial)
        keep[r] = false;
    const size_t n = table.columns.size();
    std::vector<std::string_view> fields;
    std::string value;
    auto fieldValue = [&](size_t c) -> std::optional<std::string> {
        if (c >= fields.size() || copytext::isNull(fields[c]))
            return std::nullopt;
        value.clear();
        copytext::unescape(fields[c], value);
        return value;
    };
    // MariaDB allows 65535 placeholders a statement.
    const size_t perQuery = std::max<size_t>(1, std::min<size_t>(1000, 60000 / (n + 1)));
    for (size_t from = 0; from < candidates.size(); from += perQuery) {
        const size_t to = std::min(candidates.size(), from + perQuery);
        std::string rowsSql;
        std::vector<std::optional<std::string>> params;
        for (size_t p = from; p < to; ++p) {
            rowsSql += p == from ? "SELECT CAST(? AS UNSIGNED) AS `_driftless_ord`" : " UNION ALL SELECT ?";
            params.emplace_back(std::to_string(p - from));
            copytext::split(rows.line(candidates[p]), fields);
            for (size_t c = 0; c < n; ++c) {
                rowsSql += ", " + mysqlTyped(table.columns[c]);
                if (p == from)
                    rowsSql += " AS " + mysqlIdent(table.columns[c].name);
                params.push_back(fieldValue(c));
            }
        }
        auto res = src.query("SELECT t.`_driftless_ord` FROM (" + rowsSql + ") AS t WHERE (" + filter + ")", params);
        for (size_t i = 0; i < res.size(); ++i)
            keep[candidates[from + std::stoul(res.text(i, 0))]] = true;
    }
    if (!partial.empty()) {
        // An image without every column: the filter is read on the source's current row.
        for (size_t r : partial) {
            copytext::split(rows.line(r), fields);
            std::string cond;
            std::vector<std::optional<std::string>> params;
            for (size_t i = 0; i < schema.primaryKey.size(); ++i) {
                const auto k = static_cast<size_t>(schema.primaryKey[i]);
                cond += (i ? " AND " : "") + mysqlIdent(table.columns[k].name) + " = " + mysqlTyped(table.columns[k]);
                params.push_back(fieldValue(k));
            }
            auto res = src.query("SELECT 1 FROM " + mysqlIdent(schema.table.schema) + "." +
                                     mysqlIdent(schema.table.name) + " WHERE " + cond + " AND (" + filter + ")",
                                 params);
            keep[r] = !res.empty();
        }
    }
    return toDeletes(schema.primaryKey, keep, rows);
}

} // namespace driftless::core
