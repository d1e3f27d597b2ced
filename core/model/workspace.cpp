#include "core/model/workspace.h"

#include <algorithm>
#include <fnmatch.h>

namespace driftless::core {

std::string_view toString(SlotGuard::Action a)
{
    return a == SlotGuard::Action::Fallback ? "fallback" : "alert";
}

std::string SshTunnelSpec::display() const
{
    return user + "@" + host + ":" + std::to_string(port) + (jump ? " via " + *jump : "");
}

std::string_view toString(EndpointKind k)
{
    switch (k) {
    case EndpointKind::Postgres:
        return "postgres";
    case EndpointKind::Mysql:
        return "mysql";
    case EndpointKind::Sqlite:
        return "sqlite";
    }
    return "unknown";
}

std::optional<EndpointKind> endpointKindFromString(std::string_view s)
{
    if (s == "postgres" || s == "postgresql")
        return EndpointKind::Postgres;
    if (s == "mysql" || s == "mariadb")
        return EndpointKind::Mysql;
    if (s == "sqlite")
        return EndpointKind::Sqlite;
    return std::nullopt;
}

Millis TableSpec::effectiveEvery() const
{
    if (every)
        return *every;
    switch (strategy) {
    case Strategy::FullRefresh:
        return std::chrono::hours(1);
    case Strategy::Cursor:
        return std::chrono::minutes(1);
    case Strategy::Cdc:
        return std::chrono::seconds(1);
    }
    return std::chrono::minutes(1);
}

Millis TableSpec::effectiveSla() const
{
    if (freshnessSla)
        return *freshnessSla;
    if (strategy == Strategy::Cdc)
        return std::chrono::seconds(60);
    return effectiveEvery() * 2;
}

bool PipelineSpec::matchesTablePattern(const std::string &pattern, const TableRef &t)
{
    const auto dot = pattern.find('.');
    if (dot == std::string::npos)
        return false;
    return ::fnmatch(pattern.substr(0, dot).c_str(), t.schema.c_str(), 0) == 0 &&
           ::fnmatch(pattern.substr(dot + 1).c_str(), t.name.c_str(), 0) == 0;
}

bool PipelineSpec::picksUp(const TableRef &table) const
{
    auto any = [&](const std::vector<std::string> &patterns) {
        return std::any_of(patterns.begin(), patterns.end(),
                           [&](const std::string &p) { return matchesTablePattern(p, table); });
    };
    return any(includeTables) && !any(excludeTables);
}

bool PipelineSpec::isTablePattern(const std::string &pattern)
{
    const auto dot = pattern.find('.');
    return dot != std::string::npos && dot != 0 && dot + 1 != pattern.size() &&
           pattern.find('.', dot + 1) == std::string::npos;
}

TableSpec PipelineSpec::pickedUp(const TableRef &table, Strategy recorded, const std::optional<std::string> &cursor,
                                 std::optional<Strategy> fallbackFrom) const
{
    TableSpec t = tableDefaults ? tableDefaults->keys : TableSpec{};
    t.table = table;
    t.strategy = tableDefaults && tableDefaults->strategy && !fallbackFrom ? *tableDefaults->strategy : recorded;
    if (!t.cursor)
        t.cursor = cursor;
    t.fallbackFrom = fallbackFrom;
    t.discovered = true;
    return t;
}

const PipelineSpec *Workspace::pipeline(const std::string &name) const
{
    for (const auto &p : pipelines)
        if (p.name == name)
            return &p;
    return nullptr;
}

const Endpoint *Workspace::endpoint(const std::string &name) const
{
    auto it = endpoints.find(name);
    return it == endpoints.end() ? nullptr : &it->second;
}

std::string TargetName::display() const
{
    return schema.empty() ? displayIdent(name) : displayIdent(schema) + "." + displayIdent(name);
}

TargetName resolveTargetName(const PipelineSpec &p, const TableSpec &t, EndpointKind targetKind)
{
    std::string name = t.targetTable.value_or(t.table.name);
    // SQLite has no schemas; a MySQL target's database is the one its DSN names.
    if (targetKind == EndpointKind::Sqlite || targetKind == EndpointKind::Mysql)
        return {"", name};
    return {p.targetSchema.value_or(t.table.schema), name};
}

} // namespace driftless::core
