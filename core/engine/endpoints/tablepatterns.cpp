#include "core/engine/endpoints/tablepatterns.h"

#include "core/engine/endpoints/tablediscovery.h"
#include "core/model/error.h"

#include <algorithm>

namespace driftless::core {

namespace {

/// The first include_tables pattern that picks `t` up (for the message).
std::string patternOf(const PipelineSpec &p, const TableRef &t)
{
    for (const auto &pattern : p.includeTables)
        if (PipelineSpec::matchesTablePattern(pattern, t))
            return pattern;
    return {};
}

PatternPickup pickUp(const PipelineSpec &p, const DiscoveredTable &t, const SourceAbilities &abilities)
{
    PatternPickup out;
    out.table = t.table;
    const std::string name = t.table.display();
    const std::string by = "include_tables \"" + patternOf(p, t.table) + "\"";
    out.fix = "list it under tables: of pipeline " + p.name +
              " with a strategy that works for it (a refused table is not looked at again), or leave it out with "
              "exclude_tables";
    if (!t.readable) {
        out.refused = name + " matches " + by + " but is not picked up: the source's user may not read it";
        out.fix = "grant SELECT on it and USAGE on its schema, then " + out.fix;
        return out;
    }
    const Recommendation rec = recommendStrategy(t, abilities);
    const auto &defaults = p.tableDefaults;
    const bool named = defaults && defaults->strategy;
    out.strategy = named ? *defaults->strategy : rec.strategy;
    if (auto why = rec.refused.find(out.strategy); why != rec.refused.end()) {
        out.refused = name + " matches " + by + " but is not picked up: table_defaults' strategy " +
                      std::string(toString(out.strategy)) + " cannot sync it (" + why->second + ")";
        return out;
    }
    if (out.strategy == Strategy::Cursor && !(defaults && defaults->keys.cursor)) {
        out.cursor = rec.cursor;
        if (!out.cursor && !t.cursorCandidates.empty())
            out.cursor = t.cursorCandidates.front();
    }
    if (out.strategy == Strategy::FullRefresh && defaults &&
        defaults->keys.deletes == std::optional<std::string>("ignore")) {
        out.refused = name + " matches " + by +
                      " but is not picked up: it would be a full refresh, which cannot keep deleted rows "
                      "(table_defaults' deletes: ignore)";
        return out;
    }
    out.message = "picked up " + name + " by " + by + ": " + std::string(toString(out.strategy)) +
                  (named ? std::string(" (table_defaults)") : " (recommended: " + rec.reason + ")") +
                  "; it is loaded, then synced like a listed table";
    return out;
}

} // namespace

std::vector<PatternPickup> lookForNewTables(const Workspace &ws, const PipelineSpec &p, const std::set<TableRef> &known)
{
    std::vector<PatternPickup> out;
    if (p.includeTables.empty())
        return out;
    const Endpoint *source = ws.endpoint(p.source);
    if (!source)
        return out;
    const SourceDiscovery found = discoverSource(*source);
    if (!found.ok)
        throw Error(ErrorKind::Transient,
                    "pipeline " + p.name +
                        ": the source's tables could not be read to look for new ones: " + found.error);
    for (const auto &t : found.tables) {
        if (!p.picksUp(t.table) || known.count(t.table) ||
            std::any_of(p.tables.begin(), p.tables.end(), [&](const TableSpec &s) { return s.table == t.table; }))
            continue;
        out.push_back(pickUp(p, t, found.abilities));
    }
    return out;
}

} // namespace driftless::core
