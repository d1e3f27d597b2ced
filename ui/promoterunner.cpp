#include "ui/promoterunner.h"
#include "ui/enginedoor.h"

#include <string>

namespace driftless::ui {

/// What the worker found: a plain value posted back to the UI thread.
struct PromoteRunner::Outcome {
    bool ok = false;
    QStringList lines;
};

PromoteRunner::PromoteRunner(EngineBridge *engine, QObject *parent) : QObject(parent), m_engine(engine)
{
    connect(m_engine, &EngineBridge::stateChanged, this, &PromoteRunner::onEngineState);
    // The door of the engine shown before goes with its replies: nothing of it is on its way.
    connect(m_engine, &EngineBridge::statePathChanged, this, [this] {
        m_running = false;
        m_pending.reset();
    });
}

std::uint64_t PromoteRunner::promote(const QString &pipeline, const QStringList &tables)
{
    if (busy() || m_engine->statePath().isEmpty() || !m_engine->snapshot().workspace)
        return 0;
    Job job{++m_lastJob, m_engine->statePath(), pipeline, tables, false};
    emit started(job.id, pipeline, tables);
    const auto state = m_engine->state();
    if (m_engine->remote() || state == EngineBridge::State::Stopped) {
        // An agent's engine starts again with the promoted tables by itself.
        launch(job);
        return job.id;
    }
    // The running engine would go on syncing the table by its cursor and writing cursor
    // checkpoints: let it finish its batches first, then promote, then start it again.
    job.restart = state != EngineBridge::State::Stopping;
    m_pending = job;
    m_engine->stop();
    return job.id;
}

void PromoteRunner::onEngineState(EngineBridge::State state)
{
    if (state != EngineBridge::State::Stopped || !m_pending)
        return;
    const Job job = *m_pending;
    m_pending.reset();
    launch(job);
}

void PromoteRunner::launch(const Job &job)
{
    EngineDoor *door = m_engine->door();
    if (!door || job.statePath != m_engine->statePath())
        return;
    m_running = true;
    nlohmann::json names = nlohmann::json::array();
    for (const QString &t : job.tables)
        names.push_back(t.toStdString());
    door->post(QStringLiteral("/api/v1/promote"), {{"pipeline", job.pipeline.toStdString()}, {"tables", names}}, this,
               [this, job](const EngineDoor::Reply &r) {
                   Outcome o;
                   o.ok = r.ok();
                   if (r.ok())
                       for (const auto &l : r.body.value("lines", nlohmann::json::array()))
                           o.lines << QString::fromStdString(l.get<std::string>());
                   else
                       o.lines << r.error;
                   onDone(job, o);
               });
}

void PromoteRunner::onDone(const Job &job, const Outcome &outcome)
{
    m_running = false;
    // Another workspace is shown now: what happened to this one means nothing here.
    if (job.statePath != m_engine->statePath())
        return;
    QStringList lines = outcome.lines;
    if (m_engine->remote()) {
        m_engine->refresh();
        if (outcome.ok)
            lines << (m_engine->state() == EngineBridge::State::Running
                          ? tr("The agent's sync starts again with the stored workspace: it creates the slot and "
                               "loads the table now.")
                          : tr("Start the agent's sync to create the slot and load the table."));
    } else if (job.restart && m_engine->canStart()) {
        // Whether or not the promotion took, the sync that was running runs again.
        m_engine->start();
        if (outcome.ok)
            lines << tr("The sync was restarted with the stored workspace: it creates the slot and loads the "
                        "table now.");
    } else {
        m_engine->refresh();
        if (outcome.ok)
            lines << tr("Start the sync to create the slot and load the table.");
    }
    emit finished(job.id, job.pipeline, job.tables, outcome.ok, lines);
}

} // namespace driftless::ui
