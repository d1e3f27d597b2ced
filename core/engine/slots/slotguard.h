#pragma once

#include "core/engine/slots/slots.h"
#include "core/model/tableschema.h"
#include "core/model/workspace.h"

#include <string>
#include <vector>

namespace driftless::core {

class StateStore;

/// A pipeline's slot past the limit its source's `slot_guard` with `action: fallback` sets.
struct GuardBreach {
    std::string pipeline;
    std::string source;
    std::string slot;
    std::string reason;
};

/// The slots that must be given up now: past `max_retained`, with `safe_wal_size` below
/// `min_safe_wal`, or already invalidated (`wal_status` lost). Guards with `action: alert` only
/// raise alerts (alerts.h) and never appear here.
std::vector<GuardBreach> slotGuardBreaches(const Workspace &ws, const std::vector<SourceSlots> &sources);

/// Falls a pipeline back from CDC to cursor sync, protecting the source first:
///  1. ends the walsender reading the slot and drops the slot (the WAL it held is released);
///  2. switches each CDC table of the pipeline to cursor sync by its `fallback_cursor` or, when
///     unset, a column named like a last-modified time (updated_at, modified_at, ...), marking it
///     `fallback_from: cdc`; a table with neither stays stopped (red) with the reason;
///  3. clears those tables' CDC checkpoints, so the first cursor pass reads the whole table
///     through the guarded merge;
///  4. owes each switched table a full reconciliation after that pass, which repairs what cursor
///     sync cannot see (rows deleted while no slot existed).
/// Every step is recorded as an event. Returns one line per step.
std::vector<std::string> fallBack(StateStore &store, const GuardBreach &breach);

/// Reads the slots of the stored workspace's sources and falls back wherever a guard says so.
/// Returns the breaches acted on.
std::vector<GuardBreach> enforceSlotGuards(StateStore &store);

/// Switches tables the slot guard moved to cursor sync back to CDC (all of the pipeline's, or
/// the named ones): strategy cdc again, checkpoints cleared so the next CDC run creates a slot and
/// loads them through the guarded merge (keeping rows that are equal, removing rows the source no
/// longer has), pending reconciliations dropped. Returns one line per table. Throws ConfigError
/// for a pipeline or table that has nothing to promote.
std::vector<std::string> promoteToCdc(StateStore &store, const std::string &pipeline,
                                      const std::vector<std::string> &tables);

/// The column cursor sync would use for `table` after a fallback, or empty.
std::string fallbackCursorFor(const TableSpec &spec, const TableSchema &schema);

} // namespace driftless::core
