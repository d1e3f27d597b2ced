#include "core/agent/agentapi.h"

#include "core/agent/agenthttp.h"
#include "core/engine/commands/conflictqueue.h"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace driftless::core {

using json = nlohmann::json;
using namespace agenthttp;

std::optional<ApiResponse> AgentApi::conflictRoute(const std::string &path, const ApiRequest &request,
                                                   const Origin &origin)
{
    const std::string &method = request.method;
    const bool get = method == "GET" || method == "HEAD";
    if (path == "conflicts" && get) {
        // The items of `driftless-cli conflicts --json`: the open conflicts, oldest first.
        json arr = json::array();
        for (const auto &c : openConflicts(m_state, textQuery(request, "pipeline")))
            arr.push_back(conflictJson(c));
        return jsonResponse(200, {{"conflicts", arr}});
    }
    if (path.starts_with("conflicts/") && path.ends_with("/resolve") && method == "POST") {
        const std::string idText = path.substr(10, path.size() - 10 - 8);
        const auto id = wholeNumber(idText, "a conflict id", 1, INT64_MAX);
        const json body = parseBody(request);
        ConflictChoice choice;
        if (auto c = body.find("columns"); c != body.end() && !c->is_null()) {
            if (!c->is_object())
                throw BadRequest{400, "\"columns\" takes an object of column -> \"source\" or \"target\", "
                                      "e.g. {\"email\": \"target\"}"};
            for (const auto &[column, side] : c->items()) {
                const auto s = side.is_string() ? conflictSideFrom(side.get<std::string>()) : std::nullopt;
                if (!s)
                    throw BadRequest{400, "\"columns\": \"" + column + "\" takes \"source\" or \"target\", not " +
                                              side.dump()};
                choice.columns[column] = *s;
            }
        }
        // Without "take", the per-column choices complete the merged row.
        const std::string takeText = stringField(body, "take", choice.columns.empty());
        const auto take = takeText.empty() ? std::optional(ConflictTake::Merged) : conflictTakeFrom(takeText);
        if (!take)
            throw BadRequest{400, "\"take\" takes \"source\", \"target\" or \"merged\": what both sides keep"};
        choice.take = *take;
        try {
            const auto r = resolveConflict(m_state, id, choice);
            control(origin, r.conflict.record.pipeline, r.conflict.record.table, r.message);
            json resolved = conflictJson(r.conflict);
            resolved["status"] = "resolved";
            return jsonResponse(200, {{"conflict", resolved},
                                      {"take", toString(choice.take)},
                                      {"resolution", r.resolution},
                                      {"row", json::parse(r.row)},
                                      {"message", r.message}});
        } catch (const UnknownConflict &e) {
            throw BadRequest{404, e.what()};
        } catch (const ConflictAlreadyResolved &e) {
            throw BadRequest{409, e.what()};
        } catch (const ConflictChanged &e) {
            throw BadRequest{409, e.what()};
        } catch (const BadConflictChoice &e) {
            throw BadRequest{400, e.what()};
        } catch (const ConflictNotMergeable &e) {
            return jsonResponse(422, {{"error", e.what()}, {"columns", e.columns()}});
        }
    }
    return std::nullopt;
}

} // namespace driftless::core
