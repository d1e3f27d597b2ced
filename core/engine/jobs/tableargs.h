#pragma once

#include "core/model/tableref.h"
#include "core/model/workspace.h"

#include <string>

namespace driftless::core {

/// The table of pipeline `p` that a command-line argument names (pause, resume, resnapshot,
/// backfill, reconcile, repair, promote), read by its source's rules: Postgres folds unquoted
/// parts to lower case ("Sales" needs quotes); MySQL and MariaDB keep the case and allow
/// backticks, and a bare name is looked up among the pipeline's tables of any database.
/// Throws ConfigError when the argument is malformed, names no table of `p`, or (a bare MySQL
/// name) names tables of two databases.
TableRef resolveTableArgument(const Workspace &ws, const PipelineSpec &p, const std::string &arg);

} // namespace driftless::core
