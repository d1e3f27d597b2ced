#pragma once

#include "core/agent/agentapi.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

/// What the agent API's routers (agentapi.cpp, agentconflicts.cpp, agentjobs.cpp) share: the
/// answers they build and the fields they read from a request. Internal to core/agent.
namespace driftless::core::agenthttp {

/// A request the client must change: its status (400, 404, 409, ...) and what to do. The
/// router's answer() turns it into `{"error": message}`.
struct BadRequest {
    int status;
    std::string message;
};

ApiResponse jsonResponse(int status, const nlohmann::json &j);
ApiResponse errorResponse(int status, const std::string &message, const std::string &hint = {});
/// The body as a JSON object (empty: `{}`); BadRequest otherwise.
nlohmann::json parseBody(const ApiRequest &r);
/// A non-empty string field; empty when absent and not `required`; BadRequest otherwise.
std::string stringField(const nlohmann::json &body, const char *name, bool required = true);
/// `"tables"`: an array of table names, or none (every table of the pipeline).
std::vector<std::string> tablesField(const nlohmann::json &body);
/// `text` as a whole number from `min` to `max`; BadRequest naming `name` otherwise.
std::int64_t wholeNumber(const std::string &text, const std::string &name, std::int64_t min, std::int64_t max);
std::int64_t intQuery(const ApiRequest &r, const std::string &name, std::int64_t fallback, std::int64_t min,
                      std::int64_t max);
std::string textQuery(const ApiRequest &r, const std::string &name);

} // namespace driftless::core::agenthttp
