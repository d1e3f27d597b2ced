// A CDC pipeline's slot holds WAL while its engine is stopped and a bounded, rate-limited writer
// fills the source: serve stores slot samples (at --sample-every, not every monitor round) and
// projects the time until the slot guard's max_retained from them, matching the growth rate
// measured on the server; seconds_to_limit is a number in /sync/status, in /metrics and in
// `slots --json` (which reads the samples serve stored), and null once the guard is gone.

#include "core/db/pgconnection.h"
#include "core/db/sqlitedb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <regex>
#include <thread>

using namespace driftless::test;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::int64_t kMaxRetained = 10LL * 1024 * 1024 * 1024; // the guard's 10GB

struct SlotGrowth : ::testing::Test {
    PgTestDb src{"growth_src"};
    PgTestDb dst{"growth_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string cdc = uniqueName("grow");
    std::string idle = uniqueName("idle");
    std::string slot = "driftless_" + cdc;
    int pid = 0;
    int port = 0;

    std::string workspaceYaml(bool guard) const
    {
        const auto &s = servers();
        const std::string host = "host=127.0.0.1 port=" + std::to_string(s.pgPort) + " user=" + s.pgUser;
        return "endpoints:\n"
               "  app: { kind: postgres, dsn: \"" +
               host + " dbname=" + src.name() + "\"" +
               (guard ? ",\n         slot_guard: { max_retained: 10GB, action: alert } }\n" : " }\n") +
               "  dw: { kind: postgres, dsn: \"" + host + " dbname=" + dst.name() +
               "\" }\n"
               "pipelines:\n"
               "  - name: " +
               cdc +
               "\n    source: app\n    target: dw\n    tables:\n"
               "      - { table: public.filler, strategy: cdc }\n"
               "  - name: " +
               idle +
               "\n    source: app\n    target: dw\n    tables:\n"
               "      - { table: public.events, strategy: cursor, every: 5s }\n";
    }
    void SetUp() override
    {
        src.exec("CREATE TABLE filler (id bigserial PRIMARY KEY, pad text NOT NULL);"
                 "CREATE TABLE events (id int PRIMARY KEY, updated_at timestamptz NOT NULL DEFAULT now());"
                 "INSERT INTO events SELECT g, now() FROM generate_series(1, 10) g;");
        writeFile(dir.file("ws.yaml"), workspaceYaml(true));
        auto r = runCli({"--state", state, "apply", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.err;
    }
    void TearDown() override
    {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            waitPid(pid, 30);
        }
    }
    void startServer(const std::vector<std::string> &extra)
    {
        std::string log = dir.file("serve.log");
        std::vector<std::string> args{"--state", state, "serve", "--listen", "127.0.0.1:0", "--pipeline", idle};
        args.insert(args.end(), extra.begin(), extra.end());
        pid = spawnCli(args, {}, log);
        std::regex re("serving http://127\\.0\\.0\\.1:([0-9]+)/sync/status");
        for (int i = 0; i < 600 && port == 0; ++i) {
            std::smatch m;
            std::string out = readFile(log);
            if (std::regex_search(out, m, re))
                port = std::stoi(m[1]);
            else
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ASSERT_GT(port, 0) << readFile(log);
    }
    void stopServer()
    {
        ::kill(pid, SIGTERM);
        EXPECT_EQ(waitPid(pid, 120), 0);
        pid = 0;
    }
    static const json *slotIn(const json &doc, const std::string &name)
    {
        for (const auto &x : doc["slots"])
            if (x["slot"] == name && x["source"] == "app")
                return &x;
        return nullptr;
    }
    /// WAL the slot holds, read on the server, and when (the server's clock, in seconds).
    std::pair<double, double> retainedNow(driftless::core::PgConnection &c) const
    {
        auto r = c.exec("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::float8, "
                        "extract(epoch FROM clock_timestamp())::float8 FROM pg_replication_slots "
                        "WHERE slot_name = '" +
                        slot + "'");
        EXPECT_EQ(r.rows(), 1);
        return {std::stod(r.text(0, 0)), std::stod(r.text(0, 1))};
    }
};

} // namespace

TEST_F(SlotGrowth, theTimeToTheGuardLimitFollowsTheMeasuredGrowthRate)
{
    // The CDC pipeline makes its slot and loads, then its engine stops: the slot holds all WAL
    // written from here on. serve runs only the other pipeline, so nothing consumes the slot.
    auto once = runCli({"--state", state, "run", "--once", "--pipeline", cdc});
    ASSERT_EQ(once.exitCode, 0) << once.out << once.err;
    ASSERT_EQ(src.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "'"), "1");

    const auto served = Clock::now();
    startServer({"--monitor-every", "300ms", "--sample-every", "1s"});

    // A bounded writer: 240 statements of 60 rows of 1,472 incompressible bytes (about 90 kB of
    // WAL each), at most 6 a second, so at least 40 s of steady growth; slower on a busy machine.
    auto conn = src.connect();
    const auto [retained0, at0] = retainedNow(conn);
    const auto started = Clock::now();
    constexpr int kStatements = 240;
    for (int i = 0; i < kStatements; ++i) {
        const auto due = started + std::chrono::microseconds(1'000'000LL * i / 6);
        std::this_thread::sleep_until(due);
        conn.exec("INSERT INTO filler (pad) SELECT repeat(md5(random()::text), 46) FROM generate_series(1, 60)");
    }
    const auto [retained1, at1] = retainedNow(conn);
    const double measuredRate = (retained1 - retained0) / (at1 - at0);
    ASSERT_GT(measuredRate, 0);
    std::printf("measured: %.0f bytes/s of retained WAL over %.1f s\n", measuredRate, at1 - at0);

    // serve's projection, from its samples of the last 15 minutes (all of them here).
    json st, ours;
    for (int i = 0; i < 600; ++i) {
        auto r = httpRequest(port, "GET", "/sync/status");
        if (r.status == 200) {
            st = json::parse(r.body);
            if (const json *s = slotIn(st, slot); s && (*s)["seconds_to_limit"].is_number()) {
                ours = *s;
                break;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(ours.is_object()) << st.dump(2);
    ASSERT_TRUE(ours["retained_bytes"].is_number()) << ours.dump();
    const double projected = ours["seconds_to_limit"].get<double>();
    double expected = (static_cast<double>(kMaxRetained) - ours["retained_bytes"].get<double>()) / measuredRate;
    if (ours["safe_wal_size"].is_number()) // a server limit nearer than the guard's counts first
        expected = std::min(expected, ours["safe_wal_size"].get<double>() / measuredRate);
    std::printf("projected %.0f s to the limit; the measured rate says %.0f s\n", projected, expected);
    // Generous: other suites write WAL on the same server, and the fit also sees the seconds
    // before the writer started and after it stopped.
    EXPECT_GT(projected, expected / 2.5) << ours.dump();
    EXPECT_LT(projected, expected * 2.5) << ours.dump();

    // The same in /metrics.
    auto m = httpRequest(port, "GET", "/metrics");
    ASSERT_EQ(m.status, 200);
    std::regex gauge("driftless_slot_seconds_to_limit\\{source=\"app\",slot=\"" + slot + "\"\\} ([0-9.e+]+)\n");
    std::smatch g;
    ASSERT_TRUE(std::regex_search(m.body, g, gauge)) << m.body;
    EXPECT_GT(std::stod(g[1]), 0);

    stopServer();
    const double servedSeconds = std::chrono::duration<double>(Clock::now() - served).count();

    // Samples were stored about once a second, not at every 300 ms monitor round.
    {
        driftless::core::SqliteDb db(state, driftless::core::SqliteDb::Mode::ReadOnly);
        const auto samples = db.scalarInt("SELECT count(*) FROM slot_samples WHERE source = 'app' AND slot = '" + slot +
                                          "' AND retained_bytes IS NOT NULL");
        EXPECT_GE(samples, 3);
        EXPECT_LE(samples, static_cast<std::int64_t>(servedSeconds) + 2) << "over " << servedSeconds << " s";
    }

    // The one-shot slots command has no history of its own: it reads what serve stored.
    auto shot = runCli({"--state", state, "slots", "--json"});
    ASSERT_EQ(shot.exitCode, 0) << shot.err;
    auto j = json::parse(shot.out);
    const json *again = slotIn(j, slot);
    ASSERT_TRUE(again) << shot.out;
    ASSERT_TRUE((*again)["seconds_to_limit"].is_number()) << again->dump();
    EXPECT_GT((*again)["seconds_to_limit"].get<double>(), expected / 2.5);
    EXPECT_LT((*again)["seconds_to_limit"].get<double>(), expected * 2.5);
    auto human = runCli({"--state", state, "slots"});
    EXPECT_EQ(human.exitCode, 0);
    EXPECT_NE(human.out.find("at this rate: limit in "), std::string::npos) << human.out;

    // Without the guard, and with no server limit, there is nothing to head for.
    writeFile(dir.file("ws.yaml"), workspaceYaml(false));
    ASSERT_EQ(runCli({"--state", state, "apply", dir.file("ws.yaml")}).exitCode, 0);
    auto unguarded = runCli({"--state", state, "slots", "--json"});
    ASSERT_EQ(unguarded.exitCode, 0) << unguarded.err;
    j = json::parse(unguarded.out);
    const json *plain = slotIn(j, slot);
    ASSERT_TRUE(plain) << unguarded.out;
    ASSERT_TRUE(plain->contains("seconds_to_limit"));
    if (src.scalar("SHOW max_slot_wal_keep_size") == "-1") { // else the server's own limit applies
        EXPECT_TRUE((*plain)["seconds_to_limit"].is_null()) << plain->dump();
        EXPECT_EQ(runCli({"--state", state, "slots"}).out.find("at this rate"), std::string::npos);
    }
}

TEST_F(SlotGrowth, aSlotWithTooLittleHistoryHasNoProjection)
{
    // Just made, one reading and no stored samples: a limit applies, but there is no rate yet.
    auto once = runCli({"--state", state, "run", "--once", "--pipeline", cdc});
    ASSERT_EQ(once.exitCode, 0) << once.out << once.err;
    auto r = runCli({"--state", state, "slots", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = json::parse(r.out);
    const json *ours = slotIn(j, slot);
    ASSERT_TRUE(ours) << r.out;
    ASSERT_TRUE(ours->contains("seconds_to_limit"));
    EXPECT_TRUE((*ours)["seconds_to_limit"].is_null()) << ours->dump();
}
