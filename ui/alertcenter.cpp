#include "ui/alertcenter.h"

#include "core/base/clock.h"

#include <algorithm>
#include <tuple>

namespace driftless::ui {

namespace {

bool sameAlerts(const std::vector<core::Alert> &a, const std::vector<core::Alert> &b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const core::Alert &x, const core::Alert &y) {
        return x.id == y.id && x.level == y.level && x.message == y.message && x.action == y.action &&
               x.sinceMs == y.sinceMs;
    });
}

} // namespace

AlertCenter::AlertCenter(QObject *parent) : QObject(parent) {}

void AlertCenter::reset(const QString &statePath)
{
    m_path = statePath;
    m_workspace.reset();
    m_tables.clear();
    m_sources.clear();
    m_activity.clear();
    m_tracker = {};
}

void AlertCenter::setSnapshot(const EngineSnapshot &snapshot)
{
    if (snapshot.statePath != m_path)
        reset(snapshot.statePath);
    // An unreadable file keeps the last workspace and tables: what was wrong still is.
    if (!snapshot.workspace)
        return update(snapshot.takenAtMs);
    m_workspace = snapshot.workspace;
    m_tables = snapshot.tables;
    update(snapshot.takenAtMs);
}

void AlertCenter::setSlotSample(const SlotSample &sample)
{
    if (sample.statePath != m_path)
        return;
    if (sample.takenAtMs == 0) // cleared for another workspace; nothing read yet
        return;
    m_sources = sample.sources;
    m_activity.observe(m_sources, sample.takenAtMs);
    if (!m_workspace)
        m_workspace = sample.workspace;
    update(sample.takenAtMs);
}

void AlertCenter::update(std::int64_t nowMs)
{
    if (nowMs == 0)
        nowMs = core::wallClockMs();
    std::vector<core::Alert> now;
    if (m_workspace)
        now = core::computeAlerts(*m_workspace, m_tables, m_sources, m_activity.inactiveSince(), nowMs);
    const auto change = m_tracker.update(std::move(now), nowMs);
    auto open = m_tracker.open();
    std::stable_sort(open.begin(), open.end(), [](const core::Alert &a, const core::Alert &b) {
        return std::tuple(a.level != core::Level::Error, a.sinceMs, a.id) <
               std::tuple(b.level != core::Level::Error, b.sinceMs, b.id);
    });
    if (!sameAlerts(open, m_alerts)) {
        m_alerts = std::move(open);
        emit alertsChanged(m_alerts);
    }
    if (!change.opened.empty())
        emit alertsOpened(change.opened);
}

} // namespace driftless::ui
