// Edge values (faults F16) and awkward identifiers, through both strategies, into Postgres
// (byte for byte) and SQLite (by the documented mapping, without losing precision).

#include "core/db/sqlitedb.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sqlite3.h>

using namespace driftless::core;
using namespace driftless::test;

namespace {

const char *kEdgeTable = R"sql(
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy ''quoted''');
CREATE DOMAIN positive_int AS integer CHECK (VALUE > 0);
CREATE TABLE edge (
    id integer PRIMARY KEY,
    updated_at timestamptz NOT NULL DEFAULT now(),
    n numeric,
    f8 double precision,
    f4 real,
    i2 smallint,
    i8 bigint,
    t text,
    c char(5),
    vc varchar(20),
    b bytea,
    tz timestamptz,
    ts timestamp,
    d date,
    tm time,
    tmtz timetz,
    iv interval,
    j json,
    jb jsonb,
    arr integer[],
    tarr text[],
    u uuid,
    e mood,
    earr mood[],
    bo boolean,
    ip inet,
    cid cidr,
    mac macaddr,
    bits bit varying(16),
    rng int4range,
    tsv tsvector,
    pt point,
    dom positive_int
);
)sql";

// One row per edge: NULL vs '' vs JSON null; NUL bytes in bytea; 4-byte UTF-8; numeric NaN,
// ±Infinity and 1000 digits; timestamp infinity; time zones; control characters in text.
const char *kEdgeRows = R"sql(
INSERT INTO edge (id) VALUES (1);
INSERT INTO edge (id, t, vc, c, j, jb, tarr) VALUES (2, '', '', '', 'null', 'null', '{}');
INSERT INTO edge (id, n, f8, f4) VALUES (3, 'NaN', 'NaN', 'NaN');
INSERT INTO edge (id, n, f8, f4) VALUES (4, 'Infinity', 'Infinity', '-Infinity');
INSERT INTO edge (id, n, f8) VALUES (5, '-Infinity', '-Infinity');
INSERT INTO edge (id, n) VALUES (6, repeat('9', 1000)::numeric);
INSERT INTO edge (id, n) VALUES (7, ('-0.' || repeat('0', 500) || '1')::numeric);
INSERT INTO edge (id, n, f8, f4, i2, i8) VALUES (8, 1.10, 1e308, 3.4e38, -32768, -9223372036854775808);
INSERT INTO edge (id, f8, i2, i8) VALUES (9, 5e-324, 32767, 9223372036854775807);
INSERT INTO edge (id, f8, n) VALUES (10, '-0', '0.000');
INSERT INTO edge (id, b) VALUES (11, '\x00ff00'::bytea);
INSERT INTO edge (id, b) VALUES (12, ''::bytea);
INSERT INTO edge (id, t) VALUES (13, E'emoji \U0001F600 and \u00e9 and CJK \u4e2d');
INSERT INTO edge (id, t) VALUES (14, E'tab\there\nnewline\\backslash\r\x01ctl "quote" ''apos''');
INSERT INTO edge (id, tz, ts, d) VALUES (15, 'infinity', 'infinity', 'infinity');
INSERT INTO edge (id, tz, ts, d) VALUES (16, '-infinity', '-infinity', '-infinity');
INSERT INTO edge (id, tz, ts, d, tm, tmtz) VALUES (17, '2024-03-10 02:30:00 America/New_York', '2024-03-10 02:30:00.123456', '2024-02-29', '23:59:59.999999', '12:00:00+05:30');
INSERT INTO edge (id, tz, ts, d) VALUES (18, '4713-01-01 00:00:00+00 BC', '0001-01-01 00:00:00 BC', '5874897-12-31');
INSERT INTO edge (id, iv) VALUES (19, '1 year 2 mons -3 days 04:05:06.789');
INSERT INTO edge (id, j, jb) VALUES (20, '{"b": 1,   "a": [1, 2.50, null], "s": "\u00e9"}', '{"b": 1, "a": [1, 2.50, null], "e": {}}');
INSERT INTO edge (id, arr, tarr) VALUES (21, '{1,NULL,3}', ARRAY['with space', 'quote"in', NULL, '', 'back\slash', 'NULL']);
INSERT INTO edge (id, u, e, earr, bo) VALUES (22, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'happy ''quoted''', '{sad,ok}', true);
INSERT INTO edge (id, bo, ip, cid, mac, bits) VALUES (23, false, '2001:db8::1/64', '10.0.0.0/8', '08:00:2b:01:02:03', B'1011');
INSERT INTO edge (id, rng, tsv, pt, dom) VALUES (24, '[1,10)', 'a fat cat:2', '(1.5,-2)', 42);
INSERT INTO edge (id, c, vc) VALUES (25, 'ab', 'trailing   ');
)sql";

const char *kCols =
    "id, n, f8, f4, i2, i8, t, c, vc, b, tz, ts, d, tm, tmtz, iv, j, jb, arr, tarr, u, e, earr, bo, ip, "
    "cid, mac, bits, rng, tsv, pt, dom";

TableSpec spec(Strategy s, const std::string &table, const std::string &cursor = "updated_at")
{
    TableSpec t;
    t.table = TableRef::parse(table);
    t.strategy = s;
    if (s == Strategy::Cursor)
        t.cursor = cursor;
    return t;
}

class Values : public ::testing::TestWithParam<Strategy> {};

} // namespace

TEST_P(Values, everyEdgeValueRoundTripsPgToPgByteForByte)
{
    PgTestDb src("val_src"), dst("val_dst");
    src.exec(kEdgeTable);
    src.exec(kEdgeRows);
    RecordingObserver obs;
    TableSync sync(
        makeJob("p", spec(GetParam(), "public.edge"), pgEndpoint("s", src.name()), pgEndpoint("d", dst.name()), "copy"),
        obs);
    sync.runOnce({});
    auto s = src.connect();
    auto d = dst.connect();
    // Compare value by value, as text, so a failure names the column.
    auto sr = s.exec(std::string("SELECT ") + kCols + " FROM public.edge ORDER BY id");
    auto dr = d.exec(std::string("SELECT ") + kCols + " FROM copy.edge ORDER BY id");
    ASSERT_EQ(dr.rows(), sr.rows());
    for (int r = 0; r < sr.rows(); ++r)
        for (int c = 0; c < sr.columns(); ++c) {
            EXPECT_EQ(dr.isNull(r, c), sr.isNull(r, c)) << "row " << sr.text(r, 0) << " column " << sr.columnName(c);
            EXPECT_EQ(dr.text(r, c), sr.text(r, c)) << "row " << sr.text(r, 0) << " column " << sr.columnName(c);
        }
    // And the types themselves came over (enum with its labels, domain as its base type).
    EXPECT_EQ(
        dst.scalar("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'copy.edge'::regclass "
                   "AND attname = 'e'"),
        "copy.mood");
    EXPECT_EQ(dst.scalar("SELECT array_to_string(enum_range(NULL::copy.mood), '|')"), "sad|ok|happy 'quoted'");
    EXPECT_EQ(
        dst.scalar("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'copy.edge'::regclass "
                   "AND attname = 'n'"),
        "numeric");
    EXPECT_EQ(
        dst.scalar("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'copy.edge'::regclass "
                   "AND attname = 'dom'"),
        "integer");
    EXPECT_EQ(dst.scalar("SELECT octet_length(b) FROM copy.edge WHERE id = 11"), "3");
    EXPECT_EQ(dst.scalar("SELECT j::text FROM copy.edge WHERE id = 2"), "null") << "JSON null is not SQL NULL";
    EXPECT_EQ(dst.scalar("SELECT t IS NULL FROM copy.edge WHERE id = 1"), "t");
    EXPECT_EQ(dst.scalar("SELECT t = '' FROM copy.edge WHERE id = 2"), "t") << "'' is not NULL";
}

TEST_P(Values, everyEdgeValueFollowsTheSqliteMapping)
{
    PgTestDb src("val_src");
    TempDir dir;
    src.exec(kEdgeTable);
    src.exec(kEdgeRows);
    RecordingObserver obs;
    TableSync sync(makeJob("p", spec(GetParam(), "public.edge"), pgEndpoint("s", src.name()),
                           sqliteEndpoint("l", dir.file("r.db"))),
                   obs);
    sync.runOnce({});
    SqliteDb db(dir.file("r.db"));
    auto one = [&](const std::string &sql) {
        auto st = db.prepare(sql);
        EXPECT_TRUE(st.step()) << sql;
        return st;
    };
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM edge"), 25);
    // NULL stays NULL, '' stays '', JSON null stays the text null.
    EXPECT_TRUE(one("SELECT t FROM edge WHERE id = 1").isNull(0));
    EXPECT_EQ(one("SELECT t, typeof(t) FROM edge WHERE id = 2").text(1), "text");
    EXPECT_EQ(one("SELECT t FROM edge WHERE id = 2").text(0), "");
    EXPECT_EQ(one("SELECT j FROM edge WHERE id = 2").text(0), "null");
    // Exact numbers are TEXT: nothing rounds.
    EXPECT_EQ(one("SELECT n FROM edge WHERE id = 6").text(0), std::string(1000, '9'));
    EXPECT_EQ(one("SELECT n, typeof(n) FROM edge WHERE id = 8").text(0), "1.10");
    EXPECT_EQ(one("SELECT n FROM edge WHERE id = 3").text(0), "NaN");
    EXPECT_EQ(one("SELECT n FROM edge WHERE id = 4").text(0), "Infinity");
    // Floats are REAL, exact to the bit; NaN (which SQLite cannot hold as REAL) is the text NaN.
    EXPECT_EQ(one("SELECT f8 FROM edge WHERE id = 8").real(0), 1e308);
    EXPECT_EQ(one("SELECT f8 FROM edge WHERE id = 9").real(0), 5e-324);
    EXPECT_TRUE(std::isinf(one("SELECT f8 FROM edge WHERE id = 4").real(0)));
    EXPECT_EQ(one("SELECT f8, typeof(f8) FROM edge WHERE id = 3").text(0), "NaN");
    EXPECT_EQ(one("SELECT f4 FROM edge WHERE id = 8").real(0), static_cast<double>(3.4e38f));
    // Integers at their limits.
    EXPECT_EQ(one("SELECT i8 FROM edge WHERE id = 8").int64(0), INT64_MIN);
    EXPECT_EQ(one("SELECT i8 FROM edge WHERE id = 9").int64(0), INT64_MAX);
    EXPECT_EQ(one("SELECT i2, typeof(i2) FROM edge WHERE id = 8").text(1), "integer");
    // bytea as BLOB with its NUL bytes.
    auto blob = one("SELECT b, typeof(b) FROM edge WHERE id = 11");
    EXPECT_EQ(blob.text(0), std::string("\x00\xff\x00", 3));
    EXPECT_EQ(blob.text(1), "blob");
    EXPECT_EQ(one("SELECT length(b) FROM edge WHERE id = 12").int64(0), 0);
    // Text: 4-byte UTF-8 and control characters intact.
    EXPECT_EQ(one("SELECT t FROM edge WHERE id = 13").text(0),
              "emoji \xF0\x9F\x98\x80 and \xC3\xA9 and CJK \xE4\xB8\xAD");
    EXPECT_EQ(one("SELECT t FROM edge WHERE id = 14").text(0), "tab\there\nnewline\\backslash\r\x01"
                                                               "ctl \"quote\" 'apos'");
    // Time: timestamptz in UTC with an offset SQLite's date functions read; infinity kept.
    EXPECT_EQ(one("SELECT tz FROM edge WHERE id = 17").text(0), "2024-03-10 07:30:00+00:00");
    EXPECT_EQ(one("SELECT datetime(tz) FROM edge WHERE id = 17").text(0), "2024-03-10 07:30:00");
    EXPECT_EQ(one("SELECT tz FROM edge WHERE id = 15").text(0), "infinity");
    EXPECT_EQ(one("SELECT ts FROM edge WHERE id = 17").text(0), "2024-03-10 02:30:00.123456");
    EXPECT_EQ(one("SELECT tz FROM edge WHERE id = 18").text(0), "4713-01-01 00:00:00+00 BC");
    EXPECT_EQ(one("SELECT iv FROM edge WHERE id = 19").text(0), "1 year 2 mons -3 days +04:05:06.789");
    // Booleans as 0/1, everything else in Postgres's text form.
    EXPECT_EQ(one("SELECT bo FROM edge WHERE id = 22").int64(0), 1);
    EXPECT_EQ(one("SELECT bo FROM edge WHERE id = 23").int64(0), 0);
    EXPECT_EQ(one("SELECT e FROM edge WHERE id = 22").text(0), "happy 'quoted'");
    EXPECT_EQ(one("SELECT tarr FROM edge WHERE id = 21").text(0),
              R"({"with space","quote\"in",NULL,"","back\\slash","NULL"})");
    EXPECT_EQ(one("SELECT u FROM edge WHERE id = 22").text(0), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    EXPECT_EQ(one("SELECT c FROM edge WHERE id = 25").text(0), "ab   ") << "char(n) keeps its padding";
    EXPECT_EQ(one("SELECT jb FROM edge WHERE id = 20").text(0), R"({"a": [1, 2.50, null], "b": 1, "e": {}})");
}

TEST_P(Values, awkwardIdentifiersWorkEverywhere)
{
    PgTestDb src("val_src"), dst("val_dst");
    TempDir dir;
    src.exec(R"sql(
CREATE SCHEMA "Sales Dept";
CREATE TABLE "Sales Dept"."Order ""Lines"" - 2024" (
    "Line-ID" bigint PRIMARY KEY,
    "select" text,
    "Mixed Case" integer,
    "space col" text,
    "quote""col" text,
    "Updated At" timestamptz NOT NULL DEFAULT now()
);
INSERT INTO "Sales Dept"."Order ""Lines"" - 2024" SELECT g, 'kw' || g, g, 's', 'q', now() - interval '1 hour'
  FROM generate_series(1, 50) g;
)sql");
    const std::string table = R"("Sales Dept"."Order ""Lines"" - 2024")";
    RecordingObserver obs;
    TableSync toPg(makeJob("p", spec(GetParam(), table, "Updated At"), pgEndpoint("s", src.name()),
                           pgEndpoint("d", dst.name()), "Target Schema"),
                   obs);
    toPg.runOnce({});
    TableSync toLite(makeJob("p", spec(GetParam(), table, "Updated At"), pgEndpoint("s", src.name()),
                             sqliteEndpoint("l", dir.file("r.db"))),
                     obs);
    toLite.runOnce({});
    src.exec(
        R"sql(UPDATE "Sales Dept"."Order ""Lines"" - 2024" SET "select" = 'changed', "Updated At" = now() WHERE "Line-ID" <= 5)sql");
    toPg.runOnce({});
    toLite.runOnce({});
    EXPECT_EQ(dst.scalar(R"(SELECT count(*) FROM "Target Schema"."Order ""Lines"" - 2024" WHERE "select" = 'changed')"),
              "5");
    EXPECT_EQ(dst.scalar(R"(SELECT sum("Mixed Case") FROM "Target Schema"."Order ""Lines"" - 2024")"), "1275");
    SqliteDb db(dir.file("r.db"));
    EXPECT_EQ(db.scalarInt(
                  R"(SELECT count(*) FROM "Order ""Lines"" - 2024" WHERE "select" = 'changed' AND "quote""col" = 'q')"),
              5);
}

INSTANTIATE_TEST_SUITE_P(Strategies, Values, ::testing::Values(Strategy::FullRefresh, Strategy::Cursor),
                         [](const auto &info) {
                             return std::string(info.param == Strategy::FullRefresh ? "fullRefresh" : "cursor");
                         });
