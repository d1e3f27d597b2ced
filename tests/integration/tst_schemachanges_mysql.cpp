// `schema_changes: add_column` from a MariaDB source (docs/schema-changes.md): a column the binlog
// starts carrying is backfilled, propagated, ignored or pauses the table, into Postgres, SQLite
// and MariaDB targets; a column gone and one come at once (how a rename looks) pauses.

#include "core/db/sqlitedb.h"
#include "core/engine/mysqlcdc.h"
#include "core/model/error.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

using namespace driftless::core;
using namespace driftless::test;

namespace {

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
    EXPECT_EQ(countEvents(f.obs, withCommas(filled) + " written; rows the stream changed since keep its values); "
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
