#include "ui/backfillrunner.h"
#include "ui/displayformat.h"

#include "ui/agentlink.h"
#include "ui/enginebridge.h"

#include "core/engine/resnapshot.h"
#include "core/model/error.h"

#include <QThreadPool>

#include <exception>
#include <optional>

namespace driftless::ui
{

/// What a worker found: a plain value posted back to the UI thread.
struct BackfillRunner::Outcome {
    bool ok = false;
    core::RebackfillRequest::What what = core::RebackfillRequest::What::Requested;
    QString message;
    std::optional<int> runningPid;
};

BackfillRunner::BackfillRunner(EngineBridge *engine, QObject *parent)
    : QObject(parent), m_engine(engine), m_mailbox(Mailbox<BackfillRunner>::create(this))
{
}

BackfillRunner::~BackfillRunner()
{
    m_mailbox->close();
}

bool BackfillRunner::busy(const QString &pipeline, const QString &table) const
{
    return m_busy.count({pipeline, table}) > 0;
}

std::uint64_t BackfillRunner::request(const QString &pipeline, const QString &table)
{
    return run(Action::Request, pipeline, table);
}

std::uint64_t BackfillRunner::cancel(const QString &pipeline, const QString &table)
{
    return run(Action::Cancel, pipeline, table);
}

std::uint64_t BackfillRunner::run(Action action, const QString &pipeline, const QString &table)
{
    const auto workspace = m_engine->snapshot().workspace;
    if (!workspace || busy(pipeline, table))
        return 0;
    const std::uint64_t job = ++m_lastJob;
    m_busy.insert({pipeline, table});
    emit started(job, action, pipeline, table);
    if (AgentLink *agent = m_engine->agent()) {
        // The agent's engine takes the request; the agent talks to the databases.
        const nlohmann::json body = {
            {"pipeline", pipeline.toStdString()}, {"table", table.toStdString()}, {"cancel", action == Action::Cancel}};
        agent->request(
            "POST", QStringLiteral("/api/v1/backfill"), QByteArray::fromStdString(body.dump()), this,
            [this, job, action, statePath = m_engine->statePath(), pipeline, table](const AgentLink::Reply &r) {
                Outcome o;
                o.ok = r.ok();
                o.message = r.ok() ? QString::fromStdString(r.body.value("message", std::string())) : r.error;
                if (r.ok() && r.body.value("what", std::string()) == "in_flight")
                    o.what = core::RebackfillRequest::What::InFlight;
                m_engine->refresh();
                onDone(job, action, statePath, pipeline, table, o);
            });
        return job;
    }
    QThreadPool::globalInstance()->start(
        [mailbox = m_mailbox, job, action, workspace, statePath = m_engine->statePath(), pipeline, table] {
            Outcome o;
            try {
                const auto r = action == Action::Request
                                   ? core::requestRebackfill(*workspace, pipeline.toStdString(), table.toStdString())
                                   : core::cancelRebackfill(*workspace, pipeline.toStdString(), table.toStdString());
                o.ok = true;
                o.what = r.what;
                o.message = QString::fromStdString(r.message);
                o.runningPid = r.runningPid;
            } catch (const std::exception &e) {
                o.message = describe(e);
            }
            mailbox->post([=](BackfillRunner &self) { self.onDone(job, action, statePath, pipeline, table, o); });
        });
    return job;
}

void BackfillRunner::onDone(std::uint64_t job, Action action, const QString &statePath, const QString &pipeline,
                            const QString &table, const Outcome &outcome)
{
    m_busy.erase({pipeline, table});
    // Another workspace is shown now: what happened to this one's table means nothing here.
    if (statePath != m_engine->statePath())
        return;
    QString message = outcome.message;
    if (outcome.ok && m_engine->agent()) {
        message += m_engine->state() == EngineBridge::State::Running
                       ? tr("; the agent's sync takes it within a second")
                       : tr("; the agent's sync takes it when its engine runs again");
    } else if (outcome.ok && outcome.runningPid) {
        message += tr("; the running sync takes it within a second");
    } else if (outcome.ok && action == Action::Request && outcome.what != core::RebackfillRequest::What::InFlight) {
        // Nothing streams the pipeline: the request (or the unfinished initial load) would wait
        // for the next sync. Start ours, unless it is already on its way.
        if (m_engine->canStart()) {
            m_engine->start();
            message += tr("; the sync was not running, so it was started");
        } else if (m_engine->state() != EngineBridge::State::Stopped) {
            message += tr("; the sync takes it once the pipeline streams");
        }
    }
    emit finished(job, action, pipeline, table, outcome.ok, message);
}

} // namespace driftless::ui
