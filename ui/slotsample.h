#pragma once

// core/engine/slots.h names its list `replicationSlots`, so it sits fine beside Qt's `slots`.
#include "core/engine/slots/slots.h"
#include "core/model/workspace.h"

#include <QMetaType>
#include <QString>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace driftless::ui {

/// Every replication slot of each Postgres source of one workspace, as read at one moment.
///
/// A plain value, built on a worker by SlotMonitor and never changed afterwards.
struct SlotSample {
    /// SlotMonitor's job id for the workspace it was read for; late reads are dropped.
    std::uint64_t generation = 0;
    QString statePath;
    /// 0 until the first read finished.
    std::int64_t takenAtMs = 0;
    std::shared_ptr<const core::Workspace> workspace;
    /// Per source; a source that could not be read carries its error and no slots.
    std::vector<core::SourceSlots> sources;
};

/// Whether any limit applies to `slot`: its source's slot guard `max_retained`, or the server's
/// (the slot has a `safe_wal_size`). Without one, a null `seconds_to_limit` means "no limit",
/// not "not growing".
inline bool slotLimitApplies(const core::SlotReport &slot, const std::optional<core::SlotGuard> &guard)
{
    return (guard && guard->maxRetained > 0) || slot.safeWalSize.has_value();
}

/// The slot guard of the endpoint `source` in `workspace`, if it has one.
inline std::optional<core::SlotGuard> slotGuardOf(const core::Workspace *workspace, const std::string &source)
{
    const core::Endpoint *e = workspace ? workspace->endpoint(source) : nullptr;
    return e ? e->slotGuard : std::nullopt;
}

} // namespace driftless::ui

Q_DECLARE_METATYPE(driftless::ui::SlotSample)
