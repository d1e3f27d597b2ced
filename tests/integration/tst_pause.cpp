// Pause and resume per table against real Postgres: a paused cursor table is skipped while the
// other tables sync and catches up when resumed; a paused CDC table's changes are not applied
// while the rest of its pipeline streams, and after Resume (while running, or while nothing
// ran) it holds every change made during the pause, with zero drift; the pause survives a
// restart; and the CLI's pause / resume / status --json / run --once say and do the same.

#include "core/engine/jobs/pauses.h"
#include "core/engine/run/scheduler.h"
#include "core/engine/run/stateobserver.h"
#include "core/engine/status/statusreport.h"
#include "core/state/statestore.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;
using namespace std::chrono_literals;

namespace {

const char *kItems = R"sql(
CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, qty int,
                    updated_at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE others (id bigint PRIMARY KEY, note text NOT NULL,
                     updated_at timestamptz NOT NULL DEFAULT clock_timestamp());
INSERT INTO items (id, name, qty) SELECT g, 'item ' || g, g % 10 FROM generate_series(1, 3000) g;
INSERT INTO others (id, note) SELECT g, 'other ' || g FROM generate_series(1, 100) g;
)sql";

const char *kItemCols = "SELECT id, name, qty, updated_at FROM items";
const char *kOtherCols = "SELECT id, note, updated_at FROM others";

/// A workspace file with one pipeline of `items` and `others`, both with `strategy`, and the
/// engine (Scheduler + StateObserver, as `driftless-cli run` wires them) on a thread.
struct Pause : ::testing::Test {
    PgTestDb src{"pause_src"};
    PgTestDb dst{"pause_dst"};
    TempDir dir;
    std::string statePath = dir.file("workspace.db");
    std::string pipeline = uniqueName("pause");
    Workspace ws;
    RecordingObserver obs;

    struct Engine {
        std::stop_source stop;
        std::jthread thread;
    };
    std::unique_ptr<Engine> engine;

    void setUpWorkspace(Strategy strategy)
    {
        src.exec(kItems);
        ws.endpoints["src"] = pgEndpoint("src", src.name());
        ws.endpoints["dst"] = pgEndpoint("dst", dst.name());
        PipelineSpec p;
        p.name = pipeline;
        p.source = "src";
        p.target = "dst";
        for (const char *name : {"items", "others"}) {
            TableSpec t;
            t.table = {"public", name};
            t.strategy = strategy;
            t.pageSize = 1000;
            if (strategy == Strategy::Cursor) {
                t.cursor = "updated_at";
                t.lookback = "1s";
                t.every = Millis(300);
            }
            p.tables.push_back(t);
        }
        ws.pipelines = {p};
        StateStore(statePath).applyWorkspace(ws);
    }
    void start()
    {
        engine = std::make_unique<Engine>();
        engine->thread = std::jthread([this, stop = engine->stop.get_token()] {
            StateStore store(statePath);
            auto jobs = jobsFor(ws);
            StateObserver mirror(store, jobs);
            mirror.setNext(&obs);
            Scheduler::Options opts;
            opts.pausedTables = [&store] { return readPauses(store); };
            Scheduler(jobs, mirror, opts).run(stop);
        });
    }
    void stop()
    {
        engine->stop.request_stop();
        engine->thread.join();
        engine.reset();
    }
    void TearDown() override
    {
        if (engine)
            stop();
    }
    void setPaused(const std::string &table, bool pause)
    {
        StateStore store(statePath);
        auto changes = setTablesPaused(store, ws, pipeline, {table}, pause);
        ASSERT_EQ(changes.size(), 1u);
        EXPECT_TRUE(changes[0].changed) << changes[0].message;
    }
    std::string hash(PgTestDb &db, const char *select)
    {
        auto c = db.connect();
        return pgHash(c, select, "id");
    }
    bool equal(const char *select) { return hash(src, select) == hash(dst, select); }
    std::string checkpoint(const std::string &table)
    {
        return dst.scalar("SELECT coalesce((SELECT position FROM _driftless.checkpoints WHERE pipeline = '" + pipeline +
                          "' AND source_table = '" + table + "'), '')");
    }
    std::string stateOf(const std::string &table)
    {
        StateStore store(statePath);
        auto s = store.tableStatus(pipeline, TableRef::parse(table));
        return s ? std::string(toString(s->state)) : std::string();
    }
    void changeItems(int round)
    {
        const std::string r = std::to_string(round);
        src.exec("INSERT INTO items (id, name, qty) SELECT g, 'added " + r + "', 1 FROM generate_series(" +
                 std::to_string(10000 + round * 100) + ", " + std::to_string(10000 + round * 100 + 49) + ") g");
        src.exec("UPDATE items SET qty = qty + " + r + ", name = name || ' u" + r +
                 "', updated_at = clock_timestamp() "
                 "WHERE id % 97 = " +
                 std::to_string(round % 97));
        src.exec("DELETE FROM items WHERE id % 89 = " + std::to_string(round % 89));
    }
};

} // namespace

TEST_F(Pause, aPausedCursorTableIsSkippedThenCatchesUpOnResume)
{
    setUpWorkspace(Strategy::Cursor);
    start();
    ASSERT_TRUE(waitForIgnoringErrors([&] { return equal(kItemCols) && equal(kOtherCols); }));

    setPaused("public.items", true);
    // The engine took it (within a second; a pass it had started may end first).
    ASSERT_TRUE(waitForIgnoringErrors([&] { return obs.sawState("paused: skipped by the scheduler"); }, 10));
    EXPECT_EQ(stateOf("public.items"), "paused");
    const std::string before = hash(dst, kItemCols);
    const std::string cp = checkpoint("public.items");
    ASSERT_FALSE(cp.empty());

    // Inserts and updates (cursor sync sees those; deletes are its documented blind spot).
    src.exec("INSERT INTO items (id, name, qty) SELECT g, 'new', 1 FROM generate_series(5001, 5200) g");
    src.exec("UPDATE items SET qty = -1, updated_at = clock_timestamp() WHERE id <= 100");
    src.exec("INSERT INTO others (id, note) VALUES (1001, 'while items is paused')");
    // The other table keeps syncing; the paused one is left alone, checkpoint and all.
    ASSERT_TRUE(waitForIgnoringErrors([&] { return equal(kOtherCols); }, 20));
    std::this_thread::sleep_for(2s); // several of its 300 ms schedules
    EXPECT_EQ(hash(dst, kItemCols), before);
    EXPECT_EQ(checkpoint("public.items"), cp);
    EXPECT_EQ(stateOf("public.items"), "paused");

    setPaused("public.items", false);
    ASSERT_TRUE(waitForIgnoringErrors([&] { return equal(kItemCols); }, 30));
    EXPECT_NE(checkpoint("public.items"), cp);
    EXPECT_TRUE(waitForIgnoringErrors([&] { return stateOf("public.items") == "ok"; }, 10)) << stateOf("public.items");
}

TEST_F(Pause, aPausedCdcTableGetsEveryChangeAfterResumeWhileOthersStream)
{
    setUpWorkspace(Strategy::Cdc);
    start();
    ASSERT_TRUE(waitForIgnoringErrors([&] { return equal(kItemCols) && equal(kOtherCols); }));

    setPaused("public.items", true);
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] { return checkpoint("public.items").find("\"paused\":true") != std::string::npos; }, 10))
        << checkpoint("public.items");
    EXPECT_TRUE(waitForIgnoringErrors([&] { return stateOf("public.items") == "paused"; }, 5));
    const std::string before = hash(dst, kItemCols);
    const auto pausedAt = nlohmann::json::parse(checkpoint("public.items"))["lsn"].get<std::string>();

    for (int round = 1; round <= 5; ++round) {
        changeItems(round);
        src.exec("INSERT INTO others (id, note) VALUES (" + std::to_string(2000 + round) + ", 'streamed')");
    }
    src.exec("TRUNCATE others"); // a TRUNCATE of another table streams too
    src.exec("INSERT INTO others (id, note) SELECT g, 'after truncate' FROM generate_series(1, 20) g");
    // The rest of the pipeline streams; the paused table's changes are not applied, and its
    // checkpoint stays where it was while the slot moves past it.
    ASSERT_TRUE(waitForIgnoringErrors([&] { return equal(kOtherCols); }, 30));
    EXPECT_EQ(hash(dst, kItemCols), before);
    EXPECT_EQ(nlohmann::json::parse(checkpoint("public.items"))["lsn"].get<std::string>(), pausedAt);
    EXPECT_TRUE(waitForIgnoringErrors(
        [&] {
            return src.scalar("SELECT confirmed_flush_lsn > '" + pausedAt +
                              "'::pg_lsn FROM pg_replication_slots WHERE slot_name = 'driftless_" + pipeline + "'") ==
                   "t";
        },
        20));

    // Resume, and keep writing while it is copied again.
    setPaused("public.items", false);
    ASSERT_TRUE(waitForIgnoringErrors([&] { return obs.sawEvent("rebackfill: starting a re-backfill"); }, 20));
    changeItems(6);
    ASSERT_TRUE(waitForIgnoringErrors([&] { return obs.sawEvent("re-backfill done"); }, 60));
    changeItems(7);
    ASSERT_TRUE(waitForIgnoringErrors([&] { return equal(kItemCols) && equal(kOtherCols); }, 30))
        << "items: " << src.scalar("SELECT count(*) FROM items") << " rows at the source, "
        << dst.scalar("SELECT count(*) FROM items") << " in the target";
    EXPECT_EQ(checkpoint("public.items").find("paused"), std::string::npos) << checkpoint("public.items");
    EXPECT_TRUE(waitForIgnoringErrors([&] { return stateOf("public.items") == "streaming"; }, 10))
        << stateOf("public.items");
}

TEST_F(Pause, aCdcPauseSurvivesARestartAndAResumeWhileStopped)
{
    setUpWorkspace(Strategy::Cdc);
    start();
    ASSERT_TRUE(waitForIgnoringErrors([&] { return equal(kItemCols) && equal(kOtherCols); }));
    setPaused("public.items", true);
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] { return checkpoint("public.items").find("\"paused\":true") != std::string::npos; }, 10));
    stop();
    const std::string before = hash(dst, kItemCols);

    // Started again while paused: still paused, the others stream.
    changeItems(1);
    src.exec("INSERT INTO others (id, note) VALUES (3001, 'after the restart')");
    start();
    ASSERT_TRUE(waitForIgnoringErrors([&] { return equal(kOtherCols); }, 30));
    std::this_thread::sleep_for(1s);
    EXPECT_EQ(hash(dst, kItemCols), before);
    EXPECT_EQ(stateOf("public.items"), "paused");
    stop();

    // Resumed while nothing runs: the next start copies it again (the slot is past its
    // checkpoint, which the pause mark explains: no "slot moved" error) and streams it.
    changeItems(2);
    setPaused("public.items", false);
    changeItems(3);
    obs.events.clear();
    start();
    ASSERT_TRUE(waitForIgnoringErrors([&] { return obs.sawEvent("re-backfill done"); }, 60));
    EXPECT_FALSE(obs.sawEvent("moved past")) << "the slot check took the pause for a moved slot";
    changeItems(4);
    ASSERT_TRUE(waitForIgnoringErrors([&] { return equal(kItemCols) && equal(kOtherCols); }, 30));
}

TEST_F(Pause, theCliPausesResumesAndShowsIt)
{
    setUpWorkspace(Strategy::Cursor);
    auto r = runCli({"--state", statePath, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    ASSERT_TRUE(equal(kItemCols));

    r = runCli({"--state", statePath, "pause", pipeline, "public.items"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("paused " + pipeline + "/public.items"), std::string::npos) << r.out;
    r = runCli({"--state", statePath, "pause", pipeline, "items"});
    EXPECT_NE(r.out.find("already paused"), std::string::npos) << r.out;
    r = runCli({"--state", statePath, "pause", pipeline, "public.nope"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("has no table public.nope"), std::string::npos) << r.err;

    r = runCli({"--state", statePath, "status", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto status = nlohmann::json::parse(r.out);
    for (const auto &t : status["tables"]) {
        const bool items = t["table"] == "public.items";
        EXPECT_EQ(t["state"], items ? "paused" : "ok") << t.dump();
        EXPECT_EQ(t["paused"], items);
        EXPECT_EQ(t["paused_at"].is_string(), items);
    }
    r = runCli({"--state", statePath, "status"});
    EXPECT_NE(r.out.find("paused"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("skipped by the scheduler until resumed"), std::string::npos) << r.out;

    // run --once skips it (the others sync), and the pause outlives the process.
    src.exec("INSERT INTO items (id, name, qty) SELECT g, 'new', 1 FROM generate_series(5001, 5100) g");
    src.exec("INSERT INTO others (id, note) VALUES (1001, 'x')");
    r = runCli({"--state", statePath, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_FALSE(equal(kItemCols));
    EXPECT_TRUE(equal(kOtherCols));
    EXPECT_EQ(stateOf("public.items"), "paused");

    r = runCli({"--state", statePath, "resume", pipeline, "public.items"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("resumed " + pipeline + "/public.items: its next pass runs at once"), std::string::npos)
        << r.out;
    status = nlohmann::json::parse(runCli({"--state", statePath, "status", "--json"}).out);
    for (const auto &t : status["tables"])
        EXPECT_EQ(t["paused"], false) << t.dump();
    r = runCli({"--state", statePath, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(equal(kItemCols));
    EXPECT_EQ(stateOf("public.items"), "ok");
}
