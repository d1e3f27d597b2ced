#pragma once

#include "core/engine/commands/finding.h"
#include "core/model/workspace.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace driftless::core {

/// What to check: everything, one pipeline, or one endpoint (its connection, its settings, and
/// the tables and slots the pipelines read from it). Both set: that endpoint within that pipeline.
struct DoctorScope {
    std::string pipeline;
    std::string endpoint;
};

/// Preflight checks against the live servers: endpoints reachable and logged in to, tables
/// present and readable, primary keys where the strategy needs one, cursor columns that exist,
/// have a usable type, are indexed (warn if not) and not nullable (warn if so), target
/// writable. Never changes anything.
std::vector<Finding> runDoctor(const Workspace &ws, const std::string &onlyPipeline = {});
std::vector<Finding> runDoctor(const Workspace &ws, const DoctorScope &scope);

/// The document of `driftless-cli doctor --json` and POST /api/v1/doctor: {"findings": [{level,
/// category, pipeline, subject, message, fix, sql, setting: {table, key, value} or null}], "errors": N,
/// "warnings": N}.
nlohmann::json doctorJsonValue(const std::vector<Finding> &findings);
/// The findings of that document (lenient: a missing key reads empty).
std::vector<Finding> findingsFromJson(const nlohmann::json &doc);

} // namespace driftless::core
