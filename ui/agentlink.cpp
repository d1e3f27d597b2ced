#include "ui/agentlink.h"

#include <QCoreApplication>
#include <QHostAddress>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslError>
#include <QUrl>

#include <memory>

namespace driftless::ui {

namespace {

bool loopbackHost(const QUrl &url)
{
    const QString host = url.host();
    if (host == QLatin1String("localhost"))
        return true;
    QHostAddress a;
    return a.setAddress(host) && a.isLoopback();
}

/// What one request learnt of the agent's certificate.
struct Handshake {
    QString presented;
    bool refused = false;
};

QString presentedBy(QNetworkReply *reply, const QList<QSslError> &errors = {})
{
    QSslCertificate cert = reply->sslConfiguration().peerCertificate();
    if (cert.isNull())
        for (const auto &e : errors)
            if (!e.certificate().isNull()) {
                cert = e.certificate();
                break;
            }
    return cert.isNull() ? QString() : AgentLink::fingerprintOf(cert.digest(QCryptographicHash::Sha256));
}

} // namespace

QString AgentEndpoint::label() const
{
    const QUrl u(url);
    return u.port() > 0 ? QStringLiteral("%1:%2").arg(u.host()).arg(u.port()) : u.host();
}

QString AgentLink::fingerprintOf(const QByteArray &digest)
{
    return QString::fromLatin1(digest.toHex(':').toUpper());
}

AgentLink::AgentLink(AgentEndpoint endpoint, QObject *parent) : EngineDoor(parent), m_endpoint(std::move(endpoint))
{
    // Each request goes out at once; a second Connect to Agent gets a fresh link, not a cache.
    m_net.setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
}

void AgentLink::request(const QByteArray &verb, const QString &path, const QByteArray &body, QObject *context,
                        Done done)
{
    send(verb, path, body, true, false, context, std::move(done));
}

void AgentLink::probe(QObject *context, Done done)
{
    send("GET", QStringLiteral("/sync/status"), {}, false, true, context, std::move(done));
}

void AgentLink::send(const QByteArray &verb, const QString &path, const QByteArray &body, bool withToken, bool trustAny,
                     QObject *context, Done done)
{
    const QUrl base(m_endpoint.url);
    const bool https = base.scheme() == QLatin1String("https");
    QPointer<QObject> guard(context);
    auto fail = [&](const QString &why) {
        Reply r;
        r.error = why;
        // Not inside the caller's call: a reply always comes from the event loop.
        QMetaObject::invokeMethod(
            this,
            [guard, done, r] {
                if (guard)
                    done(r);
            },
            Qt::QueuedConnection);
    };
    if (!base.isValid() || (base.scheme() != QLatin1String("http") && !https) || base.host().isEmpty()) {
        fail(tr("'%1' is not an agent address: write https://HOST:PORT").arg(m_endpoint.url));
        return;
    }
    if (withToken && !https && !loopbackHost(base)) {
        fail(tr("plain HTTP would send the token in the clear: connect to an agent started with --tls, at "
                "https://%1")
                 .arg(m_endpoint.label()));
        return;
    }
    if (withToken && !m_refusal.isEmpty()) {
        fail(m_refusal); // the token or the certificate was refused: not sent again
        return;
    }
    if (withToken && https && m_endpoint.fingerprint.isEmpty()) {
        fail(tr("no certificate is pinned for this agent yet: connect again and confirm its fingerprint"));
        return;
    }
    QUrl url = base;
    const int query = path.indexOf(QLatin1Char('?'));
    url.setPath(query < 0 ? path : path.left(query));
    if (query >= 0)
        url.setQuery(path.mid(query + 1));
    QNetworkRequest request(url);
    request.setTransferTimeout(kTimeoutMs);
    request.setAttribute(QNetworkRequest::CacheLoadControlAttribute, QNetworkRequest::AlwaysNetwork);
    if (withToken)
        request.setRawHeader("Authorization", "Bearer " + m_endpoint.token.toUtf8());
    if (!body.isEmpty())
        request.setHeader(QNetworkRequest::ContentTypeHeader,
                          verb == "PUT" ? QByteArray("application/yaml") : QByteArray("application/json"));
    QNetworkReply *reply = m_net.sendCustomRequest(request, verb, body);
    auto handshake = std::make_shared<Handshake>();
    const QString pinned = m_endpoint.fingerprint;
    connect(reply, &QNetworkReply::sslErrors, reply, [reply, handshake, pinned, trustAny](const QList<QSslError> &e) {
        handshake->presented = presentedBy(reply, e);
        // No CA vouches for a self-signed agent: the pin does. Anything but the pinned
        // certificate is refused, the token unsent.
        if (trustAny || (!pinned.isEmpty() && handshake->presented == pinned))
            reply->ignoreSslErrors();
        else
            handshake->refused = true;
    });
    connect(reply, &QNetworkReply::encrypted, reply, [reply, handshake, pinned, trustAny] {
        handshake->presented = presentedBy(reply);
        // Also a certificate a CA vouches for must be the pinned one.
        if (!trustAny && handshake->presented != pinned) {
            handshake->refused = true;
            reply->abort();
        }
    });
    connect(reply, &QNetworkReply::finished, this, [this, reply, handshake, guard, done, withToken] {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        Reply r = replyFrom(status, reply->isOpen() ? reply->readAll() : QByteArray());
        r.presented = handshake->presented;
        r.certificateRefused = handshake->refused;
        if (r.certificateRefused) {
            r.error = tr("refused the agent at %1: it presents a certificate with SHA-256 fingerprint %2, not the "
                         "pinned %3. Another server may answer at this address. If the agent was given a new "
                         "certificate, connect again and confirm the new fingerprint.")
                          .arg(m_endpoint.label(), handshake->presented.isEmpty() ? tr("(none)") : handshake->presented,
                               m_endpoint.fingerprint);
        } else if (r.status == 0) {
            r.error = tr("agent unreachable: %1").arg(reply->errorString());
        } else if (r.status == 401) {
            r.error = tr("the agent refused the token (401): copy it again from 'driftless-cli agent-token' on the "
                         "agent");
        } else if (!r.ok() && !r.body.is_object()) {
            r.error = tr("the agent answered %1").arg(r.status);
        }
        if (withToken && (r.certificateRefused || r.status == 401))
            m_refusal = r.error;
        if (guard)
            done(r);
    });
}

} // namespace driftless::ui
