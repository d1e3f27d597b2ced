#include "core/readers/binlog/binlogvalues.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace driftless::core::binlog::detail {

namespace {

[[noreturn]] void malformed(const ColumnContext &c, const std::string &what)
{
    throw Error(ErrorKind::Permanent, "malformed binlog row:" + describeColumn(c.table, c.index) + ": " + what, {},
                "the event stream is corrupt; re-read from the last checkpoint");
}

[[noreturn]] void refuse(const ColumnContext &c, const std::string &what, const std::string &hint)
{
    throw SchemaError("cannot decode" + describeColumn(c.table, c.index) + " from the binlog: " + what, hint);
}

template <typename T> void appendInt(std::string &out, T v)
{
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

/// `v` as exactly `width` decimal digits (zero padded).
void appendDigits(std::string &out, std::uint64_t v, int width)
{
    char buf[24];
    for (int i = width - 1; i >= 0; --i) {
        buf[i] = static_cast<char>('0' + v % 10);
        v /= 10;
    }
    out.append(buf, static_cast<std::size_t>(width));
}

/// TIME's hours as MySQL prints them: at least two digits.
void appendHours(std::string &out, std::uint64_t hours)
{
    if (hours < 10)
        out += '0';
    appendInt(out, hours);
}

/// "." plus the first `fsp` digits of a microsecond fraction; nothing for fsp 0.
void appendFraction(std::string &out, std::uint32_t micros, int fsp)
{
    if (fsp <= 0)
        return;
    char buf[6];
    std::uint32_t v = micros;
    for (int i = 5; i >= 0; --i) {
        buf[i] = static_cast<char>('0' + v % 10);
        v /= 10;
    }
    out += '.';
    out.append(buf, static_cast<std::size_t>(fsp));
}

std::int64_t signExtend(std::uint64_t v, int bytes)
{
    const int shift = 64 - 8 * bytes;
    return static_cast<std::int64_t>(v << shift) >> shift;
}

int daysInMonth(unsigned year, unsigned month)
{
    static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)))
        return 29;
    return days[month - 1];
}

struct DateTimeParts {
    unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    std::uint32_t micros = 0;
};

void appendDate(std::string &out, const DateTimeParts &p)
{
    appendDigits(out, p.year, 4);
    out += '-';
    appendDigits(out, p.month, 2);
    out += '-';
    appendDigits(out, p.day, 2);
}
void appendClock(std::string &out, const DateTimeParts &p)
{
    appendDigits(out, p.hour, 2);
    out += ':';
    appendDigits(out, p.minute, 2);
    out += ':';
    appendDigits(out, p.second, 2);
}

/// Fills a Text value, or an Invalid one (MySQL's text of the value) when Postgres cannot hold
/// the date: a zero year, month or day, or a day past the month's end (ALLOW_INVALID_DATES).
void dateValue(const ColumnContext &c, const DateTimeParts &p, bool withTime, int fsp, Value &out)
{
    if (p.month > 12 || p.day > 31 || p.hour > 23 || p.minute > 59 || p.second > 59 || p.micros > 999'999)
        malformed(c, "date or time field out of range");
    out.text.clear();
    appendDate(out.text, p);
    if (withTime) {
        out.text += ' ';
        appendClock(out.text, p);
        appendFraction(out.text, p.micros, fsp);
    }
    const bool invalid =
        p.year == 0 || p.month == 0 || p.day == 0 || p.day > static_cast<unsigned>(daysInMonth(p.year, p.month));
    out.kind = invalid ? Value::Kind::Invalid : Value::Kind::Text;
}

/// Fraction bytes of TIME2/DATETIME2/TIMESTAMP2 for `fsp`: 0, 1, 2 or 3 bytes.
int fractionBytes(int fsp)
{
    return (fsp + 1) / 2;
}

/// Civil date from days since 1970-01-01 (proleptic Gregorian).
void civilFromDays(std::int64_t z, DateTimeParts &p)
{
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const std::int64_t doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    const std::int64_t d = doy - (153 * mp + 2) / 5 + 1;
    const std::int64_t m = mp < 10 ? mp + 3 : mp - 9;
    p.year = static_cast<unsigned>(yoe + era * 400 + (m <= 2 ? 1 : 0));
    p.month = static_cast<unsigned>(m);
    p.day = static_cast<unsigned>(d);
}

void decodeDecimal(ByteReader &r, const ColumnContext &c, const Column &col, Value &out)
{
    static constexpr int digitBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
    static constexpr std::uint32_t pow10[10] = {1,      10,      100,      1000,      10000,
                                                100000, 1000000, 10000000, 100000000, 1000000000};
    const int precision = col.precision, scale = col.scale;
    if (precision < 1 || precision > 65 || scale > precision)
        malformed(c, "DECIMAL precision " + std::to_string(precision) + " scale " + std::to_string(scale));
    const int intg = precision - scale;
    const int intg0 = intg / 9, intg0x = intg % 9, frac0 = scale / 9, frac0x = scale % 9;
    const std::size_t size = static_cast<std::size_t>(intg0 * 4 + digitBytes[intg0x] + frac0 * 4 + digitBytes[frac0x]);
    std::string_view raw = r.bytes(size, "DECIMAL value");
    std::array<std::uint8_t, 32> b{};
    std::memcpy(b.data(), raw.data(), size);
    const bool negative = (b[0] & 0x80) == 0;
    b[0] ^= 0x80;
    if (negative)
        for (std::size_t i = 0; i < size; ++i)
            b[i] = static_cast<std::uint8_t>(~b[i]);
    std::size_t pos = 0;
    auto group = [&](int bytes, int digits) {
        std::uint32_t v = 0;
        for (int i = 0; i < bytes; ++i)
            v = (v << 8) | b[pos++];
        if (v >= pow10[digits])
            malformed(c, "DECIMAL digit group out of range");
        return v;
    };
    std::string intPart, fracPart;
    if (intg0x)
        appendDigits(intPart, group(digitBytes[intg0x], intg0x), intg0x);
    for (int i = 0; i < intg0; ++i)
        appendDigits(intPart, group(4, 9), 9);
    for (int i = 0; i < frac0; ++i)
        appendDigits(fracPart, group(4, 9), 9);
    if (frac0x)
        appendDigits(fracPart, group(digitBytes[frac0x], frac0x), frac0x);
    const std::size_t firstNonZero = intPart.find_first_not_of('0');
    intPart = firstNonZero == std::string::npos ? "0" : intPart.substr(firstNonZero);
    const bool zero = intPart == "0" && fracPart.find_first_not_of('0') == std::string::npos;
    out.text.clear();
    if (negative && !zero)
        out.text += '-';
    out.text += intPart;
    if (scale > 0) {
        out.text += '.';
        out.text += fracPart;
    }
    out.kind = Value::Kind::Text;
}

void decodeInteger(ByteReader &r, const ColumnContext &c, const Column &col, int bytes, Value &out)
{
    if (!c.table.hasSignedness)
        refuse(c, "the table map did not say whether the column is signed",
               "set binlog_row_metadata=FULL on the source so that the binlog carries column signedness");
    const std::uint64_t raw = r.le(static_cast<std::size_t>(bytes), "integer value");
    out.text.clear();
    if (col.isUnsigned)
        appendInt(out.text, raw);
    else
        appendInt(out.text, signExtend(raw, bytes));
    out.kind = Value::Kind::Text;
}

void decodeTime2(ByteReader &r, const ColumnContext &c, int fsp, Value &out)
{
    // MySQL's packed TIME: (integer part << 24) + microseconds, stored with an offset so that it
    // sorts as bytes; a negative value with a fraction keeps its fraction in reverse order.
    const std::int64_t intpart = static_cast<std::int64_t>(r.be(3, "TIME value")) - 0x800000;
    std::int64_t packed = 0;
    switch (fractionBytes(fsp)) {
    case 0:
        packed = intpart * (1LL << 24);
        break;
    case 1: {
        std::int64_t frac = static_cast<std::int64_t>(r.be(1, "TIME fraction"));
        std::int64_t ip = intpart;
        if (ip < 0 && frac) {
            ++ip;
            frac -= 0x100;
        }
        packed = ip * (1LL << 24) + frac * 10000;
        break;
    }
    case 2: {
        std::int64_t frac = static_cast<std::int64_t>(r.be(2, "TIME fraction"));
        std::int64_t ip = intpart;
        if (ip < 0 && frac) {
            ++ip;
            frac -= 0x10000;
        }
        packed = ip * (1LL << 24) + frac * 100;
        break;
    }
    default: {
        const std::int64_t low = static_cast<std::int64_t>(r.be(3, "TIME fraction"));
        packed = intpart * (1LL << 24) + low;
        break;
    }
    }
    const bool negative = packed < 0;
    const std::uint64_t mag = negative ? static_cast<std::uint64_t>(-packed) : static_cast<std::uint64_t>(packed);
    const std::uint64_t hms = mag >> 24;
    const std::uint64_t micros = mag % (1ULL << 24);
    const std::uint64_t hour = (hms >> 12) % (1 << 10), minute = (hms >> 6) % (1 << 6), second = hms % (1 << 6);
    if (minute > 59 || second > 59 || micros > 999'999)
        malformed(c, "TIME field out of range");
    out.text.clear();
    if (negative)
        out.text += '-';
    appendHours(out.text, hour);
    out.text += ':';
    appendDigits(out.text, minute, 2);
    out.text += ':';
    appendDigits(out.text, second, 2);
    appendFraction(out.text, static_cast<std::uint32_t>(micros), fsp);
    out.kind = Value::Kind::Text;
}

void decodeDateTime2(ByteReader &r, const ColumnContext &c, int fsp, Value &out)
{
    const std::int64_t intpart = static_cast<std::int64_t>(r.be(5, "DATETIME value")) - 0x8000000000LL;
    std::int64_t frac = 0;
    switch (fractionBytes(fsp)) {
    case 1:
        frac = signExtend(r.be(1, "DATETIME fraction"), 1) * 10000;
        break;
    case 2:
        frac = signExtend(r.be(2, "DATETIME fraction"), 2) * 100;
        break;
    case 3:
        frac = signExtend(r.be(3, "DATETIME fraction"), 3);
        break;
    default:
        break;
    }
    if (intpart < 0 || frac < 0)
        malformed(c, "negative DATETIME");
    const std::uint64_t ymdhms = static_cast<std::uint64_t>(intpart);
    const std::uint64_t ymd = ymdhms >> 17, ym = ymd >> 5, hms = ymdhms % (1 << 17);
    DateTimeParts p;
    p.day = static_cast<unsigned>(ymd % (1 << 5));
    p.month = static_cast<unsigned>(ym % 13);
    p.year = static_cast<unsigned>(ym / 13);
    p.second = static_cast<unsigned>(hms % (1 << 6));
    p.minute = static_cast<unsigned>((hms >> 6) % (1 << 6));
    p.hour = static_cast<unsigned>(hms >> 12);
    p.micros = static_cast<std::uint32_t>(frac);
    if (p.year > 9999)
        malformed(c, "DATETIME year out of range");
    dateValue(c, p, true, fsp, out);
}

void decodeTimestamp(ByteReader &r, const ColumnContext &c, std::uint64_t seconds, std::uint32_t micros, int fsp,
                     Value &out)
{
    if (micros > 999'999)
        malformed(c, "TIMESTAMP fraction out of range");
    if (seconds == 0 && micros == 0) {
        // MySQL's zero TIMESTAMP.
        out.text = "0000-00-00 00:00:00";
        appendFraction(out.text, 0, fsp);
        out.kind = Value::Kind::Invalid;
        return;
    }
    (void)r;
    DateTimeParts p;
    civilFromDays(static_cast<std::int64_t>(seconds / 86400), p);
    const std::uint64_t sod = seconds % 86400;
    p.hour = static_cast<unsigned>(sod / 3600);
    p.minute = static_cast<unsigned>(sod / 60 % 60);
    p.second = static_cast<unsigned>(sod % 60);
    p.micros = micros;
    out.text.clear();
    appendDate(out.text, p);
    out.text += ' ';
    appendClock(out.text, p);
    appendFraction(out.text, micros, fsp);
    out.text += "+00";
    out.kind = Value::Kind::Text;
}

/// Character data in the column's character set to UTF-8 text, or bytes for binary.
void characterValue(const ColumnContext &c, std::string_view bytes, Value &out)
{
    switch (c.charset) {
    case Charset::Utf8:
    case Charset::Binary:
        out.text.assign(bytes);
        break;
    case Charset::Latin1:
        out.text = latin1ToUtf8(bytes);
        break;
    case Charset::Unknown:
        refuse(c,
               c.charsetName.empty() ? "the table map did not say its character set"
                                     : "unknown character set '" + std::string(c.charsetName) + "'",
               "set binlog_row_metadata=FULL on the source so that the binlog names each column's character set");
    case Charset::Unsupported:
        refuse(c, "character set '" + std::string(c.charsetName) + "' is not supported",
               "convert the column to utf8mb4 (ALTER TABLE ... CONVERT TO CHARACTER SET utf8mb4) or exclude it "
               "with a view; the binlog decoder reads utf8mb4, utf8mb3, ascii, latin1 and binary");
    }
    out.kind = Value::Kind::Text;
}

void decodeLabels(ByteReader &r, const ColumnContext &c, const Column &col, Value &out)
{
    if (col.packLength < 1 || col.packLength > 8)
        malformed(c, "ENUM/SET storage size " + std::to_string(col.packLength));
    const std::uint64_t v = r.le(col.packLength, "ENUM/SET value");
    if (col.labels.empty())
        refuse(c, "the table map carried no ENUM/SET values",
               "set binlog_row_metadata=FULL on the source so that the binlog carries ENUM and SET labels");
    if (c.charset == Charset::Unsupported)
        refuse(c, "character set '" + std::string(c.charsetName) + "' of its labels is not supported",
               "convert the column to utf8mb4 or exclude it with a view");
    out.text.clear();
    out.kind = Value::Kind::Text;
    if (col.type == coltype::Enum) {
        if (v == 0)
            return; // the error value ''
        if (v > col.labels.size())
            malformed(c, "ENUM index " + std::to_string(v) + " beyond its " + std::to_string(col.labels.size()) +
                             " values");
        out.text = col.labels[v - 1];
        return;
    }
    for (std::size_t bit = 0; bit < 64; ++bit) {
        if (!(v & (1ULL << bit)))
            continue;
        if (bit >= col.labels.size())
            malformed(c, "SET bit " + std::to_string(bit) + " beyond its " + std::to_string(col.labels.size()) +
                             " values");
        if (!out.text.empty())
            out.text += ',';
        out.text += col.labels[bit];
    }
}

} // namespace

Charset classifyCharset(std::string_view name)
{
    if (name.empty())
        return Charset::Unknown;
    if (name == "utf8mb4" || name == "utf8mb3" || name == "utf8" || name == "ascii")
        return Charset::Utf8;
    if (name == "latin1")
        return Charset::Latin1;
    if (name == "binary")
        return Charset::Binary;
    return Charset::Unsupported;
}

std::string builtinCharsetOf(std::uint32_t id)
{
    if (id == 63)
        return "binary";
    if (id == 5 || id == 8 || id == 15 || id == 31 || id == 47 || id == 48 || id == 49 || id == 94 || id == 1032 ||
        id == 1071)
        return "latin1";
    if (id == 11 || id == 65 || id == 1035 || id == 1089)
        return "ascii";
    if (id == 33 || id == 83 || (id >= 192 && id <= 215) || id == 223 || id == 1057 || id == 1107)
        return "utf8mb3";
    if (id == 45 || id == 46 || (id >= 224 && id <= 247) || (id >= 255 && id <= 323) || id == 1069 || id == 1070)
        return "utf8mb4";
    // Other common single-byte and CJK sets, so that they are refused by name.
    if (id == 1 || id == 84)
        return "big5";
    if (id == 28 || id == 87)
        return "gbk";
    if (id == 13 || id == 88)
        return "sjis";
    if (id == 35 || id == 90)
        return "ucs2";
    if (id == 54 || id == 55)
        return "utf16";
    if (id == 60 || id == 61)
        return "utf32";
    if (id == 7 || id == 74)
        return "koi8r";
    if (id == 14 || id == 23 || id == 50 || id == 51 || id == 52)
        return "cp1251";
    if (id == 9 || id == 77)
        return "latin2";
    return {};
}

std::string latin1ToUtf8(std::string_view bytes)
{
    // MySQL's latin1 is Windows-1252, except for the five bytes cp1252 leaves undefined.
    static constexpr std::uint16_t c1[32] = {0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
                                             0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
                                             0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                                             0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};
    std::string out;
    out.reserve(bytes.size() + bytes.size() / 4);
    for (unsigned char ch : bytes) {
        std::uint32_t cp = ch;
        if (ch >= 0x80 && ch < 0xA0)
            cp = c1[ch - 0x80];
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }
    return out;
}

std::string describeColumn(const TableMap &table, std::size_t index)
{
    std::string s = " column ";
    if (index < table.columns.size() && !table.columns[index].name.empty())
        s += "`" + table.columns[index].name + "` ";
    s += "(#" + std::to_string(index + 1);
    if (index < table.columns.size())
        s += ", " + table.columns[index].typeName();
    s += ") of " + table.qualifiedName();
    return s;
}

void decodeValue(ByteReader &r, const ColumnContext &c, Value &out)
{
    const Column &col = c.table.columns[c.index];
    switch (col.type) {
    case coltype::Tiny:
        return decodeInteger(r, c, col, 1, out);
    case coltype::Short:
        return decodeInteger(r, c, col, 2, out);
    case coltype::Int24:
        return decodeInteger(r, c, col, 3, out);
    case coltype::Long:
        return decodeInteger(r, c, col, 4, out);
    case coltype::LongLong:
        return decodeInteger(r, c, col, 8, out);
    case coltype::Float: {
        const std::uint32_t bits = static_cast<std::uint32_t>(r.le(4, "FLOAT value"));
        float f;
        std::memcpy(&f, &bits, sizeof f);
        char buf[64];
        auto res = std::to_chars(buf, buf + sizeof buf, f);
        out.text.assign(buf, res.ptr);
        out.kind = Value::Kind::Text;
        return;
    }
    case coltype::Double: {
        const std::uint64_t bits = r.le(8, "DOUBLE value");
        double d;
        std::memcpy(&d, &bits, sizeof d);
        char buf[64];
        auto res = std::to_chars(buf, buf + sizeof buf, d);
        out.text.assign(buf, res.ptr);
        out.kind = Value::Kind::Text;
        return;
    }
    case coltype::NewDecimal:
        return decodeDecimal(r, c, col, out);
    case coltype::Year: {
        const std::uint64_t v = r.le(1, "YEAR value");
        out.text.clear();
        appendInt(out.text, v == 0 ? 0 : 1900 + v);
        out.kind = Value::Kind::Text;
        return;
    }
    case coltype::Date:
    case coltype::NewDate: {
        const std::uint64_t v = r.le(3, "DATE value");
        DateTimeParts p;
        p.day = static_cast<unsigned>(v & 31);
        p.month = static_cast<unsigned>((v >> 5) & 15);
        p.year = static_cast<unsigned>(v >> 9);
        if (p.year > 9999)
            malformed(c, "DATE year out of range");
        return dateValue(c, p, false, 0, out);
    }
    case coltype::DateTime: {
        std::uint64_t v = r.le(8, "DATETIME value");
        DateTimeParts p;
        p.second = static_cast<unsigned>(v % 100);
        p.minute = static_cast<unsigned>(v / 100 % 100);
        p.hour = static_cast<unsigned>(v / 10000 % 100);
        v /= 1000000;
        p.day = static_cast<unsigned>(v % 100);
        p.month = static_cast<unsigned>(v / 100 % 100);
        p.year = static_cast<unsigned>(v / 10000 % 100000);
        if (p.year > 9999)
            malformed(c, "DATETIME year out of range");
        return dateValue(c, p, true, 0, out);
    }
    case coltype::DateTime2:
        return decodeDateTime2(r, c, col.fsp, out);
    case coltype::Timestamp:
        return decodeTimestamp(r, c, r.le(4, "TIMESTAMP value"), 0, 0, out);
    case coltype::Timestamp2: {
        const std::uint64_t seconds = r.be(4, "TIMESTAMP value");
        std::uint32_t micros = 0;
        switch (fractionBytes(col.fsp)) {
        case 1:
            micros = static_cast<std::uint32_t>(r.be(1, "TIMESTAMP fraction")) * 10000;
            break;
        case 2:
            micros = static_cast<std::uint32_t>(r.be(2, "TIMESTAMP fraction")) * 100;
            break;
        case 3:
            micros = static_cast<std::uint32_t>(r.be(3, "TIMESTAMP fraction"));
            break;
        default:
            break;
        }
        return decodeTimestamp(r, c, seconds, micros, col.fsp, out);
    }
    case coltype::Time: {
        const std::int64_t v = signExtend(r.le(3, "TIME value"), 3);
        const std::uint64_t mag = static_cast<std::uint64_t>(v < 0 ? -v : v);
        const std::uint64_t second = mag % 100, minute = mag / 100 % 100, hour = mag / 10000;
        if (minute > 59 || second > 59)
            malformed(c, "TIME field out of range");
        out.text = v < 0 ? "-" : "";
        appendHours(out.text, hour);
        out.text += ':';
        appendDigits(out.text, minute, 2);
        out.text += ':';
        appendDigits(out.text, second, 2);
        out.kind = Value::Kind::Text;
        return;
    }
    case coltype::Time2:
        return decodeTime2(r, c, col.fsp, out);
    case coltype::Bit: {
        if (col.bits < 1 || col.bits > 64)
            malformed(c, "BIT width " + std::to_string(col.bits));
        const std::size_t bytes = (col.bits + 7u) / 8u;
        const std::uint64_t v = r.be(bytes, "BIT value");
        out.text.assign(col.bits, '0');
        for (unsigned i = 0; i < col.bits; ++i)
            if (v & (1ULL << i))
                out.text[col.bits - 1 - i] = '1';
        out.kind = Value::Kind::Text;
        return;
    }
    case coltype::Enum:
    case coltype::Set:
        return decodeLabels(r, c, col, out);
    case coltype::String: {
        const std::size_t prefix = col.maxLength > 255 ? 2 : 1;
        const std::size_t len = static_cast<std::size_t>(r.le(prefix, "CHAR length"));
        if (len > col.maxLength)
            malformed(c, "CHAR value of " + std::to_string(len) + " bytes is longer than the column");
        std::string_view bytes = r.bytes(len, "CHAR value");
        if (c.charset == Charset::Binary) {
            // BINARY(n): the binlog drops the trailing zero bytes; the value is all n bytes.
            out.text.assign(bytes);
            out.text.append(col.maxLength - len, '\0');
            out.kind = Value::Kind::Text;
            return;
        }
        while (!bytes.empty() && bytes.back() == ' ')
            bytes.remove_suffix(1);
        return characterValue(c, bytes, out);
    }
    case coltype::VarChar:
    case coltype::VarString: {
        const std::size_t prefix = col.maxLength > 255 ? 2 : 1;
        const std::size_t len = static_cast<std::size_t>(r.le(prefix, "VARCHAR length"));
        return characterValue(c, r.bytes(len, "VARCHAR value"), out);
    }
    case coltype::Blob:
    case coltype::TinyBlob:
    case coltype::MediumBlob:
    case coltype::LongBlob:
    case coltype::Geometry: {
        if (col.maxLength < 1 || col.maxLength > 4)
            malformed(c, "BLOB length prefix of " + std::to_string(col.maxLength) + " bytes");
        const std::size_t len = static_cast<std::size_t>(r.le(col.maxLength, "BLOB length"));
        std::string_view bytes = r.bytes(len, "BLOB value");
        if (col.type == coltype::Geometry) {
            out.text.assign(bytes);
            out.kind = Value::Kind::Text;
            return;
        }
        return characterValue(c, bytes, out);
    }
    case coltype::Json:
        refuse(c, "MySQL's binary JSON is not decoded from the binlog",
               "sync this table with the full-refresh or cursor strategy, or exclude the column with a view");
    default:
        refuse(c, "column type " + std::to_string(col.type) + " is not supported",
               "exclude the column with a view, or sync the table with the full-refresh or cursor strategy");
    }
}

} // namespace driftless::core::binlog::detail
