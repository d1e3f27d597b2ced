#include "core/agent/agentapi.h"

#include "core/agent/agenthttp.h"
#include "core/base/isotime.h"

#include "core/base/clock.h"
#include "core/base/jsonfields.h"
#include "core/base/log.h"
#include "core/config/workspacefile.h"
#include "core/engine/commands/decommission.h"
#include "core/engine/commands/doctor.h"
#include "core/engine/commands/resnapshot.h"
#include "core/engine/endpoints/endpointcalls.h"
#include "core/engine/endpoints/endpointtls.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/engine/reconcile/reconciler.h"
#include "core/engine/reconcile/reportexport.h"
#include "core/engine/slots/slots.h"
#include "core/engine/status/alerts.h"
#include "core/engine/status/metrics.h"
#include "core/engine/status/statusreport.h"
#include "core/model/error.h"
#include "core/model/tableref.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace driftless::core {

using json = nlohmann::json;
using namespace agenthttp;

namespace {

/// A reconciler phase hook that reports {table, phase, done, total}; `done` counts finished tables.
std::function<void(const std::string &, std::string_view)> phaseReporter(const std::function<void(json)> &progress,
                                                                         int &done, int total)
{
    return [&progress, &done, total](const std::string &table, std::string_view phase) {
        if (phase == "done")
            ++done;
        progress({{"table", table}, {"phase", std::string(phase)}, {"done", done}, {"total", total}});
    };
}

/// Two query parameters a path needs both of; BadRequest with `usage` otherwise.
std::pair<std::string, std::string> twoQueries(const ApiRequest &r, const std::string &a, const std::string &b,
                                               const char *usage)
{
    std::pair<std::string, std::string> out{textQuery(r, a), textQuery(r, b)};
    if (out.first.empty() || out.second.empty())
        throw BadRequest{400, usage};
    return out;
}

/// How far back lag and slot history go when no since_ms is given.
constexpr std::int64_t kDefaultHistoryMs = 3'600'000;

json optionalJson(const std::optional<std::int64_t> &v)
{
    return v ? json(*v) : json(nullptr);
}

} // namespace

json eventsJson(const std::vector<EventRecord> &events)
{
    json arr = json::array();
    for (const auto &e : events)
        arr.push_back({{"id", e.id},
                       {"at", formatIso8601(e.tsMs)},
                       {"at_ms", e.tsMs},
                       {"level", toString(e.level)},
                       {"pipeline", e.pipeline},
                       {"table", e.table},
                       {"kind", e.kind},
                       {"message", e.message}});
    return arr;
}

std::vector<EventRecord> eventsFromJson(const json &events)
{
    std::vector<EventRecord> out;
    if (!events.is_array())
        return out;
    for (const auto &e : events) {
        if (!e.is_object())
            continue;
        EventRecord r;
        r.id = e.value("id", std::int64_t{0});
        r.tsMs = e.value("at_ms", std::int64_t{0});
        r.level = levelFrom(e.value("level", std::string("info"))).value_or(Level::Info);
        r.pipeline = e.value("pipeline", std::string());
        r.table = e.value("table", std::string());
        r.kind = e.value("kind", std::string());
        r.message = e.value("message", std::string());
        out.push_back(std::move(r));
    }
    return out;
}

namespace {

/// Paths the API has, with the methods each takes (for 405 and its Allow header).
const std::map<std::string, std::string> &knownPaths()
{
    static const std::map<std::string, std::string> paths = {
        {"tables", "GET"},        {"status", "GET"},      {"workspace", "GET, PUT"}, {"events", "GET"},
        {"lag", "GET"},           {"slots", "GET"},       {"slot-history", "GET"},   {"reconciles", "GET"},
        {"pause", "POST"},        {"resume", "POST"},     {"backfill", "POST"},      {"promote", "POST"},
        {"reconcile", "POST"},    {"repair", "POST"},     {"engine", "GET"},         {"engine/start", "POST"},
        {"engine/stop", "POST"},  {"probe", "POST"},      {"discover", "POST"},      {"doctor", "POST"},
        {"decommission", "POST"}, {"trust-host", "POST"}, {"conflicts", "GET"},      {"recover", "POST"},
        {"compare", "POST"},
    };
    return paths;
}

/// The endpoint a probe or discover request names: an object (kind, dsn or path: one the DBA is
/// still editing) or, when `ws` is given, the name of one of its endpoints.
Endpoint requestEndpoint(const json &body, const Workspace *ws)
{
    auto it = body.find("endpoint");
    if (it == body.end())
        throw BadRequest{400, "the request body needs \"endpoint\": {\"kind\", \"dsn\" or \"path\"}" +
                                  std::string(ws ? " or the name of an endpoint of the workspace" : "")};
    if (it->is_string()) {
        const Endpoint *e = ws ? ws->endpoint(it->get<std::string>()) : nullptr;
        if (!e)
            throw ConfigError("no endpoint named '" + it->get<std::string>() + "' in the workspace");
        return *e;
    }
    return endpointFromJson(*it);
}

/// probe and discover: they read an endpoint where the engine runs and need nothing of its state
/// but, for an endpoint named, the workspace. nullopt for any other path.
std::optional<ApiResponse> endpointCall(const std::string &path, const ApiRequest &request, const Workspace *ws)
{
    if (path == "probe" && request.method == "POST") {
        const json body = parseBody(request);
        const Endpoint e = requestEndpoint(body, ws);
        std::optional<std::string> password;
        if (auto p = body.find("password"); p != body.end() && !p->is_null()) {
            if (!p->is_string())
                throw BadRequest{400, "\"password\" takes a string (for this probe only; it is never stored)"};
            password = p->get<std::string>();
        }
        return jsonResponse(200, probeJsonValue(probeEndpoint(e, password)));
    }
    if (path == "discover" && request.method == "POST") {
        const json body = parseBody(request);
        return jsonResponse(200, discoveryJsonValue(discoverSource(requestEndpoint(body, ws))));
    }
    if (path == "trust-host" && request.method == "POST") {
        // Trusts the one key the DBA confirmed, and only if the server still offers it.
        const json body = parseBody(request);
        const Endpoint e = requestEndpoint(body, ws);
        if (!e.ssh)
            throw BadRequest{400, "endpoint '" + e.name + "' has no ssh tunnel: there is no host key to trust"};
        const std::string fingerprint = stringField(body, "fingerprint");
        const bool replace = body.value("replace", false);
        // "jump": true trusts the endpoint's jump host (ssh.jump), not the server behind it.
        std::optional<SshTunnelSpec> jump;
        if (body.value("jump", false)) {
            try {
                jump = jumpHostOf(*e.ssh);
            } catch (const ConfigError &x) {
                throw BadRequest{400, x.what()};
            }
            if (!jump)
                throw BadRequest{400, "endpoint '" + e.name + "' has no ssh.jump"};
        }
        const SshTunnelSpec &server = jump ? *jump : *e.ssh;
        const auto offered = scanHostKeys(server);
        const auto key = std::find_if(offered.begin(), offered.end(),
                                      [&](const SshHostKey &k) { return k.fingerprint == fingerprint; });
        if (key == offered.end())
            throw BadRequest{409, "the SSH server " + server.host + " does not offer " + fingerprint +
                                      " now; test the connection again and compare the fingerprint it shows"};
        const auto trusted = trustedHostKeys(server);
        const bool changed = !trusted.empty() && std::none_of(trusted.begin(), trusted.end(),
                                                              [&](const SshHostKey &k) { return k.blob == key->blob; });
        if (changed && !replace)
            throw BadRequest{409, "the SSH host key of " + server.host +
                                      " CHANGED: another key is trusted; "
                                      "send \"replace\": true only after its administrator confirmed the new one"};
        trustHostKeys(server, {*key}, changed);
        return jsonResponse(200, json{{"trusted", key->label()}, {"known_hosts", sshKnownHostsFile()}});
    }
    return std::nullopt;
}

} // namespace

AgentApi::AgentApi(WorkspaceState &state, AgentEngine &engine, std::string tokenPath)
    : m_state(state), m_engine(engine), m_tokenPath(std::move(tokenPath))
{
}

AgentApi::~AgentApi()
{
    std::map<std::int64_t, std::jthread> threads;
    {
        std::lock_guard lock(m_jobsMutex);
        threads.swap(m_threads);
    }
    for (auto &[id, t] : threads)
        t.request_stop();
    // jthread joins as `threads` goes.
}

void AgentApi::control(const Origin &origin, const std::string &pipeline, const std::string &table,
                       const std::string &what)
{
    // The in-process face is the DBA at this machine, as with the CLI: the action's own events
    // say what happened.
    if (origin.phrase.empty())
        return;
    const std::string message = what + " (" + origin.phrase + ")";
    log(LogLevel::Info, message);
    try {
        m_state.note(Level::Info, pipeline, table, "agent_control", message);
    } catch (const Error &e) {
        log(LogLevel::Warn, "agent control event not recorded: " + e.describe());
    }
}

ApiResponse AgentApi::authenticate(const ApiRequest &request)
{
    const std::string &who = request.peer.empty() ? std::string("an unknown address") : request.peer;
    if (int wait = m_limiter.lockedFor(request.peer); wait > 0) {
        auto r = errorResponse(429, "too many failed logins from this address; try again later");
        r.headers.emplace_back("Retry-After", std::to_string(wait));
        return r;
    }
    std::string token;
    try {
        token = readAgentToken(m_tokenPath);
    } catch (const Error &e) {
        log(LogLevel::Error, "agent API: " + e.describe());
        return errorResponse(503, "the agent cannot read its token; see the agent's log");
    }
    static const std::string scheme = "Bearer ";
    const std::string &h = request.authorization;
    const bool bearer = h.size() > scheme.size() && h.compare(0, scheme.size(), scheme) == 0;
    if (bearer && agentTokenMatches(token, h.substr(scheme.size()))) {
        m_limiter.succeeded(request.peer);
        return {0, {}, {}, {}};
    }
    const bool locked = m_limiter.failed(request.peer);
    const std::string why = h.empty() ? "no token" : (bearer ? "a wrong token" : "no bearer token");
    std::string message =
        "refused an agent API request from " + who + " (" + request.method + " " + request.path + "): " + why;
    if (locked)
        message += "; that address is locked out for a minute after repeated failures";
    log(LogLevel::Warn, message);
    try {
        m_state.note(Level::Warn, {}, {}, "agent_unauthorized", message);
    } catch (const Error &e) {
        log(LogLevel::Warn, "agent refusal not recorded: " + e.describe());
    }
    auto r = errorResponse(401, "unauthorized",
                           "send Authorization: Bearer TOKEN ('driftless-cli agent-token' on the agent prints it)");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"driftless\"");
    return r;
}

namespace {

/// Runs `f`, turning what it throws into the answer a client gets.
template <typename F> ApiResponse answer(F &&f)
{
    try {
        return f();
    } catch (const BadRequest &b) {
        return errorResponse(b.status, b.message);
    } catch (const ConfigError &e) {
        return errorResponse(422, e.what(), e.hint());
    } catch (const Error &e) {
        return errorResponse(500, e.what(), e.hint());
    } catch (const std::exception &e) {
        log(LogLevel::Error, std::string("agent API: ") + e.what());
        return errorResponse(500, e.what());
    }
}

} // namespace

ApiResponse AgentApi::handleLocal(const ApiRequest &request, const std::string &who)
{
    return answer([&] {
        if (!request.path.starts_with(kPrefix))
            return errorResponse(404, "no such path; the control API is under /api/v1/");
        return route(request, {who, {}});
    });
}

bool AgentApi::isStateless(const std::string &path)
{
    return path == std::string(kPrefix) + "probe" || path == std::string(kPrefix) + "discover" ||
           path == std::string(kPrefix) + "trust-host";
}

ApiResponse AgentApi::handleStateless(const ApiRequest &request)
{
    return answer([&] {
        if (isStateless(request.path))
            if (auto r = endpointCall(request.path.substr(std::string(kPrefix).size()), request, nullptr))
                return *r;
        return errorResponse(404, "only probe and discover are answered without a workspace: " + request.path);
    });
}

ApiResponse AgentApi::handle(const ApiRequest &request)
{
    return answer([&] {
        if (request.path == "/sync/status" || request.path == "/metrics") {
            if (request.method != "GET" && request.method != "HEAD") {
                auto r = errorResponse(405, "only GET is served on " + request.path);
                r.headers.emplace_back("Allow", "GET");
                return r;
            }
            const auto now = wallClockMs();
            auto status = m_engine.status(now);
            if (request.path == "/metrics") {
                ApiResponse r;
                r.contentType = "text/plain; version=0.0.4; charset=utf-8";
                r.body = prometheusText(status.tables, status.monitor.sources, status.monitor.alerts);
                return r;
            }
            json slotInfo = slotsJsonValue(status.monitor.sources);
            return jsonResponse(
                200, {
                         {"generated_at", formatIso8601(now)},
                         {"tables", tablesJsonValue(status.tables)},
                         {"slots", slotInfo["slots"]},
                         {"slot_errors", slotInfo["errors"]},
                         {"binlogs", slotInfo["binlogs"]},
                         {"slots_sampled_at",
                          status.monitor.atMs ? json(formatIso8601(status.monitor.atMs)) : json(nullptr)},
                         {"alerts", alertsJsonValue(status.monitor.alerts)},
                         {"endpoints", status.workspace ? endpointsTlsJsonValue(*status.workspace) : json::array()},
                     });
        }
        if (!request.path.starts_with(kPrefix))
            return errorResponse(404, "no such path; the control API is under /api/v1/");
        if (auto refused = authenticate(request); refused.status != 0)
            return refused;
        const std::string who = request.peer.empty() ? "an unknown address" : request.peer;
        return route(request, {who, "agent API, from " + who});
    });
}

ApiResponse AgentApi::route(const ApiRequest &request, const Origin &origin)
{
    const std::string path = request.path.substr(std::string(kPrefix).size());
    const std::string &method = request.method;
    const bool get = method == "GET" || method == "HEAD";
    const auto now = wallClockMs();

    if (path == "probe" || path == "discover" || path == "trust-host") {
        const Workspace ws = m_state.workspace();
        if (auto r = endpointCall(path, request, &ws))
            return *r;
    }

    if (path == "doctor" && method == "POST") {
        // The checks of `driftless-cli doctor`, run where the engine runs (it connects to each server).
        const json body = parseBody(request);
        const DoctorScope scope{stringField(body, "pipeline", false), stringField(body, "endpoint", false)};
        json doc = doctorJsonValue(runDoctor(m_state.workspace(), scope));
        doc["checked_at"] = formatIso8601(wallClockMs());
        return jsonResponse(200, doc);
    }

    // Reading.
    if (path == "tables" && get)
        // The document of status --json (core::statusJson), built as a value rather than printed and parsed.
        return jsonResponse(
            200, {{"generated_at", formatIso8601(now)}, {"tables", tablesJsonValue(m_engine.status(now).tables)}});
    if (path == "status" && get) {
        auto status = m_engine.status(now);
        json slotInfo = slotsJsonValue(status.monitor.sources);
        return jsonResponse(
            200, {{"generated_at", formatIso8601(now)},
                  {"engine", {{"running", m_engine.running()}}},
                  {"tables", tablesJsonValue(status.tables)},
                  {"slots", slotInfo["slots"]},
                  {"slot_errors", slotInfo["errors"]},
                  {"binlogs", slotInfo["binlogs"]},
                  {"slots_sampled_at", status.monitor.atMs ? json(formatIso8601(status.monitor.atMs)) : json(nullptr)},
                  {"alerts", alertsJsonValue(status.monitor.alerts)},
                  {"endpoints", status.workspace ? endpointsTlsJsonValue(*status.workspace) : json::array()}});
    }
    if (path == "snapshot" && get) {
        const int limit = static_cast<int>(intQuery(request, "events", 200, 0, 10000));
        auto status = m_engine.status(now);
        return jsonResponse(
            200, {{"generated_at_ms", now},
                  {"engine", {{"running", m_engine.running()}}},
                  {"workspace_yaml", WorkspaceFile::toYaml(m_state.workspace())},
                  {"tables", tablesJsonValue(status.tables)},
                  {"events", limit ? eventsJson(m_state.events(limit)) : json::array()},
                  {"alerts", alertsJsonValue(status.monitor.alerts)},
                  {"endpoints", status.workspace ? endpointsTlsJsonValue(*status.workspace) : json::array()}});
    }
    if (path == "engine" && get)
        return jsonResponse(200, {{"running", m_engine.running()}});
    if (path == "workspace" && get)
        return jsonResponse(200, {{"yaml", WorkspaceFile::toYaml(m_state.workspace())}});
    if (path == "events" && get) {
        const int limit = static_cast<int>(intQuery(request, "limit", 200, 1, 10000));
        return jsonResponse(
            200, eventsJson(m_state.events(limit, textQuery(request, "pipeline"), textQuery(request, "table"))));
    }
    if (path == "lag" && get) {
        const auto [pipeline, table] =
            twoQueries(request, "pipeline", "table", "lag needs ?pipeline=NAME&table=SCHEMA.TABLE");
        const auto since = intQuery(request, "since_ms", now - kDefaultHistoryMs, 0, now + 1);
        json arr = json::array();
        for (const auto &s : m_state.lagSamples(pipeline, table, since))
            arr.push_back({{"at_ms", s.tsMs}, {"lag_seconds", s.lagSeconds}, {"rows_per_second", s.rowsPerSecond}});
        return jsonResponse(200, arr);
    }
    if (path == "slots" && get) {
        if (textQuery(request, "fresh") == "true") {
            // Read now, from where the agent runs (F5 on a Slots page): one query per source.
            // With record=true and no engine running, the reading goes into the slots' history,
            // which a running engine keeps itself.
            json j = slotsJsonValue(m_state.slotsNow(textQuery(request, "record") == "true" && !m_engine.running()));
            j["sampled_at_ms"] = now;
            return jsonResponse(200, j);
        }
        auto status = m_engine.status(now);
        json j = slotsJsonValue(status.monitor.sources);
        j["sampled_at_ms"] = status.monitor.atMs ? json(status.monitor.atMs) : json(nullptr);
        return jsonResponse(200, j);
    }
    if (path == "slot-history" && get) {
        const auto [source, slot] =
            twoQueries(request, "source", "slot", "slot-history needs ?source=ENDPOINT&slot=NAME");
        const auto since = intQuery(request, "since_ms", now - kDefaultHistoryMs, 0, now + 1);
        json arr = json::array();
        for (const auto &s : m_state.slotSamples(source, slot, since))
            arr.push_back({{"at_ms", s.tsMs},
                           {"retained_bytes", optionalJson(s.retainedBytes)},
                           {"unconfirmed_bytes", optionalJson(s.unconfirmedBytes)},
                           {"safe_wal_size", optionalJson(s.safeWalSize)}});
        return jsonResponse(200, arr);
    }
    if (path == "reconciles" && get) {
        const int limit = static_cast<int>(intQuery(request, "limit", 50, 1, 1000));
        return jsonResponse(200, summariesJsonValue(m_state.reconcileSummaries(limit, textQuery(request, "pipeline"))));
    }
    if (path.starts_with("reconciles/") && get) {
        const std::string idText = path.substr(std::string("reconciles/").size());
        const auto id = wholeNumber(idText, "a report id", 1, INT64_MAX);
        auto report = m_state.loadReport(id);
        if (!report)
            return errorResponse(404, "no reconciliation report " + idText);
        const std::string format = textQuery(request, "format");
        if (format.empty() || format == "json")
            return jsonResponse(200, reportJsonValue(*report));
        if (format != "csv" && format != "html")
            throw BadRequest{400, "format takes json, csv or html"};
        ApiResponse r;
        r.contentType = format == "csv" ? "text/csv; charset=utf-8" : "text/html; charset=utf-8";
        r.body = format == "csv" ? reportCsv(*report) : reportHtml(*report);
        return r;
    }
    if (path == "conflicts" || path.starts_with("conflicts/"))
        if (auto r = conflictRoute(path, request, origin))
            return *r;
    if (path.starts_with("jobs/") && get)
        return jobJson(wholeNumber(path.substr(5), "a job id", 1, INT64_MAX),
                       static_cast<std::size_t>(intQuery(request, "phases_from", 0, 0, INT64_MAX)));
    if (path.starts_with("jobs/") && path.ends_with("/cancel") && method == "POST")
        return cancelJob(wholeNumber(path.substr(5, path.size() - 5 - 7), "a job id", 1, INT64_MAX), origin);

    // Acting.
    if ((path == "pause" || path == "resume") && method == "POST") {
        const json body = parseBody(request);
        const std::string pipeline = stringField(body, "pipeline");
        const auto tables = tablesField(body);
        const bool pause = path == "pause";
        const auto changes = m_state.setPaused(m_state.workspace(), pipeline, tables, pause);
        json arr = json::array();
        for (const auto &c : changes) {
            arr.push_back({{"table", c.key.table.display()}, {"changed", c.changed}, {"message", c.message}});
            if (c.changed)
                control(origin, pipeline, c.key.table.display(),
                        std::string(pause ? "paused " : "resumed ") + pipeline + "/" + c.key.table.display());
        }
        return jsonResponse(200, {{"changes", arr}});
    }
    if (path == "backfill" && method == "POST") {
        const json body = parseBody(request);
        const std::string pipeline = stringField(body, "pipeline"), table = stringField(body, "table");
        const bool cancel = body.value("cancel", false);
        const Workspace ws = m_state.workspace();
        auto req = cancel ? cancelRebackfill(ws, pipeline, table) : requestRebackfill(ws, pipeline, table);
        control(origin, pipeline, req.key.table.display(),
                std::string(cancel ? "cancel the re-backfill of " : "re-backfill ") + pipeline + "/" +
                    req.key.table.display() + ": " + req.message);
        json j = {{"table", req.key.table.display()}, {"message", req.message}};
        j["what"] = req.what == RebackfillRequest::What::Requested  ? "requested"
                    : req.what == RebackfillRequest::What::InFlight ? "in_flight"
                                                                    : "other";
        j["streaming_pid"] = req.runningPid ? json(*req.runningPid) : json(nullptr);
        return jsonResponse(200, j);
    }
    if (path == "promote" && method == "POST") {
        const json body = parseBody(request);
        const std::string pipeline = stringField(body, "pipeline");
        const auto lines = m_state.promoteToCdc(pipeline, tablesField(body));
        for (const auto &l : lines)
            control(origin, pipeline, {}, "promote: " + l);
        return jsonResponse(200, {{"lines", lines}});
    }
    if (path == "recover" && method == "POST") {
        // The request stays in the target's checkpoints: the pipeline's next start takes it.
        const json body = parseBody(request);
        const std::string pipeline = stringField(body, "pipeline");
        const auto lines = requestRecovery(m_state.workspace(), pipeline);
        control(origin, pipeline, {}, "recover " + pipeline);
        return jsonResponse(200, {{"pipeline", pipeline}, {"lines", lines}});
    }
    if (path == "workspace" && method == "PUT") {
        if (request.body.empty())
            throw BadRequest{400, "PUT /api/v1/workspace takes the workspace YAML as its body"};
        const auto dir = std::filesystem::path(m_state.path()).parent_path().string();
        const Workspace ws = WorkspaceFile::parse(request.body, "the workspace sent to the agent", dir);
        if (textQuery(request, "check") != "false") {
            json problems = json::array();
            for (const auto &f : runDoctor(ws))
                if (f.level == FindingLevel::Error)
                    problems.push_back({{"category", f.category},
                                        {"pipeline", f.pipeline},
                                        {"subject", f.subject},
                                        {"message", f.message},
                                        {"fix", f.fix}});
            if (!problems.empty())
                return jsonResponse(422, {{"error", "nothing applied: the agent's checks against the servers failed "
                                                    "(fix them, or PUT with ?check=false)"},
                                          {"problems", problems}});
        }
        const auto summary = m_state.apply(ws);
        if (summary.changed)
            control(origin, {}, {}, "applied a workspace (" + std::to_string(summary.lines.size()) + " changes)");
        return jsonResponse(200, {{"changed", summary.changed}, {"lines", summary.lines}});
    }
    if (path == "decommission" && method == "POST") {
        const json body = parseBody(request);
        const std::string pipeline = stringField(body, "pipeline");
        if (jsonfields::flag(body, "dry_run"))
            return jsonResponse(200, decommissionJsonValue(planDecommission(m_state.workspace(), pipeline)));
        const auto lines = decommission(m_state, pipeline, jsonfields::flag(body, "keep_slot"));
        control(origin, pipeline, {}, "decommissioned pipeline " + pipeline);
        return jsonResponse(200, {{"pipeline", pipeline}, {"lines", lines}});
    }
    if (path == "drop-slot" && method == "POST") {
        const json body = parseBody(request);
        const std::string source = stringField(body, "source"), slot = stringField(body, "slot");
        const Workspace ws = m_state.workspace();
        auto it = ws.endpoints.find(source);
        if (it == ws.endpoints.end())
            throw ConfigError("no endpoint named '" + source + "'");
        dropSlot(it->second, slot);
        control(origin, {}, {}, "dropped replication slot " + slot + " on " + source);
        return jsonResponse(200, {{"dropped", slot}, {"source", source}});
    }
    if ((path == "engine/start" || path == "engine/stop") && method == "POST") {
        const bool run = path == "engine/start";
        if (m_engine.running() != run) {
            m_engine.setRunning(run);
            control(origin, {}, {}, run ? "started the engine" : "stopped the engine");
        }
        return jsonResponse(200, {{"running", run}});
    }
    if (path == "reconcile" && method == "POST") {
        const json body = parseBody(request);
        const std::string pipeline = stringField(body, "pipeline");
        const auto tables = tablesField(body);
        ReconcileOptions opt;
        if (body.contains("max_keys")) {
            if (!body["max_keys"].is_number_integer() || body["max_keys"].get<int>() < 0)
                throw BadRequest{400, "\"max_keys\" takes a count, e.g. 100"};
            opt.maxKeys = body["max_keys"].get<int>();
        }
        const Workspace ws = m_state.workspace();
        if (!ws.pipeline(pipeline))
            throw ConfigError("no pipeline named '" + pipeline + "'");
        control(origin, pipeline, {}, "reconcile " + pipeline);
        const int total = static_cast<int>(tables.empty() ? ws.pipeline(pipeline)->tables.size() : tables.size());
        return startJob(
            "reconcile", origin,
            [this, ws, pipeline, tables, opt, total](std::stop_token stop, const Progress &progress) mutable {
                opt.stop = stop;
                int done = 0;
                opt.onPhase = phaseReporter(progress, done, total);
                auto report = reconcile(ws, pipeline, tables, opt);
                if (stop.stop_requested())
                    throw Cancelled();
                m_state.storeReport(report);
                return reportJsonValue(report);
            });
    }
    if (path == "compare" && method == "POST") {
        const json body = parseBody(request);
        const std::string left = stringField(body, "left"), right = stringField(body, "right");
        // Column lists as `compare --key` and `--columns` take them: an array of names, or one
        // string of names separated by commas.
        const auto columns = [&body](const char *name) {
            std::vector<std::string> out;
            auto it = body.find(name);
            if (it == body.end() || it->is_null())
                return out;
            const std::string usage =
                std::string("\"") + name + "\" takes column names: an array, or one string separated by commas";
            if (it->is_string()) {
                try {
                    return splitColumnList(it->get<std::string>());
                } catch (const std::invalid_argument &) {
                    throw BadRequest{400, usage};
                }
            }
            if (!it->is_array())
                throw BadRequest{400, usage};
            for (const auto &c : *it) {
                if (!c.is_string() || c.get<std::string>().empty())
                    throw BadRequest{400, usage};
                out.push_back(c.get<std::string>());
            }
            return out;
        };
        ReconcileOptions opt;
        opt.compareKey = columns("key");
        opt.compareColumns = columns("columns");
        if (auto where = stringField(body, "where", false); !where.empty())
            opt.compareWhere = where;
        if (body.contains("max_keys")) {
            if (!body["max_keys"].is_number_integer() || body["max_keys"].get<int>() < 0)
                throw BadRequest{400, "\"max_keys\" takes a count, e.g. 100"};
            opt.maxKeys = body["max_keys"].get<int>();
        }
        const Workspace ws = m_state.workspace();
        compareJob(ws, left, right); // a name the workspace lacks or a malformed one: 422 at once
        control(origin, {}, {}, "compare " + left + " " + right);
        return startJob("compare", origin,
                        [this, ws, left, right, opt](std::stop_token stop, const Progress &progress) mutable {
                            opt.stop = stop;
                            int done = 0;
                            opt.onPhase = phaseReporter(progress, done, 1);
                            auto report = compareTables(ws, left, right, opt);
                            if (stop.stop_requested())
                                throw Cancelled();
                            m_state.storeReport(report);
                            return reportJsonValue(report);
                        });
    }
    if (path == "repair" && method == "POST") {
        const json body = parseBody(request);
        if (!body.contains("report") || !body["report"].is_number_integer())
            throw BadRequest{400, "the request body needs \"report\": the id of a reconciliation report"};
        const auto id = body["report"].get<std::int64_t>();
        std::optional<std::string> table;
        if (auto t = stringField(body, "table", false); !t.empty())
            table = t;
        std::vector<CanonicalKey> keys;
        if (auto k = body.find("keys"); k != body.end() && !k->is_null()) {
            if (!table || !k->is_array() || k->empty())
                throw BadRequest{400, "\"keys\" takes a non-empty array of keys as the report writes them, "
                                      "with \"table\" naming their table"};
            for (const auto &key : *k)
                keys.push_back(keyFromJson(key));
        }
        bool dryRun = false;
        if (auto d = body.find("dry_run"); d != body.end() && !d->is_null()) {
            if (!d->is_boolean())
                throw BadRequest{400, "\"dry_run\" takes true or false"};
            dryRun = d->get<bool>();
        }
        auto report = m_state.loadReport(id);
        if (!report)
            return errorResponse(404, "no reconciliation report " + std::to_string(id));
        if (dryRun) {
            // The plan, at once and without writing: what the same request without dry_run runs.
            const Workspace ws = m_state.workspace();
            RepairPlan plan;
            if (!keys.empty()) {
                plan.reportId = report->id;
                plan.pipeline = report->pipeline;
                plan.tables.push_back(planKeys(ws, report->pipeline, *table, keys));
            } else {
                plan = planRepair(ws, *report, table);
            }
            return jsonResponse(200, repairPlanJsonValue(plan));
        }
        control(origin, report->pipeline, table.value_or(""),
                "repair report " + std::to_string(id) +
                    (keys.empty() ? std::string() : " (" + std::to_string(keys.size()) + " keys)"));
        return startJob("repair", origin,
                        [this, report = *report, table, keys](std::stop_token, const Progress &progress) {
                            const Workspace ws = m_state.workspace();
                            progress({{"table", table.value_or("")}, {"phase", "repair"}, {"done", 0}, {"total", 1}});
                            std::vector<RepairOutcome> outcomes;
                            if (!keys.empty()) {
                                RepairOutcome o;
                                try {
                                    o = repairKeys(ws, report.pipeline, *table, keys);
                                } catch (const Error &e) {
                                    o.pipeline = report.pipeline;
                                    o.table = *table;
                                    o.keys = static_cast<long long>(keys.size());
                                    o.error = e.describe();
                                }
                                outcomes.push_back(std::move(o));
                            } else {
                                outcomes = repairReport(ws, report, table);
                            }
                            m_state.recordRepair(report, outcomes);
                            json result = repairJsonValue(outcomes);
                            // Where the repaired tables stand now, as a report of their own: what
                            // a list of reports shows next.
                            result["check_report"] = nullptr;
                            result["check_error"] = nullptr;
                            try {
                                std::vector<std::string> repaired;
                                for (const auto &o : outcomes)
                                    repaired.push_back(o.table);
                                ReconcileOptions opt;
                                int done = 0;
                                opt.onPhase = phaseReporter(progress, done, static_cast<int>(repaired.size()));
                                auto check = reconcile(ws, report.pipeline, repaired, opt);
                                m_state.storeReport(check);
                                result["check_report"] = check.id;
                            } catch (const Error &e) {
                                result["check_error"] = e.describe();
                            }
                            return result;
                        });
    }

    const auto &paths = knownPaths();
    auto known = paths.find(path);
    if (known != paths.end() || path.starts_with("reconciles/") || path.starts_with("jobs/") ||
        path.starts_with("conflicts/")) {
        auto r = errorResponse(405, method + " is not served on " + request.path);
        r.headers.emplace_back("Allow", known != paths.end()             ? known->second
                                        : path.starts_with("conflicts/") ? "POST"
                                                                         : "GET");
        return r;
    }
    return errorResponse(404, "no such path in the agent API: " + request.path);
}

} // namespace driftless::core
