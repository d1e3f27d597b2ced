// Reconciliation with MariaDB on either side, against the real MariaDB 10.11 and Postgres test
// servers: every type of the mapping hashes alike on both sides (no false drift on equal data),
// drift injected in the target or behind the sync's back in the source is found exactly, repair
// brings it to zero, bisection over an integer key fetches a small part of the table, and a text
// key under a case-insensitive, PAD SPACE collation falls back to one key+hash scan without
// reading as drift.

#include "core/db/sqlitedb.h"
#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/reconcile/reconciler.h"
#include "core/engine/rows/rowhash.h"
#include "core/engine/sync/tablesync.h"
#include "core/model/error.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <functional>
#include <set>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

Workspace workspaceFor(const Endpoint &src, const Endpoint &dst, const TableSpec &table)
{
    Workspace ws;
    ws.endpoints[src.name] = src;
    ws.endpoints[dst.name] = dst;
    PipelineSpec p;
    p.name = "p";
    p.source = src.name;
    p.target = dst.name;
    p.targetSchema = "public"; // a Postgres target; MySQL and SQLite targets ignore it
    p.tables = {table};
    ws.pipelines.push_back(p);
    return ws;
}

TableSpec spec(const std::string &schema, const std::string &table)
{
    TableSpec t;
    t.table = {schema, table};
    t.strategy = Strategy::FullRefresh;
    return t;
}

void runOnce(const Workspace &ws)
{
    RecordingObserver obs;
    for (auto &job : jobsFor(ws, "p")) {
        TableSync sync(job, obs);
        sync.runOnce({}); // throws on failure
    }
}

ReconcileOptions quick()
{
    ReconcileOptions o;
    o.settle = std::chrono::milliseconds(0);
    return o;
}

TableReconcile reconcileOne(const Workspace &ws, const ReconcileOptions &opt = quick())
{
    auto report = reconcile(ws, "p", {}, opt);
    EXPECT_EQ(report.tables.size(), 1u);
    return report.tables.at(0);
}

std::set<std::string> keySet(const std::vector<CanonicalKey> &keys)
{
    std::set<std::string> s;
    for (const auto &k : keys)
        s.insert(k.size() == 1 ? k[0] : rowhash::recordText({k.begin(), k.end()}));
    return s;
}

std::set<std::string> keySet(const std::vector<DifferentRow> &rows)
{
    std::vector<CanonicalKey> keys;
    for (const auto &r : rows)
        keys.push_back(r.key);
    return keySet(keys);
}

std::string describe(const TableReconcile &t)
{
    std::string s = "missing " + std::to_string(t.missing) + " extra " + std::to_string(t.extra) + " different " +
                    std::to_string(t.different) + "; error '" + t.error + "' skipped '" + t.skipped + "'";
    for (const auto &d : t.differentRows)
        for (const auto &c : d.columns)
            s += "\n  " + d.key[0] + "." + c.column + ": source " + c.source.value_or("NULL") + " | target " +
                 c.target.value_or("NULL");
    for (const auto &k : t.missingKeys)
        s += "\n  missing " + k[0];
    for (const auto &k : t.extraKeys)
        s += "\n  extra " + k[0];
    return s;
}

void expectNoDrift(const TableReconcile &t)
{
    EXPECT_TRUE(t.error.empty()) << t.error;
    EXPECT_TRUE(t.skipped.empty()) << t.skipped;
    EXPECT_EQ(t.drift(), 0) << describe(t);
    EXPECT_EQ(t.sourceRows, t.targetRows);
}

/// The drift every cross-engine case injects: in the target key 2 deleted, key 100 inserted,
/// key 1's column `changed` updated; in the source after the full refresh pass key 3's column
/// `sourceChanged` updated and key 4 deleted. The deleted row is in flight (the pass had loaded
/// it); so is the updated one from a Postgres source (its transaction came after the pass's
/// snapshot), while a MariaDB row without a time column cannot be dated and counts as drift.
void expectInjected(const TableReconcile &t, const std::string &changed, const std::string &sourceChanged,
                    bool sourceDated)
{
    ASSERT_TRUE(t.error.empty()) << t.error;
    EXPECT_EQ(keySet(t.missingKeys), (std::set<std::string>{"2"})) << describe(t);
    EXPECT_EQ(keySet(t.extraKeys), (std::set<std::string>{"100"})) << describe(t);
    const std::set<std::string> different = sourceDated ? std::set<std::string>{"1"} : std::set<std::string>{"1", "3"};
    EXPECT_EQ(keySet(t.differentRows), different) << describe(t);
    EXPECT_EQ(t.missing, 1);
    EXPECT_EQ(t.extra, 1);
    EXPECT_EQ(t.different, sourceDated ? 1 : 2);
    EXPECT_EQ(t.inFlight, sourceDated ? 2 : 1);
    EXPECT_EQ(t.note.find("cannot be dated") != std::string::npos, !sourceDated) << t.note;
    for (const auto &d : t.differentRows) {
        ASSERT_EQ(d.columns.size(), 1u) << describe(t);
        EXPECT_EQ(d.columns[0].column, d.key[0] == "1" ? changed : sourceChanged) << describe(t);
    }
    // The missing and extra rows come with their values.
    ASSERT_EQ(t.missingRows.size(), 1u);
    ASSERT_EQ(t.extraRows.size(), 1u);
    EXPECT_EQ(t.missingRows[0].values.size(), t.columns.size());
    EXPECT_EQ(t.extraRows[0].values[0], "100");
}

/// Repairs the drift expectInjected() found; what was in flight is left to the next pass, after
/// which nothing differs.
void repairToZero(const Workspace &ws, const TableReconcile &found)
{
    ReconcileReport report;
    report.pipeline = "p";
    report.tables = {found};
    auto outcomes = repairReport(ws, report);
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_TRUE(outcomes[0].error.empty()) << outcomes[0].error;
    EXPECT_EQ(outcomes[0].keys, found.drift());
    EXPECT_EQ(outcomes[0].deleted, 1);
    EXPECT_EQ(outcomes[0].verified, found.drift());
    EXPECT_EQ(outcomes[0].stillDifferent, 0);
    const auto after = reconcileOne(ws);
    EXPECT_EQ(after.drift(), 0) << describe(after);
    EXPECT_EQ(after.inFlight, found.inFlight);
    runOnce(ws);
    expectNoDrift(reconcileOne(ws));
}

// Every MySQL type of docs/type-mapping.md, with the values that tell canonical texts apart:
// trailing fractional zeros, float edges, trailing spaces, quoting characters, '' and NULL.
const char *kTypes = R"sql(
CREATE TABLE alltypes (
  id int NOT NULL PRIMARY KEY,
  ti tinyint, tiu tinyint unsigned, b1 tinyint(1), si smallint, siu smallint unsigned,
  mi mediumint, miu mediumint unsigned, i int, iu int unsigned, bi bigint, biu bigint unsigned,
  d decimal(12,2), dbig decimal(65,30), f float, db double,
  bt1 bit(1), bt64 bit(64), bt5 bit(5),
  dt date, dtm datetime, dtm3 datetime(3), dtm6 datetime(6), ts timestamp(6) NULL, ts0 timestamp NULL,
  tm time, tm6 time(6), yr year,
  c10 char(10), vc varchar(40), tx text, ltx longtext, js json,
  bin8 binary(8), vb varbinary(16), bl blob,
  en enum('small','medium','large'), st set('red','green','blue'),
  l1 varchar(20) CHARACTER SET latin1
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
)sql";

const char *kTypeRows = R"sql(
INSERT INTO alltypes VALUES
 (1, -128, 255, 1, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,
  -9223372036854775808, 18446744073709551615,
  -12.30, -12345678901234567890123456789012345.123456789012345678901234567890, 0.1, 0.1,
  b'1', b'1111111111111111111111111111111111111111111111111111111111111111', b'00101',
  '2024-02-29', '2024-01-02 03:04:05', '2024-01-02 03:04:05.120', '1999-12-31 23:59:59.999999',
  '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05', '-838:59:59', '100:00:00.000001', 2024,
  'ab', 'trailing  ', 'line\nbreak \\ back', 'κόσμε 😀', '{"k": [1, 2.50]}',
  x'0102', x'00ff00', x'deadbeef00',
  'medium', 'red,blue', 'café'),
 (2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.00, 0, -3.40282e38, 1e308,
  b'0', b'0', b'0', '0001-01-01', '1000-01-01 00:00:00', '2038-01-19 03:14:07.999', '9999-12-31 23:59:59.999999',
  '1970-01-01 00:00:01.000000', '2038-01-19 03:14:07', '00:00:00', '-00:00:01.500000', 1901,
  '', '', '', '', '[]', x'', x'', x'', 'small', '', ''),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
)sql";

const char *kMoreRows = R"sql(
INSERT INTO alltypes (id, f, db, vc, tx, c10, l1, dtm3, tm6, d, bl) VALUES
 (4, 1e-45, 5e-324, 'q"uo\\te(p),c', ' lead', 'x y', 'Ærø', '2024-01-02 03:04:05.100', '01:02:03.500000', 1.50, x'5c78'),
 (5, -3.4028234663852886e38, 1.7976931348623157e308, 'tab\there', 'cr\rlf\n', ' ', 'naïve', NULL, NULL, -0.01, NULL),
 (6, 16777217, 9007199254740993, '""', '\\\\', '()', '', '2024-01-02 03:04:05.000', '00:00:00.000001', 100.00, x'00'),
 (7, -0.0, -0.0, ',', 'NULL', 'null', 'a,b', NULL, '-00:00:00.100000', 0.10, x''),
 (8, 0.3, -123.456e-200, '😀😀', CONCAT('v', CHAR(11), 'f', CHAR(12)), '"', '\\', NULL, NULL, NULL, NULL),
 (9, 1.17549435e-38, 2.2250738585072014e-308, 'x', 'y', 'z', 'w', NULL, NULL, 99999.99, NULL),
 (10, 1, 1e-310, 'a', 'b', 'c', 'd', NULL, NULL, -99999.99, NULL)
)sql";

void createTypes(const MyTestDb &src)
{
    src.exec(kTypes);
    src.exec(kTypeRows);
    src.exec(kMoreRows);
}

/// Injects the drift expectInjected() looks for into a MySQL-sourced alltypes table.
void injectIntoAlltypes(const MyTestDb &src, const std::function<void(const std::string &)> &target)
{
    target("DELETE FROM alltypes WHERE id = 2");
    target("INSERT INTO alltypes (id, vc, _driftless_version) VALUES (100, 'ghost', 1)");
    target("UPDATE alltypes SET dtm3 = '2024-01-02 03:04:05.121' WHERE id = 1");
    src.exec("UPDATE alltypes SET db = 0.25 WHERE id = 3");
    src.exec("DELETE FROM alltypes WHERE id = 4");
}

} // namespace

TEST(ReconcileMysql, mariaDbIntoPostgresEveryTypeHashesAlikeThenDriftIsExactAndRepaired)
{
    MyTestDb src("rmsrc");
    PgTestDb dst("rmdst");
    createTypes(src);
    const auto ws =
        workspaceFor(myEndpoint("src", src.name()), pgEndpoint("dst", dst.name()), spec(src.name(), "alltypes"));
    runOnce(ws);

    auto equal = reconcileOne(ws);
    expectNoDrift(equal);
    EXPECT_EQ(equal.sourceRows, 10);
    EXPECT_EQ(equal.sourceQueries, 1);
    EXPECT_EQ(equal.targetQueries, 1);
    EXPECT_EQ(equal.sourceRowsFetched + equal.targetRowsFetched, 0);

    injectIntoAlltypes(src, [&](const std::string &sql) { dst.exec(sql); });
    auto found = reconcileOne(ws);
    expectInjected(found, "dtm3", "db", false);
    for (const auto &d : found.differentRows) {
        if (d.key[0] == "1") {
            EXPECT_EQ(d.columns[0].source, "2024-01-02 03:04:05.12");
            EXPECT_EQ(d.columns[0].target, "2024-01-02 03:04:05.121");
        } else {
            EXPECT_EQ(d.columns[0].source, rowhash::floatBytes(0.25));
            EXPECT_EQ(d.columns[0].target, std::nullopt);
        }
    }
    repairToZero(ws, found);
}

TEST(ReconcileMysql, mariaDbIntoSqliteNoFalseDriftExactDriftRepaired)
{
    MyTestDb src("rmsrc");
    TempDir dir;
    createTypes(src);
    const std::string path = dir.file("t.db");
    const auto ws =
        workspaceFor(myEndpoint("src", src.name()), sqliteEndpoint("dst", path), spec(src.name(), "alltypes"));
    runOnce(ws);
    expectNoDrift(reconcileOne(ws));

    injectIntoAlltypes(src, [&](const std::string &sql) {
        SqliteDb db(path);
        db.exec(sql);
    });
    auto found = reconcileOne(ws);
    expectInjected(found, "dtm3", "db", false);
    repairToZero(ws, found);
}

TEST(ReconcileMysql, mariaDbIntoMariaDbNoFalseDriftExactDriftRepaired)
{
    MyTestDb src("rmsrc");
    MyTestDb dst("rmdst");
    createTypes(src);
    const auto ws =
        workspaceFor(myEndpoint("src", src.name()), myEndpoint("dst", dst.name()), spec(src.name(), "alltypes"));
    runOnce(ws);
    auto equal = reconcileOne(ws);
    expectNoDrift(equal);
    EXPECT_EQ(equal.sourceQueries, 1);
    EXPECT_EQ(equal.targetQueries, 1);

    injectIntoAlltypes(src, [&](const std::string &sql) { dst.exec(sql); });
    auto found = reconcileOne(ws);
    expectInjected(found, "dtm3", "db", false);
    repairToZero(ws, found);
}

TEST(ReconcileMysql, postgresIntoMariaDbNoFalseDriftExactDriftRepaired)
{
    PgTestDb src("rmsrc");
    MyTestDb dst("rmdst");
    src.exec(R"sql(
CREATE TABLE pgt (id int PRIMARY KEY, bi bigint, n numeric(12,3), nu numeric, f8 float8, f4 real, b boolean,
                  t text, vc varchar(20), c5 char(5), by bytea, d date, ts timestamp(3), tstz timestamptz,
                  tm time, j json, jb jsonb, u uuid, iv interval);
INSERT INTO pgt VALUES
 (1, -9223372036854775808, 1.500, 123.4500, 0.1, 0.1, true, 'q"uo\te(p),c', 'trailing  ', 'ab', '\x00ff',
  '2024-02-29', '2024-01-02 03:04:05.120', '2024-06-30 23:30:00.5-02:30', '01:02:03.5',
  '{"b": 1,  "a": [1, 2.50]}', '{"b": 1, "a": 2.50}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1 day 02:03:04.5'),
 (2, 0, 0, 0, 1e308, 3.4e38, false, '', '', '', '\x', '0001-01-01', '1000-01-01 00:00:00',
  '1970-01-01 00:00:00+00', '00:00:00', '[]', '{}', '00000000-0000-0000-0000-000000000000', '0'),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (4, 1, -0.001, -1e-20, 5e-324, -1.4e-45, true, E'tab\there', ' ', ' x', '\x5c78', '9999-12-31',
  '9999-12-31 23:59:59.999', '2024-01-01 00:00:00.000001+00', '23:59:59.999999', '"s"', 'null', NULL, '-00:00:01'),
 (5, 2, 99999999.999, 1e30, -0.0, 16777217, false, 'κόσμε 😀', '😀', '😀', '\xdeadbeef', '2024-01-01',
  '2024-01-01 00:00:00', '2024-01-01 12:00:00+05', '12:00:00', '{"x": "a\"b"}', '[1, "2"]', NULL, '2 years');
)sql");
    TableSpec t;
    t.table = {"public", "pgt"};
    t.strategy = Strategy::FullRefresh;
    const auto ws = workspaceFor(pgEndpoint("src", src.name()), myEndpoint("dst", dst.name()), t);
    runOnce(ws);
    auto equal = reconcileOne(ws);
    expectNoDrift(equal);
    EXPECT_EQ(equal.sourceRows, 5);
    EXPECT_EQ(equal.sourceQueries, 1);
    EXPECT_EQ(equal.targetQueries, 1);

    dst.exec("DELETE FROM pgt WHERE id = 2");
    dst.exec("INSERT INTO pgt (id, t, _driftless_version) VALUES (100, 'ghost', 1)");
    dst.exec("UPDATE pgt SET tstz = '2024-07-01 02:00:00.4' WHERE id = 1");
    src.exec("UPDATE pgt SET c5 = 'cd' WHERE id = 3");
    src.exec("DELETE FROM pgt WHERE id = 4");
    auto found = reconcileOne(ws);
    expectInjected(found, "tstz", "c5", true);
    for (const auto &d : found.differentRows) {
        if (d.key[0] == "1") {
            EXPECT_EQ(d.columns[0].source, "2024-07-01 02:00:00.5+00");
            EXPECT_EQ(d.columns[0].target, "2024-07-01 02:00:00.4+00");
        } else {
            EXPECT_EQ(d.columns[0].source, "cd   ");
            EXPECT_EQ(d.columns[0].target, std::nullopt);
        }
    }
    repairToZero(ws, found);

    // The same repair as a script (`repair --sql`) run with the mariadb client: every value in the
    // literal MariaDB takes (a boolean, a time with a zone in UTC, bytes, the float edges), so
    // afterwards the tables compare equal.
    dst.exec("DELETE FROM pgt WHERE id IN (2, 5)");
    dst.exec("INSERT INTO pgt (id, t, _driftless_version) VALUES (100, 'ghost', 1)");
    dst.exec("UPDATE pgt SET tstz = '2024-07-01 02:00:00.4', b = NULL, `by` = NULL, iv = 'x' WHERE id = 1");
    const auto report = reconcile(ws, "p", {}, quick());
    ASSERT_EQ(report.tables.at(0).drift(), 4) << describe(report.tables.at(0));
    TempDir dir;
    const std::string script = repairScript(ws, report, std::nullopt);
    EXPECT_NE(script.find("SET NAMES utf8mb4;\nBEGIN;\n"), std::string::npos) << script;
    EXPECT_NE(script.find("DELETE FROM `pgt` WHERE `id` = '100';"), std::string::npos) << script;
    EXPECT_NE(script.find("`tstz` = '2024-07-01 02:00:00.5'"), std::string::npos) << script; // in UTC
    EXPECT_NE(script.find("`b` = 1"), std::string::npos) << script;
    writeFile(dir.file("repair.sql"), script);
    const auto &sv = servers();
    myDsn(dst.name()); // exports the password for the client
    // As the script's header says to run it: from standard input, which stops at an error (the
    // client's `source` command goes on past one and exits 0).
    ASSERT_EQ(waitPid(spawnProgram("/bin/sh",
                                   {"-c", "exec /usr/bin/mariadb --host=" + sv.myHost +
                                              " --port=" + std::to_string(sv.myPort) + " --user=" + sv.myUser +
                                              " --database=" + dst.name() + " < " + dir.file("repair.sql")},
                                   {}, dir.file("mariadb.log"))),
              0)
        << readFile(dir.file("mariadb.log")) << script;
    expectNoDrift(reconcileOne(ws));
}

TEST(ReconcileMysql, integerKeyBisectsAcrossMariaDbAndPostgres)
{
    MyTestDb src("rmsrc");
    PgTestDb dst("rmdst");
    src.exec("CREATE TABLE big (id bigint unsigned NOT NULL PRIMARY KEY, name varchar(40), qty int, "
             "price decimal(10,2), at datetime(3))");
    src.exec("CREATE TABLE digits (d int)");
    src.exec("INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)");
    src.exec(
        "INSERT INTO big SELECT n, CONCAT('item ', n), n % 97, (n % 1000) / 10.0, '2024-01-01' + INTERVAL n SECOND "
        "FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d + 1 AS n "
        "FROM digits a, digits b, digits c, digits e, digits f WHERE f.d < 2) g");
    const auto ws = workspaceFor(myEndpoint("src", src.name()), pgEndpoint("dst", dst.name()), spec(src.name(), "big"));
    runOnce(ws);

    ReconcileOptions opt = quick();
    opt.fetchRows = 100;
    opt.maxSegments = 16;
    opt.minSegmentRows = 8;
    auto equal = reconcileOne(ws, opt);
    expectNoDrift(equal);
    EXPECT_EQ(equal.sourceRows, 20000);
    EXPECT_EQ(equal.sourceQueries, 1);
    EXPECT_EQ(equal.targetQueries, 1);
    EXPECT_EQ(equal.sourceRowsFetched, 0);
    EXPECT_EQ(equal.targetRowsFetched, 0);

    dst.exec("DELETE FROM public.big WHERE id IN (7, 12345)");
    dst.exec("UPDATE public.big SET name = 'edited' WHERE id = 5000");
    dst.exec("INSERT INTO public.big (id, name, _driftless_version) VALUES (30000, 'ghost', 1)");
    src.exec("UPDATE big SET qty = qty + 1 WHERE id = 19999");
    auto found = reconcileOne(ws, opt);
    ASSERT_TRUE(found.error.empty()) << found.error;
    EXPECT_EQ(keySet(found.missingKeys), (std::set<std::string>{"7", "12345"})) << describe(found);
    EXPECT_EQ(keySet(found.extraKeys), (std::set<std::string>{"30000"})) << describe(found);
    EXPECT_EQ(keySet(found.differentRows), (std::set<std::string>{"5000", "19999"})) << describe(found);
    EXPECT_GT(found.sourceQueries, 3) << "bisection levels were expected";
    EXPECT_LT(found.sourceRowsFetched + found.targetRowsFetched, 1500) << "rows fetched: far below the 20000 rows";
    // 19999 changed at the source after the pass, but a MariaDB row without a time column does not say
    // when: every differing row the source has (2 missing, 2 different) might have.
    EXPECT_NE(found.note.find("4 differing rows of the source cannot be dated"), std::string::npos) << found.note;
    std::printf("20000 rows, 5 differences: %d + %d queries, %lld + %lld rows fetched\n", found.sourceQueries,
                found.targetQueries, found.sourceRowsFetched, found.targetRowsFetched);

    ReconcileReport report;
    report.pipeline = "p";
    report.tables = {found};
    auto outcomes = repairReport(ws, report);
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_TRUE(outcomes[0].error.empty()) << outcomes[0].error;
    EXPECT_EQ(outcomes[0].verified, 5);
    expectNoDrift(reconcileOne(ws, opt));
}

TEST(ReconcileMysql, caseInsensitiveTextKeyIsComparedRowByRowWithoutFalseDrift)
{
    MyTestDb src("rmsrc");
    PgTestDb dst("rmdst");
    // utf8mb4_general_ci: case- and accent-insensitive, PAD SPACE; Postgres orders by bytes.
    src.exec("CREATE TABLE words (w varchar(40) COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY, v int)");
    src.exec("INSERT INTO words VALUES ('Alpha', 1), ('beta ', 2), ('Gamma', 3), ('café', 4), ('ZZ top', 5), "
             "('a,b', 6), ('x\"y', 7), ('back\\\\slash', 8), ('😀', 9), ('', 10), ('Ünïcödé', 11), ('delta', 12)");
    const auto ws =
        workspaceFor(myEndpoint("src", src.name()), pgEndpoint("dst", dst.name()), spec(src.name(), "words"));
    runOnce(ws);
    ReconcileOptions opt = quick();
    opt.fetchRows = 2;
    opt.maxSegments = 4;
    opt.minSegmentRows = 1;
    auto equal = reconcileOne(ws, opt);
    expectNoDrift(equal);
    EXPECT_EQ(equal.sourceRows, 12);

    dst.exec("INSERT INTO public.words VALUES ('alpha', 1, 1), ('Gamma ', 3, 1)"); // only Postgres tells these apart
    dst.exec("DELETE FROM public.words WHERE w = 'café'");
    dst.exec("UPDATE public.words SET v = 20 WHERE w = 'beta '");
    src.exec("UPDATE words SET v = 13 WHERE w = 'DELTA'");
    auto found = reconcileOne(ws, opt);
    ASSERT_TRUE(found.error.empty()) << found.error;
    EXPECT_EQ(keySet(found.missingKeys), (std::set<std::string>{"café"})) << describe(found);
    EXPECT_EQ(keySet(found.extraKeys), (std::set<std::string>{"alpha", "Gamma "})) << describe(found);
    EXPECT_EQ(keySet(found.differentRows), (std::set<std::string>{"beta ", "delta"})) << describe(found);
    EXPECT_NE(found.note.find("row by row"), std::string::npos) << found.note;

    ReconcileReport report;
    report.pipeline = "p";
    report.tables = {found};
    auto outcomes = repairReport(ws, report);
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_TRUE(outcomes[0].error.empty()) << outcomes[0].error;
    EXPECT_EQ(outcomes[0].stillDifferent, 0);
    expectNoDrift(reconcileOne(ws, opt));
}

TEST(ReconcileMysql, cliReconcilesAMariaDbCursorPipelineWithRecentRowsInFlightAndRepairs)
{
    MyTestDb src("rmsrc");
    PgTestDb dst("rmdst");
    TempDir dir;
    src.exec("CREATE TABLE events (id int NOT NULL PRIMARY KEY, kind varchar(20), "
             "updated_at timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))");
    src.exec("CREATE TABLE digits (d int)");
    src.exec("INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)");
    src.exec("INSERT INTO events SELECT a.d + 10 * b.d + 100 * c.d + 1, 'k', NOW(6) - INTERVAL 1 HOUR "
             "FROM digits a, digits b, digits c");
    const auto &s = servers();
    const std::string state = dir.file("workspace.db");
    const std::string yaml = "endpoints:\n"
                             "  shop: { kind: mysql, dsn: \"" +
                             myDsn(src.name()) +
                             "\" }\n"
                             "  dw:   { kind: postgres, dsn: \"postgresql://" +
                             s.pgUser + "@127.0.0.1:" + std::to_string(s.pgPort) + "/" + dst.name() +
                             "\" }\n"
                             "pipelines:\n"
                             "  - name: shop_to_dw\n"
                             "    source: shop\n"
                             "    target: dw\n"
                             "    target_schema: public\n"
                             "    reconcile: { every: 24h }\n"
                             "    tables:\n"
                             "      - { table: " +
                             src.name() + ".events, strategy: cursor, cursor: updated_at, lookback: 10m }\n";
    writeFile(dir.file("ws.yaml"), yaml);
    auto applied = runCli({"--state", state, "apply", dir.file("ws.yaml")});
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto ran = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(ran.exitCode, 0) << ran.out << ran.err;
    auto clean = runCli({"--state", state, "reconcile", "shop_to_dw"});
    EXPECT_EQ(clean.exitCode, 0) << clean.out << clean.err;
    EXPECT_NE(clean.out.find("no drift in 1000 rows"), std::string::npos) << clean.out;

    // What cursor sync cannot see (a hard delete, a write that leaves updated_at alone), a hand
    // edit in the target, and a fresh change the next pass will carry (in flight, not drift).
    src.exec("DELETE FROM events WHERE id = 5");
    src.exec("UPDATE events SET kind = 'bulk', updated_at = updated_at WHERE id IN (8, 9)");
    src.exec("UPDATE events SET kind = 'fresh', updated_at = NOW(6) WHERE id = 77");
    dst.exec("UPDATE public.events SET kind = 'edited' WHERE id = 500");
    auto r = runCli({"--state", state, "reconcile", "shop_to_dw", "--json"});
    ASSERT_EQ(r.exitCode, 3) << r.out << r.err; // 3: drift found
    auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["tables"].size(), 1u);
    const auto &t = j["tables"][0];
    EXPECT_EQ(t["source_rows"], 999);
    EXPECT_EQ(t["target_rows"], 1000);
    EXPECT_EQ(t["missing"], 0);
    EXPECT_EQ(t["extra"], 1);
    EXPECT_EQ(t["different"], 3);
    EXPECT_EQ(t["in_flight"], 1);
    EXPECT_EQ(t["keys"]["extra"], nlohmann::json::array({5}));
    EXPECT_EQ(t["keys"]["different"], nlohmann::json::array({500, 8, 9})); // in record text order

    auto fix = runCli({"--state", state, "repair", std::to_string(j["report_id"].get<long long>()), "--json"});
    ASSERT_EQ(fix.exitCode, 0) << fix.out << fix.err;
    auto again = runCli({"--state", state, "reconcile", "shop_to_dw", "--json"});
    EXPECT_EQ(again.exitCode, 0) << again.out << again.err;
    EXPECT_EQ(dst.scalar("SELECT kind FROM public.events WHERE id = 8"), "bulk");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.events WHERE id = 5"), "0");
}

TEST(ReconcileMysql, binlogCdcTablesSettleOnTheAppliedBinlogPosition)
{
    MyTestDb src("rmsrc");
    PgTestDb dst("rmdst");
    src.exec("CREATE TABLE t (id int NOT NULL PRIMARY KEY, v int)");
    src.exec("INSERT INTO t VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7), (8, 8)");
    TableSpec table = spec(src.name(), "t");
    table.strategy = Strategy::Cdc;
    const auto ws = workspaceFor(myEndpoint("src", src.name()), pgEndpoint("dst", dst.name()), table);
    RecordingObserver obs;
    {
        MysqlCdcPipeline once(jobsFor(ws, "p"), obs);
        once.run({}, {true, nullptr}); // load, then stream up to the binlog's end
    }
    expectNoDrift(reconcileOne(ws));

    // The stream is not running: the change cannot be applied, and the report says how far the
    // target got.
    src.exec("UPDATE t SET v = 50 WHERE id = 5");
    ReconcileOptions opt = quick();
    opt.settle = std::chrono::milliseconds(300);
    auto stale = reconcileOne(ws, opt);
    ASSERT_TRUE(stale.error.empty()) << stale.error;
    EXPECT_EQ(keySet(stale.differentRows), (std::set<std::string>{"5"})) << describe(stale);
    EXPECT_NE(stale.note.find("had applied the source up to binlog file no."), std::string::npos) << stale.note;

    // Streaming: a change made just before the comparison is in flight (or already applied),
    // never drift, once the target has applied the binlog position read after the comparison.
    std::jthread runner([&](std::stop_token st) {
        MysqlCdcPipeline p(jobsFor(ws, "p"), obs);
        try {
            p.run(st, {false, nullptr});
        } catch (const Cancelled &) {
        } catch (const std::exception &e) {
            ADD_FAILURE() << e.what();
        }
    });
    src.exec("UPDATE t SET v = 60 WHERE id = 6");
    opt.settle = std::chrono::seconds(30);
    auto live = reconcileOne(ws, opt);
    EXPECT_TRUE(live.error.empty()) << live.error;
    EXPECT_EQ(live.drift(), 0) << describe(live);
    EXPECT_TRUE(live.note.empty()) << live.note;
    runner.request_stop();
}

TEST(ReconcileMysql, postgresTextKeyBisectsIntoAMariaDbBinaryNoPadKey)
{
    PgTestDb src("rmsrc");
    MyTestDb dst("rmdst");
    // Keys that only a bytewise, no-pad order keeps apart and in Postgres' "C" order: case,
    // accents, trailing spaces, 4-byte UTF-8.
    src.exec("CREATE TABLE tk (k text PRIMARY KEY, v int);"
             "INSERT INTO tk SELECT 'k' || g, g FROM generate_series(1, 3000) g;"
             "INSERT INTO tk SELECT 'K' || g, g FROM generate_series(1, 300) g;"
             "INSERT INTO tk VALUES ('k1 ', 1), ('k1  ', 2), ('é', 3), ('e', 4), ('😀', 5), ('', 6), ('a b', 7)");
    TableSpec t;
    t.table = {"public", "tk"};
    t.strategy = Strategy::FullRefresh;
    const auto ws = workspaceFor(pgEndpoint("src", src.name()), myEndpoint("dst", dst.name()), t);
    runOnce(ws);
    ReconcileOptions opt = quick();
    opt.fetchRows = 40;
    opt.maxSegments = 8;
    opt.minSegmentRows = 4;
    expectNoDrift(reconcileOne(ws, opt));

    dst.exec("DELETE FROM tk WHERE k IN ('k1  ', 'K77')");
    dst.exec("UPDATE tk SET v = -1 WHERE k = 'é'");
    dst.exec("INSERT INTO tk (k, v, _driftless_version) VALUES ('k1   ', 0, 1)");
    auto found = reconcileOne(ws, opt);
    ASSERT_TRUE(found.error.empty()) << found.error;
    EXPECT_EQ(keySet(found.missingKeys), (std::set<std::string>{"k1  ", "K77"})) << describe(found);
    EXPECT_EQ(keySet(found.extraKeys), (std::set<std::string>{"k1   "})) << describe(found);
    EXPECT_EQ(keySet(found.differentRows), (std::set<std::string>{"é"})) << describe(found);
    EXPECT_TRUE(found.note.empty()) << found.note; // bisected, not row by row
    EXPECT_GT(found.sourceQueries, 3);
    EXPECT_LT(found.sourceRowsFetched + found.targetRowsFetched, 1000);
}

// A MariaDB full refresh table with a time column: rows written at the source after the last
// pass (updated_at at or after its snapshot's clock, a DATETIME in the server's zone) are in
// flight, a change in the target is drift. A MariaDB table without a primary key is compared as
// whole rows (counts, a checksum, then the rows with their values); its source rows written since
// cannot be dated, and the report says so. Oracle: counts in SQL on each side.
TEST(ReconcileMysql, aMariaDbFullRefreshTableIsDatedByItsTimeColumnAndAKeylessOneComparedAsWholeRows)
{
    MyTestDb src("rmsrc");
    MyTestDb dst("rmdst");
    src.exec("CREATE TABLE stamped (id int NOT NULL PRIMARY KEY, v int, "
             "updated_at datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))");
    src.exec("INSERT INTO stamped VALUES (1, 1, NOW(6) - INTERVAL 1 DAY), (2, 2, NOW(6) - INTERVAL 1 DAY), "
             "(3, 3, NOW(6) - INTERVAL 1 DAY), (4, 4, NOW(6) - INTERVAL 1 DAY)");
    src.exec("CREATE TABLE nokey (a int, b varchar(20))");
    src.exec("INSERT INTO nokey VALUES (1, 'one'), (2, 'two'), (2, 'two'), (3, NULL)");
    auto ws = workspaceFor(myEndpoint("src", src.name()), myEndpoint("dst", dst.name()), spec(src.name(), "stamped"));
    ws.pipelines[0].tables.push_back(spec(src.name(), "nokey"));
    runOnce(ws);
    for (const auto &t : reconcile(ws, "p", {}, quick()).tables)
        expectNoDrift(t);

    src.exec("UPDATE stamped SET v = 20, updated_at = NOW(6) WHERE id IN (1, 2)");
    src.exec("INSERT INTO nokey VALUES (9, 'late')");
    dst.exec("UPDATE stamped SET v = -3 WHERE id = 3");
    dst.exec("DELETE FROM nokey WHERE a = 2 LIMIT 1");
    const auto r = reconcile(ws, "p", {}, quick());
    ASSERT_EQ(r.tables.size(), 2u);
    const auto &stamped = r.tables[0];
    ASSERT_TRUE(stamped.error.empty()) << stamped.error;
    EXPECT_EQ(keySet(stamped.differentRows), std::set<std::string>{"3"}) << describe(stamped);
    EXPECT_EQ(stamped.inFlight, 2);
    EXPECT_TRUE(stamped.note.empty()) << stamped.note;
    const auto &nokey = r.tables[1];
    ASSERT_TRUE(nokey.error.empty()) << nokey.error;
    EXPECT_EQ(nokey.sourceRows, std::stoll(src.scalar("SELECT COUNT(*) FROM nokey")));
    EXPECT_EQ(nokey.targetRows, std::stoll(dst.scalar("SELECT COUNT(*) FROM nokey")));
    EXPECT_EQ(nokey.missing, 2); // the lost copy of (2, two), and (9, late), which cannot be dated
    EXPECT_EQ(nokey.extra, 0);
    std::set<std::string> missing;
    for (const auto &m : nokey.missingRows)
        missing.insert(*m.values[0] + "," + m.values[1].value_or("NULL") + " x" + std::to_string(m.copies));
    EXPECT_EQ(missing, (std::set<std::string>{"2,two x1", "9,late x1"}));
    EXPECT_NE(nokey.note.find("cannot be dated"), std::string::npos) << nokey.note;
    runOnce(ws);
    for (const auto &t : reconcile(ws, "p", {}, quick()).tables)
        expectNoDrift(t);
}

/// `driftless-cli compare` (issue 46 item 4): two tables of any two endpoints, no pipeline. A
/// MariaDB table and two copies nobody synced (a Postgres one made by hand, a SQLite file), each
/// with a row changed, one missing and one extra: exactly those rows, exit 3; a table against
/// itself, exit 0; the report is stored and listed, and a repair of it is refused with what to do.
TEST(ReconcileMysql, compareFindsExactlyTheRowsTwoTablesOfAnyEndpointsDifferBy)
{
    MyTestDb src("cmpsrc");
    PgTestDb pg("cmppg");
    TempDir dir;
    const std::string lite = dir.file("copy.db");
    src.exec("CREATE TABLE items (id int NOT NULL PRIMARY KEY, name varchar(40) NOT NULL, qty int, price "
             "decimal(10, 2))");
    src.exec("INSERT INTO items SELECT seq, CONCAT('item ', seq), IF(seq % 10 = 0, NULL, seq % 7), seq / 4 FROM "
             "seq_1_to_2000");
    pg.exec("CREATE TABLE public.items (id int PRIMARY KEY, name varchar(40) NOT NULL, qty int, price numeric(10, "
            "2))");
    pg.exec("INSERT INTO public.items SELECT g, 'item ' || g, CASE WHEN g % 10 = 0 THEN NULL ELSE g % 7 END, "
            "round(g / 4.0, 2) FROM generate_series(1, 2000) g");
    {
        driftless::core::SqliteDb db(lite);
        db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, price TEXT)");
        db.exec("WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 2000) INSERT INTO items "
                "SELECT n, 'item ' || n, CASE WHEN n % 10 = 0 THEN NULL ELSE n % 7 END, printf('%.2f', n / 4.0) "
                "FROM g");
        db.exec("UPDATE items SET name = 'renamed' WHERE id = 1500");
        db.exec("DELETE FROM items WHERE id = 1200");
        db.exec("INSERT INTO items VALUES (5000, 'only here', 1, '1.00')");
    }
    pg.exec("UPDATE public.items SET qty = 99 WHERE id = 700");
    pg.exec("DELETE FROM public.items WHERE id = 42");
    pg.exec("INSERT INTO public.items VALUES (4001, 'only here', 1, 1)");
    const std::string state = dir.file("workspace.db");
    writeFile(dir.file("ws.yaml"), "endpoints:\n"
                                   "  shop: { kind: mysql, dsn: \"" +
                                       myDsn(src.name()) + "\" }\n  dw: { kind: postgres, dsn: \"" + pgDsn(pg.name()) +
                                       "\" }\n  copy: { kind: sqlite, path: \"" + lite + "\" }\npipelines: []\n");
    auto applied = runCli({"--state", state, "apply", dir.file("ws.yaml")});
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;

    auto r = runCli({"--state", state, "compare", "shop:items", "dw:public.items", "--json"});
    ASSERT_EQ(r.exitCode, 3) << r.out << r.err;
    auto j = nlohmann::json::parse(r.out);
    const auto &t = j["tables"][0];
    EXPECT_EQ(t["source_rows"], 2000);
    EXPECT_EQ(t["target_rows"], 2000);
    EXPECT_EQ(t["keys"]["missing"], nlohmann::json::array({42}));
    EXPECT_EQ(t["keys"]["extra"], nlohmann::json::array({4001}));
    EXPECT_EQ(t["keys"]["different"], nlohmann::json::array({700}));
    EXPECT_EQ(t["in_flight"], 0);

    auto lr = runCli({"--state", state, "compare", "dw:items", "copy:items"});
    EXPECT_EQ(lr.exitCode, 3) << lr.out << lr.err;
    EXPECT_NE(lr.out.find("DRIFT 2 missing, 2 extra, 2 different of 2000 rows"), std::string::npos) << lr.out;
    EXPECT_NE(lr.out.find("missing in target: 1200, 4001"), std::string::npos) << lr.out;
    EXPECT_NE(lr.out.find("extra in target: 42, 5000"), std::string::npos) << lr.out;

    // --columns: only qty changed in row 700, so comparing names alone finds it equal.
    auto names = runCli({"--state", state, "compare", "shop:items", "dw:public.items", "--columns", "name", "--json"});
    ASSERT_EQ(names.exitCode, 3) << names.out << names.err;
    const auto nj = nlohmann::json::parse(names.out)["tables"][0];
    EXPECT_EQ(nj["keys"]["missing"], nlohmann::json::array({42}));
    EXPECT_EQ(nj["keys"]["extra"], nlohmann::json::array({4001}));
    EXPECT_EQ(nj["keys"]["different"], nlohmann::json::array());
    // --where, on both sides: the extra row 4001 is outside it.
    auto low =
        runCli({"--state", state, "compare", "shop:items", "dw:public.items", "--where", "id <= 1000", "--json"});
    ASSERT_EQ(low.exitCode, 3) << low.out << low.err;
    const auto lj = nlohmann::json::parse(low.out)["tables"][0];
    EXPECT_EQ(lj["source_rows"], 1000);
    EXPECT_EQ(lj["target_rows"], 999);
    EXPECT_EQ(lj["keys"]["missing"], nlohmann::json::array({42}));
    EXPECT_EQ(lj["keys"]["extra"], nlohmann::json::array());
    EXPECT_EQ(lj["keys"]["different"], nlohmann::json::array({700}));
    // --key: rows matched by name (unique, never NULL) instead of id, comparing qty alone: the
    // renamed row is one missing and one extra, the rows with other ids but the same name and
    // qty are equal.
    auto byName =
        runCli({"--state", state, "compare", "dw:items", "copy:items", "--key", "name", "--columns", "qty", "--json"});
    ASSERT_EQ(byName.exitCode, 3) << byName.out << byName.err;
    const auto bj = nlohmann::json::parse(byName.out)["tables"][0];
    EXPECT_EQ(bj["keys"]["missing"], nlohmann::json::array({"item 1200", "item 1500"}));
    EXPECT_EQ(bj["keys"]["extra"], nlohmann::json::array({"item 42", "renamed"}));
    EXPECT_EQ(bj["keys"]["different"], nlohmann::json::array({"item 700"}));
    // A key that repeats and is NULL in some rows cannot match rows: refused, saying so.
    auto badKey = runCli({"--state", state, "compare", "shop:items", "dw:items", "--key", "qty"});
    EXPECT_EQ(badKey.exitCode, 2) << badKey.out << badKey.err;
    EXPECT_NE(badKey.err.find("--key qty does not tell the rows of shop:"), std::string::npos) << badKey.err;
    EXPECT_NE(badKey.err.find("rows have a NULL in it"), std::string::npos) << badKey.err;
    auto noColumn = runCli({"--state", state, "compare", "shop:items", "dw:items", "--columns", "nope"});
    EXPECT_EQ(noColumn.exitCode, 2) << noColumn.out << noColumn.err;
    EXPECT_NE(noColumn.err.find("has no column 'nope'"), std::string::npos) << noColumn.err;

    // repair --sql: a comparison's repair as a script a DBA runs with sqlite3 or psql; after it,
    // the tables compare equal. Nothing is written by writing it.
    const auto scriptFor = [&](const std::string &left, const std::string &right, const std::string &file) {
        auto c = runCli({"--state", state, "compare", left, right, "--json"});
        EXPECT_EQ(c.exitCode, 3) << c.out << c.err;
        const std::string id = std::to_string(nlohmann::json::parse(c.out)["report_id"].get<long long>());
        auto w = runCli({"--state", state, "repair", id, "--sql", file});
        EXPECT_EQ(w.exitCode, 0) << w.out << w.err;
        return readFile(file);
    };
    const std::string liteSql = scriptFor("dw:items", "copy:items", dir.file("lite.sql"));
    EXPECT_NE(liteSql.find("BEGIN;\n"), std::string::npos) << liteSql;
    EXPECT_NE(liteSql.find("2 to insert, 2 to update, 2 to delete"), std::string::npos) << liteSql;
    EXPECT_NE(liteSql.find("INSERT INTO \"items\" (\"id\", \"name\", \"qty\", \"price\") VALUES (4001, 'only "
                           "here', 1, '1.00');"),
              std::string::npos)
        << liteSql;
    EXPECT_NE(liteSql.find("UPDATE \"items\" SET \"name\" = 'item 1500', \"qty\" = NULL, \"price\" = '375.00' WHERE "
                           "\"id\" = 1500;"),
              std::string::npos)
        << liteSql;
    EXPECT_NE(liteSql.find("DELETE FROM \"items\" WHERE \"id\" = 5000;"), std::string::npos) << liteSql;
    EXPECT_EQ(runCli({"--state", state, "compare", "dw:items", "copy:items"}).exitCode, 3)
        << "the script ran by itself";
    ASSERT_EQ(
        waitPid(spawnProgram("/usr/bin/sqlite3", {lite, ".read " + dir.file("lite.sql")}, {}, dir.file("sqlite3.log"))),
        0)
        << readFile(dir.file("sqlite3.log"));
    auto liteAgain = runCli({"--state", state, "compare", "dw:items", "copy:items"});
    EXPECT_EQ(liteAgain.exitCode, 0) << liteAgain.out << liteAgain.err;
    // MariaDB into Postgres, run with psql.
    const std::string pgSql = scriptFor("shop:items", "dw:public.items", dir.file("pg.sql"));
    EXPECT_NE(pgSql.find("UPDATE \"public\".\"items\" SET \"name\" = 'item 700', \"qty\" = NULL, \"price\" = "
                         "'175.00' WHERE \"id\" = '700';"),
              std::string::npos)
        << pgSql;
    ASSERT_EQ(waitPid(spawnProgram("/usr/bin/psql",
                                   {"-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", dir.file("pg.sql"), pgDsn(pg.name())},
                                   {}, dir.file("psql.log"))),
              0)
        << readFile(dir.file("psql.log"));
    auto pgAgain = runCli({"--state", state, "compare", "shop:items", "dw:public.items"});
    EXPECT_EQ(pgAgain.exitCode, 0) << pgAgain.out << pgAgain.err;

    auto same = runCli({"--state", state, "compare", "shop:items", "shop:items"});
    EXPECT_EQ(same.exitCode, 0) << same.out << same.err;
    EXPECT_NE(same.out.find("no drift in 2000 rows"), std::string::npos) << same.out;

    auto wrongWay = runCli({"--state", state, "compare", "copy:items", "dw:items"});
    EXPECT_EQ(wrongWay.exitCode, 2) << wrongWay.out << wrongWay.err;
    EXPECT_NE(wrongWay.err.find("driftless-cli compare dw:items copy:items"), std::string::npos) << wrongWay.err;
    auto unknown = runCli({"--state", state, "compare", "nowhere:items", "dw:items"});
    EXPECT_EQ(unknown.exitCode, 2) << unknown.err;
    EXPECT_NE(unknown.err.find("no endpoint named 'nowhere'"), std::string::npos) << unknown.err;

    auto listed = runCli({"--state", state, "reports"});
    EXPECT_NE(listed.out.find("(compare)"), std::string::npos) << listed.out;
    auto repair = runCli({"--state", state, "repair", std::to_string(j["report_id"].get<long long>())});
    EXPECT_EQ(repair.exitCode, 2) << repair.out << repair.err;
    EXPECT_NE(repair.err.find("outside any pipeline"), std::string::npos) << repair.err;
}
