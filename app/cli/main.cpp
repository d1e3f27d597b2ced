// driftless-cli: the headless face of the engine. Parses arguments and wires core together.

#include "app/cli/help.h"
#include "app/cli/keychain.h"
#include "app/cli/liveview.h"
#include "app/cli/serve.h"
#include "app/cli/trusthost.h"
#include "core/base/isotime.h"

#include "core/agent/agentauth.h"

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/config/workspacefile.h"
#include "core/config/yamllocation.h"
#include "core/engine/commands/conflictqueue.h"
#include "core/engine/commands/debeziumexport.h"
#include "core/engine/commands/decommission.h"
#include "core/engine/commands/doctor.h"
#include "core/engine/commands/resnapshot.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/engine/jobs/pauses.h"
#include "core/engine/reconcile/reconciler.h"
#include "core/engine/reconcile/reportexport.h"
#include "core/engine/rows/rowfilter.h"
#include "core/engine/run/enginerun.h"
#include "core/engine/run/scheduler.h"
#include "core/engine/run/stateobserver.h"
#include "core/engine/run/workspacestate.h"
#include "core/engine/slots/slotguard.h"
#include "core/engine/slots/slotprojection.h"
#include "core/engine/slots/slots.h"
#include "core/engine/status/alerts.h"
#include "core/engine/status/statusreport.h"
#include "core/engine/twoway/newerwins.h"
#include "core/model/error.h"
#include "core/model/tableref.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <pthread.h>
#include <set>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace driftless::core;

namespace {

constexpr int kOk = 0;
constexpr int kSyncFailed = 1;
constexpr int kUsage = 2;
constexpr int kDrift = 3;

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Args {
    std::string state;
    std::string command;
    std::vector<std::string> rest;

    bool flag(const std::string &name)
    {
        for (auto it = rest.begin(); it != rest.end(); ++it)
            if (*it == name) {
                rest.erase(it);
                return true;
            }
        return false;
    }
    std::string option(const std::string &name)
    {
        for (auto it = rest.begin(); it != rest.end(); ++it) {
            if (*it == name) {
                if (it + 1 == rest.end())
                    throw UsageError(name + " needs a value");
                std::string v = *(it + 1);
                rest.erase(it, it + 2);
                return v;
            }
            if (it->rfind(name + "=", 0) == 0) {
                std::string v = it->substr(name.size() + 1);
                rest.erase(it);
                return v;
            }
        }
        return {};
    }
    void noMore()
    {
        if (!rest.empty())
            throw UsageError("unexpected argument '" + rest.front() + "' for " + command);
    }
};

Args parseArgs(int argc, char **argv)
{
    Args a;
    int i = 1;
    for (; i < argc; ++i) {
        std::string s = argv[i];
        if (s == "--state") {
            if (i + 1 >= argc)
                throw UsageError("--state needs a file");
            a.state = argv[++i];
        } else if (s.rfind("--state=", 0) == 0) {
            a.state = s.substr(8);
        } else if (s == "-h" || s == "--help") {
            a.command = "help";
            return a;
        } else if (s == "--version") {
            a.command = "version";
            return a;
        } else if (!s.empty() && s[0] == '-') {
            throw UsageError("unknown option '" + s + "'");
        } else {
            a.command = s;
            ++i;
            break;
        }
    }
    for (; i < argc; ++i)
        a.rest.emplace_back(argv[i]);
    if (a.state.empty()) {
        const char *env = std::getenv("DRIFTLESS_STATE");
        a.state = env && *env ? env : WorkspaceState::defaultPath();
    }
    return a;
}

void printError(const std::string &line)
{
    std::fprintf(stderr, "driftless-cli: %s\n", line.c_str());
}

/// Reports preflight findings; returns the exit code they call for.
int reportFindings(const std::vector<Finding> &findings, bool quietOk)
{
    int code = kOk;
    for (const auto &f : findings) {
        std::string where = (f.pipeline.empty() ? "" : f.pipeline + ": ") + f.subject;
        if (f.level == FindingLevel::Ok) {
            if (!quietOk)
                std::printf("  ok     %s: %s\n", where.c_str(), f.message.c_str());
            continue;
        }
        std::string line = where + ": " + f.message + (f.fix.empty() ? "" : "; " + f.fix);
        // The exact statements, when the fix's words only sketch them (names filled in).
        const bool sqlToo = !quietOk && !f.sql.empty() && f.fix.find(f.sql) == std::string::npos;
        if (f.level == FindingLevel::Warn) {
            std::fprintf(quietOk ? stderr : stdout, "%s%s\n", quietOk ? "driftless-cli: warning: " : "  warn   ",
                         line.c_str());
            if (sqlToo)
                std::printf("         run: %s\n", f.sql.c_str());
            continue;
        }
        if (quietOk)
            printError(line);
        else
            std::printf("  ERROR  %s\n", line.c_str());
        if (sqlToo)
            std::printf("         run: %s\n", f.sql.c_str());
        // A configuration problem outranks an unreachable server: fixing the file comes first.
        code = f.category == "config" ? kUsage : (code == kUsage ? kUsage : kSyncFailed);
    }
    return code;
}

int cmdApply(Args &a)
{
    bool noCheck = a.flag("--no-check");
    if (a.rest.size() != 1)
        throw UsageError("apply needs exactly one FILE");
    std::string file = a.rest[0];
    a.rest.clear();
    // Validate everything before the state file is even opened: a refused file leaves it as it was.
    Workspace ws = WorkspaceFile::load(file);
    if (!noCheck) {
        driftless::cli::useKeychainPasswords(ws);
        // A row filter only the source can judge; refused like any other mistake in the file.
        for (const auto &r : checkRowFilters(ws)) {
            const auto &p = ws.pipelines[r.pipeline];
            throw ConfigError("the source refuses this row filter: " + r.message +
                                  "; write a condition on the "
                                  "table's columns in the source's SQL, e.g. \"tenant_id = 42\"",
                              file, tableKeyLine(file, r.pipeline, r.table, "where"),
                              "pipelines[" + p.name + "].tables[" + p.tables[r.table].table.display() + "].where");
        }
        for (const auto &r : checkNewerWinsColumns(ws)) {
            const auto &p = ws.pipelines[r.pipeline];
            throw ConfigError(r.message, file, tableKeyLine(file, r.pipeline, r.table, "conflicts"),
                              "pipelines[" + p.name + "].tables[" + p.tables[r.table].table.display() + "].conflicts");
        }
        int code = reportFindings(runDoctor(ws), true);
        if (code != kOk) {
            printError("nothing applied; fix the problems above (or apply with --no-check to store the workspace "
                       "without checking the servers)");
            return code;
        }
    }
    auto state = WorkspaceState::create(a.state);
    auto summary = state.apply(ws);
    if (!summary.changed) {
        std::printf("workspace unchanged (%s)\n", state.path().c_str());
        return kOk;
    }
    for (const auto &l : summary.lines)
        std::printf("%s\n", l.c_str());
    std::printf("applied %s to %s\n", file.c_str(), state.path().c_str());
    return kOk;
}

std::stop_source g_stop;

/// Waits for SIGINT/SIGTERM on its own thread while it lives: the first stops the engine between
/// batches, a second one exits at once.
class SignalWatch {
public:
    SignalWatch()
    {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGUSR1); // our own wake-up call at exit
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
        m_thread = std::jthread([set](std::stop_token st) {
            int count = 0;
            while (!st.stop_requested()) {
                timespec ts{0, 200'000'000};
                int sig = sigtimedwait(&set, nullptr, &ts);
                if (sig <= 0)
                    continue;
                if (sig == SIGUSR1)
                    break;
                if (++count == 1) {
                    std::fprintf(stderr, "\ndriftless-cli: stopping after the batches in flight (again to quit now)\n");
                    g_stop.request_stop();
                } else {
                    std::_Exit(130);
                }
            }
        });
    }
    ~SignalWatch()
    {
        m_thread.request_stop();
        pthread_kill(m_thread.native_handle(), SIGUSR1); // do not wait out its timeout
    }
    SignalWatch(const SignalWatch &) = delete;
    SignalWatch &operator=(const SignalWatch &) = delete;

private:
    std::jthread m_thread;
};

/// What `run` shows while the engine runs: the live view, made anew for each (re)start.
class RunFace final : public EngineRunListener {
public:
    EngineObserver *started(const Start &s) override
    {
        m_view = std::make_unique<driftless::cli::LiveView>(s.workspace, s.mirror, isatty(STDOUT_FILENO) != 0);
        return m_view.get();
    }
    void finished(int, bool) override { m_view.reset(); }

private:
    std::unique_ptr<driftless::cli::LiveView> m_view;
};

/// An engine check interval option (at least 200ms); nullopt when not given.
std::optional<Millis> intervalOption(Args &a, const std::string &name)
{
    const std::string text = a.option(name);
    if (text.empty())
        return std::nullopt;
    auto d = parseDuration(text);
    if (!d || *d < Millis(200))
        throw UsageError(name + " takes a duration of at least 200ms, e.g. 5s");
    return d;
}

int cmdRun(Args &a)
{
    EngineRunOptions o;
    o.pipeline = a.option("--pipeline");
    o.once = a.flag("--once");
    if (auto d = intervalOption(a, "--guard-every"))
        o.checkEvery = *d;
    a.noMore();
    auto state = WorkspaceState::create(a.state);
    EngineRun::loadRunnable(state, o.pipeline);
    SignalWatch signals;
    EngineRun engine(state, o);
    RunFace face;
    const int errors = engine.run(g_stop.get_token(), &face);
    return errors > 0 ? kSyncFailed : kOk;
}

int cmdPromote(Args &a)
{
    const bool noRun = a.flag("--no-run");
    if (a.rest.empty())
        throw UsageError("promote needs a pipeline name");
    const std::string pipeline = a.rest.front();
    std::vector<std::string> tables(a.rest.begin() + 1, a.rest.end());
    WorkspaceState state(a.state);
    for (const auto &line : state.promoteToCdc(pipeline, tables))
        std::printf("%s\n", line.c_str());
    if (noRun)
        return kOk;
    // Load and catch up now, so the command ends with the tables streaming: one pass of the
    // pipeline's CDC tables, by the engine `run` runs.
    EngineRunOptions o;
    o.pipeline = pipeline;
    o.once = true;
    o.onlyStrategy = Strategy::Cdc;
    SignalWatch signals;
    EngineRun engine(state, o);
    RunFace face;
    const int errors = engine.run(g_stop.get_token(), &face);
    if (errors > 0) {
        printError("promoted, but the first CDC pass failed (see driftless-cli status); the next run retries it");
        return kSyncFailed;
    }
    std::printf("streaming: a running sync (run, serve, the app) picks the change up within seconds\n");
    return kOk;
}

std::string pad(const std::string &s, size_t w)
{
    return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

std::string formatLag(const std::optional<double> &lag)
{
    if (!lag)
        return "-";
    auto s = static_cast<long long>(*lag);
    if (s < 120)
        return std::to_string(s) + "s";
    if (s < 7200)
        return std::to_string(s / 60) + "m";
    return std::to_string(s / 3600) + "h";
}

int cmdStatus(Args &a)
{
    bool asJson = a.flag("--json");
    a.noMore();
    if (!std::filesystem::exists(a.state)) {
        if (asJson) {
            std::printf("%s\n", statusJson({}, wallClockMs()).c_str());
            return kOk;
        }
        std::printf("no workspace at %s; run 'driftless-cli apply FILE' first\n", a.state.c_str());
        return kOk;
    }
    WorkspaceState state(a.state);
    auto now = wallClockMs();
    auto reports = state.snapshot(now, 0).tables;
    if (asJson) {
        std::printf("%s\n", statusJson(reports, now).c_str());
        return kOk;
    }
    size_t wp = 8, wt = 5;
    for (auto &r : reports) {
        wp = std::max(wp, r.pipeline.size());
        wt = std::max(wt, r.table.size());
    }
    std::printf("%s%s%s%s%s%s%s%s\n", pad("PIPELINE", wp + 1).c_str(), pad("TABLE", wt + 1).c_str(),
                pad("STRATEGY", 13).c_str(), pad("STATE", 12).c_str(), pad("FRESHNESS", 10).c_str(),
                pad("LAG", 7).c_str(), pad("ROWS", 11).c_str(), "LAST SYNC");
    for (auto &r : reports) {
        std::string state(toString(r.state));
        if (r.state == TableState::Backfilling && r.backfill && r.backfill->percent)
            state += " " + std::to_string(static_cast<int>(*r.backfill->percent)) + "%";
        std::printf("%s%s%s%s%s%s%s%s\n", pad(r.pipeline, wp + 1).c_str(), pad(r.table, wt + 1).c_str(),
                    pad(std::string(toString(r.strategy)), 13).c_str(), pad(state, 12).c_str(),
                    pad(std::string(toString(r.freshness)), 10).c_str(), pad(formatLag(r.lagSeconds), 7).c_str(),
                    pad(std::to_string(r.rowsApplied), 11).c_str(),
                    r.lastSyncAtMs ? formatIso8601(*r.lastSyncAtMs).c_str() : "never");
        if (!r.message.empty() && (isFailing(r.state) || r.state == TableState::Paused))
            std::printf("    %s%s\n", r.message.c_str(),
                        r.pausedAtMs ? (" (since " + formatIso8601(*r.pausedAtMs) + ")").c_str() : "");
        if (r.state == TableState::Backfilling && r.backfill)
            std::printf("    %s: %s\n", r.message.empty() ? "backfill" : r.message.c_str(),
                        describeBackfill(*r.backfill).c_str());
    }
    return kOk;
}

/// The exit code of a doctor run: 2 when the workspace must change, 1 when a server could not
/// be reached, 0 otherwise (as the text report decides it).
int doctorCode(const std::vector<Finding> &findings)
{
    int code = kOk;
    for (const auto &f : findings)
        if (f.level == FindingLevel::Error)
            code = f.category == "config" ? kUsage : (code == kUsage ? kUsage : kSyncFailed);
    return code;
}

int cmdDoctor(Args &a)
{
    DoctorScope scope{a.option("--pipeline"), a.option("--endpoint")};
    const bool asJson = a.flag("--json");
    a.noMore();
    WorkspaceState state(a.state);
    Workspace ws = state.workspace();
    if (ws.pipelines.empty() && ws.endpoints.empty())
        throw ConfigError("the workspace has no endpoints or pipelines; run 'driftless-cli apply FILE' first",
                          state.path());
    const auto findings = runDoctor(ws, scope);
    if (asJson) {
        std::printf("%s\n", doctorJsonValue(findings).dump(2).c_str());
        return doctorCode(findings);
    }
    std::printf("driftless doctor: %s\n", state.path().c_str());
    int code = reportFindings(findings, false);
    std::printf(code == kOk ? "all checks passed\n" : "some checks failed\n");
    return code;
}

int cmdPause(Args &a, bool pause)
{
    if (a.rest.empty())
        throw UsageError(a.command + " needs a PIPELINE (and the tables, or none for all of them)");
    const std::string pipeline = a.rest.front();
    std::vector<std::string> tables(a.rest.begin() + 1, a.rest.end());
    a.rest.clear();
    WorkspaceState state(a.state);
    const auto changes = state.setPaused(state.workspace(), pipeline, tables, pause);
    bool any = false;
    for (const auto &c : changes) {
        std::printf("%s\n", c.message.c_str());
        any = any || c.changed;
    }
    if (any)
        std::printf("a running sync (run, serve, the app) takes it within a second; otherwise the next one starts "
                    "with it\n");
    return kOk;
}

int cmdDecommission(Args &a)
{
    const bool yes = a.flag("--yes");
    const bool keepSlot = a.flag("--keep-slot");
    if (a.rest.size() != 1)
        throw UsageError("decommission needs exactly one PIPELINE");
    const std::string pipeline = a.rest.front();
    a.rest.clear();
    a.noMore();
    WorkspaceState state(a.state);
    const DecommissionPlan plan = planDecommission(state.workspace(), pipeline);
    std::printf("decommission pipeline %s (source %s):\n", plan.pipeline.c_str(), plan.source.c_str());
    if (!plan.sourceError.empty())
        std::printf("  the source could not be reached: %s\n", plan.sourceError.c_str());
    if (!plan.statements.empty()) {
        std::printf(keepSlot ? "  left on %s (--keep-slot); to drop them yourself:\n" : "  run on %s:\n",
                    plan.source.c_str());
        for (const auto &sql : plan.statements)
            std::printf("    %s\n", sql.c_str());
    }
    if (plan.slotActivePid && !keepSlot)
        std::printf("  the slot is being read right now (walsender pid %d): a sync of this workspace lets go of it "
                    "once the pipeline is removed (waited for up to 30 s)\n",
                    *plan.slotActivePid);
    for (const auto &note : plan.notes)
        std::printf("  %s\n", note.c_str());
    std::printf("  remove it from the workspace, with its checkpoints\n");
    if (!yes) {
        if (!::isatty(STDIN_FILENO)) {
            printError("nothing changed: add --yes to decommission " + pipeline);
            return kUsage;
        }
        std::printf("Decommission %s? [y/N] ", pipeline.c_str());
        std::fflush(stdout);
        std::string answer;
        std::getline(std::cin, answer);
        if (answer != "y" && answer != "Y" && answer != "yes") {
            std::printf("nothing changed\n");
            return kOk;
        }
    }
    for (const auto &line : decommission(state, pipeline, keepSlot))
        std::printf("%s\n", line.c_str());
    return kOk;
}

int cmdRecover(Args &a)
{
    if (a.rest.size() != 1)
        throw UsageError("recover needs a PIPELINE");
    const std::string pipeline = a.rest.front();
    a.rest.clear();
    for (const auto &line : requestRecovery(WorkspaceState(a.state).workspace(), pipeline))
        std::printf("%s\n", line.c_str());
    return kOk;
}

int cmdResnapshot(Args &a)
{
    if (a.rest.empty())
        throw UsageError("resnapshot needs a PIPELINE");
    std::string pipeline = a.rest.front();
    std::vector<std::string> tables(a.rest.begin() + 1, a.rest.end());
    a.rest.clear();
    for (const auto &line : resnapshot(WorkspaceState(a.state).workspace(), pipeline, tables))
        std::printf("%s\n", line.c_str());
    std::printf("run 'driftless-cli run' to load and stream again\n");
    return kOk;
}

/// Follows one table of a sync that `backfill` runs itself: stops the engine once the table went
/// through a backfill and is streaming again, or went red. Lives across the engine's restarts
/// (a changed workspace); each start hands it the live view to pass everything on to.
class BackfillWatcher : public EngineObserver {
public:
    BackfillWatcher(TableKey key, std::stop_source stop) : m_key(std::move(key)), m_stop(std::move(stop)) {}
    void setNext(EngineObserver *next) { m_next = next; }
    void tableState(const TableKey &key, TableState state, const std::string &message,
                    std::optional<Progress> progress) override
    {
        if (m_next)
            m_next->tableState(key, state, message, progress);
        if (key.pipeline != m_key.pipeline || key.table != m_key.table)
            return;
        if (state == TableState::Backfilling) {
            m_seen = true;
        } else if ((state == TableState::Streaming && m_seen) || isStopped(state) || state == TableState::Paused) {
            m_outcome = state;
            m_message = message;
            m_stop.request_stop();
        }
    }
    void batchApplied(const TableKey &key, const ApplyResult &result, const Checkpoint &checkpoint,
                      std::optional<std::int64_t> freshAsOfMs) override
    {
        if (m_next)
            m_next->batchApplied(key, result, checkpoint, freshAsOfMs);
    }
    void event(Level level, const TableKey &key, const std::string &kind, const std::string &message) override
    {
        if (m_next)
            m_next->event(level, key, kind, message);
    }
    void runStarted(const TableKey &key) override
    {
        if (m_next)
            m_next->runStarted(key);
    }
    void runFinished(const TableKey &key, const std::string &status, long long rows, const std::string &error) override
    {
        if (m_next)
            m_next->runFinished(key, status, rows, error);
    }
    void tick() override
    {
        if (m_next)
            m_next->tick();
    }

    std::optional<TableState> outcome() const { return m_outcome; }
    std::string message() const { return m_message; }

private:
    TableKey m_key;
    EngineObserver *m_next = nullptr;
    std::stop_source m_stop;
    std::atomic<bool> m_seen{false};
    std::optional<TableState> m_outcome; ///< written once, before the stop is requested; read after run() returned
    std::string m_message;
};

/// What `backfill` shows while its engine runs: the live view, with the watcher in front of it.
class BackfillFace final : public EngineRunListener {
public:
    explicit BackfillFace(BackfillWatcher &watcher) : m_watcher(watcher) {}
    EngineObserver *started(const Start &s) override
    {
        m_view = std::make_unique<driftless::cli::LiveView>(s.workspace, s.mirror, isatty(STDOUT_FILENO) != 0);
        m_watcher.setNext(m_view.get());
        return &m_watcher;
    }
    void finished(int, bool) override
    {
        m_watcher.setNext(nullptr);
        m_view.reset();
    }

private:
    BackfillWatcher &m_watcher;
    std::unique_ptr<driftless::cli::LiveView> m_view;
};

int cmdBackfill(Args &a)
{
    const bool cancel = a.flag("--cancel");
    if (cancel) {
        if (a.rest.size() != 2)
            throw UsageError("backfill --cancel needs a PIPELINE and a TABLE");
        std::string pipeline = a.rest[0], table = a.rest[1];
        a.rest.clear();
        auto req = cancelRebackfill(WorkspaceState(a.state).workspace(), pipeline, table);
        std::printf("%s\n", req.message.c_str());
        if (req.what == RebackfillRequest::What::Requested && req.runningPid)
            std::printf("the running sync (walsender pid %d) stops it within a second\n", *req.runningPid);
        else if (req.what == RebackfillRequest::What::Requested && !req.message.ends_with("request withdrawn"))
            std::printf("no sync is running: the next one cancels it before anything else\n");
        return kOk;
    }
    if (a.rest.size() != 2)
        throw UsageError(a.command + " needs a PIPELINE and a TABLE");
    std::string pipeline = a.rest[0], table = a.rest[1];
    a.rest.clear();
    WorkspaceState state(a.state);
    Workspace ws = state.workspace();
    auto req = requestRebackfill(ws, pipeline, table);
    std::printf("%s\n", req.message.c_str());
    if (req.runningPid) {
        std::printf("the running sync (walsender pid %d) %s within seconds; follow it with 'driftless-cli status'\n",
                    *req.runningPid, req.what == RebackfillRequest::What::Requested ? "starts it" : "goes on with it");
        return kOk;
    }
    // Nothing streams this pipeline: run its CDC tables until this one is backfilled and
    // streaming again, then stop.
    std::printf("no sync is running for pipeline %s: running it until %s is backfilled (Ctrl+C stops; the "
                "backfill resumes where it stopped)\n",
                pipeline.c_str(), req.key.table.display().c_str());
    BackfillWatcher watcher(req.key, g_stop);
    {
        SignalWatch signals;
        EngineRunOptions o;
        o.pipeline = pipeline;
        o.onlyStrategy = Strategy::Cdc;
        EngineRun engine(state, o);
        BackfillFace face(watcher);
        engine.run(g_stop.get_token(), &face);
    }
    if (watcher.outcome() == TableState::Streaming) {
        std::printf("%s is backfilled and streaming\n", req.key.table.display().c_str());
        return kOk;
    }
    if (!watcher.outcome()) {
        std::printf("stopped before the backfill finished; it resumes with the next 'driftless-cli run' or "
                    "'driftless-cli backfill %s %s'\n",
                    pipeline.c_str(), table.c_str());
        return kSyncFailed;
    }
    printError(req.key.display() + " is " + std::string(toString(*watcher.outcome())) + ": " + watcher.message());
    return kSyncFailed;
}

/// "binlog: needs mysql-bin.000012, oldest mysql-bin.000010, 3.2 MB behind, expires in 2 h 10 min".
std::string binlogLine(const BinlogRetention &b)
{
    if (!b.error.empty() && !b.bytesBehind && !b.neededPurged)
        return "binlog: cannot be read: " + b.error;
    if (b.neededFile.empty())
        return "binlog: no position stored yet (oldest " + b.oldestFile + ")";
    std::string line = "binlog: needs " + b.neededFile + ", oldest " + b.oldestFile;
    if (b.neededPurged)
        return line + ", PURGED: the pipeline needs a re-snapshot (driftless-cli resnapshot " + b.pipeline + ")";
    if (b.bytesBehind)
        line += ", " + humanBytes(*b.bytesBehind) + " behind";
    if (!b.retentionSeconds || *b.retentionSeconds == 0)
        line += ", never expires (no binlog_expire_logs_seconds)";
    else if (!b.secondsToExpiry)
        line += ", expiry not known" + (b.error.empty() ? std::string() : " (" + b.error + ")");
    else if (*b.secondsToExpiry <= 0)
        line += ", expired: purged at the server's next binlog rotation";
    else
        line += std::string(", expires in ") + (b.expiresAtMs ? "" : "at least ") + humanTimeLeft(*b.secondsToExpiry);
    return line;
}

int cmdSlots(Args &a)
{
    bool asJson = a.flag("--json");
    a.noMore();
    // No history of its own: the samples a running engine stored, plus this reading.
    WorkspaceState state(a.state);
    auto sources = state.slotsNow();
    // The alerts a reading can tell (no history: not the inactivity of a slot).
    const std::int64_t now = wallClockMs();
    const auto alerts = computeAlerts(state.workspace(), {}, sources, {}, now);
    if (asJson) {
        auto j = slotsJsonValue(sources);
        j["alerts"] = alertsJsonValue(alerts);
        std::printf("%s\n", j.dump(2).c_str());
        return kOk;
    }
    if (sources.empty()) {
        std::printf("no Postgres sources or MariaDB/MySQL CDC pipelines in the workspace\n");
        return kOk;
    }
    int code = kOk;
    for (const auto &ss : sources) {
        if (ss.binlog) {
            for (const auto &b : ss.binlogs)
                std::printf("%s  pipeline %s\n  %s\n", b.source.c_str(), b.pipeline.c_str(), binlogLine(b).c_str());
            continue;
        }
        if (!ss.error.empty()) {
            printError(ss.source + ": " + ss.error);
            code = kSyncFailed;
            continue;
        }
        std::printf("%s (WAL at %s, max_slot_wal_keep_size %s)\n", ss.source.c_str(), ss.currentLsn.c_str(),
                    ss.maxSlotWalKeepSize ? humanBytes(*ss.maxSlotWalKeepSize).c_str() : "unlimited");
        if (ss.replicationSlots.empty())
            std::printf("  no replication slots\n");
        for (const auto &s : ss.replicationSlots) {
            std::string owner = !s.owner.empty() ? "pipeline " + s.owner
                                : s.orphaned     ? "ORPHANED (no pipeline here reads it)"
                                                 : "not Driftless's";
            std::printf("  %s  %s  %s  wal_status %s  retained %s  safe_wal_size %s  confirmed %s  %s\n",
                        s.slot.c_str(), s.active ? "active" : "inactive", s.plugin.c_str(),
                        s.walStatus == WalStatus::Unknown ? "-" : toString(s.walStatus),
                        s.retainedBytes ? humanBytes(*s.retainedBytes).c_str() : "-",
                        s.safeWalSize ? humanBytes(*s.safeWalSize).c_str() : "unlimited",
                        s.confirmedFlushLsn.empty() ? "-" : s.confirmedFlushLsn.c_str(), owner.c_str());
            if (s.secondsToLimit) {
                const std::string left = *s.secondsToLimit > 0
                                             ? "at this rate: limit in " + humanTimeLeft(*s.secondsToLimit)
                                             : "at its limit now";
                std::printf("    %s\n", left.c_str());
            }
        }
    }
    for (const auto &al : alerts)
        std::printf("%s: %s. %s\n", al.level == Level::Error ? "ERROR" : "warning", al.message.c_str(),
                    al.action.c_str());
    return code;
}

int cmdAgentToken(Args &a)
{
    const bool rotate = a.flag("--rotate");
    const bool fingerprint = a.flag("--fingerprint");
    a.noMore();
    if (rotate && fingerprint)
        throw UsageError("agent-token takes --rotate or --fingerprint, not both");
    WorkspaceState state(a.state); // refuses a workspace that is not there
    const AgentFiles files = AgentFiles::beside(state.path());
    if (fingerprint) {
        std::printf("%s\n", ensureAgentCertificate(files).fingerprint.c_str());
        return kOk;
    }
    std::printf("%s\n", (rotate ? rotateAgentToken(files.token) : ensureAgentToken(files.token)).c_str());
    if (rotate)
        std::fprintf(stderr, "a new token is in %s; the old one is refused from now on\n", files.token.c_str());
    return kOk;
}

int cmdServe(Args &a)
{
    driftless::cli::ServeOptions o;
    o.tls = a.flag("--tls");
    o.certificate = a.option("--cert");
    o.key = a.option("--key");
    if (o.certificate.empty() != o.key.empty())
        throw UsageError("--cert and --key go together (or --tls alone for a self-signed certificate)");
    if (auto l = a.option("--listen"); !l.empty())
        o.listen = l;
    o.allowRemote = a.flag("--allow-remote");
    o.pipeline = a.option("--pipeline");
    if (auto d = intervalOption(a, "--monitor-every"))
        o.monitorEvery = *d;
    if (auto d = intervalOption(a, "--sample-every"))
        o.slotSampleEvery = *d;
    a.noMore();
    try {
        driftless::cli::parseListen(o.listen, o.allowRemote);
    } catch (const std::invalid_argument &e) {
        throw UsageError(std::string("--listen ") + e.what());
    }
    auto state = WorkspaceState::create(a.state);
    SignalWatch signals;
    int errors = driftless::cli::serve(state, o, g_stop);
    return errors > 0 ? kSyncFailed : kOk;
}

std::string keyText(const CanonicalKey &k)
{
    if (k.size() == 1)
        return k[0];
    std::string s = "(";
    for (size_t i = 0; i < k.size(); ++i)
        s += (i ? ", " : "") + k[i];
    return s + ")";
}

void printKeys(const char *label, const std::vector<CanonicalKey> &keys, long long total)
{
    if (keys.empty())
        return;
    std::string line;
    for (size_t i = 0; i < keys.size() && i < 10; ++i)
        line += (i ? ", " : "") + keyText(keys[i]);
    if (total > static_cast<long long>(std::min<size_t>(keys.size(), 10)))
        line += ", ... (" + std::to_string(total) + " in all)";
    std::printf("      %s: %s\n", label, line.c_str());
}

void printReportTables(const ReconcileReport &report)
{
    for (const auto &t : report.tables) {
        // A two-way pipeline's table is compared once per direction: say which.
        const std::string name = t.direction.empty() ? t.table : t.table + " (" + t.direction + ")";
        if (!t.error.empty()) {
            std::printf("  %s: FAILED: %s\n", name.c_str(), t.error.c_str());
            continue;
        }
        const std::string inFlight = t.inFlight ? ", " + std::to_string(t.inFlight) + " in flight" : "";
        if (t.drift() == 0) {
            std::printf("  %s: no drift in %lld rows%s [%lld ms]\n", name.c_str(), t.sourceRows, inFlight.c_str(),
                        t.elapsedMs);
        } else {
            std::printf("  %s: DRIFT %lld missing, %lld extra, %lld different of %lld rows (%.4g%%)%s [%lld ms]\n",
                        name.c_str(), t.missing, t.extra, t.different, t.sourceRows, t.driftRatio * 100.0,
                        inFlight.c_str(), t.elapsedMs);
            printKeys("missing in target", t.missingKeys, t.missing);
            printKeys("extra in target", t.extraKeys, t.extra);
            for (size_t i = 0; i < t.differentRows.size() && i < 10; ++i) {
                std::string cols;
                for (const auto &c : t.differentRows[i].columns)
                    cols += (cols.empty() ? "" : ", ") + c.column + ": " + (c.source ? *c.source : "NULL") + " -> " +
                            (c.target ? *c.target : "NULL");
                std::printf("      different %s: %s\n", keyText(t.differentRows[i].key).c_str(), cols.c_str());
            }
            if (t.different > 10)
                std::printf("      ... (%lld different in all)\n", t.different);
        }
        if (!t.note.empty())
            std::printf("      note: %s\n", t.note.c_str());
    }
}

/// `--max-keys N`, or `otherwise`.
int maxKeysOption(Args &a, int otherwise)
{
    const std::string m = a.option("--max-keys");
    if (m.empty())
        return otherwise;
    int n = -1;
    try {
        n = std::stoi(m);
    } catch (...) {
        n = -1;
    }
    if (n < 0)
        throw UsageError("--max-keys takes a count, e.g. 100");
    return n;
}

int cmdReconcile(Args &a)
{
    const bool asJson = a.flag("--json");
    ReconcileOptions opt;
    opt.maxKeys = maxKeysOption(a, opt.maxKeys);
    if (auto s = a.option("--settle"); !s.empty()) {
        auto d = parseDuration(s);
        if (!d)
            throw UsageError("--settle takes a duration, e.g. 30s");
        opt.settle = *d;
    }
    if (a.rest.empty())
        throw UsageError("reconcile needs a pipeline name");
    const std::string pipeline = a.rest.front();
    std::vector<std::string> tables(a.rest.begin() + 1, a.rest.end());
    WorkspaceState state(a.state);
    Workspace ws = state.workspace();
    SignalWatch signals;
    opt.stop = g_stop.get_token();
    if (!asJson)
        opt.onPhase = [](const std::string &table, std::string_view phase) {
            if (phase == "settle")
                std::fprintf(stderr,
                             "%s: waiting for the sync to apply what the source has, to tell drift from "
                             "changes in flight\n",
                             table.c_str());
        };
    auto report = reconcile(ws, pipeline, tables, opt);
    state.storeReport(report);
    bool failed = false;
    for (const auto &t : report.tables)
        failed = failed || !t.error.empty();
    if (asJson) {
        std::printf("%s\n", reportJsonValue(report).dump(2).c_str());
    } else {
        std::printf("report %lld: pipeline %s, %zu table%s\n", static_cast<long long>(report.id), pipeline.c_str(),
                    report.tables.size(), report.tables.size() == 1 ? "" : "s");
        printReportTables(report);
        if (report.drift() > 0)
            std::printf("resolve with: driftless-cli repair %lld\n", static_cast<long long>(report.id));
    }
    if (failed)
        return kSyncFailed;
    return report.drift() > 0 ? kDrift : kOk;
}

int cmdCompare(Args &a)
{
    const bool asJson = a.flag("--json");
    ReconcileOptions opt;
    opt.maxKeys = maxKeysOption(a, opt.maxKeys);
    // `--key a,b` and `--columns a,b`: column names, split at commas as the app's Compare
    // dialog splits them.
    const auto names = [&a](const char *flag) {
        try {
            return splitColumnList(a.option(flag));
        } catch (const std::invalid_argument &) {
            throw UsageError(std::string(flag) + " takes column names separated by commas, e.g. " + flag +
                             " id,region");
        }
    };
    opt.compareKey = names("--key");
    opt.compareColumns = names("--columns");
    if (std::string where = a.option("--where"); !where.empty())
        opt.compareWhere = std::move(where);
    if (a.rest.size() != 2)
        throw UsageError("compare needs two tables: ENDPOINT:TABLE ENDPOINT:TABLE (e.g. prod:public.orders "
                         "copy:public.orders)");
    WorkspaceState state(a.state);
    Workspace ws = state.workspace();
    SignalWatch signals;
    opt.stop = g_stop.get_token();
    auto report = compareTables(ws, a.rest[0], a.rest[1], opt);
    state.storeReport(report);
    const auto &t = report.tables.front();
    if (asJson) {
        std::printf("%s\n", reportJsonValue(report).dump(2).c_str());
    } else {
        std::printf("report %lld: %s (as source) against %s (as target)\n", static_cast<long long>(report.id),
                    a.rest[0].c_str(), a.rest[1].c_str());
        printReportTables(report);
        if (!t.skipped.empty())
            std::printf("  not compared: %s\n", t.skipped.c_str());
    }
    if (!t.error.empty() || !t.skipped.empty())
        return kSyncFailed;
    return report.drift() > 0 ? kDrift : kOk;
}

long long reportIdArgument(Args &a, const char *command)
{
    if (a.rest.size() != 1)
        throw UsageError(std::string(command) + " needs one report id (driftless-cli reports lists them)");
    try {
        size_t used = 0;
        long long id = std::stoll(a.rest.front(), &used);
        if (used != a.rest.front().size() || id <= 0)
            throw std::invalid_argument("");
        return id;
    } catch (...) {
        throw UsageError("'" + a.rest.front() + "' is not a report id (driftless-cli reports lists them)");
    }
}

ReconcileReport storedReport(WorkspaceState &state, long long id)
{
    auto report = state.loadReport(id);
    if (!report)
        throw ConfigError("no reconciliation report " + std::to_string(id) +
                          " in this workspace (driftless-cli reports lists them; driftless-cli reconcile PIPELINE "
                          "makes one)");
    return *report;
}

int cmdReports(Args &a)
{
    const bool asJson = a.flag("--json");
    const std::string pipeline = a.option("--pipeline");
    a.noMore();
    WorkspaceState state(a.state);
    if (!pipeline.empty() && !state.workspace().pipeline(pipeline))
        throw ConfigError("no pipeline named '" + pipeline + "' (driftless-cli status lists them)");
    const auto reports = state.listReports(1000, pipeline);
    if (asJson) {
        std::printf("%s\n", reportListingJsonValue(reports).dump(2).c_str());
        return kOk;
    }
    if (reports.empty()) {
        std::printf("no reconciliation reports%s (driftless-cli reconcile PIPELINE makes one)\n",
                    pipeline.empty() ? "" : (" of pipeline " + pipeline).c_str());
        return kOk;
    }
    std::printf("%-6s  %-20s  %-16s  %6s  %9s  %9s  %9s  %s\n", "ID", "WHEN", "PIPELINE", "TABLES", "MISSING", "EXTRA",
                "DIFFERENT", "REPAIRED");
    for (const auto &r : reports)
        std::printf("%-6lld  %-20s  %-16s  %6d  %9lld  %9lld  %9lld  %s%s\n", static_cast<long long>(r.id),
                    formatIso8601(r.finishedMs).c_str(), r.pipeline.c_str(), r.tables, r.missing, r.extra, r.different,
                    r.repaired ? "yes" : "no",
                    r.failedTables ? ("  (" + std::to_string(r.failedTables) + " failed)").c_str() : "");
    return kOk;
}

int cmdReport(Args &a)
{
    const bool asJson = a.flag("--json");
    const bool asCsv = a.flag("--csv");
    const bool asHtml = a.flag("--html");
    if (int(asJson) + int(asCsv) + int(asHtml) > 1)
        throw UsageError("report takes one of --json, --csv and --html");
    const long long id = reportIdArgument(a, "report");
    WorkspaceState state(a.state);
    const auto report = storedReport(state, id);
    if (asJson) {
        std::printf("%s\n", reportJsonValue(report).dump(2).c_str());
    } else if (asCsv) {
        std::fputs(reportCsv(report).c_str(), stdout);
    } else if (asHtml) {
        std::fputs(reportHtml(report).c_str(), stdout);
    } else {
        std::printf("report %lld: pipeline %s, finished %s, %zu table%s\n", id, report.pipeline.c_str(),
                    formatIso8601(report.finishedAtMs).c_str(), report.tables.size(),
                    report.tables.size() == 1 ? "" : "s");
        printReportTables(report);
    }
    return kOk;
}

int cmdConflicts(Args &a)
{
    const bool asJson = a.flag("--json");
    const std::string pipeline = a.option("--pipeline");
    a.noMore();
    WorkspaceState state(a.state);
    const auto open = openConflicts(state, pipeline);
    if (asJson) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto &c : open)
            arr.push_back(conflictJson(c));
        std::printf("%s\n", nlohmann::json{{"conflicts", arr}}.dump(2).c_str());
        return kOk;
    }
    if (open.empty()) {
        std::printf("no open conflicts%s\n", pipeline.empty() ? "" : (" in pipeline " + pipeline).c_str());
        return kOk;
    }
    for (const auto &c : open)
        std::printf(
            "%lld  %s  %s  key %s  columns %s  detected %s  (driftless-cli resolve %lld --take source|target|merged)\n",
            static_cast<long long>(c.id), c.record.pipeline.c_str(), c.record.table.c_str(), c.record.key.c_str(),
            c.record.columns.c_str(), formatIso8601(c.detectedAtMs).c_str(), static_cast<long long>(c.id));
    return kOk;
}

int cmdResolve(Args &a)
{
    const std::string take = a.option("--take");
    // --column COL=SIDE, as often as there are columns to choose.
    std::map<std::string, ConflictSide> columns;
    for (std::string c = a.option("--column"); !c.empty(); c = a.option("--column")) {
        const auto eq = c.find('=');
        const auto side = eq == std::string::npos ? std::nullopt : conflictSideFrom(c.substr(eq + 1));
        if (eq == 0 || !side)
            throw UsageError("--column takes COLUMN=source or COLUMN=target, e.g. --column email=target (not '" + c +
                             "')");
        if (!columns.emplace(c.substr(0, eq), *side).second)
            throw UsageError("--column " + c.substr(0, eq) + " is given twice; choose one side for it");
    }
    if (a.rest.size() != 1)
        throw UsageError("resolve needs one conflict id (driftless-cli conflicts lists them)");
    long long id = 0;
    try {
        size_t used = 0;
        id = std::stoll(a.rest.front(), &used);
        if (used != a.rest.front().size() || id <= 0)
            throw std::invalid_argument("");
    } catch (...) {
        throw UsageError("'" + a.rest.front() + "' is not a conflict id (driftless-cli conflicts lists them)");
    }
    a.rest.clear();
    // Without --take, the --column choices complete the merged row.
    const auto chosen = take.empty() && !columns.empty() ? std::optional(ConflictTake::Merged) : conflictTakeFrom(take);
    if (!chosen)
        throw UsageError("resolve needs --take source, --take target or --take merged (what both sides keep), or "
                         "--column COLUMN=source|target for the columns the sides differ in");
    a.noMore();
    WorkspaceState state(a.state);
    const auto resolution = resolveConflict(state, id, ConflictChoice{*chosen, columns});
    std::printf("%s\n", resolution.message.c_str());
    return kOk;
}

int cmdRepair(Args &a)
{
    const bool asJson = a.flag("--json");
    const bool dryRun = a.flag("--dry-run");
    std::optional<std::string> table;
    if (auto t = a.option("--table"); !t.empty())
        table = t;
    const std::string sqlFile = a.option("--sql");
    const long long id = reportIdArgument(a, "repair");
    WorkspaceState state(a.state);
    const auto report = storedReport(state, id);
    Workspace ws = state.workspace();
    if (!sqlFile.empty()) {
        // The repair as plain statements a DBA reviews and runs; nothing is written here.
        const std::string script = repairScript(ws, report, table);
        std::ofstream out(sqlFile, std::ios::binary | std::ios::trunc);
        out << script;
        out.close();
        if (!out)
            throw UsageError("cannot write " + sqlFile + ": check the folder exists and is writable");
        std::printf("wrote the repair of report %lld to %s: review it, then run it (psql -v ON_ERROR_STOP=1 -f %s, "
                    "or sqlite3 DATABASE < %s)\n",
                    id, sqlFile.c_str(), sqlFile.c_str(), sqlFile.c_str());
        return kOk;
    }
    const auto plan = planRepair(ws, report, table);
    if (dryRun) {
        // The plan, and nothing written: the real repair runs exactly these statements.
        if (asJson)
            std::printf("%s\n", repairPlanJsonValue(plan).dump(2).c_str());
        else
            std::fputs(repairPlanText(plan).c_str(), stdout);
        bool failed = false;
        for (const auto &t : plan.tables)
            failed = failed || !t.error.empty();
        return failed ? kSyncFailed : kOk;
    }
    auto outcomes = executeRepair(ws, plan);
    state.recordRepair(report, outcomes);
    bool failed = false;
    for (const auto &o : outcomes)
        failed = failed || !o.error.empty();
    if (asJson) {
        std::printf("%s\n", repairJsonValue(outcomes).dump(2).c_str());
    } else {
        if (outcomes.empty())
            std::printf("report %lld has no drift to repair\n", id);
        for (const auto &o : outcomes) {
            if (!o.error.empty())
                std::printf("  %s: FAILED: %s\n", o.table.c_str(), o.error.c_str());
            else
                std::printf("  %s: %lld keys: %lld rows written, %lld deleted; %lld now equal%s%s\n", o.table.c_str(),
                            o.keys, o.written, o.deleted, o.verified,
                            o.stillDifferent ? (", " + std::to_string(o.stillDifferent) +
                                                " still differ (newer changes the sync has yet to apply)")
                                                   .c_str()
                                             : "",
                            o.skipped ? (", " + std::to_string(o.skipped) +
                                         " left to the sync (the source changed them since the plan)")
                                            .c_str()
                                      : "");
        }
    }
    return failed ? kSyncFailed : kOk;
}

int cmdExport(Args &a)
{
    a.noMore();
    std::fputs(WorkspaceFile::toYaml(WorkspaceState(a.state).workspace()).c_str(), stdout);
    return kOk;
}

int cmdExportDebezium(Args &a)
{
    DebeziumOptions options;
    options.bootstrapServers = a.option("--bootstrap-servers");
    if (a.rest.size() != 1)
        throw UsageError("export-debezium needs exactly one PIPELINE");
    const std::string pipeline = a.rest.front();
    a.rest.clear();
    auto out = exportDebezium(WorkspaceState(a.state).workspace(), pipeline, options);
    std::printf("%s\n", out.connector.dump(2).c_str());
    if (!out.notExpressed.empty()) {
        std::fprintf(stderr, "not expressed by the connector (%zu):\n", out.notExpressed.size());
        for (const auto &line : out.notExpressed)
            std::fprintf(stderr, "  - %s\n", line.c_str());
    }
    return kOk;
}

int cmdHelp(Args &a)
{
    if (a.flag("--man")) {
        a.noMore();
        std::fputs(driftless::cli::manPage(DRIFTLESS_VERSION).c_str(), stdout);
        return kOk;
    }
    if (a.rest.empty()) {
        std::fputs(driftless::cli::overviewText().c_str(), stdout);
        return kOk;
    }
    const auto *help = driftless::cli::findCommandHelp(a.rest.front());
    if (!help)
        throw UsageError("no command '" + a.rest.front() + "' to tell of");
    a.rest.erase(a.rest.begin());
    a.noMore();
    std::fputs(driftless::cli::commandHelpText(*help).c_str(), stdout);
    return kOk;
}

int cmdCompletion(Args &a)
{
    if (a.rest.size() != 1)
        throw UsageError("completion needs a shell: bash or zsh");
    const std::string script = driftless::cli::completionScript(a.rest.front());
    if (script.empty())
        throw UsageError("no completion for '" + a.rest.front() + "': bash or zsh");
    std::fputs(script.c_str(), stdout);
    return kOk;
}

/// What the completion scripts ask while a DBA types: names from the workspace, one a line.
/// Quiet: no workspace, or anything wrong, completes nothing.
int cmdComplete(Args &a)
{
    const std::string what = a.rest.empty() ? std::string() : a.rest.front();
    if (what == "commands") {
        for (const auto &c : driftless::cli::commandHelps())
            std::printf("%.*s\n", static_cast<int>(c.name.size()), c.name.data());
        return kOk;
    }
    try {
        if (!std::filesystem::exists(a.state))
            return kOk;
        const Workspace ws = WorkspaceState(a.state).workspace();
        if (what == "pipelines") {
            for (const auto &p : ws.pipelines)
                std::printf("%s\n", p.name.c_str());
        } else if (what == "tables" && a.rest.size() == 2) {
            if (const PipelineSpec *p = ws.pipeline(a.rest[1]))
                for (const auto &t : p->tables)
                    std::printf("%s\n", t.table.display().c_str());
        }
    } catch (const std::exception &) {
        // nothing to complete
    }
    return kOk;
}

int cmdTrustHost(Args &a)
{
    driftless::cli::TrustHostOptions o;
    o.yes = a.flag("--yes");
    o.replace = a.flag("--replace");
    o.jump = a.flag("--jump");
    const std::string file = a.option("--file");
    if (a.rest.size() != 1)
        throw UsageError("trust-host needs exactly one ENDPOINT");
    const std::string name = a.rest.front();
    a.rest.clear();
    // Before apply (whose checks connect through the tunnel), the endpoint comes from the file.
    const Workspace ws = file.empty() ? WorkspaceState(a.state).workspace() : WorkspaceFile::load(file);
    const Endpoint *e = ws.endpoint(name);
    if (!e)
        throw UsageError("no endpoint '" + name + "' in " + (file.empty() ? "the workspace" : file) +
                         (file.empty() ? "; for a workspace not applied yet, add --file FILE" : ""));
    if (!e->ssh)
        throw UsageError("endpoint '" + name + "' has no ssh: tunnel; there is no host key to trust");
    return driftless::cli::trustHost(*e, o);
}

/// The passwords the app saved in the keychain, for the commands that connect to the servers.
void useSavedPasswords(const Args &a)
{
    static const std::set<std::string> connecting = {
        "run",        "serve",      "doctor",  "slots",   "reconcile",    "repair",          "backfill", "compare",
        "rebackfill", "resnapshot", "recover", "promote", "decommission", "export-debezium", "resolve"};
    std::error_code ec;
    if (!connecting.count(a.command) || !std::filesystem::exists(a.state, ec))
        return;
    try {
        driftless::cli::useKeychainPasswords(WorkspaceState(a.state).workspace());
    } catch (const Error &) {
        // the command itself says what is wrong with the workspace
    }
}

} // namespace

int main(int argc, char **argv)
{
    try {
        Args a = parseArgs(argc, argv);
        if (a.command.empty()) {
            std::fputs(driftless::cli::overviewText().c_str(), stderr);
            return kUsage;
        }
        if (const auto *help = driftless::cli::findCommandHelp(a.command); help && (a.flag("--help") || a.flag("-h"))) {
            std::fputs(driftless::cli::commandHelpText(*help).c_str(), stdout);
            return kOk;
        }
        if (a.command == "help")
            return cmdHelp(a);
        if (a.command == "version") {
            a.noMore();
            std::printf("driftless-cli %s\n", DRIFTLESS_VERSION);
            return kOk;
        }
        if (a.command == "completion")
            return cmdCompletion(a);
        setSshKnownHostsFile(a.state + ".known_hosts");
        useSavedPasswords(a);
        if (a.command == "__complete")
            return cmdComplete(a);
        if (a.command == "apply")
            return cmdApply(a);
        if (a.command == "run")
            return cmdRun(a);
        if (a.command == "status")
            return cmdStatus(a);
        if (a.command == "doctor")
            return cmdDoctor(a);
        if (a.command == "export")
            return cmdExport(a);
        if (a.command == "export-debezium")
            return cmdExportDebezium(a);
        if (a.command == "recover")
            return cmdRecover(a);
        if (a.command == "resnapshot")
            return cmdResnapshot(a);
        if (a.command == "decommission")
            return cmdDecommission(a);
        if (a.command == "slots")
            return cmdSlots(a);
        if (a.command == "serve")
            return cmdServe(a);
        if (a.command == "agent-token")
            return cmdAgentToken(a);
        if (a.command == "reconcile")
            return cmdReconcile(a);
        if (a.command == "compare")
            return cmdCompare(a);
        if (a.command == "promote")
            return cmdPromote(a);
        if (a.command == "pause" || a.command == "resume")
            return cmdPause(a, a.command == "pause");
        if (a.command == "repair")
            return cmdRepair(a);
        if (a.command == "reports")
            return cmdReports(a);
        if (a.command == "conflicts")
            return cmdConflicts(a);
        if (a.command == "resolve")
            return cmdResolve(a);
        if (a.command == "report")
            return cmdReport(a);
        if (a.command == "trust-host")
            return cmdTrustHost(a);
        if (a.command == "backfill" || a.command == "rebackfill")
            return cmdBackfill(a);
        throw UsageError("unknown command '" + a.command + "'");
    } catch (const UsageError &e) {
        printError(std::string(e.what()) + " (see driftless-cli --help)");
        return kUsage;
    } catch (const ConfigError &e) {
        printError(e.describe());
        return kUsage;
    } catch (const SchemaError &e) {
        printError(e.describe());
        return kUsage;
    } catch (const Error &e) {
        printError(e.describe());
        return kSyncFailed;
    } catch (const std::exception &e) {
        printError(std::string("internal error: ") + e.what());
        return kSyncFailed;
    }
}
