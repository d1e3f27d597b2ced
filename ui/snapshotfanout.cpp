#include "ui/snapshotfanout.h"

namespace driftless::ui {

SnapshotFanout::SnapshotFanout(std::size_t staggerFrom, QObject *parent) : QObject(parent), m_staggerFrom(staggerFrom)
{
    m_turn.setSingleShot(true);
    m_turn.setInterval(0);
    connect(&m_turn, &QTimer::timeout, this, &SnapshotFanout::next);
}

void SnapshotFanout::add(Consumer consumer)
{
    addInSteps([consumer = std::move(consumer)](const EngineSnapshot &s) {
        consumer(s);
        return true;
    });
}

void SnapshotFanout::addInSteps(Steps consumer)
{
    m_consumers.push_back(std::move(consumer));
    m_given.push_back(0);
}

void SnapshotFanout::deliver(const EngineSnapshot &snapshot)
{
    ++m_serial;
    if (snapshot.tables.size() < m_staggerFrom && !m_pending) {
        for (std::size_t i = 0; i < m_consumers.size(); ++i) {
            m_given[i] = m_serial;
            while (!m_consumers[i](snapshot)) {
            }
        }
        return;
    }
    // Shares the snapshot's lists: nothing is copied per table.
    m_pending = snapshot;
    if (!m_turn.isActive())
        m_turn.start();
}

void SnapshotFanout::next()
{
    if (!m_pending)
        return;
    // The next consumer, in order from where the last turn left off, that lacks the newest.
    for (std::size_t n = 0; n < m_consumers.size(); ++n) {
        const std::size_t i = (m_at + n) % m_consumers.size();
        if (m_given[i] == m_serial)
            continue;
        const std::uint64_t before = m_given[i], serial = m_serial;
        m_given[i] = serial;
        m_at = (i + 1) % m_consumers.size();
        // A copy: the consumer may run an event loop (a dialog) in which a newer one lands.
        const EngineSnapshot snapshot = *m_pending;
        if (!m_consumers[i](snapshot)) {
            // Not all of it yet: the same consumer takes the next step next turn.
            if (m_given[i] == serial)
                m_given[i] = before;
            m_at = i;
        }
        break;
    }
    bool done = true;
    for (std::uint64_t g : m_given)
        done = done && g == m_serial;
    if (done) {
        m_pending.reset();
        m_at = 0;
    } else if (!m_turn.isActive()) {
        m_turn.start();
    }
}

} // namespace driftless::ui
