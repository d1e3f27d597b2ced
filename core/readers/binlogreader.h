#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace driftless::core {

class MysqlReplicationConnection;

/// Reads a started binlog dump connection on a thread of its own, up to about `aheadBytes` of
/// events ahead of the apply thread (and as much again taken by it, being decoded), as the Postgres stream's reader
/// does: the server's next batch travels while the last one is merged into the target. The apply thread decodes, in
/// order, what next() hands it; nothing is skipped or reordered.
///
/// stop() (or destruction) stops the connection and joins the thread. What the reading threw (the
/// server ended the stream, a purged position) is thrown by next() once the events read before it
/// are consumed.
class BinlogReader {
public:
    BinlogReader(MysqlReplicationConnection &connection, size_t aheadBytes);
    ~BinlogReader();
    BinlogReader(const BinlogReader &) = delete;
    BinlogReader &operator=(const BinlogReader &) = delete;

    /// The next event's raw bytes, valid until the next call; nullopt once the connection was
    /// stopped. Blocks while none is read.
    std::optional<std::string_view> next();
    /// Makes a blocked or later next() return nullopt once the events read are consumed, and
    /// the reading end. Thread-safe, idempotent.
    void stop();

private:
    void read();

    MysqlReplicationConnection &m_connection;
    const size_t m_aheadBytes;
    mutable std::mutex m_mutex;
    std::condition_variable m_readable, m_writable;
    std::deque<std::string> m_events; ///< read, not yet taken (guarded by m_mutex)
    size_t m_bytes = 0;               ///< their size
    bool m_ended = false;             ///< the reading ended (stopped, or m_failure)
    std::exception_ptr m_failure;
    std::deque<std::string> m_taken; ///< the apply thread's: taken at once, handed out one by one
    std::string m_current;           ///< the event next() returned last
    std::thread m_thread;
};

} // namespace driftless::core
