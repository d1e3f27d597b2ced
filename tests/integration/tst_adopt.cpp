// Adopting a target table the pipeline did not create (issue 46 item 1, `adopt: true`): a copy a
// DBA made with pg_dump, or by hand, differing from the source in a few rows, is taken without a
// reload: its columns are checked, the version column added, only the rows that differ are
// written, and then it streams. The oracle is SQL on each side (pgHash, and the rows' xmin on the
// Postgres target: a row the engine did not write keeps the transaction id the copy gave it).

#include "core/db/mysqlconnection.h"
#include "core/db/pgconnection.h"
#include "core/db/sqlitedb.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"
#include "tests/support/twowayfixture.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <functional>
#include <string>
#include <thread>

using namespace driftless::test;

namespace {

/// `route` is what the pipeline says beside its tables: "adopt: true" on the table by default.
std::string workspace(const std::string &sourceEndpoint, const std::string &targetDsn, const std::string &pipeline,
                      const std::string &table, const std::string &route = {}, bool adopt = true)
{
    return "endpoints:\n" + sourceEndpoint + "  dw: { kind: postgres, dsn: \"" + targetDsn +
           "\" }\npipelines:\n  - name: " + pipeline +
           "\n    source: app\n    target: dw\n    target_schema: public\n" + route +
           "    tables:\n      - { table: " + table + ", strategy: cdc, page_size: 20000" +
           (adopt ? ", adopt: true" : "") + " }\n";
}

/// Polls `met` every 200 ms for up to two minutes; true once it holds.
bool within2Minutes(const std::function<bool()> &met)
{
    for (int i = 0; i < 600; ++i) {
        if (met())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return met();
}

/// status --json's message of the table of two-way `direction` ("forward", "reverse").
std::string messageOf(const std::string &status, const std::string &direction)
{
    const auto json = nlohmann::json::parse(status);
    for (const auto &t : json["tables"])
        if (t["two_way"].is_object() && t["two_way"]["direction"] == direction)
            return t["message"].is_string() ? t["message"].get<std::string>() : std::string();
    return "(no " + direction + " direction)";
}

/// Rows of `table` on `db` whose xmin is `xmin`: the rows no transaction since that one wrote.
long long rowsOfXmin(PgTestDb &db, const std::string &table, const std::string &xmin)
{
    return std::stoll(db.scalar("SELECT count(*) FROM " + table + " WHERE xmin::text = '" + xmin + "'"));
}

/// Source and target hold the same rows, by a hash computed in SQL on each side.
void expectSameRows(PgTestDb &src, PgTestDb &dst, const std::string &select, const std::string &orderBy)
{
    auto s = src.connect();
    auto d = dst.connect();
    EXPECT_EQ(pgHash(d, select, orderBy), pgHash(s, select, orderBy)) << select;
}

/// A two-way pipeline over a table it did not create, while `run` runs (its log in `log`): the
/// forward direction refuses the table naming the way that keeps its rows, and the reverse
/// direction says it waits for that (it hears of the forward direction's failure on its next
/// try, so status --json is polled).
void expectTwoWayRefusal(const std::string &state, const std::string &pipeline, const std::string &log)
{
    const int engine = spawnCli({"--state", state, "run"}, {}, log);
    std::string status;
    const bool said = within2Minutes([&] {
        status = runCli({"--state", state, "status", "--json"}).out;
        return messageOf(status, "forward").find("adopt it one way first") != std::string::npos &&
               messageOf(status, "reverse").find("the forward direction " + pipeline + " cannot start") !=
                   std::string::npos;
    });
    ::kill(engine, SIGTERM);
    waitPid(engine, 60);
    EXPECT_TRUE(said) << status << "\n" << readFile(log);
}
} // namespace

// pgbench's accounts table, copied into the target by pg_dump | psql (a tool nobody here wrote);
// then 100 balances changed there by hand, 5 rows deleted and 3 added. Two ways at once it is
// refused, naming the way: adopted one way, only those 108 rows are written, every other row keeps
// its xmin; then a change on the source streams in; then made two-way, changes flow both ways.
TEST(Adopt, aPgDumpCopyIsAdoptedOneWayWritingOnlyTheRowsThatDifferThenStreamsBothWays)
{
    PgTestDb src("adsrc");
    PgTestDb dst("addst");
    TempDir dir;
    const auto &sv = servers();
    const std::vector<std::string> conn{"-h", sv.pgHost, "-p", std::to_string(sv.pgPort), "-U", sv.pgUser};
    auto tool = [&](const std::string &program, std::vector<std::string> args) {
        args.insert(args.begin(), conn.begin(), conn.end());
        return waitPid(
            spawnProgram(program, args, {{"PGPASSWORD", sv.pgPassword}}, dir.file(program.substr(9) + ".log")), 300);
    };
    ASSERT_EQ(tool("/usr/bin/pgbench", {"-q", "-i", "-s", "1", src.name()}), 0) << readFile(dir.file("pgbench.log"));
    ASSERT_EQ(waitPid(spawnProgram("/bin/sh",
                                   {"-c", "pg_dump -h " + sv.pgHost + " -p " + std::to_string(sv.pgPort) + " -U " +
                                              sv.pgUser + " -t public.pgbench_accounts " + src.name() +
                                              " | psql -X -q " + "-v ON_ERROR_STOP=1 -h " + sv.pgHost + " -p " +
                                              std::to_string(sv.pgPort) + " -U " + sv.pgUser + " " + dst.name()},
                                   {{"PGPASSWORD", sv.pgPassword}}, dir.file("dump.log")),
                      300),
              0)
        << readFile(dir.file("dump.log"));
    dst.exec("UPDATE pgbench_accounts SET abalance = abalance + 7 WHERE aid % 1000 = 0");
    dst.exec("DELETE FROM pgbench_accounts WHERE aid BETWEEN 501 AND 505");
    dst.exec("INSERT INTO pgbench_accounts VALUES (200001, 1, 0, 'extra'), (200002, 1, 0, 'extra'), (200003, 1, 0, "
             "'extra')");
    const std::string restored = dst.scalar("SELECT xmin::text FROM pgbench_accounts WHERE aid = 1");
    ASSERT_EQ(rowsOfXmin(dst, "pgbench_accounts", restored), 100000 - 100 - 5);

    const std::string state = dir.file("workspace.db");
    const std::string pipeline = uniqueName("adpg");
    const std::string app = "  app: { kind: postgres, dsn: \"" + pgDsn(src.name()) + "\" }\n";
    // Its two-way phases make replication origins, which belong to the cluster, not the databases.
    struct Origins {
        std::string pipeline;
        ~Origins() { dropTwoWayOrigins(pipeline); }
    } origins{pipeline};
    // Two ways at once, it is refused with the way that keeps the copy's rows, and the reverse
    // direction says what it waits for instead of waiting for a slot that never comes.
    writeFile(dir.file("ws.yaml"),
              workspace(app, pgDsn(dst.name()), pipeline, "public.pgbench_accounts", "    direction: both\n", false));
    ASSERT_EQ(runCli({"--state", state, "apply", dir.file("ws.yaml")}).exitCode, 0);
    expectTwoWayRefusal(state, pipeline, dir.file("refused.log"));
    ASSERT_EQ(rowsOfXmin(dst, "pgbench_accounts", restored), 100000 - 100 - 5) << "the refusal wrote no row";

    writeFile(dir.file("ws.yaml"), workspace(app, pgDsn(dst.name()), pipeline, "public.pgbench_accounts"));
    auto applied = runCli({"--state", state, "apply", dir.file("ws.yaml")});
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto run = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
    EXPECT_NE((run.out + run.err).find("adopted the existing target table"), std::string::npos) << run.out << run.err;
    EXPECT_NE((run.out + run.err).find("comparing row by row"), std::string::npos) << run.out << run.err;

    const std::string select = "SELECT aid, bid, abalance, filler FROM public.pgbench_accounts";
    expectSameRows(src, dst, select, "aid");
    EXPECT_EQ(rowsOfXmin(dst, "pgbench_accounts", restored), 100000 - 100 - 5)
        << "only the rows that differ are written\n"
        << run.out << run.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM pgbench_accounts WHERE _driftless_version > 0"), "105");

    // It streams: a change on the source arrives with the next pass.
    src.exec("UPDATE pgbench_accounts SET abalance = -1 WHERE aid BETWEEN 10 AND 19");
    src.exec("DELETE FROM pgbench_accounts WHERE aid = 20");
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    expectSameRows(src, dst, select, "aid");
    auto status = runCli({"--state", state, "status", "--json"});
    const auto table = nlohmann::json::parse(status.out)["tables"].at(0);
    EXPECT_EQ(table["checkpoint"]["phase"], "stream") << status.out;
    EXPECT_EQ(table["state"], "ok") << status.out;
    EXPECT_EQ(table["rebackfill"], false) << status.out;

    // Then both ways: the forward direction's next start gives the reverse direction its slot
    // on the copy, and changes made on either side from then on reach the other.
    writeFile(dir.file("ws.yaml"),
              workspace(app, pgDsn(dst.name()), pipeline, "public.pgbench_accounts", "    direction: both\n", false));
    ASSERT_EQ(runCli({"--state", state, "apply", dir.file("ws.yaml")}).exitCode, 0);
    const std::string runLog = dir.file("run.log");
    const int engine = spawnCli({"--state", state, "run"}, {}, runLog);
    ASSERT_TRUE(within2Minutes([&] {
        return readFile(runLog).find("created replication slot driftless_" + pipeline + "_rev") != std::string::npos;
    })) << readFile(runLog);
    dst.exec("UPDATE pgbench_accounts SET abalance = 4242 WHERE aid = 77");
    src.exec("UPDATE pgbench_accounts SET abalance = 4343 WHERE aid = 78");
    const std::string both = "SELECT string_agg(abalance::text, ',' ORDER BY aid) FROM pgbench_accounts WHERE aid IN "
                             "(77, 78)";
    const bool met = within2Minutes([&] { return src.scalar(both) == "4242,4343" && dst.scalar(both) == "4242,4343"; });
    ::kill(engine, SIGTERM);
    EXPECT_EQ(waitPid(engine, 60), 0) << readFile(runLog);
    EXPECT_TRUE(met) << src.scalar(both) << " / " << dst.scalar(both) << "\n" << readFile(runLog);
    expectSameRows(src, dst, select, "aid");
}

// A MariaDB source and a Postgres copy made by hand, with other rows differing: the load compares
// chunk by chunk and copies only what differs (the other rows keep their xmin).
TEST(Adopt, aHandMadeCopyOfAMariaDbTableIsAdoptedByAComparingLoad)
{
    MyTestDb src("adm");
    PgTestDb dst("admdst");
    TempDir dir;
    src.exec("CREATE TABLE items (id int NOT NULL PRIMARY KEY, name varchar(40) NOT NULL, qty int, price "
             "decimal(10, 2))");
    src.exec("INSERT INTO items SELECT seq, CONCAT('item ', seq), IF(seq % 10 = 0, NULL, seq % 7), seq / 4 FROM "
             "seq_1_to_20000");
    dst.exec("CREATE TABLE public.items (id int PRIMARY KEY, name varchar(40) NOT NULL, qty int, price numeric(10, "
             "2))");
    dst.exec("INSERT INTO public.items SELECT g, 'item ' || g, CASE WHEN g % 10 = 0 THEN NULL ELSE g % 7 END, "
             "round(g / 4.0, 2) FROM generate_series(1, 20000) g");
    const std::string copied = dst.scalar("SELECT xmin::text FROM items WHERE id = 1");
    dst.exec("UPDATE items SET qty = 99 WHERE id % 1000 = 0");
    dst.exec("DELETE FROM items WHERE id IN (42, 4242)");
    dst.exec("INSERT INTO items VALUES (30001, 'only here', 1, 1)");
    const std::string state = dir.file("workspace.db");
    const std::string pipeline = uniqueName("admy");
    writeFile(dir.file("ws.yaml"), workspace("  app: { kind: mysql, dsn: \"" + myDsn(src.name()) + "\" }\n",
                                             pgDsn(dst.name()), pipeline, src.name() + ".items"));
    auto applied = runCli({"--state", state, "apply", dir.file("ws.yaml")});
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto run = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
    EXPECT_NE((run.out + run.err).find("initial load done by comparing"), std::string::npos) << run.out << run.err;
    EXPECT_EQ(rowsOfXmin(dst, "items", copied), 20000 - 20 - 2) << "only the rows that differ are written";
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items"), "20000");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE id % 1000 = 0 AND qty = 99"), "0");
    src.exec("UPDATE items SET qty = 5 WHERE id < 10");
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE id < 10 AND qty = 5"), "9");
}

// A table that is not the source's is refused, saying every difference, and nothing is written.
TEST(Adopt, aTableWhoseColumnsAreNotTheSourcesIsRefusedWithEachDifference)
{
    PgTestDb src("adrsrc");
    PgTestDb dst("adrdst");
    TempDir dir;
    src.exec("CREATE TABLE t (id int PRIMARY KEY, a text, b int)");
    src.exec("INSERT INTO t SELECT g, 'x', g FROM generate_series(1, 100) g");
    dst.exec("CREATE TABLE t (id int, a text, c date)");
    dst.exec("INSERT INTO t VALUES (1, 'mine', NULL)");
    const std::string state = dir.file("workspace.db");
    const std::string pipeline = uniqueName("adr");
    writeFile(dir.file("ws.yaml"), workspace("  app: { kind: postgres, dsn: \"" + pgDsn(src.name()) + "\" }\n",
                                             pgDsn(dst.name()), pipeline, "public.t"));
    ASSERT_EQ(runCli({"--state", state, "apply", dir.file("ws.yaml")}).exitCode, 0);
    auto run = runCli({"--state", state, "run", "--once"});
    const std::string all = run.out + run.err;
    EXPECT_NE(run.exitCode, 0) << all;
    EXPECT_NE(all.find("cannot be adopted"), std::string::npos) << all;
    EXPECT_NE(all.find("no column b (the source's integer)"), std::string::npos) << all;
    EXPECT_NE(all.find("column c is not the source's"), std::string::npos) << all;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM t"), "1");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM information_schema.columns WHERE table_name = 't' AND column_name = "
                         "'_driftless_version'"),
              "0");

    // The columns made the source's, only the key is missing: the statement that adds it is named.
    dst.exec("ALTER TABLE t DROP COLUMN c, ADD COLUMN b int");
    auto again = runCli({"--state", state, "run", "--once"});
    EXPECT_NE(again.exitCode, 0);
    EXPECT_NE((again.out + again.err).find("ADD PRIMARY KEY (\"id\");"), std::string::npos) << again.out << again.err;
    dst.exec("ALTER TABLE t ADD PRIMARY KEY (id)");
    auto adopted = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(adopted.exitCode, 0) << adopted.out << adopted.err;
    expectSameRows(src, dst, "SELECT id, a, b FROM t", "id");
}

// A cursor table: the first pass reads every row, and the merge writes only the rows that differ.
TEST(Adopt, aCursorTableIsAdoptedWritingOnlyTheRowsThatDiffer)
{
    PgTestDb src("adcsrc");
    PgTestDb dst("adcdst");
    TempDir dir;
    const char *table = "CREATE TABLE public.c (id int PRIMARY KEY, v text, updated_at timestamptz NOT NULL)";
    const char *rows = "INSERT INTO public.c SELECT g, 'v' || g, timestamptz '2024-01-01 00:00:00+00' + g * interval "
                       "'1 s' FROM generate_series(1, 5000) g";
    src.exec(table);
    src.exec(rows);
    dst.exec(table);
    dst.exec(rows);
    dst.exec("UPDATE c SET v = 'changed' WHERE id % 500 = 0");
    const std::string copied = dst.scalar("SELECT xmin::text FROM c WHERE id = 1");
    const std::string state = dir.file("workspace.db");
    writeFile(dir.file("ws.yaml"), "endpoints:\n  app: { kind: postgres, dsn: \"" + pgDsn(src.name()) +
                                       "\" }\n  dw: { kind: postgres, dsn: \"" + pgDsn(dst.name()) +
                                       "\" }\npipelines:\n  - name: " + uniqueName("adc") +
                                       "\n    source: app\n    target: dw\n    adopt: true\n    tables:\n"
                                       "      - { table: public.c, strategy: cursor }\n");
    ASSERT_EQ(runCli({"--state", state, "apply", dir.file("ws.yaml")}).exitCode, 0);
    auto run = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
    EXPECT_EQ(rowsOfXmin(dst, "c", copied), 5000 - 10) << run.out << run.err;
    expectSameRows(src, dst, "SELECT id, v, updated_at FROM c", "id");
}

// The same table of a Postgres source copied by hand into MariaDB and into SQLite, each copy
// differing in a few rows: both adopted (the version column added there), only the differing rows
// written (the others keep version 0), and the copies then equal the source and stream.
TEST(Adopt, copiesInMariaDbAndSqliteAreAdoptedWritingOnlyTheRowsThatDiffer)
{
    PgTestDb src("adxsrc");
    MyTestDb my("adxmy");
    TempDir dir;
    const std::string lite = dir.file("copy.db");
    src.exec("CREATE TABLE public.items (id int PRIMARY KEY, name text NOT NULL, qty int)");
    src.exec("INSERT INTO public.items SELECT g, 'item ' || g, g % 7 FROM generate_series(1, 3000) g");
    my.exec("CREATE TABLE items (id int NOT NULL PRIMARY KEY, name longtext NOT NULL, qty int)");
    my.exec("INSERT INTO items SELECT seq, CONCAT('item ', seq), seq % 7 FROM seq_1_to_3000");
    my.exec("UPDATE items SET qty = 99 WHERE id % 300 = 0"); // 10 rows
    my.exec("DELETE FROM items WHERE id IN (7, 8)");
    my.exec("INSERT INTO items VALUES (5001, 'only here', 1)");
    {
        driftless::core::SqliteDb db(lite);
        db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER)");
        db.exec("WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 3000) INSERT INTO items "
                "SELECT n, 'item ' || n, n % 7 FROM g");
        db.exec("UPDATE items SET name = 'renamed' WHERE id IN (10, 20, 30)");
        db.exec("DELETE FROM items WHERE id = 40");
    }
    const std::string state = dir.file("workspace.db");
    writeFile(dir.file("ws.yaml"), "endpoints:\n  app: { kind: postgres, dsn: \"" + pgDsn(src.name()) +
                                       "\" }\n  my: { kind: mysql, dsn: \"" + myDsn(my.name()) +
                                       "\" }\n  lite: { kind: sqlite, path: \"" + lite +
                                       "\" }\npipelines:\n"
                                       "  - { name: " +
                                       uniqueName("adxm") +
                                       ", source: app, target: my, adopt: true, tables: [{ table: public.items, "
                                       "strategy: cdc }] }\n"
                                       "  - { name: " +
                                       uniqueName("adxs") +
                                       ", source: app, target: lite, adopt: true, tables: [{ table: public.items, "
                                       "strategy: cdc }] }\n");
    auto applied = runCli({"--state", state, "apply", dir.file("ws.yaml")});
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto run = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
    const std::string sum = "SELECT COUNT(*), SUM(qty), SUM(LENGTH(name)), SUM(id) FROM items";
    const std::string expected = src.scalar("SELECT count(*) || '|' || sum(qty) || '|' || sum(length(name)) || '|' || "
                                            "sum(id) FROM items");
    auto mine = my.connect().query(sum);
    EXPECT_EQ(*mine.at(0, 0) + "|" + *mine.at(0, 1) + "|" + *mine.at(0, 2) + "|" + *mine.at(0, 3), expected);
    EXPECT_EQ(my.scalar("SELECT COUNT(*) FROM items WHERE _driftless_version > 0"), "12") << run.out << run.err;
    driftless::core::SqliteDb db(lite);
    EXPECT_EQ(std::to_string(db.scalarInt("SELECT count(*) FROM items")) + "|" +
                  std::to_string(db.scalarInt("SELECT sum(qty) FROM items")) + "|" +
                  std::to_string(db.scalarInt("SELECT sum(length(name)) FROM items")) + "|" +
                  std::to_string(db.scalarInt("SELECT sum(id) FROM items")),
              expected);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM items WHERE _driftless_version > 0"), 4) << run.out << run.err;
    src.exec("UPDATE items SET qty = -1 WHERE id <= 5");
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    EXPECT_EQ(my.scalar("SELECT COUNT(*) FROM items WHERE qty = -1"), "5");
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM items WHERE qty = -1"), 5);
}

// Two MariaDB databases holding the same table, each changed since: a two-way pipeline refuses
// the copy with the way to keep it; adopted one way, the load compares and copies only the rows
// that differ (the source's win); made two-way, changes flow both ways.
TEST(Adopt, twoMariaDbDatabasesAreAdoptedOneWayThenSyncBothWays)
{
    MyTestDb a("adta");
    MyTestDb b("adtb");
    TempDir dir;
    for (auto *db : {&a, &b}) {
        db->exec("CREATE TABLE items (id int NOT NULL PRIMARY KEY, v varchar(20) NOT NULL, n int)");
        db->exec("INSERT INTO items SELECT seq, CONCAT('v', seq), seq FROM seq_1_to_3000");
    }
    a.exec("UPDATE items SET n = -1 WHERE id <= 10");
    b.exec("UPDATE items SET n = -2 WHERE id BETWEEN 6 AND 20");
    b.exec("DELETE FROM items WHERE id IN (100, 101)");
    b.exec("INSERT INTO items VALUES (9001, 'only here', 1)");
    const std::string state = dir.file("workspace.db");
    const std::string pipeline = uniqueName("adtw");
    auto write = [&](const std::string &route) {
        writeFile(dir.file("ws.yaml"),
                  "endpoints:\n  a: { kind: mysql, dsn: \"" + a.dsn() + "\" }\n  b: { kind: mysql, dsn: \"" + b.dsn() +
                      "\" }\npipelines:\n  - name: " + pipeline + "\n    source: a\n    target: b\n" + route +
                      "    tables:\n      - { table: " + a.name() + ".items, strategy: cdc }\n");
        return runCli({"--state", state, "apply", "--no-check", dir.file("ws.yaml")}).exitCode;
    };
    const std::string hash = "SELECT CONCAT(COUNT(*), ':', SUM(CRC32(CONCAT_WS('|', id, v, n)))) FROM items";

    ASSERT_EQ(write("    direction: both\n"), 0);
    expectTwoWayRefusal(state, pipeline, dir.file("refused.log"));

    ASSERT_EQ(write("    adopt: true\n"), 0);
    auto run = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
    EXPECT_NE((run.out + run.err).find("copies only the rows that differ"), std::string::npos) << run.out << run.err;
    EXPECT_EQ(b.scalar(hash), a.scalar(hash)) << run.out << run.err;
    // Rows 1-20 (changed on either side) and 100-101 written; 9001 removed; the rest untouched.
    EXPECT_EQ(b.scalar("SELECT COUNT(*) FROM items WHERE _driftless_version > 0"), "22") << run.out << run.err;

    ASSERT_EQ(write("    direction: both\n"), 0);
    const std::string runLog = dir.file("run.log");
    const int engine = spawnCli({"--state", state, "run"}, {}, runLog);
    ASSERT_TRUE(within2Minutes([&] {
        return readFile(runLog).find("the reverse direction " + pipeline + "_rev reads") != std::string::npos;
    })) << readFile(runLog);
    b.exec("UPDATE items SET n = 777 WHERE id = 200");
    a.exec("UPDATE items SET n = 888 WHERE id = 201");
    const std::string both = "SELECT GROUP_CONCAT(n ORDER BY id) FROM items WHERE id IN (200, 201)";
    const bool met = within2Minutes([&] { return a.scalar(both) == "777,888" && b.scalar(both) == "777,888"; });
    ::kill(engine, SIGTERM);
    EXPECT_EQ(waitPid(engine, 60), 0) << readFile(runLog);
    EXPECT_TRUE(met) << a.scalar(both) << " / " << b.scalar(both) << "\n" << readFile(runLog);
    EXPECT_EQ(b.scalar(hash), a.scalar(hash));
}
