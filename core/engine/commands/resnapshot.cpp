#include "core/engine/commands/resnapshot.h"

#include "core/db/pgcatalog.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/jobs/tableargs.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/sync/tablesync.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"

#include <optional>

namespace driftless::core {

std::vector<std::string> resnapshot(const Workspace &ws, const std::string &pipeline,
                                    const std::vector<std::string> &tables)
{
    const PipelineSpec *p = ws.pipeline(pipeline);
    if (!p)
        throw ConfigError("no pipeline named '" + pipeline + "'");
    std::vector<TableJob> cdc;
    for (auto &j : jobsFor(ws, pipeline))
        if (j.spec.strategy == Strategy::Cdc)
            cdc.push_back(j);
    if (cdc.empty())
        throw ConfigError("pipeline '" + pipeline + "' has no CDC tables to re-snapshot");
    std::vector<TableJob> chosen;
    for (const auto &name : tables) {
        const TableRef ref = resolveTableArgument(ws, *ws.pipeline(pipeline), name);
        bool found = false;
        for (auto &j : cdc)
            if (j.spec.table == ref) {
                chosen.push_back(j);
                found = true;
            }
        if (!found)
            throw ConfigError("pipeline '" + pipeline + "' has no CDC table " + ref.display());
    }
    const bool whole = chosen.empty() || chosen.size() == cdc.size();
    if (chosen.empty())
        chosen = cdc;

    std::vector<std::string> done;
    const Endpoint &src = cdc.front().source;
    // A Postgres source's slot: not while it is read; dropped when the whole pipeline starts over.
    // (A MySQL source keeps no state for us: the binlog is read from the new snapshot's position.)
    std::optional<PgConnection> source;
    bool slotExists = false;
    if (src.kind == EndpointKind::Postgres) {
        source.emplace(connectPostgres(src, "driftless resnapshot"));
        auto slot = source->execParams("SELECT active FROM pg_replication_slots WHERE slot_name = $1", {p->slotName()});
        if (slot.rows() == 1 && slot.toBool(0, 0))
            throw Error(ErrorKind::Permanent, "slot " + p->slotName() + " is being read right now", {},
                        "stop the running sync (driftless-cli run, or the app) first");
        slotExists = slot.rows() == 1;
    }

    auto session = createTargetSession(cdc.front().target, "driftless resnapshot");
    for (const auto &j : chosen) {
        auto merger = session->merger({pipeline, j.spec.table, j.targetName, Strategy::Cdc, softDeletes(j.spec)});
        merger->clearCheckpoint();
        done.push_back("checkpoint of " + j.spec.table.display() + " removed: the next run loads it again");
    }
    if (whole && slotExists) {
        source->execParams("SELECT pg_drop_replication_slot($1)", {p->slotName()});
        done.push_back("replication slot " + p->slotName() + " dropped: the next run creates a new one");
    }
    return done;
}

std::vector<std::string> requestRecovery(const Workspace &ws, const std::string &pipeline)
{
    if (!ws.pipeline(pipeline))
        throw ConfigError("no pipeline named '" + pipeline + "'");
    std::vector<TableJob> cdc;
    for (auto &j : jobsFor(ws, pipeline))
        if (j.spec.strategy == Strategy::Cdc && j.pipeline == pipeline)
            cdc.push_back(j);
    if (cdc.empty())
        throw ConfigError("pipeline '" + pipeline + "' has no CDC tables to recover");
    auto session = createTargetSession(cdc.front().target, "driftless recover");
    std::vector<std::string> done;
    for (const auto &j : cdc) {
        auto merger = session->merger({pipeline, j.spec.table, j.targetName, Strategy::Cdc, softDeletes(j.spec)});
        if (!merger->readCheckpoint()) {
            done.push_back(j.spec.table.display() + ": not synced yet, nothing to recover (the next run loads it)");
            continue;
        }
        merger->setRequest("recover");
        done.push_back(j.spec.table.display() + ": recovery requested");
    }
    done.push_back("the next start of pipeline " + pipeline +
                   " (run, serve or the app) brings its tables back if "
                   "the source changed; a running sync does at its next start");
    return done;
}

namespace {

/// One CDC table of a pipeline, opened for a backfill request: whether a sync streams its
/// pipeline, its merger (prepared) and its stored checkpoint position.
struct BackfillTarget {
    RebackfillRequest out;
    std::unique_ptr<Merger> merger;
    std::optional<PgCdcPosition> position; ///< none when the table has no checkpoint
};

BackfillTarget openBackfillTarget(const Workspace &ws, const std::string &pipeline, const std::string &table,
                                  const std::string &notCdc)
{
    const PipelineSpec *p = ws.pipeline(pipeline);
    if (!p)
        throw ConfigError("no pipeline named '" + pipeline + "'");
    const TableRef ref = resolveTableArgument(ws, *p, table);
    for (auto &j : jobsFor(ws, pipeline)) {
        if (j.spec.table != ref)
            continue;
        if (j.spec.strategy != Strategy::Cdc)
            throw ConfigError(ref.display() + " uses " + std::string(toString(j.spec.strategy)) + ", " + notCdc);
        if (j.source.kind != EndpointKind::Postgres)
            throw Error(ErrorKind::Permanent,
                        "re-backfilling a table while its pipeline streams is for Postgres sources in this version", {},
                        "re-snapshot it instead (with the sync stopped): driftless-cli resnapshot " + pipeline + " " +
                            ref.display());
        BackfillTarget t;
        t.out.key = {pipeline, ref, Strategy::Cdc};
        PgConnection source = connectPostgres(j.source, "driftless backfill");
        auto slot = source.execParams("SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1 AND active",
                                      {p->slotName()});
        if (slot.rows() == 1 && !slot.isNull(0, 0))
            t.out.runningPid = static_cast<int>(slot.toInt(0, 0));
        auto schema = pgcatalog::describeTable(source, ref, j.spec.key);
        t.merger = withColumnMapping(
            createMerger(j.target, {pipeline, ref, j.targetName, Strategy::Cdc, softDeletes(j.spec)}), j.spec);
        t.merger->prepare(schema);
        if (auto cp = t.merger->readCheckpoint())
            t.position = PgCdcPosition::fromJson(cp->position);
        return t;
    }
    throw ConfigError("pipeline '" + pipeline + "' has no table " + ref.display());
}

} // namespace

RebackfillRequest requestRebackfill(const Workspace &ws, const std::string &pipeline, const std::string &table)
{
    auto t = openBackfillTarget(ws, pipeline, table,
                                "and backfill copies CDC tables again while they stream; a full refresh table reloads "
                                "whole on every pass (driftless-cli run --once --pipeline " +
                                    pipeline + "), a cursor table re-reads from its cursor minus the lookback");
    RebackfillRequest &out = t.out;
    const std::string name = out.key.table.display();
    const auto &pos = t.position;
    if (!pos || !pos->streaming()) {
        out.what = RebackfillRequest::What::InitialLoad;
        out.message = name + " has not finished its initial load" + (pos ? " (it resumes at its next chunk)" : "") +
                      ", which is its backfill: the next sync continues it";
    } else if (pos->rebackfill) {
        out.what = RebackfillRequest::What::InFlight;
        out.message = "a re-backfill of " + name + " is already under way (" + std::to_string(pos->rebackfill->rows) +
                      " rows copied): the sync carries on with it";
    } else {
        t.merger->setRequest("rebackfill");
        out.what = RebackfillRequest::What::Requested;
        out.message = "re-backfill of " + name + " requested";
    }
    return out;
}

RebackfillRequest cancelRebackfill(const Workspace &ws, const std::string &pipeline, const std::string &table)
{
    auto t = openBackfillTarget(ws, pipeline, table, "not CDC: it has no re-backfill to cancel");
    RebackfillRequest &out = t.out;
    const std::string name = out.key.table.display();
    const auto &pos = t.position;
    const std::string pending = pos ? t.merger->pendingRequest() : "";
    if (pos && pos->rebackfill) {
        t.merger->setRequest("cancel_rebackfill");
        out.what = RebackfillRequest::What::Requested;
        out.message =
            "cancelling the re-backfill of " + name + " (" + std::to_string(pos->rebackfill->rows) + " rows copied)";
    } else if (pending == "rebackfill") {
        t.merger->setRequest("");
        out.what = RebackfillRequest::What::Requested;
        out.runningPid.reset(); // nothing else to wait for
        out.message = "the requested re-backfill of " + name + " had not started; request withdrawn";
    } else {
        out.what = RebackfillRequest::What::InitialLoad;
        out.message = "no re-backfill of " + name + " is under way";
    }
    return out;
}

} // namespace driftless::core
