#include "core/engine/commands/decommission.h"

#include "core/base/jsonfields.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/run/workspacestate.h"
#include "core/engine/slots/slots.h"
#include "core/engine/sync/tablesync.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <thread>

namespace driftless::core {

namespace {

const PipelineSpec &pipelineOf(const Workspace &ws, const std::string &pipeline)
{
    const PipelineSpec *p = ws.pipeline(pipeline);
    if (!p)
        throw ConfigError("no pipeline named '" + pipeline + "'");
    return *p;
}

} // namespace

DecommissionPlan planDecommission(const Workspace &ws, const std::string &pipeline)
{
    const PipelineSpec &p = pipelineOf(ws, pipeline);
    DecommissionPlan plan;
    plan.pipeline = p.name;
    plan.source = p.source;
    plan.notes.push_back("the target tables on " + p.target + " stay, with their rows");
    const Endpoint *src = ws.endpoint(p.source);
    if (!src || src->kind != EndpointKind::Postgres) {
        plan.notes.push_back("a MySQL/MariaDB source holds nothing for a binlog reader: nothing to drop there");
        return plan;
    }
    try {
        PgConnection c = connectPostgres(*src, "driftless decommission");
        auto slot = c.execParams("SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1", {p.slotName()});
        if (slot.rows() == 1) {
            plan.statements.push_back(dropSlotSql(p.slotName()));
            if (!slot.isNull(0, 0))
                plan.slotActivePid = static_cast<int>(slot.toInt(0, 0));
        }
        if (p.publication) {
            plan.notes.push_back("publication " + *p.publication +
                                 " is the one named in the workspace (publication:): yours, left as it is");
        } else {
            auto pub = c.execParams("SELECT 1 FROM pg_publication WHERE pubname = $1", {p.publicationName()});
            if (pub.rows() == 1)
                plan.statements.push_back("DROP PUBLICATION " + quoteIdent(p.publicationName()) + ";");
        }
        if (plan.statements.empty())
            plan.notes.push_back("the pipeline holds no replication slot or publication on " + p.source);
    } catch (const Error &e) {
        plan.sourceError = e.describe();
    }
    return plan;
}

std::vector<std::string> decommission(WorkspaceState &state, const std::string &pipeline, bool keepSource,
                                      std::chrono::milliseconds waitForSlot)
{
    Workspace ws = state.workspace();
    const PipelineSpec spec = pipelineOf(ws, pipeline);
    const DecommissionPlan plan = keepSource ? DecommissionPlan{} : planDecommission(ws, pipeline);
    if (!plan.sourceError.empty())
        throw Error(ErrorKind::Transient,
                    "could not reach source " + spec.source + " to drop what the pipeline holds there (" +
                        plan.sourceError + "); nothing was changed",
                    {},
                    "fix the connection and try again; or, if the source is gone for good, decommission with "
                    "--keep-slot and drop slot " +
                        spec.slotName() + " yourself if it still exists");

    // Out of the workspace first: a sync running on it (the app, run, serve) lets go of the
    // pipeline within seconds, and of its slot with it.
    const auto jobs = jobsFor(ws, pipeline);
    std::vector<std::string> done;
    std::erase_if(ws.pipelines, [&](const PipelineSpec &p) { return p.name == pipeline; });
    for (const auto &line : state.apply(ws).lines)
        done.push_back(line);

    if (!plan.statements.empty()) {
        PgConnection c = connectPostgres(*ws.endpoint(spec.source), "driftless decommission");
        const auto deadline = std::chrono::steady_clock::now() + waitForSlot;
        std::optional<std::string> readBy;
        for (;;) {
            auto slot = c.execParams("SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1 AND active",
                                     {spec.slotName()});
            readBy = slot.rows() == 1 ? std::optional<std::string>(slot.text(0, 0)) : std::nullopt;
            if (!readBy || std::chrono::steady_clock::now() >= deadline)
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
        }
        if (readBy) {
            // Another sync reads it (a workspace elsewhere with a pipeline of this name?): its
            // publication stays too, since dropping it would break that reader.
            done.push_back("slot " + spec.slotName() + " is still read (walsender pid " + *readBy +
                           "), so it and the publication stay; once it is free, run on " + spec.source + ":");
            for (const auto &sql : plan.statements)
                done.push_back("  " + sql);
        } else {
            for (const auto &sql : plan.statements) {
                c.exec(sql);
                done.push_back("ran on " + spec.source + ": " + sql);
            }
        }
    }
    // Checkpoints: a pipeline of the same name added later must not resume from this one's.
    try {
        if (!jobs.empty()) {
            auto session = createTargetSession(jobs.front().target, "driftless decommission");
            for (const auto &j : jobs)
                session->merger({pipeline, j.spec.table, j.targetName, j.spec.strategy})->clearCheckpoint();
            done.push_back("checkpoints of its " + std::to_string(jobs.size()) + " tables removed from " + spec.target);
        }
    } catch (const Error &e) {
        done.push_back("checkpoints in " + spec.target + " not removed (" + e.describe() +
                       "): a pipeline of the same name added later would resume from them");
    }
    done.push_back("the target tables on " + spec.target + " stay, with their rows");
    return done;
}

nlohmann::json decommissionJsonValue(const DecommissionPlan &plan)
{
    return {{"pipeline", plan.pipeline},
            {"source", plan.source},
            {"statements", plan.statements},
            {"notes", plan.notes},
            {"slot_active_pid", plan.slotActivePid ? nlohmann::json(*plan.slotActivePid) : nlohmann::json(nullptr)},
            {"source_error", plan.sourceError}};
}

DecommissionPlan decommissionPlanFromJson(const nlohmann::json &j)
{
    DecommissionPlan plan;
    plan.pipeline = jsonfields::text(j, "pipeline");
    plan.source = jsonfields::text(j, "source");
    plan.statements = jsonfields::texts(j, "statements");
    plan.notes = jsonfields::texts(j, "notes");
    if (auto pid = jsonfields::integer(j, "slot_active_pid"))
        plan.slotActivePid = static_cast<int>(*pid);
    plan.sourceError = jsonfields::text(j, "source_error");
    return plan;
}

} // namespace driftless::core
