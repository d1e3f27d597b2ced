#include "core/readers/binlogreader.h"

#include "core/db/mysqlreplication.h"

#include <variant>

namespace driftless::core {

namespace {

/// About how much memory a decoded event holds: its row images dominate (a Value per column,
/// and the text of those longer than a string keeps inline).
size_t decodedBytes(const BinlogEvent &item, size_t rawSize)
{
    const auto *rows = std::get_if<binlog::Rows>(&item.event.body);
    if (!rows)
        return rawSize;
    size_t bytes = sizeof(BinlogEvent) + rows->rows.capacity() * sizeof(binlog::RowChange);
    const auto image = [&bytes](const binlog::Image &img) {
        bytes += img.capacity() * sizeof(binlog::Value);
        for (const auto &v : img)
            if (v.text.capacity() > 15)
                bytes += v.text.capacity() + 1;
    };
    for (const auto &change : rows->rows) {
        image(change.before);
        image(change.after);
    }
    return bytes;
}

} // namespace

BinlogReader::BinlogReader(MysqlReplicationConnection &connection, binlog::Decoder &decoder, size_t aheadBytes)
    : m_connection(connection), m_decoder(decoder), m_aheadBytes(aheadBytes ? aheadBytes : 1)
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
            if (!raw)
                break;
            BinlogEvent item;
            item.start = m_decoder.position();
            try {
                item.event = m_decoder.decode(*raw);
                // Where the event starts in its file: after a start by GTID the server skips to
                // it, so the end of the event before it is not that.
                if (item.event.header.logPos >= raw->size() && !item.event.header.artificial())
                    item.start.offset = item.event.header.logPos - raw->size();
                item.end = m_decoder.position();
                item.committedGtid = m_decoder.committedGtid();
            } catch (...) {
                item.failure = std::current_exception();
            }
            const bool failed = static_cast<bool>(item.failure);
            const size_t size = decodedBytes(item, raw->size());
            std::unique_lock lock(m_mutex);
            if (m_ended)
                break;
            // One event always fits, however large: a row image can exceed the whole budget.
            m_writable.wait(lock, [&] { return m_ended || m_events.empty() || m_bytes + size <= m_aheadBytes; });
            if (m_ended)
                break;
            m_bytes += size;
            m_events.push_back(std::move(item));
            m_readable.notify_one();
            if (failed)
                break; // nothing after an event that could not be decoded
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

BinlogEvent *BinlogReader::next()
{
    if (m_taken.empty()) {
        std::unique_lock lock(m_mutex);
        m_readable.wait(lock, [&] { return m_ended || !m_events.empty(); });
        if (m_events.empty()) {
            if (m_failure)
                std::rethrow_exception(m_failure);
            return nullptr;
        }
        // Everything read so far at once: one lock for many small events.
        m_taken.swap(m_events);
        m_bytes = 0;
        lock.unlock();
        m_writable.notify_one();
    }
    m_current = std::move(m_taken.front());
    m_taken.pop_front();
    return &m_current;
}

} // namespace driftless::core
