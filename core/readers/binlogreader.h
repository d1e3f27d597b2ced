#pragma once

#include "core/readers/binlog/binlogdecoder.h"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

namespace driftless::core {

class MysqlReplicationConnection;

/// One binlog event as the reader thread decoded it, with where it stands in the binlog.
struct BinlogEvent {
    binlog::Event event;
    /// Where the event starts in its file: the end of the one before it, or (after the server
    /// skipped ahead to a GTID) the event's own start.
    binlog::Position start;
    /// The decoder's position after it: where a stream resumes once it is applied.
    binlog::Position end;
    /// The GTID of the last transaction that ended, as of this event (MariaDB).
    std::optional<binlog::MariaGtid> committedGtid;
    /// Decoding it failed (a malformed or unsupported event): the apply thread throws this, and
    /// nothing is read after it.
    std::exception_ptr failure;
};

/// Reads a started binlog dump connection and decodes its events on a thread of its own, up to
/// about `aheadBytes` of decoded events ahead of the apply thread (and as much again taken by it), as
/// the Postgres stream's reader does: the server's next batch travels and is decoded while the
/// last one is merged into the target (docs/cdc.md, "MariaDB"). Nothing is skipped or reordered.
///
/// `decoder` is the reader thread's from the constructor on: set its charsets and table filter
/// before (a filter that runs on the reader thread, so it must read only what does not change
/// while streaming). stop() (or destruction) stops the connection and joins the thread. What the
/// reading threw (the server ended the stream, a purged position) is thrown by next() once the
/// events read before it are consumed.
class BinlogReader {
public:
    BinlogReader(MysqlReplicationConnection &connection, binlog::Decoder &decoder, size_t aheadBytes);
    ~BinlogReader();
    BinlogReader(const BinlogReader &) = delete;
    BinlogReader &operator=(const BinlogReader &) = delete;

    /// The next event, valid until the next call; nullptr once the connection was stopped.
    /// Blocks while none is read.
    BinlogEvent *next();
    /// Makes a blocked or later next() return nullptr once the events read are consumed, and
    /// the reading end. Thread-safe, idempotent.
    void stop();

private:
    void read();

    MysqlReplicationConnection &m_connection;
    binlog::Decoder &m_decoder;
    const size_t m_aheadBytes;
    mutable std::mutex m_mutex;
    std::condition_variable m_readable, m_writable;
    std::deque<BinlogEvent> m_events; ///< read, not yet taken (guarded by m_mutex)
    size_t m_bytes = 0;               ///< about how much memory they hold
    bool m_ended = false;             ///< the reading ended (stopped, a decode failure, or m_failure)
    std::exception_ptr m_failure;
    std::deque<BinlogEvent> m_taken; ///< the apply thread's: taken at once, handed out one by one
    BinlogEvent m_current;           ///< the event next() returned last
    std::thread m_thread;
};

} // namespace driftless::core
