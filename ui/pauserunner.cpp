#include "ui/pauserunner.h"
#include "ui/displayformat.h"

#include "ui/agentlink.h"
#include "ui/enginebridge.h"

#include "core/engine/pauses.h"
#include "core/engine/workspacestate.h"
#include "core/model/error.h"

#include <QThreadPool>

#include <exception>
#include <string>

namespace driftless::ui
{

PauseRunner::PauseRunner(EngineBridge *engine, QObject *parent)
    : QObject(parent), m_engine(engine), m_mailbox(Mailbox<PauseRunner>::create(this))
{
}

PauseRunner::~PauseRunner() { m_mailbox->close(); }

bool PauseRunner::busy(const QString &pipeline, const QString &table) const
{
    return m_busy.count({pipeline, table}) > 0;
}

std::uint64_t PauseRunner::setPaused(const QString &pipeline, const QString &table, bool pause)
{
    const QString path = m_engine->statePath();
    const auto workspace = m_engine->snapshot().workspace;
    if (path.isEmpty() || !workspace || busy(pipeline, table))
        return 0;
    const std::uint64_t job = ++m_lastJob;
    m_busy.insert({pipeline, table});
    emit started(job, pipeline, table, pause);
    if (AgentLink *agent = m_engine->agent()) {
        const nlohmann::json body = {{"pipeline", pipeline.toStdString()}, {"tables", {table.toStdString()}}};
        agent->request("POST", pause ? QStringLiteral("/api/v1/pause") : QStringLiteral("/api/v1/resume"),
                       QByteArray::fromStdString(body.dump()), this,
                       [this, job, path, pipeline, table, pause](const AgentLink::Reply &r) {
                           m_busy.erase({pipeline, table});
                           if (path != m_engine->statePath())
                               return;
                           QString message = r.error;
                           if (r.ok())
                               for (const auto &c : r.body.value("changes", nlohmann::json::array()))
                                   message += (message.isEmpty() ? QString() : QStringLiteral(" ")) +
                                              QString::fromStdString(c.value("message", std::string()));
                           m_engine->refresh();
                           emit finished(job, pipeline, table, pause, r.ok(), message);
                       });
        return job;
    }
    QThreadPool::globalInstance()->start([mailbox = m_mailbox, job, path, workspace, pipeline, table, pause] {
        bool ok = false;
        QString message;
        try {
            const auto changes = core::WorkspaceState(path.toStdString())
                                     .setPaused(*workspace, pipeline.toStdString(), {table.toStdString()}, pause);
            ok = true;
            for (const auto &c : changes)
                message += (message.isEmpty() ? QString() : QStringLiteral(" ")) + QString::fromStdString(c.message);
        } catch (const std::exception &e) {
            message = describe(e);
        }
        mailbox->post([job, path, pipeline, table, pause, ok, message](PauseRunner &r) {
            r.m_busy.erase({pipeline, table});
            // Another workspace is shown now: its pages do not hear of this one.
            if (path == r.m_engine->statePath()) {
                r.m_engine->refresh();
                emit r.finished(job, pipeline, table, pause, ok, message);
            }
        });
    });
    return job;
}

} // namespace driftless::ui
