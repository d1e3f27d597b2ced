#include "ui/recoverrunner.h"
#include "ui/doorjobs.h"
#include "ui/enginedoor.h"

#include <string>

namespace driftless::ui {

RecoverRunner::RecoverRunner(EngineBridge *engine, QObject *parent)
    : QObject(parent), m_engine(engine), m_jobs(new DoorJobs(engine, this))
{
    connect(m_engine, &EngineBridge::stateChanged, this, &RecoverRunner::onEngineState);
    // Another workspace is shown: a restart owed to the one before is not this one's.
    connect(m_engine, &EngineBridge::statePathChanged, this, [this] { m_restart.reset(); });
}

bool RecoverRunner::busy(const QString &pipeline) const
{
    return m_jobs->busy({pipeline, QString()}) || (m_restart && m_restart->pipeline == pipeline);
}

std::uint64_t RecoverRunner::recover(const QString &pipeline)
{
    if (busy(pipeline))
        return 0;
    // The door runs core::requestRecovery() where the engine runs: on a pool thread for the
    // app's own engine (it talks to the target), on the agent for an agent's.
    return m_jobs->post(
        {pipeline, QString()}, QStringLiteral("/api/v1/recover"), {{"pipeline", pipeline.toStdString()}},
        [&](std::uint64_t job) { emit started(job, pipeline); },
        [this, pipeline](std::uint64_t job, const EngineDoor::Reply &r) {
            QStringList lines;
            if (r.ok())
                for (const auto &l : r.body.value("lines", nlohmann::json::array()))
                    lines << QString::fromStdString(l.get<std::string>());
            else
                lines << r.error;
            onDone(job, pipeline, r.ok(), lines);
        });
}

void RecoverRunner::onDone(std::uint64_t job, const QString &pipeline, bool ok, QStringList lines)
{
    const auto state = m_engine->state();
    if (!ok) {
        lines << tr("Nothing was changed and the sync was left as it was. Fix the cause and press Recover\u2026 again "
                    "(driftless-cli recover %1 where the workspace is).")
                     .arg(pipeline);
    } else if (m_engine->remote()) {
        lines << (state == EngineBridge::State::Running
                      ? tr("The agent's sync takes the request when it next starts the pipeline (within 5 "
                           "minutes); Stop Sync and Start Sync to take it now.")
                      : tr("Start the agent's sync to bring the tables back."));
    } else if (state == EngineBridge::State::Running || state == EngineBridge::State::Starting) {
        // The request is read at the pipeline's start; the app's engine starts all of its
        // pipelines together, so it stops (between batches) and starts again.
        m_restart = Restart{job, m_engine->statePath(), pipeline, lines};
        m_engine->stop();
        return;
    } else {
        lines << tr("The sync is stopped: Start Sync brings the tables back.");
    }
    m_engine->refresh();
    emit finished(job, pipeline, ok, lines);
}

void RecoverRunner::onEngineState(EngineBridge::State state)
{
    if (state != EngineBridge::State::Stopped || !m_restart)
        return;
    Restart r = *m_restart;
    m_restart.reset();
    if (r.statePath != m_engine->statePath())
        return;
    if (m_engine->canStart()) {
        m_engine->start();
        r.lines << tr("The sync was restarted so that pipeline %1 takes the request now (the app restarts its "
                      "whole engine: every pipeline stopped after its batches in flight and started again).")
                       .arg(r.pipeline);
    } else {
        r.lines << tr("The sync could not be started again: Start Sync brings the tables back.");
    }
    emit finished(r.job, r.pipeline, true, r.lines);
}

} // namespace driftless::ui
