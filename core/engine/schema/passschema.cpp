#include "core/engine/schema/passschema.h"

#include "core/base/clock.h"
#include "core/db/pgconnection.h"
#include "core/engine/jobs/tablejob.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/schema/schemapolicy.h"
#include "core/mergers/mysqltypes.h"
#include "core/mergers/sqlitetypes.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace driftless::core {
namespace {

using json = nlohmann::json;

bool contains(const std::vector<std::string> &v, const std::string &s)
{
    return std::find(v.begin(), v.end(), s) != v.end();
}

/// `schema` without `columns`, its key positions moved to match.
TableSchema without(const TableSchema &schema, const std::vector<std::string> &columns)
{
    TableSchema next = schema;
    next.columns.clear();
    for (const auto &c : schema.columns)
        if (!contains(columns, c.name))
            next.columns.push_back(c);
    next.primaryKey.clear();
    for (int k : schema.primaryKey)
        if (int i = next.columnIndex(schema.columns[static_cast<size_t>(k)].name); i >= 0)
            next.primaryKey.push_back(i);
    return next;
}

std::map<std::string, int> sourceAttnums(PgConnection &src, const TableRef &table)
{
    auto r = src.execParams("SELECT attname, attnum FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 "
                            "AND NOT attisdropped",
                            {table.quoted()});
    std::map<std::string, int> out;
    for (int i = 0; i < r.rows(); ++i)
        out.emplace(r.text(i, 0), static_cast<int>(r.toInt(i, 1)));
    return out;
}

std::map<std::string, std::string> sourceTypes(const TableSchema &source)
{
    std::map<std::string, std::string> out;
    for (const auto &c : source.columns)
        out.emplace(c.name, c.typeSql);
    return out;
}

std::string targetDisplay(const TableJob &job)
{
    const auto &t = job.targetName; // a SQLite target has no schema
    return (t.schema.empty() ? "" : displayIdent(t.schema) + ".") + displayIdent(t.name);
}

/// The run that takes a changed policy: cursor and full-refresh tables look again at their next pass.
std::string nextPass(const TableJob &job)
{
    return "driftless-cli apply, and the next pass (driftless-cli run, or run --once) takes it; nothing is read "
           "from " +
           job.spec.table.display() + " until then" +
           (job.spec.strategy == Strategy::Cursor ? " and its cursor stays where it was, so no change is lost" : "");
}

} // namespace

std::string PassColumns::toJson() const
{
    if (attnums.empty() && types.empty() && kept.empty() && ignored.empty() && !fill)
        return {};
    json j = json::object();
    if (!attnums.empty())
        j["attnums"] = attnums;
    if (!types.empty())
        j["types"] = types;
    if (!kept.empty())
        j["kept"] = kept;
    if (!ignored.empty())
        j["ignored"] = ignored;
    if (fill)
        j["fill"] = {{"columns", fill->columns}, {"version", fill->version}, {"after", fill->after},
                     {"rows", fill->rows},       {"written", fill->written}, {"started_ms", fill->startedMs}};
    return j.dump();
}

PassColumns PassColumns::fromJson(const std::string &text)
{
    PassColumns m;
    if (text.empty())
        return m;
    try {
        const json j = json::parse(text);
        if (j.contains("attnums"))
            m.attnums = j["attnums"].get<std::map<std::string, int>>();
        if (j.contains("types"))
            m.types = j["types"].get<std::map<std::string, std::string>>();
        if (j.contains("kept"))
            m.kept = j["kept"].get<std::vector<std::string>>();
        if (j.contains("ignored"))
            m.ignored = j["ignored"].get<std::vector<std::string>>();
        if (j.contains("fill")) {
            const auto &f = j["fill"];
            PgAddColumnProgress p;
            p.columns = f.at("columns").get<std::vector<std::string>>();
            p.version = f.at("version").get<std::int64_t>();
            p.after = f.at("after").get<std::vector<std::string>>();
            p.rows = f.value("rows", 0LL);
            p.written = f.value("written", 0LL);
            p.startedMs = f.value("started_ms", 0LL);
            m.fill = std::move(p);
        }
    } catch (const json::exception &e) {
        throw Error(ErrorKind::Permanent, std::string("stored column memory does not parse: ") + e.what(), {},
                    "reset the table's checkpoint to start it over");
    }
    return m;
}

PassSchemaResult applyPassSchemaPolicies(PassSchemaContext &cx, const TableSchema &source, PassColumns &memory,
                                         Strategy strategy)
{
    const TableJob &job = cx.job;
    const TableKey key = job.key();
    PassSchemaResult out;
    out.schema = source;
    const std::map<std::string, int> attnumsNow =
        cx.pgSource ? sourceAttnums(*cx.pgSource, job.spec.table) : std::map<std::string, int>{};
    // Named as at the source (through the table's columns: mapping, if it has one).
    const auto have = cx.merger.targetColumnsAsSource(source);
    if (have.empty()) {
        // No target table yet: the pass creates it with every column.
        cx.merger.prepare(source);
        memory = PassColumns{};
        memory.attnums = attnumsNow;
        memory.types = sourceTypes(source);
        return out;
    }

    // A Postgres target's types are the source's spelling: compared as they are. Any other
    // target's are its own, so a retype is what changed since the types the last pass saw.
    const bool pgTarget = job.target.kind == EndpointKind::Postgres;
    ColumnLayoutDiff diff = diffColumns(source, have, pgTarget);
    if (!pgTarget)
        for (const auto &[name, type] : have) {
            const int i = source.columnIndex(name);
            const auto was = memory.types.find(name);
            if (i < 0 || was == memory.types.end())
                continue;
            const auto &c = source.columns[static_cast<size_t>(i)];
            if (c.isBuiltinType() && !c.isEnum && c.typeSql != was->second)
                diff.retyped.emplace_back(name, was->second);
        }
    // A kept column is no news; one the source has again (or the target lost) is no longer kept.
    std::erase_if(memory.kept, [&](const std::string &c) {
        return source.columnIndex(c) >= 0 ||
               std::none_of(have.begin(), have.end(), [&](const auto &h) { return h.first == c; });
    });
    std::erase_if(diff.gone, [&](const std::string &c) { return contains(memory.kept, c); });
    std::erase_if(memory.ignored, [&](const std::string &c) { return !contains(diff.added, c); });

    // Renames: a column gone whose attribute number the source now gives a column the target lacks.
    std::vector<std::pair<std::string, std::string>> renames;
    for (const auto &g : diff.gone) {
        auto was = memory.attnums.find(g);
        if (was == memory.attnums.end())
            continue;
        for (const auto &[name, number] : attnumsNow)
            if (number == was->second && contains(diff.added, name))
                renames.emplace_back(g, name);
    }
    for (const auto &[from, to] : renames) {
        std::erase(diff.gone, from);
        std::erase(diff.added, to);
    }

    const AddColumnPolicy addPolicy = addColumnPolicy(job.spec, job.pipelineAddColumn);
    const DropColumnPolicy dropPolicy = dropColumnPolicy(job.spec, job.pipelineDropColumn);
    const TypeChangePolicy typePolicy = typeChangePolicy(job.spec, job.pipelineTypeChange);
    const RenameColumnPolicy renamePolicy = renameColumnPolicy(job.spec, job.pipelineRenameColumn);
    const std::string target = targetDisplay(job);
    auto pause = [&](const std::string &why, const std::string &fix) {
        out.paused = why + "; the table is paused (nothing of it is read or written); " + fix;
        memory.attnums = memory.attnums.empty() ? attnumsNow : memory.attnums; // the old numbers still tell
        if (memory.types.empty())
            memory.types = sourceTypes(source); // and so do the old types
        return out;
    };

    if (!renames.empty()) {
        std::string what, alter;
        for (const auto &[from, to] : renames) {
            what += (what.empty() ? "column " : ", column ") + displayIdent(from) + " renamed to " + displayIdent(to);
            alter += (alter.empty() ? "" : "; ") + std::string("ALTER TABLE ") + target + " RENAME COLUMN " +
                     displayIdent(from) + " TO " + displayIdent(to);
        }
        what += " on the source since the last pass";
        if (renamePolicy == RenameColumnPolicy::Pause)
            return pause(what + " (schema_changes: rename_column: pause)",
                         "to rename it on the target too, set schema_changes: { rename_column: rename } on the table; "
                         "or rename it there yourself (" +
                             alter + "); then " + nextPass(job));
        std::string notHere;
        for (const auto &[from, to] : renames)
            if (mappingNames(job.spec, from) || mappingNames(job.spec, to))
                notHere = "a table whose columns: mapping names the column (change the entry to the new name)";
        if (notHere.empty() && !cx.merger.changesColumns())
            notHere = cx.merger.describeTarget();
        else if (notHere.empty() && job.spec.where)
            for (const auto &[from, to] : renames)
                if (job.spec.where->find(from) != std::string::npos)
                    notHere = "a table whose where: filter names the column (change the filter to the new name)";
        if (!notHere.empty())
            return pause(what + "; a renamed column is not handled for " + notHere + " yet",
                         "rename it on the target (" + alter + "), then " + nextPass(job));
    }
    if (!diff.gone.empty() && !diff.added.empty()) {
        // Without attribute numbers (a MariaDB/MySQL source, or none remembered yet) a rename
        // looks like this.
        std::string alter;
        if (diff.gone.size() == 1 && diff.added.size() == 1)
            alter = " (ALTER TABLE " + target + " RENAME COLUMN " + displayIdent(diff.gone[0]) + " TO " +
                    displayIdent(diff.added[0]) + ")";
        return pause("column(s) " + displayNames(diff.gone) + " gone from the source and " + displayNames(diff.added) +
                         " come since the last pass (a possible rename: the engine cannot tell it from a drop and "
                         "an add)",
                     "if it was a rename, rename the column on the target" + alter +
                         "; if not, drop the old column there (or add the new one) so only one change is left for "
                         "the policies; then " +
                         nextPass(job));
    }
    if (!diff.gone.empty()) {
        if (dropPolicy == DropColumnPolicy::Pause)
            return pause("column(s) " + displayNames(diff.gone) +
                             " dropped on the source (schema_changes: drop_column: pause)",
                         "to keep the column on the target, set schema_changes: { drop_column: keep } on the table; "
                         "to drop it there too, set drop_column: drop; then " +
                             nextPass(job));
        if (!cx.merger.changesColumns())
            return pause("column(s) " + displayNames(diff.gone) +
                             " dropped on the source; a dropped column is not handled for " +
                             cx.merger.describeTarget() + " yet",
                         "drop it on the target yourself, then " + nextPass(job));
    }
    std::vector<std::pair<std::string, std::string>> takenByDba; // retyped on the target already
    for (const auto &[name, type] : diff.retyped) {
        const int i = source.columnIndex(name);
        const auto &c = source.columns[static_cast<size_t>(i)];
        const bool inKey = std::find(source.primaryKey.begin(), source.primaryKey.end(), i) != source.primaryKey.end();
        const std::string what = pgTarget ? "column " + displayIdent(name) + " is " + type + " on the target but " +
                                                c.typeSql + " on the source (retyped since the last pass)"
                                          : "column " + displayIdent(name) + " changed type from " + type + " to " +
                                                c.typeSql + " on the source since the last pass";
        const std::string col = displayIdent(name);
        std::string fix;
        if (pgTarget)
            fix = "run on the target: ALTER TABLE " + target + " ALTER COLUMN " + col + " TYPE " + c.typeSql +
                  " USING " + col + "::" + c.typeSql;
        else if (job.target.kind == EndpointKind::Mysql)
            fix = "run on the target: ALTER TABLE " + mysqlIdent(job.targetName.name) + " MODIFY COLUMN " +
                  mysqlIdent(name) + " " + mysqlColumnFor(c, inKey).declared;
        else
            fix = "change the type of column " + col + " on the target to " +
                  std::string(sqliteDeclaredType(sqliteStorageFor(c))) +
                  " (SQLite changes a type only by recreating the table: create it anew with that type and copy "
                  "the rows across)";
        fix += ", then " + nextPass(job);
        if (strategy == Strategy::Cursor)
            fix += "; rows the passes do not read again keep what the target's conversion made of them, so check "
                   "them afterwards: driftless-cli reconcile " +
                   job.pipeline + " " + job.spec.table.display();
        if (const std::string refusal = retypeRefusal(typePolicy, type, c.typeSql, true); !refusal.empty()) {
            // Told by the types the last pass saw: once the DBA has changed the target's column,
            // the target holds the new type and the change is taken.
            const auto held = std::find_if(have.begin(), have.end(), [&](const auto &h) { return h.first == name; });
            if (!pgTarget && held != have.end() && cx.merger.holdsType(c, inKey, held->second)) {
                takenByDba.emplace_back(name, type);
                continue;
            }
            return pause(what + refusal, fix);
        }
    }
    for (const auto &taken : takenByDba) {
        std::erase(diff.retyped, taken);
        const auto &c = source.columns[static_cast<size_t>(source.columnIndex(taken.first))];
        cx.observer.event(Level::Info, key, "schema_change",
                          "column " + displayIdent(taken.first) + " changed type from " + taken.second + " to " +
                              c.typeSql +
                              " on the source; the target's column has the type for it now, so the "
                              "passes write it again");
    }
    std::vector<std::string> newlyAdded; // not ignored before
    for (const auto &a : diff.added)
        if (!(addPolicy == AddColumnPolicy::Ignore && contains(memory.ignored, a)))
            newlyAdded.push_back(a);
    if (!newlyAdded.empty() && addPolicy == AddColumnPolicy::Pause)
        return pause("source added column(s) " + displayNames(newlyAdded) + " (schema_changes: add_column: pause)",
                     "to take the column, set schema_changes: { add_column: backfill } (or propagate) on the table; "
                     "to sync without it, set add_column: ignore; then " +
                         nextPass(job));

    // Nothing pauses: the merger is prepared for the target as it is (the added columns held
    // back, renamed ones under their old names), then each change is applied.
    TableSchema before = without(source, diff.added);
    for (const auto &[from, to] : renames)
        before.columns[static_cast<size_t>(before.columnIndex(to))].name = from;
    cx.merger.prepare(before);
    TableSchema now = before;
    auto event = [&](Level level, const std::string &message) {
        cx.observer.event(level, key, "schema_change", message);
    };
    if (!renames.empty() || !diff.gone.empty() || !diff.retyped.empty()) {
        cx.session.inTransaction([&] {
            for (const auto &[from, to] : renames) {
                now.columns[static_cast<size_t>(now.columnIndex(from))].name = to;
                const std::string done = cx.merger.renameColumn(now, from, to);
                event(Level::Info, "column " + displayIdent(from) + " renamed to " + displayIdent(to) +
                                       " on the source; " + done + " (schema_changes: rename_column: rename)");
            }
            TableSchema rest = without(now, diff.gone);
            for (const auto &name : diff.gone) {
                std::string done = cx.merger.dropColumn(rest, name, dropPolicy == DropColumnPolicy::Drop);
                if (done.empty())
                    done = "kept on the target, no longer written";
                if (dropPolicy == DropColumnPolicy::Keep)
                    done += strategy == Strategy::FullRefresh ? "; a full refresh leaves it NULL in every row it loads"
                                                              : "; rows keep the value they had";
                event(Level::Info, "column " + displayIdent(name) + " dropped on the source; " + done +
                                       " (schema_changes: drop_column: " + std::string(policyName(dropPolicy)) + ")");
                if (dropPolicy == DropColumnPolicy::Keep)
                    memory.kept.push_back(name);
            }
            now = std::move(rest);
            for (const auto &[name, from] : diff.retyped) {
                const int i = now.columnIndex(name);
                now.columns[static_cast<size_t>(i)] = source.columns[static_cast<size_t>(source.columnIndex(name))];
                const std::string done = cx.merger.widenColumn(now, name);
                event(Level::Info, "column " + displayIdent(name) + " widened from " + from + " to " +
                                       now.columns[static_cast<size_t>(i)].typeSql + " " + done);
            }
        });
    }

    if (!diff.added.empty() && addPolicy == AddColumnPolicy::Ignore) {
        out.leftOut = diff.added;
        out.schema = without(source, diff.added);
        if (!newlyAdded.empty())
            event(Level::Info, "source added column(s) " + displayNames(newlyAdded) +
                                   "; not added to the target (schema_changes: add_column: ignore), the other columns "
                                   "sync on");
        memory.ignored = diff.added;
    } else if (!diff.added.empty()) {
        const std::string names = displayNames(diff.added);
        const bool fills = strategy == Strategy::Cursor && addPolicy == AddColumnPolicy::Backfill;
        if (fills && cx.merger.fillsColumns()) {
            // The fill's progress is stored before the column is added, so a crash between the
            // two still fills it at the next pass.
            memory.fill = widenedColumnFill(memory.fill, diff.added, cx.sourceVersion(), wallClockMs());
            memory.attnums = attnumsNow;
            cx.session.inTransaction([&] { cx.writeCheckpoint(memory, 0); });
        }
        cx.merger.addMissingColumns(source);
        if (strategy == Strategy::FullRefresh)
            event(Level::Info, "source added column(s) " + names +
                                   "; added to the target, and the full refresh loads "
                                   "its values into every row (schema_changes: "
                                   "add_column: " +
                                   std::string(policyName(addPolicy)) + ")");
        else if (fills && cx.merger.fillsColumns())
            event(Level::Info, "source added column(s) " + names +
                                   "; added to the target, existing rows are being filled from the source before the "
                                   "pass reads");
        else if (fills)
            event(Level::Warn, "source added column(s) " + names +
                                   "; added to the target, but filling the existing rows is not available for " +
                                   cx.merger.describeTarget() +
                                   " yet: rows the passes do not read again keep NULL until the table is copied again");
        else
            event(Level::Info, "source added column(s) " + names +
                                   "; added to the target; rows the passes read from now on carry it, rows already "
                                   "there keep NULL (schema_changes: add_column: propagate)");
    }
    memory.attnums = attnumsNow;
    memory.types = sourceTypes(source);
    // A column no longer in the source's (renamed or dropped again) is not filled.
    if (memory.fill) {
        std::erase_if(memory.fill->columns, [&](const std::string &c) { return out.schema.columnIndex(c) < 0; });
        if (memory.fill->columns.empty())
            memory.fill.reset();
    }
    return out;
}

void runPassColumnFill(PassSchemaContext &cx, ColumnFillSource &source, const TableSchema &schema, PassColumns &memory,
                       const std::function<bool()> &stopRequested)
{
    if (!memory.fill)
        return;
    const TableKey key = cx.job.key();
    ColumnFillContext fcx{source, schema, cx.job.spec, cx.merger, cx.session, cx.job.pipeline};
    for (;;) {
        if (stopRequested())
            throw Cancelled();
        const auto step =
            columnFillStep(fcx, *memory.fill, false, [&](long long rows) { cx.writeCheckpoint(memory, rows); });
        if (step.outcome == ColumnFillStep::Chunk) {
            cx.observer.tableState(key, TableState::Running, step.message, std::nullopt);
            continue;
        }
        const auto done = memory.fill;
        memory.fill.reset();
        try {
            cx.session.inTransaction([&] { cx.writeCheckpoint(memory, 0); });
        } catch (...) {
            memory.fill = done;
            throw;
        }
        cx.observer.event(step.level, key, "schema_change", step.message);
        return;
    }
}

} // namespace driftless::core
