#pragma once

#include <nlohmann/json.hpp>

#include <QByteArray>
#include <QObject>
#include <QString>

#include <functional>

namespace driftless::ui {

/// The one door from ui/ into an engine: its control API (docs/agent-api.md), whether the engine
/// is an agent across the network (AgentLink) or this app's own, on a workspace file (LocalDoor).
/// Runners, pages and dialogs ask it and never open the state file or a database themselves, so
/// what they do is the same for both, and a test can stand a recorded door in front of them.
///
/// Thread affinity: a UI-thread object; each request gets its reply once, on the UI thread, and
/// never for a `context` that is gone by then.
class EngineDoor : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

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

    /// `verb` GET, POST or PUT to `path` (e.g. /api/v1/pause, with a query if any); a JSON `body`
    /// (YAML for PUT /api/v1/workspace).
    virtual void request(const QByteArray &verb, const QString &path, const QByteArray &body, QObject *context,
                         Done done) = 0;
    /// The same with a JSON body.
    void post(const QString &path, const nlohmann::json &body, QObject *context, Done done)
    {
        request("POST", path, QByteArray::fromStdString(body.dump()), context, std::move(done));
    }

    /// A reply to `status` with `data`: the body parsed, and the error of a non-2xx answer as
    /// the API words it (`error`, then `hint`).
    static Reply replyFrom(int status, const QByteArray &data);
};

} // namespace driftless::ui
