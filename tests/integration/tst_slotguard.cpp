// The slot guard with action: fallback, end to end through driftless-cli against a real server:
// WAL retained past max_retained while nothing reads the slot makes the engine drop the slot
// before the source is harmed, switch the CDC tables to cursor sync, reconcile them and repair
// what cursor sync cannot see; `promote` brings them back to CDC with the target equal.

#include "core/db/sqlitedb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <csignal>
#include <regex>
#include <thread>

using namespace driftless::test;
using json = nlohmann::json;

namespace {

struct SlotGuard : ::testing::Test {
    PgTestDb src{"guard_src"};
    PgTestDb dst{"guard_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string pipeline = uniqueName("guard");
    std::string slot = "driftless_" + pipeline;
    int runner = 0;

    void SetUp() override
    {
        src.exec(R"sql(
CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO items SELECT g, 'item ' || g, now() - interval '1 day' FROM generate_series(1, 2000) g;
CREATE TABLE tags (id int PRIMARY KEY, label text);
INSERT INTO tags SELECT g, 'tag ' || g FROM generate_series(1, 10) g;
CREATE TABLE filler (id int, pad text);
)sql");
        storeWorkspace("4MB");
    }
    /// Writes ws.yaml with the source's guard at `maxRetained` and applies it.
    void storeWorkspace(const std::string &maxRetained)
    {
        const auto &s = servers();
        const std::string host = "host=127.0.0.1 port=" + std::to_string(s.pgPort) + " user=" + s.pgUser;
        writeFile(dir.file("ws.yaml"), "endpoints:\n"
                                       "  app: { kind: postgres, dsn: \"" +
                                           host + " dbname=" + src.name() +
                                           "\", slot_guard: { max_retained: " + maxRetained +
                                           ", action: fallback } }\n"
                                           "  dw:  { kind: postgres, dsn: \"" +
                                           host + " dbname=" + dst.name() +
                                           "\" }\n"
                                           "pipelines:\n"
                                           "  - name: " +
                                           pipeline +
                                           "\n"
                                           "    source: app\n"
                                           "    target: dw\n"
                                           "    tables:\n"
                                           "      - { table: public.items, strategy: cdc }\n"
                                           "      - { table: public.tags, strategy: cdc }\n");
        auto applied = runCli({"--state", state, "apply", dir.file("ws.yaml")});
        ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    }
    void TearDown() override
    {
        if (runner > 0) {
            ::kill(runner, SIGTERM);
            waitPid(runner, 60);
        }
        src.exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot +
                 "' AND NOT active");
    }
    std::string hash(PgTestDb &db) const
    {
        auto c = db.connect();
        return pgHash(c, "SELECT id, name, updated_at FROM items", "id");
    }
    json tableStatus(const std::string &table)
    {
        auto st = runCli({"--state", state, "status", "--json"});
        auto j = json::parse(st.out, nullptr, false);
        if (j.is_object())
            for (const auto &t : j["tables"])
                if (t["table"] == table)
                    return t;
        return json();
    }
    long long slots()
    {
        return std::stoll(src.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "'"));
    }
    std::string events()
    {
        driftless::core::SqliteDb db(state, driftless::core::SqliteDb::Mode::ReadOnly);
        auto st = db.prepare("SELECT kind || ': ' || message FROM events ORDER BY id");
        std::string out;
        while (st.step())
            out += st.text(0) + "\n";
        return out;
    }
};

} // namespace

TEST_F(SlotGuard, pastMaxRetainedItFallsBackReconcilesAndPromoteReturnsToCdc)
{
    auto first = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
    ASSERT_EQ(slots(), 1);
    ASSERT_EQ(hash(src), hash(dst));

    // The apply side is stopped; the source keeps working: changes cursor sync sees (updated_at
    // moves), a hard delete it cannot see, and WAL from elsewhere that the slot must hold.
    src.exec("UPDATE items SET name = name || ' v2', updated_at = now() WHERE id <= 20");
    src.exec("INSERT INTO items (id, name) SELECT g, 'new ' || g FROM generate_series(3001, 3005) g");
    src.exec("DELETE FROM items WHERE id IN (100, 200, 300)");
    long long retained = 0;
    for (int round = 0; round < 40 && retained <= (6LL << 20); ++round) {
        src.exec("INSERT INTO filler SELECT g, repeat(md5(g::text), 40) FROM generate_series(1, 4000) g");
        retained = std::stoll(src.scalar(
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint FROM pg_replication_slots WHERE "
            "slot_name = '" +
            slot + "'"));
    }
    ASSERT_GT(retained, 4LL << 20) << "the test did not write enough WAL to pass the guard";

    // The sync starts: the guard acts before anything reads the slot.
    runner = spawnCli({"--state", state, "run", "--guard-every", "500ms"}, {}, dir.file("run.log"));
    bool done = false;
    for (int i = 0; i < 600 && !done; ++i) {
        const auto t = tableStatus("public.items");
        done = !t.is_null() && t["strategy"] == "cursor" && t["reconcile"].is_object() && hash(src) == hash(dst);
        if (!done)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const std::string story = events();
    ASSERT_TRUE(done) << story << readFile(dir.file("run.log"));
    // The slot is gone, so the source no longer keeps WAL for it.
    EXPECT_EQ(slots(), 0) << story;
    // The events tell the story: the guard, the switch, the reconciliation and its repair.
    for (const char *needle : {"slot_guard: slot guard on app: the slot holds", "dropped replication slot ",
                               "public.items switched from CDC to cursor sync by updated_at",
                               "public.tags has no cursor column to fall back to",
                               "reconcile: drift: 0 missing, 3 extra", "repair: repaired from report"})
        EXPECT_NE(story.find(needle), std::string::npos) << needle << "\n" << story;
    // The table without a cursor column stops red with the reason, and nothing recreated the slot.
    const auto tags = tableStatus("public.tags");
    EXPECT_EQ(tags["state"], "error") << tags.dump();
    EXPECT_EQ(tableStatus("public.items")["fallback_from"], "cdc");
    // The exported YAML says what happened.
    auto exported = runCli({"--state", state, "export"});
    EXPECT_NE(exported.out.find("fallback_from: cdc"), std::string::npos) << exported.out;

    // Back to CDC, while the cursor sync keeps running: the running sync restarts with the new
    // workspace; promote itself loads and catches up if it gets to the slot first.
    ::kill(runner, SIGTERM);
    EXPECT_EQ(waitPid(runner, 60), 0) << readFile(dir.file("run.log"));
    runner = 0;
    src.exec("UPDATE items SET name = 'after fallback' WHERE id = 7"); // updated_at untouched: only a copy sees it
    auto promoted = runCli({"--state", state, "promote", pipeline});
    ASSERT_EQ(promoted.exitCode, 0) << promoted.out << promoted.err;
    EXPECT_NE(promoted.out.find("public.items promoted back to CDC"), std::string::npos) << promoted.out;
    EXPECT_EQ(slots(), 1);
    EXPECT_EQ(hash(src), hash(dst));
    EXPECT_EQ(tableStatus("public.items")["strategy"], "cdc");
    // The table that stayed stopped was copied again from the new slot too.
    EXPECT_NE(promoted.out.find("public.tags lost its slot"), std::string::npos) << promoted.out;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM tags"), "10");
    // Streaming again: a new change arrives through the slot. The test server is shared with
    // other tests whose WAL the new slot holds while nothing reads it: raise the guard's limit so
    // only what this test does can trip it.
    writeFile(dir.file("ws.yaml"),
              std::regex_replace(readFile(dir.file("ws.yaml")), std::regex("max_retained: 4MB"), "max_retained: 10GB"));
    auto reapplied = runCli({"--state", state, "apply", dir.file("ws.yaml")});
    ASSERT_EQ(reapplied.exitCode, 0) << reapplied.out << reapplied.err;
    src.exec("UPDATE items SET name = 'streamed' WHERE id = 8");
    auto again = runCli({"--state", state, "run", "--once"});
    EXPECT_EQ(again.exitCode, 0) << again.out << again.err;
    EXPECT_EQ(dst.scalar("SELECT name FROM items WHERE id = 8"), "streamed");
    EXPECT_EQ(hash(src), hash(dst));
    auto rec = runCli({"--state", state, "reconcile", pipeline, "public.items"});
    EXPECT_EQ(rec.exitCode, 0) << rec.out << rec.err;
}

TEST_F(SlotGuard, whileServingAStalledApplySideFallsBackBeforeTheSourceIsHarmed)
{
    // The test server is shared: under a loaded suite other tests' WAL alone can pass 4 MB between
    // the slot's creation and its first confirmed position. The guard is lowered to 4 MB only once
    // the sync streams and the target stalls, as a DBA would lower it; the running engine obeys it
    // although its apply side is stuck.
    storeWorkspace("10GB");
    runner = spawnCli({"--state", state, "serve", "--listen", "127.0.0.1:0", "--monitor-every", "300ms"}, {},
                      dir.file("serve.log"));
    auto streaming = [&] {
        const auto t = tableStatus("public.items");
        return !t.is_null() && t["strategy"] == "cdc" && t["state"] == "streaming";
    };
    for (int i = 0; i < 300 && !streaming(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(streaming()) << readFile(dir.file("serve.log"));

    // The target stalls (a long lock, faults F7): the apply side stops while the source writes.
    auto blocker = dst.connect();
    blocker.exec("BEGIN; LOCK TABLE items IN ACCESS EXCLUSIVE MODE");
    src.exec("UPDATE items SET name = 'during the stall', updated_at = now() WHERE id <= 5");
    src.exec("DELETE FROM items WHERE id = 1000");
    for (int round = 0; round < 3; ++round)
        src.exec("INSERT INTO filler SELECT g, repeat(md5(g::text), 40) FROM generate_series(1, 4000) g");
    storeWorkspace("4MB");
    // The guard drops the slot although the stalled sync still has it open.
    bool dropped = false;
    for (int i = 0; i < 300 && !dropped; ++i) {
        dropped = slots() == 0;
        if (!dropped)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(dropped) << events() << readFile(dir.file("serve.log"));
    blocker.exec("ROLLBACK");

    // serve starts again with the fallen-back workspace, syncs by cursor and reconciles.
    bool done = false;
    for (int i = 0; i < 600 && !done; ++i) {
        const auto t = tableStatus("public.items");
        done = !t.is_null() && t["strategy"] == "cursor" && t["reconcile"].is_object() && hash(src) == hash(dst);
        if (!done)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(done) << events() << readFile(dir.file("serve.log"));
    EXPECT_EQ(slots(), 0);
    EXPECT_EQ(::kill(runner, 0), 0) << "serve should have restarted in place, not exited";
    const std::string log = readFile(dir.file("serve.log"));
    EXPECT_NE(log.find("CDC tables switched to cursor sync; restarting with them"), std::string::npos) << log;
    // In place: the engine started again with the fallen-back workspace while the endpoint kept
    // answering (it is bound once).
    EXPECT_NE(log.find("the stored workspace changed (a slot guard fallback, promote or apply): the sync starts again"),
              std::string::npos)
        << log;
    EXPECT_EQ(log.find("serving http://"), log.rfind("serving http://")) << log;
}
