// driftless-cli serve: the engine of `run` (core::EngineRun, with its monitor reading the
// sources' slots and keeping the alerts), plus a loopback HTTP endpoint with the sync status
// (JSON) and metrics (Prometheus text).

#include "app/cli/serve.h"

#include "app/cli/liveview.h"

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/engine/enginerun.h"
#include "core/engine/metrics.h"
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
#include <functional>
#include <memory>
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

/// What serve shows while the engine runs: log lines (no terminal status line), and the first
/// start, which the endpoint waits for.
class ServeFace final : public EngineRunListener {
public:
    EngineObserver *started(const Start &s) override
    {
        m_view = std::make_unique<LiveView>(s.workspace, s.mirror, false);
        {
            std::lock_guard lock(m_mutex);
            m_started = true;
        }
        m_changed.notify_all();
        return m_view.get();
    }
    void finished(int, bool) override { m_view.reset(); }
    /// Until the engine started, or `failed()` says it will not.
    void waitStarted(const std::function<bool()> &failed)
    {
        std::unique_lock lock(m_mutex);
        while (!m_started && !failed())
            m_changed.wait_for(lock, std::chrono::milliseconds(50));
    }

private:
    std::unique_ptr<LiveView> m_view;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    bool m_started = false;
};

QHttpServerResponse jsonResponse(const nlohmann::json &j)
{
    return QHttpServerResponse("application/json", QByteArray::fromStdString(j.dump(2) + "\n"));
}

} // namespace

int serve(WorkspaceState &state, const ServeOptions &options, std::stop_source stop)
{
    auto [host, port] = parseListen(options.listen, options.allowRemote);
    EngineRun::loadRunnable(state, options.pipeline);
    EngineRunOptions ro;
    ro.pipeline = options.pipeline;
    ro.checkEvery = options.monitorEvery;
    ro.monitor = true;
    EngineRun engine(state, ro);
    ServeFace face;

    int argc = 1;
    char name[] = "driftless-cli";
    char *argv[] = {name, nullptr};
    QCoreApplication app(argc, argv);

    int errors = 0;
    std::exception_ptr failure;
    std::atomic<bool> ended{false};
    std::thread runner([&] {
        try {
            errors = engine.run(stop.get_token(), &face);
        } catch (...) {
            failure = std::current_exception();
        }
        ended = true;
        stop.request_stop();
    });
    struct Join {
        std::thread &t;
        std::stop_source &stop;
        ~Join()
        {
            stop.request_stop();
            if (t.joinable())
                t.join();
        }
    } join{runner, stop};
    // The endpoint answers once the engine holds the workspace (slot guards acted on first).
    face.waitStarted([&] { return ended.load(); });
    if (ended && failure)
        std::rethrow_exception(failure);

    QHttpServer server;
    server.route("/sync/status", QHttpServerRequest::Method::Get, [&] {
        const auto now = wallClockMs();
        auto status = engine.status(now);
        nlohmann::json slotInfo = slotsJsonValue(status.monitor.sources);
        nlohmann::json root = {
            {"generated_at", formatIso8601(now)},
            {"tables", tablesJsonValue(status.tables)},
            {"slots", slotInfo["slots"]},
            {"slot_errors", slotInfo["errors"]},
            {"slots_sampled_at",
             status.monitor.atMs ? nlohmann::json(formatIso8601(status.monitor.atMs)) : nlohmann::json(nullptr)},
            {"alerts", alertsJsonValue(status.monitor.alerts)},
        };
        return jsonResponse(root);
    });
    server.route("/metrics", QHttpServerRequest::Method::Get, [&] {
        auto status = engine.status(wallClockMs());
        auto text = prometheusText(status.tables, status.monitor.sources, status.monitor.alerts);
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

    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &app, [&] {
        if (stop.stop_requested())
            app.quit();
    });
    poll.start(100);
    app.exec();
    stop.request_stop();
    runner.join();
    if (failure)
        std::rethrow_exception(failure);
    return errors;
}

} // namespace driftless::cli
