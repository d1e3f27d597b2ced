#include "ui/pauserunner.h"

#include "ui/enginebridge.h"
#include "ui/enginedoor.h"

#include <string>

namespace driftless::ui
{

PauseRunner::PauseRunner(EngineBridge *engine, QObject *parent) : QObject(parent), m_engine(engine)
{
    // The door of the engine shown before goes with its replies: nothing of it is on its way.
    connect(m_engine, &EngineBridge::statePathChanged, this, [this] { m_busy.clear(); });
}

bool PauseRunner::busy(const QString &pipeline, const QString &table) const
{
    return m_busy.count({pipeline, table}) > 0;
}

std::uint64_t PauseRunner::setPaused(const QString &pipeline, const QString &table, bool pause)
{
    const QString path = m_engine->statePath();
    const auto workspace = m_engine->snapshot().workspace;
    if (path.isEmpty() || !workspace || !m_engine->door() || busy(pipeline, table))
        return 0;
    const std::uint64_t job = ++m_lastJob;
    m_busy.insert({pipeline, table});
    emit started(job, pipeline, table, pause);
    const nlohmann::json body = {{"pipeline", pipeline.toStdString()}, {"tables", {table.toStdString()}}};
    m_engine->door()->post(pause ? QStringLiteral("/api/v1/pause") : QStringLiteral("/api/v1/resume"), body, this,
                           [this, job, path, pipeline, table, pause](const EngineDoor::Reply &r) {
                               m_busy.erase({pipeline, table});
                               // Another workspace is shown now: its pages do not hear of this one.
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

} // namespace driftless::ui
