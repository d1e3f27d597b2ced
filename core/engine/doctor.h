#pragma once

#include "core/model/workspace.h"

#include <string>
#include <vector>

namespace driftless::core {

/// One preflight finding. `level` is ok, warn or error; `category` says what kind of problem
/// an error is: `connection` (the server could not be reached or logged in to: environment) or
/// `config` (the workspace asks for something the databases cannot give: fix the file).
struct Finding {
    std::string level;
    std::string category;
    std::string pipeline;
    std::string subject; ///< endpoint or table
    std::string message;
    std::string fix;     ///< what to do, for warn and error
};

/// Preflight checks against the live servers: endpoints reachable and logged in to, tables
/// present and readable, primary keys where the strategy needs one, cursor columns that exist,
/// have a usable type, are indexed (warn if not) and not nullable (warn if so), target
/// writable. Never changes anything.
std::vector<Finding> runDoctor(const Workspace &ws, const std::string &onlyPipeline = {});

} // namespace driftless::core
