#include "tests/conformance/zoooracle.h"

#include "core/model/tableref.h"

#include <openssl/evp.h>
#include <sqlite3.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace driftless::zoo {

namespace {

constexpr const char *kColumns = R"sql(
SELECT a.attname,
       CASE WHEN t.typcategory = 'A' THEN '[]' ELSE bt.typname END,
       bt.typtype
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
)sql";

Kind kindOf(const std::string &type, const std::string &typtype)
{
    if (type == "[]" || typtype == "e" || typtype == "c" || typtype == "r" || typtype == "m")
        return Kind::Text;
    if (type == "int2" || type == "int4" || type == "int8" || type == "oid")
        return Kind::Int;
    if (type == "numeric")
        return Kind::Numeric;
    if (type == "bool")
        return Kind::Bool;
    if (type == "timestamptz")
        return Kind::Tstz;
    if (type == "timestamp")
        return Kind::Ts;
    if (type == "date")
        return Kind::Date;
    if (type == "bytea")
        return Kind::Bytea;
    if (type == "json")
        return Kind::Json;
    if (type == "jsonb")
        return Kind::Jsonb;
    return Kind::Text;
}

std::string pgValue(const OracleColumn &c)
{
    const std::string q = core::quoteIdent(c.name);
    const std::string t = q + "::text";
    switch (c.kind) {
    case Kind::Int:
        return t;
    // Scale differs across engines (numeric(12,2) against a free numeric): no trailing zeros.
    case Kind::Numeric:
        return "CASE WHEN " + t + " LIKE '%.%' THEN rtrim(rtrim(" + t + ", '0'), '.') ELSE " + t + " END";
    case Kind::Bool:
        return "CASE WHEN " + q + " THEN 't' ELSE 'f' END";
    case Kind::Tstz:
        return "to_char(" + q + " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US')";
    case Kind::Ts:
        return "to_char(" + q + ", 'YYYY-MM-DD\"T\"HH24:MI:SS.US')";
    case Kind::Date:
        return "to_char(" + q + ", 'YYYY-MM-DD')";
    case Kind::Bytea:
        return "encode(" + q + ", 'hex')";
    case Kind::Jsonb:
        return q + "::jsonb::text";
    case Kind::Json:
    case Kind::Text:
        return t;
    }
    return t;
}

/// The SQLite forms of docs/type-mapping.md ("Postgres → SQLite") brought to the same text.
std::string sqliteValue(const OracleColumn &c)
{
    const std::string q = core::quoteIdent(c.name);
    switch (c.kind) {
    case Kind::Int:
        return "CASE typeof(" + q + ") WHEN 'integer' THEN CAST(" + q + " AS TEXT) ELSE 'not-integer:' || " + q +
               " END";
    case Kind::Numeric:
        return "CASE WHEN typeof(" + q + ") <> 'text' THEN 'not-text:' || " + q + " WHEN " + q +
               " LIKE '%.%' THEN rtrim(rtrim(" + q + ", '0'), '.') ELSE " + q + " END";
    case Kind::Bool:
        return "CASE " + q + " WHEN 1 THEN 't' WHEN 0 THEN 'f' ELSE 'not-bool:' || " + q + " END";
    case Kind::Tstz:
    case Kind::Ts: {
        // 'YYYY-MM-DD HH:MM:SS[.f…]' then, for timestamptz, '+00:00' (or '+00'): UTC, micros padded.
        const std::string end = "(instr(" + q + " || '+', '+'))";
        std::string s = "substr(" + q + ", 1, 10) || 'T' || substr(" + q +
                        ", 12, 8) || '.' || substr(CASE WHEN substr(" + q + ", 20, 1) = '.' THEN substr(" + q +
                        ", 21, " + end + " - 21) ELSE '' END || '000000', 1, 6)";
        if (c.kind == Kind::Tstz)
            s += " || CASE WHEN substr(" + q + ", " + end +
                 ") IN ('+00:00', '+00') THEN '' ELSE ' offset:' || substr(" + q + ", " + end + ") END";
        else
            s += " || CASE WHEN instr(" + q + ", '+') = 0 THEN '' ELSE ' offset?' END";
        return s;
    }
    case Kind::Date:
        return q;
    case Kind::Bytea:
        return "CASE typeof(" + q + ") WHEN 'blob' THEN lower(hex(" + q + ")) ELSE 'not-blob:' || " + q + " END";
    // Postgres's text form, so exact text: SQLite's json() minifies and keeps key order, which
    // jsonb::text does not; json_valid guards that it is JSON at all.
    case Kind::Json:
    case Kind::Jsonb:
        return "CASE WHEN json_valid(" + q + ") THEN " + q + " ELSE 'not-json:' || " + q + " END";
    case Kind::Text:
        return "CASE typeof(" + q + ") WHEN 'text' THEN " + q + " ELSE typeof(" + q + ") || ':' || " + q + " END";
    }
    return q;
}

/// a || b || ... as a balanced tree: SQLite allows an expression depth of 1,000 and the wide
/// table has 1,000 columns.
std::string concat(const std::vector<std::string> &parts, size_t from, size_t to)
{
    if (to - from == 1)
        return parts[from];
    size_t mid = from + (to - from) / 2;
    return "(" + concat(parts, from, mid) + " || " + concat(parts, mid, to) + ")";
}

std::string rowExpr(const std::vector<OracleColumn> &cols, bool sqlite)
{
    std::vector<std::string> parts;
    for (size_t i = 0; i < cols.size(); ++i) {
        const std::string v = sqlite ? sqliteValue(cols[i]) : pgValue(cols[i]);
        // Length-prefixed, so NULL ('N') is apart from '' ('0:') and a '|' inside a value cannot
        // shift a field.
        parts.push_back(sqlite ? "coalesce(CAST(length(" + v + ") AS TEXT) || ':' || " + v + ", 'N')"
                               : "coalesce(length(" + v + ")::text || ':' || " + v + ", 'N')");
        if (i + 1 < cols.size())
            parts.push_back("'|'");
    }
    return concat(parts, 0, parts.size());
}

struct Lite {
    sqlite3 *db = nullptr;
    explicit Lite(const std::string &file)
    {
        if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
            throw std::runtime_error("cannot open " + file + ": " + (db ? sqlite3_errmsg(db) : "?"));
        sqlite3_busy_timeout(db, 10000);
    }
    ~Lite() { sqlite3_close(db); }
    Lite(const Lite &) = delete;
    Lite &operator=(const Lite &) = delete;

    template <typename F> void each(const std::string &sql, F &&f)
    {
        sqlite3_stmt *st = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
            throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db) + " in " + sql.substr(0, 300));
        std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> guard(st, sqlite3_finalize);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            auto p = reinterpret_cast<const char *>(sqlite3_column_text(st, 0));
            f(std::string(p ? p : "", static_cast<size_t>(sqlite3_column_bytes(st, 0))));
        }
        if (rc != SQLITE_DONE)
            throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db));
    }
};

std::string sqliteSelect(const std::vector<OracleColumn> &cols, const std::string &table)
{
    return "SELECT " + sqliteRowExpr(cols) + " AS r FROM " + core::quoteIdent(table) + " ORDER BY r";
}

std::string pgSelect(const std::vector<OracleColumn> &cols, const std::string &from)
{
    return "SELECT " + pgRowExpr(cols) + " AS r FROM " + from;
}

} // namespace

std::vector<OracleColumn> sourceColumns(core::PgConnection &src, const std::string &tableSql)
{
    auto r = src.execParams(kColumns, {tableSql});
    std::vector<OracleColumn> out;
    for (int i = 0; i < r.rows(); ++i)
        out.push_back({r.text(i, 0), kindOf(r.text(i, 1), r.text(i, 2))});
    return out;
}

void prepareSession(core::PgConnection &conn)
{
    conn.exec("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'postgres'; "
              "SET extra_float_digits = 3; SET bytea_output = 'hex'");
}

std::string pgRowExpr(const std::vector<OracleColumn> &cols)
{
    return rowExpr(cols, false);
}
std::string sqliteRowExpr(const std::vector<OracleColumn> &cols)
{
    return rowExpr(cols, true);
}

Digest pgDigest(core::PgConnection &conn, const std::vector<OracleColumn> &cols, const std::string &from)
{
    auto r = conn.exec("SELECT count(*), coalesce(md5(string_agg(r, E'\\n' ORDER BY r COLLATE \"C\")), '') FROM (" +
                       pgSelect(cols, from) + ") s");
    return {r.toInt(0, 0), r.text(0, 1)};
}

Digest sqliteDigest(const std::string &file, const std::vector<OracleColumn> &cols, const std::string &table)
{
    Lite lite(file);
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    EVP_DigestInit_ex(ctx.get(), EVP_md5(), nullptr);
    Digest d;
    lite.each(sqliteSelect(cols, table), [&](const std::string &row) {
        if (d.rows++)
            EVP_DigestUpdate(ctx.get(), "\n", 1);
        EVP_DigestUpdate(ctx.get(), row.data(), row.size());
    });
    if (d.rows == 0)
        return d;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx.get(), md, &len);
    static const char *hex = "0123456789abcdef";
    for (unsigned i = 0; i < len; ++i) {
        d.md5 += hex[md[i] >> 4];
        d.md5 += hex[md[i] & 15];
    }
    return d;
}

std::vector<std::string> pgRows(core::PgConnection &conn, const std::vector<OracleColumn> &cols,
                                const std::string &from)
{
    auto r = conn.exec("SELECT r FROM (" + pgSelect(cols, from) + ") s ORDER BY r COLLATE \"C\"");
    std::vector<std::string> out;
    for (int i = 0; i < r.rows(); ++i)
        out.push_back(r.text(i, 0));
    return out;
}

std::vector<std::string> sqliteRows(const std::string &file, const std::vector<OracleColumn> &cols,
                                    const std::string &table)
{
    Lite lite(file);
    std::vector<std::string> out;
    lite.each(sqliteSelect(cols, table), [&](const std::string &row) { out.push_back(row); });
    return out;
}

std::string describeDifference(const std::vector<std::string> &source, const std::vector<std::string> &target,
                               int limit)
{
    std::vector<std::string> a = source, b = target, onlyA, onlyB;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(onlyA));
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(onlyB));
    auto shorten = [](const std::string &s) { return s.size() > 400 ? s.substr(0, 400) + "…" : s; };
    std::string out = std::to_string(onlyA.size()) + " rows only on the source, " + std::to_string(onlyB.size()) +
                      " only on the target\n";
    for (int i = 0; i < limit && i < static_cast<int>(onlyA.size()); ++i)
        out += "    source: " + shorten(onlyA[static_cast<size_t>(i)]) + "\n";
    for (int i = 0; i < limit && i < static_cast<int>(onlyB.size()); ++i)
        out += "    target: " + shorten(onlyB[static_cast<size_t>(i)]) + "\n";
    return out;
}

} // namespace driftless::zoo
