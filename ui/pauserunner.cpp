#include "ui/pauserunner.h"

#include "ui/doorjobs.h"
#include "ui/enginebridge.h"
#include "ui/enginedoor.h"

#include <string>

namespace driftless::ui {

namespace {
/// A whole pipeline's outcome in one line: a pipeline may have hundreds of tables.
QString pipelineOutcome(const QString &pipeline, bool pause, int changed, int total)
{
    if (changed == 0)
        return (pause ? PauseRunner::tr("Every table of %1 was paused already")
                      : PauseRunner::tr("No table of %1 was paused"))
            .arg(pipeline);
    const QString tables = changed == 1 ? PauseRunner::tr("1 table") : PauseRunner::tr("%1 tables").arg(changed);
    QString text = (pause ? PauseRunner::tr("Paused pipeline %1 (%2)") : PauseRunner::tr("Resumed pipeline %1 (%2)"))
                       .arg(pipeline, tables);
    if (const int others = total - changed; others == 1)
        text += pause ? PauseRunner::tr("; 1 was paused already") : PauseRunner::tr("; 1 was not paused");
    else if (others > 1)
        text +=
            (pause ? PauseRunner::tr("; %1 were paused already") : PauseRunner::tr("; %1 were not paused")).arg(others);
    return text;
}
} // namespace

PauseRunner::PauseRunner(EngineBridge *engine, QObject *parent)
    : QObject(parent), m_engine(engine), m_jobs(new DoorJobs(engine, this))
{
}

bool PauseRunner::busy(const QString &pipeline, const QString &table) const
{
    return m_jobs->busy({pipeline, table}) || busy(pipeline);
}

bool PauseRunner::busy(const QString &pipeline) const
{
    return m_jobs->busy({pipeline, QString()});
}

std::uint64_t PauseRunner::setPaused(const QString &pipeline, const QString &table, bool pause)
{
    if (table.isEmpty() || busy(pipeline))
        return 0;
    return post(pipeline, table, pause);
}

std::uint64_t PauseRunner::setPipelinePaused(const QString &pipeline, bool pause)
{
    return post(pipeline, QString(), pause);
}

std::uint64_t PauseRunner::post(const QString &pipeline, const QString &table, bool pause)
{
    nlohmann::json body = {{"pipeline", pipeline.toStdString()}};
    if (!table.isEmpty())
        body["tables"] = nlohmann::json::array({table.toStdString()});
    return m_jobs->post(
        {pipeline, table}, pause ? QStringLiteral("/api/v1/pause") : QStringLiteral("/api/v1/resume"), body,
        [&](std::uint64_t job) { emit started(job, pipeline, table, pause); },
        [this, pipeline, table, pause](std::uint64_t job, const EngineDoor::Reply &r) {
            QString message = r.error;
            if (r.ok() && table.isEmpty()) {
                int changed = 0, total = 0;
                for (const auto &c : r.body.value("changes", nlohmann::json::array())) {
                    ++total;
                    changed += c.value("changed", false) ? 1 : 0;
                }
                message = pipelineOutcome(pipeline, pause, changed, total);
            } else if (r.ok()) {
                for (const auto &c : r.body.value("changes", nlohmann::json::array()))
                    message += (message.isEmpty() ? QString() : QStringLiteral(" ")) +
                               QString::fromStdString(c.value("message", std::string()));
            }
            m_engine->refresh();
            emit finished(job, pipeline, table, pause, r.ok(), message);
        });
}

} // namespace driftless::ui
