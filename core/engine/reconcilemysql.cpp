#include "core/engine/reconcilemysql.h"

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

bool isOneOf(const std::string &s, std::initializer_list<const char *> list)
{
    for (const char *x : list)
        if (s == x)
            return true;
    return false;
}

bool isTextType(const MysqlColumn &m)
{
    return isOneOf(m.dataType, {"char", "varchar", "tinytext", "text", "mediumtext", "longtext"});
}

/// A text value as SQL: a hex literal read as utf8mb4, so no value is ever SQL text.
std::string literal(std::string_view v)
{
    std::string out = "CONVERT(X'";
    copytext::appendHex(v, out);
    return out + "' USING utf8mb4)";
}

/// The length in `character(10)`, or 0.
long typeLength(const std::string &typeSql)
{
    const auto open = typeSql.find('(');
    if (open == std::string::npos)
        return 0;
    long n = 0;
    std::from_chars(typeSql.data() + open + 1, typeSql.data() + typeSql.size(), n);
    return n;
}

/// Text in one charset and a bytewise collation, so every piece of a record concatenates alike
/// (a latin1 or case-insensitive column converts; MD5 then hashes its UTF-8 bytes).
std::string utf8(const std::string &e) { return "CONVERT(" + e + " USING utf8mb4) COLLATE utf8mb4_bin"; }

/// Decimal text without trailing fractional zeros (`1.50` -> `1.5`, `2.00` -> `2`, `01:02:03.500000` -> `01:02:03.5`).
std::string trimFraction(const std::string &e)
{
    return "IF(LOCATE('.', " + e + ") > 0, TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM " + e + ")), " + e + ")";
}

/// The 16 hex digits of a double's IEEE-754 bytes, computed in SQL: MySQL has no function for
/// them. The exponent comes from LOG2, corrected by one either way where LOG2 rounds across a
/// power of two; the mantissa is the scaled fraction, exact in a double (scaling by powers of two
/// is exact). Integer types throughout: MariaDB rounds doubles that carry a fixed number of
/// decimals (FLOOR's result) when converting them. 0 and -0 both give 0, as Postgres' x + 0 does.
std::string floatHex(const std::string &d)
{
    const std::string a = "ABS(" + d + ")";
    const std::string e0 = "LEAST(GREATEST(CAST(FLOOR(LOG2(" + a + ")) AS SIGNED), -1022), 1023)";
    const std::string e = "(" + e0 + " + (" + a + " / POW(2, " + e0 + ") >= 2) - (" + a + " / POW(2, " + e0 + ") < 1))";
    const std::string normal = "(CAST(" + e + " + 1023 AS UNSIGNED) << 52) | CAST((" + a + " / POW(2, " + e +
                               ") - 1) * 4503599627370496 AS UNSIGNED)";
    // Subnormals: the mantissa is the value times 2^1074 (in two steps: 2^1074 is no double).
    const std::string sub = "CAST(" + a + " * POW(2, 537) * POW(2, 537) AS UNSIGNED)";
    const std::string bits = "IF(" + d + " = 0, CAST(0 AS UNSIGNED), (IF(" + d + " < 0, 1, 0) << 63) | IF(" + a +
                             " < 2.2250738585072014e-308, " + sub + ", " + normal + "))";
    return "IF(" + d + " IS NULL, NULL, LPAD(LOWER(HEX(" + bits + ")), 16, '0'))";
}

/// A DATETIME/TIMESTAMP as text: as the readers print it (`fsp` digits), or as Postgres does
/// (trailing fractional zeros dropped).
std::string timestampText(const std::string &q, const MysqlColumn &m, bool pgText)
{
    if (!pgText)
        return "CAST(" + q + " AS CHAR)";
    const std::string whole = "DATE_FORMAT(" + q + ", '%Y-%m-%d %H:%i:%s')";
    if (m.fsp == 0)
        return whole;
    return "CONCAT(" + whole + ", IF(MICROSECOND(" + q + ") = 0, '', CONCAT('.', TRIM(TRAILING '0' FROM DATE_FORMAT(" +
           q + ", '%f')))))";
}

enum class Quote {
    Never,     ///< the text never needs quotes in a record (digits, signs, dots, colons)
    Always,    ///< always quoted, nothing to double inside (timestamps: a space)
    Backslash, ///< `\x` and hex digits: always quoted, the backslash doubled
    Check,     ///< anything: the record rules apply
};

} // namespace

MysqlCanonical mysqlCanonical(const ColumnInfo &l, const MysqlColumn &m, bool pgText)
{
    const std::string q = mysqlIdent(m.name);
    std::string v;
    std::string hex; // Quote::Backslash: the hex digits after `\x`
    Quote quote = Quote::Check;
    switch (rowhash::canonFor(l)) {
    case Canon::Integer:
        v = m.dataType == "year" ? "CAST(" + q + " + 0 AS CHAR)" : "CAST(" + q + " AS CHAR)";
        quote = Quote::Never;
        break;
    case Canon::Boolean:
        v = "CASE WHEN " + q + " IS NULL THEN NULL WHEN " + q + " <> 0 THEN 't' ELSE 'f' END";
        quote = Quote::Never;
        break;
    case Canon::Float:
        hex = floatHex(m.form == ValueForm::Float ? "CAST(" + q + " AS DOUBLE)" : q);
        quote = Quote::Backslash;
        break;
    case Canon::Bytes:
        hex = "LOWER(HEX(" + q + "))";
        quote = Quote::Backslash;
        break;
    case Canon::TimestampTz:
        v = "CONCAT(" + timestampText(q, m, pgText) + ", '+00')";
        quote = Quote::Always;
        break;
    case Canon::Numeric:
        v = trimFraction(isTextType(m) ? q : "CAST(" + q + " AS CHAR)");
        quote = Quote::Never;
        break;
    case Canon::Text:
        if (m.dataType == "datetime" || m.dataType == "timestamp") {
            v = timestampText(q, m, pgText);
            quote = Quote::Always;
        } else if (m.dataType == "date") {
            v = "CAST(" + q + " AS CHAR)";
            quote = Quote::Never;
        } else if (m.dataType == "time") {
            // MySQL TIME is a Postgres interval (MySQL source) or time (Postgres source):
            // Postgres prints both without trailing fractional zeros.
            v = pgText ? trimFraction("CAST(" + q + " AS CHAR)") : "CAST(" + q + " AS CHAR)";
            quote = Quote::Never;
        } else if (m.dataType == "bit") {
            v = "LPAD(BIN(" + q + "), " + std::to_string(std::max(1, m.precision)) + ", '0')";
            quote = Quote::Never;
        } else if (pgText && !l.isArray && l.baseType == "bpchar" && m.dataType == "char" &&
                   typeLength(l.typeSql) > 0) {
            // Postgres keeps char(n)'s padding in its text; MySQL drops it when reading.
            v = "RPAD(" + utf8(q) + ", " + std::to_string(typeLength(l.typeSql)) + ", ' ')";
        } else {
            v = utf8(q);
        }
        break;
    }
    MysqlCanonical c;
    switch (quote) {
    case Quote::Never:
        c.value = v;
        c.field = "COALESCE(" + v + ", '')";
        break;
    case Quote::Always:
        c.value = v;
        c.field = "COALESCE(CONCAT('\"', " + v + ", '\"'), '')";
        break;
    case Quote::Backslash:
        c.value = "CONCAT('\\\\x', " + hex + ")";
        c.field = "COALESCE(CONCAT('\"\\\\\\\\x', " + hex + ", '\"'), '')";
        break;
    case Quote::Check:
        // Quoted when empty (CHAR_LENGTH: under PAD SPACE collations ' ' = '') or holding
        // " \ ( ) , or white space; " and \ doubled inside, as ROW()::text does.
        c.value = v;
        c.field = "IF(" + v + " IS NULL, '', IF(CHAR_LENGTH(" + v + ") = 0 OR " + v +
                  " REGEXP '[\"\\\\\\\\(), \\\\t\\\\n\\\\r\\\\x0b\\\\f]', CONCAT('\"', REPLACE(REPLACE(" + v +
                  ", '\\\\', '\\\\\\\\'), '\"', '\"\"'), '\"'), " + v + "))";
        break;
    }
    return c;
}

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

std::string MysqlSide::describe() const { return m_conn.dsn().display() + " " + m_from; }

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
    auto r = m_conn.query("SELECT _dl_b" + outer + " FROM (SELECT _dl_b" + outer +
                          ", ROW_NUMBER() OVER (PARTITION BY _dl_b ORDER BY " + order + ") AS _dl_rn FROM (SELECT " +
                          treeSql(plan) + " AS _dl_b" + inner + " FROM " + m_from +
                          ") s WHERE _dl_b IS NOT NULL) x WHERE _dl_rn % " + std::to_string(step) +
                          " = 0 ORDER BY _dl_b, _dl_rn");
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
    fetched += m_conn.stream("SELECT " + sel + m_hash + " FROM " + m_from +
                                 (tree == "0" ? std::string() : " WHERE " + tree + " IS NOT NULL"),
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
            tuple += std::string(k ? ", " : "") +
                     (byCanon[k] ? utf8(literal(keys[n][k])) : keyExpr(k, keys[n][k]));
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
    const std::string sql = "SELECT DATE_FORMAT(NOW(6) - INTERVAL " +
                            std::to_string(std::chrono::microseconds(m_recent->window).count()) +
                            " MICROSECOND, '%Y-%m-%d %H:%i:%s.%f')";
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
            if (!recent.empty())
                d.recent = row[nk + nc + 1].value_or("0") != "0";
            out.emplace(rowhash::recordText({d.key.begin(), d.key.end()}), std::move(d));
        }
        fetched += static_cast<long long>(r.size());
    }
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
