// P1 under kill -9 (faults F1): driftless-cli killed in the middle of a cursor load or pass,
// at fixed points and at random times while the source is being written, then run again:
// nothing lost, no duplicates visible, and finished chunks are not copied again.

#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <random>
#include <thread>

using namespace driftless::test;

namespace {

struct CrashFixture : ::testing::Test {
    PgTestDb src{"crash_src"};
    PgTestDb dst{"crash_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");

    void SetUp() override
    {
        src.exec("CREATE TABLE events (id bigint PRIMARY KEY, v text NOT NULL, updated_at timestamptz NOT NULL "
                 "DEFAULT now()); CREATE INDEX ON events (updated_at); "
                 "INSERT INTO events SELECT g, 'v0', now() - interval '1 hour' FROM generate_series(1, 20000) g");
        const auto &s = servers();
        std::string ws = "endpoints:\n"
                         "  app: { kind: postgres, dsn: \"" +
                         pgDsn(src.name()) +
                         "\" }\n"
                         "  dw: { kind: postgres, dsn: \"" +
                         pgDsn(dst.name()) +
                         "\" }\n"
                         "pipelines:\n"
                         "  - name: crash\n    source: app\n    target: dw\n    tables:\n"
                         "      - { table: public.events, strategy: cursor, page_size: 500, every: 1s }\n";
        (void)s;
        writeFile(dir.file("ws.yaml"), ws);
        auto r = runCli({"--state", state, "apply", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.err;
    }

    std::string hash(PgTestDb &db)
    {
        auto c = db.connect();
        return pgHash(c, "SELECT id, v, updated_at FROM public.events", "id");
    }
    int countLines(const std::string &text, const std::string &needle)
    {
        int n = 0;
        for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1))
            ++n;
        return n;
    }
};

} // namespace

TEST_F(CrashFixture, killedDuringTheInitialLoadResumesAtTheNextChunk)
{
    auto crashed = runCli({"--state", state, "run", "--once"}, {{"DRIFTLESS_CRASH_AT", "batch.after_commit:5"}});
    ASSERT_EQ(crashed.exitCode, -SIGKILL) << crashed.out << crashed.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.events"), "2500") << "five chunks of 500 committed";

    auto rerun = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(rerun.exitCode, 0) << rerun.out << rerun.err;
    EXPECT_EQ(countLines(rerun.out, "loaded 500 rows"), 35) << "the 5 finished chunks are not copied again\n"
                                                            << rerun.out;
    EXPECT_EQ(hash(dst), hash(src));
}

TEST_F(CrashFixture, killedMidPassLosesNothingAndShowsNoDuplicates)
{
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    src.exec("UPDATE events SET v = 'v1', updated_at = now() WHERE id % 4 = 0");
    auto crashed = runCli({"--state", state, "run", "--once"}, {{"DRIFTLESS_CRASH_AT", "batch.after_commit:3"}});
    ASSERT_EQ(crashed.exitCode, -SIGKILL);
    EXPECT_NE(dst.scalar("SELECT count(*) FROM events WHERE v = 'v1'"), "5000") << "the crash came mid-pass";
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM events"), "20000");
    EXPECT_EQ(hash(dst), hash(src));
}

TEST_F(CrashFixture, killedAtRandomTimesUnderWritesEndsEqual)
{
    const unsigned seed = std::random_device{}();
    std::printf("seed %u\n", seed);
    std::mt19937 rng(seed);
    std::atomic<long long> writes{0};
    // Joined on every way out of the test: a throw must not leave it running (std::terminate).
    std::jthread writer([&](std::stop_token st) {
        auto c = src.connect();
        std::mt19937 wr(seed + 1);
        long long next = 100000;
        while (!st.stop_requested()) {
            int kind = static_cast<int>(wr() % 3);
            if (kind == 0)
                c.exec("INSERT INTO events VALUES (" + std::to_string(next++) + ", 'ins', now())");
            else
                c.exec("UPDATE events SET v = 'u" + std::to_string(writes.load()) +
                       "', updated_at = now() WHERE id = " + std::to_string(1 + wr() % 20000));
            ++writes;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    });
    int kills = 0;
    for (int i = 0; i < 6; ++i) {
        int pid = spawnCli({"--state", state, "run"}, {}, dir.file("run.log"));
        std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 1500));
        ::kill(pid, SIGKILL);
        if (waitPid(pid, 30) == -SIGKILL)
            ++kills;
    }
    writer.request_stop();
    writer.join();
    EXPECT_GE(kills, 5) << readFile(dir.file("run.log"));
    EXPECT_GT(writes.load(), 100);
    auto final = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(final.exitCode, 0) << final.out << final.err;
    EXPECT_EQ(hash(dst), hash(src)) << "seed " << seed;
}
