// The two-way soak (docs/two-way.md), for each pairing (Postgres<->Postgres, MariaDB<->MariaDB,
// Postgres<->MariaDB): two bounded writers, one per side, change the same keys with randomized
// operations while `driftless-cli serve` syncs them; the engine is killed with SIGKILL part-way
// and started again. Once everything has arrived, every difference between the sides must be a
// conflict in the queue, no change may have come back as a loop, and resolving the queue from
// the CLI must make both sides equal, by a row text computed in SQL on each side's own server.
//
// The seed of the operations is printed; DRIFTLESS_SOAK_SEED=N replays it. DRIFTLESS_SOAK_TXNS
// (default 1200 a side for Postgres<->Postgres, 900 for the pairs with MariaDB) and
// DRIFTLESS_SOAK_TPS (20 a side) size the run. Every assertion is on the final state or on
// counts, never on how fast the engine was. CTest runs each pairing as its own test
// (tests/integration/CMakeLists.txt), so they run side by side.

#include "core/db/mysqlconnection.h"
#include "core/db/pgconnection.h"
#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/error.h"
#include "core/model/workspace.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"
#include "tests/support/twowayfixture.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;
using json = nlohmann::json;

namespace {

/// How often this file's conditions are asked again.
constexpr std::chrono::milliseconds kPoll{200};

const char *kPgTable = "CREATE TABLE soak (id int PRIMARY KEY, name text, email text, phone text, qty int, "
                       "price numeric(10,2), active boolean)";
const char *kMyTable = "CREATE TABLE soak (id int PRIMARY KEY, name text, email text, phone text, qty int, "
                       "price decimal(10,2), active boolean)";
/// Rows 1..40 in SQL both engines take.
std::string seedRows()
{
    std::string sql = "INSERT INTO soak (id, name, email, phone, qty, price, active) VALUES ";
    for (int g = 1; g <= 40; ++g)
        sql += (g == 1 ? "(" : ", (") + std::to_string(g) + ", 'name " + std::to_string(g) + "', 'p" +
               std::to_string(g) + "@old', '555-" + std::to_string(g) + "', " + std::to_string(g) + ", " +
               std::to_string(g * 3 / 2) + (g % 2 ? ".50" : ".00") + ", " + (g % 2 == 0 ? "true" : "false") + ")";
    return sql;
}
constexpr int kKeys = 50; ///< writers pick keys 1..50: 40 exist at the start, 10 are for inserts
const std::vector<std::string> kColumns = {"name", "email", "phone", "qty", "price", "active"};

long long envNumber(const char *name, long long fallback)
{
    const char *v = std::getenv(name);
    return v && *v ? std::stoll(v) : fallback;
}

/// One side of the pair: a database on the test Postgres or on the test MariaDB.
struct Side {
    std::unique_ptr<PgTestDb> pg;
    std::unique_ptr<MyTestDb> my;

    bool postgres() const { return pg != nullptr; }
    std::string name() const { return pg ? pg->name() : my->name(); }
    std::string endpointYaml(const std::string &ep) const
    {
        return "  " + ep + ": { kind: " + (pg ? "postgres" : "mysql") + ", dsn: \"" + (pg ? pg->dsn() : my->dsn()) +
               "\" }\n";
    }
    void exec(const std::string &sql) const { pg ? pg->exec(sql) : my->exec(sql); }
    std::string scalar(const std::string &sql) const { return pg ? pg->scalar(sql) : my->scalar(sql); }
    std::string idText() const { return pg ? "id::text" : "CAST(id AS CHAR)"; }
    /// A row's text in SQL of the side's engine: the synced columns with NULLs marked, booleans
    /// as t/f and numerics as both engines print a numeric(10,2), so the two sides compare.
    std::string rowText() const
    {
        std::string cols = idText();
        for (const auto &c : kColumns) {
            if (c == "active")
                cols += std::string(", CASE WHEN active IS NULL THEN '<null>' WHEN ") +
                        (pg ? "active" : "active <> 0") + " THEN 't' ELSE 'f' END";
            else
                cols += pg ? ", coalesce(" + c + "::text, '<null>')" : ", COALESCE(CAST(" + c + " AS CHAR), '<null>')";
        }
        return "CONCAT_WS('|', " + cols + ")";
    }
    /// Each row's text by id, read on the side's own server.
    std::map<std::string, std::string> rows() const
    {
        std::map<std::string, std::string> out;
        const std::string sql = "SELECT " + idText() + ", " + rowText() + " FROM soak";
        if (pg) {
            auto c = pg->connect();
            auto res = c.exec(sql);
            for (int i = 0; i < res.rows(); ++i)
                out[res.text(i, 0)] = res.text(i, 1);
        } else {
            auto res = my->connect().query(sql);
            for (size_t i = 0; i < res.size(); ++i)
                out[res.text(i, 0)] = res.text(i, 1);
        }
        return out;
    }
    /// The md5 of every row's text in key order, computed by the side's own server.
    std::string hash() const
    {
        if (pg)
            return pg->scalar("SELECT coalesce(md5(string_agg(" + rowText() +
                              ", ',' ORDER BY id)), 'empty') FROM soak");
        auto c = my->connect();
        c.exec("SET SESSION group_concat_max_len = 1073741824");
        return c
            .scalar("SELECT COALESCE(MD5(GROUP_CONCAT(" + rowText() +
                    " ORDER BY id SEPARATOR ',')), 'empty') FROM soak")
            .value_or("no result");
    }
};

/// One writer's bounded, rate-limited run of randomized single-row transactions on one side:
/// inserts of keys that may exist (ON CONFLICT DO NOTHING), deletes, and updates of one or two
/// random columns, each writing values of its own.
struct Writer {
    std::string side;
    long long seed = 0;
    int txns = 0;
    int tps = 20;
    std::atomic<int> done{0};
    std::atomic<long long> rowChanges{0}; ///< rows the statements changed (what CDC can capture)
    std::string error;
    std::atomic<bool> failed{false};

    void run(const Side &on)
    {
        try {
            std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
            const auto start = std::chrono::steady_clock::now();
            auto pace = [&](int i) {
                std::this_thread::sleep_until(start + std::chrono::microseconds(1'000'000LL * i / tps));
            };
            if (on.postgres()) {
                auto c = on.pg->connect();
                for (int i = 0; i < txns; ++i) {
                    pace(i);
                    rowChanges += c.exec(statement(rng, i, true)).affected();
                    done = i + 1;
                }
            } else {
                // ROW_COUNT(): the rows the statement changed (an UPDATE to the values a row holds
                // changes none, and the binlog has no row for it).
                auto c = on.my->connect();
                for (int i = 0; i < txns; ++i) {
                    pace(i);
                    c.exec(statement(rng, i, false));
                    rowChanges += std::stoll(c.scalar("SELECT ROW_COUNT()").value_or("0"));
                    done = i + 1;
                }
            }
        } catch (const std::exception &e) {
            error = side + " writer: " + e.what();
            failed = true;
        }
    }

    std::string value(const std::string &column, int i) const
    {
        const std::string tag = side + "-" + std::to_string(i);
        if (column == "name")
            return "'" + tag + "'";
        if (column == "email")
            return "'" + tag + "@x'";
        if (column == "phone")
            return "'" + tag + "-p'";
        if (column == "qty")
            return std::to_string((side == "a" ? 100000 : 200000) + i);
        if (column == "price")
            return std::to_string(i % 10000) + (side == "a" ? ".25" : ".75");
        return i % 2 == 0 ? "true" : "false";
    }

    std::string statement(std::mt19937_64 &rng, int i, bool postgres) const
    {
        const int roll = static_cast<int>(rng() % 100);
        const std::string key = std::to_string(1 + rng() % kKeys);
        if (roll < 12) {
            std::string values = key;
            for (const auto &col : kColumns)
                values += ", " + value(col, i);
            return std::string(postgres ? "INSERT" : "INSERT IGNORE") +
                   " INTO soak (id, name, email, phone, qty, price, active) VALUES (" + values + ")" +
                   (postgres ? " ON CONFLICT (id) DO NOTHING" : "");
        }
        if (roll < 20)
            return "DELETE FROM soak WHERE id = " + key;
        const size_t first = rng() % kColumns.size();
        std::string set = kColumns[first] + " = " + value(kColumns[first], i);
        if (roll >= 75) {
            const size_t second = (first + 1 + rng() % (kColumns.size() - 1)) % kColumns.size();
            set += ", " + kColumns[second] + " = " + value(kColumns[second], i);
        }
        return "UPDATE soak SET " + set + " WHERE id = " + key;
    }
};

/// A sample of /metrics: name{labels} value.
struct Metrics {
    std::map<std::string, double> samples;

    double get(const std::string &name, const std::string &labels) const
    {
        auto it = samples.find(name + "{" + labels + "}");
        return it == samples.end() ? 0 : it->second;
    }
    long long loop(const std::string &what, const std::string &pipeline, const std::string &direction) const
    {
        return static_cast<long long>(get("driftless_twoway_changes_" + what + "_total",
                                          "pipeline=\"" + pipeline + "\",direction=\"" + direction + "\""));
    }
    long long conflicts(const std::string &pipeline, const std::string &table, const std::string &outcome) const
    {
        return static_cast<long long>(
            get("driftless_twoway_conflicts_total",
                "pipeline=\"" + pipeline + "\",table=\"" + table + "\",outcome=\"" + outcome + "\""));
    }
};

/// Which engines hold side A (the pipeline's source) and side B.
struct Pairing {
    const char *name;
    bool aPostgres;
    bool bPostgres;
    int defaultTxns; ///< a side; the pairs with MariaDB run shorter so CI stays within its budget
};

std::string pairingName(const ::testing::TestParamInfo<Pairing> &info)
{
    return info.param.name;
}

struct TwoWaySoak : ::testing::TestWithParam<Pairing> {
    Side a = side(GetParam().aPostgres, "soak_a");
    Side b = side(GetParam().bPostgres, "soak_b");
    std::string pipeline = uniqueName("soak");
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string log;
    int engine = -1;
    int port = 0;

    static Side side(bool postgres, const std::string &prefix)
    {
        Side s;
        if (postgres)
            s.pg = std::make_unique<PgTestDb>(prefix);
        else
            s.my = std::make_unique<MyTestDb>(prefix);
        return s;
    }

    void TearDown() override
    {
        stopEngine();
        dropTwoWayOrigins(pipeline);
    }

    std::string reverse() const { return pipeline + PipelineSpec::kReverseSuffix; }
    /// The pipeline's name of the table: its source's (A's) spelling.
    std::string table() const { return a.postgres() ? "public.soak" : a.name() + ".soak"; }

    /// The table on A with rows 1..40.
    void createSource()
    {
        a.exec(a.postgres() ? kPgTable : kMyTable);
        a.exec(seedRows());
    }
    void applyWorkspace(const std::string &conflicts)
    {
        writeFile(dir.file("ws.yaml"), "endpoints:\n" + a.endpointYaml("a") + b.endpointYaml("b") +
                                           "pipelines:\n  - name: " + pipeline + "\n    source: a\n    target: b\n" +
                                           (b.postgres() && !a.postgres() ? "    target_schema: public\n" : "") +
                                           "    direction: both\n    tables:\n      - table: " + table() +
                                           "\n        strategy: cdc\n        conflicts: " + conflicts + "\n");
        auto r = runCli({"--state", state, "apply", "--no-check", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    /// `driftless-cli serve` (the pipelines, /metrics and /sync/status) on a free port.
    void startEngine(const std::string &name)
    {
        log = dir.file(name + ".log");
        port = 0;
        engine = spawnCli({"--state", state, "serve", "--listen", "127.0.0.1:0"}, {}, log);
        std::regex re("serving http://127\\.0\\.0\\.1:([0-9]+)/sync/status");
        ASSERT_TRUE(waitFor(
            [&] {
                std::smatch m;
                const std::string out = readFile(log);
                if (std::regex_search(out, m, re))
                    port = std::stoi(m[1]);
                return port > 0;
            },
            120, kPoll))
            << readFile(log);
    }
    void stopEngine()
    {
        if (engine > 0) {
            ::kill(engine, SIGTERM);
            waitPid(engine, 120);
            engine = -1;
        }
    }
    /// Both directions have read their side up to this call: every change made before it was
    /// applied, decided or dropped as Driftless's own on the other side.
    bool quiesced(int seconds)
    {
        if (a.postgres() && b.postgres())
            return pgSlotsPassNow(*a.pg, pipeline, seconds, kPoll);
        if (!a.postgres() && !b.postgres())
            return myBinlogPassesNow(*a.my, *b.my, pipeline, seconds, kPoll);
        return a.postgres() ? mixedPassesNow(*a.pg, *b.my, pipeline, reverse(), seconds, kPoll)
                            : mixedPassesNow(*b.pg, *a.my, reverse(), pipeline, seconds, kPoll);
    }
    /// The initial load reached B and both directions stream.
    void waitStreaming()
    {
        ASSERT_TRUE(waitFor(
            [&] {
                if (a.postgres() && b.postgres())
                    return pgLoadedAndStreaming(*a.pg, *b.pg, pipeline, "soak");
                if (!a.postgres() && !b.postgres())
                    return myTableExists(*b.my, "soak") &&
                           b.scalar("SELECT COUNT(*) FROM soak") == a.scalar("SELECT COUNT(*) FROM soak") &&
                           myDirectionPassed(*b.my, pipeline, 0) && myDirectionPassed(*a.my, reverse(), 0);
                return a.postgres() ? mixedLoadedAndStreaming(*a.pg, *b.my, pipeline, reverse(), "soak")
                                    : mixedLoadedAndStreaming(*b.pg, *a.my, reverse(), pipeline, "soak");
            },
            180, kPoll))
            << readFile(log);
        ASSERT_TRUE(quiesced(120)) << readFile(log);
    }
    Metrics metrics()
    {
        Metrics m;
        auto r = httpRequest(port, "GET", "/metrics");
        EXPECT_EQ(r.status, 200) << r.body;
        // Sample lines: name{labels} value.
        size_t from = 0;
        while (from < r.body.size()) {
            size_t end = r.body.find('\n', from);
            if (end == std::string::npos)
                end = r.body.size();
            const std::string line = r.body.substr(from, end - from);
            from = end + 1;
            const size_t close = line.rfind("} ");
            if (line.empty() || line[0] == '#' || close == std::string::npos)
                continue;
            m.samples[line.substr(0, close + 1)] = std::stod(line.substr(close + 2));
        }
        return m;
    }
    /// Keys whose rows differ between the sides (missing on one side included).
    std::set<std::string> differingKeys()
    {
        const auto ra = a.rows(), rb = b.rows();
        std::set<std::string> out;
        for (const auto &[k, v] : ra)
            if (auto it = rb.find(k); it == rb.end() || it->second != v)
                out.insert(k);
        for (const auto &[k, v] : rb)
            if (!ra.contains(k))
                out.insert(k);
        return out;
    }
    json openConflicts()
    {
        auto r = runCli({"--state", state, "conflicts", "--json"});
        EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
        return r.exitCode == 0 ? json::parse(r.out) : json{{"conflicts", json::array()}};
    }
    /// `driftless-cli reconcile` of the pipeline: the keys it found missing, extra or different,
    /// by the entry's two_way direction. Exit 0 (no drift) or 3 (drift).
    std::map<std::string, std::set<std::string>> reconcileDrift()
    {
        auto r = runCli({"--state", state, "reconcile", pipeline, "--json", "--settle", "10s"});
        EXPECT_TRUE(r.exitCode == 0 || r.exitCode == 3) << r.out << r.err;
        std::map<std::string, std::set<std::string>> out;
        if (r.exitCode != 0 && r.exitCode != 3)
            return out;
        const json j = json::parse(r.out);
        for (const auto &t : j["tables"]) {
            EXPECT_TRUE(t["error"].is_null()) << t.dump(2);
            auto &keys = out[t["two_way"].is_object() ? t["two_way"].value("direction", "") : std::string("?")];
            for (const char *kind : {"missing", "extra", "different"})
                for (const auto &k : t["keys"][kind])
                    keys.insert(k.is_string() ? k.get<std::string>() : k.dump());
        }
        return out;
    }
    CliResult resolve(long long id, const std::vector<std::string> &args)
    {
        std::vector<std::string> all = {"--state", state, "resolve", std::to_string(id)};
        all.insert(all.end(), args.begin(), args.end());
        return runCli(all);
    }
};

} // namespace

// Two writers on overlapping keys for about a minute under merge_columns with on_overlap: manual
// (disjoint column edits merge, overlapping ones queue), a SIGKILL of the engine part-way while
// both keep writing, then a restart.
TEST_P(TwoWaySoak, writersOnBothSidesWithAKilledEngineConvergeOnceTheQueueIsResolved)
{
    const long long seed = envNumber("DRIFTLESS_SOAK_SEED", static_cast<long long>(std::random_device{}() >> 1));
    const int txns = static_cast<int>(envNumber("DRIFTLESS_SOAK_TXNS", GetParam().defaultTxns));
    const int tps = static_cast<int>(envNumber("DRIFTLESS_SOAK_TPS", 20));
    std::printf("%s soak seed %lld (replay: DRIFTLESS_SOAK_SEED=%lld), %d transactions a side at %d/s\n",
                GetParam().name, seed, seed, txns, tps);
    SCOPED_TRACE("DRIFTLESS_SOAK_SEED=" + std::to_string(seed));
    ASSERT_GE(txns, 300) << "DRIFTLESS_SOAK_TXNS: at least 300, so the engine can be killed part-way";

    createSource();
    applyWorkspace("{ policy: merge_columns, on_overlap: manual }");
    startEngine("serve1");
    waitStreaming();

    Writer onA, onB;
    onA.side = "a";
    onB.side = "b";
    onA.seed = seed;
    onB.seed = seed ^ 0x5bd1e995;
    onA.txns = onB.txns = txns;
    onA.tps = onB.tps = tps;
    std::thread ta([&] { onA.run(a); });
    std::thread tb([&] { onB.run(b); });

    // SIGKILL a third of the way; both writers go on while the engine is down, so changes made
    // on both sides at once (conflicts) wait for the restart. It restarts once each writer has
    // made 80 more transactions.
    const bool third = waitFor([&] { return onA.done >= txns / 3 || onA.failed; }, 600, kPoll);
    ::kill(engine, SIGKILL);
    const int killed = waitPid(engine, 60);
    engine = -1;
    const int aAtKill = onA.done, bAtKill = onB.done;
    const bool downLongEnough = waitFor(
        [&] {
            return (onA.done >= std::min(txns, aAtKill + 80) && onB.done >= std::min(txns, bAtKill + 80)) ||
                   onA.failed || onB.failed;
        },
        600, kPoll);
    std::printf("killed at a=%d b=%d transactions; restarted at a=%d b=%d\n", aAtKill, bAtKill, onA.done.load(),
                onB.done.load());
    startEngine("serve2");
    ta.join();
    tb.join();
    ASSERT_TRUE(third && downLongEnough);
    EXPECT_EQ(killed, -SIGKILL);
    ASSERT_EQ(onA.error, "");
    ASSERT_EQ(onB.error, "");
    std::printf("writers done: a %lld row changes, b %lld row changes\n", onA.rowChanges.load(), onB.rowChanges.load());

    // Quiesce: both slots pass everything the writers wrote, then everything the engine wrote
    // while catching up (its own applies, read back and dropped by the other direction).
    ASSERT_TRUE(quiesced(300)) << readFile(log);
    ASSERT_TRUE(quiesced(120)) << readFile(log);
    const Metrics m1 = metrics();

    // No loop (counters of the restarted engine, /metrics): a direction captures only changes
    // its side's writer made. A change applied by the other direction that came back would be
    // captured too (about two thirds of the other writer's changes went through this process):
    // what it applied must come back only as dropped_own.
    const long long fwdCaptured = m1.loop("captured", pipeline, pipeline);
    const long long revCaptured = m1.loop("captured", pipeline, reverse());
    const long long fwdApplied = m1.loop("applied", pipeline, pipeline);
    const long long revApplied = m1.loop("applied", pipeline, reverse());
    const long long fwdDropped = m1.loop("dropped_own", pipeline, pipeline);
    const long long revDropped = m1.loop("dropped_own", pipeline, reverse());
    std::printf("restarted engine: a->b captured %lld applied %lld dropped_own %lld; b->a captured %lld applied %lld "
                "dropped_own %lld\n",
                fwdCaptured, fwdApplied, fwdDropped, revCaptured, revApplied, revDropped);
    EXPECT_GT(fwdCaptured, 0);
    EXPECT_GT(revCaptured, 0);
    EXPECT_LE(fwdCaptured, onA.rowChanges.load()) << "a->b captured more changes than A's writer made: a loop";
    EXPECT_LE(revCaptured, onB.rowChanges.load()) << "b->a captured more changes than B's writer made: a loop";
    // applied counts every change of a committed batch, folded or set aside by conflict
    // handling included, so it cannot exceed captured; captured is the loop check above.
    EXPECT_LE(fwdApplied, fwdCaptured) << "a->b applied more changes than it captured";
    EXPECT_LE(revApplied, revCaptured) << "b->a applied more changes than it captured";
    EXPECT_GT(fwdDropped + revDropped, 0) << "the applies were read back and dropped as Driftless's own";

    // Every conflict was decided by the rule or queued: merged and queued both happened (the
    // downtime guarantees edits of the same rows on both sides), nothing was decided by a side
    // winning, and every row the sides still differ in has an open conflict.
    const long long merged = m1.conflicts(pipeline, table(), "merged");
    const long long queued = m1.conflicts(pipeline, table(), "queued");
    std::printf("conflicts counted by the restarted engine: merged %lld, queued %lld\n", merged, queued);
    EXPECT_GT(merged, 0) << "no disjoint edit of one row was merged by column";
    EXPECT_GT(queued, 0) << "no overlapping edit was queued";
    EXPECT_EQ(m1.conflicts(pipeline, table(), "source_won"), 0);
    EXPECT_EQ(m1.conflicts(pipeline, table(), "target_won"), 0);
    json open = openConflicts();
    std::set<std::string> queuedKeys;
    for (const auto &c : open["conflicts"]) {
        EXPECT_EQ(c["pipeline"], pipeline);
        EXPECT_EQ(c["table"], table());
        queuedKeys.insert(c["key"]["id"].get<std::string>());
    }
    EXPECT_EQ(queuedKeys.size(), open["conflicts"].size()) << "one open conflict per row: " << open.dump(2);
    const auto differing = differingKeys();
    std::printf("%zu rows differ, %zu open conflicts\n", differing.size(), open["conflicts"].size());
    for (const auto &k : differing)
        EXPECT_TRUE(queuedKeys.contains(k)) << "row " << k << " differs between the sides but is not in the queue";
    EXPECT_FALSE(open["conflicts"].empty());

    // Reconciliation, the safety net, agrees with the SQL oracle: comparing the two sides once
    // (symmetric), it finds exactly the rows that differ (each side's own _driftless_version is
    // not compared), across engines too.
    const auto drift = reconcileDrift();
    EXPECT_EQ(drift.size(), 1u) << "one entry for the table, its two sides compared once";
    for (const auto &[direction, keys] : drift)
        EXPECT_EQ(keys, differing) << direction << " direction of reconcile";

    // Quiet now: another quiesce moves no counter (nothing ping-pongs between the sides).
    ASSERT_TRUE(quiesced(120)) << readFile(log);
    const Metrics m2 = metrics();
    for (const char *what : {"captured", "applied", "dropped_own"})
        for (const auto &dir : {pipeline, reverse()})
            EXPECT_EQ(m2.loop(what, pipeline, dir), m1.loop(what, pipeline, dir)) << what << " of " << dir;

    // Resolve the whole queue from the CLI: the three-way merge where it decides, else a side
    // whole (alternating). A conflict whose rows changed since it was queued is refused with
    // its entry refreshed, and resolved again on the next round.
    int resolved = 0, rounds = 0, merges = 0, refreshed = 0;
    for (; rounds < 5; ++rounds) {
        open = openConflicts();
        if (open["conflicts"].empty())
            break;
        for (const auto &c : open["conflicts"]) {
            const long long id = c["id"].get<long long>();
            auto r = resolve(id, {"--take", "merged"});
            if (r.exitCode == 2 && r.err.find("cannot be merged") != std::string::npos)
                r = resolve(id, {"--take", id % 2 ? "source" : "target"});
            else if (r.exitCode == 0)
                ++merges;
            if (r.exitCode == 2 && r.err.find("changed since it was queued") != std::string::npos) {
                ++refreshed;
                continue;
            }
            ASSERT_EQ(r.exitCode, 0) << c.dump(2) << "\n" << r.out << r.err;
            ++resolved;
        }
    }
    std::printf("resolved %d conflicts (%d by the merge) in %d rounds; %d refused as changed and resolved again\n",
                resolved, merges, rounds, refreshed);
    EXPECT_TRUE(openConflicts()["conflicts"].empty());

    // Both sides converge, and the resolutions were not read back as changes.
    ASSERT_TRUE(quiesced(120)) << readFile(log);
    EXPECT_EQ(a.hash(), b.hash()) << "rows differing: " << differingKeys().size();
    EXPECT_TRUE(differingKeys().empty());
    EXPECT_EQ(a.scalar("SELECT count(*) FROM soak"), b.scalar("SELECT count(*) FROM soak"));
    for (const auto &[direction, keys] : reconcileDrift())
        EXPECT_TRUE(keys.empty()) << direction << " direction of reconcile still finds drift";
    const Metrics m3 = metrics();
    EXPECT_EQ(m3.loop("captured", pipeline, pipeline), fwdCaptured) << "a resolution was captured as a change";
    EXPECT_EQ(m3.loop("captured", pipeline, reverse()), revCaptured) << "a resolution was captured as a change";
    EXPECT_EQ(m3.loop("applied", pipeline, pipeline), fwdApplied);
    EXPECT_EQ(m3.loop("applied", pipeline, reverse()), revApplied);
    stopEngine();
}

// A queued conflict whose rows the engine changed afterwards (a later disjoint edit merged by
// column into both sides) is not resolved with the stale stored versions: that would undo the
// later edit on one side only. resolve refuses, refreshes the entry, and the next resolve
// converges both sides with the later edit kept. A conflict whose sides became equal is
// resolved without a write.
TEST_P(TwoWaySoak, aConflictWhoseRowsChangedSinceItWasQueuedIsRefreshedNotUndone)
{
    createSource();
    applyWorkspace("{ policy: merge_columns, on_overlap: manual }");
    startEngine("serve1");
    waitStreaming();
    stopEngine();

    a.exec("UPDATE soak SET email = 'five@a' WHERE id = 5");
    a.exec("UPDATE soak SET email = 'six@a' WHERE id = 6");
    b.exec("UPDATE soak SET email = 'five@b' WHERE id = 5");
    b.exec("UPDATE soak SET email = 'six@b' WHERE id = 6");
    startEngine("serve2");
    ASSERT_TRUE(quiesced(120)) << readFile(log);
    std::map<std::string, long long> ids;
    ASSERT_TRUE(waitFor(
        [&] {
            ids.clear();
            const json list = openConflicts();
            for (const auto &c : list["conflicts"])
                ids[c["key"]["id"].get<std::string>()] = c["id"].get<long long>();
            return ids.size() == 2;
        },
        60, kPoll))
        << readFile(log);

    // Later: A changes row 5's phone (merged into B by column: the email conflict stays), and B
    // changes row 6's email to A's value (the sides agree again).
    a.exec("UPDATE soak SET phone = 'five-later' WHERE id = 5");
    b.exec("UPDATE soak SET email = 'six@a' WHERE id = 6");
    ASSERT_TRUE(waitFor([&] { return b.scalar("SELECT phone FROM soak WHERE id = 5") == "five-later"; }, 120, kPoll))
        << readFile(log);
    ASSERT_TRUE(quiesced(120)) << readFile(log);
    ASSERT_TRUE(quiesced(120)) << readFile(log);
    EXPECT_EQ(a.scalar("SELECT email FROM soak WHERE id = 5"), "five@a");
    EXPECT_EQ(b.scalar("SELECT email FROM soak WHERE id = 5"), "five@b");

    auto r = resolve(ids["5"], {"--take", "source"});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("changed since it was queued"), std::string::npos) << r.err;
    EXPECT_EQ(b.scalar("SELECT concat_ws('|', email, phone) FROM soak WHERE id = 5"), "five@b|five-later")
        << "nothing is written by a refused resolution";
    json refreshed;
    const json list = openConflicts();
    for (const auto &c : list["conflicts"])
        if (c["id"] == ids["5"])
            refreshed = c;
    ASSERT_TRUE(refreshed.is_object());
    EXPECT_EQ(refreshed["source"]["phone"], "five-later") << refreshed.dump(2);
    EXPECT_EQ(refreshed["target"]["phone"], "five-later") << refreshed.dump(2);
    EXPECT_EQ(refreshed["columns"], json::array({"email"})) << refreshed.dump(2);

    r = resolve(ids["5"], {"--take", "source"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(b.scalar("SELECT concat_ws('|', email, phone) FROM soak WHERE id = 5"), "five@a|five-later");

    r = resolve(ids["6"], {"--take", "target"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("already hold the same version"), std::string::npos) << r.out;

    ASSERT_TRUE(quiesced(120)) << readFile(log);
    EXPECT_EQ(a.hash(), b.hash()) << "rows differing: " << differingKeys().size();
    EXPECT_TRUE(openConflicts()["conflicts"].empty());
}

INSTANTIATE_TEST_SUITE_P(Pairings, TwoWaySoak,
                         ::testing::Values(Pairing{"postgres_postgres", true, true, 1200},
                                           Pairing{"mariadb_mariadb", false, false, 900},
                                           Pairing{"postgres_mariadb", true, false, 900}),
                         pairingName);
