#include "ui/backfillrunner.h"
#include "ui/enginebridge.h"
#include "ui/enginedoor.h"

#include "core/engine/resnapshot.h"

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

BackfillRunner::BackfillRunner(EngineBridge *engine, QObject *parent) : QObject(parent), m_engine(engine)
{
    // The door of the engine shown before goes with its replies: nothing of it is on its way.
    connect(m_engine, &EngineBridge::statePathChanged, this, [this] { m_busy.clear(); });
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
    if (!workspace || !m_engine->door() || busy(pipeline, table))
        return 0;
    const std::uint64_t job = ++m_lastJob;
    m_busy.insert({pipeline, table});
    emit started(job, action, pipeline, table);
    // The engine's door takes the request; the engine (the app's or an agent's) talks to the databases.
    const nlohmann::json body = {
        {"pipeline", pipeline.toStdString()}, {"table", table.toStdString()}, {"cancel", action == Action::Cancel}};
    m_engine->door()->post(
        QStringLiteral("/api/v1/backfill"), body, this,
        [this, job, action, statePath = m_engine->statePath(), pipeline, table](const EngineDoor::Reply &r) {
            Outcome o;
            o.ok = r.ok();
            o.message = r.ok() ? QString::fromStdString(r.body.value("message", std::string())) : r.error;
            if (r.ok() && r.body.value("what", std::string()) == "in_flight")
                o.what = core::RebackfillRequest::What::InFlight;
            if (r.ok() && r.body.contains("streaming_pid") && r.body["streaming_pid"].is_number_integer())
                o.runningPid = r.body["streaming_pid"].get<int>();
            m_engine->refresh();
            onDone(job, action, statePath, pipeline, table, o);
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
    if (outcome.ok && m_engine->remote()) {
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
