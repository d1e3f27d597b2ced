#pragma once

#include "core/model/workspace.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// One replication slot as a DBA reads it (pg_replication_slots, plus what it costs).
struct SlotReport {
    std::string source; ///< the workspace endpoint it was read through
    std::string slot;
    std::string slotType; ///< logical, physical
    std::string plugin;
    std::string database;
    std::string owner;   ///< the workspace pipeline reading it, or empty
    bool orphaned = false; ///< a `driftless_` slot of this database that no pipeline here owns
    bool temporary = false;
    bool active = false;
    std::optional<int> activePid;
    std::string walStatus; ///< reserved, extended, unreserved, lost (empty when unknown)
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

struct SourceSlots {
    std::string source;
    std::string error; ///< the source could not be read (the slots list is then empty)
    std::string currentLsn;
    /// max_slot_wal_keep_size in bytes; unset when -1 (no limit).
    std::optional<std::int64_t> maxSlotWalKeepSize;
    std::vector<SlotReport> replicationSlots;
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
/// current_lsn, max_slot_wal_keep_size, error}]}`. `seconds_to_limit` is whole seconds, or null.
nlohmann::json slotsJsonValue(const std::vector<SourceSlots> &sources);
std::string slotsJson(const std::vector<SourceSlots> &sources);
/// What slotsJsonValue() wrote, read back (a client of the agent API): one SourceSlots per
/// source of `sources` (or, from an older agent, per source named in `slots` and `errors`).
std::vector<SourceSlots> sourcesFromJson(const nlohmann::json &j);

} // namespace driftless::core
