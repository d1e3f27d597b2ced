#pragma once

#include "core/model/workspace.h"

#include <string>
#include <vector>

namespace driftless::core {

/// Prepares CDC tables for a fresh initial load, after their slot was lost or invalidated, or a
/// schema change paused them: removes their checkpoints from the target (so the next run loads
/// them again, merging into the rows already there and removing rows the source no longer has),
/// and, when every CDC table of the pipeline is re-snapshotted, drops the pipeline's slot so the
/// next run creates a new one.
///
/// Refuses while the slot is being read (a `run` is streaming): stop it first.
/// Returns one line per thing done. Throws Error / ConfigError.
std::vector<std::string> resnapshot(const Workspace &ws, const std::string &pipeline,
                                    const std::vector<std::string> &tables);

} // namespace driftless::core
