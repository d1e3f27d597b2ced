#pragma once

#include "core/engine/twoway/twoway.h"
#include "core/model/workspace.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"
#include "tests/support/waiting.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace driftless::test {

// What the two-way tests (tests/integration/tst_twoway*.cpp, tst_conflicts, tst_newerwins) ask of
// both sides of a `direction: both` pipeline. They check conditions; the tests decide what holds.

/// The reverse direction of `pipeline` (its checkpoints and slot carry this name).
inline std::string reverseOf(const std::string &pipeline)
{
    return pipeline + core::PipelineSpec::kReverseSuffix;
}

/// Drops the replication origins a two-way pipeline may have made (both directions' apply
/// origins and resolve's): they belong to the cluster, not to a test's databases. For TearDown:
/// a failure is printed, not thrown.
void dropTwoWayOrigins(const std::string &pipeline);

/// What a test does when the engine never counted a direction.
enum class MissingCounters { Fail, Zero };
/// The loop counters of `direction` (captured, applied, dropped as ours).
core::LoopCountersSample loopCountersOf(const std::string &direction, MissingCounters missing = MissingCounters::Fail);

// Postgres. `Db` is anything with `std::string scalar(const std::string &sql) const` (PgTestDb,
// or a side reached by DSN).

/// Both directions' slots (on one server: the sides are two databases of it) have confirmed
/// everything written on `server` up to this call: every change made before it was applied, or
/// decided, on the other side.
template <class Db>
bool pgSlotsPassNow(const Db &server, const std::string &pipeline, int seconds,
                    std::chrono::milliseconds poll = kWaitPoll)
{
    const std::string lsn = server.scalar("SELECT pg_current_wal_lsn()");
    return waitFor(
        [&] {
            return server.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name IN ('driftless_" +
                                 pipeline + "', 'driftless_" + reverseOf(pipeline) + "') AND confirmed_flush_lsn >= '" +
                                 lsn + "'::pg_lsn") == "2";
        },
        seconds, poll);
}

/// The load of `table` (in public) reached B with `rows` rows (as many as A has when not given)
/// and the reverse direction has its checkpoint on A: both directions stream. One check; the
/// caller waits.
template <class Db>
bool pgLoadedAndStreaming(const Db &a, const Db &b, const std::string &pipeline, const std::string &table,
                          const std::optional<std::string> &rows = std::nullopt)
{
    return b.scalar("SELECT to_regclass('public." + table + "') IS NOT NULL") == "t" &&
           b.scalar("SELECT count(*) FROM " + table) == (rows ? *rows : a.scalar("SELECT count(*) FROM " + table)) &&
           a.scalar("SELECT to_regclass('_driftless.checkpoints') IS NOT NULL") == "t" &&
           a.scalar("SELECT count(*) FROM _driftless.checkpoints WHERE pipeline = '" + reverseOf(pipeline) + "'") ==
               "1";
}

// MariaDB.

/// The binlog version the server has written up to now (SHOW MASTER STATUS).
std::int64_t myBinlogEnd(const MyTestDb &server);
/// Every stored binlog checkpoint position in `positions` streams at or past version `v`; false
/// when there is none.
bool binlogPositionsPass(const std::vector<std::string> &positions, std::int64_t v);
/// Every checkpoint of `direction` kept in `db` stands at or past binlog version `v`; false while
/// there is none (or no checkpoint table yet).
bool myDirectionPassed(const MyTestDb &db, const std::string &direction, std::int64_t v);
/// Both directions of a MariaDB pair (two databases of one server: each reads all of its binlog)
/// have read it up to its end now: every change made before this call was applied, or decided,
/// on the other side. The forward direction's checkpoints are on B, the reverse one's on A.
bool myBinlogPassesNow(const MyTestDb &a, const MyTestDb &b, const std::string &pipeline, int seconds,
                       std::chrono::milliseconds poll = kWaitPoll);
/// `table` exists in `db`.
bool myTableExists(const MyTestDb &db, const std::string &table);

// Postgres <-> MariaDB. `pgReads` is the direction that reads Postgres (its slot is on `pg`, its
// checkpoints in `my`), `myReads` the one that reads the binlog (its checkpoints in `pg`).

/// Every checkpoint of `direction` kept in `pg` stands at or past binlog version `v`; false while
/// there is none (or no checkpoint table yet).
bool pgKeptBinlogPassed(const PgTestDb &pg, const std::string &direction, std::int64_t v);
/// Both directions have read their side up to where it is now: every change made before this
/// call was applied (or decided, or dropped as ours) on the other side.
bool mixedPassesNow(const PgTestDb &pg, const MyTestDb &my, const std::string &pgReads, const std::string &myReads,
                    int seconds, std::chrono::milliseconds poll = kWaitPoll);
/// The load of `table` is on both sides with as many rows, and both directions stream. One
/// check; the caller waits.
bool mixedLoadedAndStreaming(const PgTestDb &pg, const MyTestDb &my, const std::string &pgReads,
                             const std::string &myReads, const std::string &table);

} // namespace driftless::test
