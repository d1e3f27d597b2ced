// `schema_changes: add_column` from a MariaDB source (docs/schema-changes.md): a column the binlog
// starts carrying is backfilled, propagated, ignored or pauses the table, into Postgres, SQLite
// and MariaDB targets; a column gone and one come at once (how a rename looks) pauses.

#include "core/db/sqlitedb.h"
#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/model/error.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

/// How often this file's conditions are asked again.
constexpr std::chrono::milliseconds kPoll{200};

constexpr int kRows = 12000; // more than two backfill chunks (5,000 rows each)

size_t countEvents(RecordingObserver &obs, const std::string &needle)
{
    size_t n = 0;
    for (const auto &e : obs.events)
        n += e.find(needle) != std::string::npos ? 1 : 0;
    return n;
}

std::string dump(RecordingObserver &obs)
{
    std::string out;
    for (const auto &e : obs.events)
        out += e + "\n";
    return out;
}

TableSpec cdcSpec(const std::string &db, const std::string &table)
{
    TableSpec t;
    t.table = {db, table};
    t.strategy = Strategy::Cdc;
    t.pageSize = 1000;
    return t;
}

void once(const std::vector<TableJob> &jobs, RecordingObserver &obs)
{
    MysqlCdcPipeline p(jobs, obs);
    p.run({}, {true, nullptr});
}

/// count:md5 over "(id,d)" in id order, computed in SQL on MariaDB.
std::string myHash(MyTestDb &db, const std::string &table)
{
    auto c = db.connect();
    c.exec("SET SESSION group_concat_max_len = 4294967295");
    auto r = c.query("SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(CONCAT(id, ',', COALESCE(d, 'NULL')) ORDER BY id "
                     "SEPARATOR ';'))) FROM " +
                     table);
    return r.rows.at(0).at(0).value_or("NULL");
}

/// The same in SQL on Postgres.
std::string pgHash(PgTestDb &db, const std::string &table)
{
    return db.scalar("SELECT count(*) || ':' || md5(string_agg(id || ',' || coalesce(d::text, 'NULL'), ';' ORDER BY "
                     "id)) FROM " +
                     table);
}

/// The same in SQL on SQLite (no md5 there: the text itself, hashed by MariaDB for comparison).
std::string sqliteText(const std::string &path, const std::string &table)
{
    SqliteDb db(path, SqliteDb::Mode::ReadOnly);
    auto st = db.prepare("SELECT count(*), group_concat(t, ';') FROM (SELECT id || ',' || coalesce(d, 'NULL') AS t "
                         "FROM " +
                         table + " ORDER BY id)");
    return st.step() ? st.text(0) + ":" + st.text(1) : "<no row>";
}

std::string myText(MyTestDb &db, const std::string &table)
{
    auto c = db.connect();
    c.exec("SET SESSION group_concat_max_len = 4294967295");
    auto r = c.query("SELECT CONCAT(COUNT(*), ':', GROUP_CONCAT(CONCAT(id, ',', COALESCE(d, 'NULL')) ORDER BY id "
                     "SEPARATOR ';')) FROM " +
                     table);
    return r.rows.at(0).at(0).value_or("NULL");
}

struct Fixture {
    MyTestDb src{"myschema"};
    PgTestDb pg{"myschemapg"};
    MyTestDb my{"myschemamy"};
    TempDir dir;
    RecordingObserver obs;

    explicit Fixture(int rows = kRows)
    {
        src.exec("CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)");
        src.exec("INSERT INTO t SELECT seq, seq FROM seq_1_to_" + std::to_string(rows));
    }
    std::vector<TableJob> toPg(const TableSpec &s)
    {
        return {makeJob("mpg", s, myEndpoint("src", src.name()), pgEndpoint("dst", pg.name()), "public")};
    }
    std::vector<TableJob> toLite(const TableSpec &s)
    {
        return {makeJob("mlite", s, myEndpoint("src", src.name()), sqliteEndpoint("dst", dir.file("t.db")))};
    }
    std::vector<TableJob> toMy(const TableSpec &s)
    {
        return {makeJob("mmy", s, myEndpoint("src", src.name()), myEndpoint("dst", my.name()))};
    }
};

} // namespace

TEST(MysqlSchemaChanges, anAddedColumnIsBackfilledIntoEveryTargetAndKeepsWhatTheStreamWrote)
{
    Fixture f;
    const TableSpec s = cdcSpec(f.src.name(), "t");
    auto pg = f.toPg(s), lite = f.toLite(s), my = f.toMy(s);
    once(pg, f.obs);
    once(lite, f.obs);
    once(my, f.obs);
    f.obs.clearEvents();
    // A bounded writer right after the DDL: 20 rows get a `d` of their own before any engine
    // reads the binlog; the backfill must not overwrite them.
    auto c = f.src.connect();
    c.exec("ALTER TABLE t ADD COLUMN d int DEFAULT 7");
    for (int i = 1; i <= 20; ++i)
        c.exec("UPDATE t SET d = " + std::to_string(1000 + i) + " WHERE id = " + std::to_string(i * 10));
    c.exec("INSERT INTO t (id, v) VALUES (" + std::to_string(kRows + 1) + ", 0)");
    once(pg, f.obs);
    once(lite, f.obs);
    once(my, f.obs);

    const std::string want = myHash(f.src, "t");
    EXPECT_EQ(pgHash(f.pg, "public.t"), want);
    EXPECT_EQ(sqliteText(f.dir.file("t.db"), "t"), myText(f.src, "t"));
    // The stream's values (d = 1000 + i) were kept: the backfill wrote only the other rows'.
    EXPECT_EQ(f.pg.scalar("SELECT count(*) FROM public.t WHERE d > 1000"), "20");
    const std::string filled = std::to_string(kRows - 20); // the rows older than the DDL's version
    auto withCommas = [](std::string n) {
        for (int i = static_cast<int>(n.size()) - 3; i > 0; i -= 3)
            n.insert(static_cast<size_t>(i), ",");
        return n;
    };
    // The event's figures (count of rows written by the backfill), per target: only d, only the
    // rows the stream had not written since.
    EXPECT_EQ(countEvents(f.obs, "schema_change: column d added, " + withCommas(std::to_string(kRows + 1)) +
                                     " rows backfilled"),
              3u)
        << dump(f.obs);
    // Checked in SQL on Postgres and MariaDB targets; SQLite has no md5 in SQL.
    EXPECT_EQ(countEvents(f.obs, withCommas(filled) +
                                     " written; rows the stream changed since keep its values); "
                                     "checked: key and d match the source (" +
                                     withCommas(std::to_string(kRows + 1)) + " rows)"),
              2u)
        << dump(f.obs);
    EXPECT_EQ(countEvents(f.obs, withCommas(filled) + " written; rows the stream changed since keep its values); the "
                                                      "column's type"),
              0u);
    EXPECT_EQ(countEvents(f.obs, withCommas(filled) + " written; rows the stream changed since keep its values); this "
                                                      "target cannot compare the column in SQL"),
              1u)
        << dump(f.obs);
    // The MariaDB target is filled the same way: what the stream wrote kept, every other row 7.
    EXPECT_EQ(countEvents(f.obs, "filling the existing rows is not available for"), 0u) << dump(f.obs);
    EXPECT_EQ(myHash(f.my, "t"), want);
    EXPECT_EQ(f.my.scalar("SELECT COUNT(*) FROM t WHERE d > 1000"), "20");
    EXPECT_EQ(f.my.scalar("SELECT COUNT(*) FROM t WHERE d IS NULL"), "0");
}

TEST(MysqlSchemaChanges, propagateIgnoreAndPauseDoWhatTheySay)
{
    Fixture f(50);
    TableSpec s = cdcSpec(f.src.name(), "t");
    s.addColumn = "propagate";
    auto prop = f.toPg(s);
    TableSpec ign = s;
    ign.addColumn = "ignore";
    auto ignore = f.toLite(ign);
    once(prop, f.obs);
    once(ignore, f.obs);
    auto c = f.src.connect();
    c.exec("ALTER TABLE t ADD COLUMN d int DEFAULT 7");
    c.exec("UPDATE t SET d = 99, v = -1 WHERE id = 5");
    once(prop, f.obs);
    once(ignore, f.obs);
    EXPECT_EQ(f.pg.scalar("SELECT count(*) || ':' || count(d) || ':' || sum(d) FROM public.t"), "50:1:99");
    EXPECT_EQ(countEvents(f.obs, "added to the target and applied (existing rows keep NULL: schema_changes: "
                                 "add_column: propagate)"),
              1u)
        << dump(f.obs);
    {
        SqliteDb db(f.dir.file("t.db"), SqliteDb::Mode::ReadOnly);
        auto st = db.prepare("SELECT count(*) FROM pragma_table_info('t') WHERE name = 'd'");
        ASSERT_TRUE(st.step());
        EXPECT_EQ(st.text(0), "0");
        auto v = db.prepare("SELECT v FROM t WHERE id = 5");
        ASSERT_TRUE(v.step());
        EXPECT_EQ(v.text(0), "-1"); // the other columns sync on
    }
    EXPECT_EQ(countEvents(f.obs, "not added to the target (schema_changes: add_column: ignore)"), 1u) << dump(f.obs);

    // pause: the table stops taking changes, the message says what to do.
    Fixture g(10);
    TableSpec p = cdcSpec(g.src.name(), "t");
    p.addColumn = "pause";
    auto paused = g.toPg(p);
    once(paused, g.obs);
    auto gc = g.src.connect();
    gc.exec("ALTER TABLE t ADD COLUMN d int DEFAULT 7");
    gc.exec("UPDATE t SET v = -1 WHERE id = 1");
    try {
        once(paused, g.obs);
    } catch (const Error &) {
        // every table paused: the run says so
    }
    EXPECT_EQ(countEvents(g.obs, "source added column(s) d (schema_changes: add_column: pause); the table is paused"),
              1u)
        << dump(g.obs);
    EXPECT_EQ(g.pg.scalar("SELECT v FROM public.t WHERE id = 1"), "1");
}

TEST(MysqlSchemaChanges, aColumnGoneAndOneComeAtOnceIsTakenAsAPossibleRenameAndPauses)
{
    Fixture f(10);
    auto pg = f.toPg(cdcSpec(f.src.name(), "t"));
    once(pg, f.obs);
    auto c = f.src.connect();
    c.exec("ALTER TABLE t RENAME COLUMN v TO w");
    c.exec("UPDATE t SET w = -1 WHERE id = 1");
    try {
        once(pg, f.obs);
    } catch (const Error &) {
    }
    EXPECT_EQ(countEvents(f.obs, "column(s) v are gone from the source and w appeared at once; MariaDB's binlog does "
                                 "not say whether that is a rename"),
              1u)
        << dump(f.obs);
    EXPECT_EQ(f.pg.scalar("SELECT v FROM public.t WHERE id = 1"), "1");
}

namespace {

/// count:md5 over "id|a|b" per row (`~` for NULL), in id order, on MariaDB ...
std::string myCommon(MyTestDb &db, const std::string &table,
                     const std::string &cols = "id, '|', a, '|', COALESCE(b, '~')")
{
    auto c = db.connect();
    c.exec("SET SESSION group_concat_max_len = 4294967295");
    return c
        .scalar("SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(CONCAT(" + cols +
                ") ORDER BY id SEPARATOR ',')))"
                " FROM " +
                table)
        .value_or("NULL");
}

/// ... on Postgres ...
std::string pgCommon(PgTestDb &db, const std::string &table,
                     const std::string &cols = "id || '|' || a || '|' || coalesce(b::text, '~')")
{
    return db.scalar("SELECT count(*) || ':' || md5(string_agg(" + cols + ", ',' ORDER BY id)) FROM " + table);
}

/// ... and the text itself on SQLite, with MariaDB's text to compare it with.
std::string liteCommon(const std::string &path, const std::string &table,
                       const std::string &cols = "id || '|' || a || '|' || coalesce(b, '~')")
{
    SqliteDb db(path, SqliteDb::Mode::ReadOnly);
    auto st = db.prepare("SELECT count(*) || ':' || group_concat(r, ',') FROM (SELECT " + cols + " AS r FROM " + table +
                         " ORDER BY id)");
    return st.step() ? st.text(0) : "<no row>";
}

std::string myColsText(MyTestDb &db, const std::string &table,
                       const std::string &cols = "id, '|', a, '|', COALESCE(b, '~')")
{
    auto c = db.connect();
    c.exec("SET SESSION group_concat_max_len = 4294967295");
    return c
        .scalar("SELECT CONCAT(COUNT(*), ':', GROUP_CONCAT(CONCAT(" + cols + ") ORDER BY id SEPARATOR ',')) FROM " +
                table)
        .value_or("NULL");
}

void onceMayPause(const std::vector<TableJob> &jobs, RecordingObserver &obs)
{
    try {
        once(jobs, obs);
    } catch (const Error &) {
        // every table paused: the run says so
    }
}

} // namespace

// The engine stopped across the DROP COLUMN (each pass a run --once), with changes made before
// it still in the binlog: kept on Postgres and MariaDB targets (nullable, marked, new rows NULL),
// dropped on SQLite, or the table paused; the old changes apply to the other columns.
TEST(MysqlSchemaChanges, aDroppedColumnIsKeptOrDroppedInEveryTargetOrPauses)
{
    Fixture f(10);
    f.src.exec("CREATE TABLE d (id int PRIMARY KEY, a varchar(20) NOT NULL, c varchar(20) NOT NULL, b int)");
    f.src.exec("INSERT INTO d SELECT seq, CONCAT('row ', seq), CONCAT('c', seq), seq % 13 FROM seq_1_to_300");
    const TableSpec keep = cdcSpec(f.src.name(), "d");
    TableSpec drop = keep;
    drop.dropColumn = "drop";
    auto pg = f.toPg(keep), lite = f.toLite(drop), my = f.toMy(keep);
    once(pg, f.obs);
    once(lite, f.obs);
    once(my, f.obs);
    ASSERT_EQ(f.my.scalar("SELECT IS_NULLABLE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
                          "TABLE_NAME = 'd' AND COLUMN_NAME = 'c'"),
              "NO");
    f.obs.clearEvents();

    f.src.exec("UPDATE d SET a = 'before drop', c = 'new c' WHERE id <= 10");
    f.src.exec("ALTER TABLE d DROP COLUMN c");
    f.src.exec("UPDATE d SET b = -1 WHERE id BETWEEN 5 AND 20");
    f.src.exec("INSERT INTO d (id, a, b) SELECT seq, 'after', 1 FROM seq_301_to_330");
    once(pg, f.obs);
    once(lite, f.obs);
    once(my, f.obs);

    const std::string want = myCommon(f.src, "d");
    EXPECT_EQ(pgCommon(f.pg, "public.d"), want);
    EXPECT_EQ(myCommon(f.my, "d"), want);
    EXPECT_EQ(liteCommon(f.dir.file("t.db"), "d"), myColsText(f.src, "d"));
    // keep: old rows hold their value, new rows NULL; changes made before the drop, read after
    // it, do not write the kept column (docs/schema-changes.md).
    EXPECT_EQ(f.pg.scalar("SELECT count(*) FROM public.d WHERE c IS NULL"), "30");
    EXPECT_EQ(f.pg.scalar("SELECT c FROM public.d WHERE id = 8"), "c8");
    EXPECT_EQ(f.pg.scalar("SELECT col_description('public.d'::regclass, attnum) FROM pg_attribute WHERE attrelid = "
                          "'public.d'::regclass AND attname = 'c'"),
              "dropped on the source; kept by Driftless, no longer written");
    EXPECT_EQ(f.my.scalar("SELECT COUNT(*) FROM d WHERE c IS NULL"), "30");
    EXPECT_EQ(f.my.scalar("SELECT c FROM d WHERE id = 8"), "c8");
    EXPECT_EQ(f.my.scalar("SELECT CONCAT(IS_NULLABLE, ' ', COLUMN_COMMENT) FROM information_schema.COLUMNS WHERE "
                          "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'd' AND COLUMN_NAME = 'c'"),
              "YES dropped on the source; kept by Driftless, no longer written");
    {
        SqliteDb db(f.dir.file("t.db"), SqliteDb::Mode::ReadOnly);
        auto st = db.prepare("SELECT count(*) FROM pragma_table_info('d') WHERE name = 'c'");
        ASSERT_TRUE(st.step());
        EXPECT_EQ(st.text(0), "0");
    }
    EXPECT_EQ(countEvents(f.obs, "column c dropped on the source; kept on the target, no longer written "
                                 "(schema_changes: drop_column: keep)"),
              2u)
        << dump(f.obs);
    EXPECT_EQ(countEvents(f.obs, "column c dropped on the source; dropped on the target (schema_changes: drop_column: "
                                 "drop)"),
              1u)
        << dump(f.obs);

    // The next pass: nothing dropped or kept again, the stream goes on.
    f.obs.clearEvents();
    f.src.exec("UPDATE d SET a = 'later' WHERE id = 40");
    once(pg, f.obs);
    once(lite, f.obs);
    once(my, f.obs);
    EXPECT_EQ(pgCommon(f.pg, "public.d"), myCommon(f.src, "d"));
    EXPECT_EQ(myCommon(f.my, "d"), myCommon(f.src, "d"));
    EXPECT_EQ(countEvents(f.obs, "dropped on the source"), 0u) << dump(f.obs);

    // pause: nothing applied, and the message says what to do.
    Fixture g(10);
    g.src.exec("ALTER TABLE t ADD COLUMN c int");
    TableSpec p = cdcSpec(g.src.name(), "t");
    p.dropColumn = "pause";
    auto paused = g.toPg(p);
    once(paused, g.obs);
    g.src.exec("ALTER TABLE t DROP COLUMN c");
    g.src.exec("UPDATE t SET v = -1 WHERE id = 1");
    onceMayPause(paused, g.obs);
    EXPECT_EQ(countEvents(g.obs, "column(s) c dropped on the source while the engine was stopped (schema_changes: "
                                 "drop_column: pause); the table is paused"),
              1u)
        << dump(g.obs);
    EXPECT_EQ(countEvents(g.obs, "set schema_changes: { drop_column: keep } on the table"), 1u) << dump(g.obs);
    EXPECT_EQ(g.pg.scalar("SELECT v FROM public.t WHERE id = 1"), "1");
}

// INT -> BIGINT, VARCHAR(10) -> VARCHAR(50) and DECIMAL(6,2) -> DECIMAL(12,2), with a change made
// before them still in the binlog: widened on Postgres (noticed at start) and MariaDB (noticed in
// the binlog's table maps), nothing to do on SQLite; values only the wider types hold arrive. A
// VARCHAR made INT is no widening: the table pauses with what to run.
TEST(MysqlSchemaChanges, aWideningIsAppliedInEveryTargetAndAnyOtherRetypePauses)
{
    Fixture f(10);
    f.src.exec("CREATE TABLE w (id int PRIMARY KEY, b int, v varchar(10), n decimal(6,2))");
    f.src.exec("INSERT INTO w SELECT seq, seq, CONCAT('v', seq), seq + 0.25 FROM seq_1_to_100");
    const TableSpec s = cdcSpec(f.src.name(), "w");
    auto pg = f.toPg(s), lite = f.toLite(s), my = f.toMy(s);
    once(pg, f.obs);
    once(lite, f.obs);
    once(my, f.obs);
    f.obs.clearEvents();

    f.src.exec("UPDATE w SET b = -5 WHERE id = 1"); // written with the old table map
    f.src.exec("ALTER TABLE w MODIFY b BIGINT");
    f.src.exec("ALTER TABLE w MODIFY v VARCHAR(50)");
    f.src.exec("ALTER TABLE w MODIFY n DECIMAL(12,2)");
    f.src.exec("UPDATE w SET b = 4000000000, v = REPEAT('x', 50), n = 1234567890.5 WHERE id = 3");
    f.src.exec("INSERT INTO w VALUES (101, 5000000000, 'a value longer than ten', 9999999999.99)");
    once(pg, f.obs);
    once(lite, f.obs);
    once(my, f.obs);

    const std::string myCols = "id, '|', COALESCE(b, '~'), '|', COALESCE(v, '~'), '|', COALESCE(n, '~')";
    const std::string want = myCommon(f.src, "w", myCols);
    EXPECT_EQ(pgCommon(f.pg, "public.w",
                       "id || '|' || coalesce(b::text, '~') || '|' || coalesce(v, '~') || '|' || "
                       "coalesce(n::text, '~')"),
              want);
    EXPECT_EQ(myCommon(f.my, "w", myCols), want);
    EXPECT_EQ(liteCommon(f.dir.file("t.db"), "w", "id || '|' || coalesce(b, '~') || '|' || coalesce(v, '~')"),
              myColsText(f.src, "w", "id, '|', COALESCE(b, '~'), '|', COALESCE(v, '~')"));
    EXPECT_EQ(f.pg.scalar("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                          "'public.w'::regclass AND attname = 'n'"),
              "numeric(12,2)");
    EXPECT_EQ(f.my.scalar("SELECT GROUP_CONCAT(COLUMN_TYPE ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS "
                          "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'w' AND COLUMN_NAME IN ('b', 'v', 'n')"),
              "bigint(20),varchar(50),decimal(12,2)");
    EXPECT_EQ(countEvents(f.obs, "column b widened from integer to bigint on the target"), 2u) << dump(f.obs);
    EXPECT_EQ(countEvents(f.obs, "column v widened from character varying(10) to character varying(50) on the target"),
              2u)
        << dump(f.obs);
    EXPECT_EQ(countEvents(f.obs, "column n widened from numeric(6,2) to numeric(12,2) on the target"), 2u)
        << dump(f.obs);
    EXPECT_EQ(countEvents(f.obs, "column b widened from integer to bigint at the source; the SQLite target needs no "
                                 "change"),
              1u)
        << dump(f.obs);

    // Not a widening: paused on both targets, nothing applied after it.
    f.obs.clearEvents();
    f.src.exec("UPDATE w SET b = 7, v = id"); // values an INT holds, written with the old table map
    f.src.exec("ALTER TABLE w MODIFY v INT");
    f.src.exec("UPDATE w SET b = 8, v = 5 WHERE id = 2");
    onceMayPause(pg, f.obs);
    onceMayPause(my, f.obs);
    EXPECT_EQ(countEvents(f.obs, "column v is character varying(50) on the target but integer on the source (retyped "
                                 "while the engine was stopped), which is not a widening the engine applies by itself; "
                                 "the table is paused"),
              1u)
        << dump(f.obs);
    EXPECT_EQ(countEvents(f.obs, "ALTER TABLE public.w ALTER COLUMN v TYPE integer USING v::integer"), 1u)
        << dump(f.obs);
    // The MariaDB target learns the old type from the binlog's table map, in its bytes.
    EXPECT_EQ(countEvents(f.obs, "column v changed type from VARCHAR(200 bytes) to integer on the source, which is not "
                                 "a widening the engine applies by itself; the table is paused"),
              1u)
        << dump(f.obs);
    EXPECT_NE(f.pg.scalar("SELECT b FROM public.w WHERE id = 2"), "8");
    EXPECT_NE(f.my.scalar("SELECT b FROM w WHERE id = 2"), "8");
}

// While the pipeline streams into a MariaDB target: a DROP COLUMN is seen in the next table map
// (kept on the target, new rows NULL there), then an INT -> BIGINT in the one after (widened,
// and a value only BIGINT holds arrives). Writers bounded; waits on conditions.
TEST(MysqlSchemaChanges, whileStreamingADropAndAWideningAreSeenInTheTableMaps)
{
    Fixture f(10);
    f.src.exec("CREATE TABLE d (id int PRIMARY KEY, a varchar(20) NOT NULL, c varchar(20) NOT NULL, b int)");
    f.src.exec("INSERT INTO d SELECT seq, CONCAT('row ', seq), CONCAT('c', seq), seq % 13 FROM seq_1_to_200");
    auto my = f.toMy(cdcSpec(f.src.name(), "d"));
    RecordingObserver obs;
    std::jthread runner([&](std::stop_token st) {
        MysqlCdcPipeline p(my, obs);
        try {
            p.run(st, {false, nullptr});
        } catch (const Cancelled &) {
        } catch (const std::exception &e) {
            ADD_FAILURE() << e.what();
        }
    });
    auto c = f.src.connect();
    c.exec("UPDATE d SET b = 100 WHERE id = 1"); // the stream sees the old table map
    ASSERT_TRUE(
        waitForIgnoringErrors([&] { return f.my.scalar("SELECT b FROM d WHERE id = 1") == "100"; }, 120, kPoll));

    c.exec("ALTER TABLE d DROP COLUMN c");
    for (int i = 201; i <= 210; ++i)
        c.exec("INSERT INTO d (id, a, b) VALUES (" + std::to_string(i) + ", 'after', 1)");
    c.exec("UPDATE d SET b = -1 WHERE id <= 5");
    EXPECT_TRUE(waitForIgnoringErrors([&] { return myCommon(f.my, "d") == myCommon(f.src, "d"); }, 120, kPoll));
    c.exec("ALTER TABLE d MODIFY b BIGINT");
    c.exec("UPDATE d SET b = 5000000000 WHERE id = 7");
    EXPECT_TRUE(
        waitForIgnoringErrors([&] { return f.my.scalar("SELECT b FROM d WHERE id = 7") == "5000000000"; }, 120, kPoll));
    runner.request_stop();
    runner.join();

    EXPECT_EQ(myCommon(f.my, "d"), myCommon(f.src, "d"));
    EXPECT_EQ(f.my.scalar("SELECT COUNT(*) FROM d WHERE c IS NULL"), "10");
    EXPECT_EQ(f.my.scalar("SELECT c FROM d WHERE id = 3"), "c3");
    EXPECT_EQ(countEvents(obs, "column c dropped on the source; kept on the target, no longer written (schema_changes: "
                               "drop_column: keep)"),
              1u)
        << dump(obs);
    EXPECT_EQ(countEvents(obs, "column b widened from integer to bigint on the target"), 1u) << dump(obs);
}

// Through a `columns:` mapping that renames the key and the other column: the added column is
// filled by key under the target's names, what the stream wrote is kept, and the check compares
// the column in SQL on both sides.
TEST(MysqlSchemaChanges, anAddedColumnIsBackfilledThroughAColumnMappingThatRenamesTheKey)
{
    constexpr int kMapped = 3000;
    Fixture f(kMapped);
    TableSpec s = cdcSpec(f.src.name(), "t");
    ColumnMapping m;
    m.rename = {{"id", "ident"}, {"v", "value"}};
    s.columns = m;
    auto pg = f.toPg(s), my = f.toMy(s);
    once(pg, f.obs);
    once(my, f.obs);
    f.obs.clearEvents();
    auto c = f.src.connect();
    c.exec("ALTER TABLE t ADD COLUMN d int DEFAULT 7");
    for (int i = 1; i <= 20; ++i)
        c.exec("UPDATE t SET d = " + std::to_string(1000 + i) + " WHERE id = " + std::to_string(i * 10));
    c.exec("INSERT INTO t (id, v) VALUES (" + std::to_string(kMapped + 1) + ", 0)");
    once(pg, f.obs);
    once(my, f.obs);

    const std::string want = myHash(f.src, "t");
    EXPECT_EQ(f.pg.scalar("SELECT count(*) || ':' || md5(string_agg(ident || ',' || coalesce(d::text, 'NULL'), ';' "
                          "ORDER BY ident)) FROM public.t"),
              want);
    auto mc = f.my.connect();
    mc.exec("SET SESSION group_concat_max_len = 4294967295");
    EXPECT_EQ(mc.query("SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(CONCAT(ident, ',', COALESCE(d, 'NULL')) ORDER BY "
                       "ident SEPARATOR ';'))) FROM t")
                  .rows.at(0)
                  .at(0)
                  .value_or("NULL"),
              want);
    EXPECT_EQ(f.pg.scalar("SELECT count(*) FROM public.t WHERE d > 1000"), "20");
    EXPECT_EQ(countEvents(f.obs, "filling the existing rows is not available for"), 0u) << dump(f.obs);
    EXPECT_EQ(countEvents(f.obs, "checked: key and d match the source (3,001 rows)"), 2u) << dump(f.obs);
}
