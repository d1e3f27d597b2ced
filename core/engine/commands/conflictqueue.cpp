#include "core/engine/commands/conflictqueue.h"

#include "core/base/isotime.h"
#include "core/engine/run/workspacestate.h"
#include "core/engine/twoway/conflicts.h"
#include "core/state/statestore.h"

#include <nlohmann/json.hpp>

#include <algorithm>

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

const char *toString(ConflictTake take)
{
    switch (take) {
    case ConflictTake::Source:
        return "source";
    case ConflictTake::Target:
        return "target";
    case ConflictTake::Merged:
        return "merged";
    }
    return "merged";
}

std::optional<ConflictTake> conflictTakeFrom(std::string_view text)
{
    for (ConflictTake t : {ConflictTake::Source, ConflictTake::Target, ConflictTake::Merged})
        if (text == toString(t))
            return t;
    return std::nullopt;
}

namespace {

/// A row of a stored version: JSON null (no row) or an object of column -> text or null.
json storedRow(const std::string &text)
{
    return text.empty() ? json(nullptr) : json::parse(text, nullptr, false);
}

std::optional<std::string> valueOf(const json &row, const std::string &column)
{
    auto it = row.find(column);
    if (it == row.end() || it->is_null())
        return std::nullopt;
    return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string joined(const std::vector<std::string> &names)
{
    std::string out;
    for (const auto &n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

/// The row a choice makes, and for each column the sides disagree on, the side it came from.
struct Chosen {
    json row;
    std::vector<std::pair<std::string, ConflictSide>> from;
};

Chosen choose(const QueuedConflict &c, const ConflictChoice &choice)
{
    const std::string id = std::to_string(c.id);
    const json source = storedRow(c.record.source);
    const json target = storedRow(c.record.target);
    const json base = storedRow(c.record.base);
    if (choice.columns.empty() && choice.take != ConflictTake::Merged)
        return {choice.take == ConflictTake::Source ? source : target, {}};
    if (!source.is_object() || !target.is_object()) {
        if (!source.is_object() && !target.is_object())
            return {json(nullptr), {}};
        const std::string gone = source.is_object() ? "the target" : "the source";
        if (!choice.columns.empty())
            throw BadConflictChoice("conflict " + id + ": " + gone +
                                    " has no row (it was deleted), so there are no columns to choose; take one "
                                    "side whole (--take source or --take target)");
        throw ConflictNotMergeable("conflict " + id + " cannot be merged: " + gone +
                                       " has no row (it was deleted); take one side whole (--take source to keep "
                                       "the source's, --take target to keep the target's)",
                                   {});
    }
    std::vector<std::string> names;
    for (const json *row : {&source, &target})
        for (const auto &[name, value] : row->items())
            if (std::find(names.begin(), names.end(), name) == names.end())
                names.push_back(name);
    for (const auto &[column, side] : choice.columns)
        if (std::find(names.begin(), names.end(), column) == names.end())
            throw BadConflictChoice("conflict " + id + " has no column '" + column + "'; its columns are " +
                                    joined(names));
    Chosen out;
    out.row = json::object();
    std::vector<std::string> unmergeable;
    for (const auto &name : names) {
        const auto s = valueOf(source, name);
        const auto t = valueOf(target, name);
        std::optional<ConflictSide> side;
        if (auto it = choice.columns.find(name); it != choice.columns.end())
            side = it->second;
        else if (s == t)
            side = ConflictSide::Source;
        else if (choice.take != ConflictTake::Merged)
            side = choice.take == ConflictTake::Source ? ConflictSide::Source : ConflictSide::Target;
        else {
            // Three-way: a side changed a column when its value differs from the base's (every
            // column, when both sides inserted the row and there is no base).
            const bool sourceChanged = !base.is_object() || s != valueOf(base, name);
            const bool targetChanged = !base.is_object() || t != valueOf(base, name);
            if (sourceChanged && targetChanged)
                unmergeable.push_back(name);
            else
                side = sourceChanged ? ConflictSide::Source : ConflictSide::Target;
        }
        if (!side)
            continue;
        const auto &v = *side == ConflictSide::Source ? s : t;
        out.row[name] = v ? json(*v) : json(nullptr);
        if (s != t)
            out.from.emplace_back(name, *side);
    }
    if (!unmergeable.empty())
        throw ConflictNotMergeable("conflict " + id + " cannot be merged: both sides changed " + joined(unmergeable) +
                                       " to different values; choose a side per column (--column " +
                                       unmergeable.front() + "=source or =target, one for each) or take one side " +
                                       "whole (--take source|target)",
                                   unmergeable);
    return out;
}

/// The columns of a conflict's row, from whichever of its stored versions has one.
std::vector<std::string> columnsOf(const QueuedConflict &c)
{
    std::vector<std::string> names;
    for (const std::string *text : {&c.record.source, &c.record.target, &c.record.base}) {
        const json row = storedRow(*text);
        if (row.is_object())
            for (const auto &[name, value] : row.items())
                if (std::find(names.begin(), names.end(), name) == names.end())
                    names.push_back(name);
    }
    return names;
}

/// The columns a refreshed entry names: those both sides changed since the base, else those
/// they differ in.
std::string conflictColumns(const json &source, const json &target, const json &base,
                            const std::vector<std::string> &names)
{
    json both = json::array(), differ = json::array();
    for (const auto &name : names) {
        const auto s = source.is_object() ? valueOf(source, name) : std::nullopt;
        const auto t = target.is_object() ? valueOf(target, name) : std::nullopt;
        if (s == t && source.is_object() == target.is_object())
            continue;
        differ.push_back(name);
        const auto b = base.is_object() ? valueOf(base, name) : std::nullopt;
        if (!source.is_object() || !target.is_object() || !base.is_object() || (s != b && t != b))
            both.push_back(name);
    }
    return (both.empty() ? differ : both).dump();
}

/// Reads both sides' rows of `c` as they are now, locking them in the sides' transactions until
/// the resolution is written. Equal: marks `c` resolved (nothing to write) and returns what was
/// done. Either differing from its stored version: refreshes the queue's entry and throws
/// ConflictChanged. Otherwise nullopt: the stored versions are the rows.
std::optional<ConflictResolution> againstCurrentRows(WorkspaceState &state, const QueuedConflict &c,
                                                     ResolutionSide &onSource, ResolutionSide &onTarget,
                                                     const ConflictChoice &choice, const Endpoint *postgres,
                                                     const TableSchema *postgresColumns)
{
    const auto names = columnsOf(c);
    if (names.empty())
        return std::nullopt;
    std::string nowSourceText = onSource.lockRow(names);
    std::string nowTargetText = onTarget.lockRow(names);
    if (postgres) { // a Postgres<->MariaDB pair: both rows as the Postgres side spells them
        const auto spelled = spellAsPostgres(*postgres, *postgresColumns, {nowSourceText, nowTargetText});
        nowSourceText = spelled[0];
        nowTargetText = spelled[1];
    }
    const json nowSource = storedRow(nowSourceText), nowTarget = storedRow(nowTargetText);
    const std::string id = std::to_string(c.id);
    if (nowSource == nowTarget) {
        const std::string resolution = resolutionText(choice);
        state.store().markConflictResolved(c.id, resolution);
        countConflicts(c.record.pipeline, c.record.table, "resolved", 1);
        state.store().addEvent(Level::Info, c.record.pipeline, c.record.table, "conflict_resolved",
                               "conflict " + id + " on key " + c.record.key +
                                   " resolved: both sides already held the same row; nothing written");
        ConflictResolution r{c,
                             choice.take == ConflictTake::Target ? ConflictSide::Target : ConflictSide::Source,
                             resolution,
                             nowSource.dump(),
                             {}};
        r.message = "conflict " + id + " resolved: both sides already hold the same version of " + c.record.table +
                    " " + c.record.key + "; nothing written";
        return r;
    }
    const bool sourceMoved = nowSource != storedRow(c.record.source);
    const bool targetMoved = nowTarget != storedRow(c.record.target);
    if (!sourceMoved && !targetMoved)
        return std::nullopt;
    ConflictRecord refreshed = c.record;
    refreshed.source = nowSourceText;
    refreshed.target = nowTargetText;
    refreshed.columns = conflictColumns(nowSource, nowTarget, storedRow(c.record.base), names);
    state.store().addConflict(refreshed);
    const std::string moved = sourceMoved && targetMoved ? "both sides' rows"
                              : sourceMoved              ? "the source's row"
                                                         : "the target's row";
    throw ConflictChanged("conflict " + id + ": " + moved + " of " + c.record.table + " " + c.record.key +
                          " changed since it was queued, so nothing was written; the queue now holds both rows as "
                          "they are: review them (driftless-cli conflicts) and resolve it again");
}

} // namespace

std::string chosenRow(const QueuedConflict &c, const ConflictChoice &choice)
{
    return choose(c, choice).row.dump();
}

std::string resolutionText(const ConflictChoice &choice)
{
    std::string text = toString(choice.take);
    std::string columns;
    for (const auto &[column, side] : choice.columns)
        columns += (columns.empty() ? "; " : ", ") + column + "=" + toString(side);
    return text + columns;
}

ConflictResolution resolveConflict(WorkspaceState &state, std::int64_t id, ConflictSide take)
{
    return resolveConflict(
        state, id, ConflictChoice{take == ConflictSide::Source ? ConflictTake::Source : ConflictTake::Target, {}});
}

ConflictResolution resolveConflict(WorkspaceState &state, std::int64_t id, const ConflictChoice &choice)
{
    auto c = state.store().conflict(id);
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
    const TargetName sourceTable{spec->table.schema, spec->table.name};
    const TargetName targetTable = resolveTargetName(*p, *spec, target.kind);
    // A Postgres<->MariaDB pair: the queue holds the versions as the side that detected the
    // conflict spells them; every version is compared and chosen as the Postgres side spells it,
    // and written to the MariaDB side converted as the one-way merger converts.
    std::optional<TableSchema> pgColumns;
    const Endpoint *postgres = nullptr;
    if (source.kind != target.kind) {
        const bool pgIsSource = source.kind == EndpointKind::Postgres;
        postgres = pgIsSource ? &source : &target;
        pgColumns = postgresColumnsOf(*postgres, pgIsSource ? sourceTable : targetTable);
        auto spelled = spellAsPostgres(*postgres, *pgColumns, {c->record.source, c->record.target, c->record.base});
        c->record.source = spelled[0];
        c->record.target = spelled[1];
        c->record.base = spelled[2];
    }
    const TableSchema *pgCols = pgColumns ? &*pgColumns : nullptr;
    // One transaction a side, each holding the row locked from the check below to the write, so
    // no change commits in between to be overwritten unseen. Always the source first: two
    // resolutions of one row wait for each other rather than deadlock.
    const auto onSource = openResolutionSide(source, p->name, sourceTable, c->record.key, pgCols);
    const auto onTarget =
        openResolutionSide(target, p->name + PipelineSpec::kReverseSuffix, targetTable, c->record.key, pgCols);
    if (auto done = againstCurrentRows(state, *c, *onSource, *onTarget, choice, postgres, pgCols))
        return *done;
    // Decided (or refused) before anything is written.
    const Chosen chosen = choose(*c, choice);
    const std::string row = chosen.row.dump();
    // The chosen row is written over each side that does not hold it; a side that does keeps its row.
    const bool wholeSide = choice.columns.empty() && choice.take != ConflictTake::Merged;
    if (wholeSide ? choice.take == ConflictTake::Source : chosen.row != storedRow(c->record.target))
        onTarget->write(row);
    if (wholeSide ? choice.take == ConflictTake::Target : chosen.row != storedRow(c->record.source))
        onSource->write(row);
    onTarget->commit();
    onSource->commit();
    const std::string resolution = resolutionText(choice);
    state.store().markConflictResolved(id, resolution);
    countConflicts(p->name, c->record.table, "resolved", 1);
    std::string version = std::string(toString(choice.take)) + (choice.take == ConflictTake::Merged ? "" : "'s");
    std::string detail;
    if (!wholeSide)
        for (const auto &[column, side] : chosen.from)
            detail += (detail.empty() ? " (" : ", ") + column + " from the " + toString(side);
    if (!detail.empty())
        detail += ")";
    state.store().addEvent(Level::Info, p->name, c->record.table, "conflict_resolved",
                           "conflict " + std::to_string(id) + " on key " + c->record.key + " resolved: took the " +
                               (wholeSide ? version + " version" : resolution) + detail);
    ConflictResolution r{
        *c, choice.take == ConflictTake::Target ? ConflictSide::Target : ConflictSide::Source, resolution, row, {}};
    r.message = "conflict " + std::to_string(id) + " resolved: both sides hold the " +
                (wholeSide                ? version
                 : choice.columns.empty() ? std::string("merged")
                                          : "chosen") +
                " version of " + c->record.table + " " + c->record.key + detail;
    return r;
}

} // namespace driftless::core
