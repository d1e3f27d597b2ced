#pragma once

#include "core/db/mysqlconnection.h"

#include <string>
#include <vector>

namespace driftless::test {

/// A MariaDB server of one test's own (mariadb-install-db into a fresh folder, its own socket and
/// temporary folder, binlog ROW with FULL images and metadata, GTID strict mode, log_slave_updates),
/// for tests that fail a source over, promote a replica or restore a server: the shared server
/// (servers.sh) must never go away under other tests. Every instance names its binary logs
/// `binlog.NNNNNN`, as a default install does, so a replica's files carry the primary's names.
///
/// The user `driftless` gets the shared test server's password (the tests' MYSQL_PWD serves
/// both), created without being written to the binary log, so a replica does not replay it.
/// Run as root, mariadbd runs as `mysql`. Stopped (SIGKILL) and removed in the destructor.
/// Throws std::runtime_error when the server does not start, with its log.
class ThrowawayMariadb {
public:
    explicit ThrowawayMariadb(unsigned serverId);
    ~ThrowawayMariadb();
    ThrowawayMariadb(const ThrowawayMariadb &) = delete;
    ThrowawayMariadb &operator=(const ThrowawayMariadb &) = delete;

    int port() const { return m_port; }
    unsigned serverId() const { return m_serverId; }
    /// A `mysql://` DSN for database `db` on 127.0.0.1:`port` (another server's port, after a
    /// switchover, is the point).
    static std::string dsnAt(int port, const std::string &db);
    std::string dsn(const std::string &db) const { return dsnAt(m_port, db); }
    core::MysqlConnection connect(const std::string &db = "") const;
    void exec(const std::string &sql) const;
    std::string scalar(const std::string &sql) const;

    /// Replicates from `primary` by GTID (CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos).
    void replicateFrom(const ThrowawayMariadb &primary);
    /// Waits (up to `seconds`) until this replica has applied everything `primary` has now.
    void catchUpWith(const ThrowawayMariadb &primary, int seconds = 120);
    /// STOP SLAVE; RESET SLAVE ALL: the replica is a primary of its own from here on.
    void promote();
    /// Stops the server: SIGKILL when `crash`, else a clean shutdown.
    void stop(bool crash);
    /// Starts it again on `port` (0: the port it had), its data as it was.
    void start(int port = 0);

private:
    void launch();

    std::string m_dir;
    unsigned m_serverId = 0;
    int m_port = 0;
    int m_pid = 0;
};

} // namespace driftless::test
