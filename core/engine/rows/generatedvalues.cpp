#include "core/engine/rows/generatedvalues.h"

#include "core/base/copytext.h"
#include "core/db/mysqlconnection.h"

#include <algorithm>
#include <map>
#include <optional>

namespace driftless::core {

namespace {

/// Keys per lookup: big enough to cost one round trip per batch of a busy table, small enough
/// for the planner to probe the key index per key.
constexpr size_t kKeysPerQuery = 1000;

} // namespace

StreamLayout streamLayout(const TableSchema &schema, const std::vector<std::string> &streamColumns,
                          const std::vector<std::string> &generatedByTarget)
{
    StreamLayout out;
    out.identity = schema.columns.size() == streamColumns.size();
    for (size_t i = 0; i < schema.columns.size(); ++i) {
        const auto &c = schema.columns[i];
        auto at = std::find(streamColumns.begin(), streamColumns.end(), c.name);
        const int field = at == streamColumns.end() ? -1 : static_cast<int>(at - streamColumns.begin());
        out.fromStream.push_back(field);
        out.identity = out.identity && field == static_cast<int>(i);
        if (field < 0 &&
            std::find(generatedByTarget.begin(), generatedByTarget.end(), c.name) == generatedByTarget.end())
            out.fetch.push_back(static_cast<int>(i));
    }
    return out;
}

void toSchemaLayout(const StreamLayout &layout, RowSet &rows)
{
    if (layout.identity || rows.empty())
        return;
    RowSet out;
    out.reserve(rows.size(), rows.bytes() + rows.size() * layout.fromStream.size() * 3);
    std::vector<std::string_view> fields;
    std::string line, mask;
    for (size_t r = 0; r < rows.size(); ++r) {
        copytext::split(rows.line(r), fields);
        const std::string_view sent = rows.unchangedMask(r);
        line.clear();
        mask.clear();
        bool anyUnchanged = false;
        for (size_t i = 0; i < layout.fromStream.size(); ++i) {
            if (i)
                line += '\t';
            const int f = layout.fromStream[i];
            if (f < 0) {
                line += copytext::kNull;
                mask += '0';
                continue;
            }
            line.append(fields.at(static_cast<size_t>(f)));
            const bool unchanged = !sent.empty() && sent.at(static_cast<size_t>(f)) == '1';
            mask += unchanged ? '1' : '0';
            anyUnchanged = anyUnchanged || unchanged;
        }
        out.append(line, rows.row(r).op, rows.row(r).version,
                   anyUnchanged ? std::string_view(mask) : std::string_view());
    }
    rows = std::move(out);
}

long long fetchByKey(PgConnection &src, const TableSchema &schema, const std::vector<int> &columns, RowSet &rows)
{
    std::vector<size_t> wanted;
    for (size_t r = 0; r < rows.size() && !columns.empty(); ++r)
        if (rows.row(r).op != ChangeOp::Delete)
            wanted.push_back(r);
    if (wanted.empty())
        return 0;
    // The keys travel as one text[] parameter per key column, cast to the column's type on the
    // source: never as SQL text, and the key's index is used.
    const auto &pk = schema.primaryKey;
    std::string select = "SELECT k.ord", arrays, names, on;
    for (int c : columns)
        select += ", s." + quoteIdent(schema.columns[static_cast<size_t>(c)].name);
    for (size_t i = 0; i < pk.size(); ++i) {
        const auto &k = schema.columns[static_cast<size_t>(pk[i])];
        const std::string n = "k" + std::to_string(i + 1);
        arrays += (i ? ", $" : "$") + std::to_string(i + 1) + "::text[]";
        names += n + ", ";
        on += (i ? " AND s." : "s.") + quoteIdent(k.name) + " = k." + n + "::" + k.typeSql;
    }
    const std::string sql = select + " FROM unnest(" + arrays + ") WITH ORDINALITY AS k(" + names + "ord) JOIN " +
                            schema.fromSql() + " s ON " + on;

    std::vector<int> fetched(schema.columns.size(), -1); // schema column -> result column
    for (size_t p = 0; p < columns.size(); ++p)
        fetched[static_cast<size_t>(columns[p])] = static_cast<int>(p) + 1;
    std::vector<std::string> lines(rows.size());
    std::vector<bool> found(rows.size(), false);
    std::vector<std::string_view> fields;
    for (size_t from = 0; from < wanted.size(); from += kKeysPerQuery) {
        const size_t to = std::min(wanted.size(), from + kKeysPerQuery);
        Params params;
        for (auto &a : pgKeyArrays(rows, wanted, from, to, pk))
            params.emplace_back(std::move(a));
        auto res = src.execParams(sql, params);
        for (int i = 0; i < res.rows(); ++i) {
            const size_t r = wanted[from + static_cast<size_t>(res.toInt(i, 0)) - 1];
            if (found[r])
                continue; // a key matched twice (an inheritance child has it too): keep one row
            copytext::split(rows.line(r), fields);
            std::string &line = lines[r];
            for (size_t c = 0; c < fields.size(); ++c) {
                if (c)
                    line += '\t';
                const int col = c < fetched.size() ? fetched[c] : -1;
                if (col < 0)
                    line.append(fields[c]);
                else if (res.isNull(i, col))
                    line += copytext::kNull;
                else
                    copytext::escape(res.value(i, col), line);
            }
            found[r] = true;
        }
    }
    RowSet out;
    out.reserve(rows.size(), rows.bytes());
    long long dropped = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
        const auto &row = rows.row(r);
        if (row.op == ChangeOp::Delete)
            out.append(rows.line(r), row.op, row.version, rows.unchangedMask(r));
        else if (found[r])
            out.append(lines[r], row.op, row.version, rows.unchangedMask(r));
        else
            ++dropped;
    }
    rows = std::move(out);
    return dropped;
}

std::pair<long long, long long> completeGeneratedFromMysql(MysqlConnection &src, const mysqlcatalog::MysqlTable &table,
                                                           RowSet &rows)
{
    const TableSchema &schema = table.schema;
    std::vector<size_t> wanted;
    for (size_t r = 0; r < rows.size(); ++r) {
        const std::string_view mask = rows.unchangedMask(r);
        if (mask.empty() || rows.row(r).op == ChangeOp::Delete)
            continue;
        for (size_t i = 0; i < schema.columns.size() && i < mask.size(); ++i)
            if (mask[i] == '1' && schema.columns[i].generated) {
                wanted.push_back(r);
                break;
            }
    }
    if (wanted.empty())
        return {0, 0};
    const auto &pk = schema.primaryKey;
    std::string select = "SELECT ", lhs, tuple;
    for (size_t i = 0; i < table.columns.size(); ++i)
        select += (i ? ", " : "") + mysqlcatalog::selectExpr(table.columns[i]);
    select += " FROM " + mysqlIdent(schema.table.schema) + "." + mysqlIdent(schema.table.name) + " WHERE ";
    for (size_t i = 0; i < pk.size(); ++i) {
        const auto &c = table.columns[static_cast<size_t>(pk[i])];
        lhs += (i ? ", " : "") + mysqlIdent(c.name);
        tuple += (i ? ", " : "") + mysqlcatalog::paramExpr(c, "?");
    }
    if (pk.size() > 1) {
        lhs = "(" + lhs + ")";
        tuple = "(" + tuple + ")";
    }

    std::map<std::string, std::string> current; // raw key -> the source's row as COPY text
    std::vector<std::string_view> fields;
    std::string value, line;
    for (size_t from = 0; from < wanted.size(); from += kKeysPerQuery) {
        const size_t to = std::min(wanted.size(), from + kKeysPerQuery);
        std::string in;
        std::vector<std::optional<std::string>> params;
        for (size_t w = from; w < to; ++w) {
            in += (w > from ? ", " : "") + tuple;
            copytext::split(rows.line(wanted[w]), fields);
            for (int k : pk) {
                const auto &c = table.columns[static_cast<size_t>(k)];
                value.clear();
                copytext::unescape(fields.at(static_cast<size_t>(k)), value);
                // Back from the text of docs/type-mapping.md to what paramExpr() reads.
                if (c.form == mysqlcatalog::ValueForm::Bytes && value.rfind("\\x", 0) == 0)
                    value.erase(0, 2);
                else if (c.form == mysqlcatalog::ValueForm::Timestamp && value.size() > 3 &&
                         value.compare(value.size() - 3, 3, "+00") == 0)
                    value.resize(value.size() - 3); // the session's time zone is UTC
                params.emplace_back(value);
            }
        }
        src.queryRows(select + lhs + " IN (" + in + ")", params, [&](const MysqlRowView &row) {
            line.clear();
            for (size_t i = 0; i < table.columns.size(); ++i) {
                if (i)
                    line += '\t';
                mysqlcatalog::appendValue(table, i, row, static_cast<unsigned>(i), line);
            }
            current[copytext::fieldsKey(line, pk, fields)] = line;
        });
    }
    RowSet out;
    out.reserve(rows.size(), rows.bytes());
    long long dropped = 0;
    size_t next = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
        const auto &row = rows.row(r);
        if (next < wanted.size() && wanted[next] == r) {
            ++next;
            auto it = current.find(copytext::fieldsKey(rows.line(r), pk, fields));
            if (it == current.end())
                ++dropped;
            else
                out.append(it->second, row.op, row.version);
            continue;
        }
        out.append(rows.line(r), row.op, row.version, rows.unchangedMask(r));
    }
    rows = std::move(out);
    return {static_cast<long long>(wanted.size()) - dropped, dropped};
}

} // namespace driftless::core
