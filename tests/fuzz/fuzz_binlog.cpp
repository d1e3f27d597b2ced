// libFuzzer target for the binlog decoder. The input drives a stream: a valid FORMAT_DESCRIPTION
// (checksum on or off) and a TABLE_MAP of a table with every column type, then events whose
// bodies come from the input. By default each event gets a correct header and CRC, so the
// fuzzer reaches the body parsers; in raw mode the input's chunks are fed as whole events.
// Every malformed input must end in driftless::core::Error; anything else (another exception,
// a sanitizer report) is a bug.
#include "core/model/error.h"
#include "core/readers/binlog/binlogdecoder.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace driftless::core;
using namespace driftless::core::binlog;

namespace {

void putLe(std::string &b, std::uint64_t v, int n)
{
    for (int i = 0; i < n; ++i)
        b += static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::string makeEvent(std::uint8_t type, const std::string &body, bool crc, std::uint32_t logPos)
{
    std::string e;
    putLe(e, 1700000000, 4);
    e += static_cast<char>(type);
    putLe(e, 1, 4);
    putLe(e, 19 + body.size() + (crc ? 4 : 0), 4);
    putLe(e, logPos, 4);
    putLe(e, 0, 2);
    e += body;
    if (crc)
        putLe(e, crc32(e), 4);
    return e;
}

std::string formatDescription(bool crc)
{
    std::string body;
    putLe(body, 4, 2);
    std::string version = "10.11.19-MariaDB-log";
    version.resize(50, '\0');
    body += version;
    putLe(body, 0, 4);
    body += static_cast<char>(19);
    std::string lengths(168, '\0');
    lengths[event::Query - 1] = 13;
    lengths[event::Rotate - 1] = 8;
    lengths[event::TableMap - 1] = 8;
    for (int t : {23, 24, 25})
        lengths[t - 1] = 8;
    for (int t : {30, 31, 32})
        lengths[t - 1] = 10;
    lengths[event::MariaGtid - 1] = 19;
    body += lengths;
    body += static_cast<char>(crc ? 1 : 0);
    std::string e = makeEvent(event::FormatDescription, body, true, 256);
    if (!crc) {
        e.resize(e.size() - 4);
        putLe(e, 0, 4);
    }
    return e;
}

/// A table with one column of each type: INT, INT UNSIGNED, DECIMAL(65,30), DECIMAL(10,2),
/// FLOAT, DOUBLE, BIT(10), DATE, DATETIME(6), DATETIME(0), TIMESTAMP(3), TIME(6), TIME(1), YEAR,
/// CHAR(10) utf8mb4, CHAR(400 bytes), BINARY(8), VARCHAR(300) latin1, BLOB, TEXT, ENUM, SET,
/// GEOMETRY, BIGINT, MEDIUMINT, old DATETIME, old TIME, old TIMESTAMP.
std::string tableMap()
{
    const std::uint8_t types[] = {3,   3,   246, 246, 4,   5,   16,  10,  18,  18, 17, 19, 19, 13,
                                  254, 254, 254, 15,  252, 252, 254, 254, 255, 8,  9,  12, 11, 7};
    std::string meta;
    meta += std::string("\x41\x1e", 2); // DECIMAL(65,30)
    meta += std::string("\x0a\x02", 2); // DECIMAL(10,2)
    meta += "\x04";                     // FLOAT
    meta += "\x08";                     // DOUBLE
    meta += std::string("\x02\x01", 2); // BIT(10)
    meta += "\x06";                     // DATETIME(6)
    meta += std::string(1, '\0');       // DATETIME(0)
    meta += "\x03";                     // TIMESTAMP(3)
    meta += "\x06";                     // TIME(6)
    meta += "\x01";                     // TIME(1)
    meta += std::string("\xfe\x28", 2); // CHAR(10) utf8mb4 = 40 bytes
    meta += std::string("\xee\x90", 2); // CHAR(100) utf8mb4 = 400 bytes
    meta += std::string("\xfe\x08", 2); // BINARY(8)
    meta += std::string("\x2c\x01", 2); // VARCHAR(300)
    meta += "\x02";                     // BLOB
    meta += "\x04";                     // LONGTEXT
    meta += std::string("\xf7\x01", 2); // ENUM
    meta += std::string("\xf8\x01", 2); // SET
    meta += "\x04";                     // GEOMETRY
    std::string b;
    putLe(b, 7, 6);
    putLe(b, 1, 2);
    b += std::string("\x02"
                     "db\0",
                     4);
    b += std::string("\x01"
                     "t\0",
                     3);
    b += static_cast<char>(sizeof types);
    b.append(reinterpret_cast<const char *>(types), sizeof types);
    b += static_cast<char>(meta.size());
    b += meta;
    b += std::string(4, '\xff'); // nullable
    auto tlv = [&](std::uint8_t type, const std::string &v) {
        b += static_cast<char>(type);
        b += static_cast<char>(v.size());
        b += v;
    };
    tlv(1, std::string("\x40\x00\x00", 3)); // signedness: the second INT is unsigned
    // Character columns: CHAR, CHAR, BINARY, VARCHAR, BLOB, TEXT, GEOMETRY (MariaDB counts it).
    tlv(3, std::string("\x2d\x2d\x3f\x08\x3f\x2d\x3f", 7));
    std::string names;
    for (std::size_t i = 0; i < sizeof types; ++i) {
        names += '\x02';
        names += static_cast<char>('a' + i % 26);
        names += static_cast<char>('a' + i / 26);
    }
    tlv(4, names);
    tlv(5, std::string("\x03\x01"
                       "a\x01"
                       "b\x01"
                       "c",
                       8));
    tlv(6, std::string("\x02\x05"
                       "small\x05"
                       "large",
                       13));
    tlv(8, std::string("\x00", 1));
    tlv(11, std::string("\x2d\x08", 2));
    return b;
}

constexpr std::uint8_t kTypes[] = {
    event::TableMap,    event::WriteRowsV1,  event::UpdateRowsV1,      event::DeleteRowsV1,
    event::WriteRowsV2, event::UpdateRowsV2, event::DeleteRowsV2,      event::Query,
    event::Rotate,      event::MariaGtid,    event::GtidList,          event::Xid,
    event::Heartbeat,   event::MysqlGtid,    event::FormatDescription, 161};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size < 1)
        return 0;
    const std::string_view in(reinterpret_cast<const char *>(data), size);
    const std::uint8_t mode = static_cast<std::uint8_t>(in[0]);
    const bool crc = mode & 1, raw = mode & 2;
    static const std::string tm = tableMap();
    Decoder d;
    std::uint32_t pos = 256;
    auto feed = [&](std::string_view e) {
        try {
            d.decode(e);
        } catch (const Error &) {
            // Expected for malformed input: the decoder stays usable.
        }
    };
    feed(formatDescription(crc));
    feed(makeEvent(event::TableMap, tm, crc, pos += 100));
    std::size_t at = 1;
    while (at + 3 <= size) {
        const std::uint8_t selector = static_cast<std::uint8_t>(in[at]);
        const std::size_t length = static_cast<std::uint8_t>(in[at + 1]) | static_cast<std::size_t>(in[at + 2] & 0x0f)
                                                                               << 8;
        at += 3;
        const std::string_view chunk = in.substr(at, std::min(length, size - at));
        at += chunk.size();
        if (raw) {
            feed(chunk);
            continue;
        }
        const std::uint8_t type = kTypes[selector & 0x0f];
        std::string body;
        if ((selector & 0x10) && type >= event::WriteRowsV1 && type <= event::DeleteRowsV2 &&
            type != event::Heartbeat) {
            // A correct rows post-header for table 7 with all columns present, so the input
            // goes straight to the row images.
            if (selector & 0x20)
                feed(makeEvent(event::TableMap, tm, crc, pos += 100));
            putLe(body, 7, 6);
            putLe(body, selector & 0x40 ? 1 : 0, 2);
            if (type >= event::WriteRowsV2)
                putLe(body, 2, 2);
            body += static_cast<char>(28);
            body += std::string(4, '\xff');
            if (type == event::UpdateRowsV1 || type == event::UpdateRowsV2)
                body += std::string(4, '\xff');
        }
        body.append(chunk);
        feed(makeEvent(type, body, crc, (selector & 0x80) ? 0 : (pos += static_cast<std::uint32_t>(body.size()))));
    }
    return 0;
}
