#include "ui/slotmonitor.h"
#include "ui/enginebridge.h"
#include "ui/enginedoor.h"

#include "core/base/clock.h"
#include "core/engine/slots/slots.h"

#include <utility>

namespace driftless::ui {

SlotMonitor::SlotMonitor(EngineBridge *engine, QObject *parent) : QObject(parent), m_engine(engine)
{
    m_background.setInterval(kBackgroundIntervalMs);
    connect(&m_background, &QTimer::timeout, this, &SlotMonitor::refresh);
    m_background.start();
}

QString SlotMonitor::dropSql(const QString &slot)
{
    return QString::fromStdString(core::dropSlotSql(slot.toStdString()));
}

void SlotMonitor::setSnapshot(const EngineSnapshot &snapshot)
{
    if (snapshot.statePath != m_path) {
        // Another workspace: forget the previous one's slots at once, and every read of it.
        m_path = snapshot.statePath;
        m_workspace.reset();
        ++m_generation;
        // The previous engine's door goes with its replies: nothing of it is in flight.
        m_inFlight = false;
        m_again = false;
        m_sample = SlotSample{};
        m_sample.generation = m_generation;
        m_sample.statePath = m_path;
        emit sampleReady(m_sample);
    }
    // An unreadable file keeps the last workspace: its slots still exist.
    if (!snapshot.workspace || sameWorkspace(snapshot.workspace, m_workspace))
        return;
    m_workspace = snapshot.workspace;
    refresh();
}

void SlotMonitor::setHeld(bool held)
{
    m_held = held;
    if (!held && m_again)
        refresh();
}

void SlotMonitor::refresh()
{
    if (!m_workspace)
        return;
    if (m_inFlight || m_held) {
        m_again = true;
        return;
    }
    startRead();
}

void SlotMonitor::startRead()
{
    m_inFlight = true;
    m_again = false;
    // Reading again resets the background clock, so a page refreshing every 15 s is not
    // followed by a redundant background read.
    m_background.start();
    EngineDoor *door = m_engine->door();
    if (!door) {
        m_inFlight = false;
        return;
    }
    // Where the engine runs reads the slots near the databases: an agent's machine may reach
    // them when this one does not.
    door->request(
        "GET", QStringLiteral("/api/v1/slots?fresh=true&record=true"), {}, this,
        [this, generation = m_generation, path = m_path, workspace = m_workspace](const EngineDoor::Reply &r) {
            SlotSample s;
            s.generation = generation;
            s.statePath = path;
            s.workspace = workspace;
            if (r.ok()) {
                s.sources = core::sourcesFromJson(r.body);
            } else if (m_engine->remote() || !workspace) {
                core::SourceSlots failed;
                failed.source = "agent";
                failed.error = r.error.toStdString();
                s.sources.push_back(std::move(failed));
            } else {
                // The read failed as a whole: none of the Postgres sources' slots is known. Each
                // says so under its own name (the Slots page, the alerts, the dashboard's tiles),
                // never "?" and never "no slot yet".
                for (const auto &[name, e] : workspace->endpoints) {
                    if (e.kind != core::EndpointKind::Postgres)
                        continue;
                    core::SourceSlots failed;
                    failed.source = name;
                    failed.error = r.error.toStdString();
                    s.sources.push_back(std::move(failed));
                }
            }
            const auto at = r.ok() ? r.body.value("sampled_at_ms", nlohmann::json()) : nullptr;
            s.takenAtMs = at.is_number() ? at.get<std::int64_t>() : core::wallClockMs();
            onReadDone(std::move(s));
        });
}

void SlotMonitor::onReadDone(SlotSample sample)
{
    m_inFlight = false;
    if (sample.generation == m_generation) {
        m_sample = std::move(sample);
        emit sampleReady(m_sample);
    }
    if (m_again)
        refresh();
}

void SlotMonitor::dropSlot(const QString &source, const QString &slot)
{
    if (!m_workspace) {
        emit dropFinished(source, slot, tr("no workspace is open"));
        return;
    }
    const core::Endpoint *endpoint = m_workspace->endpoint(source.toStdString());
    if (!m_engine->remote() && (!endpoint || endpoint->kind != core::EndpointKind::Postgres)) {
        emit dropFinished(source, slot, tr("%1 is not a Postgres endpoint of this workspace").arg(source));
        return;
    }
    if (EngineDoor *door = m_engine->door())
        door->post(QStringLiteral("/api/v1/drop-slot"),
                   {{"source", source.toStdString()}, {"slot", slot.toStdString()}}, this,
                   [this, generation = m_generation, source, slot](const EngineDoor::Reply &r) {
                       onDropDone(generation, source, slot, r.error);
                   });
}

void SlotMonitor::onDropDone(std::uint64_t generation, const QString &source, const QString &slot, const QString &error)
{
    // The slot is gone (or not) whichever workspace is shown now; say so only if it is the same.
    if (generation != m_generation)
        return;
    emit dropFinished(source, slot, error);
    refresh();
}

} // namespace driftless::ui
