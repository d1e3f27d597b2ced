#include "ui/liveobserver.h"

#include "core/base/clock.h"

namespace driftless::ui {

LiveObserver::LiveObserver(std::vector<core::EventRecord> initial, std::size_t capacity)
    : m_events(initial.begin(), initial.end()), m_capacity(capacity)
{
    while (m_events.size() > m_capacity)
        m_events.pop_back();
}

void LiveObserver::follow(const core::StateObserver &source)
{
    std::lock_guard lock(m_mutex);
    m_source = &source;
    m_stale = true;
    refreshLocked();
    m_changes.fetch_add(1, std::memory_order_relaxed);
}

void LiveObserver::unfollow()
{
    std::lock_guard lock(m_mutex);
    m_stale = true;
    refreshLocked();
    m_source = nullptr;
}

void LiveObserver::refreshLocked() const
{
    // Lock order is always ours, then the StateObserver's: it never calls us while it holds its
    // own lock.
    if (!m_stale || !m_source)
        return;
    m_tables = m_source->snapshot();
    m_stale = false;
}

void LiveObserver::markChanged()
{
    {
        std::lock_guard lock(m_mutex);
        m_stale = true;
    }
    m_changes.fetch_add(1, std::memory_order_relaxed);
}

void LiveObserver::tableState(const core::TableKey &, core::TableState, const std::string &,
                              std::optional<core::Progress>)
{
    markChanged();
}

void LiveObserver::batchApplied(const core::TableKey &, const core::ApplyResult &, const core::Checkpoint &,
                                std::optional<std::int64_t>)
{
    markChanged();
}

void LiveObserver::event(core::Level level, const core::TableKey &key, const std::string &kind,
                         const std::string &message)
{
    core::EventRecord e;
    e.tsMs = core::wallClockMs();
    e.level = level;
    e.pipeline = key.pipeline;
    e.table = key.table.display();
    e.kind = kind;
    e.message = message;
    addEvent(std::move(e));
}

void LiveObserver::addEvent(core::EventRecord e)
{
    std::lock_guard lock(m_mutex);
    m_events.push_front(std::move(e));
    while (m_events.size() > m_capacity)
        m_events.pop_back();
    m_changes.fetch_add(1, std::memory_order_relaxed);
}

std::vector<core::TableStatus> LiveObserver::tables() const
{
    std::lock_guard lock(m_mutex);
    refreshLocked();
    return m_tables;
}

std::vector<core::EventRecord> LiveObserver::events() const
{
    std::lock_guard lock(m_mutex);
    return {m_events.begin(), m_events.end()};
}

} // namespace driftless::ui
