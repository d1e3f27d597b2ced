#include "core/agent/agentapi.h"

#include "core/agent/agenthttp.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

namespace driftless::core {

using json = nlohmann::json;
using namespace agenthttp;

struct AgentApi::Job {
    std::int64_t id = 0;
    std::string kind;
    std::string origin;
    std::int64_t startedAtMs = 0;
    std::int64_t endedAtMs = 0;
    std::string state = "running"; ///< running, done, failed, cancelled
    std::string error;
    json result;
    /// Where a running job is: {table, phase, done, total} (reconciles and repairs), and every
    /// such step so far (the first kMaxPhases), so a client polling now and then misses none.
    json progress;
    json phases = json::array();
    static constexpr std::size_t kMaxPhases = 10'000;
    std::stop_source stop;
};

ApiResponse AgentApi::startJob(const std::string &kind, const Origin &origin, Work work)
{
    std::lock_guard lock(m_jobsMutex);
    reapThreads();
    int running = 0;
    for (const auto &[id, j] : m_jobs)
        running += j->state == "running" ? 1 : 0;
    if (running >= kMaxRunningJobs)
        return errorResponse(429, "the agent already runs " + std::to_string(running) +
                                      " reconciliations or repairs; try again when one ended");
    auto job = std::make_shared<Job>();
    job->id = m_nextJob++;
    job->kind = kind;
    job->origin = origin.who;
    job->startedAtMs = wallClockMs();
    m_jobs[job->id] = job;
    // Finished jobs are kept for a while for their results; the oldest go first.
    while (m_jobs.size() > 100 && m_jobs.begin()->second->state != "running")
        m_jobs.erase(m_jobs.begin());
    std::jthread thread([this, job, work = std::move(work)](std::stop_token stop) {
        json result;
        std::string error;
        bool cancelled = false;
        const Progress progress = [this, job](json p) {
            std::lock_guard lock(m_jobsMutex);
            if (job->phases.size() < Job::kMaxPhases)
                job->phases.push_back(p);
            job->progress = std::move(p);
        };
        try {
            result = work(stop, progress);
        } catch (const Cancelled &) {
            cancelled = true;
        } catch (const Error &e) {
            error = e.describe();
        } catch (const std::exception &e) {
            error = e.what();
        }
        std::lock_guard lock(m_jobsMutex);
        job->endedAtMs = wallClockMs();
        job->state = cancelled ? "cancelled" : error.empty() ? "done" : "failed";
        job->error = cancelled ? "cancelled; nothing was stored" : error;
        job->result = std::move(result);
    });
    job->stop = thread.get_stop_source();
    m_threads.emplace(job->id, std::move(thread));
    return jsonResponse(202, {{"job", job->id},
                              {"kind", kind},
                              {"state", "running"},
                              {"poll", std::string(kPrefix) + "jobs/" + std::to_string(job->id)}});
}

void AgentApi::reapThreads()
{
    for (auto it = m_threads.begin(); it != m_threads.end();) {
        auto job = m_jobs.find(it->first);
        // A job whose state is set has released the lock and left its work: joining waits only
        // for its last lines, which need nothing of ours.
        if (job == m_jobs.end() || job->second->state != "running") {
            it->second.join();
            it = m_threads.erase(it);
        } else {
            ++it;
        }
    }
}

ApiResponse AgentApi::cancelJob(std::int64_t id, const Origin &origin)
{
    std::lock_guard lock(m_jobsMutex);
    auto it = m_jobs.find(id);
    if (it == m_jobs.end())
        return errorResponse(404, "no job " + std::to_string(id) + " (the agent keeps the last 100)");
    Job &j = *it->second;
    if (j.state == "running" && (j.kind == "reconcile" || j.kind == "compare")) {
        j.stop.request_stop();
        log(LogLevel::Info,
            "cancel job " + std::to_string(id) + " (" + (origin.phrase.empty() ? origin.who : origin.phrase) + ")");
    }
    // A repair is one transaction: it runs to its end.
    return jsonResponse(202, {{"job", j.id}, {"state", j.state}, {"cancelling", j.stop.stop_requested()}});
}

ApiResponse AgentApi::jobJson(std::int64_t id, std::size_t phasesFrom)
{
    std::lock_guard lock(m_jobsMutex);
    auto it = m_jobs.find(id);
    if (it == m_jobs.end())
        return errorResponse(404, "no job " + std::to_string(id) + " (the agent keeps the last 100)");
    const Job &j = *it->second;
    json phases = json::array();
    for (std::size_t i = phasesFrom; i < j.phases.size(); ++i)
        phases.push_back(j.phases[i]);
    return jsonResponse(200, {{"job", j.id},
                              {"kind", j.kind},
                              {"state", j.state},
                              {"origin", j.origin},
                              {"started_at_ms", j.startedAtMs},
                              {"ended_at_ms", j.endedAtMs ? json(j.endedAtMs) : json(nullptr)},
                              {"error", j.error.empty() ? json(nullptr) : json(j.error)},
                              {"progress", j.progress},
                              {"phases_from", phasesFrom},
                              {"phases", phases},
                              {"result", j.result}});
}

} // namespace driftless::core
