#include "ui/pauserunner.h"

#include "ui/doorjobs.h"
#include "ui/enginebridge.h"
#include "ui/enginedoor.h"

#include <string>

namespace driftless::ui {

PauseRunner::PauseRunner(EngineBridge *engine, QObject *parent)
    : QObject(parent), m_engine(engine), m_jobs(new DoorJobs(engine, this))
{
}

bool PauseRunner::busy(const QString &pipeline, const QString &table) const
{
    return m_jobs->busy({pipeline, table});
}

std::uint64_t PauseRunner::setPaused(const QString &pipeline, const QString &table, bool pause)
{
    const nlohmann::json body = {{"pipeline", pipeline.toStdString()}, {"tables", {table.toStdString()}}};
    return m_jobs->post(
        {pipeline, table}, pause ? QStringLiteral("/api/v1/pause") : QStringLiteral("/api/v1/resume"), body,
        [&](std::uint64_t job) { emit started(job, pipeline, table, pause); },
        [this, pipeline, table, pause](std::uint64_t job, const EngineDoor::Reply &r) {
            QString message = r.error;
            if (r.ok())
                for (const auto &c : r.body.value("changes", nlohmann::json::array()))
                    message += (message.isEmpty() ? QString() : QStringLiteral(" ")) +
                               QString::fromStdString(c.value("message", std::string()));
            m_engine->refresh();
            emit finished(job, pipeline, table, pause, r.ok(), message);
        });
}

} // namespace driftless::ui
