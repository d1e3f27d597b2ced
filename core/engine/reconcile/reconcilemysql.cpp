#include "core/engine/reconcile/reconcilemysql.h"
#include "core/engine/rows/mysqlcanon.h"

#include "core/base/copytext.h"
#include "core/mergers/mysqltypes.h"
#include "core/model/error.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace driftless::core::recon {

using mysqlcatalog::MysqlColumn;
using mysqlcatalog::ValueForm;
using rowhash::Canon;
using rowhash::Checksum;

namespace {

/// Keys looked up per query (a literal each: no placeholder limit to mind).
constexpr size_t kKeyBatch = 500;

/// A text value as SQL: a hex literal read as utf8mb4, so no value is ever SQL text.
std::string literal(std::string_view v)
{
    std::string out = "CONVERT(X'";
    copytext::appendHex(v, out);
    return out + "' USING utf8mb4)";
}

} // namespace

MysqlSide::MysqlSide(MysqlConnection conn, TableRef table, const TableSchema &schema,
                     std::vector<mysqlcatalog::MysqlColumn> physical, bool postgresText, std::optional<Recent> recent)
    : m_conn(std::move(conn)), m_table(std::move(table)), m_logical(schema.columns), m_physical(std::move(physical)),
      m_pgText(postgresText), m_recent(recent)
{
    m_from = mysqlIdent(m_table.schema) + "." + mysqlIdent(m_table.name);
    for (int k : schema.primaryKey)
        m_keys.push_back(static_cast<size_t>(k));
    // Reconciliation only reads; each statement is its own consistent read (autocommit), so a
    // recheck sees what the sync applied meanwhile.
    m_conn.exec("SET SESSION TRANSACTION READ ONLY");

    std::string record;
    for (size_t i = 0; i < m_logical.size(); ++i) {
        MysqlCanonical canon = mysqlCanonical(m_logical[i], m_physical[i], m_pgText);
        Col c{std::move(canon.value), std::move(canon.field)};
        record += (i ? ", ',', " : "") + c.field;
        m_cols.push_back(std::move(c));
    }
    // The first 15 hex digits of the MD5 (60 bits), as rowhash::hashRecord reads them.
    m_hash = "CAST(CONV(LEFT(MD5(CONCAT('(', " + record + ", ')')), 15), 16, 10) AS UNSIGNED)";
}

std::vector<mysqlcatalog::MysqlColumn> MysqlSide::targetColumns(MysqlConnection &conn, const TableRef &table,
                                                                const TableSchema &schema)
{
    const auto target = mysqlcatalog::describeTable(conn, table);
    std::vector<MysqlColumn> out;
    for (const auto &c : schema.columns) {
        auto it = std::find_if(target.columns.begin(), target.columns.end(),
                               [&](const MysqlColumn &m) { return m.name == c.name; });
        if (it == target.columns.end())
            throw Error(ErrorKind::Permanent, "target table " + table.display() + " has no column " + c.name, {},
                        "run the pipeline once: it adds the source's new columns to the target");
        out.push_back(*it);
    }
    return out;
}

void MysqlSide::setRowFilter(const std::string &filter)
{
    m_from = "(SELECT * FROM " + mysqlIdent(m_table.schema) + "." + mysqlIdent(m_table.name) + " WHERE (" + filter +
             ")) AS _dl_f";
}

std::string MysqlSide::describe() const
{
    return m_conn.dsn().display() + " " + m_from;
}

bool MysqlSide::keysOrderable() const
{
    for (size_t k : m_keys) {
        const ColumnInfo &l = m_logical[k];
        const MysqlColumn &m = m_physical[k];
        if (isTextType(m)) {
            // Text orders by bytes on the other side (COLLATE "C", SQLite BINARY): only a binary,
            // no-pad collation orders the same (UTF-8 byte order is code point order).
            const std::string &coll = m.collation;
            const bool bytewise = (coll.size() > 10 && coll.compare(coll.size() - 10, 10, "_nopad_bin") == 0) ||
                                  coll == "utf8mb4_0900_bin";
            const bool utf8 = m.charset.rfind("utf8", 0) == 0;
            if (!bytewise || !utf8 || l.isArray || (l.category != 'S' && l.baseType != "uuid") ||
                l.baseType == "bpchar")
                return false;
            continue;
        }
        // Bit strings, durations, enum order (by index) and floats are left to the row by row
        // comparison; so is geometry.
        if (isOneOf(m.dataType, {"bit", "time", "enum", "set", "json", "float", "double", "real"}) || m.isJson ||
            (m.form == ValueForm::Bytes &&
             !isOneOf(m.dataType, {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})))
            return false;
    }
    return true;
}

std::string MysqlSide::keyExpr(size_t k, const std::string &text) const
{
    const size_t i = m_keys[k];
    const ColumnInfo &l = m_logical[i];
    const MysqlColumn &m = m_physical[i];
    std::string v = text;
    if (rowhash::canonFor(l) == Canon::TimestampTz && (m.dataType == "datetime" || m.dataType == "timestamp"))
        v = mysqlDateTimeUtc(text, m.name); // the session's time zone is UTC
    else if (m.form == ValueForm::Bytes && v.size() >= 2 && v[0] == '\\' && v[1] == 'x')
        v = v.substr(2);
    else if (rowhash::canonFor(l) == Canon::Boolean)
        v = text == "t" ? "1" : "0";
    else if (l.baseType == "bpchar")
        v.erase(v.find_last_not_of(' ') + 1);
    return mysqlcatalog::paramExpr(m, literal(v));
}

std::string MysqlSide::treeSql(const Plan &plan) const
{
    return caseTree(plan, 0, plan.labels.size() - 1, [&](size_t e) {
        std::string lhs, rhs;
        for (size_t k = 0; k < m_keys.size(); ++k) {
            lhs += std::string(k ? ", " : "") + mysqlIdent(m_physical[m_keys[k]].name);
            rhs += std::string(k ? ", " : "") + keyExpr(k, plan.edges[e][k]);
        }
        return m_keys.size() == 1 ? lhs + " < " + rhs : "(" + lhs + ") < (" + rhs + ")";
    });
}

std::map<int, Checksum> MysqlSide::checksums(const Plan &plan)
{
    const std::string tree = treeSql(plan);
    ++queries;
    auto r = m_conn.query("SELECT " + tree + " AS _dl_b, COUNT(*), CAST(COALESCE(SUM(" + m_hash +
                          "), 0) AS CHAR) FROM " + m_from + " WHERE " + tree + " IS NOT NULL GROUP BY 1");
    std::map<int, Checksum> out;
    for (const auto &row : r.rows)
        out[std::atoi(row[0].value_or("0").c_str())] =
            Checksum::fromDecimal(std::atoll(row[1].value_or("0").c_str()), row[2].value_or("0"));
    return out;
}

std::vector<std::pair<int, RawKey>> MysqlSide::sample(const Plan &plan, long long step)
{
    std::string inner, outer, order;
    for (size_t k = 0; k < m_keys.size(); ++k) {
        const std::string n = std::to_string(k);
        const size_t i = m_keys[k];
        // The canonical text is one every side casts back to the key's type (Postgres reads it).
        inner += ", " + m_cols[i].value + " AS _dl_r" + n + ", " + mysqlIdent(m_physical[i].name) + " AS _dl_o" + n;
        outer += ", _dl_r" + n;
        order += std::string(k ? ", " : "") + "_dl_o" + n;
    }
    ++queries;
    auto r = m_conn.query(
        "SELECT _dl_b" + outer + " FROM (SELECT _dl_b" + outer + ", ROW_NUMBER() OVER (PARTITION BY _dl_b ORDER BY " +
        order + ") AS _dl_rn FROM (SELECT " + treeSql(plan) + " AS _dl_b" + inner + " FROM " + m_from +
        ") s WHERE _dl_b IS NOT NULL) x WHERE _dl_rn % " + std::to_string(step) + " = 0 ORDER BY _dl_b, _dl_rn");
    std::vector<std::pair<int, RawKey>> out;
    for (const auto &row : r.rows) {
        RawKey key;
        for (size_t k = 0; k < m_keys.size(); ++k)
            key.push_back(row[k + 1].value_or(""));
        out.emplace_back(std::atoi(row[0].value_or("0").c_str()), std::move(key));
    }
    fetched += static_cast<long long>(r.size());
    return out;
}

void MysqlSide::hashes(const Plan &plan, const std::function<void(CanonicalKey &&, std::int64_t)> &row)
{
    std::string sel;
    for (size_t i : m_keys)
        sel += m_cols[i].value + ", ";
    const std::string tree = treeSql(plan);
    ++queries;
    const size_t nk = m_keys.size();
    fetched +=
        m_conn.stream("SELECT " + sel + m_hash + " FROM " + m_from +
                          (tree == "0" ? std::string() : " WHERE " + tree + " IS NOT NULL"),
                      [&](const MysqlRowView &r) {
                          CanonicalKey k;
                          k.reserve(nk);
                          for (unsigned c = 0; c < nk; ++c)
                              k.push_back(r.text(c));
                          row(std::move(k), std::strtoll(r.text(static_cast<unsigned>(nk)).c_str(), nullptr, 10));
                      });
}

void MysqlSide::rangeHashes(const std::optional<RawKey> &lo, const std::optional<RawKey> &hi,
                            const std::function<void(CanonicalKey &&, std::int64_t)> &row, bool loExclusive)
{
    std::vector<std::string> columns;
    for (size_t k : m_keys)
        columns.push_back(mysqlIdent(m_physical[k].name));
    const std::string where = keyRangeSql(
        columns, lo, hi, [&](const RawKey &key, size_t k) { return keyExpr(k, key[k]); }, loExclusive);
    std::string sel;
    for (size_t i : m_keys)
        sel += m_cols[i].value + ", ";
    ++queries;
    const size_t nk = m_keys.size();
    fetched +=
        m_conn.stream("SELECT " + sel + m_hash + " FROM " + m_from + (where.empty() ? "" : " WHERE " + where),
                      [&](const MysqlRowView &r) {
                          CanonicalKey k;
                          k.reserve(nk);
                          for (unsigned c = 0; c < nk; ++c)
                              k.push_back(r.text(c));
                          row(std::move(k), std::strtoll(r.text(static_cast<unsigned>(nk)).c_str(), nullptr, 10));
                      });
}

std::string MysqlSide::whereKeys(const std::vector<CanonicalKey> &keys, size_t from, size_t to) const
{
    // Keys compare in the column's own type (and so its index) where the canonical text reads
    // back as that type; floats, and numerics or JSON held as text, compare by canonical text.
    // A case-insensitive collation may match more rows than asked for: they are keyed by their
    // own canonical key, so they change nothing.
    std::vector<bool> byCanon;
    std::string lhs;
    for (size_t k = 0; k < m_keys.size(); ++k) {
        const size_t i = m_keys[k];
        const ColumnInfo &l = m_logical[i];
        const MysqlColumn &m = m_physical[i];
        const Canon canon = rowhash::canonFor(l);
        const bool c = canon == Canon::Float || (canon == Canon::Numeric && isTextType(m)) || m.isJson ||
                       m.dataType == "json" || l.isArray || !l.isBuiltinType();
        byCanon.push_back(c);
        lhs += std::string(k ? ", " : "") + (c ? m_cols[i].value : mysqlIdent(m.name));
    }
    std::string in;
    for (size_t n = from; n < to; ++n) {
        std::string tuple;
        for (size_t k = 0; k < m_keys.size(); ++k)
            tuple += std::string(k ? ", " : "") + (byCanon[k] ? utf8(literal(keys[n][k])) : keyExpr(k, keys[n][k]));
        in += std::string(n > from ? ", " : "") + (m_keys.size() == 1 ? tuple : "(" + tuple + ")");
    }
    return m_keys.size() == 1 ? lhs + " IN (" + in + ")" : "(" + lhs + ") IN (" + in + ")";
}

std::string MysqlSide::recentExpr()
{
    if (!m_recent)
        return {};
    const MysqlColumn &m = m_physical[m_recent->column];
    if (!mysqlcatalog::isTemporal(m))
        return {}; // a numeric cursor has no clock window
    // The session reads the clock in UTC: `sinceUtc` as seconds since the epoch, or now less the
    // window; the query below prints either in the column's own zone.
    std::string point =
        "NOW(6) - INTERVAL " + std::to_string(std::chrono::microseconds(m_recent->window).count()) + " MICROSECOND";
    if (m_recent->sinceUtc) {
        const auto epoch =
            m_conn.scalar("SELECT UNIX_TIMESTAMP(CAST(" + literal(*m_recent->sinceUtc) + " AS DATETIME(6)))");
        if (!epoch)
            return {};
        point = "FROM_UNIXTIME(" + *epoch + ")";
    }
    const std::string sql = "SELECT DATE_FORMAT(" + point + ", '%Y-%m-%d %H:%i:%s.%f')";
    std::optional<std::string> since;
    if (m.dataType == "timestamp") {
        since = m_conn.scalar(sql);
    } else {
        // DATETIME and DATE cursors are written in the server's local time, as the cursor reader
        // reads its clock.
        m_conn.exec("SET time_zone = DEFAULT");
        try {
            since = m_conn.scalar(sql);
        } catch (...) {
            m_conn.exec("SET time_zone = '+00:00'");
            throw;
        }
        m_conn.exec("SET time_zone = '+00:00'");
    }
    if (!since)
        return {};
    return "COALESCE(" + mysqlIdent(m.name) + " >= CAST(" + literal(*since) +
           (m.dataType == "date" ? " AS DATE)" : " AS DATETIME(6))") + ", 0)";
}

std::unordered_map<std::string, RowData> MysqlSide::rows(const std::vector<CanonicalKey> &keys)
{
    std::unordered_map<std::string, RowData> out;
    if (keys.empty())
        return out;
    std::string sel;
    for (size_t i : m_keys)
        sel += m_cols[i].value + ", ";
    for (const auto &c : m_cols)
        sel += c.value + ", ";
    sel += m_hash;
    const std::string recent = recentExpr();
    if (!recent.empty())
        sel += ", " + recent;
    if (readVersions)
        sel += ", `_driftless_version`";
    const size_t nk = m_keys.size();
    const size_t nc = m_cols.size();
    for (size_t from = 0; from < keys.size(); from += kKeyBatch) {
        const size_t to = std::min(keys.size(), from + kKeyBatch);
        ++queries;
        auto r = m_conn.query("SELECT " + sel + " FROM " + m_from + " WHERE " + whereKeys(keys, from, to));
        for (const auto &row : r.rows) {
            RowData d;
            for (size_t c = 0; c < nk; ++c)
                d.key.push_back(row[c].value_or(""));
            for (size_t c = 0; c < nc; ++c)
                d.values.push_back(row[nk + c]);
            d.hash = std::strtoll(row[nk + nc].value_or("0").c_str(), nullptr, 10);
            size_t at = nk + nc + 1;
            if (!recent.empty())
                d.recent = row[at++].value_or("0") != "0";
            if (readVersions)
                d.version = std::strtoll(row[at].value_or("0").c_str(), nullptr, 10);
            out.emplace(rowhash::recordText({d.key.begin(), d.key.end()}), std::move(d));
        }
        fetched += static_cast<long long>(r.size());
    }
    return out;
}

std::vector<RowData> MysqlSide::rowsByHash(const std::vector<std::int64_t> &hashes)
{
    std::vector<RowData> out;
    if (hashes.empty())
        return out;
    std::string sel;
    for (size_t i = 0; i < m_cols.size(); ++i)
        sel += m_cols[i].value + " AS _dl_c" + std::to_string(i) + ", ";
    sel += m_hash + " AS _dl_h";
    const std::string recent = recentExpr();
    if (!recent.empty())
        sel += ", " + recent + " AS _dl_recent";
    if (readVersions)
        sel += ", `_driftless_version` AS _dl_v";
    std::string list;
    for (size_t i = 0; i < hashes.size(); ++i)
        list += (i ? "," : "") + std::to_string(hashes[i]); // numbers: no text reaches the SQL
    ++queries;
    const size_t nc = m_cols.size();
    m_conn.queryRows("SELECT * FROM (SELECT " + sel + " FROM " + m_from + ") x WHERE _dl_h IN (" + list + ")", {},
                     [&](const MysqlRowView &row) {
                         RowData d;
                         for (unsigned c = 0; c < nc; ++c)
                             d.values.push_back(row.isNull(c) ? std::nullopt : std::optional<std::string>(row.text(c)));
                         unsigned at = static_cast<unsigned>(nc);
                         d.hash = std::strtoll(row.text(at++).c_str(), nullptr, 10);
                         if (!recent.empty())
                             d.recent = row.text(at++) != "0";
                         if (readVersions)
                             d.version = std::strtoll(row.text(at).c_str(), nullptr, 10);
                         out.push_back(std::move(d));
                     });
    fetched += static_cast<long long>(out.size());
    return out;
}

std::unordered_map<std::string, std::string> MysqlSide::copyLines(const std::vector<CanonicalKey> &keys,
                                                                  const mysqlcatalog::MysqlTable &table)
{
    std::unordered_map<std::string, std::string> out;
    std::string sel;
    for (size_t i : m_keys)
        sel += m_cols[i].value + ", ";
    for (size_t i = 0; i < table.columns.size(); ++i)
        sel += std::string(i ? ", " : "") + mysqlcatalog::selectExpr(table.columns[i]);
    const unsigned nk = static_cast<unsigned>(m_keys.size());
    for (size_t from = 0; from < keys.size(); from += kKeyBatch) {
        const size_t to = std::min(keys.size(), from + kKeyBatch);
        m_conn.queryRows("SELECT " + sel + " FROM " + m_from + " WHERE " + whereKeys(keys, from, to), {},
                         [&](const MysqlRowView &row) {
                             std::vector<std::optional<std::string>> key;
                             for (unsigned c = 0; c < nk; ++c)
                                 key.push_back(row.text(c));
                             std::string line;
                             for (size_t c = 0; c < table.columns.size(); ++c) {
                                 if (c)
                                     line += '\t';
                                 mysqlcatalog::appendValue(table, c, row, nk + static_cast<unsigned>(c), line);
                             }
                             out.emplace(rowhash::recordText(key), std::move(line));
                         });
    }
    return out;
}

} // namespace driftless::core::recon
