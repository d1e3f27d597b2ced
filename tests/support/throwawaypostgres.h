#pragma once

#include <chrono>
#include <string>

namespace driftless::test {

/// A Postgres postmaster of its own (a fresh initdb cluster on a free loopback port, wal_level
/// logical, track_commit_timestamp on), optionally with its clock `clockOffset` ahead of the
/// machine's under libfaketime: two databases on the shared test server share one clock, and
/// clock-skew tests need two. Stopped and removed in the destructor.
///
/// Needs the faketime package for a non-zero offset (the constructor throws, saying so, when its
/// library is missing). Run as root, the cluster runs as user postgres. Throws std::runtime_error
/// when the cluster does not start, with its log.
class ThrowawayPostgres {
public:
    explicit ThrowawayPostgres(std::chrono::seconds clockOffset = std::chrono::seconds(0));
    /// A streaming standby of `primary` (pg_basebackup -R into a folder of its own), started.
    struct StandbyOf {
        const ThrowawayPostgres &primary;
    };
    explicit ThrowawayPostgres(StandbyOf standby);
    ~ThrowawayPostgres();
    ThrowawayPostgres(const ThrowawayPostgres &) = delete;
    ThrowawayPostgres &operator=(const ThrowawayPostgres &) = delete;

    int port() const { return m_port; }
    /// A key=value DSN for database `postgres` as superuser postgres (trust authentication).
    std::string dsn() const;
    void exec(const std::string &sql) const;
    std::string scalar(const std::string &sql) const;
    /// A key=value DSN of `database` (superuser postgres).
    std::string dsnOf(const std::string &database) const;

    /// pg_ctl stop: `-m immediate` when `crash` (what the server did not flush is gone), else fast.
    void stop(bool crash);
    void start();
    /// pg_ctl promote (a standby), waiting until it accepts writes.
    void promote();
    /// A point-in-time restore of this stopped standby (its data is the base backup): replays the
    /// WAL `walFrom` (stopped) wrote, fetched by restore_command from its pg_wal, up to `lsn`,
    /// then promotes there (a new timeline that leaves the old one at `lsn`). Started, and waits
    /// until it accepts writes.
    void restoreTo(const ThrowawayPostgres &walFrom, const std::string &lsn);
    /// Waits (up to `seconds`) until this standby has replayed everything `primary` wrote.
    void catchUpWith(const ThrowawayPostgres &primary, int seconds = 120) const;

private:
    void pgctl(const std::string &args) const;
    std::string m_dir;
    int m_port = 0;
};

} // namespace driftless::test
