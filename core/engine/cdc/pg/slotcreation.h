#pragma once

#include "core/db/pgconnection.h"
#include "core/db/pgreplication.h"
#include "core/model/workspace.h"

#include <chrono>
#include <functional>
#include <stop_token>
#include <string>

namespace driftless::core {

/// Creating a logical slot cannot finish before every transaction that was running when it began
/// has ended (the server needs a consistent point): an `idle in transaction` session or a
/// forgotten prepared transaction holds it for as long as they live. This names them.
///
/// Returns who a slot creation is probably waiting for, read from pg_stat_activity and
/// pg_prepared_xacts on `conn` (transactions holding an xid that have been open at least
/// `minAge`), with what to do; empty when none is visible. Without pg_read_all_stats, other
/// users' sessions show their pid only.
std::string slotCreationBlockers(PgConnection &conn, std::chrono::seconds minAge = std::chrono::seconds(5));

struct SlotWaitReport {
    std::string message; ///< what the creation waits for and what to do
    bool first = false;  ///< the first report of this creation
};

/// PgReplicationConnection::createSlot, except that a stop request cancels the wait and that,
/// while the server waits, `report` is called from another thread every `every` (first after
/// `every`) with slotCreationBlockers, read over its own connection to `source`.
PgReplicationConnection::Slot createSlotWatched(PgReplicationConnection &repl, const std::string &name, bool temporary,
                                                const Endpoint &source, std::stop_token stop,
                                                const std::function<void(const SlotWaitReport &)> &report,
                                                std::chrono::milliseconds every = std::chrono::seconds(5));

} // namespace driftless::core
