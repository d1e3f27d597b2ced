#pragma once

#include "core/agent/agentauth.h"
#include "core/engine/enginerun.h"
#include "core/engine/workspacestate.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
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
///    slot-history, reconciles, reconciles/ID, jobs/ID. Act: pause, resume, backfill, promote,
///    reconcile, repair (the last two as jobs), engine/start, engine/stop, PUT workspace (apply).
///
/// A request without a valid token gets 401 and nothing else (not even whether the path
/// exists); each refusal is an `agent_unauthorized` event naming the client's address, and five
/// within a minute lock that address out for a minute (429). Every control action is an event
/// (`agent_control`) naming its origin. docs/agent-api.md is the reference.
///
/// Thread safety: handle() may be called from any thread; reconcile and repair run on the API's
/// own threads, stopped and joined by the destructor.
class AgentApi {
public:
    AgentApi(WorkspaceState &state, AgentEngine &engine, std::string tokenPath);
    ~AgentApi();
    AgentApi(const AgentApi &) = delete;
    AgentApi &operator=(const AgentApi &) = delete;

    ApiResponse handle(const ApiRequest &request);

    static constexpr const char *kPrefix = "/api/v1/";
    static constexpr int kMaxRunningJobs = 4;

private:
    struct Job;
    ApiResponse authenticate(const ApiRequest &request);
    ApiResponse route(const ApiRequest &request, const std::string &origin);
    ApiResponse startJob(const std::string &kind, const std::string &origin,
                         std::function<nlohmann::json(std::stop_token)> work);
    ApiResponse jobJson(std::int64_t id);
    void control(const std::string &origin, const std::string &pipeline, const std::string &table,
                 const std::string &what);

    WorkspaceState &m_state;
    AgentEngine &m_engine;
    std::string m_tokenPath;
    FailureLimiter m_limiter;

    std::mutex m_jobsMutex;
    std::int64_t m_nextJob = 1;
    std::map<std::int64_t, std::shared_ptr<Job>> m_jobs;
    std::vector<std::jthread> m_threads;
};

} // namespace driftless::core
