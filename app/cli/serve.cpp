// driftless-cli serve: the engine of `run` (core::EngineRun, with its monitor reading the
// sources' slots and keeping the alerts), plus an HTTP or HTTPS endpoint with the sync status
// (JSON), metrics (Prometheus text) and the agent's control API (core::AgentApi).

#include "app/cli/serve.h"

#include "app/cli/liveview.h"

#include "core/agent/agentapi.h"
#include "core/agent/agentauth.h"
#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/engine/run/enginerun.h"
#include "core/model/error.h"

#include <QAbstractHttpServer>
#include <QCoreApplication>
#include <QHostAddress>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QMetaEnum>
#include <QPointer>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QTcpSocket>
#include <QThreadPool>
#include <QTimer>
#include <QUrlQuery>

#include <atomic>
#include <optional>

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
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

/// The engine serve runs, as the agent API drives it: run() loops, running the engine while it
/// is wanted (engine/stop ends the current run; engine/start begins another) until `stop`.
class ServeEngine final : public AgentEngine {
public:
    ServeEngine(EngineRun &engine, ServeFace &face) : m_engine(engine), m_face(face) {}

    EngineRun::Status status(std::int64_t nowMs) const override { return m_engine.status(nowMs); }
    bool running() const override { return m_wanted.load(); }
    void setRunning(bool run) override
    {
        std::lock_guard lock(m_mutex);
        m_wanted = run;
        if (!run)
            m_current.request_stop();
        m_changed.notify_all();
    }

    /// The runner thread's loop; returns the errors of the last run. Throws what a run throws.
    int run(std::stop_token stop)
    {
        int errors = 0;
        std::stop_callback wake(stop, [this] {
            std::lock_guard lock(m_mutex);
            m_current.request_stop();
            m_changed.notify_all();
        });
        while (!stop.stop_requested()) {
            std::stop_source current;
            {
                std::unique_lock lock(m_mutex);
                m_changed.wait(lock, [&] { return m_wanted.load() || stop.stop_requested(); });
                if (stop.stop_requested())
                    break;
                m_current = current;
            }
            errors = m_engine.run(current.get_token(), &m_face);
        }
        return errors;
    }

private:
    EngineRun &m_engine;
    ServeFace &m_face;
    std::atomic<bool> m_wanted{true};
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::stop_source m_current;
};

/// serve's HTTP(S) endpoint: every request goes to the one router (core::AgentApi), answered
/// on a pool thread so a slow call (a probe waiting for a server, a workspace checked by the
/// doctor) never holds up /metrics or the next client; the reply is written on the socket's
/// own thread, or dropped when the client went away.
class AgentHttpServer final : public QAbstractHttpServer {
public:
    AgentHttpServer(AgentApi &api, bool plainRemote) : m_api(api), m_plainRemote(plainRemote)
    {
        m_pool.setMaxThreadCount(kWorkers);
    }
    ~AgentHttpServer() override { m_pool.waitForDone(); }

    /// Requests answered at once; more wait for one of these.
    static constexpr int kWorkers = 4;

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override
    {
        ApiRequest r;
        r.method = methodName(request.method());
        r.path = request.url().path().toStdString();
        for (const auto &[k, v] : request.query().queryItems(QUrl::FullyDecoded))
            r.query[k.toStdString()] = v.toStdString();
        r.authorization = request.value("Authorization").toStdString();
        r.body = request.body().toStdString();
        const QHostAddress peer = request.remoteAddress();
        r.peer = peer.toString().toStdString();
        auto responder = std::make_shared<QHttpServerResponder>(makeResponder(request, socket));
        if (m_plainRemote && r.path.starts_with(AgentApi::kPrefix) && !peer.isLoopback()) {
            // Nobody off this machine sends a token over plain HTTP, where anyone on the path reads it.
            ApiResponse out;
            out.status = 403;
            out.body = "{\"error\": \"the control API is served over HTTPS only to other machines: start serve with "
                       "--tls\"}\n";
            respond(*responder, out, r.method == "HEAD");
            return true;
        }
        m_pool.start([this, r = std::move(r), responder = std::move(responder),
                      socket = QPointer<QTcpSocket>(socket)]() mutable {
            ApiResponse out = m_api.handle(r);
            const bool head = r.method == "HEAD";
            // Everything of the socket stays on the server's thread: the reply, the check that
            // the client is still there, and the responder's end.
            QMetaObject::invokeMethod(
                this,
                [responder = std::move(responder), socket = std::move(socket), out = std::move(out), head] {
                    if (socket)
                        respond(*responder, out, head);
                },
                Qt::QueuedConnection);
        });
        return true;
    }
    void missingHandler(const QHttpServerRequest &, QTcpSocket *) override {}

private:
    static void respond(QHttpServerResponder &responder, const ApiResponse &out, bool head)
    {
        responder.writeStatusLine(static_cast<QHttpServerResponder::StatusCode>(out.status));
        const QByteArray body = QByteArray::fromStdString(out.body);
        responder.writeHeader("Content-Type", QByteArray::fromStdString(out.contentType));
        responder.writeHeader("Content-Length", QByteArray::number(body.size()));
        responder.writeHeader("Cache-Control", "no-store");
        for (const auto &[k, v] : out.headers)
            responder.writeHeader(QByteArray::fromStdString(k), QByteArray::fromStdString(v));
        responder.writeBody(head ? QByteArray() : body);
    }
    /// GET, POST, ...: the enum's own name, upper case.
    static std::string methodName(QHttpServerRequest::Method m)
    {
        const char *key = QMetaEnum::fromType<QHttpServerRequest::Method>().valueToKey(static_cast<int>(m));
        return key ? QByteArray(key).toUpper().toStdString() : std::string("OTHER");
    }
    AgentApi &m_api;
    bool m_plainRemote;
    QThreadPool m_pool;
};

} // namespace

int serve(WorkspaceState &state, const ServeOptions &options, std::stop_source stop)
{
    auto [host, port] = parseListen(options.listen, options.allowRemote);
    EngineRun::loadRunnable(state, options.pipeline);
    EngineRunOptions ro;
    ro.pipeline = options.pipeline;
    ro.checkEvery = options.monitorEvery;
    ro.slotSampleEvery = options.slotSampleEvery;
    ro.monitor = true;
    EngineRun engine(state, ro);
    ServeFace face;

    int argc = 1;
    char name[] = "driftless-cli";
    char *argv[] = {name, nullptr};
    QCoreApplication app(argc, argv);

    // What proves the agent, before anything runs: a file that cannot be made stops serve here.
    const AgentFiles files = AgentFiles::beside(state.path());
    ensureAgentToken(files.token);
    std::optional<AgentCertificate> certificate;
    if (!options.certificate.empty() || !options.key.empty()) {
        if (options.certificate.empty() || options.key.empty())
            throw Error(ErrorKind::Permanent, "--cert and --key go together", {},
                        "give both, or --tls alone for the agent's own self-signed certificate");
        certificate = loadAgentCertificate(options.certificate, options.key);
    } else if (options.tls) {
        certificate = ensureAgentCertificate(files);
    }

    ServeEngine driven(engine, face);
    int errors = 0;
    std::exception_ptr failure;
    std::atomic<bool> ended{false};
    std::thread runner([&] {
        try {
            errors = driven.run(stop.get_token());
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

    AgentApi api(state, driven, files.token);
    AgentHttpServer server(api, !certificate && !QHostAddress(QString::fromStdString(host)).isLoopback());
    if (certificate) {
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.setLocalCertificate(QSslCertificate(QByteArray::fromStdString(certificate->certificatePem)));
        const QByteArray keyPem = QByteArray::fromStdString(certificate->keyPem);
        QSslKey key(keyPem, QSsl::Ec);
        if (key.isNull())
            key = QSslKey(keyPem, QSsl::Rsa);
        tls.setPrivateKey(key);
        tls.setProtocol(QSsl::TlsV1_2OrLater);
        if (tls.localCertificate().isNull() || tls.privateKey().isNull())
            throw Error(ErrorKind::Permanent, "the TLS layer cannot use the agent's certificate", {},
                        "give --cert and --key a PEM certificate and its EC or RSA key");
        server.sslSetup(tls);
    }
    const quint16 bound = server.listen(QHostAddress(QString::fromStdString(host)), static_cast<quint16>(port));
    if (bound == 0)
        throw Error(ErrorKind::Permanent, "cannot listen on " + options.listen, {},
                    "another program uses that port: pick another with --listen HOST:PORT");
    const std::string where =
        (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(bound);
    const std::string scheme = certificate ? "https" : "http";
    std::printf("serving %s://%s/sync/status and %s://%s/metrics (Ctrl+C stops)\n", scheme.c_str(), where.c_str(),
                scheme.c_str(), where.c_str());
    std::printf("agent API at %s://%s/api/v1/ with the token in %s ('driftless-cli agent-token' prints it)\n",
                scheme.c_str(), where.c_str(), files.token.c_str());
    if (certificate)
        std::printf("certificate SHA-256 fingerprint %s%s\n", certificate->fingerprint.c_str(),
                    certificate->created ? (" (made now, in " + files.certificate + ")").c_str() : "");
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
