#pragma once

#include "core/model/cdcposition.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace driftless::core::binlog {

/// Binlog event type codes (MySQL's and MariaDB's log_event.h numbering).
namespace event {
constexpr std::uint8_t Query = 2, Stop = 3, Rotate = 4, FormatDescription = 15, Xid = 16, TableMap = 19,
                       WriteRowsV1 = 23, UpdateRowsV1 = 24, DeleteRowsV1 = 25, Heartbeat = 27, WriteRowsV2 = 30,
                       UpdateRowsV2 = 31, DeleteRowsV2 = 32, MysqlGtid = 33, MysqlAnonymousGtid = 34,
                       PartialUpdateRows = 39, TransactionPayload = 40, HeartbeatV2 = 41, AnnotateRows = 160,
                       BinlogCheckpoint = 161, MariaGtid = 162, GtidList = 163, QueryCompressed = 165,
                       WriteRowsCompressedV1 = 166, DeleteRowsCompressedV1 = 168, WriteRowsCompressedV2 = 169,
                       DeleteRowsCompressedV2 = 171;
} // namespace event

/// Column type codes as they appear in TABLE_MAP (MYSQL_TYPE_*). CHAR, ENUM and SET all arrive
/// as String(254); Column::type holds the real type (String, Enum or Set) after decoding.
namespace coltype {
constexpr std::uint8_t Decimal = 0, Tiny = 1, Short = 2, Long = 3, Float = 4, Double = 5, Null = 6, Timestamp = 7,
                       LongLong = 8, Int24 = 9, Date = 10, Time = 11, DateTime = 12, Year = 13, NewDate = 14,
                       VarChar = 15, Bit = 16, Timestamp2 = 17, DateTime2 = 18, Time2 = 19, Json = 245,
                       NewDecimal = 246, Enum = 247, Set = 248, TinyBlob = 249, MediumBlob = 250, LongBlob = 251,
                       Blob = 252, VarString = 253, String = 254, Geometry = 255;
} // namespace coltype

/// The 19-byte v4 event header.
struct Header {
    std::uint32_t timestamp = 0; ///< seconds; when the statement began, not when it committed
    std::uint8_t type = 0;
    std::uint32_t serverId = 0; ///< the server that wrote the event (loop prevention)
    std::uint32_t length = 0;   ///< header + body + checksum
    std::uint32_t logPos = 0;   ///< end position of this event in its file; 0 for artificial events
    std::uint16_t flags = 0;
    bool artificial() const { return (flags & 0x20) != 0; }
    /// LOG_EVENT_SKIP_REPLICATION_F: written by a session with skip_replication = 1 (a two-way
    /// pipeline's merger). The server sends such events to binlog readers all the same.
    bool skipReplication() const { return (flags & kSkipReplicationFlag) != 0; }
    static constexpr std::uint16_t kSkipReplicationFlag = 0x8000;
};

/// A MariaDB GTID: domain-server-sequence.
struct MariaGtid {
    std::uint32_t domain = 0;
    std::uint32_t serverId = 0;
    std::uint64_t sequence = 0;
    std::string text() const; ///< "0-1-42"
    bool operator==(const MariaGtid &) const = default;
};

struct FormatDescription {
    std::uint16_t binlogVersion = 0;
    std::string serverVersion;
    bool checksumCrc32 = false;
    std::vector<std::uint8_t> postHeaderLengths; ///< index = event type - 1
};
/// ROTATE: the stream continues in `next.file` at `next.offset`. The artificial one at stream
/// start (timestamp 0, flag 0x20) names the file and position the dump starts from.
struct Rotate {
    Position next;
};
/// MariaDB GTID (162): starts an event group.
struct Gtid {
    MariaGtid gtid;
    std::uint8_t flags = 0;
    std::uint64_t commitId = 0;                         ///< group commit id when flag 0x02 is set
    bool standalone() const { return flags & 0x01; }    ///< no COMMIT/XID follows (DDL, TRUNCATE)
    bool transactional() const { return flags & 0x04; } ///< the group can be rolled back (InnoDB)
    bool ddl() const { return flags & 0x20; }
    bool preparedXa() const { return flags & 0x40; } ///< XA PREPARE: not committed yet
};
/// MySQL GTID (33) or ANONYMOUS_GTID (34).
struct MysqlGtid {
    bool anonymous = false;
    std::array<std::uint8_t, 16> uuid{};
    std::int64_t gno = 0;
    std::int64_t immediateCommitMicros = 0; ///< commit time in µs since the epoch; 0 when absent
    std::string text() const;               ///< "3e11fa47-71ca-11e1-9e33-c80aa9429562:23"
};
/// MariaDB GTID_LIST (163): the binlog state at a file start (or the requested start state).
struct GtidList {
    std::vector<MariaGtid> gtids;
};
struct Xid {
    std::uint64_t xid = 0;
};
/// QUERY (2): BEGIN, COMMIT, ROLLBACK or a statement (DDL, or DML of statement-based logging).
struct Query {
    std::string schema; ///< the default schema the statement ran in (may be empty)
    std::string sql;
    std::uint16_t errorCode = 0;
    bool isBegin() const;
    bool isCommit() const;
    bool isRollback() const;
};
/// HEARTBEAT (27): sent while the server has nothing to send; Header::logPos is where it stands.
struct Heartbeat {
    std::string file;
};

/// One column of a TABLE_MAP with the metadata the row decoder needs.
struct Column {
    std::uint8_t type = 0;                 ///< coltype::*; String/Enum/Set resolved from the metadata
    std::uint16_t meta = 0;                ///< the raw per-type metadata (for display and tests)
    std::uint32_t maxLength = 0;           ///< CHAR/VARCHAR: max bytes; BLOB/GEOMETRY/JSON: length-prefix bytes
    std::uint8_t precision = 0, scale = 0; ///< NEWDECIMAL
    std::uint8_t fsp = 0;                  ///< TIME2/DATETIME2/TIMESTAMP2 fractional digits
    std::uint16_t bits = 0;                ///< BIT(n)
    std::uint8_t packLength = 0;           ///< ENUM/SET storage bytes
    bool nullable = true;
    bool isUnsigned = false;
    std::uint32_t collation = 0; ///< character and ENUM/SET columns; 0 when the event did not say
    std::uint32_t geometryType = 0;
    std::string name;                ///< empty without binlog_row_metadata=FULL
    std::vector<std::string> labels; ///< ENUM/SET values in definition order, UTF-8
    std::string typeName() const;    ///< "DATETIME(3)", "VARCHAR(80 bytes)", ... for messages
};

/// TABLE_MAP (19): binds a table id to a table for the row events that follow in the same
/// statement. `signedness` and `charsets` tell whether the event carried that optional metadata.
struct TableMap {
    std::uint64_t tableId = 0;
    std::string schema;
    std::string table;
    std::vector<Column> columns;
    std::vector<unsigned> primaryKey; ///< column indexes, from SIMPLE_PRIMARY_KEY / PRIMARY_KEY_WITH_PREFIX
    bool hasSignedness = false;
    bool hasCharsets = false;
    bool hasNames = false;
    std::string qualifiedName() const; ///< `schema`.`table`
};

/// One column of a row image.
struct Value {
    enum class Kind : std::uint8_t {
        Absent,  ///< not in this image (binlog_row_image MINIMAL/NOBLOB): keep the target's value
        Null,    ///< SQL NULL
        Text,    ///< `text` holds the value as docs/type-mapping.md specifies; bytes for binary types
        Invalid, ///< a value Postgres cannot hold (zero date): `text` is MySQL's own form
    };
    Kind kind = Kind::Absent;
    std::string text;
    bool operator==(const Value &) const = default;
};
using Image = std::vector<Value>; ///< one Value per TABLE_MAP column

enum class RowOp : std::uint8_t { Insert, Update, Delete };

/// One changed row: Insert has only `after`, Delete only `before`, Update both.
struct RowChange {
    Image before;
    Image after;
};

/// WRITE/UPDATE/DELETE rows event (v1 and v2) decoded against its TABLE_MAP.
struct Rows {
    std::shared_ptr<const TableMap> table;
    RowOp op = RowOp::Insert;
    bool statementEnd = false; ///< STMT_END_F: the table maps are dropped after this event
    bool skipped = false;      ///< the table filter declined the table: `rows` is empty
    std::vector<RowChange> rows;
    /// Throws SchemaError when a value is Invalid, naming the table, the column and the row's
    /// primary key (never other values), with what to do.
    void throwIfInvalid() const;
};

/// Any event the decoder does not act on (checkpoints, annotate rows, INTVAR, ...): skip it.
struct Other {};

using Body =
    std::variant<Other, FormatDescription, Rotate, Gtid, MysqlGtid, GtidList, Xid, Query, TableMap, Rows, Heartbeat>;

struct Event {
    Header header;
    Body body;
    /// The event ends a transaction (XID, QUERY COMMIT/ROLLBACK, a DDL or other statement outside
    /// a transaction): Decoder::position() is a safe place to resume from.
    bool endsTransaction = false;
};

/// Decodes binlog events one at a time, as the replication connection hands them over.
///
/// Feed each event's raw bytes (the 19-byte header, the body and, once a FORMAT_DESCRIPTION said
/// CRC32, the 4-byte checksum, which is verified). The decoder keeps what later events need: the
/// checksum algorithm and post-header lengths, the table maps of the current statement, the
/// current file and position, and the current transaction's GTID.
///
/// Checkpointing: after an event with `endsTransaction`, `position()` is the end of that
/// transaction and `committedGtid()` its GTID; store both and restart from them.
///
/// Thread affinity: one thread. Failure: every malformed, truncated or unsupported input throws
/// a permanent Error (SchemaError for a column type or character set it cannot turn into the
/// contract's text) and leaves the decoder usable for the next event; never undefined behaviour.
class Decoder {
public:
    Decoder();

    Event decode(std::string_view raw);

    /// Where the stream stands: the file of the last ROTATE and the end of the last event.
    const Position &position() const { return m_position; }
    /// The GTID of the last transaction that ended (MariaDB), if the stream carried GTIDs.
    const std::optional<MariaGtid> &committedGtid() const { return m_committedGtid; }
    /// Whether the events between a GTID/BEGIN and its end are being read.
    bool inTransaction() const { return m_inTransaction; }

    /// Rows of tables for which `filter` returns false are not decoded (Rows::skipped), so a
    /// table outside the pipeline with a column the decoder refuses does not stop the stream.
    void setTableFilter(std::function<bool(const TableMap &)> filter);

    /// Tells the decoder a collation id's character set name (`utf8mb4`, `latin1`, `binary`, ...)
    /// beyond the built-in table; the replication reader loads information_schema.COLLATIONS.
    void setCollationCharset(std::uint32_t collation, std::string charset);
    /// The character set of a collation id, or "" when unknown.
    std::string charsetOf(std::uint32_t collation) const;

private:
    Event decodeBody(const Header &header, std::string_view body);
    std::size_t postHeaderLength(std::uint8_t type, std::size_t fallback) const;
    TableMap decodeTableMap(std::string_view body) const;
    Rows decodeRows(const Header &header, std::string_view body);
    void endTransaction();

    bool m_haveFormat = false;
    bool m_mariadb = false;
    std::function<bool(const TableMap &)> m_filter;
    bool m_checksum = false;
    std::vector<std::uint8_t> m_postHeader;
    Position m_position;
    std::map<std::uint64_t, std::shared_ptr<const TableMap>> m_tables;
    std::map<std::uint32_t, std::string> m_extraCharsets;
    bool m_inTransaction = false;
    bool m_standaloneGroup = false;
    std::optional<MariaGtid> m_currentGtid;
    std::optional<MariaGtid> m_committedGtid;
};

/// CRC32 (IEEE, as zlib and the binlog use).
std::uint32_t crc32(std::string_view bytes, std::uint32_t crc = 0);

} // namespace driftless::core::binlog
