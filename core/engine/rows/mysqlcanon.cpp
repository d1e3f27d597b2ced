#include "core/engine/rows/mysqlcanon.h"

#include "core/engine/rows/rowhash.h"

#include <algorithm>
#include <charconv>

namespace driftless::core::recon {

using mysqlcatalog::MysqlColumn;
using mysqlcatalog::ValueForm;
using rowhash::Canon;

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

std::string utf8(const std::string &e)
{
    return "CONVERT(" + e + " USING utf8mb4) COLLATE utf8mb4_bin";
}

namespace {

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

} // namespace driftless::core::recon
