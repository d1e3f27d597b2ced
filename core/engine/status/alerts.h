#pragma once

#include "core/engine/slots/slots.h"
#include "core/engine/status/statusreport.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace driftless::core {

/// Something a DBA should act on. Each says what to do.
struct Alert {
    std::string id;            ///< stable while the condition lasts: kind + what it is about
    std::string kind;          ///< lag_breach, table_error, slot_lost, slot_unreserved, slot_retained,
                               ///< slot_inactive, slot_orphaned, source_unreachable, binlog_expiry,
                               ///< binlog_purged, tunnel_down
    Level level = Level::Warn; ///< warn or error
    std::string pipeline, table, source, slot;
    std::string message;
    std::string action; ///< what to do about it
    std::int64_t sinceMs = 0;
};

/// Open alerts from the tables' status and the sources' slots and binlogs.
///
/// `inactiveSinceMs` says since when each slot (`source/slot`) has been seen inactive (the
/// caller keeps it, e.g. in a SlotActivity; Postgres 15 does not record it).
std::vector<Alert> computeAlerts(const Workspace &ws, const std::vector<TableReport> &tables,
                                 const std::vector<SourceSlots> &sources,
                                 const std::map<std::string, std::int64_t> &inactiveSinceMs, std::int64_t nowMs);

/// Since when each replication slot (`source/slot`) has been seen inactive, kept from one
/// reading of the slots to the next (Postgres 15 does not record it). A slot that went away is
/// forgotten; the slots of a source that could not be read this time are kept as they were.
class SlotActivity {
public:
    void observe(const std::vector<SourceSlots> &sources, std::int64_t nowMs);
    const std::map<std::string, std::int64_t> &inactiveSince() const { return m_inactiveSince; }
    void clear() { m_inactiveSince.clear(); }

private:
    std::map<std::string, std::int64_t> m_inactiveSince;
};

/// Remembers which alerts are open, so each is recorded once when it opens and once when it
/// clears, and keeps when it was first seen.
class AlertTracker {
public:
    struct Change {
        std::vector<Alert> opened;
        std::vector<Alert> cleared;
    };
    Change update(std::vector<Alert> now, std::int64_t nowMs);
    std::vector<Alert> open() const;

private:
    std::map<std::string, Alert> m_open;
};

nlohmann::json alertsJsonValue(const std::vector<Alert> &alerts);

} // namespace driftless::core
