// Two-way pipelines (`direction: both`) between two MariaDB endpoints, two databases of the test
// server as the two sides: what Driftless applies carries skip_replication and the other
// direction's binlog reader drops it, so a change is captured once, applied once and never comes
// back; writers on both sides converge (hashed in SQL on each side); doctor says what each side
// needs.

#include "core/db/mysqlconnection.h"
#include "core/engine/commands/doctor.h"
#include "core/engine/run/scheduler.h"
#include "core/engine/sync/tablesync.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"
#include "core/readers/binlog/binlogdecoder.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"
#include "tests/support/twowayfixture.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

const char *kItems = "CREATE TABLE items (id int PRIMARY KEY, v varchar(100) NOT NULL, n int NOT NULL)";

/// Logs every row written to items on one side (the writer's and Driftless's), so a row written
/// again by a change coming back shows.
void addWriteLog(MyTestDb &db)
{
    db.exec("CREATE TABLE writes (id int NOT NULL, v varchar(100), op varchar(8) NOT NULL)");
    db.exec(
        "CREATE TRIGGER log_ins AFTER INSERT ON items FOR EACH ROW INSERT INTO writes VALUES (NEW.id, NEW.v, 'ins')");
    db.exec(
        "CREATE TRIGGER log_upd AFTER UPDATE ON items FOR EACH ROW INSERT INTO writes VALUES (NEW.id, NEW.v, 'upd')");
    db.exec(
        "CREATE TRIGGER log_del AFTER DELETE ON items FOR EACH ROW INSERT INTO writes VALUES (OLD.id, OLD.v, 'del')");
}

struct MyTwoWay : ::testing::Test {
    MyTestDb a{"twm_a"};
    MyTestDb b{"twm_b"};
    RecordingObserver obs;
    std::string pipeline = uniqueName("twm");
    std::stop_source stop;
    std::thread engine;

    void TearDown() override { stopEngine(); }

    Workspace workspace(const std::optional<std::string> &conflicts = std::nullopt)
    {
        Workspace ws;
        ws.endpoints["a"] = myEndpoint("a", a.name());
        ws.endpoints["b"] = myEndpoint("b", b.name());
        PipelineSpec p;
        p.name = pipeline;
        p.source = "a";
        p.target = "b";
        p.twoWay = true;
        TableSpec t;
        t.table = TableRef{a.name(), "items"};
        t.strategy = Strategy::Cdc;
        t.conflicts = conflicts;
        p.tables.push_back(t);
        ws.pipelines.push_back(p);
        return ws;
    }
    void startEngine(const std::optional<std::string> &conflicts = std::nullopt)
    {
        auto jobs = jobsFor(workspace(conflicts));
        ASSERT_EQ(jobs.size(), 2u);
        stop = std::stop_source();
        engine = std::thread([this, jobs] { Scheduler(jobs, obs, {}).run(stop.get_token()); });
    }
    void stopEngine()
    {
        if (engine.joinable()) {
            stop.request_stop();
            engine.join();
        }
    }
    /// The table's canonical hash, computed by the server: every row in key order.
    static std::string hash(MyTestDb &db)
    {
        auto c = db.connect();
        c.exec("SET SESSION group_concat_max_len = 1073741824");
        return c
            .scalar("SELECT CONCAT(COUNT(*), ':', COALESCE(MD5(GROUP_CONCAT(CONCAT_WS('|', id, v, n) ORDER BY id "
                    "SEPARATOR '\\n')), '-')) FROM items")
            .value_or("no result");
    }
    /// Both directions have read the server's binlog up to its end now (each reads it all: the
    /// two sides are databases of one server).
    bool positionsPassNow(int seconds) { return myBinlogPassesNow(a, b, pipeline, seconds); }
    /// The engine loaded B and both directions stream.
    void waitStreaming()
    {
        ASSERT_TRUE(waitFor(
            [&] {
                return myTableExists(b, "items") &&
                       b.scalar("SELECT COUNT(*) FROM items") == a.scalar("SELECT COUNT(*) FROM items") &&
                       myDirectionPassed(b, pipeline, 0) && myDirectionPassed(a, pipeline + "_rev", 0);
            },
            180))
            << "the load and both directions' start; states: " << obs.lastStates[a.name() + ".items"];
        ASSERT_TRUE(positionsPassNow(90));
    }
};

void seed(MyTestDb &db, int rows)
{
    auto c = db.connect();
    for (int from = 1; from <= rows; from += 100) {
        std::string sql = "INSERT INTO items VALUES ";
        for (int i = from; i < from + 100 && i <= rows; ++i)
            sql += (i == from ? "(" : ", (") + std::to_string(i) + ", 'v" + std::to_string(i) + "', " +
                   std::to_string(i) + ")";
        c.exec(sql);
    }
}

} // namespace

// One UPDATE on A: captured once by A->B, applied once on B, read back by B->A marked
// skip_replication and dropped there, so A's row is never written again; and the same the other way.
TEST_F(MyTwoWay, anUpdateOnAIsAppliedOnceOnBAndNeverComesBack)
{
    a.exec(kItems);
    seed(a, 100);
    addWriteLog(a);
    startEngine();
    waitStreaming();
    addWriteLog(b);
    const auto fwd0 = loopCountersOf(pipeline);
    const auto rev0 = loopCountersOf(pipeline + "_rev");
    EXPECT_EQ(a.scalar("SELECT COUNT(*) FROM writes"), "0") << "the load wrote back into A";

    a.exec("UPDATE items SET v = 'changed on a', n = n + 1000 WHERE id = 7");
    ASSERT_TRUE(waitFor([&] { return b.scalar("SELECT v FROM items WHERE id = 7") == "changed on a"; }, 60));
    ASSERT_TRUE(positionsPassNow(90)) << "both directions must read past the change and its application";

    const auto fwd = loopCountersOf(pipeline);
    const auto rev = loopCountersOf(pipeline + "_rev");
    EXPECT_EQ(fwd.captured - fwd0.captured, 1);
    EXPECT_EQ(fwd.applied - fwd0.applied, 1);
    EXPECT_EQ(fwd.droppedOwn - fwd0.droppedOwn, 0);
    EXPECT_EQ(rev.captured - rev0.captured, 0) << "B->A captured the change it had applied: a loop";
    EXPECT_EQ(rev.applied - rev0.applied, 0);
    EXPECT_EQ(rev.droppedOwn - rev0.droppedOwn, 1) << "B->A must see the applied change and drop it as ours";
    EXPECT_EQ(a.scalar("SELECT COUNT(*) FROM writes WHERE id = 7"), "1") << "A's row was written again";
    EXPECT_EQ(b.scalar("SELECT COUNT(*) FROM writes WHERE id = 7"), "1");
    EXPECT_EQ(hash(a), hash(b));

    // And the other way: one UPDATE on B reaches A once and is not sent back to B.
    b.exec("UPDATE items SET v = 'changed on b' WHERE id = 9");
    ASSERT_TRUE(waitFor([&] { return a.scalar("SELECT v FROM items WHERE id = 9") == "changed on b"; }, 60));
    ASSERT_TRUE(positionsPassNow(90));
    const auto fwd2 = loopCountersOf(pipeline);
    const auto rev2 = loopCountersOf(pipeline + "_rev");
    EXPECT_EQ(rev2.captured - rev.captured, 1);
    EXPECT_EQ(rev2.applied - rev.applied, 1);
    EXPECT_EQ(fwd2.captured - fwd.captured, 0);
    EXPECT_EQ(fwd2.droppedOwn - fwd.droppedOwn, 1);
    EXPECT_EQ(b.scalar("SELECT COUNT(*) FROM writes WHERE id = 9"), "1") << "B's row was written again";
    EXPECT_EQ(a.scalar("SELECT COUNT(*) FROM writes WHERE id = 9"), "1");
    EXPECT_EQ(a.scalar("SELECT COUNT(*) FROM writes"), "2") << "A: the update of 7 and the arrival of 9, nothing else";
    EXPECT_EQ(hash(a), hash(b));
}

// Bounded, rate-limited writers on both sides on disjoint keys (inserts, updates, deletes); after
// they stop both sides hold the same rows, and every change crossed exactly once.
TEST_F(MyTwoWay, writersOnBothSidesConvergeWithoutLoops)
{
    a.exec(kItems);
    seed(a, 200);
    startEngine();
    waitStreaming();
    const auto fwd0 = loopCountersOf(pipeline);
    const auto rev0 = loopCountersOf(pipeline + "_rev");

    // 300 changes a side, one transaction each, at most about 200 a second.
    auto writer = [](MyTestDb &db, int base) {
        auto c = db.connect();
        for (int i = 0; i < 300; ++i) {
            const std::string key = std::to_string(base + i % 100);
            if (i < 100)
                c.exec("INSERT INTO items (id, v, n) VALUES (" + key + ", 'new', " + std::to_string(i) + ")");
            else if (i < 250)
                c.exec("UPDATE items SET n = n + 1, v = 'upd " + std::to_string(i) + "' WHERE id = " + key);
            else
                c.exec("DELETE FROM items WHERE id = " + key);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    };
    std::thread onA([&] { writer(a, 1000); });
    std::thread onB([&] { writer(b, 5000); });
    onA.join();
    onB.join();

    ASSERT_TRUE(waitFor([&] { return hash(a) == hash(b); }, 180)) << "A " << hash(a) << " B " << hash(b);
    EXPECT_EQ(a.scalar("SELECT COUNT(*) FROM items WHERE id >= 5000"), "50");
    EXPECT_EQ(b.scalar("SELECT COUNT(*) FROM items WHERE id BETWEEN 1000 AND 4999"), "50");
    EXPECT_EQ(a.scalar("SELECT COUNT(*) FROM items"), "300");
    ASSERT_TRUE(positionsPassNow(90));
    const auto fwd = loopCountersOf(pipeline);
    const auto rev = loopCountersOf(pipeline + "_rev");
    // Each side's 300 changes crossed once; what was applied came back once and was dropped.
    EXPECT_EQ(fwd.captured - fwd0.captured, 300);
    EXPECT_EQ(fwd.applied - fwd0.applied, 300);
    EXPECT_EQ(rev.captured - rev0.captured, 300);
    EXPECT_EQ(rev.applied - rev0.applied, 300);
    EXPECT_EQ(rev.droppedOwn - rev0.droppedOwn, 300);
    EXPECT_EQ(fwd.droppedOwn - fwd0.droppedOwn, 300);
    std::printf("loop amplification: A->B %.2f, B->A %.2f (applied / captured)\n",
                double(fwd.applied - fwd0.applied) / double(fwd.captured - fwd0.captured),
                double(rev.applied - rev0.applied) / double(rev.captured - rev0.captured));
}

// doctor: what each MariaDB side needs (ROW, FULL images and metadata), and what loop
// prevention means for the server's replicas.
TEST_F(MyTwoWay, doctorChecksEachSideAndExplainsSkipReplication)
{
    a.exec(kItems);
    bool told = false;
    for (const auto &f : runDoctor(workspace(), pipeline)) {
        if (f.subject != "endpoint a" && f.subject != "endpoint b")
            continue;
        EXPECT_NE(std::string(toString(f.level)), "error")
            << f.subject << ": " << f.message; // the fixture's server is set up for CDC
        told = told ||
               (std::string(toString(f.level)) == "ok" && f.message.find("skip_replication") != std::string::npos &&
                f.message.find("replicate_events_marked_for_skip = REPLICATE") != std::string::npos);
    }
    EXPECT_TRUE(told);
}

namespace {

const char *kPeople = "CREATE TABLE people (id int PRIMARY KEY, name varchar(100) NOT NULL, email varchar(100), "
                      "phone varchar(100))";

/// Two-way conflicts between two MariaDB databases, through the CLI (apply, run, conflicts,
/// resolve) with a workspace state of its own.
struct MyConflicts : ::testing::Test {
    MyTestDb a{"mcf_a"};
    MyTestDb b{"mcf_b"};
    std::string pipeline = uniqueName("mcf");
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string runLog = dir.file("run.log");
    int engine = -1;

    void TearDown() override { stopRun(); }

    CliResult apply(const std::string &tableConflicts)
    {
        writeFile(dir.file("ws.yaml"),
                  "endpoints:\n  a: { kind: mysql, dsn: \"" + a.dsn() + "\" }\n  b: { kind: mysql, dsn: \"" + b.dsn() +
                      "\" }\npipelines:\n  - name: " + pipeline +
                      "\n    source: a\n    target: b\n    direction: both\n    tables:\n      - table: " + a.name() +
                      ".people\n        strategy: cdc\n" +
                      (tableConflicts.empty() ? "" : "        conflicts: " + tableConflicts + "\n"));
        return runCli({"--state", state, "apply", "--no-check", dir.file("ws.yaml")});
    }
    void startRun() { engine = spawnCli({"--state", state, "run"}, {}, runLog); }
    void stopRun()
    {
        if (engine > 0) {
            ::kill(engine, SIGTERM);
            waitPid(engine, 120);
            engine = -1;
        }
    }
    /// Both directions have read the server's binlog up to its end now: every change made before
    /// this call has been applied (or decided) on the other side.
    bool quiesced(int seconds) { return myBinlogPassesNow(a, b, pipeline, seconds); }
    /// Applies the file, runs until both directions stream, and stops the engine.
    void loadedAndStopped(const std::string &tableConflicts)
    {
        a.exec(kPeople);
        {
            auto c = a.connect();
            std::string sql = "INSERT INTO people VALUES ";
            for (int i = 1; i <= 50; ++i)
                sql += (i > 1 ? ", (" : "(") + std::to_string(i) + ", 'name " + std::to_string(i) + "', 'p" +
                       std::to_string(i) + "@old', '555-" + std::to_string(i) + "')";
            c.exec(sql);
        }
        auto r = apply(tableConflicts);
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
        startRun();
        ASSERT_TRUE(waitFor(
            [&] {
                return myTableExists(b, "people") && b.scalar("SELECT COUNT(*) FROM people") == "50" &&
                       myDirectionPassed(b, pipeline, 0) && myDirectionPassed(a, pipeline + "_rev", 0);
            },
            180))
            << readFile(runLog);
        ASSERT_TRUE(quiesced(120)) << readFile(runLog);
        stopRun();
    }
    /// The synced columns of every row, hashed in SQL on the side's own server.
    static std::string hash(MyTestDb &db)
    {
        auto c = db.connect();
        c.exec("SET SESSION group_concat_max_len = 1073741824");
        return c
            .scalar("SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', id, name, COALESCE(email, '<null>'), "
                    "COALESCE(phone, '<null>')) ORDER BY id SEPARATOR ',')) FROM people")
            .value_or("no rows");
    }
    static std::string row(MyTestDb &db, int id)
    {
        return db.scalar("SELECT CONCAT_WS('|', name, email, phone) FROM people WHERE id = " + std::to_string(id));
    }
    nlohmann::json openConflicts()
    {
        auto r = runCli({"--state", state, "conflicts", "--json"});
        EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
        return nlohmann::json::parse(r.out);
    }
};

} // namespace

// merge_columns (the default): A changes email, B changes phone of the same row while the engine
// is stopped; after it starts both edits survive on both sides.
TEST_F(MyConflicts, disjointColumnEditsOfOneRowBothSurviveOnBothSides)
{
    loadedAndStopped("");
    a.exec("UPDATE people SET email = 'seven@a' WHERE id = 7");
    b.exec("UPDATE people SET phone = '555-0007-b' WHERE id = 7");
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    ASSERT_TRUE(waitFor([&] { return row(a, 7) == row(b, 7); }, 60)) << row(a, 7) << " / " << row(b, 7);
    EXPECT_EQ(row(a, 7), "name 7|seven@a|555-0007-b");
    EXPECT_EQ(hash(a), hash(b));
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
}

// source_wins on overlap: both sides edit the same column; both end with the source's value.
TEST_F(MyConflicts, anOverlapUnderSourceWinsEndsWithTheSourcesValueOnBothSides)
{
    loadedAndStopped("{ policy: merge_columns, on_overlap: source_wins }");
    a.exec("UPDATE people SET email = 'from-a' WHERE id = 3");
    b.exec("UPDATE people SET email = 'from-b', name = 'renamed on b' WHERE id = 3");
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    ASSERT_TRUE(waitFor([&] { return row(a, 3) == row(b, 3); }, 60)) << row(a, 3) << " / " << row(b, 3);
    // The source wins the whole row: B's rename is gone too.
    EXPECT_EQ(row(a, 3), "name 3|from-a|555-3");
    EXPECT_EQ(hash(a), hash(b));
}

// manual: the overlapping edit waits in the queue with both versions and the base, neither side
// overwritten; `resolve --take source` converges both sides and is not read back.
TEST_F(MyConflicts, aManualConflictIsQueuedAndResolvedFromTheCli)
{
    loadedAndStopped("manual");
    a.exec("UPDATE people SET phone = 'phone-a' WHERE id = 11");
    b.exec("UPDATE people SET phone = 'phone-b' WHERE id = 11");
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    nlohmann::json list;
    ASSERT_TRUE(waitFor(
        [&] {
            list = openConflicts();
            return list["conflicts"].size() == 1;
        },
        60))
        << list.dump(2) << readFile(runLog);
    const auto &c = list["conflicts"][0];
    for (const char *field : {"id", "pipeline", "table", "key", "columns", "source", "target", "base", "detected_at"})
        EXPECT_TRUE(c.contains(field)) << field << " in " << c.dump(2);
    EXPECT_EQ(c["pipeline"], pipeline);
    EXPECT_EQ(c["table"], a.name() + ".people");
    EXPECT_EQ(c["key"], nlohmann::json({{"id", "11"}}));
    EXPECT_EQ(c["columns"], nlohmann::json::array({"phone"}));
    EXPECT_EQ(c["source"]["phone"], "phone-a");
    EXPECT_EQ(c["target"]["phone"], "phone-b");
    EXPECT_EQ(c["base"]["phone"], "555-11");
    EXPECT_EQ(a.scalar("SELECT phone FROM people WHERE id = 11"), "phone-a") << "neither side is overwritten";
    EXPECT_EQ(b.scalar("SELECT phone FROM people WHERE id = 11"), "phone-b");

    // A trigger on A logs any later write of the row: the resolution must not come back to A.
    a.exec("CREATE TABLE writes (id int NOT NULL, phone varchar(100))");
    a.exec("CREATE TRIGGER log_upd AFTER UPDATE ON people FOR EACH ROW INSERT INTO writes VALUES (NEW.id, NEW.phone)");
    auto r = runCli({"--state", state, "resolve", std::to_string(c["id"].get<long long>()), "--take", "source"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(b.scalar("SELECT phone FROM people WHERE id = 11"), "phone-a");
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    EXPECT_EQ(a.scalar("SELECT COUNT(*) FROM writes"), "0") << "the resolution written on B was read back into A";
    EXPECT_EQ(row(a, 11), row(b, 11));
    EXPECT_EQ(hash(a), hash(b));
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
}
