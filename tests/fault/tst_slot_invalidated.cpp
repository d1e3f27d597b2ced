// Faults F5: a source with a tiny max_slot_wal_keep_size, the engine stalled, WAL switched past
// it: the slot is invalidated (wal_status lost). The slot guard sees it, falls back to cursor
// sync, the reconciliation runs and repairs, and the target ends equal to the source; the events
// tell the story. Changes a server setting, so ctest runs it alone (RUN_SERIAL).

#include "core/db/sqlitedb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <thread>

using namespace driftless::test;

namespace {
/// Sets max_slot_wal_keep_size for the test and puts the old value back.
class KeepSize {
public:
    KeepSize(PgTestDb &db, const std::string &value) : m_db(db)
    {
        m_old = db.scalar("SELECT setting FROM pg_settings WHERE name = 'max_slot_wal_keep_size'");
        db.exec("ALTER SYSTEM SET max_slot_wal_keep_size = '" + value + "'");
        db.exec("SELECT pg_reload_conf()");
        for (int i = 0; i < 50 && db.scalar("SHOW max_slot_wal_keep_size") != value; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ~KeepSize()
    {
        m_db.exec(m_old == "-1" ? "ALTER SYSTEM RESET max_slot_wal_keep_size"
                                : "ALTER SYSTEM SET max_slot_wal_keep_size = '" + m_old + "MB'");
        m_db.exec("SELECT pg_reload_conf()");
    }

private:
    PgTestDb &m_db;
    std::string m_old;
};
} // namespace

TEST(SlotInvalidated, theGuardSeesLostFallsBackAndTheTargetEndsEqual)
{
    PgTestDb src("f5_src"), dst("f5_dst");
    TempDir dir;
    const std::string state = dir.file("workspace.db");
    const std::string pipeline = uniqueName("f5");
    const std::string slot = "driftless_" + pipeline;
    src.exec("CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, updated_at timestamptz NOT NULL "
             "DEFAULT now()); INSERT INTO items SELECT g, 'item ' || g, now() - interval '1 day' FROM "
             "generate_series(1, 1000) g; CREATE TABLE filler (id int, pad text)");
    const auto &s = servers();
    const std::string host = "host=127.0.0.1 port=" + std::to_string(s.pgPort) + " user=" + s.pgUser;
    // The guard's own threshold is far away: only the invalidation can trigger it.
    writeFile(dir.file("ws.yaml"), "endpoints:\n"
                                   "  app: { kind: postgres, dsn: \"" +
                                       host + " dbname=" + src.name() +
                                       "\", slot_guard: { max_retained: 10GB, action: fallback } }\n"
                                       "  dw:  { kind: postgres, dsn: \"" +
                                       host + " dbname=" + dst.name() +
                                       "\" }\n"
                                       "pipelines:\n  - name: " +
                                       pipeline +
                                       "\n    source: app\n    target: dw\n"
                                       "    tables:\n      - { table: public.items, strategy: cdc }\n");
    ASSERT_EQ(runCli({"--state", state, "apply", dir.file("ws.yaml")}).exitCode, 0);
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);

    {
        KeepSize tiny(src, "1MB");
        // The engine is stalled (not running); the source writes and switches WAL past the limit.
        src.exec("UPDATE items SET name = 'changed', updated_at = now() WHERE id <= 10");
        src.exec("DELETE FROM items WHERE id IN (500, 501)");
        std::string status;
        for (int round = 0; round < 60 && status != "lost"; ++round) {
            src.exec("INSERT INTO filler SELECT g, repeat(md5(g::text), 40) FROM generate_series(1, 2000) g");
            src.exec("SELECT pg_switch_wal()");
            src.exec("CHECKPOINT");
            status = src.scalar("SELECT coalesce(wal_status, '') FROM pg_replication_slots WHERE slot_name = '" + slot +
                                "'");
        }
        ASSERT_EQ(status, "lost") << "the slot was not invalidated";
    }

    // The sync starts: the guard sees the lost slot and falls back instead of failing for good.
    auto run = runCli({"--state", state, "run", "--once"});
    EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
    EXPECT_EQ(src.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "'"), "0");
    auto a = src.connect(), b = dst.connect();
    EXPECT_EQ(pgHash(a, "SELECT id, name, updated_at FROM items", "id"),
              pgHash(b, "SELECT id, name, updated_at FROM items", "id"));

    driftless::core::SqliteDb db(state, driftless::core::SqliteDb::Mode::ReadOnly);
    auto st = db.prepare("SELECT kind || ': ' || message FROM events ORDER BY id");
    std::string story;
    while (st.step())
        story += st.text(0) + "\n";
    for (const char *needle : {"wal_status lost", "switched from CDC to cursor sync by updated_at",
                               "reconcile: drift: 0 missing, 2 extra", "repair: repaired from report"})
        EXPECT_NE(story.find(needle), std::string::npos) << needle << "\n" << story;
    auto status = nlohmann::json::parse(runCli({"--state", state, "status", "--json"}).out);
    EXPECT_EQ(status["tables"][0]["strategy"], "cursor");
    EXPECT_EQ(status["tables"][0]["fallback_from"], "cdc");
}
