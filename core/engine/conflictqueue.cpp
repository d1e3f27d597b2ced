#include "core/engine/conflictqueue.h"

#include "core/engine/conflicts.h"
#include "core/engine/statusreport.h"
#include "core/engine/workspacestate.h"
#include "core/state/statestore.h"

#include <nlohmann/json.hpp>

namespace driftless::core {

using json = nlohmann::json;

const char *toString(ConflictSide side)
{
    return side == ConflictSide::Source ? "source" : "target";
}

std::optional<ConflictSide> conflictSideFrom(std::string_view text)
{
    if (text == "source")
        return ConflictSide::Source;
    if (text == "target")
        return ConflictSide::Target;
    return std::nullopt;
}

json conflictJson(const QueuedConflict &c)
{
    auto parsed = [](const std::string &text) { return text.empty() ? json(nullptr) : json::parse(text); };
    return {{"id", c.id},
            {"pipeline", c.record.pipeline},
            {"table", c.record.table},
            {"key", parsed(c.record.key)},
            {"columns", parsed(c.record.columns)},
            {"source", parsed(c.record.source)},
            {"target", parsed(c.record.target)},
            {"base", parsed(c.record.base)},
            {"detected_at", formatIso8601(c.detectedAtMs)},
            {"status", c.status}};
}

QueuedConflict conflictFromJson(const json &j)
{
    QueuedConflict c;
    if (!j.is_object())
        return c;
    auto text = [&j](const char *name) {
        auto it = j.find(name);
        return it == j.end() || !it->is_string() ? std::string() : it->get<std::string>();
    };
    // The queue keeps key, columns and the rows as JSON text; `null` (no row) as it stores it.
    auto stored = [&j](const char *name) {
        auto it = j.find(name);
        return it == j.end() ? std::string() : it->dump();
    };
    c.id = j.value("id", std::int64_t{0});
    c.record.pipeline = text("pipeline");
    c.record.table = text("table");
    c.record.key = stored("key");
    c.record.columns = stored("columns");
    c.record.source = stored("source");
    c.record.target = stored("target");
    c.record.base = stored("base");
    c.detectedAtMs = parseIso8601(text("detected_at")).value_or(0);
    c.status = text("status");
    return c;
}

std::vector<QueuedConflict> openConflicts(WorkspaceState &state, const std::string &pipeline)
{
    if (!pipeline.empty() && !state.workspace().pipeline(pipeline))
        throw ConfigError("no pipeline named '" + pipeline + "' (driftless-cli status lists them)");
    return state.store().conflicts(pipeline);
}

ConflictResolution resolveConflict(WorkspaceState &state, std::int64_t id, ConflictSide take)
{
    const auto c = state.store().conflict(id);
    if (!c)
        throw UnknownConflict("no conflict " + std::to_string(id) +
                              " in this workspace (driftless-cli conflicts lists them)");
    if (c->status != "open")
        throw ConflictAlreadyResolved("conflict " + std::to_string(id) + " is already resolved (" + c->resolution +
                                      "); driftless-cli conflicts lists the open ones");
    const Workspace ws = state.workspace();
    const auto *p = ws.pipeline(c->record.pipeline);
    if (!p || !p->twoWay)
        throw ConfigError("conflict " + std::to_string(id) + " belongs to pipeline " + c->record.pipeline +
                          ", which is no longer a two-way pipeline of this workspace");
    const TableSpec *spec = nullptr;
    for (const auto &t : p->tables)
        if (t.table.display() == c->record.table)
            spec = &t;
    if (!spec)
        throw ConfigError("table " + c->record.table + " is no longer in pipeline " + p->name);
    const Endpoint &source = ws.endpoints.at(p->source);
    const Endpoint &target = ws.endpoints.at(p->target);
    // The chosen version is written over the other side's row; the chosen side keeps its row.
    if (take == ConflictSide::Source)
        writeResolution(target, p->name, resolveTargetName(*p, *spec, target.kind), c->record.key, c->record.source);
    else
        writeResolution(source, p->name, TargetName{spec->table.schema, spec->table.name}, c->record.key,
                        c->record.target);
    const std::string side = toString(take);
    state.store().markConflictResolved(id, side);
    countConflicts(p->name, c->record.table, "resolved", 1);
    state.store().addEvent(Level::Info, p->name, c->record.table, "conflict_resolved",
                           "conflict " + std::to_string(id) + " on key " + c->record.key + " resolved: took the " +
                               side + "'s version");
    return {*c, take,
            "conflict " + std::to_string(id) + " resolved: both sides hold the " + side + "'s version of " +
                c->record.table + " " + c->record.key};
}

} // namespace driftless::core
