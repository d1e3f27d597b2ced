#pragma once

#include "core/model/workspace.h"

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

class WorkspaceState;

/// What removing a pipeline leaves on its source, and the statements that clear it: a Postgres
/// source's replication slot (which keeps WAL for as long as it exists) and the publication
/// Driftless made for it. A publication the DBA named in the workspace (`publication:`) is
/// theirs and stays; a MySQL/MariaDB source holds nothing for a binlog reader.
struct DecommissionPlan {
    std::string pipeline;
    std::string source;
    /// To run on the source, in this order, exactly as shown (`SELECT pg_drop_replication_slot(...)`,
    /// `DROP PUBLICATION ...`); empty when nothing is held there.
    std::vector<std::string> statements;
    /// What stays and why, in words (the target tables and their rows, a DBA's own publication).
    std::vector<std::string> notes;
    /// The pid of the walsender reading the slot right now (a sync of this workspace lets go of it
    /// once the pipeline is removed).
    std::optional<int> slotActivePid;
    /// Why the source could not be looked at (then `statements` is empty: nothing is known to drop).
    std::string sourceError;
};

/// Looks at the source (read only). Throws ConfigError for a pipeline that is not in `ws`.
DecommissionPlan planDecommission(const Workspace &ws, const std::string &pipeline);

/// Removes `pipeline`: takes it out of the stored workspace (a sync running on it lets go of it
/// within seconds), then, unless `keepSource`, waits up to `waitForSlot` for its slot to be free
/// and runs the plan's statements on the source, and forgets its tables' checkpoints in the
/// target (a pipeline of the same name added later starts with a fresh load, merged into the
/// rows there). The target tables and their rows stay. A slot still read after the wait (by a
/// sync of another workspace) stays, with its publication: the lines say what to run later.
///
/// Refuses with nothing changed when the source cannot be reached and `keepSource` is not set.
/// Returns one line per thing done.
std::vector<std::string> decommission(WorkspaceState &state, const std::string &pipeline, bool keepSource,
                                      std::chrono::milliseconds waitForSlot = std::chrono::seconds(30));

/// {"pipeline", "source", "statements": [...], "notes": [...], "slot_active_pid": N|null,
///  "source_error": "..."} (POST /api/v1/decommission with dry_run).
nlohmann::json decommissionJsonValue(const DecommissionPlan &plan);
DecommissionPlan decommissionPlanFromJson(const nlohmann::json &j);

} // namespace driftless::core
