#include "core/engine/twoway/conflictsmysql.h"

#include "core/base/copytext.h"
#include "core/db/mysqlconnection.h"
#include "core/engine/endpoints/connect.h"
#include "core/mergers/mysqltypes.h"
#include "core/model/dsn.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace driftless::core {

namespace {

using json = nlohmann::json;

/// One COPY-text line's fields, unescaped (NULL as nullopt).
ConflictTarget::Values fieldsOf(std::string_view line)
{
    std::vector<std::string_view> raw;
    copytext::split(line, raw);
    ConflictTarget::Values out;
    out.reserve(raw.size());
    for (auto f : raw) {
        if (copytext::isNull(f)) {
            out.emplace_back(std::nullopt);
            continue;
        }
        std::string v;
        copytext::unescape(f, v);
        out.emplace_back(std::move(v));
    }
    return out;
}

std::string keyText(const ConflictTarget::Values &v, const std::vector<size_t> &at)
{
    std::string k;
    for (size_t i : at) {
        k += v[i] ? "1" + *v[i] : std::string("0");
        k += '\x1f';
    }
    return k;
}

std::string quotedTable(const TargetName &t)
{
    return (t.schema.empty() ? std::string() : mysqlIdent(t.schema) + ".") + mysqlIdent(t.name);
}

std::optional<std::string> textOf(const json &v)
{
    if (v.is_null())
        return std::nullopt;
    return v.is_string() ? v.get<std::string>() : v.dump();
}

/// The columns `names` of `table` in its own shape (so values are spelled as the stream spells
/// them), and the SELECT list that reads them; a missing column is an error naming `where`.
std::pair<mysqlcatalog::MysqlTable, std::string>
shapeOf(const mysqlcatalog::MysqlTable &table, const std::vector<std::string> &names, const std::string &where)
{
    mysqlcatalog::MysqlTable shape;
    shape.schema.table = table.schema.table;
    std::string select;
    for (const auto &name : names) {
        auto it =
            std::find_if(table.columns.begin(), table.columns.end(), [&](const auto &col) { return col.name == name; });
        if (it == table.columns.end())
            throw Error(ErrorKind::Permanent,
                        "column " + name + " of " + where + " is missing on the side a two-way change is applied to",
                        {}, "give both sides the same columns, then start the pipeline again");
        shape.columns.push_back(*it);
        shape.schema.columns.push_back(table.schema.columns[static_cast<size_t>(it - table.columns.begin())]);
        select += (select.empty() ? "" : ", ") + mysqlcatalog::selectExpr(*it);
    }
    return {std::move(shape), std::move(select)};
}

/// `value` as one raw COPY-text field in `raw` (escaped; `\N` for NULL), which appendMysqlValue takes.
const std::string &rawOf(const std::optional<std::string> &value, std::string &raw)
{
    raw.clear();
    if (value)
        copytext::escape(*value, raw);
    else
        raw = copytext::kNull;
    return raw;
}

/// A stored value (the stream's spelling; nullopt for NULL) as a literal of column `name`, typed
/// as `types` gives it in Postgres terms (else as `described`, the table itself), as the merge
/// writes it: a BINARY value's hex becomes its bytes, a boolean's `t` a 1.
void appendLiteral(std::string &sql, const TableSchema &types, const TableSchema &described, const std::string &name,
                   const std::optional<std::string> &value, bool key, std::string &raw, std::string &scratch)
{
    rawOf(value, raw);
    const TableSchema *from = types.columnIndex(name) >= 0 ? &types : &described;
    const int at = from->columnIndex(name);
    if (at < 0)
        throw Error(ErrorKind::Permanent, "column " + name + " is not in the table the resolution is written to", {},
                    "give both sides the same columns, then resolve the conflict again");
    appendMysqlValue(sql, raw, mysqlColumnFor(from->columns[static_cast<size_t>(at)], key), name, scratch);
}

mysqlcatalog::MysqlTable describedTarget(MysqlConnection &c, const Endpoint &endpoint, const TargetName &table)
{
    // A table named without a database is in the one the endpoint's DSN names.
    const std::string database = table.schema.empty() ? MysqlDsn::parse(endpoint.dsn).database : table.schema;
    return mysqlcatalog::describeTable(c, TableRef{database, table.name});
}

} // namespace

MysqlConflictTarget::MysqlConflictTarget(MysqlConnection &conn, const mysqlcatalog::MysqlTable &table,
                                         const TableSchema *incoming)
    : m_conn(conn), m_table(table), m_incoming(incoming)
{
}

void MysqlConflictTarget::spellIncoming(const ConflictScope &scope, const std::vector<size_t> &synced,
                                        const std::vector<Values *> &values)
{
    if (!m_incoming || synced.empty() || values.empty())
        return;
    std::vector<std::string> names;
    std::vector<MysqlColumnType> types;
    std::string cols;
    for (size_t c : synced) {
        const std::string &name = scope.columns[c];
        const int i = m_incoming->columnIndex(name);
        if (i < 0)
            throw Error(ErrorKind::Permanent,
                        "column " + name + " of " + scope.table + " is not in the stream's schema", {},
                        "give both sides the same columns, then start the pipeline again");
        names.push_back(name);
        types.push_back(mysqlColumnFor(m_incoming->columns[static_cast<size_t>(i)], false));
        cols += ", " + mysqlIdent(name);
    }
    auto [shape, select] = shapeOf(m_table, names, scope.targetSql);
    // Session-local and never logged (row format): the table's own column types, no rows. (A
    // column CREATE ... SELECT adds needs a default even when no row is selected.)
    const std::string tmp = "`_driftless_spell`";
    m_conn.exec("DROP TEMPORARY TABLE IF EXISTS " + tmp);
    m_conn.exec("CREATE TEMPORARY TABLE " + tmp + " (`_dl_ord` INT NOT NULL DEFAULT 0) SELECT " + cols.substr(2) +
                " FROM " + scope.targetSql + " LIMIT 0");
    std::string insert, raw, scratch;
    for (size_t r = 0; r < values.size(); ++r) {
        insert +=
            (insert.empty() ? "INSERT INTO " + tmp + " (`_dl_ord`" + cols + ") VALUES (" : "), (") + std::to_string(r);
        for (size_t s = 0; s < synced.size(); ++s) {
            const auto &v = synced[s] < values[r]->size() ? (*values[r])[synced[s]] : std::nullopt;
            insert += ", ";
            appendMysqlValue(insert, rawOf(v, raw), types[s], names[s], scratch);
        }
    }
    m_conn.exec(insert + ")");
    std::string line;
    // With a parameter, as rowsFor() reads: a prepared statement's result spells a DATETIME
    // without a zero fraction, the text protocol's with `.000000`.
    m_conn.queryRows("SELECT `_dl_ord`, " + select + " FROM " + tmp + " WHERE `_dl_ord` >= ? ORDER BY `_dl_ord`", {"0"},
                     [&](const MysqlRowView &row) {
                         line.clear();
                         for (size_t c = 0; c < names.size(); ++c) {
                             if (c)
                                 line += '\t';
                             mysqlcatalog::appendValue(shape, c, row, static_cast<unsigned>(c) + 1, line);
                         }
                         const auto v = fieldsOf(line);
                         const auto ord = std::stoul(row.text(0));
                         for (size_t s = 0; s < synced.size() && ord < values.size(); ++s)
                             if (synced[s] < values[ord]->size())
                                 (*values[ord])[synced[s]] = v[s];
                     });
    m_conn.exec("DROP TEMPORARY TABLE " + tmp);
}

std::map<size_t, ConflictTarget::Held> MysqlConflictTarget::rowsFor(const ConflictScope &scope, const RowSet &rows,
                                                                    const std::vector<size_t> &picked,
                                                                    const std::vector<int> &keyIdx,
                                                                    const std::vector<size_t> &synced, bool)
{
    // The result's columns: the keys, then the synced columns, each as the table's own column.
    std::vector<size_t> want; // scope column index per result column
    for (int k : keyIdx)
        want.push_back(static_cast<size_t>(k));
    want.insert(want.end(), synced.begin(), synced.end());
    std::vector<std::string> names;
    for (size_t c : want)
        names.push_back(scope.columns[c]);
    auto [shape, select] = shapeOf(m_table, names, scope.targetSql);
    for (size_t i = 0; i < keyIdx.size(); ++i)
        shape.schema.primaryKey.push_back(static_cast<int>(i));

    // Which incoming row each key is. The keys go in as literals of the key columns' own types
    // (as the merge writes them): a BINARY key's text is the stream's hex, which a string
    // parameter would compare as characters and never find.
    std::vector<size_t> keyAt;
    std::vector<MysqlColumnType> keyTypes;
    for (size_t i = 0; i < keyIdx.size(); ++i) {
        keyAt.push_back(static_cast<size_t>(keyIdx[i]));
        keyTypes.push_back(mysqlColumnFor(shape.schema.columns[i], true));
    }
    std::map<std::string, size_t> byKey;
    // Read through the prepared-statement protocol, as spellIncoming() reads: it spells a
    // DATETIME as the stream does (no `.000000`). The literals leave it nothing to bind but this.
    const std::vector<std::optional<std::string>> params{std::string("1")};
    std::string tuples, raw, scratch;
    for (size_t r : picked) {
        const auto v = fieldsOf(rows.line(r));
        byKey[keyText(v, keyAt)] = r;
        tuples += tuples.empty() ? "(" : ", (";
        for (size_t i = 0; i < keyAt.size(); ++i) {
            if (i)
                tuples += ", ";
            appendMysqlValue(tuples, rawOf(v.at(keyAt[i]), raw), keyTypes[i], names[i], scratch);
        }
        tuples += ")";
    }
    std::string keys;
    for (const auto &k : scope.keyColumns)
        keys += (keys.empty() ? "" : ", ") + mysqlIdent(k);
    // A locking read (FOR UPDATE): the latest committed rows, not the transaction's snapshot, and
    // they stay so until the batch commits, so the merge never writes over a writer's commit
    // that this check did not see (conflicts.cpp says why).
    const std::string sql = "SELECT " + select + " FROM " + scope.targetSql + " WHERE (" + keys + ") IN (" + tuples +
                            ") AND 1 = ? FOR UPDATE";

    std::map<size_t, Held> out;
    std::string line;
    std::vector<size_t> resultKeys(keyIdx.size());
    for (size_t i = 0; i < resultKeys.size(); ++i)
        resultKeys[i] = i;
    m_conn.queryRows(sql, params, [&](const MysqlRowView &row) {
        line.clear();
        for (size_t c = 0; c < want.size(); ++c) {
            if (c)
                line += '\t';
            mysqlcatalog::appendValue(shape, c, row, static_cast<unsigned>(c), line);
        }
        const auto v = fieldsOf(line);
        auto it = byKey.find(keyText(v, resultKeys));
        if (it == byKey.end())
            return; // a key the stream spells otherwise: not compared (the merge applies it)
        Held h;
        h.values.resize(scope.columns.size());
        for (size_t c = keyIdx.size(); c < want.size(); ++c)
            h.values[want[c]] = v[c];
        out[it->second] = std::move(h);
    });
    return out;
}

std::pair<std::optional<std::int64_t>, std::optional<std::int64_t>>
MysqlConflictTarget::timestampsUs(const std::string &, const std::optional<std::string> &mine,
                                  const std::optional<std::string> &theirs)
{
    if (!mine || !theirs)
        return {};
    // A TIMESTAMP's text carries "+00" (UTC); a DATETIME's is the wall time both sides hold.
    auto bare = [](std::string v) {
        if (v.size() > 3 && v.compare(v.size() - 3, 3, "+00") == 0)
            v.resize(v.size() - 3);
        return v;
    };
    auto r = m_conn.query("SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', CAST(? AS DATETIME(6))), "
                          "TIMESTAMPDIFF(MICROSECOND, '1970-01-01', CAST(? AS DATETIME(6)))",
                          {bare(*mine), bare(*theirs)});
    auto read = [&](size_t c) -> std::optional<std::int64_t> {
        if (r.empty() || !r.at(0, c))
            return std::nullopt;
        return std::stoll(*r.at(0, c));
    };
    return {read(0), read(1)};
}

namespace {

/// A MariaDB/MySQL side: a session with skip_replication, the key as literals of its columns'
/// types, the transaction started once the table is described.
class MysqlResolutionSide final : public ResolutionSide {
public:
    MysqlResolutionSide(const Endpoint &endpoint, const TargetName &table, const std::string &keyJson,
                        const TableSchema *postgresColumns)
        : m_c(connectMysql(endpoint)), m_key(json::parse(keyJson)), m_table(quotedTable(table)),
          m_described(describedTarget(m_c, endpoint, table)), m_postgresColumns(postgresColumns)
    {
        // Like the directions' mergers: the write carries skip_replication, which both readers drop.
        m_c.exec("SET SESSION skip_replication = 1");
        m_c.exec("START TRANSACTION");
    }
    ~MysqlResolutionSide() override
    {
        if (m_open)
            try {
                m_c.exec("ROLLBACK");
            } catch (const Error &) {
                // the connection closes with it, which rolls back as well
            }
    }

    std::string lockRow(const std::vector<std::string> &columns) override
    {
        // The asked-for columns in the table's own shape, so each value is spelled as the stream's.
        const auto [shape, select] = shapeOf(m_described, columns, m_table);
        // The prepared-statement protocol, as rowsFor() reads (a DATETIME spelled as the stream does).
        const std::vector<std::optional<std::string>> params{std::string("1")};
        bool found = false;
        json row = json::object();
        std::string line;
        m_c.queryRows("SELECT " + (select.empty() ? std::string("1") : select) + " FROM " + m_table +
                          " WHERE 1 = ? AND " + where(m_described.schema) + " FOR UPDATE",
                      params, [&](const MysqlRowView &r) {
                          found = true;
                          for (size_t i = 0; i < columns.size(); ++i) {
                              line.clear();
                              mysqlcatalog::appendValue(shape, i, r, static_cast<unsigned>(i), line);
                              const auto v = fieldsOf(line);
                              row[columns[i]] = v.empty() || !v[0] ? json(nullptr) : json(*v[0]);
                          }
                      });
        return found ? row.dump() : std::string("null");
    }

    void write(const std::string &rowJson) override
    {
        const json row = json::parse(rowJson);
        // Every value as a literal of its column's type: the stored values are the stream's
        // spelling (Postgres text on a mixed pair: `postgresColumns` types them; else the table's
        // own columns described in the same terms).
        const TableSchema &types = m_postgresColumns ? *m_postgresColumns : m_described.schema;
        if (row.is_null()) {
            m_c.exec("DELETE FROM " + m_table + " WHERE " + where(types));
            return;
        }
        std::string names, marks, set, raw, scratch;
        for (auto it = row.begin(); it != row.end(); ++it) {
            names += (names.empty() ? "" : ", ") + mysqlIdent(it.key());
            marks += marks.empty() ? "" : ", ";
            appendLiteral(marks, types, m_described.schema, it.key(), textOf(it.value()), m_key.contains(it.key()), raw,
                          scratch);
            if (!m_key.contains(it.key()))
                set += (set.empty() ? "" : ", ") + mysqlIdent(it.key()) + " = VALUES(" + mysqlIdent(it.key()) + ")";
        }
        // With only key columns there is nothing to update: the no-op keeps the row.
        if (set.empty())
            set = mysqlIdent(m_key.begin().key()) + " = " + mysqlIdent(m_key.begin().key());
        m_c.exec("INSERT INTO " + m_table + " (" + names + ") VALUES (" + marks + ") ON DUPLICATE KEY UPDATE " + set);
    }

    void commit() override
    {
        m_c.exec("COMMIT");
        m_open = false;
    }

private:
    /// The key's columns equal to its values, as literals typed by `types`.
    std::string where(const TableSchema &types) const
    {
        std::string out, raw, scratch;
        for (auto it = m_key.begin(); it != m_key.end(); ++it) {
            out += (out.empty() ? "" : " AND ") + mysqlIdent(it.key()) + " = ";
            appendLiteral(out, types, m_described.schema, it.key(), textOf(it.value()), true, raw, scratch);
        }
        return out;
    }

    MysqlConnection m_c;
    json m_key;
    std::string m_table;
    mysqlcatalog::MysqlTable m_described;
    const TableSchema *m_postgresColumns;
    bool m_open = true;
};

} // namespace

std::unique_ptr<ResolutionSide> openMysqlResolutionSide(const Endpoint &endpoint, const TargetName &table,
                                                        const std::string &keyJson, const TableSchema *postgresColumns)
{
    return std::make_unique<MysqlResolutionSide>(endpoint, table, keyJson, postgresColumns);
}

} // namespace driftless::core
