// `conflicts: { newer_wins: ... }` of two-way pipelines (docs/two-way.md) on real servers, through
// `driftless-cli apply` and `run`: each test stops the engine, changes the same row on both sides,
// and runs it again, so both changes are in flight at once; then it compares the two sides with
// a SQL query on each. The commit-time clock runs on two postmasters of their own, one of them
// 30 s ahead under libfaketime (two databases of one server share its clock).

#include "core/db/pgconnection.h"
#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/error.h"
#include "core/model/workspace.h"
#include "tests/support/testsupport.h"
#include "tests/support/throwawaypostgres.h"
#include "tests/support/twowayfixture.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <functional>
#include <memory>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

/// How often this file's conditions are asked again.
constexpr std::chrono::milliseconds kPoll{200};

const char *kPeople = "CREATE TABLE people (id int PRIMARY KEY, name text NOT NULL, email text, "
                      "updated_at timestamptz NOT NULL DEFAULT '2030-01-01 00:00:00+00'); "
                      "INSERT INTO people (id, name, email) SELECT g, 'name ' || g, 'p' || g || '@old' "
                      "FROM generate_series(1, 20) g";

/// One side of the pipeline, by DSN: a database of the shared test server or a throwaway one.
struct Side {
    std::string dsn;
    void exec(const std::string &sql) const
    {
        PgConnection c(dsn);
        c.exec(sql);
    }
    std::string scalar(const std::string &sql) const
    {
        PgConnection c(dsn);
        auto r = c.exec(sql);
        return r.rows() ? r.text(0, 0) : std::string();
    }
};

struct NewerWinsTest : ::testing::Test {
    Side a, b;
    std::string pipeline = uniqueName("nw");
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string runLog = dir.file("run.log");
    int engine = -1;

    void TearDown() override { stopRun(); }
    ~NewerWinsTest() override { stopRun(); }

    CliResult apply(const std::string &conflicts, bool check = false)
    {
        writeFile(dir.file("ws.yaml"), "endpoints:\n  a: { kind: postgres, dsn: \"" + a.dsn +
                                           "\" }\n  b: { kind: postgres, dsn: \"" + b.dsn +
                                           "\" }\npipelines:\n  - name: " + pipeline +
                                           "\n    source: a\n    target: b\n    direction: both\n    tables:\n"
                                           "      - table: public.people\n        strategy: cdc\n        conflicts: " +
                                           conflicts + "\n");
        std::vector<std::string> args{"--state", state, "apply"};
        if (!check)
            args.push_back("--no-check");
        args.push_back(dir.file("ws.yaml"));
        return runCli(args);
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
    /// Each direction's slot has confirmed everything its server wrote up to now: every change
    /// made before this call has been applied (or decided) on the other side.
    bool quiesced(int seconds)
    {
        const std::string la = a.scalar("SELECT pg_current_wal_lsn()");
        const std::string lb = b.scalar("SELECT pg_current_wal_lsn()");
        auto confirmed = [](const Side &s, const std::string &slot, const std::string &lsn) {
            return s.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot +
                            "' AND confirmed_flush_lsn >= '" + lsn + "'::pg_lsn") == "1";
        };
        return waitFor(
            [&] {
                return confirmed(a, "driftless_" + pipeline, la) && confirmed(b, "driftless_" + pipeline + "_rev", lb);
            },
            seconds, kPoll);
    }
    void loadedAndStopped(const std::string &conflicts)
    {
        a.exec(kPeople);
        auto r = apply(conflicts);
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
        startRun();
        ASSERT_TRUE(waitFor([&] { return pgLoadedAndStreaming(a, b, pipeline, "people", "20"); }, 180, kPoll))
            << readFile(runLog);
        ASSERT_TRUE(quiesced(120)) << readFile(runLog);
        stopRun();
    }
    static std::string hash(const Side &s, const std::string &where = "true")
    {
        return s.scalar("SELECT md5(string_agg(concat_ws('|', id, name, email, "
                        "extract(epoch FROM updated_at)), ',' ORDER BY id)) FROM people WHERE " +
                        where);
    }
    static std::string email(const Side &s, int id)
    {
        return s.scalar("SELECT email FROM people WHERE id = " + std::to_string(id));
    }
    nlohmann::json openConflicts()
    {
        auto r = runCli({"--state", state, "conflicts", "--json"});
        EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
        return nlohmann::json::parse(r.out)["conflicts"];
    }
    /// The open conflicts' keys (the `id` of each), sorted.
    std::vector<std::string> queuedIds()
    {
        std::vector<std::string> out;
        for (const auto &c : openConflicts())
            out.push_back(c["key"]["id"].get<std::string>());
        std::sort(out.begin(), out.end());
        return out;
    }
    /// The commit time of the transaction that last wrote row `id` on `s`, in seconds.
    static double commitTime(const Side &s, int id)
    {
        return std::stod(s.scalar("SELECT extract(epoch FROM pg_xact_commit_timestamp(xmin)) FROM people WHERE id = " +
                                  std::to_string(id)));
    }
};

/// Two databases of the shared test server.
struct NewerWinsByColumn : NewerWinsTest {
    PgTestDb dbA{"nw_a"};
    PgTestDb dbB{"nw_b"};
    NewerWinsByColumn()
    {
        a.dsn = dbA.dsn();
        b.dsn = dbB.dsn();
    }
    void TearDown() override
    {
        stopRun();
        dropTwoWayOrigins(pipeline);
    }
};

} // namespace

// newer_wins by a timestamp column: the version whose updated_at is later by more than max_skew
// wins on both sides, whichever side holds it; versions closer than that wait in the queue with
// both values (neither side overwritten, nothing lost).
TEST_F(NewerWinsByColumn, theLaterVersionWinsOnBothSidesAndCloseOnesAreQueued)
{
    loadedAndStopped("{ newer_wins: { column: updated_at, max_skew: 5s } }");
    // Row 3: B's edit is a minute later. Row 5: A's is an hour later. Row 7: 2 s apart.
    a.exec("UPDATE people SET email = 'a3', updated_at = '2030-06-01 10:00:00+00' WHERE id = 3");
    b.exec("UPDATE people SET email = 'b3', updated_at = '2030-06-01 10:01:00+00' WHERE id = 3");
    a.exec("UPDATE people SET email = 'a5', updated_at = '2030-06-01 11:00:00+00' WHERE id = 5");
    b.exec("UPDATE people SET email = 'b5', updated_at = '2030-06-01 10:00:00+00' WHERE id = 5");
    a.exec("UPDATE people SET email = 'a7', updated_at = '2030-06-01 10:00:00+00' WHERE id = 7");
    b.exec("UPDATE people SET email = 'b7', updated_at = '2030-06-01 12:00:02+02' WHERE id = 7");
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    ASSERT_TRUE(waitFor([&] { return email(a, 3) == "b3" && email(b, 5) == "a5"; }, 60, kPoll))
        << email(a, 3) << " / " << email(b, 5) << "\n"
        << readFile(runLog);
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    EXPECT_EQ(email(b, 3), "b3");
    EXPECT_EQ(email(a, 5), "a5");
    EXPECT_EQ(hash(a, "id <> 7"), hash(b, "id <> 7"));
    // Row 7 (12:00:02+02 is 10:00:02 UTC): within max_skew, so neither side was overwritten.
    EXPECT_EQ(email(a, 7), "a7");
    EXPECT_EQ(email(b, 7), "b7");
    ASSERT_TRUE(waitFor([&] { return queuedIds() == std::vector<std::string>{"7"}; }, 60, kPoll))
        << openConflicts().dump(2);
    const auto c = openConflicts()[0];
    EXPECT_EQ(c["source"]["email"], "a7");
    EXPECT_EQ(c["target"]["email"], "b7");
    EXPECT_EQ(c["base"]["email"], "p7@old");
}

// apply checks the column on the live servers: one that is no timestamp, or that a side lacks,
// is refused with the file, line and field; a timestamp column is accepted and kept as written.
TEST_F(NewerWinsByColumn, applyRefusesAColumnThatIsNoTimestampOfBothSides)
{
    a.exec(kPeople);
    b.exec("CREATE TABLE people (id int PRIMARY KEY, name text NOT NULL, email text, changed timestamptz)");
    auto r = apply("{ newer_wins: { column: email } }", true);
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("ws.yaml:12"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("pipelines[" + pipeline + "].tables[public.people].conflicts"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("not a timestamp"), std::string::npos) << r.err;

    r = apply("{ newer_wins: { column: updated_at } }", true);
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("is not a column of public.people on endpoint b"), std::string::npos) << r.err;

    b.exec("ALTER TABLE people ADD COLUMN updated_at timestamptz");
    // Accepted by the column check (what the doctor says of the servers is not this test's).
    r = apply("{ newer_wins: { column: updated_at, max_skew: 2s } }", true);
    EXPECT_EQ(r.err.find("newer_wins column"), std::string::npos) << r.err;
    r = apply("{ newer_wins: { column: updated_at, max_skew: 2s } }");
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    auto exported = runCli({"--state", state, "export"});
    ASSERT_EQ(exported.exitCode, 0) << exported.err;
    EXPECT_NE(exported.out.find("conflicts: {newer_wins: {column: \"updated_at\", max_skew: 2s}}"), std::string::npos)
        << exported.out;
}

// newer_wins by commit time, with B's server clock 30 s ahead (libfaketime). max_skew larger than
// the skew: edits made at nearly the same moment are queued, not decided by the clocks. max_skew
// smaller: the later commit time wins on both sides, and B's clock makes its edit the later one
// until A's edit really is more than max_skew past it.
TEST(NewerWinsByCommitTime, withASkewedClockCloseCommitsAreQueuedAndTheLaterOneWinsOtherwise)
{
    std::unique_ptr<ThrowawayPostgres> serverA, serverB;
    try {
        serverA = std::make_unique<ThrowawayPostgres>();
        serverB = std::make_unique<ThrowawayPostgres>(std::chrono::seconds(30));
    } catch (const std::exception &e) {
        FAIL() << e.what();
    }
    struct Run : NewerWinsTest {
        void TestBody() override {}
    } t;
    t.a.dsn = serverA->dsn();
    t.b.dsn = serverB->dsn();
    const double skew = std::stod(t.b.scalar("SELECT extract(epoch FROM clock_timestamp())")) -
                        std::stod(t.a.scalar("SELECT extract(epoch FROM clock_timestamp())"));
    ASSERT_GT(skew, 25) << "B's clock is not ahead; libfaketime did not take";

    t.loadedAndStopped("{ newer_wins: { clock: commit_time, max_skew: 40s } }");
    if (::testing::Test::HasFatalFailure())
        return;
    t.a.exec("UPDATE people SET email = 'a3' WHERE id = 3");
    t.b.exec("UPDATE people SET email = 'b3' WHERE id = 3");
    t.startRun();
    ASSERT_TRUE(t.quiesced(120)) << readFile(t.runLog);
    ASSERT_TRUE(waitFor([&] { return t.queuedIds() == std::vector<std::string>{"3"}; }, 60, kPoll))
        << t.openConflicts().dump(2) << readFile(t.runLog);
    EXPECT_EQ(t.email(t.a, 3), "a3") << "a conflict within max_skew was decided by the clocks";
    EXPECT_EQ(t.email(t.b, 3), "b3") << "a conflict within max_skew was decided by the clocks";
    t.stopRun();

    auto r = t.apply("{ newer_wins: { clock: commit_time, max_skew: 5s } }");
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    // Row 4: A's edit first; B's, a moment later, carries a commit time 30 s later: B wins.
    t.a.exec("UPDATE people SET email = 'a4' WHERE id = 4");
    t.b.exec("UPDATE people SET email = 'b4' WHERE id = 4");
    // Row 6: B's edit first; A's waits until A's clock is past B's commit time by more than
    // max_skew (about 35 s of real time): A wins.
    t.b.exec("UPDATE people SET email = 'b6' WHERE id = 6");
    const double bCommit = t.commitTime(t.b, 6);
    ASSERT_TRUE(
        waitFor([&] { return std::stod(t.a.scalar("SELECT extract(epoch FROM clock_timestamp())")) > bCommit + 6; },
                120, kPoll));
    t.a.exec("UPDATE people SET email = 'a6' WHERE id = 6");
    EXPECT_GT(t.commitTime(t.a, 6), bCommit + 5);
    t.startRun();
    ASSERT_TRUE(t.quiesced(120)) << readFile(t.runLog);
    ASSERT_TRUE(waitFor([&] { return t.email(t.a, 4) == "b4" && t.email(t.b, 6) == "a6"; }, 60, kPoll))
        << t.email(t.a, 4) << " / " << t.email(t.b, 6) << "\n"
        << readFile(t.runLog);
    ASSERT_TRUE(t.quiesced(120)) << readFile(t.runLog);
    EXPECT_EQ(t.email(t.b, 4), "b4");
    EXPECT_EQ(t.email(t.a, 6), "a6");
    EXPECT_EQ(t.hash(t.a, "id <> 3"), t.hash(t.b, "id <> 3"));
    EXPECT_EQ(t.queuedIds(), std::vector<std::string>{"3"}) << "the earlier conflict stays queued, nothing new";
    t.stopRun();
}

// The run start refuses newer_wins by commit time on a server that does not keep commit times,
// with the statement that fixes it.
TEST(NewerWinsByCommitTime, theRunRefusesToStartWithoutTrackCommitTimestamp)
{
    std::unique_ptr<ThrowawayPostgres> serverA;
    try {
        serverA = std::make_unique<ThrowawayPostgres>();
    } catch (const std::exception &e) {
        FAIL() << e.what();
    }
    PgTestDb dbB{"nw_plain"};
    ASSERT_EQ(dbB.scalar("SHOW track_commit_timestamp"), "off") << "the shared test server keeps commit times";
    struct Run : NewerWinsTest {
        void TestBody() override {}
    } t;
    t.a.dsn = serverA->dsn();
    t.b.dsn = dbB.dsn();
    t.a.exec(kPeople);
    auto r = t.apply("{ newer_wins: { clock: commit_time } }");
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    auto run = runCli({"--state", t.state, "run", "--once"});
    EXPECT_NE(run.exitCode, 0) << run.out << run.err;
    EXPECT_NE((run.out + run.err).find("ALTER SYSTEM SET track_commit_timestamp = on"), std::string::npos)
        << run.out << run.err;
    auto doctor = runCli({"--state", t.state, "doctor"});
    EXPECT_NE((doctor.out + doctor.err).find("track_commit_timestamp is off"), std::string::npos)
        << doctor.out << doctor.err;
    dropTwoWayOrigins(t.pipeline);
}
