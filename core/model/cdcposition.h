#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace driftless::core::binlog {

/// A place in the binlog: file name and byte offset (the end of an event = the next one's start).
struct Position {
    std::string file;
    std::uint64_t offset = 0;
    bool operator==(const Position &) const = default;
};

/// The row version a position stands for: 2^52 + the file name's numeric suffix × 2^32 + offset,
/// so a later position is always larger, and larger than any clock version (docs/type-mapping.md).
/// Throws Error when the file name has no numeric suffix of at most 7 digits.
std::int64_t positionVersion(const Position &position);

} // namespace driftless::core::binlog

namespace driftless::core {

/// A Postgres WAL position as Postgres prints it ("16/B374D848").
std::string formatLsn(std::int64_t lsn);
/// The LSN `text` spells, or nullopt when it is not one.
std::optional<std::int64_t> parseLsn(std::string_view text);

/// Where a CDC table is: copying its initial load from a snapshot, or following the stream.
enum class CdcPhase { Load, Stream };

/// What stopped a table ("stop_kind" beside "stopped"): an error a DBA fixes and then copies the
/// table again, or a change of source (docs/failover.md), fixed by `recover` or `resnapshot`.
/// Absent in the stored position means Error, as every stop was before the kind was kept.
enum class StopKind { Error, SourceChanged };

/// A CDC table's place, typed. Each is stored as the JSON position of the table's checkpoint in
/// the target, written in the transaction of every batch and read at start; the JSON keys (named
/// beside each field) are the stored format, read by earlier and later versions alike, so they
/// never change. `fromJson` is lenient as the stored format has always been read: a missing key
/// takes its default; text that is not a JSON object of that source's kind gives nullopt (the
/// table then has no position and loads again).

/// The initial load of a CDC table, in primary-key chunks (both sources).
struct CdcLoad {
    std::vector<std::string> after; ///< "after": the key of the last row copied (text values)
    bool merge = false;             ///< "mode": "merge" into existing rows (a re-snapshot), else "copy"
    long long rows = 0;             ///< "rows": rows copied so far, counting earlier runs
    /// "mode": "compare" (a merge, MariaDB/MySQL sources): each chunk is compared with the target's
    /// rows in its key range and only the differing rows are copied, the target's rows there that
    /// the source lacks removed with it, so nothing is left for the end. (An earlier version reads
    /// the mode as a fresh copy and fails on the first existing key rather than delete rows.)
    bool compare = false;
    /// "compare_from": where the next chunk's key range starts (canonical key text: the first key
    /// past the last chunk when it was read); empty before the first chunk (unbounded below).
    std::vector<std::string> compareFrom;
    bool operator==(const CdcLoad &) const = default;
};

/// How far a re-backfill under the stream got (Postgres): "rebackfill" inside the position.
struct PgRebackfillProgress {
    std::vector<std::string> after; ///< "after": the key of the last row merged
    std::int64_t deleteBelow = 0;   ///< "delete_below": rows older than this LSN's version and unseen go
    long long rows = 0;             ///< "rows": rows merged so far
    /// "compared": pages were compared by checksum, and each page's removed rows deleted with it
    /// (RebackfillCompare), so nothing is left for the end; absent: every row merged, the removed
    /// ones deleted at the end as unseen.
    bool compared = false;
    /// "row_by_row": compared row by row (RebackfillCompareRows), which copies only the rows that
    /// differ: a table a pipeline adopted (docs/adopt.md). A resume compares the same way.
    bool rowByRow = false;
    bool operator==(const PgRebackfillProgress &) const = default;
};

/// How far the backfill of columns the source gained got (`schema_changes: add_column: backfill`):
/// "add_column" inside the position. `version` is the version of the first change that carried
/// the new columns (a commit LSN on Postgres, a binlog position's version on MariaDB/MySQL; the
/// name is older than the MariaDB use): chunks fill the target rows at or below it, and under
/// change data capture every row the stream has applied (ColumnFillContext::appliedThrough).
struct PgAddColumnProgress {
    std::vector<std::string> columns; ///< "columns": the columns being filled
    std::int64_t version = 0;         ///< "version": rows at or past it came with the columns' values
    std::vector<std::string> after;   ///< "after": the key of the last row read
    long long rows = 0;               ///< "rows": rows read so far
    long long written = 0;            ///< "written": target rows the chunks changed
    long long startedMs = 0;          ///< "started_ms": when it started (wall clock)
    /// "repair": the check after the first reading found a difference; this is the second
    /// reading of every row, which began when `written` was `repairFrom` ("repair_from").
    bool repair = false;
    long long repairFrom = 0;
    bool operator==(const PgAddColumnProgress &) const = default;
};

/// A Postgres (pgoutput) CDC table's place.
struct PgCdcPosition {
    CdcPhase phase = CdcPhase::Stream;
    std::int64_t lsn = 0;                    ///< "lsn" (stream): every change up to here is applied
    CdcLoad load;                            ///< (load)
    std::optional<std::int64_t> snapshotLsn; ///< "snapshot_lsn" (load): the snapshot being copied
    std::optional<std::int64_t> streamFrom;  ///< "stream_from" (load): the first chunk's snapshot
    std::string slot;                        ///< "slot": the replication slot it belongs to
    std::string systemId;                    ///< "system_id": the source cluster's identifier
    /// "timeline": the source's timeline when the position was recorded (0: not recorded). A
    /// promoted standby keeps the system identifier and starts a new timeline.
    int timeline = 0;
    std::optional<PgRebackfillProgress> rebackfill; ///< "rebackfill": a copy under the stream, in flight
    std::optional<PgAddColumnProgress> addColumn;   ///< "add_column": a column backfill, in flight
    std::optional<std::string> stopped;             ///< "stopped": an error stopped the table (why)
    StopKind stopKind = StopKind::Error;            ///< "stop_kind", beside "stopped"
    bool paused = false;                            ///< "paused": the stream skips its changes from here
    /// "attnums": each source column's attribute number under the name the stream last gave it,
    /// so a rename made while the engine is stopped is told from a drop and an add at start.
    std::map<std::string, int> attnums;

    bool streaming() const { return phase == CdcPhase::Stream; }
    std::string toJson() const;
    static std::optional<PgCdcPosition> fromJson(std::string_view json);
    bool operator==(const PgCdcPosition &) const = default;
};

/// A MariaDB/MySQL (binlog) CDC table's place.
struct BinlogCdcPosition {
    CdcPhase phase = CdcPhase::Stream;
    binlog::Position at; ///< "file", "pos" (stream): every change before it is applied
    /// "gtid": the source's GTID state at `at` (stream) or at `streamFrom` (load), every domain's
    /// last transaction ("0-1-405,1-2-7"); older checkpoints hold the last applied transaction's
    /// GTID only. Where another server that holds it in its binlog continues the same history.
    std::string gtid;
    /// "server_id": the @@server_id of the server the position was read from (0: not recorded).
    /// A file and offset mean something only on that server.
    std::uint32_t serverId = 0;
    CdcLoad load;                               ///< (load)
    std::optional<binlog::Position> streamFrom; ///< "stream_from" (load): the first chunk's snapshot
    std::optional<std::string> stopped;         ///< "stopped": an error stopped the table (why)
    StopKind stopKind = StopKind::Error;        ///< "stop_kind", beside "stopped"
    /// "add_column": a column backfill in flight (`version` a binlog position's version, stored
    /// as a number).
    std::optional<PgAddColumnProgress> addColumn;

    bool streaming() const { return phase == CdcPhase::Stream; }
    std::string toJson() const;
    static std::optional<BinlogCdcPosition> fromJson(std::string_view json);
    bool operator==(const BinlogCdcPosition &) const = default;
};

/// Either source's CDC position, for readers that do not know the source's kind (status, the
/// reconciler, a table's details): told apart by the binlog's file name.
using CdcPosition = std::variant<PgCdcPosition, BinlogCdcPosition>;
std::optional<CdcPosition> parseCdcPosition(std::string_view json);

CdcPhase phaseOf(const CdcPosition &position);
/// The source version every change up to the position has (streaming; 0 while loading): the LSN,
/// or the binlog position's version (binlog::positionVersion). Throws Error on a binlog file name
/// that cannot be versioned.
std::int64_t appliedVersion(const CdcPosition &position);
/// Why an error stopped the table, when the position carries that mark.
std::optional<std::string> stoppedBy(const CdcPosition &position);
/// True when the position is stopped by a change of source (StopKind::SourceChanged).
bool stoppedBySourceChange(const CdcPosition &position);

/// Which server a CDC position was read from: what failover checks at every start.
struct SourceIdentity {
    bool postgres = true;
    std::string systemId;       ///< Postgres: the cluster's system identifier (empty: not recorded)
    int timeline = 0;           ///< Postgres: 0 when not recorded
    std::uint32_t serverId = 0; ///< MariaDB/MySQL: @@server_id (0: not recorded)
    std::string gtid;           ///< MariaDB/MySQL: the GTID state at the position (empty: not recorded)
    bool recorded() const { return postgres ? !systemId.empty() || timeline : serverId || !gtid.empty(); }
    bool operator==(const SourceIdentity &) const = default;
};
SourceIdentity sourceIdentityOf(const CdcPosition &position);
/// True when the stream skips the table's changes from this position on (a DBA paused it).
bool markedPaused(const CdcPosition &position);
/// The position as a DBA reads it: "0/16B3748" or "mysql-bin.000003:1234"; empty while loading.
std::string describeStreamPosition(const CdcPosition &position);

} // namespace driftless::core
