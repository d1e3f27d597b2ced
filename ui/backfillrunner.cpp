#include "ui/backfillrunner.h"
#include "ui/doorjobs.h"
#include "ui/enginebridge.h"
#include "ui/enginedoor.h"

#include "core/engine/commands/resnapshot.h"

#include <optional>

namespace driftless::ui {

/// What a worker found: a plain value posted back to the UI thread.
struct BackfillRunner::Outcome {
    bool ok = false;
    core::RebackfillRequest::What what = core::RebackfillRequest::What::Requested;
    QString message;
    std::optional<int> runningPid;
};

BackfillRunner::BackfillRunner(EngineBridge *engine, QObject *parent)
    : QObject(parent), m_engine(engine), m_jobs(new DoorJobs(engine, this))
{
}

bool BackfillRunner::busy(const QString &pipeline, const QString &table) const
{
    return m_jobs->busy({pipeline, table});
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
    // The engine's door takes the request; the engine (the app's or an agent's) talks to the databases.
    const nlohmann::json body = {
        {"pipeline", pipeline.toStdString()}, {"table", table.toStdString()}, {"cancel", action == Action::Cancel}};
    return m_jobs->post(
        {pipeline, table}, QStringLiteral("/api/v1/backfill"), body,
        [&](std::uint64_t job) { emit started(job, action, pipeline, table); },
        [this, action, pipeline, table](std::uint64_t job, const EngineDoor::Reply &r) {
            Outcome o;
            o.ok = r.ok();
            o.message = r.ok() ? QString::fromStdString(r.body.value("message", std::string())) : r.error;
            if (r.ok() && r.body.value("what", std::string()) == "in_flight")
                o.what = core::RebackfillRequest::What::InFlight;
            if (r.ok() && r.body.contains("streaming_pid") && r.body["streaming_pid"].is_number_integer())
                o.runningPid = r.body["streaming_pid"].get<int>();
            m_engine->refresh();
            onDone(job, action, pipeline, table, o);
        });
}

void BackfillRunner::onDone(std::uint64_t job, Action action, const QString &pipeline, const QString &table,
                            const Outcome &outcome)
{
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
