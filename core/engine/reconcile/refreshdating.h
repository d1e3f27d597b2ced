#pragma once

#include "core/engine/reconcile/reconcileopen.h"
#include "core/model/rowversion.h"

#include <cstdint>
#include <optional>
#include <string>

/// Internal to the reconciler: telling a full refresh table's rows changed since its last pass
/// (in flight) from drift.
namespace driftless::core::recon {

/// A full refresh table between passes: the target holds the source as the last pass's snapshot
/// saw it, so a differing row the source changed after that snapshot is in flight (the next pass
/// copies it), and so is a target row that pass loaded but the source has deleted since.
struct RefreshDating {
    std::int64_t version = 0; ///< the snapshot's position: the rows the pass loaded carry it
    bool softDeletes = false; ///< rows the pass left unchanged keep an older pass's version
    bool sourceDated = false; ///< the source side marks rows written after the snapshot `recent`
    std::string snapshotAt;   ///< the source's clock at the snapshot
    std::string why;          ///< why the source's rows cannot be dated, when they cannot

    /// A target row with this stored version was loaded by a pass up to the snapshot, so the
    /// source had it then.
    bool loadedByPass(std::int64_t stored) const
    {
        const std::int64_t p = rowversion::positionOf(stored);
        return softDeletes ? p > 0 && p <= version : p == version;
    }
};

/// Reads what the last pass of a full refresh table recorded and sets the sides up to tell rows
/// changed since from drift: the target reads each row's version; the source marks rows written
/// after the snapshot (RowData::recent), by their transaction (Postgres, a snapshot recorded by
/// this version) or by the table's time column (`cursor:`, else updated_at; at or after the
/// snapshot's clock). nullopt when no pass has run (then every difference is drift).
std::optional<RefreshDating> dateRefresh(TableContext &ctx);

} // namespace driftless::core::recon
