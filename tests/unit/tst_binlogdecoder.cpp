// The binlog decoder on hand-built events. The encoders below follow MySQL's own writers
// (decimal2bin, my_datetime_packed_to_binary, my_time_packed_to_binary), the opposite direction
// of what the decoder implements; tst_binlog checks the same values against a real server.
#include "core/model/error.h"
#include "core/readers/binlog/binlogdecoder.h"
#include "core/readers/binlog/binlogrows.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace driftless::core;
using namespace driftless::core::binlog;

namespace {

using Bytes = std::string;

void putLe(Bytes &b, std::uint64_t v, int n)
{
    for (int i = 0; i < n; ++i)
        b += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void putBe(Bytes &b, std::uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; --i)
        b += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void putLenenc(Bytes &b, std::uint64_t v)
{
    if (v < 251) {
        b += static_cast<char>(v);
    } else if (v < 65536) {
        b += '\xfc';
        putLe(b, v, 2);
    } else {
        b += '\xfd';
        putLe(b, v, 3);
    }
}

/// Builds events the way a MariaDB 10.11 server sends them.
struct Stream {
    bool crc = true;
    std::uint32_t pos = 256;

    Bytes event(std::uint8_t type, const Bytes &body, std::uint16_t flags = 0, std::uint32_t serverId = 1,
                std::optional<std::uint32_t> logPos = std::nullopt)
    {
        Bytes e;
        const std::uint32_t length = static_cast<std::uint32_t>(19 + body.size() + (crc ? 4 : 0));
        pos += length;
        putLe(e, 1700000000, 4);
        e += static_cast<char>(type);
        putLe(e, serverId, 4);
        putLe(e, length, 4);
        putLe(e, logPos.value_or(pos), 4);
        putLe(e, flags, 2);
        e += body;
        if (crc)
            putLe(e, crc32(e), 4);
        return e;
    }
    Bytes formatDescription()
    {
        Bytes body;
        putLe(body, 4, 2);
        Bytes version = "10.11.19-MariaDB-log";
        version.resize(50, '\0');
        body += version;
        putLe(body, 0, 4);
        body += static_cast<char>(19);
        Bytes lengths(168, '\0');
        lengths[event::Query - 1] = 13;
        lengths[event::Rotate - 1] = 8;
        lengths[event::FormatDescription - 1] = 84;
        lengths[event::TableMap - 1] = 8;
        for (int t : {23, 24, 25})
            lengths[t - 1] = 8;
        for (int t : {30, 31, 32})
            lengths[t - 1] = 10;
        lengths[event::MariaGtid - 1] = 19;
        lengths[event::GtidList - 1] = 4;
        body += lengths;
        body += static_cast<char>(crc ? 1 : 0);
        // With the algorithm OFF the checksum field is still there.
        const bool saved = crc;
        crc = true;
        Bytes e = event(event::FormatDescription, body);
        crc = saved;
        if (!crc) {
            e.resize(e.size() - 4);
            putLe(e, 0, 4);
        }
        return e;
    }
};

struct Col {
    Col(std::uint8_t t, Bytes m = {}, bool u = false, std::uint32_t c = 0, std::vector<std::string> l = {},
        std::string n = {})
        : type(t), meta(std::move(m)), isUnsigned(u), collation(c), labels(std::move(l)), name(std::move(n))
    {
    }
    std::uint8_t type;
    Bytes meta;
    bool isUnsigned;
    std::uint32_t collation; ///< for character and ENUM/SET columns
    std::vector<std::string> labels;
    std::string name;
};

Bytes tableMapBody(std::uint64_t id, const std::vector<Col> &cols, const std::string &db = "shop",
                   const std::string &table = "t", std::vector<unsigned> pk = {0}, bool withOptional = true)
{
    Bytes b;
    putLe(b, id, 6);
    putLe(b, 1, 2);
    b += static_cast<char>(db.size());
    b += db + '\0';
    b += static_cast<char>(table.size());
    b += table + '\0';
    putLenenc(b, cols.size());
    Bytes meta;
    for (const Col &c : cols) {
        b += static_cast<char>(c.type);
        meta += c.meta;
    }
    putLenenc(b, meta.size());
    b += meta;
    b += Bytes((cols.size() + 7) / 8, '\xff');
    if (!withOptional)
        return b;
    auto tlv = [&](std::uint8_t type, const Bytes &value) {
        b += static_cast<char>(type);
        putLenenc(b, value.size());
        b += value;
    };
    auto isNumeric = [](std::uint8_t t) {
        return t == 1 || t == 2 || t == 9 || t == 3 || t == 8 || t == 4 || t == 5 || t == 246;
    };
    auto isChar = [](const Col &c) {
        return (c.type == 254 && (static_cast<std::uint8_t>(c.meta[0]) | 0x30) == 254) || c.type == 15 || c.type == 252;
    };
    auto isEnumSet = [](const Col &c) {
        return c.type == 254 &&
               (static_cast<std::uint8_t>(c.meta[0]) == 247 || static_cast<std::uint8_t>(c.meta[0]) == 248);
    };
    Bytes sign;
    int k = 0;
    for (const Col &c : cols)
        if (isNumeric(c.type)) {
            if (k % 8 == 0)
                sign += '\0';
            if (c.isUnsigned)
                sign.back() = static_cast<char>(sign.back() | (0x80 >> (k % 8)));
            ++k;
        }
    tlv(1, sign);
    Bytes charsets, enumCharsets, enums, sets, names;
    for (const Col &c : cols) {
        if (isChar(c))
            putLenenc(charsets, c.collation);
        if (isEnumSet(c)) {
            putLenenc(enumCharsets, c.collation);
            Bytes &list = static_cast<std::uint8_t>(c.meta[0]) == 247 ? enums : sets;
            putLenenc(list, c.labels.size());
            for (const auto &l : c.labels) {
                putLenenc(list, l.size());
                list += l;
            }
        }
        putLenenc(names, c.name.size());
        names += c.name;
    }
    tlv(3, charsets);
    tlv(4, names);
    if (!sets.empty())
        tlv(5, sets);
    if (!enums.empty())
        tlv(6, enums);
    Bytes key;
    for (unsigned i : pk)
        putLenenc(key, i);
    tlv(8, key);
    if (!enumCharsets.empty())
        tlv(11, enumCharsets);
    return b;
}

/// One image: null bitmap over the present columns, then the values of the non-NULL ones.
Bytes image(const std::vector<std::optional<Bytes>> &values)
{
    Bytes nulls((values.size() + 7) / 8, '\0');
    Bytes data;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (!values[i])
            nulls[i / 8] = static_cast<char>(nulls[i / 8] | (1 << (i % 8)));
        else
            data += *values[i];
    }
    return nulls + data;
}

Bytes rowsBody(std::uint64_t id, std::size_t ncols, const Bytes &rows, bool v2 = false, std::uint16_t flags = 1,
               std::optional<Bytes> present = std::nullopt, std::optional<Bytes> present2 = std::nullopt)
{
    Bytes b;
    putLe(b, id, 6);
    putLe(b, flags, 2);
    if (v2)
        putLe(b, 2, 2);
    putLenenc(b, ncols);
    const Bytes all((ncols + 7) / 8, '\xff');
    b += present.value_or(all);
    if (present2)
        b += *present2;
    return b + rows;
}

Bytes decimalBytes(const std::string &text, int precision, int scale)
{
    static const int digitBytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
    const bool negative = text[0] == '-';
    std::string t = negative ? text.substr(1) : text;
    const auto dot = t.find('.');
    std::string ip = t.substr(0, dot), fp = dot == std::string::npos ? "" : t.substr(dot + 1);
    const int intg = precision - scale;
    ip = std::string(static_cast<std::size_t>(intg) - ip.size(), '0') + ip;
    fp.resize(static_cast<std::size_t>(scale), '0');
    Bytes b;
    const int intg0x = intg % 9;
    std::size_t at = 0;
    if (intg0x) {
        putBe(b, std::stoull(ip.substr(0, intg0x)), digitBytes[intg0x]);
        at = static_cast<std::size_t>(intg0x);
    }
    for (; at < ip.size(); at += 9)
        putBe(b, std::stoull(ip.substr(at, 9)), 4);
    std::size_t f = 0;
    for (; f + 9 <= fp.size(); f += 9)
        putBe(b, std::stoull(fp.substr(f, 9)), 4);
    if (f < fp.size())
        putBe(b, std::stoull(fp.substr(f)), digitBytes[fp.size() - f]);
    b[0] = static_cast<char>(b[0] ^ 0x80);
    if (negative)
        for (char &ch : b)
            ch = static_cast<char>(~ch);
    return b;
}

Bytes datetime2(unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi, unsigned s, std::uint32_t micros, int fsp)
{
    const std::uint64_t ymd = ((static_cast<std::uint64_t>(y) * 13 + mo) << 5) | d;
    const std::uint64_t ymdhms = (ymd << 17) | (h << 12) | (mi << 6) | s;
    Bytes b;
    putBe(b, ymdhms + 0x8000000000ULL, 5);
    if (fsp >= 1 && fsp <= 2)
        putBe(b, micros / 10000, 1);
    else if (fsp >= 3 && fsp <= 4)
        putBe(b, micros / 100, 2);
    else if (fsp >= 5)
        putBe(b, micros, 3);
    return b;
}

Bytes time2(bool negative, unsigned h, unsigned m, unsigned s, std::uint32_t micros, int fsp)
{
    const std::int64_t hms = (static_cast<std::int64_t>(h) << 12) | (m << 6) | s;
    std::int64_t nr = (hms << 24) + micros;
    if (negative)
        nr = -nr;
    const std::int64_t intPart = nr >> 24;        // arithmetic shift, as MySQL's macro
    const std::int64_t fracPart = nr % (1 << 24); // C remainder: negative for negative nr
    Bytes b;
    if (fsp <= 4) {
        putBe(b, static_cast<std::uint64_t>(intPart + 0x800000), 3);
        if (fsp >= 1 && fsp <= 2)
            putBe(b, static_cast<std::uint8_t>(static_cast<std::int8_t>(fracPart / 10000)), 1);
        else if (fsp >= 3)
            putBe(b, static_cast<std::uint16_t>(static_cast<std::int16_t>(fracPart / 100)), 2);
    } else {
        putBe(b, static_cast<std::uint64_t>(nr + 0x800000000000LL), 6);
    }
    return b;
}

Bytes meta1(std::uint8_t v)
{
    return Bytes(1, static_cast<char>(v));
}
Bytes meta2(std::uint8_t a, std::uint8_t b)
{
    return Bytes{static_cast<char>(a), static_cast<char>(b)};
}
Bytes lenPrefixed(const Bytes &v)
{
    return static_cast<char>(v.size()) + v;
}

/// A decoder that has seen the stream start, and decodes one table's single-row insert.
struct Fixture {
    Stream s;
    Decoder d;
    Fixture() { d.decode(s.formatDescription()); }
    Rows insert(const std::vector<Col> &cols, const std::vector<std::optional<Bytes>> &values)
    {
        d.decode(s.event(event::TableMap, tableMapBody(7, cols)));
        Event e = d.decode(s.event(event::WriteRowsV1, rowsBody(7, cols.size(), image(values))));
        return std::get<Rows>(e.body);
    }
    std::string one(const Col &col, const Bytes &value)
    {
        Rows r = insert({col}, {value});
        EXPECT_EQ(r.rows.size(), 1u);
        EXPECT_EQ(r.rows[0].after[0].kind, Value::Kind::Text);
        return r.rows[0].after[0].text;
    }
};

} // namespace

TEST(BinlogDecoder, decimalHasExactlyScaleDigitsAndASignOnlyWhenNegative)
{
    Fixture f;
    const Col dec10{coltype::NewDecimal, meta2(10, 2)};
    EXPECT_EQ(f.one(dec10, Bytes("\x80\x00\x00\x0c\x22", 5)), "12.34"); // the server's own bytes
    EXPECT_EQ(f.one(dec10, decimalBytes("-12.34", 10, 2)), "-12.34");
    EXPECT_EQ(f.one(dec10, decimalBytes("0", 10, 2)), "0.00");
    EXPECT_EQ(f.one(dec10, decimalBytes("-0.5", 10, 2)), "-0.50");
    EXPECT_EQ(f.one(dec10, decimalBytes("99999999.99", 10, 2)), "99999999.99");
    const Col dec65{coltype::NewDecimal, meta2(65, 30)};
    const std::string big = "12345678901234567890123456789012345.123456789012345678901234567890";
    EXPECT_EQ(f.one(dec65, decimalBytes(big, 65, 30)), big);
    EXPECT_EQ(f.one(dec65, decimalBytes("-" + big, 65, 30)), "-" + big);
    EXPECT_EQ(f.one(dec65, decimalBytes("-0.000000000000000000000000000001", 65, 30)),
              "-0.000000000000000000000000000001");
    const Col int0{coltype::NewDecimal, meta2(20, 0)};
    EXPECT_EQ(f.one(int0, decimalBytes("-18446744073709551615", 20, 0)), "-18446744073709551615");
}

TEST(BinlogDecoder, datetime2HasExactlyFspDigitsForEveryPrecision)
{
    const std::uint32_t micros[7] = {0, 100000, 120000, 123000, 123400, 123450, 123456};
    const char *expected[7] = {"2024-02-29 23:59:58",       "2024-02-29 23:59:58.1",    "2024-02-29 23:59:58.12",
                               "2024-02-29 23:59:58.123",   "2024-02-29 23:59:58.1234", "2024-02-29 23:59:58.12345",
                               "2024-02-29 23:59:58.123456"};
    for (int fsp = 0; fsp <= 6; ++fsp) {
        Fixture f;
        EXPECT_EQ(f.one({coltype::DateTime2, meta1(static_cast<std::uint8_t>(fsp))},
                        datetime2(2024, 2, 29, 23, 59, 58, micros[fsp], fsp)),
                  expected[fsp])
            << "fsp " << fsp;
    }
}

TEST(BinlogDecoder, timestamp2IsUtcWithOffsetAndExactlyFspDigits)
{
    Fixture f;
    // 2024-01-02 03:04:05.123456 UTC, bytes as MariaDB wrote them.
    EXPECT_EQ(f.one({coltype::Timestamp2, meta1(6)}, Bytes("\x65\x93\x7d\x25\x01\xe2\x40", 7)),
              "2024-01-02 03:04:05.123456+00");
    EXPECT_EQ(f.one({coltype::Timestamp2, meta1(0)}, Bytes("\x65\x93\x7d\x25", 4)), "2024-01-02 03:04:05+00");
    EXPECT_EQ(f.one({coltype::Timestamp2, meta1(3)}, Bytes("\x00\x00\x00\x01\x00\x0a", 6)),
              "1970-01-01 00:00:01.001+00");
    EXPECT_EQ(f.one({coltype::Timestamp2, meta1(2)}, Bytes("\x7f\xff\xff\xff\x63", 5)), "2038-01-19 03:14:07.99+00");
}

TEST(BinlogDecoder, time2CoversNegativeLargeAndEveryFsp)
{
    struct Case {
        bool negative;
        unsigned h, m, s;
        std::uint32_t micros;
        int fsp;
        const char *text;
    };
    const Case cases[] = {
        {false, 0, 0, 0, 0, 0, "00:00:00"},
        {false, 1, 2, 3, 0, 0, "01:02:03"},
        {true, 1, 2, 3, 0, 0, "-01:02:03"},
        {false, 838, 59, 59, 0, 0, "838:59:59"},
        {true, 838, 59, 59, 0, 6, "-838:59:59.000000"},
        {true, 838, 59, 59, 0, 0, "-838:59:59"},
        {false, 25, 0, 0, 500000, 1, "25:00:00.5"},
        {true, 0, 0, 0, 500000, 1, "-00:00:00.5"},
        {true, 1, 2, 3, 10000, 2, "-01:02:03.01"},
        {true, 12, 34, 56, 789000, 3, "-12:34:56.789"},
        {true, 12, 34, 56, 789100, 4, "-12:34:56.7891"},
        {true, 100, 0, 1, 120, 5, "-100:00:01.00012"},
        {true, 0, 0, 0, 1, 6, "-00:00:00.000001"},
        {false, 0, 0, 0, 999999, 6, "00:00:00.999999"},
    };
    for (const Case &c : cases) {
        Fixture f;
        EXPECT_EQ(f.one({coltype::Time2, meta1(static_cast<std::uint8_t>(c.fsp))},
                        time2(c.negative, c.h, c.m, c.s, c.micros, c.fsp)),
                  c.text);
    }
}

TEST(BinlogDecoder, zeroDatesAreInvalidValuesAndTheErrorNamesColumnAndKey)
{
    Fixture f;
    std::vector<Col> cols{{coltype::Long, {}, false, 0, {}, "id"}, {coltype::Date, {}, false, 0, {}, "born"}};
    Bytes zeroDate(3, '\0');
    Rows r = f.insert(cols, {Bytes("\x05\x00\x00\x00", 4), zeroDate});
    ASSERT_EQ(r.rows.size(), 1u);
    EXPECT_EQ(r.rows[0].after[1].kind, Value::Kind::Invalid);
    EXPECT_EQ(r.rows[0].after[1].text, "0000-00-00");
    try {
        r.throwIfInvalid();
        FAIL() << "no error";
    } catch (const SchemaError &e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("`born`"), std::string::npos) << what;
        EXPECT_NE(what.find("id=5"), std::string::npos) << what;
        EXPECT_NE(what.find("`shop`.`t`"), std::string::npos) << what;
        EXPECT_FALSE(e.hint().empty());
    }
    // A zero month, Feb 30 (ALLOW_INVALID_DATES) and the zero TIMESTAMP are invalid too.
    Bytes feb30;
    putLe(feb30, (2023u << 9) | (2u << 5) | 30u, 3);
    EXPECT_EQ(f.insert({{coltype::Date, {}}}, {feb30}).rows[0].after[0].kind, Value::Kind::Invalid);
    EXPECT_EQ(f.insert({{coltype::DateTime2, meta1(0)}}, {datetime2(2024, 0, 1, 0, 0, 0, 0, 0)}).rows[0].after[0].kind,
              Value::Kind::Invalid);
    EXPECT_EQ(f.insert({{coltype::Timestamp2, meta1(0)}}, {Bytes(4, '\0')}).rows[0].after[0].kind,
              Value::Kind::Invalid);
    Bytes ok;
    putLe(ok, (2024u << 9) | (2u << 5) | 29u, 3);
    EXPECT_EQ(f.one({coltype::Date, {}}, ok), "2024-02-29");
}

TEST(BinlogDecoder, integersFollowTheTableMapSignedness)
{
    Fixture f;
    EXPECT_EQ(f.one({coltype::Tiny, {}, true}, "\xff"), "255");
    EXPECT_EQ(f.one({coltype::Tiny, {}, false}, "\xff"), "-1");
    EXPECT_EQ(f.one({coltype::Tiny, {}, false}, "\x80"), "-128");
    EXPECT_EQ(f.one({coltype::Short, {}, true}, "\xff\xff"), "65535");
    EXPECT_EQ(f.one({coltype::Int24, {}, false}, Bytes("\x00\x00\x80", 3)), "-8388608");
    EXPECT_EQ(f.one({coltype::Int24, {}, true}, "\xff\xff\xff"), "16777215");
    EXPECT_EQ(f.one({coltype::Long, {}, true}, "\xff\xff\xff\xff"), "4294967295");
    EXPECT_EQ(f.one({coltype::Long, {}, false}, "\xff\xff\xff\xff"), "-1");
    EXPECT_EQ(f.one({coltype::LongLong, {}, true}, Bytes(8, '\xff')), "18446744073709551615");
    EXPECT_EQ(f.one({coltype::LongLong, {}, false}, Bytes("\x00\x00\x00\x00\x00\x00\x00\x80", 8)),
              "-9223372036854775808");
    EXPECT_EQ(f.one({coltype::Year, {}}, Bytes(1, '\0')), "0");
    EXPECT_EQ(f.one({coltype::Year, {}}, Bytes(1, static_cast<char>(255))), "2155");
}

TEST(BinlogDecoder, floatsAreTheShortestRoundTrippingText)
{
    Fixture f;
    auto fl = [](float v) {
        Bytes b(4, '\0');
        std::memcpy(b.data(), &v, 4);
        return b;
    };
    auto db = [](double v) {
        Bytes b(8, '\0');
        std::memcpy(b.data(), &v, 8);
        return b;
    };
    EXPECT_EQ(f.one({coltype::Float, meta1(4)}, fl(0.1f)), "0.1");
    EXPECT_EQ(f.one({coltype::Float, meta1(4)}, fl(3.4028235e38f)), "3.4028235e+38");
    EXPECT_EQ(f.one({coltype::Float, meta1(4)}, fl(-1.5f)), "-1.5");
    EXPECT_EQ(f.one({coltype::Double, meta1(8)}, db(0.1)), "0.1");
    EXPECT_EQ(f.one({coltype::Double, meta1(8)}, db(1e308)), "1e+308");
}

TEST(BinlogDecoder, bitIsNBinaryDigitsMostSignificantFirst)
{
    Fixture f;
    EXPECT_EQ(f.one({coltype::Bit, meta2(4, 0)}, "\x05"), "0101");
    EXPECT_EQ(f.one({coltype::Bit, meta2(1, 0)}, "\x01"), "1");
    EXPECT_EQ(f.one({coltype::Bit, meta2(2, 1)}, "\x02\xaa"), "1010101010");
    EXPECT_EQ(f.one({coltype::Bit, meta2(0, 8)}, Bytes(8, '\xff')), std::string(64, '1'));
    EXPECT_EQ(f.one({coltype::Bit, meta2(0, 8)}, Bytes("\x80\0\0\0\0\0\0\x01", 8)), "1" + std::string(62, '0') + "1");
}

TEST(BinlogDecoder, enumAndSetBecomeLabels)
{
    Fixture f;
    const std::vector<std::string> sizes{"small", "medium", "large"};
    const Col e{coltype::String, meta2(coltype::Enum, 1), false, 45, sizes};
    EXPECT_EQ(f.one(e, "\x02"), "medium");
    EXPECT_EQ(f.one(e, Bytes(1, '\0')), ""); // the error value
    const Col s{coltype::String, meta2(coltype::Set, 1), false, 45, {"a", "b", "c", "d"}};
    EXPECT_EQ(f.one(s, "\x0b"), "a,b,d");
    EXPECT_EQ(f.one(s, Bytes(1, '\0')), "");
    // latin1 labels arrive as latin1 and come out as UTF-8.
    const Col l{coltype::String, meta2(coltype::Enum, 1), false, 8, {"caf\xe9"}};
    EXPECT_EQ(f.one(l, "\x01"), "caf\xc3\xa9");
    // An index past the labels is malformed, not a crash.
    EXPECT_THROW(f.one(e, "\x09"), Error);
}

TEST(BinlogDecoder, charDropsTrailingSpacesAndBinaryIsRepaddedWithZeros)
{
    Fixture f;
    EXPECT_EQ(f.one({coltype::String, meta2(254, 40), false, 45}, lenPrefixed("ab")), "ab");
    EXPECT_EQ(f.one({coltype::String, meta2(254, 40), false, 45}, lenPrefixed("ab  ")), "ab");
    EXPECT_EQ(f.one({coltype::String, meta2(254, 40), false, 45}, lenPrefixed("\xf0\x9f\x98\x80 x")),
              "\xf0\x9f\x98\x80 x");
    EXPECT_EQ(f.one({coltype::String, meta2(254, 8), false, 63}, lenPrefixed("ab")), Bytes("ab\0\0\0\0\0\0", 8));
    EXPECT_EQ(f.one({coltype::String, meta2(254, 8), false, 63}, lenPrefixed("a ")), Bytes("a \0\0\0\0\0\0", 8));
    // CHAR(100) in utf8mb4 is 400 bytes: the length folds into the type byte and the prefix is 2 bytes.
    const Col wide{coltype::String, meta2(254 ^ 0x10, 400 & 0xFF), false, 45};
    EXPECT_EQ(f.one(wide, Bytes("\x03\x00xyz", 5)), "xyz");
    // latin1 to UTF-8, with MySQL's cp1252 bytes 0x80-0x9f.
    EXPECT_EQ(f.one({coltype::VarChar, meta2(20, 0), false, 8}, lenPrefixed("\xe9\x80\x81")),
              "\xc3\xa9\xe2\x82\xac\xc2\x81");
}

TEST(BinlogDecoder, blobsAndTextsByCharset)
{
    Fixture f;
    EXPECT_EQ(f.one({coltype::Blob, meta1(2), false, 63}, Bytes("\x03\x00\x00\x01\xff", 5)), Bytes("\0\x01\xff", 3));
    EXPECT_EQ(f.one({coltype::Blob, meta1(4), false, 45}, Bytes("\x02\0\0\0hi", 6)), "hi");
    EXPECT_EQ(f.one({coltype::VarChar, meta2(0x2c, 0x01), false, 45}, Bytes("\x02\x00hi", 4)), "hi"); // 300 bytes
}

TEST(BinlogDecoder, unsupportedCharsetsAndMysqlJsonAreRefusedNamingTheColumn)
{
    Fixture f;
    const Col sjis{coltype::VarChar, meta2(20, 0), false, 13, {}, "name"};
    try {
        f.one(sjis, lenPrefixed("x"));
        FAIL() << "no error";
    } catch (const SchemaError &e) {
        EXPECT_NE(std::string(e.what()).find("`name`"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("sjis"), std::string::npos) << e.what();
    }
    const Col json{coltype::Json, meta1(4), false, 0, {}, "doc"};
    try {
        f.one(json, Bytes("\x01\0\0\0\0", 5));
        FAIL() << "no error";
    } catch (const SchemaError &e) {
        EXPECT_NE(std::string(e.what()).find("binary JSON"), std::string::npos) << e.what();
    }
}

TEST(BinlogDecoder, partialImagesMarkAbsentColumnsApartFromNull)
{
    Fixture f;
    std::vector<Col> cols{{coltype::Long, {}, false, 0, {}, "id"},
                          {coltype::VarChar, meta2(20, 0), false, 45, {}, "a"},
                          {coltype::VarChar, meta2(20, 0), false, 45, {}, "b"}};
    f.d.decode(f.s.event(event::TableMap, tableMapBody(7, cols)));
    // UPDATE with MINIMAL images: before = key only; after = column b only (set to NULL).
    Bytes rows = image({Bytes("\x01\0\0\0", 4)}) + image({std::nullopt});
    Event e =
        f.d.decode(f.s.event(event::UpdateRowsV1, rowsBody(7, 3, rows, false, 1, Bytes(1, '\x01'), Bytes(1, '\x04'))));
    const Rows &r = std::get<Rows>(e.body);
    ASSERT_EQ(r.rows.size(), 1u);
    EXPECT_EQ(r.op, RowOp::Update);
    const Image &before = r.rows[0].before, &after = r.rows[0].after;
    ASSERT_EQ(before.size(), 3u);
    ASSERT_EQ(after.size(), 3u);
    EXPECT_EQ(before[0], (Value{Value::Kind::Text, "1"}));
    EXPECT_EQ(before[1].kind, Value::Kind::Absent);
    EXPECT_EQ(before[2].kind, Value::Kind::Absent);
    EXPECT_EQ(after[0].kind, Value::Kind::Absent);
    EXPECT_EQ(after[1].kind, Value::Kind::Absent);
    EXPECT_EQ(after[2].kind, Value::Kind::Null);
}

TEST(BinlogDecoder, v2RowsWithExtraDataAndSeveralRows)
{
    Fixture f;
    std::vector<Col> cols{{coltype::Long, {}, false, 0, {}, "id"}, {coltype::VarChar, meta2(20, 0), false, 45}};
    f.d.decode(f.s.event(event::TableMap, tableMapBody(9, cols)));
    Bytes body;
    putLe(body, 9, 6);
    putLe(body, 1, 2);
    putLe(body, 5, 2); // extra data: its length (5) counts itself
    body += Bytes("\x00\x01\x02", 3);
    putLenenc(body, 2);
    body += '\xff';
    body += '\xff'; // after-image bitmap of the UPDATE
    body += image({Bytes("\x01\0\0\0", 4), lenPrefixed("old")}) + image({Bytes("\x01\0\0\0", 4), lenPrefixed("new")});
    body += image({Bytes("\x02\0\0\0", 4), std::nullopt}) + image({Bytes("\x02\0\0\0", 4), lenPrefixed("")});
    Event e = f.d.decode(f.s.event(event::UpdateRowsV2, body));
    const Rows &r = std::get<Rows>(e.body);
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_EQ(r.rows[0].before[1].text, "old");
    EXPECT_EQ(r.rows[0].after[1].text, "new");
    EXPECT_EQ(r.rows[1].before[1].kind, Value::Kind::Null);
    EXPECT_EQ(r.rows[1].after[1], (Value{Value::Kind::Text, ""}));
    EXPECT_TRUE(r.statementEnd);
    // The statement ended: its table map is gone.
    EXPECT_THROW(f.d.decode(f.s.event(event::DeleteRowsV2, body)), Error);
}

TEST(BinlogDecoder, checksumMismatchFailsClearly)
{
    Fixture f;
    Bytes e = f.s.event(event::Xid, Bytes(8, '\x01'));
    e[20] = static_cast<char>(e[20] ^ 0x40);
    try {
        f.d.decode(e);
        FAIL() << "no error";
    } catch (const Error &err) {
        EXPECT_FALSE(err.isTransient());
        EXPECT_NE(std::string(err.what()).find("checksum mismatch"), std::string::npos) << err.what();
    }
    // The decoder is still usable.
    EXPECT_TRUE(f.d.decode(f.s.event(event::Xid, Bytes(8, '\x01'))).endsTransaction);
}

TEST(BinlogDecoder, everyTruncationIsAnErrorNeverACrash)
{
    for (bool crc : {true, false}) {
        Stream s;
        s.crc = crc;
        std::vector<Col> cols{{coltype::Long, {}, false, 0, {}, "id"},
                              {coltype::NewDecimal, meta2(65, 30)},
                              {coltype::DateTime2, meta1(6)},
                              {coltype::Time2, meta1(3)},
                              {coltype::String, meta2(coltype::Set, 1), false, 45, {"a", "b"}},
                              {coltype::Blob, meta1(2), false, 63},
                              {coltype::Bit, meta2(3, 1)}};
        const Bytes tm = tableMapBody(7, cols);
        const Bytes rows =
            rowsBody(7, cols.size(),
                     image({Bytes("\x01\0\0\0", 4), decimalBytes("-1.5", 65, 30), datetime2(2020, 1, 1, 0, 0, 0, 0, 6),
                            time2(true, 1, 0, 0, 5000, 3), "\x03", Bytes("\x02\0zz", 4), "\x07\xff"}));
        {
            Decoder d;
            d.decode(s.formatDescription());
            d.decode(s.event(event::TableMap, tm));
            ASSERT_NO_THROW(d.decode(s.event(event::WriteRowsV1, rows)));
        }
        // Cut anywhere before the end of its fixed part, a table map is an error; past it, the
        // optional metadata may end at a field boundary, so only "no crash" is asserted there.
        const std::size_t tmFixed = tableMapBody(7, cols, "shop", "t", {0}, false).size();
        const std::size_t rowsFixed = 8 + 1 + 1; // post-header, column count, bitmap
        for (const Bytes *body : {&tm, &rows})
            for (std::size_t cut = 0; cut < body->size(); ++cut) {
                Decoder d;
                d.decode(s.formatDescription());
                if (body == &rows)
                    d.decode(s.event(event::TableMap, tm));
                const std::uint8_t type = body == &tm ? event::TableMap : event::WriteRowsV1;
                Bytes full = s.event(type, body->substr(0, cut));
                if (body == &rows && cut == rowsFixed) {
                    EXPECT_TRUE(std::get<Rows>(d.decode(full).body).rows.empty());
                } else if (body == &tm && cut >= tmFixed) {
                    try {
                        d.decode(full);
                    } catch (const Error &) {
                    }
                } else {
                    EXPECT_THROW(d.decode(full), Error) << "cut at " << cut << " crc " << crc;
                }
                // A raw event cut short of its header length is an error.
                Bytes whole = s.event(type, *body);
                EXPECT_THROW(d.decode(std::string_view(whole).substr(0, 19 + cut)), Error);
            }
    }
}

TEST(BinlogDecoder, streamStartRotateGtidAndTransactionEnds)
{
    Stream s;
    Decoder d;
    // The artificial ROTATE at stream start comes before the FORMAT_DESCRIPTION, with a checksum.
    Bytes rot;
    putLe(rot, 1234, 8);
    rot += "mariadb-bin.000003";
    Event e = d.decode(s.event(event::Rotate, rot, 0x20, 1, 0));
    EXPECT_EQ(std::get<Rotate>(e.body).next, (Position{"mariadb-bin.000003", 1234}));
    EXPECT_EQ(d.position(), (Position{"mariadb-bin.000003", 1234}));
    // The FDE from the file start (log_pos 0 when resuming mid-file) does not move the position.
    Bytes fd = s.formatDescription();
    std::memset(fd.data() + 13, 0, 4);
    fd.resize(fd.size() - 4);
    putLe(fd, crc32(fd), 4);
    e = d.decode(fd);
    EXPECT_TRUE(std::get<FormatDescription>(e.body).checksumCrc32);
    EXPECT_EQ(d.position().offset, 1234u);

    s.pos = 1234;
    Bytes g;
    putLe(g, 42, 8);
    putLe(g, 0, 4);
    g += static_cast<char>(0x08 | 0x04 | 0x02);
    putLe(g, 77, 8);
    e = d.decode(s.event(event::MariaGtid, g, 0, 5));
    const Gtid &gtid = std::get<Gtid>(e.body);
    EXPECT_EQ(gtid.gtid.text(), "0-5-42");
    EXPECT_TRUE(gtid.transactional());
    EXPECT_FALSE(gtid.standalone());
    EXPECT_EQ(gtid.commitId, 77u);
    EXPECT_TRUE(d.inTransaction());
    e = d.decode(s.event(event::Xid, Bytes(8, '\x09')));
    EXPECT_TRUE(e.endsTransaction);
    EXPECT_EQ(d.position(), (Position{"mariadb-bin.000003", s.pos}));
    ASSERT_TRUE(d.committedGtid());
    EXPECT_EQ(d.committedGtid()->text(), "0-5-42");

    // DDL: a standalone GTID, then one QUERY that ends the group.
    Bytes g2;
    putLe(g2, 43, 8);
    putLe(g2, 0, 4);
    g2 += static_cast<char>(0x29);
    d.decode(s.event(event::MariaGtid, g2, 0, 5));
    Bytes q;
    putLe(q, 7, 4);
    putLe(q, 0, 4);
    q += static_cast<char>(4);
    putLe(q, 0, 2);
    putLe(q, 3, 2);
    q += "\x01\x02\x03";
    q += Bytes("shop\0", 5);
    q += "ALTER TABLE t ADD c INT";
    e = d.decode(s.event(event::Query, q));
    EXPECT_TRUE(e.endsTransaction);
    EXPECT_EQ(std::get<Query>(e.body).schema, "shop");
    EXPECT_EQ(std::get<Query>(e.body).sql, "ALTER TABLE t ADD c INT");
    EXPECT_EQ(d.committedGtid()->sequence, 43u);

    // Heartbeat: names the file, does not end anything.
    e = d.decode(s.event(event::Heartbeat, "mariadb-bin.000003", 0, 1, s.pos));
    EXPECT_EQ(std::get<Heartbeat>(e.body).file, "mariadb-bin.000003");
    EXPECT_FALSE(e.endsTransaction);
    // An event the decoder does not act on.
    e = d.decode(s.event(event::BinlogCheckpoint, Bytes("\x04\0\0\0abcd", 8)));
    EXPECT_TRUE(std::holds_alternative<Other>(e.body));
    // ROTATE at the end of the file moves to the next one.
    Bytes rot2;
    putLe(rot2, 4, 8);
    rot2 += "mariadb-bin.000004";
    d.decode(s.event(event::Rotate, rot2));
    EXPECT_EQ(d.position(), (Position{"mariadb-bin.000004", 4}));
}

TEST(BinlogDecoder, beginAndCommitQueriesFrameNonTransactionalGroups)
{
    Fixture f;
    auto query = [&](const std::string &sql) {
        Bytes q(8, '\0');
        q += '\0';
        q += Bytes(4, '\0');
        q += '\0';
        q += sql;
        return f.d.decode(f.s.event(event::Query, q));
    };
    EXPECT_FALSE(query("BEGIN").endsTransaction);
    EXPECT_TRUE(f.d.inTransaction());
    EXPECT_FALSE(query("INSERT INTO t VALUES (1)").endsTransaction);
    EXPECT_TRUE(query("COMMIT").endsTransaction);
    EXPECT_TRUE(query("CREATE TABLE x (a INT)").endsTransaction);
}

// Two-way loop prevention reads the header flag a skip_replication session's events carry; the
// rows of such an event decode as any other's.
TEST(BinlogDecoder, skipReplicationFlagIsExposedOnEveryEvent)
{
    Fixture f;
    const Col id{coltype::Long, {}, false};
    Event map = f.d.decode(f.s.event(event::TableMap, tableMapBody(7, {id}), 0x8000));
    EXPECT_TRUE(map.header.skipReplication());
    Event marked = f.d.decode(f.s.event(event::WriteRowsV1, rowsBody(7, 1, image({Bytes("\x2a\0\0\0", 4)})), 0x8000));
    EXPECT_TRUE(marked.header.skipReplication());
    ASSERT_EQ(std::get<Rows>(marked.body).rows.size(), 1u);
    EXPECT_EQ(std::get<Rows>(marked.body).rows[0].after[0].text, "42");
    // The statement ended (STMT_END_F): the next one maps its table again, unmarked.
    EXPECT_FALSE(f.d.decode(f.s.event(event::TableMap, tableMapBody(7, {id}))).header.skipReplication());
    Event plain = f.d.decode(f.s.event(event::WriteRowsV1, rowsBody(7, 1, image({Bytes("\x2a\0\0\0", 4)}))));
    EXPECT_FALSE(plain.header.skipReplication());
}

TEST(BinlogDecoder, tableFilterSkipsRowsOfOtherTables)
{
    Fixture f;
    f.d.setTableFilter([](const TableMap &t) { return t.table != "t"; });
    const Col json{coltype::Json, meta1(4)};
    f.d.decode(f.s.event(event::TableMap, tableMapBody(7, {json})));
    Event e = f.d.decode(f.s.event(event::WriteRowsV1, rowsBody(7, 1, image({Bytes("\x01\0\0\0\0", 5)}))));
    EXPECT_TRUE(std::get<Rows>(e.body).skipped);
    EXPECT_TRUE(std::get<Rows>(e.body).rows.empty());
}

TEST(BinlogDecoder, tableMapCarriesNamesKeyAndMetadata)
{
    Fixture f;
    std::vector<Col> cols{{coltype::LongLong, {}, true, 0, {}, "id"},
                          {coltype::String, meta2(254, 40), false, 45, {}, "code"},
                          {coltype::String, meta2(coltype::Enum, 1), false, 45, {"x", "y"}, "kind"}};
    Event e = f.d.decode(f.s.event(event::TableMap, tableMapBody(3, cols, "db1", "orders", {0, 1})));
    const TableMap &t = std::get<TableMap>(e.body);
    EXPECT_EQ(t.qualifiedName(), "`db1`.`orders`");
    ASSERT_EQ(t.columns.size(), 3u);
    EXPECT_EQ(t.columns[0].name, "id");
    EXPECT_TRUE(t.columns[0].isUnsigned);
    EXPECT_EQ(t.columns[1].collation, 45u);
    EXPECT_EQ(t.columns[1].maxLength, 40u);
    EXPECT_EQ(t.columns[2].type, coltype::Enum);
    EXPECT_EQ(t.columns[2].labels, (std::vector<std::string>{"x", "y"}));
    EXPECT_EQ(t.primaryKey, (std::vector<unsigned>{0, 1}));
}

TEST(BinlogDecoder, positionVersionGrowsWithFileAndOffset)
{
    EXPECT_EQ(positionVersion({"mariadb-bin.000001", 4}), (1LL << 52) + (1LL << 32) + 4);
    EXPECT_LT(positionVersion({"bin.000001", 0xFFFFFFFF}), positionVersion({"bin.000002", 4}));
    EXPECT_THROW(positionVersion({"binlog", 4}), Error);
}

TEST(BinlogDecoder, rowsWithNoColumnPresentAreMalformedNotAnEndlessLoop)
{
    // Found by fuzz_binlog: such an image takes no bytes, so the row loop never advanced.
    Fixture f;
    std::vector<Col> cols{{coltype::Long, {}, false, 0, {}, "id"}};
    f.d.decode(f.s.event(event::TableMap, tableMapBody(7, cols)));
    EXPECT_THROW(f.d.decode(f.s.event(event::WriteRowsV1, rowsBody(7, 1, Bytes(3, '\0'), false, 1, Bytes(1, '\0')))),
                 Error);
    // Padding bits past the last column do not count as present columns.
    f.d.decode(f.s.event(event::TableMap, tableMapBody(7, cols)));
    EXPECT_THROW(f.d.decode(f.s.event(event::WriteRowsV1, rowsBody(7, 1, Bytes(3, '\0'), false, 1, Bytes(1, '\xfe')))),
                 Error);
}

namespace {
Value text(const char *s)
{
    return {Value::Kind::Text, s};
}
Value absent()
{
    return {Value::Kind::Absent, {}};
}
} // namespace

/// RowImages (the binlog's row images as a table's changes): columns in the table's order through
/// the layout, a column the map lacks or an image leaves out marked unchanged on an update, the
/// key of a MINIMAL after image taken from the before image, a changed key split into a delete and
/// an insert, and (two-way) each change's row as it was.
TEST(BinlogRowImages, imagesBecomeChangesInTheTablesOrder)
{
    TableSchema schema;
    for (const char *name : {"id", "name", "data", "added"}) {
        ColumnInfo c;
        c.name = name;
        c.baseType = std::string(name) == "data" ? "bytea" : "text";
        schema.columns.push_back(c);
    }
    schema.primaryKey = {0};
    const std::vector<int> layout = {1, 0, 2, -1}; // the map: name, id, data; `added` came later
    RowImages images;
    RowSet out;

    Rows insert;
    insert.op = RowOp::Insert;
    insert.rows.push_back({{}, {text("a\tb"), text("1"), text("hi")}});
    EXPECT_EQ(images.append(schema, layout, insert, 7, false, out), 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out.line(0), "1\ta\\tb\t\\\\x6869\t\\N");
    EXPECT_EQ(out.unchangedMask(0), "");
    EXPECT_EQ(out.row(0).version, 7);

    // MINIMAL: the after image has only the changed column; the key comes from the before image.
    Rows update;
    update.op = RowOp::Update;
    update.rows.push_back({{absent(), text("1"), absent()}, {text("c"), absent(), absent()}});
    EXPECT_EQ(images.append(schema, layout, update, 8, false, out), 1);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out.row(1).op, ChangeOp::Update);
    EXPECT_EQ(out.line(1).substr(0, 4), "1\tc\t");
    EXPECT_EQ(out.unchangedMask(1), "0011");

    // A changed key, two-way: the old key's delete with its row, the new key's row with no base.
    RowSet twoWay;
    Rows rekey;
    rekey.op = RowOp::Update;
    rekey.rows.push_back({{text("x"), text("1"), text("")}, {text("x"), text("2"), text("")}});
    EXPECT_EQ(images.append(schema, layout, rekey, 9, true, twoWay), 1);
    ASSERT_EQ(twoWay.size(), 2u);
    EXPECT_EQ(twoWay.row(0).op, ChangeOp::Delete);
    EXPECT_EQ(twoWay.line(0), "1\tx\t\\\\x\t\\N");
    EXPECT_EQ(twoWay.before(0), twoWay.line(0));
    EXPECT_EQ(twoWay.row(1).op, ChangeOp::Update);
    EXPECT_EQ(twoWay.line(1), "2\tx\t\\\\x\t\\N");
    EXPECT_EQ(twoWay.beforeIndex(1), RowSet::kNoBase);

    Rows del;
    del.op = RowOp::Delete;
    del.rows.push_back({{text("x"), text("2"), absent()}, {}});
    EXPECT_EQ(images.append(schema, layout, del, 10, true, twoWay), 1);
    EXPECT_EQ(twoWay.row(2).op, ChangeOp::Delete);
    EXPECT_EQ(twoWay.unchangedMask(2), "") << "a delete carries no mask";
    EXPECT_EQ(twoWay.before(2), twoWay.line(2));
}
