#include "ui/localdoor.h"
#include "ui/workpool.h"

#include "core/agent/agentapi.h"
#include "core/base/clock.h"
#include "core/engine/run/workspacestate.h"
#include "core/model/error.h"

#include <QPointer>
#include <QThreadPool>
#include <QUrlQuery>

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace driftless::ui {

namespace {

/// The engine as the API sees it in the app: what the bridge says it does, and the tables as
/// the workspace file has them (the running engine mirrors itself into it).
class LocalEngine final : public core::AgentEngine {
public:
    LocalEngine(std::string path, std::function<void(bool)> post) : m_path(std::move(path)), m_post(std::move(post)) {}
    core::EngineRun::Status status(std::int64_t nowMs) const override
    {
        core::EngineRun::Status s;
        auto snap = core::WorkspaceState(m_path).snapshot(nowMs, 0);
        s.workspace = std::make_shared<const core::Workspace>(std::move(snap.workspace));
        s.tables = std::move(snap.tables);
        return s;
    }
    bool running() const override { return m_running.load(); }
    void setRunning(bool run) override { m_post(run); }
    std::atomic<bool> m_running{false};

private:
    std::string m_path;
    std::function<void(bool)> m_post;
};

} // namespace

/// What the pool threads share: the file and the API over it, made on the first request.
struct LocalDoor::Core {
    std::string path;
    std::shared_ptr<LocalEngine> engine;
    std::mutex mutex;
    std::optional<core::WorkspaceState> state;
    std::unique_ptr<core::AgentApi> api;

    /// `create`: make the file when there is none (storing a workspace, as `apply` does).
    core::AgentApi &open(bool create)
    {
        std::lock_guard lock(mutex);
        if (!api) {
            std::error_code ec;
            if (create && !std::filesystem::exists(path, ec))
                core::WorkspaceState::create(path);
            if (!std::filesystem::exists(path, ec))
                throw core::Error(core::ErrorKind::Permanent, "there is no workspace file at " + path, {},
                                  "on the Workspace page, Import YAML\u2026 stores one (driftless-cli --state " + path +
                                      " apply FILE)");
            state.emplace(path);
            api = std::make_unique<core::AgentApi>(*state, *engine, std::string());
        }
        return *api;
    }
};

EngineDoor *LocalDoor::orOwn(EngineDoor *door, EngineDoor *&own, QObject *owner)
{
    if (door)
        return door;
    if (!own)
        own = new LocalDoor(QString(), {}, owner);
    return own;
}

LocalDoor::LocalDoor(const QString &statePath, std::function<void(bool)> setRunning, QObject *parent)
    : EngineDoor(parent), m_core(std::make_shared<Core>()), m_mailbox(Mailbox<LocalDoor>::create(this)),
      m_setRunning(std::move(setRunning))
{
    m_core->path = statePath.toStdString();
    m_core->engine = std::make_shared<LocalEngine>(m_core->path, [mailbox = m_mailbox](bool run) {
        mailbox->post([run](LocalDoor &d) {
            if (d.m_setRunning)
                d.m_setRunning(run);
        });
    });
}

LocalDoor::~LocalDoor()
{
    m_mailbox->close();
    // The API's destructor joins its jobs: let a pool thread wait for that.
    workPool()->start([core = std::move(m_core)]() mutable { core.reset(); });
}

void LocalDoor::setEngineRunning(bool running)
{
    m_core->engine->m_running = running;
}

void LocalDoor::request(const QByteArray &verb, const QString &path, const QByteArray &body, QObject *context,
                        Done done)
{
    core::ApiRequest req;
    req.method = verb.toStdString();
    const int q = path.indexOf(QLatin1Char('?'));
    req.path = (q < 0 ? path : path.left(q)).toStdString();
    if (q >= 0)
        for (const auto &[k, v] : QUrlQuery(path.mid(q + 1)).queryItems(QUrl::FullyDecoded))
            req.query[k.toStdString()] = v.toStdString();
    req.body = body.toStdString();
    req.peer = kWho;
    workPool()->start([core = m_core, mailbox = m_mailbox, req = std::move(req), guard = QPointer<QObject>(context),
                       done = std::move(done)] {
        core::ApiResponse response;
        try {
            const bool store = req.method == "PUT" && req.path == "/api/v1/workspace";
            std::error_code ec;
            // Test connection and discovery before there is a workspace (a new user's first
            // endpoint): they need none.
            if (core::AgentApi::isStateless(req.path) && !std::filesystem::exists(core->path, ec))
                response = core::AgentApi::handleStateless(req);
            else
                response = core->open(store).handleLocal(req, kWho);
        } catch (const core::Error &e) {
            nlohmann::json j = {{"error", e.what()}};
            if (!e.hint().empty())
                j["hint"] = e.hint();
            response.status = 422;
            response.body = j.dump();
        }
        Reply reply = replyFrom(response.status, QByteArray::fromStdString(response.body));
        mailbox->post([guard, done, reply = std::move(reply)](LocalDoor &) {
            if (guard)
                done(reply);
        });
    });
}

} // namespace driftless::ui
