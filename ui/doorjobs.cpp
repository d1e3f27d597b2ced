#include "ui/doorjobs.h"

#include "ui/enginebridge.h"

namespace driftless::ui {

DoorJobs::DoorJobs(EngineBridge *engine, QObject *parent) : QObject(parent), m_engine(engine)
{
    // The door of the engine shown before goes with its replies: nothing of it is on its way.
    connect(m_engine, &EngineBridge::statePathChanged, this, [this] { m_busy.clear(); });
}

std::uint64_t DoorJobs::post(const Key &key, const QString &path, const nlohmann::json &body,
                             const std::function<void(std::uint64_t job)> &started, Done done)
{
    const QString shown = m_engine->statePath();
    if (shown.isEmpty() || !m_engine->snapshot().workspace || !m_engine->door() || busy(key))
        return 0;
    const std::uint64_t job = ++m_lastJob;
    m_busy[key] = job;
    if (started)
        started(job);
    m_engine->door()->post(path, body, this,
                           [this, job, key, shown, done = std::move(done)](const EngineDoor::Reply &r) {
                               // A reply from an engine shown before must not free the key of this one's job.
                               if (auto it = m_busy.find(key); it != m_busy.end() && it->second == job)
                                   m_busy.erase(it);
                               // Another engine or workspace is shown now: what happened to this one means nothing
                               // here.
                               if (shown != m_engine->statePath())
                                   return;
                               done(job, r);
                           });
    return job;
}

} // namespace driftless::ui
