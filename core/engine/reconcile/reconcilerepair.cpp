// Repair: planning from a report's differing keys, and running the plan through the guarded
// merge.

#include "core/engine/reconcile/reconciler.h"

#include "core/base/copytext.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/jobs/tableargs.h"
#include "core/engine/reconcile/reconcileopen.h"
#include "core/engine/reconcile/repairsql.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/rows/rowhash.h"
#include "core/mergers/softdelete.h"
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

    // Then the source rows as they are now, as COPY lines by the record text of their key.
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
                          "merge: copy the rows it lists by hand (driftless-cli report " +
                          std::to_string(report.id) + " --json gives their keys), or sync the tables with a pipeline");
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

} // namespace driftless::core
