// Conflict detection holds the rows it judged (docs/two-way.md, "Conflicts"). A two-way batch
// reads the target's rows of its keys, decides for each change whether it conflicts, and merges
// inside the same transaction. A writer on the target that committed between that read and the
// merge would have its edit overwritten by a change judged against the row it replaced: a lost
// edit on one side only, which no conflict records (the two-way soak found it). So the read
// locks the rows it returns until the batch commits, and only those rows.
//
// `driftless-cli resolve` has the same window between reading both sides' rows and writing the
// chosen one, so each side's transaction (ResolutionSide) locks the row when it reads it.
//
// Each test drives resolveConflicts() or a ResolutionSide on a real server inside an open
// transaction, as the engine and resolve do, and a second session tries to write with a short
// lock timeout.

#include "core/db/mysqlcatalog.h"
#include "core/db/mysqlconnection.h"
#include "core/db/pgconnection.h"
#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/conflictsmysql.h"
#include "core/model/error.h"
#include "core/model/tableref.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"
#include "tests/support/twowayfixture.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

using namespace driftless::core;
using namespace driftless::test;

namespace {

/// A composite key, so the lookup is the multi-column form; three rows, one of them in the batch.
const char *kTable = "CREATE TABLE t (k1 int NOT NULL, k2 int NOT NULL, a varchar(20), b varchar(20), "
                     "PRIMARY KEY (k1, k2))";
const char *kRows = "INSERT INTO t VALUES (1, 1, 'x', 'y'), (1, 2, 'x', 'y'), (2, 1, 'x', 'y')";

ConflictScope scopeFor(const std::string &targetSql)
{
    ConflictScope s;
    s.pipeline = "locks";
    s.table = "public.t";
    s.targetSql = targetSql;
    s.columns = {"k1", "k2", "a", "b"};
    s.columnTypes = {"integer", "integer", "character varying(20)", "character varying(20)"};
    s.keyColumns = {"k1", "k2"};
    s.keyTypes = {"integer", "integer"};
    return s;
}

/// The batch: row (1,1) changed column a from the row the target holds (no conflict).
RowSet batch()
{
    RowSet rows;
    rows.append("1\t1\tfrom-the-other-side\ty", ChangeOp::Update, 100);
    rows.setBefore(0, "1\t1\tx\ty");
    return rows;
}

/// True when `write` failed because a lock was held (the session's short lock timeout).
bool blockedByALock(const std::function<void()> &write, const std::string &timeoutWords)
{
    try {
        write();
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find(timeoutWords), std::string::npos) << e.what();
        return true;
    }
    return false;
}

TEST(ConflictLocks, postgresHoldsTheJudgedRowsUntilTheBatchCommits)
{
    PgTestDb db("clock");
    db.exec(kTable);
    db.exec(kRows);
    auto engine = db.connect();
    auto writer = db.connect();
    writer.exec("SET lock_timeout = '500ms'");
    auto update = [&](const char *key, const char *value) {
        return [&writer, key, value] {
            writer.exec(std::string("UPDATE t SET b = '") + value + "' WHERE (k1, k2) = " + key);
        };
    };

    engine.exec("BEGIN");
    RowSet rows = batch();
    const ConflictOutcome o = resolveConflicts(engine, scopeFor("public.t"), ConflictPolicy{}, rows);
    EXPECT_EQ(o.merged + o.queued + o.sourceWon + o.targetWon, 0) << "the target held the change's base";
    ASSERT_EQ(rows.size(), 1u);

    EXPECT_TRUE(blockedByALock(update("(1, 1)", "w"), "lock timeout")) << "the judged row was writable";
    EXPECT_FALSE(blockedByALock(update("(1, 2)", "w"), "lock timeout")) << "a row outside the batch was locked";
    EXPECT_FALSE(blockedByALock(update("(2, 1)", "w"), "lock timeout")) << "a row outside the batch was locked";
    engine.exec("UPDATE t SET a = 'from-the-other-side' WHERE (k1, k2) = (1, 1)");
    engine.exec("COMMIT");

    // Once the batch commits, the writer's edit lands on the merged row: both survive.
    EXPECT_FALSE(blockedByALock(update("(1, 1)", "w"), "lock timeout"));
    EXPECT_EQ(db.scalar("SELECT a || '|' || b FROM t WHERE (k1, k2) = (1, 1)"), "from-the-other-side|w");
}

TEST(ConflictLocks, mariadbHoldsTheJudgedRowsUntilTheBatchCommits)
{
    MyTestDb db("clock");
    db.exec(std::string(kTable) + " ENGINE=InnoDB");
    db.exec(kRows);
    auto engine = db.connect();
    auto writer = db.connect();
    writer.exec("SET SESSION innodb_lock_wait_timeout = 1");
    auto update = [&](const char *key, const char *value) {
        return [&writer, key, value] { writer.exec(std::string("UPDATE t SET b = '") + value + "' WHERE " + key); };
    };
    const auto table = mysqlcatalog::describeTable(engine, TableRef{db.name(), "t"});
    MysqlConflictTarget target(engine, table);

    engine.exec("START TRANSACTION");
    // The transaction's snapshot, taken before the writer's commit below: a plain read would
    // judge the change against it.
    EXPECT_EQ(engine.scalar("SELECT b FROM t WHERE k1 = 1 AND k2 = 1").value_or(""), "y");
    writer.exec("UPDATE t SET b = 'committed-meanwhile' WHERE (k1, k2) = (1, 1)");
    RowSet rows = batch();
    const ConflictOutcome o =
        resolveConflicts(target, scopeFor(mysqlIdent(db.name()) + "." + mysqlIdent("t")), ConflictPolicy{}, rows);
    // The locking read sees the writer's commit: column b changed on the target, a in the
    // change, so the change merges by column (only a is written) instead of overwriting b.
    EXPECT_EQ(o.merged, 1) << "the check judged the change against the transaction's snapshot";
    EXPECT_EQ(o.queued, 0);
    ASSERT_EQ(rows.size(), 1u);

    EXPECT_TRUE(blockedByALock(update("k1 = 1 AND k2 = 1", "w"), "Lock wait timeout")) << "the judged row was writable";
    EXPECT_FALSE(blockedByALock(update("k1 = 1 AND k2 = 2", "w"), "Lock wait timeout"))
        << "a row outside the batch was locked";
    EXPECT_FALSE(blockedByALock(update("k1 = 2 AND k2 = 1", "w"), "Lock wait timeout"))
        << "a row outside the batch was locked";
    engine.exec("COMMIT");
    EXPECT_FALSE(blockedByALock(update("k1 = 1 AND k2 = 1", "w"), "Lock wait timeout"));
}

/// The writes resolve makes on both sides of one row: the two sides' transactions are open at
/// once, hold the row from the read to the commit, and on Postgres write under a replication
/// origin of each side's own (two databases of one cluster share its origins).
TEST(ConflictLocks, resolveHoldsBothSidesRowsFromTheReadToTheWrite)
{
    PgTestDb a("clock_a"), b("clock_b");
    for (auto *db : {&a, &b}) {
        db->exec(kTable);
        db->exec(kRows);
    }
    const std::string pipeline = uniqueName("clock");
    const std::string key = R"({"k1": "1", "k2": "1"})";
    auto writer = b.connect();
    writer.exec("SET lock_timeout = '500ms'");
    auto update = [&](const char *where) {
        return [&writer, where] { writer.exec(std::string("UPDATE t SET b = 'w' WHERE ") + where); };
    };
    {
        auto onA = openResolutionSide(pgEndpoint("a", a.name()), pipeline, TargetName{"public", "t"}, key);
        auto onB = openResolutionSide(pgEndpoint("b", b.name()), pipeline + "_rev", TargetName{"public", "t"}, key);
        EXPECT_EQ(onA->lockRow({"a", "b"}), R"({"a":"x","b":"y"})");
        EXPECT_EQ(onB->lockRow({"a", "b"}), R"({"a":"x","b":"y"})");
        EXPECT_TRUE(blockedByALock(update("k1 = 1 AND k2 = 1"), "lock timeout")) << "the row resolve read was writable";
        EXPECT_FALSE(blockedByALock(update("k1 = 1 AND k2 = 2"), "lock timeout")) << "another row was locked";
        const std::string chosen = R"({"k1": "1", "k2": "1", "a": "chosen", "b": "y"})";
        onB->write(chosen);
        onA->write(chosen);
        onB->commit();
        onA->commit();
    }
    EXPECT_FALSE(blockedByALock(update("k1 = 1 AND k2 = 1"), "lock timeout"));
    EXPECT_EQ(a.scalar("SELECT a || '|' || b FROM t WHERE (k1, k2) = (1, 1)"), "chosen|y");
    EXPECT_EQ(b.scalar("SELECT a || '|' || b FROM t WHERE (k1, k2) = (1, 1)"), "chosen|w");
    {
        // A side closed without commit() writes nothing and leaves the row free.
        auto onB = openResolutionSide(pgEndpoint("b", b.name()), pipeline + "_rev", TargetName{"public", "t"}, key);
        onB->lockRow({"a"});
        onB->write("null");
    }
    EXPECT_EQ(b.scalar("SELECT count(*) FROM t"), "3");
    EXPECT_FALSE(blockedByALock(update("k1 = 1 AND k2 = 1"), "lock timeout"));
    dropTwoWayOrigins(pipeline);
}

TEST(ConflictLocks, resolveHoldsAMariadbSidesRowFromTheReadToTheWrite)
{
    MyTestDb db("clock");
    db.exec(std::string(kTable) + " ENGINE=InnoDB");
    db.exec(kRows);
    auto writer = db.connect();
    writer.exec("SET SESSION innodb_lock_wait_timeout = 1");
    auto update = [&](const char *where) {
        return [&writer, where] { writer.exec(std::string("UPDATE t SET b = 'w' WHERE ") + where); };
    };
    {
        auto side =
            openResolutionSide(myEndpoint("m", db.name()), "clock", TargetName{"", "t"}, R"({"k1": "1", "k2": "1"})");
        // A commit after the transaction started is seen: the read is a locking one.
        writer.exec("UPDATE t SET a = 'committed-meanwhile' WHERE k1 = 1 AND k2 = 1");
        EXPECT_EQ(side->lockRow({"a", "b"}), R"({"a":"committed-meanwhile","b":"y"})");
        EXPECT_TRUE(blockedByALock(update("k1 = 1 AND k2 = 1"), "Lock wait timeout"))
            << "the row resolve read was writable";
        EXPECT_FALSE(blockedByALock(update("k1 = 2 AND k2 = 1"), "Lock wait timeout")) << "another row was locked";
        side->write(R"({"k1": "1", "k2": "1", "a": "chosen", "b": "y"})");
        side->commit();
    }
    EXPECT_FALSE(blockedByALock(update("k1 = 1 AND k2 = 1"), "Lock wait timeout"));
    EXPECT_EQ(db.scalar("SELECT CONCAT(a, '|', b) FROM t WHERE k1 = 1 AND k2 = 1"), "chosen|w");
}

} // namespace
