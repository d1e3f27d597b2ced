#pragma once

#include "core/model/tlsstate.h"

#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

class MysqlConnection;

/// A server setting binlog CDC needs that is not as it must be, with the exact fix.
struct BinlogProblem {
    std::string setting; ///< log_bin, binlog_format, ...
    std::string found;   ///< its value now
    std::string fix;     ///< what to set, in the server's own syntax (MariaDB and MySQL differ)
};

/// What "Test connection" and the doctor found on a MySQL/MariaDB server.
struct MysqlProbe {
    bool connected = false;

    // When connected.
    std::string server;  ///< user@host:port/database
    std::string version; ///< VERSION(), e.g. 10.11.6-MariaDB-0+deb12u1
    bool mariadb = false;
    std::string user; ///< CURRENT_USER()
    std::string serverId;
    /// Binlog settings CDC needs (log_bin, ROW format, FULL row image and metadata, a retention
    /// long enough to survive a weekend): empty when the server is ready.
    std::vector<BinlogProblem> binlog;
    std::string retention;        ///< how long binlogs are kept, in words ("7 days", "forever")
    bool canReplicate = false;    ///< REPLICATION SLAVE (or ALL) on *.*
    bool canReadPosition = false; ///< BINLOG MONITOR / REPLICATION CLIENT (or ALL): SHOW MASTER STATUS
    int tables = 0;               ///< base tables in the DSN's database (0 without one)
    TlsState tls;                 ///< what the session got (Ssl_cipher, Ssl_version) and the ssl-mode
    bool loopback = false;        ///< the server is on this machine
    std::string tlsChosenBy;      ///< dsn or default
    /// Off this machine and not verified: what is wrong and the DSN change that fixes it.
    std::string tlsWarning, tlsFix;

    // When not connected.
    std::string error;
    std::string code;
    std::string hint;
    bool transient = false;

    /// `user` as a GRANT names it: 'name'@'host' (CURRENT_USER() reads name@host).
    std::string grantee() const;
    /// One sentence per obstacle with its fix; empty when nothing stands in the way.
    std::vector<std::string> advice() const;
};

/// The binlog settings of the connected server that CDC needs and does not have.
std::vector<BinlogProblem> binlogProblems(MysqlConnection &conn, std::string *retention = nullptr);

/// Connects to `dsn` (password: `password` when given, else the usual sources) and reads the
/// server's version, binlog settings and the user's replication rights. Blocking; call it off
/// the UI thread. Never throws for a refusal: those land in error/code/hint.
MysqlProbe probeMysql(const std::string &dsn, const std::optional<std::string> &password = std::nullopt);

} // namespace driftless::core
