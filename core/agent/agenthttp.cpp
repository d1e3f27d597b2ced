#include "core/agent/agenthttp.h"

#include <nlohmann/json.hpp>

namespace driftless::core::agenthttp {

using json = nlohmann::json;

ApiResponse jsonResponse(int status, const json &j)
{
    ApiResponse r;
    r.status = status;
    r.body = j.dump(2) + "\n";
    return r;
}

ApiResponse errorResponse(int status, const std::string &message, const std::string &hint)
{
    json j = {{"error", message}};
    if (!hint.empty())
        j["hint"] = hint;
    return jsonResponse(status, j);
}

json parseBody(const ApiRequest &r)
{
    if (r.body.empty())
        return json::object();
    try {
        json j = json::parse(r.body);
        if (!j.is_object())
            throw BadRequest{400, "the request body must be a JSON object"};
        return j;
    } catch (const json::parse_error &e) {
        throw BadRequest{400, std::string("the request body is not JSON: ") + e.what()};
    }
}

std::string stringField(const json &body, const char *name, bool required)
{
    auto it = body.find(name);
    if (it == body.end() || it->is_null()) {
        if (required)
            throw BadRequest{400, std::string("the request body needs \"") + name + "\""};
        return {};
    }
    if (!it->is_string() || it->get<std::string>().empty())
        throw BadRequest{400, std::string("\"") + name + "\" must be a non-empty string"};
    return it->get<std::string>();
}

std::vector<std::string> tablesField(const json &body)
{
    std::vector<std::string> out;
    auto it = body.find("tables");
    if (it == body.end() || it->is_null())
        return out;
    if (!it->is_array())
        throw BadRequest{400, "\"tables\" must be an array of table names (none: every table of the pipeline)"};
    for (const auto &t : *it) {
        if (!t.is_string() || t.get<std::string>().empty())
            throw BadRequest{400, "\"tables\" must hold table names, e.g. \"public.orders\""};
        out.push_back(t.get<std::string>());
    }
    return out;
}

std::int64_t wholeNumber(const std::string &text, const std::string &name, std::int64_t min, std::int64_t max)
{
    try {
        size_t used = 0;
        const long long v = std::stoll(text, &used);
        if (used != text.size() || v < min || v > max)
            throw std::out_of_range("");
        return v;
    } catch (const std::exception &) {
        throw BadRequest{400,
                         name + " takes a whole number from " + std::to_string(min) + " to " + std::to_string(max)};
    }
}

std::int64_t intQuery(const ApiRequest &r, const std::string &name, std::int64_t fallback, std::int64_t min,
                      std::int64_t max)
{
    auto it = r.query.find(name);
    if (it == r.query.end() || it->second.empty())
        return fallback;
    return wholeNumber(it->second, "query parameter " + name, min, max);
}

std::string textQuery(const ApiRequest &r, const std::string &name)
{
    auto it = r.query.find(name);
    return it == r.query.end() ? std::string() : it->second;
}

} // namespace driftless::core::agenthttp
