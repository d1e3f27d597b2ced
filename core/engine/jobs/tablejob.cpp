#include "core/engine/jobs/tablejob.h"

#include "core/model/dsn.h"

#include <map>
#include <mutex>

namespace driftless::core {

namespace {

std::mutex &countersMutex()
{
    static std::mutex m;
    return m;
}

/// direction -> (pipeline, counters)
std::map<std::string, std::pair<std::string, std::shared_ptr<LoopCounters>>> &countersByDirection()
{
    static std::map<std::string, std::pair<std::string, std::shared_ptr<LoopCounters>>> m;
    return m;
}

std::shared_ptr<LoopCounters> countersFor(const std::string &direction, const std::string &pipeline)
{
    std::lock_guard lock(countersMutex());
    auto &slot = countersByDirection()[direction];
    if (!slot.second)
        slot = {pipeline, std::make_shared<LoopCounters>()};
    return slot.second;
}

} // namespace

std::string applyOriginName(const std::string &direction)
{
    return "driftless_" + direction;
}

TableRef reverseTableOf(const PipelineSpec &p, const TableSpec &t, const Endpoint &target)
{
    const TargetName name = resolveTargetName(p, t, target.kind);
    // A MySQL target's tables live in the database its DSN names: that is their schema when the
    // reverse direction reads them from the binlog.
    return TableRef{target.kind == EndpointKind::Mysql ? MysqlDsn::parse(target.dsn).database : name.schema, name.name};
}

TableRef reverseTableOf(const TableJob &forward)
{
    if (forward.target.kind == EndpointKind::Mysql)
        return {MysqlDsn::parse(forward.target.dsn).database, forward.targetName.name};
    return {forward.targetName.schema, forward.targetName.name};
}

std::vector<TableJob> twoWayJobs(const PipelineSpec &p, const Endpoint &source, const Endpoint &target)
{
    const std::string reverse = p.reverseName();
    TwoWayRole fwd;
    fwd.pipeline = p.name;
    fwd.applyOrigin = applyOriginName(p.name);
    fwd.skipOrigin = applyOriginName(reverse);
    fwd.reverseSlot = "driftless_" + reverse;
    fwd.counters = countersFor(p.name, p.name);
    TwoWayRole rev;
    rev.reverse = true;
    rev.pipeline = p.name;
    rev.applyOrigin = fwd.skipOrigin;
    rev.skipOrigin = fwd.applyOrigin;
    rev.counters = countersFor(reverse, p.name);

    std::vector<TableJob> jobs;
    std::vector<TableJob> back;
    for (const auto &t : p.tables) {
        TableJob j{p.name, t, source, target, resolveTargetName(p, t, target.kind), p.publication, p.heartbeat, fwd};
        TableSpec r = t;
        r.table = reverseTableOf(p, t, target);
        r.targetTable.reset();
        back.push_back(
            {reverse, r, target, source, TargetName{t.table.schema, t.table.name}, std::nullopt, std::nullopt, rev});
        jobs.push_back(std::move(j));
    }
    jobs.insert(jobs.end(), back.begin(), back.end());
    return jobs;
}

std::shared_ptr<LoopCounters> loopCounters(const std::string &direction)
{
    return countersFor(direction, direction);
}

std::vector<LoopCountersSample> loopCountersSnapshot()
{
    std::lock_guard lock(countersMutex());
    std::vector<LoopCountersSample> out;
    for (const auto &[direction, v] : countersByDirection())
        out.push_back(
            {direction, v.first, v.second->captured.load(), v.second->applied.load(), v.second->droppedOwn.load()});
    return out;
}

std::vector<TableJob> jobsFor(const Workspace &ws, const std::string &onlyPipeline)
{
    std::vector<TableJob> jobs;
    for (const auto &p : ws.pipelines) {
        if (!onlyPipeline.empty() && p.name != onlyPipeline)
            continue;
        const Endpoint *src = ws.endpoint(p.source);
        const Endpoint *tgt = ws.endpoint(p.target);
        if (!src || !tgt)
            continue;
        if (p.twoWay) {
            for (auto &j : twoWayJobs(p, *src, *tgt))
                jobs.push_back(std::move(j)); // never adopting (the loader refuses it)
            continue;
        }
        for (const auto &t : p.tables) {
            jobs.push_back({p.name, t, *src, *tgt, resolveTargetName(p, t, tgt->kind), p.publication, p.heartbeat,
                            std::nullopt, p.addColumn, p.dropColumn, p.typeChange, p.renameColumn});
            jobs.back().recoverAuto = p.recover && *p.recover == "auto";
            jobs.back().adopt = t.adopt.value_or(p.adopt.value_or(false));
        }
    }
    return jobs;
}

} // namespace driftless::core
