// Two-way pipelines (`direction: both`) against the real servers, two databases of one server as
// the two sides: a change made on one side is captured once, applied once on the other, and never
// comes back (loop prevention); writers on both sides converge.

#include "core/db/pgconnection.h"
#include "core/engine/commands/doctor.h"
#include "core/engine/run/scheduler.h"
#include "core/engine/sync/tablesync.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/error.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"
#include "tests/support/twowayfixture.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

const char *kItems = "CREATE TABLE items (id int PRIMARY KEY, v text NOT NULL, n int NOT NULL)";

struct PgTwoWay : ::testing::Test {
    PgTestDb a{"tw_a"};
    PgTestDb b{"tw_b"};
    RecordingObserver obs;
    std::string pipeline = uniqueName("tw");
    std::stop_source stop;
    std::thread engine;

    void TearDown() override
    {
        stopEngine();
        dropTwoWayOrigins(pipeline);
    }

    Workspace workspace()
    {
        Workspace ws;
        ws.endpoints["a"] = pgEndpoint("a", a.name());
        ws.endpoints["b"] = pgEndpoint("b", b.name());
        PipelineSpec p;
        p.name = pipeline;
        p.source = "a";
        p.target = "b";
        p.twoWay = true;
        TableSpec t;
        t.table = TableRef::parse("public.items");
        t.strategy = Strategy::Cdc;
        p.tables.push_back(t);
        ws.pipelines.push_back(p);
        return ws;
    }
    void startEngine()
    {
        auto jobs = jobsFor(workspace());
        ASSERT_EQ(jobs.size(), 2u);
        engine = std::thread([this, jobs] { Scheduler(jobs, obs, {}).run(stop.get_token()); });
    }
    void stopEngine()
    {
        if (engine.joinable()) {
            stop.request_stop();
            engine.join();
        }
    }
    std::string hash(PgTestDb &db)
    {
        auto c = db.connect();
        return pgHash(c, "SELECT id, v, n FROM items", "id");
    }
    /// Both directions' slots have confirmed everything written on the server up to now.
    bool positionsPassNow(int seconds) { return pgSlotsPassNow(a, pipeline, seconds); }
    /// The engine loaded B and both directions stream.
    void waitStreaming()
    {
        ASSERT_TRUE(waitFor([&] { return pgLoadedAndStreaming(a, b, pipeline, "items"); }, 180))
            << "the load and both directions' start; states: " << obs.lastStates["public.items"];
        // One fixed position, waited for generously: the server is shared with tests that write
        // all the time, so a fresh "now" polled with a short window can stay out of reach.
        ASSERT_TRUE(positionsPassNow(120)) << "both directions' slots must pass the load";
    }
};

} // namespace

// (a) One UPDATE on A: captured once by A->B, applied once on B, read back by B->A as our own
// and dropped there, so A's row is never written again.
TEST_F(PgTwoWay, anUpdateOnAIsAppliedOnceOnBAndNeverComesBack)
{
    a.exec(kItems);
    a.exec("INSERT INTO items SELECT g, 'v' || g, g FROM generate_series(1, 100) g");
    startEngine();
    waitStreaming();
    const auto fwd0 = loopCountersOf(pipeline);
    const auto rev0 = loopCountersOf(pipeline + "_rev");

    a.exec("UPDATE items SET v = 'changed on a', n = n + 1000 WHERE id = 7");
    const std::string xmin = a.scalar("SELECT xmin::text FROM items WHERE id = 7");
    ASSERT_TRUE(waitFor([&] { return b.scalar("SELECT v FROM items WHERE id = 7") == "changed on a"; }, 60));
    ASSERT_TRUE(positionsPassNow(90)) << "both directions' slots must pass the change";

    const auto fwd = loopCountersOf(pipeline);
    const auto rev = loopCountersOf(pipeline + "_rev");
    EXPECT_EQ(fwd.captured - fwd0.captured, 1);
    EXPECT_EQ(fwd.applied - fwd0.applied, 1);
    EXPECT_EQ(fwd.droppedOwn - fwd0.droppedOwn, 0);
    EXPECT_EQ(rev.captured - rev0.captured, 0) << "B->A captured the change it had applied: a loop";
    EXPECT_EQ(rev.applied - rev0.applied, 0);
    EXPECT_EQ(rev.droppedOwn - rev0.droppedOwn, 1) << "B->A must see the applied change and drop it as ours";
    EXPECT_EQ(a.scalar("SELECT xmin::text FROM items WHERE id = 7"), xmin) << "A's row was written again";
    EXPECT_EQ(hash(a), hash(b));

    // And the other way: one UPDATE on B reaches A once and is not sent back to B.
    const std::string bXmin = b.scalar("SELECT xmin::text FROM items WHERE id = 8");
    b.exec("UPDATE items SET v = 'changed on b' WHERE id = 9");
    ASSERT_TRUE(waitFor([&] { return a.scalar("SELECT v FROM items WHERE id = 9") == "changed on b"; }, 60));
    const std::string bRowXmin = b.scalar("SELECT xmin::text FROM items WHERE id = 9");
    ASSERT_TRUE(positionsPassNow(90));
    const auto fwd2 = loopCountersOf(pipeline);
    const auto rev2 = loopCountersOf(pipeline + "_rev");
    EXPECT_EQ(rev2.captured - rev.captured, 1);
    EXPECT_EQ(rev2.applied - rev.applied, 1);
    EXPECT_EQ(fwd2.captured - fwd.captured, 0);
    EXPECT_EQ(fwd2.droppedOwn - fwd.droppedOwn, 1);
    EXPECT_EQ(b.scalar("SELECT xmin::text FROM items WHERE id = 9"), bRowXmin) << "B's row was written again";
    EXPECT_EQ(b.scalar("SELECT xmin::text FROM items WHERE id = 8"), bXmin);
    EXPECT_EQ(hash(a), hash(b));
}

// (b) Bounded, rate-limited writers on both sides on disjoint keys; after they stop, both sides
// hold the same rows (hashed in SQL on each side), and every change crossed exactly once.
TEST_F(PgTwoWay, writersOnBothSidesConvergeWithoutLoops)
{
    a.exec(kItems);
    a.exec("INSERT INTO items SELECT g, 'v' || g, g FROM generate_series(1, 200) g");
    startEngine();
    waitStreaming();
    const auto fwd0 = loopCountersOf(pipeline);
    const auto rev0 = loopCountersOf(pipeline + "_rev");

    // 500 changes a side, one transaction each, about 250 a second: inserts of the side's own
    // keys, updates of them, and deletes of some.
    auto writer = [](PgTestDb &db, int base) {
        auto c = db.connect();
        for (int i = 0; i < 500; ++i) {
            const int k = base + i % 200;
            const std::string key = std::to_string(k);
            if (i < 200)
                c.exec("INSERT INTO items VALUES (" + key + ", 'new', " + std::to_string(i) + ")");
            else if (i < 450)
                c.exec("UPDATE items SET n = n + 1, v = 'upd " + std::to_string(i) + "' WHERE id = " + key);
            else
                c.exec("DELETE FROM items WHERE id = " + key);
            std::this_thread::sleep_for(std::chrono::milliseconds(4));
        }
    };
    std::thread onA([&] { writer(a, 1000); });
    std::thread onB([&] { writer(b, 5000); });
    onA.join();
    onB.join();

    ASSERT_TRUE(waitFor([&] { return hash(a) == hash(b); }, 180)) << "A " << hash(a) << " B " << hash(b);
    EXPECT_EQ(a.scalar("SELECT count(*) FROM items WHERE id >= 5000"), "150");
    EXPECT_EQ(b.scalar("SELECT count(*) FROM items WHERE id BETWEEN 1000 AND 4999"), "150");
    ASSERT_TRUE(positionsPassNow(90));
    const auto fwd = loopCountersOf(pipeline);
    const auto rev = loopCountersOf(pipeline + "_rev");
    // Each side's 500 changes crossed once; what was applied came back once and was dropped.
    EXPECT_EQ(fwd.captured - fwd0.captured, 500);
    EXPECT_EQ(fwd.applied - fwd0.applied, 500);
    EXPECT_EQ(rev.captured - rev0.captured, 500);
    EXPECT_EQ(rev.applied - rev0.applied, 500);
    EXPECT_EQ(rev.droppedOwn - rev0.droppedOwn, 500);
    EXPECT_EQ(fwd.droppedOwn - fwd0.droppedOwn, 500);
}

// (d) doctor checks what each side of a two-way pipeline needs and prints the statements: here
// the tables of both sides lack REPLICA IDENTITY FULL (conflict detection's before-images).
TEST_F(PgTwoWay, doctorNamesWhatEachSideLacksWithTheStatements)
{
    a.exec(kItems);
    b.exec(std::string(kItems) + ";" + "ALTER TABLE items ADD COLUMN _driftless_version bigint NOT NULL DEFAULT 0");
    auto findingsFor = [&](const std::string &subject) {
        std::vector<Finding> out;
        for (const auto &f : runDoctor(workspace(), pipeline))
            if (f.subject == subject)
                out.push_back(f);
        return out;
    };
    for (const std::string side : {"a", "b"}) {
        auto found = findingsFor("table public.items on " + side);
        ASSERT_EQ(found.size(), 1u) << side;
        EXPECT_EQ(std::string(toString(found[0].level)), "warn");
        EXPECT_NE(found[0].message.find("REPLICA IDENTITY is not FULL"), std::string::npos) << found[0].message;
        EXPECT_EQ(found[0].sql, "ALTER TABLE \"public\".\"items\" REPLICA IDENTITY FULL;");
        // The fixture's user is a superuser: origins are allowed, and doctor says what they do.
        auto endpoint = findingsFor("endpoint " + side);
        bool originOk = false;
        for (const auto &f : endpoint)
            originOk = originOk || (std::string(toString(f.level)) == "ok" &&
                                    f.message.find("replication origin") != std::string::npos);
        EXPECT_TRUE(originOk) << side;
    }
    // The printed statement is the fix.
    b.exec(findingsFor("table public.items on b")[0].sql);
    EXPECT_TRUE(findingsFor("table public.items on b").empty());
    EXPECT_EQ(findingsFor("table public.items on a").size(), 1u);
}

// (c) The engine (driftless-cli run) killed with SIGKILL while both sides write, then started
// again: the sides converge, and no change was applied twice on either side. Every change
// writes a value of its own, and a trigger on each side logs every row written there (the
// writer's and Driftless's), so a change applied twice shows as a value logged twice.
TEST_F(PgTwoWay, aKilledEngineRestartsAndConvergesWithoutApplyingAChangeTwice)
{
    const char *kLog = "CREATE TABLE writes (id int, v text); "
                       "CREATE FUNCTION log_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                       "IF TG_OP = 'DELETE' THEN INSERT INTO writes VALUES (OLD.id, 'deleted ' || OLD.v); "
                       "ELSE INSERT INTO writes VALUES (NEW.id, NEW.v); END IF; RETURN NULL; END $$; "
                       "CREATE TRIGGER log_write AFTER INSERT OR UPDATE OR DELETE ON items FOR EACH ROW "
                       "EXECUTE FUNCTION log_write()";
    a.exec(kItems);
    a.exec("INSERT INTO items SELECT g, 'v' || g, g FROM generate_series(1, 100) g");
    a.exec(kLog);
    TempDir dir;
    const std::string state = dir.file("workspace.db");
    writeFile(dir.file("ws.yaml"), "endpoints:\n  a: { kind: postgres, dsn: \"" + a.dsn() +
                                       "\" }\n  b: { kind: postgres, dsn: \"" + b.dsn() +
                                       "\" }\npipelines:\n  - name: " + pipeline +
                                       "\n    source: a\n    target: b\n    direction: both\n    tables:\n"
                                       "      - { table: public.items, strategy: cdc }\n");
    auto applied = runCli({"--state", state, "apply", dir.file("ws.yaml")});
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    const std::string runLog = dir.file("run.log");
    int engine = spawnCli({"--state", state, "run"}, {}, runLog);
    waitStreaming();
    b.exec(kLog);

    // 300 changes a side, each a value of its own, at most about 200 a second.
    auto writer = [](PgTestDb &db, int base, const std::string &side) {
        auto c = db.connect();
        for (int i = 0; i < 300; ++i) {
            const std::string key = std::to_string(base + i % 100);
            const std::string v = "'" + side + " " + std::to_string(i) + "'";
            if (i < 100)
                c.exec("INSERT INTO items VALUES (" + key + ", " + v + ", " + std::to_string(i) + ")");
            else if (i < 280)
                c.exec("UPDATE items SET v = " + v + ", n = n + 1 WHERE id = " + key);
            else
                c.exec("DELETE FROM items WHERE id = " + key);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    };
    std::thread onA([&] { writer(a, 1000, "a"); });
    std::thread onB([&] { writer(b, 5000, "b"); });
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    ::kill(engine, SIGKILL);
    EXPECT_EQ(waitPid(engine, 60), -SIGKILL);
    engine = spawnCli({"--state", state, "run"}, {}, runLog);
    onA.join();
    onB.join();

    const bool converged = waitFor([&] { return hash(a) == hash(b); }, 240);
    ::kill(engine, SIGTERM);
    waitPid(engine, 60);
    ASSERT_TRUE(converged) << "A " << hash(a) << " B " << hash(b) << "\n" << readFile(runLog);
    EXPECT_EQ(a.scalar("SELECT count(*) FROM items WHERE id >= 5000"), "80");
    EXPECT_EQ(b.scalar("SELECT count(*) FROM items WHERE id BETWEEN 1000 AND 4999"), "80");
    const char *twice = "SELECT count(*) FROM (SELECT id, v FROM writes GROUP BY id, v HAVING count(*) > 1) d";
    EXPECT_EQ(a.scalar(twice), "0") << "a change was applied twice on A";
    EXPECT_EQ(b.scalar(twice), "0") << "a change was applied twice on B";
    // The other side's changes did arrive (each at most once; a batch may fold a key's changes).
    EXPECT_GT(std::stoi(a.scalar("SELECT count(*) FROM writes WHERE v LIKE 'b %'")), 0);
    EXPECT_GT(std::stoi(b.scalar("SELECT count(*) FROM writes WHERE v LIKE 'a %'")), 0);
}
