#pragma once

#include "core/db/pgconnection.h"
#include "core/db/sqlitedb.h"
#include "core/model/workspace.h"

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace driftless::core {

/// Idle Postgres connections (and SQLite handles) kept between the passes of scheduled tables.
///
/// A new connection costs the server a backend process and the client a SCRAM key derivation
/// (4,096 rounds of HMAC-SHA-256), plus a TLS handshake off the machine. With hundreds of tables
/// on short schedules, connecting twice per pass was most of the engine's CPU (B12's profile)
/// and a stream of logins on the source. Passes take a connection here and give it back when
/// they end well.
///
/// A connection is handed out again only when it is idle (no transaction, nothing pending),
/// still open (a server that ended it is noticed without a round trip), and was given back less
/// than `maxIdle` ago; at most `perKey` idle ones are kept per endpoint and application name.
/// Sessions keep the settings every Driftless session has (PgConnection); passes only use
/// transaction-scoped ones (SET LOCAL), so nothing leaks from one pass to the next.
/// Thread-safe.
class ConnectionPool {
public:
    explicit ConnectionPool(std::chrono::milliseconds maxIdle = std::chrono::seconds(30), std::size_t perKey = 4);

    /// An idle pooled connection, or a new one (connectPostgres) when none is.
    PgConnection take(const Endpoint &endpoint, const std::string &applicationName);
    /// Gives `conn` back; it is closed instead when it is not idle and open, or the pool is full.
    void give(const Endpoint &endpoint, const std::string &applicationName, PgConnection conn);

    /// The same for SQLite targets: an open handle has read the file's schema, which a new one
    /// parses again on its first statement (with hundreds of tables in one file, most of a small
    /// pass). Reused only outside a transaction.
    std::shared_ptr<SqliteDb> takeSqlite(const std::string &path);
    void giveSqlite(const std::string &path, std::shared_ptr<SqliteDb> db);

    /// Closes the connections idle for longer than `maxIdle` (take and give do it too; a caller
    /// with a clock calls this so idle sessions end even when nothing runs).
    void closeExpired();

    std::size_t idleCount() const;
    /// How many take()s were served from the pool.
    long long reused() const;

private:
    using Clock = std::chrono::steady_clock;
    struct Idle {
        PgConnection conn;
        Clock::time_point since;
    };
    struct IdleSqlite {
        std::shared_ptr<SqliteDb> db;
        Clock::time_point since;
    };
    static std::string keyOf(const Endpoint &endpoint, const std::string &applicationName);
    void expire(Clock::time_point now);

    const std::chrono::milliseconds m_maxIdle;
    const std::size_t m_perKey;
    mutable std::mutex m_mutex;
    std::map<std::string, std::deque<Idle>> m_idle;
    std::map<std::string, std::deque<IdleSqlite>> m_idleSqlite;
    long long m_reused = 0;
};

} // namespace driftless::core
