#include "core/mergers/mysqltypes.h"

#include "core/base/copytext.h"
#include "core/model/error.h"

#include <charconv>
#include <cstdio>

namespace driftless::core {

namespace {

// InnoDB keys hold at most 3072 bytes: 768 utf8mb4 characters.
constexpr long kMaxKeyChars = 768;
constexpr long kMaxVarchar = 255;

/// The length in `varchar(40)` / `character(3)`, or -1.
long typeLength(const std::string &typeSql)
{
    auto open = typeSql.find('(');
    if (open == std::string::npos)
        return -1;
    long n = -1;
    auto close = typeSql.find_first_of(",)", open + 1);
    std::from_chars(typeSql.data() + open + 1, typeSql.data() + close, n);
    return n;
}

/// precision and scale of `numeric(12,2)`, or {-1, -1} when unconstrained.
std::pair<long, long> numericTypmod(const std::string &typeSql)
{
    auto open = typeSql.find('(');
    if (open == std::string::npos)
        return {-1, -1};
    long p = -1, s = 0;
    auto comma = typeSql.find(',', open);
    auto close = typeSql.find(')', open);
    std::from_chars(typeSql.data() + open + 1, typeSql.data() + (comma < close ? comma : close), p);
    if (comma < close)
        std::from_chars(typeSql.data() + comma + 1, typeSql.data() + close, s);
    return {p, s};
}

[[noreturn]] void refuse(std::string_view column, std::string_view value, const std::string &why)
{
    throw Error(ErrorKind::Permanent,
                "column " + std::string(column) + ": value '" + std::string(value.substr(0, 80)) + "' " + why, {},
                "MySQL/MariaDB cannot hold this value; fix it on the source, or leave the column out with a view "
                "(docs/type-mapping.md)");
}

void appendQuoted(std::string &sql, std::string_view value)
{
    sql += '\'';
    for (char c : value) {
        switch (c) {
        case '\0':
            sql += "\\0";
            break;
        case '\'':
            sql += "\\'";
            break;
        case '\\':
            sql += "\\\\";
            break;
        case '\n':
            sql += "\\n";
            break;
        case '\r':
            sql += "\\r";
            break;
        case '\x1a':
            sql += "\\Z";
            break;
        default:
            sql += c;
        }
    }
    sql += '\'';
}

long long daysFromCivil(long long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long long>(doe) - 719468;
}

void civilFromDays(long long z, long long &y, unsigned &m, unsigned &d)
{
    z += 719468;
    const long long era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = static_cast<long long>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
}

void checkPlainDate(std::string_view v, std::string_view column)
{
    if (v == "infinity" || v == "-infinity")
        refuse(column, v, "is infinite; MySQL dates end at 9999-12-31");
    if (v.find(" BC") != std::string_view::npos)
        refuse(column, v, "is before year 1; MySQL dates start at 0001-01-01");
    if (v.size() < 10 || v[4] != '-')
        refuse(column, v, "is outside MySQL's date range 0001-01-01..9999-12-31");
}

/// The fractional-second digits of `timestamp(3) ...` / `time(0) ...`: 6 (Postgres' default and
/// MySQL's most) when the type names none.
std::string fspOf(const std::string &typeSql)
{
    const auto open = typeSql.find('(');
    if (open == std::string::npos || open + 1 >= typeSql.size() || typeSql[open + 1] < '0' || typeSql[open + 1] > '6')
        return "6";
    return std::string(1, typeSql[open + 1]);
}

} // namespace

MysqlColumnType mysqlColumnFor(const ColumnInfo &c, bool key)
{
    const std::string &t = c.baseType;
    if (c.isArray)
        return {MysqlStorage::Text, key ? "VARCHAR(768)" : "LONGTEXT"};
    if (t == "int2")
        return {MysqlStorage::Integer, "SMALLINT"};
    if (t == "int4")
        return {MysqlStorage::Integer, "INT"};
    if (t == "int8")
        return {MysqlStorage::Integer, "BIGINT"};
    if (t == "oid")
        return {MysqlStorage::Integer, "INT UNSIGNED"};
    if (t == "bool")
        return {MysqlStorage::Boolean, "TINYINT(1)"};
    if (t == "float4")
        return {MysqlStorage::Float, "FLOAT"};
    if (t == "float8")
        return {MysqlStorage::Float, "DOUBLE"};
    if (t == "numeric") {
        auto [p, s] = numericTypmod(c.typeSql);
        if (p > 0 && p <= 65 && s >= 0 && s <= 30)
            return {MysqlStorage::Decimal, "DECIMAL(" + std::to_string(p) + "," + std::to_string(s) + ")"};
        // Unconstrained or wider than DECIMAL: the exact digits as text, never rounded.
        return {MysqlStorage::Text, key ? "VARCHAR(768)" : "LONGTEXT"};
    }
    if (t == "bytea")
        return {MysqlStorage::Blob, key ? "VARBINARY(3072)" : "LONGBLOB"};
    if (t == "date")
        return {MysqlStorage::Date, "DATE"};
    // The same fractional digits as the source declares (a MySQL DATETIME(3) stays DATETIME(3)).
    if (t == "timestamp")
        return {MysqlStorage::DateTime, "DATETIME(" + fspOf(c.typeSql) + ")"};
    if (t == "timestamptz")
        return {MysqlStorage::DateTimeUtc, "DATETIME(" + fspOf(c.typeSql) + ")"};
    if (t == "time")
        return {MysqlStorage::Text, "TIME(6)"};
    if (t == "uuid")
        return {MysqlStorage::Text, "CHAR(36)"};
    if ((t == "json" || t == "jsonb") && !key)
        return {MysqlStorage::Json, "JSON"};
    if (t == "varchar" || t == "bpchar") {
        const long n = typeLength(c.typeSql);
        const char *kind = t == "bpchar" ? "CHAR(" : "VARCHAR(";
        if (n > 0 && n <= kMaxVarchar)
            return {MysqlStorage::Text, kind + std::to_string(n) + ")"};
        if (key)
            return {MysqlStorage::Text,
                    "VARCHAR(" + std::to_string(n > 0 && n < kMaxKeyChars ? n : kMaxKeyChars) + ")"};
        return {MysqlStorage::Text, "LONGTEXT"};
    }
    return {MysqlStorage::Text, key ? "VARCHAR(768)" : "LONGTEXT"};
}

std::string mysqlDateTimeUtc(std::string_view v, std::string_view column)
{
    checkPlainDate(v, column);
    // YYYY-MM-DD HH:MM:SS[.ffffff][+-HH[:MM[:SS]]]
    if (v.size() < 19 || v[10] != ' ' || v[13] != ':' || v[16] != ':')
        refuse(column, v, "is not a timestamp MySQL can hold (outside 0001-01-01..9999-12-31)");
    auto num = [&](size_t pos, size_t len) {
        int x = 0;
        auto r = std::from_chars(v.data() + pos, v.data() + pos + len, x);
        if (r.ec != std::errc() || r.ptr != v.data() + pos + len)
            refuse(column, v, "is not a timestamp");
        return x;
    };
    long long y = num(0, 4);
    unsigned mo = static_cast<unsigned>(num(5, 2)), d = static_cast<unsigned>(num(8, 2));
    long long secs = num(11, 2) * 3600LL + num(14, 2) * 60LL + num(17, 2);
    size_t pos = 19;
    std::string_view frac;
    if (pos < v.size() && v[pos] == '.') {
        size_t end = pos + 1;
        while (end < v.size() && v[end] >= '0' && v[end] <= '9')
            ++end;
        frac = v.substr(pos, end - pos);
        pos = end;
    }
    if (pos < v.size() && (v[pos] == '+' || v[pos] == '-')) {
        const int sign = v[pos] == '+' ? 1 : -1;
        const size_t rest = v.size() - pos;
        long long off = num(pos + 1, 2) * 3600LL;
        if (rest >= 6 && v[pos + 3] == ':')
            off += num(pos + 4, 2) * 60LL;
        if (rest >= 9 && v[pos + 6] == ':')
            off += num(pos + 7, 2);
        secs -= sign * off;
    }
    const long long total = daysFromCivil(y, mo, d) * 86400 + secs;
    const long long days = total >= 0 ? total / 86400 : -((-total + 86399) / 86400);
    secs = total - days * 86400;
    civilFromDays(days, y, mo, d);
    if (y < 1 || y > 9999)
        refuse(column, v, "is outside MySQL's DATETIME range 0001-01-01..9999-12-31 (in UTC)");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u %02lld:%02lld:%02lld", y, mo, d, secs / 3600, secs / 60 % 60,
                  secs % 60);
    return std::string(buf) + std::string(frac);
}

namespace {

enum class Form { Null, Bare, Text, Hex };

/// Converts one raw COPY-text field for `type`: `out` is the value MySQL gets, as a bare token
/// (0/1), text to quote or escape, or hex digits of bytes.
Form convertField(std::string_view raw, const MysqlColumnType &type, std::string_view column, std::string &scratch,
                  std::string_view &out)
{
    if (copytext::isNull(raw))
        return Form::Null;
    std::string_view v = raw;
    if (!copytext::isPlain(raw)) {
        scratch.clear();
        copytext::unescape(raw, scratch);
        v = scratch;
    }
    out = v;
    switch (type.storage) {
    case MysqlStorage::Boolean:
        if (v == "t" || v == "true" || v == "1")
            out = "1";
        else if (v == "f" || v == "false" || v == "0")
            out = "0";
        else
            refuse(column, v, "is not a boolean");
        return Form::Bare;
    case MysqlStorage::Float:
        if (v == "NaN" || v == "Infinity" || v == "-Infinity")
            refuse(column, v, "is not a finite number; MySQL FLOAT/DOUBLE hold no NaN or infinity");
        if (type.declared == "FLOAT") {
            // The shortest text that reads back as a float (what Postgres and the MySQL readers
            // print) can lie just past FLT_MAX: -3.4028235e+38 is the lowest float, but MySQL reads
            // it as a double out of FLOAT's range and refuses it. The float's exact value as a
            // double is in range, and reads back as the same float.
            float f = 0;
            const auto parsed = std::from_chars(v.data(), v.data() + v.size(), f);
            if (parsed.ec == std::errc() && parsed.ptr == v.data() + v.size()) {
                char buf[32];
                const auto printed = std::to_chars(buf, buf + sizeof buf, static_cast<double>(f));
                scratch.assign(buf, printed.ptr);
                out = scratch;
            }
        }
        return Form::Text;
    case MysqlStorage::Decimal:
        if (v == "NaN" || v == "Infinity" || v == "-Infinity")
            refuse(column, v, "is not a finite number; MySQL DECIMAL holds no NaN or infinity");
        return Form::Text;
    case MysqlStorage::Blob:
        if (v.size() < 2 || v[0] != '\\' || v[1] != 'x')
            refuse(column, v, "is not in bytea hex form (\\x...)");
        for (size_t i = 2; i < v.size(); ++i)
            if (copytext::hexValue(v[i]) < 0)
                refuse(column, v, "is not in bytea hex form (\\x...)");
        if ((v.size() - 2) % 2)
            refuse(column, v, "has an odd number of hex digits");
        out = v.substr(2);
        return Form::Hex;
    case MysqlStorage::Date:
        checkPlainDate(v, column);
        if (v.size() != 10)
            refuse(column, v, "is outside MySQL's date range 0001-01-01..9999-12-31");
        return Form::Text;
    case MysqlStorage::DateTime:
    case MysqlStorage::DateTimeUtc: {
        std::string utc = mysqlDateTimeUtc(v, column);
        scratch = std::move(utc);
        out = scratch;
        return Form::Text;
    }
    case MysqlStorage::Integer:
    case MysqlStorage::Json:
    case MysqlStorage::Text:
        break;
    }
    return Form::Text;
}

} // namespace

void appendMysqlValue(std::string &sql, std::string_view raw, const MysqlColumnType &type, std::string_view column,
                      std::string &scratch)
{
    std::string_view v;
    switch (convertField(raw, type, column, scratch, v)) {
    case Form::Null:
        sql += "NULL";
        return;
    case Form::Bare:
        sql.append(v);
        return;
    case Form::Hex:
        sql += "X'";
        sql.append(v);
        sql += '\'';
        return;
    case Form::Text:
        appendQuoted(sql, v);
        return;
    }
}

void appendMysqlLoadField(std::string &out, std::string_view raw, const MysqlColumnType &type, std::string_view column,
                          std::string &scratch)
{
    std::string_view v;
    switch (convertField(raw, type, column, scratch, v)) {
    case Form::Null:
        out += "\\N";
        return;
    case Form::Bare:
    case Form::Hex:
        out.append(v);
        return;
    case Form::Text:
        for (char c : v) {
            switch (c) {
            case '\\':
                out += "\\\\";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\0':
                out += "\\0";
                break;
            default:
                out += c;
            }
        }
        return;
    }
}

} // namespace driftless::core
