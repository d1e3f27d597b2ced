// Repair: planning from a report's differing keys, and running the plan through the guarded
// merge.

#include "core/engine/reconcile/reconciler.h"

#include "core/base/clock.h"
#include "core/base/copytext.h"
#include "core/base/isotime.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/jobs/tableargs.h"
#include "core/engine/reconcile/reconcileopen.h"
#include "core/engine/reconcile/repairsql.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/rows/rowhash.h"
#include "core/mergers/mysqltypes.h"
#include "core/mergers/softdelete.h"
#include "core/mergers/sqlitetypes.h"
#include "core/model/error.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace driftless::core {

using recon::appliedPosition;
using recon::both;
using recon::jobFor;
using recon::keyColumnArray;
using recon::openTable;
using recon::TableContext;

// ---------------------------------------------------------------------------------------------
// Repair

namespace {

/// An identifier quoted as the target quotes it.
std::string quoteFor(EndpointKind kind, const std::string &name)
{
    if (kind != EndpointKind::Mysql)
        return quoteIdent(name);
    std::string q = "`";
    for (char c : name)
        q += c == '`' ? std::string("``") : std::string(1, c);
    return q + "`";
}

/// The statements a repair of `plan`'s keys runs through the target's merger (a staging load,
/// then the guarded merge, which upserts the rows it stages and deletes the keys it stages as
/// deletes), with the rows each takes.
std::vector<RepairStatement> repairStatements(const TableJob &job, const TableSchema &schema,
                                              const std::vector<std::string> &keyColumns, long long upserts,
                                              long long deletes)
{
    const EndpointKind kind = job.target.kind;
    const std::string target = (job.targetName.schema.empty() ? "" : quoteFor(kind, job.targetName.schema) + ".") +
                               quoteFor(kind, job.targetName.name);
    std::string key;
    for (size_t i = 0; i < keyColumns.size(); ++i)
        key += (i ? ", " : "") + quoteFor(kind, keyColumns[i]);
    std::vector<RepairStatement> out;
    if (upserts + deletes == 0)
        return out;
    // One line each, saying what runs (RepairStatement::full has the whole statement).
    const std::string stage =
        kind == EndpointKind::Postgres ? "COPY the rows into the staging table of " + target + " FROM STDIN"
        : kind == EndpointKind::Mysql  ? "INSERT the rows into the staging table of " + target
                                       : "Bind each row to the statements below, one at a time (no staging table)";
    const std::string upsert =
        kind == EndpointKind::Postgres ? "MERGE INTO " + target + " USING the staged rows ON (" + key +
                                             "): UPDATE the rows whose staged version is not older, INSERT the others"
        : kind == EndpointKind::Mysql
            ? "UPDATE " + target + " JOIN the staged rows ON (" + key +
                  ") WHERE the staged version is not older, then INSERT INTO " + target + " the ones it lacks"
            : "INSERT INTO " + target + " each row ON CONFLICT (" + key +
                  ") DO UPDATE WHERE the staged version is not older";
    out.push_back({"stage", stage, upserts + deletes, {}});
    if (upserts)
        out.push_back({"upsert", upsert, upserts, {}});
    if (deletes && softDeletes(job.spec))
        out.push_back({"delete",
                       "UPDATE " + target + " SET " + kDeletedAtColumn + " = now WHERE (" + key +
                           ") IN (staged deletes) AND the staged version is not older (deletes: soft); tombstones kept",
                       deletes,
                       {}});
    else if (deletes)
        out.push_back({"delete",
                       "DELETE FROM " + target + " WHERE (" + key +
                           ") IN (staged deletes) AND the staged version is not older; tombstones kept",
                       deletes,
                       {}});
    if (!out.empty()) {
        const recon::RepairSql full = recon::repairFullSql(job, schema);
        for (auto &st : out)
            st.full = st.kind == "stage" ? full.stage : st.kind == "upsert" ? full.upsert : full.remove;
    }
    return out;
}

/// The source rows of `keys` as they are now, as COPY lines (the target's columns) by the record
/// text of their key; a key the source lacks has none.
std::unordered_map<std::string, std::string> sourceRowsNow(TableContext &ctx, const std::vector<CanonicalKey> &keys)
{
    std::unordered_map<std::string, std::string> sourceRows;
    if (ctx.mySource) {
        // As the MySQL readers read them: exactly what the sync itself applies.
        sourceRows = ctx.mySource->copyLines(keys, *ctx.myTable);
    } else {
        // Values are read as Postgres prints them, not in canonical form, so they go back in
        // exactly.
        std::string cols, on, unnest, names;
        for (size_t i = 0; i < ctx.schema.columns.size(); ++i) {
            const auto &c = ctx.schema.columns[i];
            const std::string q = "s." + quoteIdent(c.name);
            cols +=
                std::string(i ? ", " : "") + (!c.isArray && c.baseType == "bpchar" ? pgOutputText(q) : q + "::text");
        }
        for (size_t i = 0; i < ctx.keys.size(); ++i) {
            const auto &k = ctx.keys[i];
            on += std::string(i ? " AND " : "") + "s." + quoteIdent(k.name) + " = _dl_k.c" + std::to_string(i) +
                  "::" + k.typeSql;
            unnest += std::string(i ? ", " : "") + "$" + std::to_string(i + 1) + "::text[]";
            names += std::string(i ? ", " : "") + "c" + std::to_string(i);
        }
        auto &src = ctx.pgSource->connection();
        Params params;
        for (size_t c = 0; c < ctx.keys.size(); ++c)
            params.emplace_back(keyColumnArray(keys, c, 0, keys.size()));
        std::string keyCanon;
        for (const auto &k : ctx.keys)
            keyCanon += rowhash::pgCanonicalText(k, "s." + quoteIdent(k.name)) + ", ";
        auto r = src.execParams("SELECT " + keyCanon + cols + " FROM " + ctx.sourceFrom + " s JOIN unnest(" + unnest +
                                    ") AS _dl_k(" + names + ") ON " + on,
                                params);
        const int nk = static_cast<int>(ctx.keys.size());
        for (int i = 0; i < r.rows(); ++i) {
            std::vector<std::optional<std::string>> key, values;
            for (int c = 0; c < nk; ++c)
                key.push_back(r.text(i, c));
            for (int c = 0; c < static_cast<int>(ctx.schema.columns.size()); ++c)
                values.push_back(r.optText(i, nk + c));
            sourceRows.emplace(rowhash::recordText(key), copytext::line(values));
        }
    }
    return sourceRows;
}

/// Runs one table's plan: reads the planned rows from the source, stages them (and the planned
/// deletes) at versions that win over the rows they correct, merges, and compares the keys again.
RepairOutcome executeTable(const Workspace &ws, const TableRepairPlan &plan)
{
    RepairOutcome out;
    out.pipeline = plan.pipeline;
    out.table = plan.table;
    out.keys = static_cast<long long>(plan.upsertKeys.size() + plan.deleteKeys.size());
    if (!plan.error.empty()) {
        out.error = plan.error;
        return out;
    }
    if (out.keys == 0)
        return out;
    const TableJob job = jobFor(ws, plan.pipeline, plan.table);
    std::vector<CanonicalKey> keys = plan.upsertKeys;
    keys.insert(keys.end(), plan.deleteKeys.begin(), plan.deleteKeys.end());
    const size_t upserts = plan.upsertKeys.size();
    ReconcileOptions opt;
    TableContext ctx = openTable(job, opt);
    recon::requireKey(ctx);
    if (!ctx.skipped.empty())
        throw Error(ErrorKind::Permanent, out.table + " cannot be compared exactly: " + ctx.skipped);
    for (const auto &k : ctx.keys)
        if (rowhash::canonFor(k) == rowhash::Canon::Float)
            throw Error(ErrorKind::Permanent, out.table + " is keyed by a floating-point column: repair it with a "
                                                          "re-backfill (driftless-cli backfill) or a full refresh");
    // First what the target holds: the applied position and each key's own version. Everything
    // they reflect committed before the source is read below, so the row read there is at least
    // as new; a change the sync has yet to apply is newer than both and still wins.
    auto session = createTargetSession(job.target, "driftless repair");
    // A full refresh table has no staging of its own (it reloads whole); repairing it stages
    // like a cursor table does.
    const Strategy mergeAs = job.spec.strategy == Strategy::FullRefresh ? Strategy::Cursor : job.spec.strategy;
    auto merger = session->merger({job.pipeline, job.spec.table, job.targetName, mergeAs, softDeletes(job.spec)});
    merger->prepare(ctx.schema);
    const auto cp = merger->readCheckpoint();
    const std::int64_t floor = std::max(cp ? cp->version : 0, appliedPosition(cp));
    RowSet keyRows;
    for (const auto &k : keys) {
        std::vector<std::optional<std::string>> values(ctx.schema.columns.size());
        for (size_t i = 0; i < ctx.keys.size(); ++i)
            values[static_cast<size_t>(ctx.schema.primaryKey[i])] = k[i];
        keyRows.append(copytext::line(values), ChangeOp::Delete, 0);
    }
    const auto current = merger->guardVersions(keyRows);

    // Then the source rows as they are now.
    const auto sourceRows = sourceRowsNow(ctx, keys);
    // Exactly the plan: a planned write stages the source row, a planned delete the key; a key
    // the source no longer agrees with (its row gone, or back) is left for the sync.
    RowSet versioned;
    long long stagedUpserts = 0, stagedDeletes = 0;
    for (size_t n = 0; n < keys.size(); ++n) {
        const auto &k = keys[n];
        const std::int64_t version = std::max(floor, current[n]);
        auto it = sourceRows.find(rowhash::recordText({k.begin(), k.end()}));
        if (n < upserts && it != sourceRows.end()) {
            versioned.append(it->second, ChangeOp::Update, version);
            ++stagedUpserts;
        } else if (n >= upserts && it == sourceRows.end()) {
            versioned.append(keyRows.line(n), ChangeOp::Delete, version);
            ++stagedDeletes;
        } else {
            ++out.skipped;
        }
    }
    std::vector<std::string> keyColumns;
    for (const auto &k : ctx.keys)
        keyColumns.push_back(k.name);
    out.statements = repairStatements(job, ctx.schema, keyColumns, stagedUpserts, stagedDeletes);
    if (!versioned.empty()) {
        session->inTransaction([&] {
            auto res = merger->mergeInTransaction(versioned);
            out.deleted = std::min(stagedDeletes, res.rowsWritten);
            out.written = res.rowsWritten - out.deleted;
        });
    }
    // Verify.
    auto [rs, rt] = both([&] { return ctx.source->rows(keys); }, [&] { return ctx.target->rows(keys); });
    for (const auto &k : keys) {
        const std::string rec = rowhash::recordText({k.begin(), k.end()});
        auto si = rs.find(rec);
        auto ti = rt.find(rec);
        const bool equal = (si == rs.end() && ti == rt.end()) ||
                           (si != rs.end() && ti != rt.end() && si->second.hash == ti->second.hash);
        (equal ? out.verified : out.stillDifferent) += 1;
    }
    return out;
}

/// A table's plan from its differing keys by class.
TableRepairPlan tablePlan(const Workspace &ws, const std::string &pipeline, const TableReconcile &t)
{
    TableRepairPlan plan;
    plan.pipeline = pipeline;
    plan.table = t.table;
    plan.target = t.target;
    plan.keyIsInteger = t.keyIsInteger;
    plan.upsertKeys = t.missingKeys;
    for (const auto &d : t.differentRows)
        plan.upsertKeys.push_back(d.key);
    plan.deleteKeys = t.extraKeys;
    plan.inserts = static_cast<long long>(t.missingKeys.size());
    plan.updates = static_cast<long long>(t.differentRows.size());
    const TableJob job = jobFor(ws, pipeline, t.table);
    plan.target = job.targetName.display();
    ReconcileOptions opt;
    const TableContext ctx = openTable(job, opt); // the columns the statements name
    plan.statements = repairStatements(job, ctx.schema, t.keyColumns, static_cast<long long>(plan.upsertKeys.size()),
                                       static_cast<long long>(plan.deleteKeys.size()));
    return plan;
}

} // namespace

TableRepairPlan planKeys(const Workspace &ws, const std::string &pipeline, const std::string &table,
                         const std::vector<CanonicalKey> &keys)
{
    // Keys without a class: the source decides (a row it has is written, one it lacks deleted).
    const TableJob job = jobFor(ws, pipeline, table);
    TableRepairPlan plan;
    plan.pipeline = pipeline;
    plan.table = job.spec.table.display();
    plan.target = job.targetName.display();
    if (keys.empty())
        return plan;
    ReconcileOptions opt;
    TableContext ctx = openTable(job, opt);
    recon::requireKey(ctx);
    if (!ctx.skipped.empty())
        throw Error(ErrorKind::Permanent, plan.table + " cannot be compared exactly: " + ctx.skipped);
    std::vector<std::string> keyColumns;
    for (const auto &k : ctx.keys) {
        keyColumns.push_back(k.name);
        plan.keyIsInteger.push_back(rowhash::canonFor(k) == rowhash::Canon::Integer);
    }
    const auto source = ctx.source->rows(keys);
    const auto target = ctx.target->rows(keys);
    for (const auto &k : keys) {
        const std::string rec = rowhash::recordText({k.begin(), k.end()});
        if (source.count(rec)) {
            plan.upsertKeys.push_back(k);
            (target.count(rec) ? plan.updates : plan.inserts) += 1;
        } else {
            plan.deleteKeys.push_back(k);
        }
    }
    plan.statements = repairStatements(job, ctx.schema, keyColumns, static_cast<long long>(plan.upsertKeys.size()),
                                       static_cast<long long>(plan.deleteKeys.size()));
    return plan;
}

RepairOutcome repairKeys(const Workspace &ws, const std::string &pipeline, const std::string &table,
                         const std::vector<CanonicalKey> &keys)
{
    return executeTable(ws, planKeys(ws, pipeline, table, keys));
}

RepairPlan planRepair(const Workspace &ws, const ReconcileReport &report, const std::optional<std::string> &table)
{
    if (report.pipeline == kComparePipeline)
        throw ConfigError("report " + std::to_string(report.id) +
                          " compared two tables outside any pipeline, and a repair writes through a pipeline's "
                          "merge: write it as a script to review and run instead (driftless-cli repair " +
                          std::to_string(report.id) + " --sql FILE), or sync the tables with a pipeline");
    RepairPlan plan;
    plan.reportId = report.id;
    plan.pipeline = report.pipeline;
    bool matched = !table;
    for (const auto &t : report.tables) {
        if (table) {
            const PipelineSpec *p = ws.pipeline(report.pipeline);
            if (!p)
                throw ConfigError("report " + std::to_string(report.id) + " is of pipeline '" + report.pipeline +
                                  "', which the workspace no longer has");
            const TableRef want = resolveTableArgument(ws, *p, *table);
            if (want.display() != t.table)
                continue;
            matched = true;
        }
        if (t.drift() == 0)
            continue;
        try {
            if (t.keyColumns.empty())
                throw Error(ErrorKind::Permanent, t.table + " has no primary key: its rows cannot be repaired one by "
                                                            "one; a pass of the table (its full refresh) reloads it "
                                                            "whole");
            const bool complete = static_cast<long long>(t.missingKeys.size()) == t.missing &&
                                  static_cast<long long>(t.extraKeys.size()) == t.extra &&
                                  static_cast<long long>(t.differentRows.size()) == t.different;
            if (complete) {
                plan.tables.push_back(tablePlan(ws, report.pipeline, t));
            } else {
                // The report kept only the first keys: find them all again.
                ReconcileOptions opt;
                opt.maxKeys = std::numeric_limits<int>::max();
                opt.settle = std::chrono::milliseconds(0);
                auto again = reconcile(ws, report.pipeline, {t.table}, opt);
                const auto &nt = again.tables.front();
                if (!nt.error.empty())
                    throw Error(ErrorKind::Permanent, nt.error);
                plan.tables.push_back(tablePlan(ws, report.pipeline, nt));
            }
        } catch (const Error &e) {
            TableRepairPlan failed;
            failed.pipeline = report.pipeline;
            failed.table = t.table;
            failed.target = t.target;
            failed.error = e.what();
            plan.tables.push_back(std::move(failed));
        }
    }
    if (!matched)
        throw ConfigError("report " + std::to_string(report.id) + " has no table " + *table);
    return plan;
}

std::vector<RepairOutcome> executeRepair(const Workspace &ws, const RepairPlan &plan)
{
    std::vector<RepairOutcome> outcomes;
    for (const auto &t : plan.tables) {
        RepairOutcome o;
        o.pipeline = t.pipeline;
        o.table = t.table;
        try {
            o = executeTable(ws, t);
        } catch (const Error &e) {
            o.error = e.what();
        }
        outcomes.push_back(std::move(o));
    }
    return outcomes;
}

std::vector<RepairOutcome> repairReport(const Workspace &ws, const ReconcileReport &report,
                                        const std::optional<std::string> &table)
{
    return executeRepair(ws, planRepair(ws, report, table));
}

// ---------------------------------------------------------------------------------------------
// A repair as a script (`repair --sql`)

namespace {

/// One table of a script: what to open, and the keys by class.
struct ScriptTable {
    TableJob job;
    ReconcileOptions opt;
    TableRepairPlan plan;
};

/// The plan of a compare report's table (all its keys, found again when the report kept only
/// the first ones), opened as the comparison was: by its key, its columns and its condition.
ScriptTable compareScriptTable(const Workspace &ws, const TableReconcile &t)
{
    ScriptTable st;
    st.job = compareJob(ws, t.table, t.target);
    if (!t.where.empty())
        st.job.spec.where = t.where;
    st.opt.asTheyAre = true;
    st.opt.compareKey = t.keyColumns;
    st.opt.compareColumns = t.columns;
    if (!t.where.empty())
        st.opt.compareWhere = t.where;
    const TableReconcile *keys = &t;
    ReconcileReport again;
    const bool complete = static_cast<long long>(t.missingKeys.size()) == t.missing &&
                          static_cast<long long>(t.extraKeys.size()) == t.extra &&
                          static_cast<long long>(t.differentRows.size()) == t.different;
    if (!complete) {
        ReconcileOptions all = st.opt;
        all.maxKeys = std::numeric_limits<int>::max();
        again = compareTables(ws, t.table, t.target, all);
        keys = &again.tables.front();
        if (!keys->error.empty())
            throw Error(ErrorKind::Permanent, keys->error);
    }
    st.plan.table = t.table;
    st.plan.target = t.target;
    st.plan.upsertKeys = keys->missingKeys;
    for (const auto &d : keys->differentRows)
        st.plan.upsertKeys.push_back(d.key);
    st.plan.deleteKeys = keys->extraKeys;
    st.plan.inserts = static_cast<long long>(keys->missingKeys.size());
    st.plan.updates = static_cast<long long>(keys->differentRows.size());
    return st;
}

/// `text` on one comment line: a line break in a name or a key must not end the comment.
std::string commentText(std::string text)
{
    std::replace(text.begin(), text.end(), '\n', ' ');
    std::replace(text.begin(), text.end(), '\r', ' ');
    return text;
}

/// One table's statements, appended to `out`.
void writeScriptTable(ScriptTable &st, std::string &out)
{
    const TableJob &job = st.job;
    const EndpointKind kind = job.target.kind;
    const std::string name = st.plan.table;
    if (softDeletes(job.spec))
        throw ConfigError(name + " keeps deleted rows marked (deletes: soft), which a plain DELETE would not do; "
                                 "repair it through its merge instead: driftless-cli repair ID");
    TableContext ctx = openTable(job, st.opt);
    recon::requireKey(ctx);
    if (!ctx.skipped.empty())
        throw Error(ErrorKind::Permanent, name + " cannot be compared exactly: " + ctx.skipped);
    const bool mysql = kind == EndpointKind::Mysql;
    const auto ident = [&](const std::string &n) { return quoteFor(kind, n); };
    const std::string target = kind == EndpointKind::Sqlite || job.targetName.schema.empty()
                                   ? ident(job.targetName.name)
                                   : ident(job.targetName.schema) + "." + ident(job.targetName.name);
    std::vector<size_t> keyAt;
    for (int k : ctx.schema.primaryKey)
        keyAt.push_back(static_cast<size_t>(k));
    const auto isKey = [&](size_t column) { return std::find(keyAt.begin(), keyAt.end(), column) != keyAt.end(); };
    std::string raw, scratch;
    // A value as the target takes it: Postgres casts a quoted literal to the column's type;
    // SQLite gets what its merger would bind; MySQL/MariaDB the literal its merger would write
    // (a boolean as 0/1, a timestamp with a time zone in UTC, bytes as hex).
    const auto literal = [&](size_t column, const std::optional<std::string> &v) -> std::string {
        if (mysql) {
            raw.clear();
            if (v)
                copytext::escape(*v, raw);
            else
                raw = copytext::kNull;
            const ColumnInfo &c = ctx.schema.columns[column];
            std::string sql;
            appendMysqlValue(sql, raw, mysqlColumnFor(c, isKey(column)), c.name, scratch);
            return sql;
        }
        if (!v)
            return "NULL";
        if (kind == EndpointKind::Sqlite)
            return sqliteLiteral(*v, sqliteStorageFor(ctx.schema.columns[column]));
        std::string q = "'";
        for (char c : *v)
            q += c == '\'' ? std::string("''") : std::string(1, c);
        return q + "'";
    };
    const auto keyWhere = [&](const std::vector<std::optional<std::string>> &values) {
        std::string w;
        for (size_t i = 0; i < keyAt.size(); ++i)
            w += std::string(i ? " AND " : "") + ident(ctx.schema.columns[keyAt[i]].name) + " = " +
                 literal(keyAt[i], values[keyAt[i]]);
        return w;
    };
    std::vector<CanonicalKey> keys = st.plan.upsertKeys;
    keys.insert(keys.end(), st.plan.deleteKeys.begin(), st.plan.deleteKeys.end());
    const auto now = sourceRowsNow(ctx, keys);
    const auto valuesOf = [&](std::string_view line) {
        std::vector<std::string_view> fields;
        copytext::split(line, fields);
        std::vector<std::optional<std::string>> values;
        std::string text;
        for (auto f : fields) {
            if (copytext::isNull(f)) {
                values.emplace_back();
                continue;
            }
            text.clear();
            copytext::unescape(f, text);
            values.emplace_back(text);
        }
        return values;
    };
    const auto keyValues = [&](const CanonicalKey &k) {
        std::vector<std::optional<std::string>> values(ctx.schema.columns.size());
        for (size_t i = 0; i < keyAt.size() && i < k.size(); ++i)
            values[keyAt[i]] = k[i];
        return values;
    };
    out +=
        "\n-- " +
        commentText(name + " -> " + (kind == EndpointKind::Sqlite ? job.targetName.name : job.targetName.display())) +
        ": " + std::to_string(st.plan.inserts) + " to insert, " + std::to_string(st.plan.updates) + " to update, " +
        std::to_string(st.plan.deleteKeys.size()) + " to delete\n";
    long long left = 0;
    for (size_t n = 0; n < keys.size(); ++n) {
        const bool upsert = n < st.plan.upsertKeys.size();
        const bool insert = n < static_cast<size_t>(st.plan.inserts);
        auto it = now.find(rowhash::recordText({keys[n].begin(), keys[n].end()}));
        if (upsert != (it != now.end())) {
            // The source changed its mind since the report: the sync (or another compare) decides.
            out += "-- left out: " + commentText(rowhash::recordText({keys[n].begin(), keys[n].end()})) +
                   " (the source " + (upsert ? "no longer has the row" : "has the row again") + ")\n";
            ++left;
            continue;
        }
        if (!upsert) {
            out += "DELETE FROM " + target + " WHERE " + keyWhere(keyValues(keys[n])) + ";\n";
            continue;
        }
        const auto values = valuesOf(it->second);
        if (insert) {
            std::string cols, vals;
            for (size_t c = 0; c < values.size() && c < ctx.schema.columns.size(); ++c) {
                cols += (c ? ", " : "") + ident(ctx.schema.columns[c].name);
                vals += (c ? ", " : "") + literal(c, values[c]);
            }
            out += "INSERT INTO " + target + " (" + cols + ") VALUES (" + vals + ");\n";
        } else {
            std::string set;
            for (size_t c = 0; c < values.size() && c < ctx.schema.columns.size(); ++c) {
                if (isKey(c))
                    continue;
                set += (set.empty() ? "" : ", ") + ident(ctx.schema.columns[c].name) + " = " + literal(c, values[c]);
            }
            if (!set.empty())
                out += "UPDATE " + target + " SET " + set + " WHERE " + keyWhere(values) + ";\n";
        }
    }
    if (left)
        out += "-- " + std::to_string(left) + " keys left out: the source no longer agrees with the report\n";
}

} // namespace

std::string repairScript(const Workspace &ws, const ReconcileReport &report, const std::optional<std::string> &table)
{
    std::vector<ScriptTable> tables;
    if (report.pipeline == kComparePipeline) {
        for (const auto &t : report.tables)
            if (t.drift() > 0 && (!table || *table == t.table || *table == t.target)) {
                if (t.keyColumns.empty())
                    throw ConfigError(t.table + " was compared as whole rows (no key), so its rows cannot be "
                                                "written one by one; compare it again with --key COLS");
                tables.push_back(compareScriptTable(ws, t));
            }
    } else {
        const RepairPlan plan = planRepair(ws, report, table);
        for (const auto &p : plan.tables) {
            if (!p.error.empty())
                throw Error(ErrorKind::Permanent, p.table + ": " + p.error);
            ScriptTable st;
            st.job = jobFor(ws, report.pipeline, p.table);
            st.plan = p;
            tables.push_back(std::move(st));
        }
    }
    std::string out = "-- Driftless: the repair of report " + std::to_string(report.id) + " (" +
                      (report.pipeline == kComparePipeline ? std::string("compare") : "pipeline " + report.pipeline) +
                      "), written " + formatIso8601(wallClockMs()) +
                      ".\n-- Plain statements with the values the source had when it was written, in one "
                      "transaction.\n-- Review it, then run it: psql -v ON_ERROR_STOP=1 -f FILE (Postgres), "
                      "sqlite3 DATABASE < FILE (SQLite),\n-- mariadb --database=DATABASE < FILE (MariaDB/MySQL).\n";
    // The mariadb client talks utf8mb3 unless told otherwise: a 4-byte character would be refused.
    if (std::any_of(tables.begin(), tables.end(),
                    [](const ScriptTable &st) { return st.job.target.kind == EndpointKind::Mysql; }))
        out += "SET NAMES utf8mb4;\n";
    out += "BEGIN;\n";
    for (auto &st : tables)
        writeScriptTable(st, out);
    if (tables.empty())
        out += "-- no drift to repair\n";
    out += "COMMIT;\n";
    return out;
}

} // namespace driftless::core
