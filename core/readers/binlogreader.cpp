#include "core/readers/binlogreader.h"

#include "core/db/mysqlreplication.h"

namespace driftless::core {

BinlogReader::BinlogReader(MysqlReplicationConnection &connection, size_t aheadBytes)
    : m_connection(connection), m_aheadBytes(aheadBytes ? aheadBytes : 1)
{
    m_thread = std::thread([this] { read(); });
}

BinlogReader::~BinlogReader()
{
    stop();
    {
        // A reader waiting for room gives up: nobody takes what it holds.
        std::lock_guard lock(m_mutex);
        m_ended = true;
    }
    m_writable.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

void BinlogReader::stop()
{
    m_connection.stop();
}

void BinlogReader::read()
{
    try {
        for (;;) {
            auto raw = m_connection.next();
            std::unique_lock lock(m_mutex);
            if (!raw || m_ended)
                break;
            // One event always fits, however large: a row image can exceed the whole budget.
            m_writable.wait(lock, [&] { return m_ended || m_events.empty() || m_bytes + raw->size() <= m_aheadBytes; });
            if (m_ended)
                break;
            m_bytes += raw->size();
            m_events.emplace_back(*raw);
            m_readable.notify_one();
        }
    } catch (...) {
        std::lock_guard lock(m_mutex);
        m_failure = std::current_exception();
    }
    {
        std::lock_guard lock(m_mutex);
        m_ended = true;
    }
    m_readable.notify_all();
}

std::optional<std::string_view> BinlogReader::next()
{
    if (m_taken.empty()) {
        std::unique_lock lock(m_mutex);
        m_readable.wait(lock, [&] { return m_ended || !m_events.empty(); });
        if (m_events.empty()) {
            if (m_failure)
                std::rethrow_exception(m_failure);
            return std::nullopt;
        }
        // Everything read so far at once: one lock for many small events.
        m_taken.swap(m_events);
        m_bytes = 0;
        lock.unlock();
        m_writable.notify_one();
    }
    m_current = std::move(m_taken.front());
    m_taken.pop_front();
    return std::string_view(m_current);
}

} // namespace driftless::core
