// Conflicts of two-way pipelines (`direction: both`, docs/two-way.md) against the real servers,
// through the path a DBA takes: a YAML file, `driftless-cli apply`, `driftless-cli run`. Each
// test stops the engine, changes the same row on both sides, and runs it again, so both changes
// are in flight at once; then it compares the two sides with a SQL query on each.

#include "core/agent/agentapi.h"
#include "core/db/pgconnection.h"
#include "core/engine/commands/conflictqueue.h"
#include "core/engine/run/scheduler.h"
#include "core/engine/run/workspacestate.h"
#include "core/engine/sync/tablesync.h"
#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/error.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"
#include "tests/support/twowayfixture.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <thread>
#include <tuple>

using namespace driftless::core;
using namespace driftless::test;

namespace {

/// How often this file's conditions are asked again.
constexpr std::chrono::milliseconds kPoll{200};

const char *kPeople = "CREATE TABLE people (id int PRIMARY KEY, name text NOT NULL, email text, phone text); "
                      "INSERT INTO people SELECT g, 'name ' || g, 'p' || g || '@old', '555-' || g "
                      "FROM generate_series(1, 50) g";

struct Conflicts : ::testing::Test {
    PgTestDb a{"cf_a"};
    PgTestDb b{"cf_b"};
    std::string pipeline = uniqueName("cf");
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string runLog = dir.file("run.log");
    int engine = -1;

    void TearDown() override
    {
        stopRun();
        dropTwoWayOrigins(pipeline);
    }

    std::string yaml(const std::string &tableConflicts)
    {
        return "endpoints:\n  a: { kind: postgres, dsn: \"" + a.dsn() + "\" }\n  b: { kind: postgres, dsn: \"" +
               b.dsn() + "\" }\npipelines:\n  - name: " + pipeline +
               "\n    source: a\n    target: b\n    direction: both\n    tables:\n"
               "      - table: public.people\n        strategy: cdc\n" +
               (tableConflicts.empty() ? "" : "        conflicts: " + tableConflicts + "\n");
    }
    CliResult apply(const std::string &tableConflicts)
    {
        writeFile(dir.file("ws.yaml"), yaml(tableConflicts));
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
    /// Both directions' slots have confirmed everything written on the server up to now: every
    /// change made before this call has been applied (or decided) on the other side.
    bool quiesced(int seconds) { return pgSlotsPassNow(a, pipeline, seconds, kPoll); }
    /// Applies the file, runs until both directions stream, and stops the engine.
    void loadedAndStopped(const std::string &tableConflicts, const char *table = kPeople)
    {
        a.exec(table);
        auto r = apply(tableConflicts);
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
        startRun();
        ASSERT_TRUE(waitFor([&] { return pgLoadedAndStreaming(a, b, pipeline, "people", "50"); }, 180, kPoll))
            << readFile(runLog);
        ASSERT_TRUE(quiesced(120)) << readFile(runLog);
        stopRun();
    }
    /// The synced columns of every row, hashed in SQL on the side's own server.
    static std::string hash(PgTestDb &db)
    {
        return db.scalar("SELECT md5(string_agg(concat_ws('|', id, name, email, phone), ',' ORDER BY id)) FROM people");
    }
    static std::string row(PgTestDb &db, int id)
    {
        return db.scalar("SELECT concat_ws('|', name, email, phone) FROM people WHERE id = " + std::to_string(id));
    }
    nlohmann::json openConflicts()
    {
        auto r = runCli({"--state", state, "conflicts", "--json"});
        EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
        return nlohmann::json::parse(r.out);
    }
    /// Waits until `n` conflicts are open; their ids by the key's id.
    std::map<std::string, long long> waitForConflicts(size_t n)
    {
        nlohmann::json list;
        EXPECT_TRUE(waitFor(
            [&] {
                list = openConflicts();
                return list["conflicts"].size() == n;
            },
            60, kPoll))
            << list.dump(2) << readFile(runLog);
        std::map<std::string, long long> ids;
        for (const auto &c : list["conflicts"])
            ids[c["key"]["id"].get<std::string>()] = c["id"].get<long long>();
        return ids;
    }
    CliResult resolve(long long id, std::vector<std::string> args)
    {
        std::vector<std::string> all = {"--state", state, "resolve", std::to_string(id)};
        all.insert(all.end(), args.begin(), args.end());
        return runCli(all);
    }
    /// How the queue recorded conflict `id`'s resolution.
    std::string storedResolution(long long id)
    {
        WorkspaceState ws(state);
        auto c = ws.store().conflict(id);
        return c ? c->status + ": " + c->resolution : "no conflict";
    }
};

} // namespace

// merge_columns (the default): A changes email, B changes phone of the same row while the engine
// is stopped; both edits survive on both sides.
TEST_F(Conflicts, disjointColumnEditsOfOneRowBothSurviveOnBothSides)
{
    loadedAndStopped("");
    a.exec("UPDATE people SET email = 'seven@a' WHERE id = 7");
    b.exec("UPDATE people SET phone = '555-0007-b' WHERE id = 7");
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    ASSERT_TRUE(waitFor([&] { return row(a, 7) == row(b, 7); }, 60, kPoll)) << row(a, 7) << " / " << row(b, 7);
    EXPECT_EQ(row(a, 7), "name 7|seven@a|555-0007-b");
    EXPECT_EQ(hash(a), hash(b));
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
}

// source_wins and target_wins: both sides edit the same column; afterwards both hold the
// winner's value, whichever direction applied first.
TEST_F(Conflicts, overlappingEditsEndWithTheWinnersValueOnBothSides)
{
    loadedAndStopped("{ policy: merge_columns, on_overlap: source_wins }");
    a.exec("UPDATE people SET email = 'from-a' WHERE id = 3");
    b.exec("UPDATE people SET email = 'from-b' WHERE id = 3");
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    ASSERT_TRUE(waitFor([&] { return row(a, 3) == row(b, 3); }, 60, kPoll)) << row(a, 3) << " / " << row(b, 3);
    EXPECT_EQ(a.scalar("SELECT email FROM people WHERE id = 3"), "from-a");
    stopRun();

    auto r = apply("target_wins");
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    a.exec("UPDATE people SET email = 'again-a', name = 'renamed on a' WHERE id = 4");
    b.exec("UPDATE people SET email = 'again-b' WHERE id = 4");
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    ASSERT_TRUE(waitFor([&] { return row(a, 4) == row(b, 4); }, 60, kPoll)) << row(a, 4) << " / " << row(b, 4);
    // target_wins decides the whole row for the target: A's rename is gone too.
    EXPECT_EQ(row(a, 4), "name 4|again-b|555-4");
    EXPECT_EQ(hash(a), hash(b));
}

// manual: the overlapping edit waits in the queue with both versions and the base, neither side
// overwritten; resolving it with the target's version converges both sides, and the resolution
// is not read back.
TEST_F(Conflicts, aManualConflictIsQueuedAndResolvedFromTheCli)
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
        60, kPoll))
        << list.dump(2);
    const auto &c = list["conflicts"][0];
    for (const char *field : {"id", "pipeline", "table", "key", "columns", "source", "target", "base", "detected_at"})
        EXPECT_TRUE(c.contains(field)) << field << " in " << c.dump(2);
    EXPECT_EQ(c["pipeline"], pipeline);
    EXPECT_EQ(c["table"], "public.people");
    EXPECT_EQ(c["key"], nlohmann::json({{"id", "11"}}));
    EXPECT_EQ(c["columns"], nlohmann::json::array({"phone"}));
    EXPECT_EQ(c["source"]["phone"], "phone-a");
    EXPECT_EQ(c["target"]["phone"], "phone-b");
    EXPECT_EQ(c["base"]["phone"], "555-11");
    // Neither side was overwritten.
    EXPECT_EQ(a.scalar("SELECT phone FROM people WHERE id = 11"), "phone-a");
    EXPECT_EQ(b.scalar("SELECT phone FROM people WHERE id = 11"), "phone-b");
    auto text = runCli({"--state", state, "conflicts"});
    EXPECT_NE(text.out.find("public.people"), std::string::npos) << text.out;

    const std::string bXmin = b.scalar("SELECT xmin::text FROM people WHERE id = 11");
    auto r = runCli({"--state", state, "resolve", std::to_string(c["id"].get<long long>()), "--take", "target"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(a.scalar("SELECT phone FROM people WHERE id = 11"), "phone-b");
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    EXPECT_EQ(b.scalar("SELECT xmin::text FROM people WHERE id = 11"), bXmin)
        << "the resolution written on A was read back and applied to B again";
    EXPECT_EQ(hash(a), hash(b));
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
    r = runCli({"--state", state, "resolve", std::to_string(c["id"].get<long long>()), "--take", "source"});
    EXPECT_EQ(r.exitCode, 2) << "a resolved conflict is not resolved again: " << r.out << r.err;
}

// Reconciliation is the safety net after a burst of conflicts: `reconcile` of a two-way pipeline
// compares each table's two sides once (symmetric: both directions' results at once), on the
// synced columns (not each side's own _driftless_version, which differs on every row either
// direction wrote), finds exactly the rows a queued conflict holds apart, and once the queue is
// resolved proves the two sides equal.
TEST_F(Conflicts, reconciliationAfterABurstOfConflictsFindsOnlyTheQueuedRowsThenProvesConvergence)
{
    loadedAndStopped("");
    for (int id = 1; id <= 10; ++id) {
        a.exec("UPDATE people SET email = 'burst-a-" + std::to_string(id) + "' WHERE id = " + std::to_string(id));
        b.exec("UPDATE people SET phone = 'burst-b-" + std::to_string(id) + "' WHERE id = " + std::to_string(id));
    }
    a.exec("UPDATE people SET name = 'name-a' WHERE id IN (21, 22)");
    b.exec("UPDATE people SET name = 'name-b' WHERE id IN (21, 22)");
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    const auto ids = waitForConflicts(2);
    ASSERT_EQ(ids.size(), 2u);

    // The table's entries by direction.
    long long reportId = 0;
    auto reconcile = [&](int expectedExit) {
        auto r = runCli({"--state", state, "reconcile", pipeline, "--json", "--settle", "5s"});
        EXPECT_EQ(r.exitCode, expectedExit) << r.out << r.err;
        std::map<std::string, nlohmann::json> out;
        if (r.exitCode != 0 && r.exitCode != 3)
            return out;
        const auto j = nlohmann::json::parse(r.out);
        reportId = j["report_id"].get<long long>();
        for (const auto &t : j["tables"]) {
            EXPECT_EQ(t["table"], "public.people");
            EXPECT_EQ(t["two_way"]["pipeline"], pipeline);
            out[t["two_way"]["direction"].get<std::string>()] = t;
        }
        EXPECT_EQ(out.size(), 1u) << r.out;
        EXPECT_TRUE(out.contains("forward")) << r.out;
        return out;
    };
    for (const auto &[direction, t] : reconcile(3)) {
        SCOPED_TRACE(direction);
        EXPECT_EQ(t["source_rows"], 50);
        EXPECT_EQ(t["target_rows"], 50);
        EXPECT_EQ(t["missing"], 0);
        EXPECT_EQ(t["extra"], 0);
        EXPECT_EQ(t["different"], 2) << "the merged rows are equal; only the queued ones differ: " << t.dump(2);
        EXPECT_EQ(t["keys"]["different"], nlohmann::json::array({21, 22}));
    }

    // Row 21 resolved from the queue (B's version); then the report repaired with one command:
    // row 22 takes the pipeline's source side's version (A's), row 21 is already equal.
    auto r = resolve(ids.at("21"), {"--take", "target"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    r = runCli({"--state", state, "repair", std::to_string(reportId), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    for (const auto &t : nlohmann::json::parse(r.out)["tables"])
        EXPECT_EQ(t["still_different"], 0) << t.dump(2);
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    EXPECT_EQ(row(a, 21), "name-b|p21@old|555-21");
    EXPECT_EQ(row(b, 21), "name-b|p21@old|555-21");
    EXPECT_EQ(row(a, 22), "name-a|p22@old|555-22");
    EXPECT_EQ(row(b, 22), "name-a|p22@old|555-22");
    // The repair left row 22's conflict open; both sides now agree, so resolving it writes nothing.
    r = resolve(ids.at("22"), {"--take", "target"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("nothing written"), std::string::npos) << r.out;
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
    for (const auto &[direction, t] : reconcile(0)) {
        SCOPED_TRACE(direction);
        EXPECT_EQ(t["different"], 0) << t.dump(2);
        EXPECT_EQ(t["missing"], 0);
        EXPECT_EQ(t["extra"], 0);
    }
    EXPECT_EQ(hash(a), hash(b));
}

// Loop: one update on A reaches B once and never comes back to A (A's row is not written again),
// with conflict detection in the path.
TEST_F(Conflicts, aSingleUpdateIsAppliedOnceAndNeverComesBack)
{
    loadedAndStopped("");
    startRun();
    a.exec("UPDATE people SET name = 'only on a' WHERE id = 20");
    const std::string xmin = a.scalar("SELECT xmin::text FROM people WHERE id = 20");
    ASSERT_TRUE(waitFor([&] { return b.scalar("SELECT name FROM people WHERE id = 20") == "only on a"; }, 60, kPoll))
        << readFile(runLog);
    const std::string bXmin = b.scalar("SELECT xmin::text FROM people WHERE id = 20");
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    EXPECT_EQ(a.scalar("SELECT xmin::text FROM people WHERE id = 20"), xmin) << "A's row was written again";
    EXPECT_EQ(b.scalar("SELECT xmin::text FROM people WHERE id = 20"), bXmin) << "B's row was written twice";
    EXPECT_EQ(hash(a), hash(b));
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
}

// `conflicts:` through apply: a refused form names the file, line and field; an accepted one is
// stored and comes back from the state (export) as it was written.
TEST_F(Conflicts, conflictPoliciesAreCheckedByApplyAndKeptInTheState)
{
    auto r = apply("newer_wins");
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("ws.yaml:12"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("tables[public.people].conflicts"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("newer_wins needs a clock"), std::string::npos) << r.err;

    r = apply("{ policy: merge_columns, on_overlap: sideways }");
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("conflicts.on_overlap"), std::string::npos) << r.err;

    r = apply("{ policy: merge_columns, on_overlap: target_wins }");
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    auto exported = runCli({"--state", state, "export"});
    ASSERT_EQ(exported.exitCode, 0) << exported.err;
    EXPECT_NE(exported.out.find("conflicts: {policy: merge_columns, on_overlap: target_wins}"), std::string::npos)
        << exported.out;
    r = apply("source_wins");
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    exported = runCli({"--state", state, "export"});
    EXPECT_NE(exported.out.find("conflicts: source_wins"), std::string::npos) << exported.out;
}

namespace {
long long conflictCount(const std::string &pipeline, const std::string &outcome)
{
    long long n = 0;
    for (const auto &c : conflictCountsSnapshot())
        if (c.pipeline == pipeline && c.outcome == outcome)
            n += c.count;
    return n;
}
long long captured(const std::string &direction)
{
    return loopCountersOf(direction, MissingCounters::Zero).captured;
}
long long applied(const std::string &direction)
{
    return loopCountersOf(direction, MissingCounters::Zero).applied;
}
} // namespace

// The counters behind /metrics: a field-level merge counts as merged (by each direction that
// saw it), and an overlap under source_wins as source_won, while each side's edit is captured
// once by its own direction only.
TEST_F(Conflicts, outcomesAreCountedPerPipelineAndTable)
{
    a.exec(kPeople);
    Workspace ws;
    ws.endpoints["a"] = pgEndpoint("a", a.name());
    ws.endpoints["b"] = pgEndpoint("b", b.name());
    PipelineSpec p;
    p.name = pipeline;
    p.source = "a";
    p.target = "b";
    p.twoWay = true;
    TableSpec t;
    t.table = TableRef::parse("public.people");
    t.strategy = Strategy::Cdc;
    t.conflicts = "merge_columns/source_wins";
    p.tables.push_back(t);
    ws.pipelines.push_back(p);
    RecordingObserver obs;
    auto run = [&](std::stop_source &stop) {
        return std::thread([&obs, &stop, jobs = jobsFor(ws)] { Scheduler(jobs, obs, {}).run(stop.get_token()); });
    };
    std::stop_source stop1;
    std::thread engine = run(stop1);
    const bool streaming = waitFor([&] { return pgLoadedAndStreaming(a, b, pipeline, "people", "50"); }, 180, kPoll);
    const bool settled = streaming && quiesced(120);
    stop1.request_stop();
    engine.join();
    ASSERT_TRUE(settled);

    a.exec("UPDATE people SET email = 'merged-a' WHERE id = 30");
    b.exec("UPDATE people SET phone = 'merged-b' WHERE id = 30");
    a.exec("UPDATE people SET name = 'won-a' WHERE id = 31");
    b.exec("UPDATE people SET name = 'lost-b' WHERE id = 31");
    const long long fwd0 = captured(pipeline), rev0 = captured(pipeline + "_rev");
    const long long fwdApplied0 = applied(pipeline), revApplied0 = applied(pipeline + "_rev");
    std::stop_source stop2;
    engine = run(stop2);
    const bool done = quiesced(120) && waitFor([&] { return hash(a) == hash(b); }, 60, kPoll);
    stop2.request_stop();
    engine.join();
    ASSERT_TRUE(done) << row(a, 30) << " / " << row(b, 30) << "; " << row(a, 31) << " / " << row(b, 31);
    EXPECT_EQ(row(b, 30), "name 30|merged-a|merged-b");
    EXPECT_EQ(row(b, 31), "won-a|p31@old|555-31");
    EXPECT_EQ(conflictCount(pipeline, "merged"), 2) << "each direction merged its side's column";
    EXPECT_EQ(conflictCount(pipeline, "source_won"), 2) << "each direction decided the overlap for the source";
    EXPECT_EQ(conflictCount(pipeline, "queued"), 0);
    EXPECT_EQ(captured(pipeline) - fwd0, 2) << "A's two edits, captured once";
    EXPECT_EQ(captured(pipeline + "_rev") - rev0, 2) << "B's two edits, captured once";
    // `applied` counts what was written: A's merge and its win; B's merge, not its lost edit.
    EXPECT_EQ(applied(pipeline) - fwdApplied0, 2);
    EXPECT_EQ(applied(pipeline + "_rev") - revApplied0, 1) << "B's edit that lost to the source was not applied";

    // manual: an overlap both directions see is queued by each and applied by neither, while
    // each side's edit is still captured once.
    ws.pipelines[0].tables[0].conflicts = "manual";
    a.exec("UPDATE people SET email = 'manual-a' WHERE id = 32");
    b.exec("UPDATE people SET email = 'manual-b' WHERE id = 32");
    const long long fwd1 = captured(pipeline), rev1 = captured(pipeline + "_rev");
    const long long fwdApplied1 = applied(pipeline), revApplied1 = applied(pipeline + "_rev");
    const long long queued1 = conflictCount(pipeline, "queued");
    std::stop_source stop3;
    engine = run(stop3);
    const bool queued =
        quiesced(120) && waitFor([&] { return conflictCount(pipeline, "queued") - queued1 == 2; }, 60, kPoll);
    stop3.request_stop();
    engine.join();
    ASSERT_TRUE(queued) << conflictCount(pipeline, "queued") - queued1;
    EXPECT_EQ(a.scalar("SELECT email FROM people WHERE id = 32"), "manual-a");
    EXPECT_EQ(b.scalar("SELECT email FROM people WHERE id = 32"), "manual-b");
    EXPECT_EQ(captured(pipeline) - fwd1, 1);
    EXPECT_EQ(captured(pipeline + "_rev") - rev1, 1);
    EXPECT_EQ(applied(pipeline) - fwdApplied1, 0) << "a queued change is not applied";
    EXPECT_EQ(applied(pipeline + "_rev") - revApplied1, 0) << "a queued change is not applied";
}

// resolve --take merged: A changes email and B changes phone of row 7 under `manual` (queued,
// neither written); the merge keeps A's email and B's phone on both sides. Row 8, whose name both
// sides changed to different values, is refused with the column named and nothing written, then
// resolved per column. Bad choices are refused with what to write instead.
TEST_F(Conflicts, aMergedResolutionKeepsEachSidesColumnsAndAnOverlapIsChosenPerColumn)
{
    loadedAndStopped("manual");
    a.exec("UPDATE people SET email = 'seven@a' WHERE id = 7");
    b.exec("UPDATE people SET phone = '555-7-b' WHERE id = 7");
    a.exec("UPDATE people SET name = 'eight on a', email = 'eight@a' WHERE id = 8");
    b.exec("UPDATE people SET name = 'eight on b' WHERE id = 8");
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    auto ids = waitForConflicts(2);
    ASSERT_EQ(ids.size(), 2u);
    const long long seven = ids["7"], eight = ids["8"];
    EXPECT_EQ(row(a, 7), "name 7|seven@a|555-7") << "manual writes neither side";
    EXPECT_EQ(row(b, 7), "name 7|p7@old|555-7-b");

    // Bad inputs: refused before anything is written.
    auto r = resolve(seven, {"--take", "sideways"});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--take merged"), std::string::npos) << r.err;
    r = resolve(seven, {"--column", "email=middle"});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("COLUMN=source or COLUMN=target"), std::string::npos) << r.err;
    r = resolve(seven, {"--column", "nosuch=target", "--take", "source"});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("no column 'nosuch'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("email"), std::string::npos) << "names the columns it has: " << r.err;
    r = resolve(seven, {"--column", "email=target", "--column", "email=source"});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_EQ(row(a, 7), "name 7|seven@a|555-7");
    EXPECT_EQ(row(b, 7), "name 7|p7@old|555-7-b");

    const std::string aXmin = a.scalar("SELECT xmin::text FROM people WHERE id = 7");
    r = resolve(seven, {"--take", "merged"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("merged version"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("email from the source"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("phone from the target"), std::string::npos) << r.out;
    EXPECT_EQ(row(a, 7), "name 7|seven@a|555-7-b");
    EXPECT_EQ(row(b, 7), "name 7|seven@a|555-7-b");
    EXPECT_NE(a.scalar("SELECT xmin::text FROM people WHERE id = 7"), aXmin) << "the merged row is written on A too";
    EXPECT_EQ(storedResolution(seven), "resolved: merged");

    r = resolve(eight, {"--take", "merged"});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("cannot be merged: both sides changed name to different values"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--column name="), std::string::npos) << r.err;
    EXPECT_EQ(row(a, 8), "eight on a|eight@a|555-8") << "a refused merge writes nothing";
    EXPECT_EQ(row(b, 8), "eight on b|p8@old|555-8");
    EXPECT_EQ(storedResolution(eight), "open: ");

    r = resolve(eight, {"--column", "name=target", "--take", "source"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(row(a, 8), "eight on b|eight@a|555-8");
    EXPECT_EQ(row(b, 8), "eight on b|eight@a|555-8");
    EXPECT_EQ(storedResolution(eight), "resolved: source; name=target");

    // Neither resolution is read back: once both directions caught up, the rows stay as written.
    const std::string bXmin7 = b.scalar("SELECT xmin::text FROM people WHERE id = 7");
    const std::string bXmin8 = b.scalar("SELECT xmin::text FROM people WHERE id = 8");
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    EXPECT_EQ(b.scalar("SELECT xmin::text FROM people WHERE id = 7"), bXmin7);
    EXPECT_EQ(b.scalar("SELECT xmin::text FROM people WHERE id = 8"), bXmin8);
    EXPECT_EQ(hash(a), hash(b));
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
}

namespace {
/// An engine the API does not drive here: only the conflict routes are called.
struct IdleEngine final : AgentEngine {
    EngineRun::Status status(std::int64_t) const override { return {}; }
    bool running() const override { return false; }
    void setRunning(bool) override {}
};
} // namespace

// POST /api/v1/conflicts/ID/resolve with "take": "merged" and "columns": the same choices as the
// CLI, 422 naming the columns of an overlap, 400 for a bad choice.
TEST_F(Conflicts, theAgentApiResolvesMergedAndPerColumnChoices)
{
    loadedAndStopped("manual");
    a.exec("UPDATE people SET email = 'twelve@a' WHERE id = 12");
    b.exec("UPDATE people SET phone = '555-12-b' WHERE id = 12");
    a.exec("UPDATE people SET name = 'thirteen on a', phone = '555-13-a' WHERE id = 13");
    b.exec("UPDATE people SET name = 'thirteen on b', email = 'thirteen@b' WHERE id = 13");
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    auto ids = waitForConflicts(2);
    ASSERT_EQ(ids.size(), 2u);

    WorkspaceState ws(state);
    IdleEngine engine;
    AgentApi api(ws, engine, dir.file("agent-token"));
    auto post = [&](long long id, const nlohmann::json &body) {
        ApiRequest req;
        req.method = "POST";
        req.path = "/api/v1/conflicts/" + std::to_string(id) + "/resolve";
        req.body = body.dump();
        auto r = api.handleLocal(req, "test");
        return std::make_pair(r.status, nlohmann::json::parse(r.body));
    };
    auto [status, body] = post(ids["13"], {{"take", "merged"}});
    EXPECT_EQ(status, 422) << body.dump(2);
    EXPECT_EQ(body["columns"], nlohmann::json::array({"name"})) << body.dump(2);
    EXPECT_NE(body["error"].get<std::string>().find("name"), std::string::npos) << body.dump(2);
    std::tie(status, body) = post(ids["13"], {{"take", "source"}, {"columns", {{"nosuch", "target"}}}});
    EXPECT_EQ(status, 400) << body.dump(2);
    EXPECT_NE(body["error"].get<std::string>().find("no column 'nosuch'"), std::string::npos) << body.dump(2);
    std::tie(status, body) = post(ids["13"], {{"take", "source"}, {"columns", {{"name", "middle"}}}});
    EXPECT_EQ(status, 400) << body.dump(2);
    std::tie(status, body) = post(ids["13"], {{"take", "sideways"}});
    EXPECT_EQ(status, 400) << body.dump(2);
    EXPECT_NE(body["error"].get<std::string>().find("merged"), std::string::npos) << body.dump(2);
    EXPECT_EQ(row(a, 13), "thirteen on a|p13@old|555-13-a") << "nothing written by a refused choice";
    EXPECT_EQ(row(b, 13), "thirteen on b|thirteen@b|555-13");

    std::tie(status, body) = post(ids["12"], {{"take", "merged"}});
    ASSERT_EQ(status, 200) << body.dump(2);
    EXPECT_EQ(body["take"], "merged");
    EXPECT_EQ(body["resolution"], "merged");
    EXPECT_EQ(body["row"]["email"], "twelve@a");
    EXPECT_EQ(body["row"]["phone"], "555-12-b");
    EXPECT_EQ(row(a, 12), "name 12|twelve@a|555-12-b");
    EXPECT_EQ(row(b, 12), "name 12|twelve@a|555-12-b");

    // Only the overlap chosen: the rest is merged (A's phone, B's email).
    std::tie(status, body) = post(ids["13"], {{"columns", {{"name", "target"}}}});
    ASSERT_EQ(status, 200) << body.dump(2);
    EXPECT_EQ(body["resolution"], "merged; name=target");
    EXPECT_EQ(row(a, 13), "thirteen on b|thirteen@b|555-13-a");
    EXPECT_EQ(row(b, 13), "thirteen on b|thirteen@b|555-13-a");
    std::tie(status, body) = post(ids["13"], {{"take", "merged"}});
    EXPECT_EQ(status, 409) << body.dump(2);

    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    EXPECT_EQ(hash(a), hash(b));
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
}

// Values whose cast to text is not what the stream sends: a boolean's cast says `true` where
// pgoutput says `t`, a char(n)'s cast drops its padding, an inet's cast adds `/32`. Under `manual`
// every change whose before-image seemed to differ from the target's row would be queued (and
// applied by neither side); none may be, and a real conflict on such a row resolves without
// "changed since it was queued".
TEST_F(Conflicts, valuesWhoseCastDiffersFromTheStreamAreNotConflicts)
{
    const char *kTyped = "CREATE TABLE people (id int PRIMARY KEY, name text NOT NULL, email text, phone text, "
                         "active boolean, code char(6), addr inet, nets cidr[], flags boolean[]); "
                         "INSERT INTO people SELECT g, 'name ' || g, 'p' || g || '@old', '555-' || g, g % 2 = 0, "
                         "'c' || g, ('10.0.0.' || g)::inet, ARRAY[('10.' || g || '.0.0/16')::cidr], "
                         "ARRAY[g % 3 = 0, NULL] FROM generate_series(1, 50) g";
    loadedAndStopped("manual", kTyped);
    auto typedHash = [](PgTestDb &db) {
        return db.scalar(
            "SELECT md5(string_agg(concat_ws('|', id, name, email, phone, active, code || '#', addr, nets, "
            "flags), ',' ORDER BY id)) FROM people");
    };
    ASSERT_EQ(typedHash(a), typedHash(b));
    startRun();
    // Each direction updates and deletes rows it did not write: the before-images carry t/f, the
    // padded char and the bare address.
    a.exec("UPDATE people SET name = 'renamed on a ' || id WHERE id <= 10");
    a.exec("DELETE FROM people WHERE id = 30");
    b.exec("UPDATE people SET email = 'from b ' || id WHERE id BETWEEN 21 AND 25");
    b.exec("DELETE FROM people WHERE id = 35");
    ASSERT_TRUE(waitFor(
        [&] {
            return b.scalar("SELECT count(*) FROM people WHERE name LIKE 'renamed on a %'") == "10" &&
                   a.scalar("SELECT count(*) FROM people WHERE email LIKE 'from b %'") == "5";
        },
        120, kPoll))
        << openConflicts().dump(2) << readFile(runLog);
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u) << openConflicts().dump(2);
    EXPECT_EQ(a.scalar("SELECT count(*) FROM people"), "48");
    EXPECT_EQ(typedHash(a), typedHash(b));

    // A real conflict on such a row: queued once, resolved from the CLI on the first try.
    stopRun();
    a.exec("UPDATE people SET phone = 'phone-a' WHERE id = 40");
    b.exec("UPDATE people SET phone = 'phone-b' WHERE id = 40");
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    const auto ids = waitForConflicts(1);
    ASSERT_EQ(ids.count("40"), 1u);
    const auto c = openConflicts()["conflicts"][0];
    EXPECT_EQ(c["columns"], nlohmann::json::array({"phone"}));
    EXPECT_EQ(c["source"]["active"], "t");
    EXPECT_EQ(c["target"]["active"], "t");
    EXPECT_EQ(c["target"]["code"], "c40   ");
    EXPECT_EQ(c["target"]["addr"], "10.0.0.40");
    auto r = resolve(ids.at("40"), {"--take", "source"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(b.scalar("SELECT phone FROM people WHERE id = 40"), "phone-a");
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
    EXPECT_EQ(typedHash(a), typedHash(b));
}
