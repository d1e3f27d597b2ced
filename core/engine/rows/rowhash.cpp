#include "core/engine/rows/rowhash.h"

#include "core/mergers/sqlitetypes.h"
#include "core/model/error.h"
#include "core/model/tableref.h"

#include <openssl/evp.h>
#include <sqlite3.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

namespace driftless::core::rowhash {

namespace {

__extension__ typedef unsigned __int128 U128;

U128 toU128(const Checksum &c)
{
    return (static_cast<U128>(c.sumHigh) << 64) | c.sumLow;
}

bool needsQuotes(std::string_view v)
{
    if (v.empty())
        return true;
    for (char ch : v) {
        switch (ch) {
        case '"':
        case '\\':
        case '(':
        case ')':
        case ',':
        case ' ':
        case '\t':
        case '\n':
        case '\r':
        case '\v':
        case '\f':
            return true;
        default:
            break;
        }
    }
    return false;
}

constexpr char kHex[] = "0123456789abcdef";

/// MD5 through OpenSSL with the algorithm fetched once per thread (a fetch per row costs more
/// than the digest).
struct Md5 {
    EVP_MD *md = EVP_MD_fetch(nullptr, "MD5", nullptr);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    ~Md5()
    {
        EVP_MD_CTX_free(ctx);
        EVP_MD_free(md);
    }
};

std::int64_t md5Prefix60(std::string_view data)
{
    thread_local Md5 m;
    if (!m.md || !m.ctx)
        throw Error(ErrorKind::Permanent, "MD5 is not available from OpenSSL on this system");
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestInit_ex2(m.ctx, m.md, nullptr) != 1 || EVP_DigestUpdate(m.ctx, data.data(), data.size()) != 1 ||
        EVP_DigestFinal_ex(m.ctx, out, &len) != 1)
        throw Error(ErrorKind::Permanent, "MD5 digest failed");
    // The first 15 hex digits (60 bits), as Postgres reads ('x' || substr(md5(...), 1, 15))::bit(60).
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v = (v << 8) | out[i];
    return static_cast<std::int64_t>(v >> 4);
}

std::string canonOfSqliteValue(Canon canon, sqlite3_value *v)
{
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER: {
        const auto n = sqlite3_value_int64(v);
        if (canon == Canon::Boolean)
            return n ? "t" : "f";
        if (canon == Canon::Float)
            return floatBytes(static_cast<double>(n));
        return std::to_string(n);
    }
    case SQLITE_FLOAT: {
        const double d = sqlite3_value_double(v);
        if (canon == Canon::Float)
            return floatBytes(d);
        char buf[64];
        auto [p, ec] = std::to_chars(buf, buf + sizeof buf, d);
        return std::string(buf, ec == std::errc() ? p : buf);
    }
    case SQLITE_BLOB: {
        const auto *b = static_cast<const unsigned char *>(sqlite3_value_blob(v));
        const int n = sqlite3_value_bytes(v);
        std::string out = "\\x";
        out.reserve(2 + 2 * static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
            out += kHex[b[i] >> 4];
            out += kHex[b[i] & 15];
        }
        return out;
    }
    default: {
        const auto *t = reinterpret_cast<const char *>(sqlite3_value_text(v));
        return canonicalFromSqliteText(canon,
                                       std::string_view(t ? t : "", static_cast<size_t>(sqlite3_value_bytes(v))));
    }
    }
}

void buildRecord(sqlite3_context *ctx, int argc, sqlite3_value **argv, std::string &record)
{
    const auto *spec = reinterpret_cast<const char *>(sqlite3_value_text(argv[0]));
    const size_t specLen = spec ? static_cast<size_t>(sqlite3_value_bytes(argv[0])) : 0;
    if (specLen != static_cast<size_t>(argc - 1)) {
        sqlite3_result_error(ctx, "driftless: column spec does not match the arguments", -1);
        return;
    }
    record.clear();
    record += '(';
    for (int i = 1; i < argc; ++i) {
        if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
            appendRecordField(record, std::nullopt, i == 1);
        else
            appendRecordField(record, canonOfSqliteValue(static_cast<Canon>(spec[i - 1]), argv[i]), i == 1);
    }
    record += ')';
}

void sqlRowHash(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    thread_local std::string record;
    buildRecord(ctx, argc, argv, record);
    sqlite3_result_int64(ctx, md5Prefix60(record));
}

/// driftless_record_part(spec, v...): the fields of a record without its parentheses, for
/// rows wider than a SQLite function takes arguments (127); driftless_rowhash_parts(part...)
/// joins them and hashes the record exactly as driftless_rowhash hashes it in one call.
void sqlRecordPart(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    std::string record;
    buildRecord(ctx, argc, argv, record);
    if (record.size() < 2)
        return; // buildRecord reported the error
    sqlite3_result_text(ctx, record.data() + 1, static_cast<int>(record.size() - 2), SQLITE_TRANSIENT);
}

void sqlRowHashParts(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    thread_local std::string record;
    record.assign(1, '(');
    for (int i = 0; i < argc; ++i) {
        if (i)
            record += ',';
        const auto *p = reinterpret_cast<const char *>(sqlite3_value_text(argv[i]));
        if (p)
            record.append(p, static_cast<size_t>(sqlite3_value_bytes(argv[i])));
    }
    record += ')';
    sqlite3_result_int64(ctx, md5Prefix60(record));
}

void sqlRecord(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    std::string record;
    buildRecord(ctx, argc, argv, record);
    sqlite3_result_text(ctx, record.data(), static_cast<int>(record.size()), SQLITE_TRANSIENT);
}

void sqlCanon(sqlite3_context *ctx, int, sqlite3_value **argv)
{
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    const auto *code = reinterpret_cast<const char *>(sqlite3_value_text(argv[0]));
    const std::string s = canonOfSqliteValue(static_cast<Canon>(code && *code ? *code : 'T'), argv[1]);
    sqlite3_result_text(ctx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

void sqlHashSumStep(sqlite3_context *ctx, int, sqlite3_value **argv)
{
    auto *c = static_cast<Checksum *>(sqlite3_aggregate_context(ctx, sizeof(Checksum)));
    if (c && sqlite3_value_type(argv[0]) != SQLITE_NULL)
        c->add(sqlite3_value_int64(argv[0]));
}

void sqlHashSumFinal(sqlite3_context *ctx)
{
    auto *c = static_cast<Checksum *>(sqlite3_aggregate_context(ctx, 0));
    const std::string s = c ? c->sumDecimal() : "0";
    sqlite3_result_text(ctx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

} // namespace

Canon canonFor(const ColumnInfo &c)
{
    switch (sqliteStorageFor(c)) {
    case SqliteStorage::Integer:
        return Canon::Integer;
    case SqliteStorage::Boolean:
        return Canon::Boolean;
    case SqliteStorage::Real:
    case SqliteStorage::Real4:
        return Canon::Float;
    case SqliteStorage::Blob:
        return Canon::Bytes;
    case SqliteStorage::TimestampTz:
        return Canon::TimestampTz;
    case SqliteStorage::Text:
        break;
    }
    return !c.isArray && c.baseType == "numeric" ? Canon::Numeric : Canon::Text;
}

std::string canonSpec(const std::vector<ColumnInfo> &columns)
{
    std::string s;
    for (const auto &c : columns)
        s += static_cast<char>(canonFor(c));
    return s;
}

std::string pgCanonical(const ColumnInfo &c, const std::string &quotedColumn)
{
    switch (canonFor(c)) {
    case Canon::Numeric:
        return "trim_scale(" + quotedColumn + ")";
    case Canon::Float:
        return "float8send(" + quotedColumn + "::float8 + 0::float8)";
    default:
        return quotedColumn;
    }
}

std::string pgCanonicalText(const ColumnInfo &c, const std::string &quotedColumn)
{
    const std::string e = pgCanonical(c, quotedColumn);
    // A cast of char(n) to text drops its padding, and a boolean's cast says true/false; their
    // output (and so ROW()'s text) keeps the padding and says t/f.
    if (!c.isArray && (c.baseType == "bpchar" || c.baseType == "bool"))
        return pgOutputText(e);
    return e + "::text";
}

std::string pgRecordText(const std::vector<ColumnInfo> &columns, const std::string &alias)
{
    std::string s = "ROW(";
    for (size_t i = 0; i < columns.size(); ++i)
        s += (i ? ", " : "") + pgCanonical(columns[i], alias + "." + quoteIdent(columns[i].name));
    return s + ")::text";
}

std::string pgRowHash(const std::vector<ColumnInfo> &columns, const std::string &alias)
{
    return "('x' || substr(md5(" + pgRecordText(columns, alias) + "), 1, 15))::bit(60)::bigint";
}

std::string pgRowHashNative(const std::vector<ColumnInfo> &columns, const std::string &alias)
{
    return "(hashtextextended(" + pgRecordText(columns, alias) + ", 0) & 1152921504606846975)";
}

bool pgHashesNatively(const ColumnInfo &c)
{
    // Types whose own hash treats two values alike exactly when their canonical text is alike
    // (numeric ignores trailing zeros as trim_scale does; timestamptz hashes the instant). Not
    // floats (-0 = 0, but their canonical bytes differ) nor intervals ('1 day' = '24 hours').
    static const char *const kTypes[] = {"int2",      "int4",        "int8", "numeric", "text",
                                         "varchar",   "bpchar",      "bool", "date",    "time",
                                         "timestamp", "timestamptz", "uuid", "bytea",   "jsonb"};
    if (c.isArray || !c.isBuiltinType())
        return false;
    for (const char *t : kTypes)
        if (c.baseType == t)
            return true;
    return false;
}

std::string pgRowHashRecord(const std::vector<ColumnInfo> &columns, const std::vector<bool> &native,
                            const std::string &alias)
{
    std::string s = "(hash_record_extended(ROW(";
    for (size_t i = 0; i < columns.size(); ++i) {
        const std::string col = alias + "." + quoteIdent(columns[i].name);
        s += i ? ", (" : "(";
        // COLLATE "C": a nondeterministic collation would hash 'a' and 'A' alike.
        if (i < native.size() && native[i]) {
            s += col;
            s += columns[i].category == 'S' ? " COLLATE \"C\")" : ")";
        } else {
            s += pgCanonicalText(columns[i], col);
            s += " COLLATE \"C\")";
        }
    }
    return s + "), 0) & 1152921504606846975)";
}

std::vector<bool> pgRecordHashMask(const std::vector<ColumnInfo> &columns, const std::vector<ColumnInfo> &other)
{
    std::vector<bool> native(columns.size(), false);
    for (size_t i = 0; i < columns.size(); ++i)
        for (const auto &o : other)
            if (o.name == columns[i].name)
                native[i] = pgHashesNatively(columns[i]) && pgHashesNatively(o) && columns[i].baseType == o.baseType;
    return native;
}

std::string pgRecordHashProbeSql()
{
    return "SELECT hash_record_extended(ROW(1::int8, 2::int4, 3::int2, 1.50::numeric, 'probe'::text, 'x'::varchar, "
           "'y'::bpchar, true, '2020-02-03'::date, '04:05:06.7'::time, '2020-02-03 04:05:06.789'::timestamp, "
           "'2020-02-03 04:05:06.789+00'::timestamptz, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, "
           "'\\x0102'::bytea, '{\"a\": [1, 2]}'::jsonb, NULL::text), 0)";
}

void appendRecordField(std::string &record, const std::optional<std::string> &value, bool first)
{
    if (!first)
        record += ',';
    if (!value)
        return;
    if (!needsQuotes(*value)) {
        record += *value;
        return;
    }
    record += '"';
    for (char ch : *value) {
        if (ch == '"' || ch == '\\')
            record += ch;
        record += ch;
    }
    record += '"';
}

std::string recordText(const std::vector<std::optional<std::string>> &values)
{
    std::string r = "(";
    for (size_t i = 0; i < values.size(); ++i)
        appendRecordField(r, values[i], i == 0);
    return r + ")";
}

std::int64_t hashRecord(std::string_view record)
{
    return md5Prefix60(record);
}

std::string trimNumeric(std::string_view text)
{
    std::string s(text);
    const auto dot = s.find('.');
    if (dot == std::string::npos || s.find_first_of("eE") != std::string::npos)
        return s;
    size_t end = s.size();
    while (end > dot + 1 && s[end - 1] == '0')
        --end;
    if (end == dot + 1)
        --end;
    s.resize(end);
    if (s == "-0")
        s = "0";
    return s;
}

std::string floatBytes(double d)
{
    d = d + 0.0; // -0 becomes 0, as in Postgres' x + 0
    if (std::isnan(d))
        d = std::numeric_limits<double>::quiet_NaN();
    const auto bits = std::bit_cast<std::uint64_t>(d);
    std::string out = "\\x";
    for (int shift = 60; shift >= 0; shift -= 4)
        out += kHex[(bits >> shift) & 15];
    return out;
}

std::string canonicalFromSqliteText(Canon canon, std::string_view text)
{
    switch (canon) {
    case Canon::Numeric:
        return trimNumeric(text);
    case Canon::TimestampTz:
        if (text.size() > 6 && text.substr(text.size() - 6) == "+00:00")
            return std::string(text.substr(0, text.size() - 3));
        return std::string(text);
    case Canon::Float:
        if (text == "NaN")
            return floatBytes(std::numeric_limits<double>::quiet_NaN());
        if (text == "Infinity")
            return floatBytes(std::numeric_limits<double>::infinity());
        if (text == "-Infinity")
            return floatBytes(-std::numeric_limits<double>::infinity());
        {
            double d = 0;
            auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
            if (ec == std::errc())
                return floatBytes(d);
        }
        return std::string(text);
    case Canon::Boolean:
        if (text == "1" || text == "t" || text == "true")
            return "t";
        if (text == "0" || text == "f" || text == "false")
            return "f";
        return std::string(text);
    default:
        return std::string(text);
    }
}

void Checksum::add(std::int64_t hash)
{
    ++rows;
    U128 s = toU128(*this) + static_cast<U128>(static_cast<std::uint64_t>(hash));
    sumHigh = static_cast<unsigned long long>(s >> 64);
    sumLow = static_cast<unsigned long long>(s);
}

Checksum Checksum::fromDecimal(long long rows, std::string_view sum)
{
    Checksum c;
    c.rows = rows;
    U128 s = 0;
    for (char ch : sum) {
        if (ch == '.')
            break; // a numeric sum of integers prints no fraction; be tolerant anyway
        if (ch < '0' || ch > '9')
            throw Error(ErrorKind::Permanent, "checksum is not a non-negative integer: " + std::string(sum));
        s = s * 10 + static_cast<unsigned>(ch - '0');
    }
    c.sumHigh = static_cast<unsigned long long>(s >> 64);
    c.sumLow = static_cast<unsigned long long>(s);
    return c;
}

std::string Checksum::sumDecimal() const
{
    U128 s = toU128(*this);
    if (s == 0)
        return "0";
    std::string out;
    while (s > 0) {
        out += static_cast<char>('0' + static_cast<int>(s % 10));
        s /= 10;
    }
    return std::string(out.rbegin(), out.rend());
}

void registerSqliteFunctions(sqlite3 *db)
{
    constexpr int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
    int rc =
        sqlite3_create_function_v2(db, "driftless_rowhash", -1, flags, nullptr, sqlRowHash, nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "driftless_record", -1, flags, nullptr, sqlRecord, nullptr, nullptr,
                                        nullptr);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "driftless_canon", 2, flags, nullptr, sqlCanon, nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "driftless_record_part", -1, flags, nullptr, sqlRecordPart, nullptr,
                                        nullptr, nullptr);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "driftless_rowhash_parts", -1, flags, nullptr, sqlRowHashParts, nullptr,
                                        nullptr, nullptr);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "driftless_hashsum", 1, flags, nullptr, nullptr, sqlHashSumStep,
                                        sqlHashSumFinal, nullptr);
    if (rc != SQLITE_OK)
        throw Error(ErrorKind::Permanent,
                    std::string("cannot register the reconciliation functions in SQLite: ") + sqlite3_errmsg(db));
}

} // namespace driftless::core::rowhash
