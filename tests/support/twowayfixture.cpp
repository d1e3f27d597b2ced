#include "tests/support/twowayfixture.h"

#include "core/db/mysqlconnection.h"
#include "core/db/pgconnection.h"
#include "core/engine/twoway/conflicts.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace driftless::test {

void dropTwoWayOrigins(const std::string &pipeline)
{
    try {
        core::PgConnection admin(pgDsn("postgres"));
        admin.execParams("SELECT pg_replication_origin_drop(roname) FROM pg_replication_origin WHERE roname IN "
                         "($1, $2, $3, $4)",
                         {core::applyOriginName(pipeline), core::applyOriginName(reverseOf(pipeline)),
                          core::resolveOriginName(pipeline), core::resolveOriginName(reverseOf(pipeline))});
    } catch (const core::Error &e) {
        std::printf("origins not dropped: %s\n", e.describe().c_str());
    }
}

core::LoopCountersSample loopCountersOf(const std::string &direction, MissingCounters missing)
{
    for (const auto &s : core::loopCountersSnapshot())
        if (s.direction == direction)
            return s;
    if (missing == MissingCounters::Fail) {
        ADD_FAILURE() << "no counters for " << direction;
        return {};
    }
    return {direction, {}, 0, 0, 0};
}

std::int64_t myBinlogEnd(const MyTestDb &server)
{
    auto r = server.connect().query("SHOW MASTER STATUS");
    return core::binlog::positionVersion({r.text(0, 0), std::stoull(r.text(0, 1))});
}

bool binlogPositionsPass(const std::vector<std::string> &positions, std::int64_t v)
{
    if (positions.empty())
        return false;
    for (const auto &text : positions) {
        auto p = core::BinlogCdcPosition::fromJson(text);
        if (!p || !p->streaming() || core::binlog::positionVersion(p->at) < v)
            return false;
    }
    return true;
}

bool myDirectionPassed(const MyTestDb &db, const std::string &direction, std::int64_t v)
{
    try {
        auto rows = db.connect().query("SELECT position FROM _driftless_checkpoints WHERE pipeline = ?", {direction});
        std::vector<std::string> positions;
        for (size_t r = 0; r < rows.size(); ++r)
            positions.push_back(rows.text(r, 0));
        return binlogPositionsPass(positions, v);
    } catch (const core::Error &) {
        return false; // not created yet
    }
}

bool myBinlogPassesNow(const MyTestDb &a, const MyTestDb &b, const std::string &pipeline, int seconds,
                       std::chrono::milliseconds poll)
{
    const std::int64_t v = myBinlogEnd(a);
    return waitFor([&] { return myDirectionPassed(b, pipeline, v) && myDirectionPassed(a, reverseOf(pipeline), v); },
                   seconds, poll);
}

bool myTableExists(const MyTestDb &db, const std::string &table)
{
    return db.scalar("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND "
                     "TABLE_NAME = '" +
                     table + "'") == "1";
}

bool pgKeptBinlogPassed(const PgTestDb &pg, const std::string &direction, std::int64_t v)
{
    try {
        auto c = pg.connect();
        auto r = c.execParams("SELECT position FROM _driftless.checkpoints WHERE pipeline = $1", {direction});
        std::vector<std::string> positions;
        for (int i = 0; i < r.rows(); ++i)
            positions.push_back(r.text(i, 0));
        return binlogPositionsPass(positions, v);
    } catch (const core::Error &) {
        return false; // not created yet
    }
}

bool mixedPassesNow(const PgTestDb &pg, const MyTestDb &my, const std::string &pgReads, const std::string &myReads,
                    int seconds, std::chrono::milliseconds poll)
{
    const std::string lsn = pg.scalar("SELECT pg_current_wal_lsn()");
    const std::int64_t v = myBinlogEnd(my);
    return waitFor(
        [&] {
            return pg.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'driftless_" + pgReads +
                             "' AND confirmed_flush_lsn >= '" + lsn + "'::pg_lsn") == "1" &&
                   pgKeptBinlogPassed(pg, myReads, v);
        },
        seconds, poll);
}

bool mixedLoadedAndStreaming(const PgTestDb &pg, const MyTestDb &my, const std::string &pgReads,
                             const std::string &myReads, const std::string &table)
{
    try {
        return pg.scalar("SELECT to_regclass('public." + table + "') IS NOT NULL") == "t" && myTableExists(my, table) &&
               pg.scalar("SELECT count(*) FROM " + table) == my.scalar("SELECT COUNT(*) FROM " + table) &&
               myTableExists(my, "_driftless_checkpoints") &&
               my.scalar("SELECT COUNT(*) FROM _driftless_checkpoints WHERE pipeline = '" + pgReads +
                         "' AND position LIKE '%\"lsn\"%'") == "1" &&
               pgKeptBinlogPassed(pg, myReads, 0);
    } catch (const core::Error &) {
        return false;
    }
}

} // namespace driftless::test
