// Tables by pattern, picked up while running (docs/patterns.md): a pipeline with include_tables
// syncs the tables its patterns match when it starts, and a table created while it runs within
// one discover_every; an excluded one never. Both sources, into a Postgres target, through the
// CLI as a DBA runs it; the oracle is a hash computed in SQL on each side.

#include "core/state/statestore.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

using namespace driftless;
using namespace driftless::test;

namespace {

enum class Source { Postgres, Mariadb };

struct TablePatterns : ::testing::TestWithParam<Source> {
    std::unique_ptr<PgTestDb> pgSrc;
    std::unique_ptr<MyTestDb> mySrc;
    PgTestDb dst{"pat_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string pipeline = uniqueName("pat");

    bool mariadb() const { return GetParam() == Source::Mariadb; }
    std::string schema() const { return mariadb() ? mySrc->name() : "public"; }
    void exec(const std::string &sql) const { mariadb() ? mySrc->exec(sql) : pgSrc->exec(sql); }

    void SetUp() override
    {
        if (mariadb())
            mySrc = std::make_unique<MyTestDb>("pat_src");
        else
            pgSrc = std::make_unique<PgTestDb>("pat_src");
    }
    void createTable(const std::string &name, int rows) const
    {
        exec("CREATE TABLE " + name + " (id int PRIMARY KEY, v varchar(40) NOT NULL)");
        addRows(name, 1, rows);
    }
    void addRows(const std::string &name, int from, int to) const
    {
        std::string values;
        for (int i = from; i <= to; ++i)
            values += (values.empty() ? "" : ",") + ("(" + std::to_string(i) + ", 'row " + std::to_string(i) + "')");
        exec("INSERT INTO " + name + " (id, v) VALUES " + values);
    }
    /// count:md5 of the rows in id order, computed by the server that holds them.
    std::string sourceHash(const std::string &name) const
    {
        if (mariadb())
            return mySrc->scalar(
                "SELECT CONCAT(COUNT(*), ':', COALESCE(MD5(GROUP_CONCAT(CONCAT(id, '|', v) ORDER BY id "
                "SEPARATOR ',')), '')) FROM " +
                name);
        return pgSrc->scalar("SELECT count(*) || ':' || coalesce(md5(string_agg(id || '|' || v, ',' ORDER BY id)), '') "
                             "FROM " +
                             name);
    }
    std::string targetHash(const std::string &name) const
    {
        if (dst.scalar("SELECT count(*) FROM pg_tables WHERE schemaname = 'model' AND tablename = '" + name + "'") ==
            "0")
            return "no table";
        return dst.scalar("SELECT count(*) || ':' || coalesce(md5(string_agg(id || '|' || v, ',' ORDER BY id)), '') "
                          "FROM model." +
                          name);
    }
    std::string yaml() const
    {
        const std::string src = mariadb() ? "{ kind: mysql, dsn: \"" + mySrc->dsn() + "\" }"
                                          : "{ kind: postgres, dsn: \"" + pgSrc->dsn() + "\" }";
        return "endpoints:\n"
               "  src: " +
               src + "\n  dw: { kind: postgres, dsn: \"" + dst.dsn() +
               "\" }\n"
               "pipelines:\n"
               "  - name: " +
               pipeline +
               "\n"
               "    source: src\n"
               "    target: dw\n"
               "    target_schema: model\n"
               "    include_tables: [\"" +
               schema() + ".pat_*\"]\n    exclude_tables: [\"" + schema() +
               ".pat_tmp*\"]\n"
               "    table_defaults: { strategy: cdc }\n"
               "    discover_every: 5s\n";
    }
};

} // namespace

TEST_P(TablePatterns, aTableCreatedWhileRunningIsLoadedAndStreamedAndAnExcludedOneNeverIs)
{
    createTable("pat_orders", 120);
    createTable("other_table", 10); // the pattern does not match it
    const std::string file = dir.file("ws.yaml");
    writeFile(file, yaml());
    auto applied = runCli({"--state", state, "apply", file});
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;

    const std::string log = dir.file("run.log");
    const int runner = spawnCli({"--state", state, "run", "--pipeline", pipeline}, {}, log);
    struct Stop {
        int pid;
        ~Stop()
        {
            if (pid > 0) {
                ::kill(pid, SIGTERM);
                waitPid(pid, 60);
            }
        }
    } stopRunner{runner};

    ASSERT_TRUE(waitForIgnoringErrors([&] { return targetHash("pat_orders") == sourceHash("pat_orders"); }, 180))
        << "the table the pattern matched at start is loaded: " << targetHash("pat_orders") << "\n"
        << readFile(log);

    // Created while the pipeline runs: picked up within one discover_every (5 s), loaded, streamed.
    createTable("pat_new", 40);
    createTable("pat_tmp_scratch", 5);
    // No key: table_defaults' cdc cannot sync it, so it is refused with what to do, never half-synced.
    exec("CREATE TABLE pat_log (at_id int NOT NULL, line varchar(40))");
    exec("INSERT INTO pat_log VALUES (1, 'a'), (1, 'a')");
    ASSERT_TRUE(waitForIgnoringErrors([&] { return targetHash("pat_new") == sourceHash("pat_new"); }, 180))
        << targetHash("pat_new") << "\n"
        << readFile(log);
    addRows("pat_new", 41, 60);
    exec("UPDATE pat_new SET v = 'changed' WHERE id <= 5");
    exec("DELETE FROM pat_new WHERE id = 7");
    addRows("pat_orders", 121, 130);
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] {
            return targetHash("pat_new") == sourceHash("pat_new") &&
                   targetHash("pat_orders") == sourceHash("pat_orders");
        },
        180))
        << "changes after the pick-up stream: " << targetHash("pat_new") << " vs " << sourceHash("pat_new") << "\n"
        << readFile(log);

    EXPECT_EQ(targetHash("pat_tmp_scratch"), "no table") << "excluded by exclude_tables";
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM pg_tables WHERE tablename = 'pat_log'"), "0") << "refused";
    EXPECT_EQ(targetHash("other_table"), "no table") << "not matched by include_tables";

    // Said as an event, and listed by status like a listed table.
    core::StateStore store(state);
    bool said = false;
    for (const auto &e : store.events(200, pipeline))
        said = said || (e.kind == "table_discovered" && e.message.find(schema() + ".pat_new") != std::string::npos &&
                        e.message.find("include_tables \"" + schema() + ".pat_*\"") != std::string::npos);
    EXPECT_TRUE(said) << "a table_discovered event names the table and the pattern";
    bool refused = false;
    for (const auto &e : store.events(200, pipeline))
        refused = refused || (e.kind == "table_refused" && e.table == schema() + ".pat_log" &&
                              e.message.find("cannot sync it") != std::string::npos &&
                              e.message.find("list it under tables:") != std::string::npos);
    std::string events;
    for (const auto &e : store.events(200, pipeline))
        events += e.kind + " [" + e.table + "] " + e.message + "\n";
    EXPECT_TRUE(refused) << "the keyless table is refused with what to do:\n" << events;
    // The doctor says the same, as a warning on the table.
    auto doctor = runCli({"--state", state, "doctor", "--json"});
    EXPECT_NE(doctor.out.find("pat_log matches include_tables"), std::string::npos) << doctor.out;
    auto status = runCli({"--state", state, "status", "--json"});
    EXPECT_NE(status.out.find(schema() + ".pat_new"), std::string::npos) << status.out;
    EXPECT_EQ(status.out.find("pat_tmp_scratch"), std::string::npos) << status.out;
}

INSTANTIATE_TEST_SUITE_P(BothSources, TablePatterns, ::testing::Values(Source::Postgres, Source::Mariadb),
                         [](const auto &info) { return info.param == Source::Mariadb ? "Mariadb" : "Postgres"; });
