#pragma once

#include "core/model/workspace.h"

#include <string>
#include <vector>

namespace driftless::core {

class PgConnection;

/// True when `conflicts` (a table's stored policy) decides by commit times
/// (`newer_wins: { clock: commit_time }`, as the policy or as on_overlap).
bool usesCommitTimeClock(const std::optional<std::string> &conflicts);

/// Run start of a two-way direction: throws a permanent Error, with the fix, when the server of
/// `c` does not keep commit timestamps (track_commit_timestamp), which `newer_wins: { clock:
/// commit_time }` reads. `endpoint` names the server in the message.
void requireCommitTimestamps(PgConnection &c, const std::string &endpoint);

/// A table whose `newer_wins: { column: ... }` names no timestamp column on one of the sides:
/// pipeline and table index in the workspace.
struct NewerWinsRefusal {
    size_t pipeline = 0;
    size_t table = 0;
    std::string message;
};
/// `driftless-cli apply`: checks every two-way table whose policy compares a column against both
/// live sides (one connection per endpoint). An unreachable endpoint is skipped (the doctor
/// reports it); a target without the table yet is skipped (the initial load creates it from the
/// source's columns).
std::vector<NewerWinsRefusal> checkNewerWinsColumns(const Workspace &ws);

} // namespace driftless::core
