#pragma once

#include "core/model/workspace.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// pg_replication_slots.wal_status, and `purged` for a binlog reader whose needed file the server
/// removed (the app's binlog rows).
enum class WalStatus {
    Unknown,    ///< not reported (before Postgres 13, or not read)
    Reserved,   ///< within max_wal_size
    Extended,   ///< past max_wal_size, still kept
    Unreserved, ///< past max_slot_wal_keep_size: the next checkpoint invalidates it
    Lost,       ///< invalidated: the WAL it needed is gone
    Purged,     ///< a binlog file a pipeline needs is gone
};
/// The word Postgres uses (`purged` for Purged), empty for Unknown.
const char *toString(WalStatus status);
/// The status a word names; Unknown for any other text.
WalStatus parseWalStatus(const std::string &word);

/// One replication slot as a DBA reads it (pg_replication_slots, plus what it costs).
struct SlotReport {
    std::string source; ///< the workspace endpoint it was read through
    std::string slot;
    std::string slotType; ///< logical, physical
    std::string plugin;
    std::string database;
    std::string owner;     ///< the workspace pipeline reading it, or empty
    bool orphaned = false; ///< a `driftless_` slot of this database that no pipeline here owns
    bool temporary = false;
    bool active = false;
    std::optional<int> activePid;
    WalStatus walStatus = WalStatus::Unknown;
    /// WAL the slot holds on the source: current WAL position minus restart_lsn.
    std::optional<std::int64_t> retainedBytes;
    /// How much more WAL may be written before the slot is invalidated (max_slot_wal_keep_size);
    /// unset when there is no limit. Negative: the next checkpoint invalidates it.
    std::optional<std::int64_t> safeWalSize;
    std::string restartLsn;
    std::string confirmedFlushLsn;
    /// Current WAL position minus confirmed_flush_lsn: what the consumer has not yet confirmed.
    std::optional<std::int64_t> unconfirmedBytes;
    /// Seconds until the slot reaches its guard's `max_retained` or (with a server limit)
    /// safe_wal_size reaches the guard's `min_safe_wal` or 0, at its recent growth rate
    /// (slotprojection.h); unset when nothing grows towards a limit or none applies.
    std::optional<double> secondsToLimit;
};

/// How close a MariaDB/MySQL CDC pipeline is to losing its place: the binlog file its stored
/// checkpoint needs, what the server still has, and when the server may purge that file.
///
/// The server purges a closed binlog file once its last write (the file's mtime, i.e. when the
/// next file was started) is older than the retention, at a rotation (FLUSH BINARY LOGS, a full
/// file) and at startup (MariaDB 10.11 purge_logs_before_date; MySQL 8 likewise). So the needed
/// file's expiry horizon is the start of the file after it plus the retention; the file still in
/// use expires no earlier than `retention` from now. SQL does not expose file times: the start
/// of the next file is the timestamp of that file's Format_description event, read with our own
/// binlog client (and kept, as it never changes).
struct BinlogRetention {
    std::string source;   ///< the workspace endpoint
    std::string pipeline; ///< the workspace pipeline whose checkpoints these are
    /// The position the pipeline resumes from: the earliest stored checkpoint of its CDC tables
    /// (paused ones count, as a resume reads from there; tables an error stopped do not). Empty
    /// while no table has one yet.
    std::string neededFile;
    std::uint64_t neededOffset = 0;
    std::string oldestFile; ///< SHOW BINARY LOGS, first and last
    std::string newestFile;
    /// Binlog bytes from the needed position to the end of the newest file.
    std::optional<std::int64_t> bytesBehind;
    /// binlog_expire_logs_seconds, or expire_logs_days × 86400; 0: nothing expires by age.
    std::optional<std::int64_t> retentionSeconds;
    /// When the needed file was closed (the next one started), ms; unset while it is in use.
    std::optional<std::int64_t> neededClosedMs;
    /// When the server may purge the needed file (neededClosedMs + retention), ms.
    std::optional<std::int64_t> expiresAtMs;
    /// Seconds until then, 0 once passed (purged at the next rotation) or purged; unset when
    /// nothing expires or it is not known.
    std::optional<double> secondsToExpiry;
    bool neededPurged = false; ///< the server no longer has the needed file
    std::string error;         ///< the source could not be read (the numbers are then unset)
};

/// The slot-sample series (StateStore::slotSamples) a binlog pipeline's bytes behind are stored
/// under, beside its source's slots: "binlog:PIPELINE" (a Postgres slot name has no ':').
std::string binlogSampleKey(const std::string &pipeline);

struct SourceSlots {
    std::string source;
    std::string error; ///< the source could not be read (the slots list is then empty)
    std::string currentLsn;
    /// max_slot_wal_keep_size in bytes; unset when -1 (no limit).
    std::optional<std::int64_t> maxSlotWalKeepSize;
    std::vector<SlotReport> replicationSlots;
    /// A MariaDB/MySQL source: only `binlogs` applies (errors are per pipeline, in them).
    bool binlog = false;
    std::vector<BinlogRetention> binlogs{};
};

/// The workspace pipeline on `source` that reads `slot`, or empty.
std::string slotOwner(const Workspace &ws, const std::string &source, const std::string &slot);
/// A slot named like Driftless's (`driftless_`, not a temporary copy slot) in the source's own
/// database that no pipeline of the workspace reads.
bool isOrphanedSlot(const Workspace &ws, const std::string &source, const std::string &slot, bool temporary);

/// Reads every replication slot of every Postgres endpoint that is a pipeline's source. A
/// source that cannot be reached is reported with its error, not thrown. Owners (and so
/// orphans) are judged against `owners` when given: a run of one pipeline (`run --pipeline`,
/// `serve --pipeline`) reads its own sources, and the other pipelines' slots there are still
/// theirs, not orphans.
std::vector<SourceSlots> listSlots(const Workspace &ws, const Workspace *owners = nullptr);

/// The statement that drops `slot`, as a DBA would type it (`SELECT pg_drop_replication_slot('x');`):
/// what a confirmation shows and dropSlot() runs.
std::string dropSlotSql(const std::string &slot);

/// Drops `slot` on the Postgres endpoint `source`. Blocking; call it off the UI thread. Throws
/// Error (SQLSTATE 55006 when a walsender still reads the slot, 42704 when it is gone).
void dropSlot(const Endpoint &source, const std::string &slot);

/// `{"slots": [{source, slot, owner, orphaned, active, wal_status, retained_bytes, safe_wal_size,
/// confirmed_flush_lsn, seconds_to_limit, ...}], "errors": [{source, error}], "sources": [{source,
/// current_lsn, max_slot_wal_keep_size, error}], "binlogs": [{source, pipeline, needed_file,
/// needed_pos, oldest_file, newest_file, bytes_behind, retention_seconds, needed_closed_at,
/// expires_at, seconds_to_expiry, needed_purged, error}]}`. `seconds_to_limit` and
/// `seconds_to_expiry` are whole seconds, or null. Postgres sources only in `sources`.
nlohmann::json slotsJsonValue(const std::vector<SourceSlots> &sources);
std::string slotsJson(const std::vector<SourceSlots> &sources);
/// What slotsJsonValue() wrote, read back (a client of the agent API): one SourceSlots per
/// source of `sources` (or, from an older agent, per source named in `slots` and `errors`).
std::vector<SourceSlots> sourcesFromJson(const nlohmann::json &j);

} // namespace driftless::core
