#pragma once

#include "ui/enginedoor.h"

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

/// The door to an agent: its control API over Qt Network (docs/agent-api.md).
///
/// The certificate is pinned: a handshake goes on only when the agent presents the certificate
/// whose SHA-256 is `fingerprint`, whether or not a CA vouches for it; anything else is refused
/// before the token is sent. With no fingerprint yet, only probe() may be sent (without the
/// token), so the DBA can compare what the agent presents with what `serve` printed.
///
/// A token refused (401) or a certificate not the pinned one ends the link: later requests get
/// the same error at once, without sending the token again.
///
/// Thread affinity: a UI-thread object; replies arrive on the UI thread, each once, and never for
/// a `context` that is gone.
class AgentLink final : public EngineDoor {
    Q_OBJECT
public:
    explicit AgentLink(AgentEndpoint endpoint, QObject *parent = nullptr);

    const AgentEndpoint &endpoint() const { return m_endpoint; }

    void request(const QByteArray &verb, const QString &path, const QByteArray &body, QObject *context,
                 Done done) override;
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
    /// Why the agent refused the token or presented another certificate; once set, nothing
    /// more is sent with the token (a new Connect to Agent makes a new link).
    QString m_refusal;
};

} // namespace driftless::ui
