#pragma once

#include "core/model/cdcposition.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct st_mysql;
struct st_mariadb_rpl;
struct st_mariadb_rpl_event;

namespace driftless::core {

/// How to reach a MariaDB/MySQL source for the binlog stream.
struct MysqlReplicationOptions {
    std::string host = "127.0.0.1";
    unsigned port = 3306;
    std::string user;
    std::string password;   ///< kept only as long as the connect call needs it
    std::string unixSocket; ///< used instead of host/port when set
    bool tls = false;       ///< require TLS
    std::string tlsCa;      ///< CA file: with it the server certificate and host name are verified
    /// This reader's identity among the source's replicas. Unique per pipeline and never equal to
    /// a real replica's: the server drops the older of two dumps with the same id.
    std::uint32_t serverId = 0;
    std::chrono::milliseconds heartbeat{1000}; ///< idle heartbeat: bounds how long next() blocks
    std::chrono::seconds readTimeout{30};      ///< no byte for this long: the connection is dead
    std::string reportHost = "driftless";      ///< shown in SHOW SLAVE HOSTS
};

/// Where the binlog stream starts: a file and offset (a transaction boundary the decoder
/// reported), or a MariaDB GTID state ("0-1-42" or "0-1-42,1-2-7"), which starts after it.
struct MysqlBinlogStart {
    binlog::Position position;
    std::string gtidState;
};

/// A binlog dump connection on MariaDB Connector/C (COM_BINLOG_DUMP): the server pushes raw
/// events, `next()` hands them over one by one for binlog::Decoder.
///
/// Usage: construct (connects and checks log_bin, binlog_format=ROW, binlog_row_metadata=FULL),
/// optionally read `collationCharsets()` for the decoder, then `start()`, then call `next()` in a
/// loop; it returns at least once per heartbeat period while the source is idle.
///
/// Thread affinity: one thread, except `stop()`, which any thread may call while the owner is
/// blocked in `next()` (it shuts the socket down; `next()` then returns nullopt). The object
/// must outlive that call. Failure: Error. Purged binlogs, a missing REPLICATION SLAVE
/// privilege, binary logging off, a server_id already in use and a dump dropped because another
/// reader took the same server_id are permanent with what to do; lost connections transient.
class MysqlReplicationConnection {
public:
    explicit MysqlReplicationConnection(const MysqlReplicationOptions &options);
    ~MysqlReplicationConnection();
    MysqlReplicationConnection(const MysqlReplicationConnection &) = delete;
    MysqlReplicationConnection &operator=(const MysqlReplicationConnection &) = delete;

    /// Collation id → character set name, from information_schema.COLLATIONS (before start()).
    std::vector<std::pair<std::uint32_t, std::string>> collationCharsets();
    /// The server's current binlog end (SHOW MASTER STATUS), before start().
    binlog::Position currentPosition();
    std::string serverVersion() const;
    /// The server's id for this connection (for KILL from another connection).
    std::uint64_t connectionId() const;

    /// Registers as a replica with options.serverId and sends the dump command. Refuses when
    /// another replica is registered with the same server_id.
    void start(const MysqlBinlogStart &start);

    /// The next event's raw bytes (header, body, checksum), valid until the next call; nullopt
    /// once stop() was called. Throws Error when the server ends the stream.
    std::optional<std::string_view> next();

    /// Makes a blocked or later next() return nullopt. Thread-safe, idempotent.
    void stop();

private:
    [[noreturn]] void throwStreamError();
    void exec(const std::string &sql);
    std::vector<std::vector<std::optional<std::string>>> query(const std::string &sql);

    MysqlReplicationOptions m_options;
    st_mysql *m_mysql = nullptr;
    st_mariadb_rpl *m_rpl = nullptr;
    st_mariadb_rpl_event *m_event = nullptr;
    int m_socket = -1;
    std::atomic<bool> m_stopping{false};
    bool m_started = false;
    std::string m_startDescription;
};

/// Validates a MariaDB GTID state: comma-separated domain-server-sequence triples of digits.
bool isValidGtidState(std::string_view state);

} // namespace driftless::core
