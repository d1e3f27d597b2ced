#pragma once

#include <nlohmann/json.hpp>

#include <QByteArray>
#include <QNetworkAccessManager>
#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>

class QNetworkReply;

namespace driftless::ui {

/// Where an agent (`driftless-cli serve`) answers and how the app proves itself to it.
struct AgentEndpoint {
    QString url;         ///< https://host:port (or http://127.0.0.1:port on this machine)
    QString token;       ///< the agent's bearer token (driftless-cli agent-token)
    QString fingerprint; ///< the pinned SHA-256 of the agent's certificate, AB:CD:...; empty: none yet
    bool operator==(const AgentEndpoint &) const = default;
    /// `host:port`, for the window's marker.
    QString label() const;
};

/// One agent's control API over Qt Network (docs/agent-api.md), for EngineBridge and the runners.
///
/// The certificate is pinned: a handshake goes on only when the agent presents the certificate
/// whose SHA-256 is `fingerprint`, whether or not a CA vouches for it; anything else is refused
/// before the token is sent. With no fingerprint yet, only probe() may be sent (without the
/// token), so the DBA can compare what the agent presents with what `serve` printed.
///
/// Thread affinity: a UI-thread object; replies arrive on the UI thread, each once, and never for
/// a `context` that is gone.
class AgentLink final : public QObject {
    Q_OBJECT
public:
    explicit AgentLink(AgentEndpoint endpoint, QObject *parent = nullptr);

    const AgentEndpoint &endpoint() const { return m_endpoint; }

    struct Reply {
        int status = 0; ///< the HTTP status; 0 when no answer came
        nlohmann::json body;
        /// Empty on a 2xx answer; otherwise what went wrong, in words a DBA can act on.
        QString error;
        /// The agent presented a certificate other than the pinned one.
        bool certificateRefused = false;
        /// The fingerprint of the certificate the agent presented (https), as AB:CD:...
        QString presented;
        bool ok() const { return error.isEmpty(); }
    };
    using Done = std::function<void(const Reply &)>;

    /// `verb` GET, POST or PUT to `path` (e.g. /api/v1/snapshot); a JSON `body` (YAML for PUT
    /// workspace). `done` is called once on the UI thread unless `context` is gone by then.
    void request(const QByteArray &verb, const QString &path, const QByteArray &body, QObject *context, Done done);
    /// GET /sync/status without the token, trusting any certificate: what a first connect shows
    /// the DBA to confirm (Reply::presented), before anything secret is sent.
    void probe(QObject *context, Done done);

    static constexpr int kTimeoutMs = 15'000;
    /// The SHA-256 of a certificate, as `openssl x509 -fingerprint -sha256` and serve print it.
    static QString fingerprintOf(const QByteArray &digest);

private:
    void send(const QByteArray &verb, const QString &path, const QByteArray &body, bool withToken, bool trustAny,
              QObject *context, Done done);

    AgentEndpoint m_endpoint;
    QNetworkAccessManager m_net;
};

} // namespace driftless::ui
