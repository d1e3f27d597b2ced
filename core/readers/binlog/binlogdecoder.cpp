#include "core/readers/binlog/binlogdecoder.h"

#include "core/readers/binlog/binlogvalues.h"
#include "core/readers/binlog/bytereader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

namespace driftless::core::binlog {

namespace {

constexpr std::size_t kHeaderSize = 19;
constexpr std::uint16_t kStmtEndFlag = 0x01;

[[noreturn]] void malformed(const std::string &what)
{
    throw Error(ErrorKind::Permanent, "malformed binlog event: " + what, {},
                "the event stream is corrupt; re-read from the last checkpoint");
}

const std::array<std::uint32_t, 256> &crcTable()
{
    static const std::array<std::uint32_t, 256> table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k)
                c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    return table;
}

std::uint32_t le32(std::string_view b, std::size_t at)
{
    return static_cast<std::uint32_t>(static_cast<std::uint8_t>(b[at])) |
           static_cast<std::uint32_t>(static_cast<std::uint8_t>(b[at + 1])) << 8 |
           static_cast<std::uint32_t>(static_cast<std::uint8_t>(b[at + 2])) << 16 |
           static_cast<std::uint32_t>(static_cast<std::uint8_t>(b[at + 3])) << 24;
}

bool startsWithWord(std::string_view sql, std::string_view word)
{
    std::size_t i = 0;
    while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i])))
        ++i;
    if (sql.size() - i < word.size())
        return false;
    for (std::size_t k = 0; k < word.size(); ++k)
        if (std::toupper(static_cast<unsigned char>(sql[i + k])) != word[k])
            return false;
    const std::size_t end = i + word.size();
    return end == sql.size() || !std::isalnum(static_cast<unsigned char>(sql[end]));
}

} // namespace

std::uint32_t crc32(std::string_view bytes, std::uint32_t crc)
{
    const auto &table = crcTable();
    crc = ~crc;
    for (unsigned char ch : bytes)
        crc = table[(crc ^ ch) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

std::string MariaGtid::text() const
{
    return std::to_string(domain) + "-" + std::to_string(serverId) + "-" + std::to_string(sequence);
}

std::string MysqlGtid::text() const
{
    char buf[48];
    std::string s;
    for (std::size_t i = 0; i < uuid.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            s += '-';
        std::snprintf(buf, sizeof buf, "%02x", uuid[i]);
        s += buf;
    }
    return s + ":" + std::to_string(gno);
}

bool Query::isBegin() const
{
    return startsWithWord(sql, "BEGIN") || startsWithWord(sql, "XA START");
}
bool Query::isCommit() const
{
    return startsWithWord(sql, "COMMIT") || startsWithWord(sql, "XA COMMIT");
}
bool Query::isRollback() const
{
    return startsWithWord(sql, "ROLLBACK") || startsWithWord(sql, "XA ROLLBACK");
}

void Rows::throwIfInvalid() const
{
    for (const RowChange &change : rows)
        for (const Image *image : {&change.before, &change.after})
            for (std::size_t i = 0; i < image->size(); ++i) {
                if ((*image)[i].kind != Value::Kind::Invalid)
                    continue;
                std::string key;
                for (unsigned k : table->primaryKey) {
                    if (k >= image->size() || k >= table->columns.size())
                        continue;
                    key += key.empty() ? "" : ", ";
                    key += table->columns[k].name.empty() ? "#" + std::to_string(k + 1) : table->columns[k].name;
                    key += "=";
                    const Value &v = (*image)[k];
                    if (v.kind != Value::Kind::Text) {
                        key += v.kind == Value::Kind::Null ? "NULL" : "?";
                        continue;
                    }
                    for (unsigned char ch : v.text) {
                        if (ch >= 0x20 && ch < 0x7f) {
                            key += static_cast<char>(ch);
                        } else {
                            char buf[8];
                            std::snprintf(buf, sizeof buf, "\\x%02x", ch);
                            key += buf;
                        }
                    }
                }
                throw SchemaError("the row" + (key.empty() ? std::string() : " with key (" + key + ")") + " of " +
                                      table->qualifiedName() + " holds '" + (*image)[i].text + "' in" +
                                      detail::describeColumn(*table, i) +
                                      ", a zero or invalid date that Postgres cannot store",
                                  "fix the rows on the source (or exclude the column with a view)");
            }
}

Decoder::Decoder() = default;

void Decoder::setCollationCharset(std::uint32_t collation, std::string charset)
{
    m_extraCharsets[collation] = std::move(charset);
}

std::string Decoder::charsetOf(std::uint32_t collation) const
{
    if (auto it = m_extraCharsets.find(collation); it != m_extraCharsets.end())
        return it->second;
    return detail::builtinCharsetOf(collation);
}

void Decoder::setTableFilter(std::function<bool(const TableMap &)> filter)
{
    m_filter = std::move(filter);
}

std::size_t Decoder::postHeaderLength(std::uint8_t type, std::size_t fallback) const
{
    if (type >= 1 && static_cast<std::size_t>(type - 1) < m_postHeader.size())
        return m_postHeader[type - 1];
    return fallback;
}

Event Decoder::decode(std::string_view raw)
{
    if (raw.size() < kHeaderSize)
        malformed("an event of " + std::to_string(raw.size()) + " bytes is shorter than the 19-byte header");
    ByteReader h(raw.substr(0, kHeaderSize), "event header");
    Header header;
    header.timestamp = static_cast<std::uint32_t>(h.le(4, "timestamp"));
    header.type = h.u8("type");
    header.serverId = static_cast<std::uint32_t>(h.le(4, "server id"));
    header.length = static_cast<std::uint32_t>(h.le(4, "length"));
    header.logPos = static_cast<std::uint32_t>(h.le(4, "log position"));
    header.flags = static_cast<std::uint16_t>(h.le(2, "flags"));
    if (header.length != raw.size())
        malformed("event type " + std::to_string(header.type) + " says it is " + std::to_string(header.length) +
                  " bytes long but " + std::to_string(raw.size()) + " bytes arrived");

    bool checksummed = m_checksum;
    if (header.type == event::FormatDescription) {
        // The FORMAT_DESCRIPTION carries the algorithm byte and a checksum field whatever it says.
        if (raw.size() < kHeaderSize + 57 + 5)
            malformed("FORMAT_DESCRIPTION of " + std::to_string(raw.size()) + " bytes");
        const std::uint8_t alg = static_cast<std::uint8_t>(raw[raw.size() - 5]);
        if (alg != 0 && alg != 1)
            malformed("FORMAT_DESCRIPTION names checksum algorithm " + std::to_string(alg));
        checksummed = alg == 1;
    } else if (!m_haveFormat && raw.size() >= kHeaderSize + 4) {
        // Before the first FORMAT_DESCRIPTION (the artificial ROTATE at stream start) nothing
        // says whether a checksum follows; it does exactly when the last 4 bytes are the CRC.
        checksummed = crc32(raw.substr(0, raw.size() - 4)) == le32(raw, raw.size() - 4);
    }
    if (checksummed) {
        if (raw.size() < kHeaderSize + 4)
            malformed("event type " + std::to_string(header.type) + " is too short for its checksum");
        const std::uint32_t expected = le32(raw, raw.size() - 4);
        const std::uint32_t actual = crc32(raw.substr(0, raw.size() - 4));
        if (expected != actual) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "checksum mismatch (CRC32 %08x in the event, %08x computed)", expected,
                          actual);
            throw Error(ErrorKind::Permanent,
                        "binlog event type " + std::to_string(header.type) + " ending at " + m_position.file + ":" +
                            std::to_string(header.logPos) + " failed its " + buf,
                        {},
                        "the binlog or the network corrupted it; re-read from the last checkpoint, and check the "
                        "source's binlog with mariadb-binlog --verify-binlog-checksum if it happens again");
        }
    }
    const bool trailer = checksummed || header.type == event::FormatDescription;
    std::string_view body = raw.substr(kHeaderSize, raw.size() - kHeaderSize - (trailer ? 4 : 0));
    Event ev = decodeBody(header, body);

    // State changes only after the whole event decoded.
    if (auto *rotate = std::get_if<Rotate>(&ev.body)) {
        m_position = rotate->next;
    } else if (header.logPos != 0 && header.logPos > m_position.offset) {
        m_position.offset = header.logPos;
    }
    if (auto *fd = std::get_if<FormatDescription>(&ev.body)) {
        m_haveFormat = true;
        m_checksum = fd->checksumCrc32;
        m_postHeader = fd->postHeaderLengths;
        m_mariadb = fd->serverVersion.find("MariaDB") != std::string::npos;
        m_tables.clear();
    } else if (auto *tm = std::get_if<TableMap>(&ev.body)) {
        m_tables[tm->tableId] = std::make_shared<const TableMap>(*tm);
    } else if (auto *rows = std::get_if<Rows>(&ev.body)) {
        if (rows->statementEnd)
            m_tables.clear();
    } else if (auto *gtid = std::get_if<Gtid>(&ev.body)) {
        m_inTransaction = true;
        m_standaloneGroup = gtid->standalone();
        m_currentGtid = gtid->gtid;
    } else if (std::holds_alternative<MysqlGtid>(ev.body)) {
        m_inTransaction = false;
        m_standaloneGroup = false;
        m_currentGtid.reset();
    } else if (std::holds_alternative<Xid>(ev.body)) {
        ev.endsTransaction = true;
    } else if (auto *q = std::get_if<Query>(&ev.body)) {
        if (q->isBegin()) {
            m_inTransaction = true;
        } else if (q->isCommit() || q->isRollback() || !m_inTransaction || m_standaloneGroup) {
            ev.endsTransaction = true;
        }
    }
    if (ev.endsTransaction)
        endTransaction();
    return ev;
}

void Decoder::endTransaction()
{
    if (m_currentGtid)
        m_committedGtid = m_currentGtid;
    m_currentGtid.reset();
    m_inTransaction = false;
    m_standaloneGroup = false;
    m_tables.clear();
}

Event Decoder::decodeBody(const Header &header, std::string_view body)
{
    Event ev;
    ev.header = header;
    ByteReader r(body, "event body");
    switch (header.type) {
    case event::FormatDescription: {
        FormatDescription fd;
        fd.binlogVersion = static_cast<std::uint16_t>(r.le(2, "binlog version"));
        std::string_view version = r.bytes(50, "server version");
        fd.serverVersion.assign(version.substr(0, version.find('\0')));
        r.skip(4, "create time");
        const std::uint8_t headerLength = r.u8("header length");
        if (fd.binlogVersion != 4 || headerLength != kHeaderSize)
            malformed("FORMAT_DESCRIPTION of binlog version " + std::to_string(fd.binlogVersion) +
                      " with a header of " + std::to_string(headerLength) + " bytes (only v4 with 19 is read)");
        // Then one post-header length per event type and the checksum algorithm byte (the
        // 4-byte checksum field after it was cut off by decode()).
        std::string_view lengths = r.rest();
        if (lengths.empty())
            malformed("FORMAT_DESCRIPTION without its checksum algorithm");
        fd.checksumCrc32 = lengths.back() == 1;
        fd.postHeaderLengths.assign(lengths.begin(), lengths.end() - 1);
        ev.body = std::move(fd);
        break;
    }
    case event::Rotate: {
        Rotate rot;
        const std::size_t ph = postHeaderLength(event::Rotate, 8);
        if (ph < 8)
            malformed("ROTATE post-header of " + std::to_string(ph) + " bytes");
        rot.next.offset = r.le(8, "ROTATE position");
        r.skip(ph - 8, "ROTATE post-header");
        rot.next.file.assign(r.rest());
        if (rot.next.file.empty())
            malformed("ROTATE without a file name");
        ev.body = std::move(rot);
        break;
    }
    case event::MariaGtid: {
        Gtid g;
        g.gtid.sequence = r.le(8, "GTID sequence");
        g.gtid.domain = static_cast<std::uint32_t>(r.le(4, "GTID domain"));
        g.gtid.serverId = header.serverId;
        g.flags = r.u8("GTID flags");
        if (g.flags & 0x02)
            g.commitId = r.le(8, "GTID commit id");
        ev.body = g;
        break;
    }
    case event::GtidList: {
        GtidList list;
        const std::uint32_t word = static_cast<std::uint32_t>(r.le(4, "GTID_LIST count"));
        const std::uint32_t count = word & 0x0FFFFFFF;
        r.need(static_cast<std::size_t>(count) * 16, "GTID_LIST entries");
        for (std::uint32_t i = 0; i < count; ++i) {
            MariaGtid g;
            g.domain = static_cast<std::uint32_t>(r.le(4, "GTID domain"));
            g.serverId = static_cast<std::uint32_t>(r.le(4, "GTID server id"));
            g.sequence = r.le(8, "GTID sequence");
            list.gtids.push_back(g);
        }
        ev.body = std::move(list);
        break;
    }
    case event::MysqlGtid:
    case event::MysqlAnonymousGtid: {
        MysqlGtid g;
        g.anonymous = header.type == event::MysqlAnonymousGtid;
        r.skip(1, "GTID commit flag");
        std::string_view sid = r.bytes(16, "GTID server uuid");
        std::copy(sid.begin(), sid.end(), g.uuid.begin());
        g.gno = static_cast<std::int64_t>(r.le(8, "GTID number"));
        // Since 5.7: logical clock (type 2, last committed, sequence), then since 8.0.1 the
        // immediate commit timestamp (7 bytes, µs; the top bit says the original one follows).
        if (r.remaining() >= 17 && r.u8("logical clock type") == 2) {
            r.skip(16, "logical clock");
            if (r.remaining() >= 7)
                g.immediateCommitMicros = static_cast<std::int64_t>(r.le(7, "commit timestamp") & ((1ULL << 55) - 1));
        }
        ev.body = g;
        break;
    }
    case event::Xid:
        ev.body = Xid{r.le(8, "XID")};
        break;
    case event::Query: {
        Query q;
        const std::size_t ph = postHeaderLength(event::Query, 13);
        if (ph < 13)
            malformed("QUERY post-header of " + std::to_string(ph) + " bytes");
        r.skip(8, "QUERY thread id and time");
        const std::uint8_t schemaLength = r.u8("QUERY schema length");
        q.errorCode = static_cast<std::uint16_t>(r.le(2, "QUERY error code"));
        const std::size_t statusLength = static_cast<std::size_t>(r.le(2, "QUERY status length"));
        r.skip(ph - 13, "QUERY post-header");
        r.skip(statusLength, "QUERY status variables");
        q.schema.assign(r.bytes(schemaLength, "QUERY schema"));
        r.skip(1, "QUERY schema terminator");
        q.sql.assign(r.rest());
        ev.body = std::move(q);
        break;
    }
    case event::Heartbeat:
        r.skip(postHeaderLength(event::Heartbeat, 0), "HEARTBEAT post-header");
        ev.body = Heartbeat{std::string(r.rest())};
        break;
    case event::TableMap:
        ev.body = decodeTableMap(body);
        break;
    case event::WriteRowsV1:
    case event::UpdateRowsV1:
    case event::DeleteRowsV1:
    case event::WriteRowsV2:
    case event::UpdateRowsV2:
    case event::DeleteRowsV2:
        ev.body = decodeRows(header, body);
        break;
    case event::PartialUpdateRows:
        throw SchemaError("the binlog holds a PARTIAL_UPDATE_ROWS event (MySQL JSON partial updates), which the "
                          "decoder cannot read",
                          "set binlog_row_value_options='' on the source, then re-snapshot the affected tables");
    case event::TransactionPayload:
        throw SchemaError("the binlog holds a compressed transaction (TRANSACTION_PAYLOAD), which the decoder cannot "
                          "read",
                          "set binlog_transaction_compression=OFF on the source, then re-snapshot the tables");
    case event::QueryCompressed:
    case event::WriteRowsCompressedV1:
    case event::WriteRowsCompressedV1 + 1:
    case event::DeleteRowsCompressedV1:
    case event::WriteRowsCompressedV2:
    case event::WriteRowsCompressedV2 + 1:
    case event::DeleteRowsCompressedV2:
        throw SchemaError("the binlog holds a compressed event (type " + std::to_string(header.type) +
                              ", log_bin_compress=ON), which the decoder cannot read",
                          "SET GLOBAL log_bin_compress=OFF on the source, then re-snapshot the tables");
    default:
        ev.body = Other{};
        break;
    }
    return ev;
}

Rows Decoder::decodeRows(const Header &header, std::string_view body)
{
    ByteReader r(body, "rows event");
    Rows rows;
    const bool v2 = header.type >= event::WriteRowsV2;
    const int base = v2 ? event::WriteRowsV2 : event::WriteRowsV1;
    rows.op = static_cast<RowOp>(header.type - base);
    const std::size_t ph = postHeaderLength(header.type, v2 ? 10 : 8);
    if (ph != 6 && ph < 8)
        malformed("rows event post-header of " + std::to_string(ph) + " bytes");
    const std::uint64_t tableId = r.le(ph == 6 ? 4 : 6, "table id");
    const std::uint16_t flags = static_cast<std::uint16_t>(r.le(2, "rows flags"));
    rows.statementEnd = flags & kStmtEndFlag;
    r.skip(ph == 6 ? 0 : ph - 8, "rows post-header");
    if (v2) {
        // The post-header ends with the length of the extra data, that length included.
        if (ph < 10)
            malformed("rows v2 post-header of " + std::to_string(ph) + " bytes");
        ByteReader extra(body.substr(ph - 2, 2), "rows extra data length");
        const std::size_t extraLength = static_cast<std::size_t>(extra.le(2, "rows extra data length"));
        if (extraLength < 2)
            malformed("rows extra data length " + std::to_string(extraLength));
        r.skip(extraLength - 2, "rows extra data");
    }
    auto it = m_tables.find(tableId);
    if (it == m_tables.end())
        malformed("a rows event names table id " + std::to_string(tableId) +
                  " without a TABLE_MAP before it in the statement");
    rows.table = it->second;
    const TableMap &table = *rows.table;
    if (m_filter && !m_filter(table)) {
        rows.skipped = true;
        return rows;
    }
    const std::size_t n = static_cast<std::size_t>(r.lenenc("column count"));
    if (n != table.columns.size())
        malformed("a rows event of " + table.qualifiedName() + " has " + std::to_string(n) +
                  " columns, its TABLE_MAP " + std::to_string(table.columns.size()));
    const std::size_t bitmapBytes = (n + 7) / 8;
    std::string_view present1 = r.bytes(bitmapBytes, "columns-present bitmap");
    std::string_view present2 =
        rows.op == RowOp::Update ? r.bytes(bitmapBytes, "after-image columns-present bitmap") : present1;

    std::vector<detail::ColumnContext> contexts;
    std::vector<std::string> charsetNames(n);
    contexts.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        charsetNames[i] = table.columns[i].collation ? charsetOf(table.columns[i].collation) : std::string();
        contexts.push_back({table, i, detail::classifyCharset(charsetNames[i]), charsetNames[i]});
    }
    auto bit = [](std::string_view bitmap, std::size_t i) {
        return (static_cast<std::uint8_t>(bitmap[i / 8]) >> (i % 8)) & 1;
    };
    auto readImage = [&](std::string_view present, Image &image) {
        std::size_t count = 0;
        for (std::size_t i = 0; i < n; ++i)
            count += bit(present, i);
        std::string_view nulls = r.bytes((count + 7) / 8, "null bitmap");
        image.assign(n, Value{});
        std::size_t k = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (!bit(present, i))
                continue; // Absent
            if (bit(nulls, k++)) {
                image[i].kind = Value::Kind::Null;
                continue;
            }
            detail::decodeValue(r, contexts[i], image[i]);
        }
    };
    // An image with no column present takes no bytes: rows of it would never reach the end.
    std::size_t presentColumns = 0;
    for (std::size_t i = 0; i < n; ++i)
        presentColumns += bit(present1, i) + bit(present2, i);
    if (presentColumns == 0 && !r.atEnd())
        malformed("a rows event of " + table.qualifiedName() + " has rows but no column in its images");
    while (!r.atEnd()) {
        RowChange change;
        switch (rows.op) {
        case RowOp::Insert:
            readImage(present1, change.after);
            break;
        case RowOp::Delete:
            readImage(present1, change.before);
            break;
        case RowOp::Update:
            readImage(present1, change.before);
            readImage(present2, change.after);
            break;
        }
        rows.rows.push_back(std::move(change));
    }
    return rows;
}

} // namespace driftless::core::binlog
