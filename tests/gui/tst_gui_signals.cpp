// The desktop app stopped by a signal (Ctrl+C in its terminal, the demo ending, a logout) stops
// its engine between batches, as closing the window does: it exits 0, and the workspace's mirror
// no longer says the tables are being synced.

#include "core/db/sqlitedb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

using namespace driftless::test;

TEST(GuiSignals, sigintStopsTheEngineBetweenBatchesAndExitsCleanly)
{
    PgTestDb src{"guisig_src"};
    PgTestDb dst{"guisig_dst"};
    TempDir dir;
    const std::string state = dir.file("workspace.db");
    const std::string pipeline = uniqueName("guisig");
    src.exec("CREATE TABLE orders (id int PRIMARY KEY, total int); INSERT INTO orders SELECT g, g FROM "
             "generate_series(1, 1000) g");
    writeFile(dir.file("ws.yaml"), "endpoints:\n"
                                   "  app: { kind: postgres, dsn: \"" +
                                       pgDsn(src.name()) +
                                       "\" }\n"
                                       "  dw: { kind: postgres, dsn: \"" +
                                       pgDsn(dst.name()) +
                                       "\" }\n"
                                       "pipelines:\n"
                                       "  - name: " +
                                       pipeline +
                                       "\n    source: app\n    target: dw\n    tables:\n"
                                       "      - { table: public.orders, strategy: cdc }\n");
    ASSERT_EQ(runCli({"--state", state, "apply", dir.file("ws.yaml")}).exitCode, 0);

    const std::string log = dir.file("gui.log");
    int pid = spawnProgram(DRIFTLESS_GUI_PATH, {"--state", state, "--run"}, {{"QT_QPA_PLATFORM", "offscreen"}}, log);
    auto stateOf = [&] {
        // Read-only, so polling never competes with the app's writes.
        driftless::core::SqliteDb db(state, driftless::core::SqliteDb::Mode::ReadOnly);
        auto st = db.prepare("SELECT state FROM table_status WHERE pipeline = ?1 AND source_table = 'orders'");
        st.bindText(1, pipeline);
        return st.step() ? st.text(0) : std::string();
    };
    std::string seen;
    for (int i = 0; i < 300 && seen != "streaming"; ++i) {
        seen = stateOf();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(seen, "streaming") << readFile(log);
    ::kill(pid, SIGINT);
    EXPECT_EQ(waitPid(pid, 60), 0) << readFile(log);
    EXPECT_NE(readFile(log).find("stopping after the batches in flight"), std::string::npos) << readFile(log);
    EXPECT_NE(stateOf(), "streaming") << "the mirror still says the table is streaming";
    EXPECT_EQ(src.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'driftless_" + pipeline +
                         "' AND active"),
              "0")
        << "the slot is released";
}
