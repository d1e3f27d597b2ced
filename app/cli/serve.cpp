// driftless-cli serve: the engine of `run`, plus a loopback HTTP endpoint with the sync status
// (JSON) and metrics (Prometheus text), and a monitor that reads the sources' slots and keeps
// the alerts.

#include "app/cli/serve.h"

#include "app/cli/liveview.h"

#include "core/engine/alerts.h"
#include "core/engine/reconciler.h"
#include "core/engine/log.h"
#include "core/engine/metrics.h"
#include "core/engine/pauses.h"
#include "core/engine/scheduler.h"
#include "core/engine/slotguard.h"
#include "core/engine/slots.h"
#include "core/engine/stateobserver.h"
#include "core/engine/statusreport.h"
#include "core/model/error.h"

#include <atomic>
#include <QCoreApplication>
#include <QHostAddress>
#include <QHttpServer>
#include <QHttpServerResponse>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unistd.h>

using namespace driftless::core;

namespace driftless::cli {

std::pair<std::string, int> parseListen(const std::string &text, bool allowRemote)
{
    std::string host, port;
    if (!text.empty() && text.front() == '[') {
        auto close = text.find(']');
        if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
            throw std::invalid_argument("'" + text + "': write [IPv6]:PORT, e.g. [::1]:8765");
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string::npos || colon == 0)
            throw std::invalid_argument("'" + text + "': write HOST:PORT, e.g. 127.0.0.1:8765");
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    if (host == "localhost")
        host = "127.0.0.1";
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port) > 65535)
        throw std::invalid_argument("'" + port + "' is not a port (0-65535; 0 picks a free one)");
    QHostAddress addr;
    if (!addr.setAddress(QString::fromStdString(host)))
        throw std::invalid_argument("'" + host + "' is not an IP address; listen on one, e.g. 127.0.0.1");
    if (!addr.isLoopback() && !allowRemote)
        throw std::invalid_argument(host + " is not a loopback address: the status endpoint has no authentication, so "
                                           "it serves only this machine unless --allow-remote is given as well");
    return {host, std::stoi(port)};
}

namespace {

/// The paused tables, for status; none when the file cannot be read just now.
std::vector<StateStore::PausedTable> pausedNow(StateStore &store)
{
    try {
        return store.pausedTables();
    } catch (const Error &e) {
        log(LogLevel::Warn, "paused tables not read: " + e.describe());
        return {};
    }
}

/// Reads the sources' slots on its own thread and keeps the alerts; the HTTP handlers only
/// read its last sample.
class Monitor {
public:
    Monitor(StateStore &store, Workspace ws, StateObserver &observer, Millis every, std::stop_source stop)
        : m_store(store), m_ws(std::move(ws)), m_observer(observer), m_every(every), m_stop(std::move(stop))
    {
    }
    /// The slot guard fell back: the workspace changed, and serve must start again with it.
    bool restartWanted() const { return m_restart; }
    ~Monitor() { stop(); }

    void start()
    {
        m_thread = std::jthread([this](std::stop_token st) { loop(st); });
    }
    void stop()
    {
        if (m_thread.joinable()) {
            m_thread.request_stop();
            m_wake.notify_all();
            m_thread.join();
        }
    }
    struct Sample {
        std::vector<SourceSlots> sources;
        std::vector<Alert> alerts;
        std::int64_t atMs = 0;
        std::vector<StateStore::ReconcileSummary> reconciles;
    };
    Sample sample() const
    {
        std::lock_guard lock(m_mutex);
        return m_sample;
    }

private:
    void loop(std::stop_token st)
    {
        while (!st.stop_requested()) {
            try {
                once();
            } catch (const std::exception &e) {
                log(LogLevel::Warn, std::string("slot monitor: ") + e.what());
            }
            std::unique_lock lock(m_waitMutex);
            m_wake.wait_for(lock, m_every, [&] { return st.stop_requested(); });
        }
    }
    void once()
    {
        auto sources = listSlots(m_ws);
        const auto now = StateStore::nowMs();
        // Slot guards with action: fallback protect the source first; the sync then restarts
        // with the workspace the fallback wrote.
        for (const auto &b : slotGuardBreaches(m_ws, sources)) {
            try {
                fallBack(m_store, b);
                log(LogLevel::Warn, "slot guard: pipeline " + b.pipeline + ": " + b.reason + "; slot " + b.slot +
                                        " dropped, CDC tables switched to cursor sync; restarting with them");
                m_restart = true;
                m_stop.request_stop();
            } catch (const Error &e) {
                log(LogLevel::Warn, "slot guard fallback failed: " + e.describe());
            }
        }
        for (const auto &ss : sources)
            for (const auto &s : ss.replicationSlots) {
                const std::string key = s.source + "/" + s.slot;
                if (s.active)
                    m_inactiveSince.erase(key);
                else
                    m_inactiveSince.try_emplace(key, now);
            }
        std::vector<StateStore::SlotSample> samples;
        for (const auto &ss : sources)
            for (const auto &s : ss.replicationSlots)
                samples.push_back({s.source, s.slot, now, s.retainedBytes, s.unconfirmedBytes, s.safeWalSize});
        try {
            m_store.addSlotSamples(samples);
            if (now - m_lastPruneMs >= 600'000) {
                m_lastPruneMs = now;
                m_store.pruneSlotSamples(now, StateObserver::kSampleKeepMs);
            }
        } catch (const Error &e) {
            log(LogLevel::Warn, "slot samples not recorded: " + e.describe());
        }
        std::vector<StateStore::ReconcileSummary> reconciles;
        try {
            reconciles = m_store.latestReconciles();
        } catch (const Error &e) {
            log(LogLevel::Warn, "reconciliation results not read: " + e.describe());
        }
        auto tables = buildStatus(m_ws, m_observer.snapshot(), now, reconciles, pausedNow(m_store));
        auto change = m_tracker.update(computeAlerts(m_ws, tables, sources, m_inactiveSince, now), now);
        for (const auto &a : change.opened)
            record(a.level, a, "alert", a.message + ". " + a.action);
        for (const auto &a : change.cleared)
            record("info", a, "alert_cleared", "cleared: " + a.message);
        std::lock_guard lock(m_mutex);
        m_sample = {std::move(sources), m_tracker.open(), now, std::move(reconciles)};
    }
    void record(const std::string &level, const Alert &a, const std::string &kind, const std::string &message)
    {
        try {
            m_store.addEvent(level, a.pipeline, a.table, kind, message);
        } catch (const Error &e) {
            log(LogLevel::Warn, "alert not recorded: " + e.describe());
        }
        log(level == "info" ? LogLevel::Info : LogLevel::Warn, message);
    }

    StateStore &m_store;
    Workspace m_ws;
    StateObserver &m_observer;
    Millis m_every;
    AlertTracker m_tracker;
    std::map<std::string, std::int64_t> m_inactiveSince;
    std::int64_t m_lastPruneMs = 0;
    mutable std::mutex m_mutex;
    Sample m_sample;
    std::mutex m_waitMutex;
    std::condition_variable m_wake;
    std::stop_source m_stop;
    std::atomic<bool> m_restart{false};
    std::jthread m_thread;
};

QHttpServerResponse jsonResponse(const nlohmann::json &j)
{
    return QHttpServerResponse("application/json", QByteArray::fromStdString(j.dump(2) + "\n"));
}

} // namespace

int serve(StateStore &store, const ServeOptions &options, std::stop_source stop)
{
    auto [host, port] = parseListen(options.listen, options.allowRemote);
    Workspace ws = store.loadWorkspace();
    if (ws.pipelines.empty())
        throw ConfigError("the workspace has no pipelines; run 'driftless-cli apply FILE' first", store.path());
    if (!options.pipeline.empty() && !ws.pipeline(options.pipeline))
        throw ConfigError("no pipeline named '" + options.pipeline + "'", store.path());
    if (!options.pipeline.empty())
        std::erase_if(ws.pipelines, [&](const PipelineSpec &p) { return p.name != options.pipeline; });
    auto jobs = jobsFor(ws);
    StateObserver observer(store, jobs);
    LiveView view(ws, observer, false);
    observer.setNext(&view);

    int argc = 1;
    char name[] = "driftless-cli";
    char *argv[] = {name, nullptr};
    QCoreApplication app(argc, argv);
    Monitor monitor(store, ws, observer, options.monitorEvery, stop);

    QHttpServer server;
    server.route("/sync/status", QHttpServerRequest::Method::Get, [&] {
        const auto now = StateStore::nowMs();
        auto sample = monitor.sample();
        auto tables = buildStatus(ws, observer.snapshot(), now, sample.reconciles, pausedNow(store));
        nlohmann::json slotInfo = slotsJsonValue(sample.sources);
        nlohmann::json root = {
            {"generated_at", formatIso8601(now)},
            {"tables", tablesJsonValue(tables)},
            {"slots", slotInfo["slots"]},
            {"slot_errors", slotInfo["errors"]},
            {"slots_sampled_at", sample.atMs ? nlohmann::json(formatIso8601(sample.atMs)) : nlohmann::json(nullptr)},
            {"alerts", alertsJsonValue(sample.alerts)},
        };
        return jsonResponse(root);
    });
    server.route("/metrics", QHttpServerRequest::Method::Get, [&] {
        const auto now = StateStore::nowMs();
        auto sample = monitor.sample();
        auto text = prometheusText(buildStatus(ws, observer.snapshot(), now, sample.reconciles, pausedNow(store)),
                                   sample.sources,
                                   sample.alerts);
        return QHttpServerResponse("text/plain; version=0.0.4; charset=utf-8", QByteArray::fromStdString(text));
    });
    const quint16 bound = server.listen(QHostAddress(QString::fromStdString(host)), static_cast<quint16>(port));
    if (bound == 0)
        throw Error(ErrorKind::Permanent, "cannot listen on " + options.listen, {},
                    "another program uses that port: pick another with --listen HOST:PORT");
    const std::string where = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                              std::to_string(bound);
    std::printf("serving http://%s/sync/status and http://%s/metrics (Ctrl+C stops)\n", where.c_str(), where.c_str());
    std::fflush(stdout);

    monitor.start();
    ReconcileScheduler reconciles(store, ws, options.pipeline);
    reconciles.start();
    int errors = 0;
    std::exception_ptr failure;
    std::thread engine([&] {
        try {
            Scheduler::Options opts;
            opts.pausedTables = [&store] { return readPauses(store); };
            Scheduler scheduler(jobs, observer, opts);
            errors = scheduler.run(stop.get_token());
        } catch (...) {
            failure = std::current_exception();
        }
        stop.request_stop();
    });
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &app, [&] {
        if (stop.stop_requested())
            app.quit();
    });
    poll.start(100);
    app.exec();
    stop.request_stop();
    engine.join();
    monitor.stop();
    if (failure && !monitor.restartWanted())
        std::rethrow_exception(failure);
    return monitor.restartWanted() ? kServeRestart : errors;
}

} // namespace driftless::cli
