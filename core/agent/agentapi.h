#pragma once

#include "core/agent/agentauth.h"
#include "core/engine/run/enginerun.h"
#include "core/engine/run/workspacestate.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace driftless::core {

/// One HTTP request as the agent's endpoint received it (the transport is the face's: serve
/// speaks HTTP or HTTPS with Qt, tests may call handle() directly).
struct ApiRequest {
    std::string method; ///< GET, POST, PUT, ...
    std::string path;   ///< decoded, without the query
    std::map<std::string, std::string> query;
    std::string authorization; ///< the Authorization header, as sent
    std::string body;
    std::string peer; ///< the client's address, for events and the failure limit
};

struct ApiResponse {
    int status = 200;
    std::string contentType = "application/json";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
};

/// Events as the API sends them (`id`, `at`, `at_ms`, `level`, `pipeline`, `table`, `kind`,
/// `message`), and read back by a client.
nlohmann::json eventsJson(const std::vector<EventRecord> &events);
std::vector<EventRecord> eventsFromJson(const nlohmann::json &events);

/// The engine an agent runs, as its API drives it (serve implements it over core::EngineRun).
class AgentEngine {
public:
    virtual ~AgentEngine() = default;
    virtual EngineRun::Status status(std::int64_t nowMs) const = 0;
    /// The engine runs (true) or was stopped through the API (false); `message` says why it
    /// is not running when it ended by itself.
    virtual bool running() const = 0;
    /// Starts (true) or stops (false) the engine; the API stays up either way. Returns at once.
    virtual void setRunning(bool run) = 0;
};

/// The agent's HTTP interface, one router for every path `serve` answers:
///  - `GET /sync/status` and `GET /metrics`, unauthenticated (monitoring scrapes them);
///  - the control API under `/api/v1/`, each request with `Authorization: Bearer TOKEN`
///    (the token in AgentFiles::token, read again at each request so a rotation takes at once).
///    Read: tables (the items of `status --json`), status, snapshot (what the app shows at
///    once: workspace, tables, events, engine), workspace, events, lag, slots,
///    slot-history, reconciles, reconciles/ID, jobs/ID, conflicts. Act: pause, resume, backfill,
///    promote, recover, reconcile, compare, repair (the last three as jobs), conflicts/ID/resolve,
///    engine/start, engine/stop, PUT workspace (apply).
///    Endpoints: probe (Test connection) and discover (the pipeline editor's tables), read from
///    where the agent runs.
///
/// A request without a valid token gets 401 and nothing else (not even whether the path
/// exists); each refusal is an `agent_unauthorized` event naming the client's address, and five
/// within a minute lock that address out for a minute (429). Every control action is an event
/// (`agent_control`) naming its origin. docs/agent-api.md is the reference.
///
/// Thread safety: handle() may be called from any thread; reconcile, compare and repair run on
/// the API's own threads, stopped and joined by the destructor.
class AgentApi {
public:
    AgentApi(WorkspaceState &state, AgentEngine &engine, std::string tokenPath);
    ~AgentApi();
    AgentApi(const AgentApi &) = delete;
    AgentApi &operator=(const AgentApi &) = delete;

    ApiResponse handle(const ApiRequest &request);
    /// The control API for a face in the same process (the desktop app on its own workspace
    /// file): no token, since nothing crosses a network; `who` names the face in events and jobs
    /// ("desktop app"), and its actions make no agent_control event (like the CLI's). Only
    /// paths under kPrefix.
    ApiResponse handleLocal(const ApiRequest &request, const std::string &who);
    /// The calls that read an endpoint and need no workspace (POST probe and discover with the
    /// endpoint given whole), for a face that has no workspace file yet: the app before its
    /// first apply. Any other path answers 404.
    static ApiResponse handleStateless(const ApiRequest &request);
    static bool isStateless(const std::string &path);

    static constexpr const char *kPrefix = "/api/v1/";
    static constexpr int kMaxRunningJobs = 4;

private:
    struct Job;
    /// Who asked: `who` as jobs show it (an address, or the in-process face's name), `phrase`
    /// as events say it ("agent API, from 10.0.0.7"); empty for the in-process face, whose
    /// actions are the DBA's at this machine, like the CLI's, and make no agent_control event.
    struct Origin {
        std::string who;
        std::string phrase;
    };
    /// What a job's work may say of where it is, as the job's `progress`.
    using Progress = std::function<void(nlohmann::json)>;
    using Work = std::function<nlohmann::json(std::stop_token, const Progress &)>;
    ApiResponse authenticate(const ApiRequest &request);
    ApiResponse route(const ApiRequest &request, const Origin &origin);
    /// GET conflicts and POST conflicts/ID/resolve (agentconflicts.cpp); nullopt for any other
    /// path or method.
    std::optional<ApiResponse> conflictRoute(const std::string &path, const ApiRequest &request, const Origin &origin);
    ApiResponse startJob(const std::string &kind, const Origin &origin, Work work);
    ApiResponse jobJson(std::int64_t id, std::size_t phasesFrom);
    ApiResponse cancelJob(std::int64_t id, const Origin &origin);
    /// Joins the threads of jobs that ended; the caller holds m_jobsMutex.
    void reapThreads();
    void control(const Origin &origin, const std::string &pipeline, const std::string &table, const std::string &what);

    WorkspaceState &m_state;
    AgentEngine &m_engine;
    std::string m_tokenPath;
    FailureLimiter m_limiter;

    std::mutex m_jobsMutex;
    std::int64_t m_nextJob = 1;
    std::map<std::int64_t, std::shared_ptr<Job>> m_jobs;
    /// One thread per job still running or not yet joined, by job id.
    std::map<std::int64_t, std::jthread> m_threads;
};

} // namespace driftless::core
