// The schema zoo, Postgres source: every real-world table feature of zoofeatures.cpp synced by each
// strategy into a Postgres and a SQLite target, in one pipeline per (strategy, target), with a
// bounded fixed-seed writer and one SIGKILL of the engine, then checked by an oracle of our own
// (zoooracle.h: a canonical per-row hash computed in SQL on each side) and by `reconcile --json`.
// Combinations the product refuses are asserted refused at `apply`; known failures are kept in the
// table, disabled unless DRIFTLESS_ZOO_ALL=1. docs/schema-zoo.md is generated from the same table.

#include "tests/conformance/zoofeatures.h"
#include "tests/conformance/zoooracle.h"
#include "tests/conformance/zoowriter.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <tuple>

using namespace driftless::test;
using namespace driftless::zoo;
using driftless::core::PgConnection;

namespace {

/// DRIFTLESS_ZOO_ALL=1 turns on the combinations marked FAILS in the feature table.
const bool kAllCombinations = [] {
    const char *v = std::getenv("DRIFTLESS_ZOO_ALL");
    return v && std::string(v) == "1";
}();

unsigned zooSeed()
{
    const char *v = std::getenv("DRIFTLESS_ZOO_SEED");
    return v ? static_cast<unsigned>(std::strtoul(v, nullptr, 10)) : 20251201u;
}

bool enabled(const Feature &f, Strat s, Target t)
{
    return !f.refusedBy.count(s) && (kAllCombinations || !f.fails.count({s, t}));
}

Strat strategyOf(const ZooTable &t, Strat pair)
{
    return t.always.value_or(pair);
}

/// How the writer speaks to Postgres (zoowriter.h).
std::map<std::string, std::string> pgValues(std::mt19937 &rng, long long next)
{
    static const char *words[] = {"Mixed Word", "O''Brien", "straße", "🦆 duck", "UPPER lower", "a|b", ""};
    return {
        {"{k}", std::to_string(1 + rng() % static_cast<unsigned long>(next))},
        {"{r}", std::to_string(rng() % 1000000)},
        {"{c}", std::to_string(1 + rng() % 997)},
        {"{w}", std::string(words[rng() % 7]) + " " + std::to_string(rng() % 100)},
    };
}
const WriterDialect kPgWriter{"BEGIN", "violates foreign key", pgValues};
using Writer = ZooWriter<PgConnection, Feature>;

struct Zoo {
    Strat strategy;
    Target target;
    PgTestDb src{"zoo_src"};
    std::unique_ptr<PgTestDb> dst;
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string lite = dir.file("zoo.db");
    std::string pipeline = uniqueName("zoo");
    std::vector<const Feature *> active;

    Zoo(Strat s, Target t) : strategy(s), target(t)
    {
        if (t == Target::Postgres)
            dst = std::make_unique<PgTestDb>("zoo_dst");
    }

    std::string endpoints() const
    {
        std::string out = "endpoints:\n  app: { kind: postgres, dsn: \"" + src.dsn() + "\" }\n";
        if (target == Target::Postgres)
            out += "  dw: { kind: postgres, dsn: \"" + dst->dsn() + "\" }\n";
        else
            out += "  dw: { kind: sqlite, path: \"" + lite + "\" }\n";
        return out;
    }
    static std::string entry(const ZooTable &t, Strat s)
    {
        std::string e = "      - { table: " + t.yaml + ", strategy: " + strategyName(s) + ", page_size: 16";
        if (s == Strat::Cursor)
            e += ", cursor: updated_at, lookback: 2s";
        return e + " }\n";
    }
    std::string workspace(const std::string &tables, bool publication) const
    {
        return endpoints() + "pipelines:\n  - name: " + pipeline + "\n    source: app\n    target: dw\n" +
               (publication ? "    publication: zoo_pub\n" : "") + "    tables:\n" + tables;
    }
    CliResult cli(const std::vector<std::string> &args, const std::map<std::string, std::string> &env = {},
                  const std::string &stateFile = {})
    {
        std::vector<std::string> a{"--state", stateFile.empty() ? state : stateFile};
        a.insert(a.end(), args.begin(), args.end());
        return runCli(a, env, 600);
    }
    std::string status()
    {
        auto r = cli({"status", "--json"});
        std::string out;
        try {
            for (const auto &t : nlohmann::json::parse(r.out)["tables"])
                if (t.value("state", "") != "ok")
                    out += "  " + t.value("table", std::string("?")) + ": " + t.dump().substr(0, 600) + "\n";
        } catch (const std::exception &) {
            out = r.out + r.err;
        }
        return out;
    }
    /// `reconcile --json` of every table it can compare: a table without a key (the partitioned
    /// root) is refused by it ("rows cannot be matched"), by design.
    std::vector<std::string> reconcileArgs(const std::vector<std::string> &extra) const
    {
        std::vector<std::string> a{"reconcile", pipeline};
        for (const Feature *f : active)
            for (const auto &t : f->tables)
                if (keyed(t))
                    a.push_back(t.sql);
        a.push_back("--json");
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    static bool keyed(const ZooTable &t)
    {
        for (auto &[s, why] : t.refused)
            if (why.first == "has no primary key")
                return false;
        return true;
    }
    PgConnection targetConn()
    {
        auto c = dst->connect();
        prepareSession(c);
        return c;
    }
};

/// The target's copy of `t` (Postgres: the same schema.name; SQLite: the bare name).
Digest targetDigest(Zoo &z, const ZooTable &t, const std::vector<OracleColumn> &cols)
{
    if (z.target == Target::Sqlite)
        return sqliteDigest(z.lite, cols, t.liteName);
    auto c = z.targetConn();
    return pgDigest(c, cols, t.sql);
}

std::vector<std::string> targetRows(Zoo &z, const ZooTable &t, const std::vector<OracleColumn> &cols)
{
    if (z.target == Target::Sqlite)
        return sqliteRows(z.lite, cols, t.liteName);
    auto c = z.targetConn();
    return pgRows(c, cols, t.sql);
}

struct TableResult {
    bool equal = false;
    std::string detail;
};

std::map<std::string, TableResult> oracle(Zoo &z, bool withDetail)
{
    auto src = z.src.connect();
    prepareSession(src);
    std::map<std::string, TableResult> out;
    for (const Feature *f : z.active)
        for (const auto &t : f->tables) {
            auto cols = sourceColumns(src, t.sql);
            const std::string from = (t.ownRowsOnly ? "ONLY " : "") + t.sql;
            TableResult r;
            try {
                Digest a = pgDigest(src, cols, from);
                Digest b = targetDigest(z, t, cols);
                r.equal = a == b;
                if (!r.equal && withDetail)
                    r.detail = "source " + std::to_string(a.rows) + " rows " + a.md5 + ", target " +
                               std::to_string(b.rows) + " rows " + b.md5 + "; " +
                               describeDifference(pgRows(src, cols, from), targetRows(z, t, cols));
            } catch (const std::exception &e) {
                r.detail = std::string("oracle query failed: ") + e.what();
            }
            out[t.sql] = r;
        }
    return out;
}

bool allEqual(const std::map<std::string, TableResult> &m)
{
    for (auto &[k, v] : m)
        if (!v.equal)
            return false;
    return true;
}

void everyFeature(Strat strategy, Target target)
{
    const unsigned seed = zooSeed() + static_cast<unsigned>(strategy) * 10 + static_cast<unsigned>(target);
    std::printf("zoo %s -> %s: writer seed %u%s\n", strategyName(strategy), targetName(target), seed,
                kAllCombinations ? " (DRIFTLESS_ZOO_ALL=1: known failures included)" : "");
    const auto started = std::chrono::steady_clock::now();
    Zoo z(strategy, target);
    auto phase = [&](const char *what) {
        std::printf("  %5.1f s  %s\n",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), what);
        std::fflush(stdout);
    };

    // Every feature's tables, refused ones included (their refusal is asserted below).
    z.src.exec("CREATE SCHEMA zoo");
    for (const auto &f : features()) {
        try {
            z.src.exec(f.ddl);
            z.src.exec(f.seed);
        } catch (const std::exception &e) {
            FAIL() << f.name << ": DDL or seed failed: " << e.what();
        }
        if (enabled(f, strategy, target))
            z.active.push_back(&f);
    }
    z.src.exec("ANALYZE");

    // Refusals: each alone in a workspace of its own; `apply` exits 2 with the reason and the fix
    // and stores nothing.
    auto refusedApply = [&](const ZooTable &t, const std::pair<std::string, std::string> &why,
                            const std::string &what) {
        const std::string file = z.dir.file("refused.yaml"), state = z.dir.file("refused.db");
        writeFile(file, z.workspace(Zoo::entry(t, strategy), false));
        auto r = z.cli({"apply", file}, {}, state);
        EXPECT_EQ(r.exitCode, 2) << what << ": " << r.out << r.err;
        EXPECT_NE(r.err.find(why.first), std::string::npos) << what << ": no reason in: " << r.err;
        EXPECT_NE(r.err.find(why.second), std::string::npos) << what << ": no fix in: " << r.err;
        EXPECT_FALSE(std::filesystem::exists(state)) << what << ": a refused apply stored a workspace";
    };
    for (const auto &f : features()) {
        if (auto it = f.refusedBy.find(strategy); it != f.refusedBy.end())
            for (const auto &t : f.tables)
                refusedApply(t, it->second, f.name + " (" + t.sql + ")");
        for (const auto &t : f.tables)
            if (auto it = t.refused.find(strategy); it != t.refused.end())
                refusedApply(t, it->second, f.name + " (" + t.sql + ")");
    }

    phase("tables created and seeded, refusals checked");
    std::string tables;
    std::vector<std::string> published;
    for (const Feature *f : z.active)
        for (const auto &t : f->tables) {
            tables += Zoo::entry(t, strategyOf(t, strategy));
            if (strategyOf(t, strategy) == Strat::Cdc)
                published.push_back(t.sql);
        }
    const bool cdc = !published.empty();
    if (cdc) {
        // The DBA's own publication, publishing partitions as their root.
        std::string list;
        for (auto &p : published)
            list += (list.empty() ? "" : ", ") + p;
        z.src.exec("CREATE PUBLICATION zoo_pub FOR TABLE " + list + " WITH (publish_via_partition_root = true)");
    }
    writeFile(z.dir.file("zoo.yaml"), z.workspace(tables, cdc));
    {
        auto r = z.cli({"apply", z.dir.file("zoo.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    {
        auto r = z.cli({"run", "--once"});
        EXPECT_EQ(r.exitCode, 0) << "initial pass: " << r.err << z.status();
    }

    phase("applied, initial pass done");
    PgConnection wconn = z.src.connect();
    Writer writer(wconn, z.active, seed, kPgWriter);
    const int total = writer.remaining();
    int written = writer.run(total / 2);

    // One pass killed right after its second batch committed.
    {
        const std::string log = z.dir.file("killed.log");
        int pid =
            spawnCli({"--state", z.state, "run", "--once"}, {{"DRIFTLESS_CRASH_AT", "batch.after_commit:2"}}, log);
        int rc = waitPid(pid, 600);
        EXPECT_TRUE(rc == -SIGKILL || rc == 0) << "killed pass exited " << rc << ": " << readFile(log);
        std::printf("killed pass: %s\n", rc == -SIGKILL ? "SIGKILL after batch 2" : "finished with fewer batches");
    }
    written += writer.run(total);
    std::printf("writer: %d statements (%d failed and were rolled back)\n", written, writer.failures());

    phase("writer done");
    // Catch up: `run --once` until the oracle holds (CDC streams in passes), at most 5 passes;
    // cursor sync converges only after the repair below, so two passes (the second past the
    // lookback) are all it gets before it.
    std::map<std::string, TableResult> result;
    const int passes = strategy == Strat::Cursor ? 2 : 5;
    for (int pass = 0; pass < passes; ++pass) {
        if (pass && strategy == Strat::Cursor)
            std::this_thread::sleep_for(std::chrono::seconds(3));
        auto r = z.cli({"run", "--once"});
        EXPECT_EQ(r.exitCode, 0) << "pass " << pass << ": " << r.err << z.status();
        result = oracle(z, false);
        if (allEqual(result))
            break;
    }

    // Cursor sync does not see hard deletes, primary-key updates (the old key) or cascades
    // (README, docs/strategies.md): what the product promises is that reconciliation finds them
    // and repair removes them. The writer stamps updated_at on every update, so everything else
    // arrives by the cursor.
    if (strategy == Strat::Cursor && !allEqual(result)) {
        auto rec = z.cli(z.reconcileArgs({"--max-keys", "1000"}));
        EXPECT_TRUE(rec.exitCode == 0 || rec.exitCode == 3) << rec.out << rec.err;
        if (rec.exitCode == 3) {
            auto id = nlohmann::json::parse(rec.out)["report_id"].get<long long>();
            auto rep = z.cli({"repair", std::to_string(id), "--json"});
            EXPECT_EQ(rep.exitCode, 0) << rep.out << rep.err;
        }
        result = oracle(z, false);
    }
    result = oracle(z, true);
    phase("caught up, oracle computed");

    // The engine's own comparison must agree: no drift anywhere.
    std::map<std::string, std::string> drift;
    {
        auto rec = z.cli(z.reconcileArgs({}));
        EXPECT_EQ(rec.exitCode, 0) << rec.err << "\n" << rec.out.substr(0, 4000);
        try {
            for (const auto &t : nlohmann::json::parse(rec.out)["tables"]) {
                long long m = t.value("missing", 0LL), x = t.value("extra", 0LL), d = t.value("different", 0LL);
                if (m || x || d)
                    drift[t.value("table", std::string())] = "reconcile: missing " + std::to_string(m) + ", extra " +
                                                             std::to_string(x) + ", different " + std::to_string(d) +
                                                             " " + t["keys"].dump().substr(0, 400);
            }
        } catch (const std::exception &e) {
            ADD_FAILURE() << "reconcile --json: " << e.what() << ": " << rec.out.substr(0, 2000) << rec.err;
        }
    }

    phase("reconciled");
    for (const Feature *f : z.active) {
        for (const auto &t : f->tables) {
            const auto &r = result[t.sql];
            EXPECT_TRUE(r.equal) << f->name << " / " << t.sql << " by " << strategyName(strategyOf(t, strategy))
                                 << " into " << targetName(target) << ": oracle differs: " << r.detail;
            // reconcile names tables as schema.name with quotes where needed.
            for (auto &[name, what] : drift)
                if (name == t.sql || name == "zoo." + t.liteName)
                    ADD_FAILURE() << f->name << " / " << t.sql << ": " << what;
        }
    }
    if (!allEqual(result) || !drift.empty())
        std::printf("tables not ok per status:\n%s", z.status().c_str());
    std::printf(
        "zoo %s -> %s: %zu features, %d seconds\n", strategyName(strategy), targetName(target), z.active.size(),
        static_cast<int>(
            std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started).count()));
}

// ---- docs/schema-zoo.md, generated from the feature table ----

std::string cell(const Feature &f, Strat s, Target t)
{
    if (auto it = f.refusedBy.find(s); it != f.refusedBy.end())
        return "refused at apply: " + it->second.first + " (fix: " + it->second.second + ")";
    if (auto it = f.fails.find({s, t}); it != f.fails.end())
        return "**failing: under investigation** (" + it->second + ")";
    std::string out = "synced";
    for (const auto &tb : f.tables)
        if (auto it = tb.refused.find(s); it != tb.refused.end())
            out += "; " + tb.sql + " refused (" + it->second.first + "), synced by " +
                   strategyName(tb.always.value_or(Strat::FullRefresh));
    if (s == Strat::Cursor)
        out += "; deletes via reconcile + repair";
    return out;
}

std::string docsTable()
{
    std::string out = "| feature | what |";
    const Strat strats[] = {Strat::FullRefresh, Strat::Cursor, Strat::Cdc};
    const Target targets[] = {Target::Postgres, Target::Sqlite};
    std::string rule = "|---|---|";
    for (Strat s : strats)
        for (Target t : targets) {
            out += std::string(" ") + strategyName(s) + " → " + targetName(t) + " |";
            rule += "---|";
        }
    out += "\n" + rule + "\n";
    for (const auto &f : features()) {
        std::string what = f.what + (f.oracleNote.empty() ? "" : " *Oracle: " + f.oracleNote + "*");
        for (auto &c : what)
            if (c == '|')
                c = '/';
        out += "| `" + f.name + "` | " + what + " |";
        for (Strat s : strats)
            for (Target t : targets)
                out += " " + cell(f, s, t) + " |";
        out += "\n";
    }
    return out;
}

} // namespace

// Every feature by each strategy into each target: one pipeline per pair, in this order.
class ZooFeatures : public ::testing::TestWithParam<std::tuple<Strat, Target>> {};

TEST_P(ZooFeatures, syncsEveryFeature)
{
    everyFeature(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(ByStrategyIntoTarget, ZooFeatures,
                         ::testing::Combine(::testing::Values(Strat::FullRefresh, Strat::Cursor, Strat::Cdc),
                                            ::testing::Values(Target::Postgres, Target::Sqlite)),
                         [](const ::testing::TestParamInfo<std::tuple<Strat, Target>> &info) {
                             return std::string(strategyName(std::get<0>(info.param))) + "_into_" +
                                    targetName(std::get<1>(info.param));
                         });

// The committed docs/schema-zoo.md holds the table this suite asserts, between its markers; the
// generated one is written to DRIFTLESS_ARTIFACTS/schema-zoo-table.md to paste from.
TEST(Zoo, theDocsTableIsTheSuitesOwn)
{
    const std::string table = docsTable();
    if (const char *art = std::getenv("DRIFTLESS_ARTIFACTS")) {
        std::filesystem::create_directories(art);
        writeFile(std::string(art) + "/schema-zoo-table.md", table);
    }
    const std::string doc = readFile(std::string(DRIFTLESS_SOURCE_DIR) + "/docs/schema-zoo.md");
    const std::string begin = "<!-- zoo-table:begin -->\n", end = "<!-- zoo-table:end -->";
    auto a = doc.find(begin), b = doc.find(end);
    ASSERT_TRUE(a != std::string::npos && b != std::string::npos) << "docs/schema-zoo.md lacks the table markers";
    EXPECT_EQ(doc.substr(a + begin.size(), b - a - begin.size()), table)
        << "docs/schema-zoo.md is out of date: paste the table from DRIFTLESS_ARTIFACTS/schema-zoo-table.md";
}
