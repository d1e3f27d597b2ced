// A MySQL/MariaDB source synced by full refresh and cursor sync into Postgres and SQLite targets,
// against the real MariaDB 10.11 test server: every column type arrives as the text
// docs/type-mapping.md promises, zero dates are refused by name, and cursor sync keeps its
// guarantees (keyset pages over composite and text keys, lookback, the source's clock).

#include "core/db/mysqlcatalog.h"
#include "core/db/sqlitedb.h"
#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/commands/doctor.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/endpoints/mysqlpreflight.h"
#include "core/engine/run/scheduler.h"
#include "core/engine/status/statusreport.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"
#include "core/readers/pgcursorreader.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

const char *kTypes = R"sql(
CREATE TABLE alltypes (
  id int NOT NULL PRIMARY KEY,
  ti tinyint, tiu tinyint unsigned, b1 tinyint(1), si smallint, siu smallint unsigned,
  mi mediumint, miu mediumint unsigned, i int, iu int unsigned, bi bigint, biu bigint unsigned,
  d decimal(12,2), dbig decimal(65,30), f float, db double,
  bt1 bit(1), bt64 bit(64), bt5 bit(5),
  dt date, dtm datetime, dtm3 datetime(3), dtm6 datetime(6), ts timestamp(6) NULL, tm time, tm6 time(6), yr year,
  c10 char(10), vc varchar(20), tx text, ltx longtext, js json,
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
  '2024-01-02 03:04:05.123456', '-838:59:59', '100:00:00.000001', 2024,
  'ab', 'tab\there', 'line\nbreak \\ back', 'κόσμε 😀', '{"k": [1, 2.50]}',
  x'0102', x'00ff00', x'deadbeef00',
  'medium', 'red,blue', 'café'),
 (2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.00, 0, -3.40282e38, 1e308,
  b'0', b'0', b'0', '0001-01-01', '1000-01-01 00:00:00', '2038-01-19 03:14:07.999', '9999-12-31 23:59:59.999999',
  '1970-01-01 00:00:01.000000', '00:00:00', '-00:00:01.500000', 1901,
  '', '', '', '', '[]', x'', x'', x'', 'small', '', ''),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
)sql";

/// Column → the text Postgres prints for the value synced from row 1, 2 and 3.
struct Expect {
    const char *column;
    const char *row1;
    const char *row2;
};
const Expect kExpected[] = {
    {"ti", "-128", "0"},
    {"tiu", "255", "0"},
    {"b1", "1", "0"},
    {"si", "-32768", "0"},
    {"siu", "65535", "0"},
    {"mi", "-8388608", "0"},
    {"miu", "16777215", "0"},
    {"i", "-2147483648", "0"},
    {"iu", "4294967295", "0"},
    {"bi", "-9223372036854775808", "0"},
    {"biu", "18446744073709551615", "0"},
    {"d", "-12.30", "0.00"},
    {"dbig", "-12345678901234567890123456789012345.123456789012345678901234567890", "0.000000000000000000000000000000"},
    {"f", "0.1", "-3.40282e+38"},
    {"db", "0.1", "1e+308"},
    {"bt1", "1", "0"},
    {"bt64", "1111111111111111111111111111111111111111111111111111111111111111",
     "0000000000000000000000000000000000000000000000000000000000000000"},
    {"bt5", "00101", "00000"},
    {"dt", "2024-02-29", "0001-01-01"},
    {"dtm", "2024-01-02 03:04:05", "1000-01-01 00:00:00"},
    {"dtm3", "2024-01-02 03:04:05.12", "2038-01-19 03:14:07.999"},
    {"dtm6", "1999-12-31 23:59:59.999999", "9999-12-31 23:59:59.999999"},
    {"ts", "2024-01-02 03:04:05.123456+00", "1970-01-01 00:00:01+00"},
    {"tm", "-838:59:59", "00:00:00"},
    {"tm6", "100:00:00.000001", "-00:00:01.5"},
    {"yr", "2024", "1901"},
    {"c10", "ab", ""}, // character(n)::text drops the padding,
    {"vc", "tab\there", ""},
    {"tx", "line\nbreak \\ back", ""},
    {"ltx", "κόσμε 😀", ""},
    {"js", "{\"k\": [1, 2.50]}", "[]"},
    {"bin8", "\\x0102000000000000", "\\x0000000000000000"},
    {"vb", "\\x00ff00", "\\x"},
    {"bl", "\\xdeadbeef00", "\\x"},
    {"en", "medium", "small"},
    {"st", "red,blue", ""},
    {"l1", "café", ""},
};

TableSpec spec(const std::string &db, const std::string &table, Strategy s)
{
    TableSpec t;
    t.table = {db, table};
    t.strategy = s;
    return t;
}

std::string sqliteText(SqliteDb &db, const std::string &sql)
{
    auto st = db.prepare(sql);
    return st.step() ? st.text(0) : "<no row>";
}

std::string pgText(PgTestDb &db, const std::string &table, const std::string &col, int id)
{
    auto c = db.connect();
    auto r = c.exec("SELECT " + quoteIdent(col) + "::text FROM " + table + " WHERE id = " + std::to_string(id));
    return r.rows() ? (r.isNull(0, 0) ? "NULL" : r.text(0, 0)) : "<no row>";
}

} // namespace

TEST(MysqlSource, fullRefreshIntoPostgresCarriesEveryTypeAsTheMappingSays)
{
    MyTestDb src("mysrc");
    PgTestDb dst("mydst");
    src.exec(kTypes);
    src.exec(kTypeRows);
    RecordingObserver obs;
    TableSync sync(makeJob("p", spec(src.name(), "alltypes", Strategy::FullRefresh), myEndpoint("src", src.name()),
                           pgEndpoint("dst", dst.name()), "public"),
                   obs);
    auto out = sync.runOnce({});
    EXPECT_EQ(out.rowsWritten, 3);

    // The target's columns have the mapped types.
    auto c = dst.connect();
    auto types = c.exec("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                        "'public.alltypes'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum");
    std::map<std::string, std::string> typeOf;
    for (int i = 0; i < types.rows(); ++i)
        typeOf[types.text(i, 0)] = types.text(i, 1);
    EXPECT_EQ(typeOf["biu"], "numeric(20,0)");
    EXPECT_EQ(typeOf["iu"], "bigint");
    EXPECT_EQ(typeOf["dbig"], "numeric(65,30)");
    EXPECT_EQ(typeOf["f"], "real");
    EXPECT_EQ(typeOf["bt64"], "bit(64)");
    EXPECT_EQ(typeOf["dtm3"], "timestamp(3) without time zone");
    EXPECT_EQ(typeOf["ts"], "timestamp(6) with time zone");
    EXPECT_EQ(typeOf["tm6"], "interval(6)");
    EXPECT_EQ(typeOf["c10"], "character(10)");
    EXPECT_EQ(typeOf["vc"], "character varying(20)");
    EXPECT_EQ(typeOf["js"], "json");
    EXPECT_EQ(typeOf["bin8"], "bytea");
    EXPECT_EQ(typeOf["en"], "text");

    for (const auto &e : kExpected) {
        EXPECT_EQ(pgText(dst, "public.alltypes", e.column, 1), e.row1) << e.column;
        EXPECT_EQ(pgText(dst, "public.alltypes", e.column, 2), e.row2) << e.column;
        EXPECT_EQ(pgText(dst, "public.alltypes", e.column, 3), "NULL") << e.column;
    }
    // The version is the snapshot's binlog position (the test server logs in ROW format).
    auto v = c.exec("SELECT min(_driftless_version), max(_driftless_version) FROM public.alltypes");
    EXPECT_EQ(v.text(0, 0), v.text(0, 1));
    EXPECT_GT(std::stoll(v.text(0, 0)), 1LL << 52);
}

TEST(MysqlSource, fullRefreshIntoSqliteKeepsValuesExact)
{
    MyTestDb src("mysrc");
    TempDir dir;
    src.exec(kTypes);
    src.exec(kTypeRows);
    RecordingObserver obs;
    const std::string path = dir.file("t.db");
    TableSync sync(makeJob("p", spec(src.name(), "alltypes", Strategy::FullRefresh), myEndpoint("src", src.name()),
                           sqliteEndpoint("dst", path)),
                   obs);
    sync.runOnce({});
    SqliteDb db(path, SqliteDb::Mode::ReadOnly);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM alltypes"), 3);
    EXPECT_EQ(sqliteText(db, "SELECT biu FROM alltypes WHERE id = 1"), "18446744073709551615");
    EXPECT_EQ(sqliteText(db, "SELECT typeof(biu) FROM alltypes WHERE id = 1"), "text") << "numeric stays exact text";
    EXPECT_EQ(sqliteText(db, "SELECT d FROM alltypes WHERE id = 1"), "-12.30");
    EXPECT_EQ(sqliteText(db, "SELECT ltx FROM alltypes WHERE id = 1"), "κόσμε 😀");
    EXPECT_EQ(sqliteText(db, "SELECT hex(bin8) FROM alltypes WHERE id = 1"), "0102000000000000");
    EXPECT_EQ(sqliteText(db, "SELECT typeof(bl) FROM alltypes WHERE id = 1"), "blob");
    EXPECT_EQ(sqliteText(db, "SELECT ts FROM alltypes WHERE id = 1"), "2024-01-02 03:04:05.123456+00:00");
    EXPECT_EQ(sqliteText(db, "SELECT db FROM alltypes WHERE id = 1"), "0.1");
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM alltypes WHERE id = 3 AND tx IS NULL AND bl IS NULL"), 1);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM alltypes WHERE id = 2 AND tx = '' AND bl = x''"), 1)
        << "empty stays empty, not NULL";
}

TEST(MysqlSource, aZeroDateStopsTheTableByNameAndKeepsWhatWasSynced)
{
    MyTestDb src("mysrc");
    PgTestDb dst("mydst");
    src.exec("CREATE TABLE t (id int PRIMARY KEY, born date, v int)");
    src.exec("INSERT INTO t VALUES (1, '2020-01-01', 1), (2, '2020-01-02', 2)");
    RecordingObserver obs;
    auto job = makeJob("p", spec(src.name(), "t", Strategy::FullRefresh), myEndpoint("src", src.name()),
                       pgEndpoint("dst", dst.name()), "public");
    TableSync(job, obs).runOnce({});
    ASSERT_EQ(dst.scalar("SELECT count(*) FROM public.t"), "2");

    auto c = src.connect();
    c.exec("SET SESSION sql_mode = ''");
    c.exec("INSERT INTO t VALUES (7, '0000-00-00', 3)");
    try {
        TableSync(job, obs).runOnce({});
        FAIL() << "a zero date must not be synced silently";
    } catch (const SchemaError &e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("column born"), std::string::npos) << m;
        EXPECT_NE(m.find("id=7"), std::string::npos) << m;
        EXPECT_NE(m.find("0000-00-00"), std::string::npos) << m;
        EXPECT_FALSE(e.hint().empty());
    }
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.t"), "2") << "the old copy stays until a refresh succeeds";
}

TEST(MysqlSource, cursorSyncPagesOverACompositeTextKeyAndPicksUpChanges)
{
    MyTestDb src("mysrc");
    PgTestDb dst("mydst");
    // A text key in a case-insensitive collation and a second key column: the keyset must walk
    // pages in the server's own order or it skips rows.
    src.exec("CREATE TABLE orders (region varchar(10) COLLATE utf8mb4_general_ci NOT NULL, n int NOT NULL, "
             "amount decimal(10,2), updated_at datetime(6) NOT NULL, PRIMARY KEY (region, n), KEY (updated_at))");
    auto c = src.connect();
    c.exec("INSERT INTO orders SELECT ELT(1 + seq % 5, 'b', 'A', 'a2', 'Z', 'ä'), seq, seq / 10, "
           "NOW(6) - INTERVAL 1 DAY + INTERVAL seq SECOND FROM seq_1_to_1000");
    TableSpec s = spec(src.name(), "orders", Strategy::Cursor);
    s.cursor = "updated_at";
    s.pageSize = 37;
    RecordingObserver obs;
    auto job = makeJob("p", s, myEndpoint("src", src.name()), pgEndpoint("dst", dst.name()), "public");
    TableSync(job, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.orders"), "1000");
    EXPECT_EQ(dst.scalar("SELECT sum(amount) FROM public.orders"), c.scalar("SELECT SUM(amount) FROM orders").value());

    // Changes: updated rows (with the source clock), a row whose updated_at lies (a commit that
    // landed with a time inside the lookback window, behind the stored cursor), and new rows.
    c.exec("UPDATE orders SET amount = -1, updated_at = NOW(6) WHERE n % 100 = 0");
    c.exec("UPDATE orders SET amount = -2, updated_at = NOW(6) - INTERVAL 5 MINUTE WHERE n = 7");
    c.exec("INSERT INTO orders VALUES ('new', 1, 5.00, NOW(6)), ('NEW2', 2, 6.00, NOW(6))");
    TableSync(job, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.orders"), "1002");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.orders WHERE amount = -1"), "10");
    EXPECT_EQ(dst.scalar("SELECT amount FROM public.orders WHERE n = 7"), "-2.00")
        << "a row dated inside the lookback window is re-read";
    EXPECT_EQ(dst.scalar("SELECT sum(amount) FROM public.orders"), c.scalar("SELECT SUM(amount) FROM orders").value());

    // The cursor is the source's clock, never a row's future date.
    c.exec("UPDATE orders SET amount = 99, updated_at = NOW(6) + INTERVAL 1 DAY WHERE n = 3");
    TableSync(job, obs).runOnce({});
    c.exec("UPDATE orders SET amount = 42, updated_at = NOW(6) WHERE n = 4");
    TableSync(job, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT amount FROM public.orders WHERE n = 4"), "42.00")
        << "a future-dated row did not push the cursor past later changes";
    auto pg = dst.connect();
    auto cp = CursorState::fromJson(
        pg.exec("SELECT position FROM _driftless.checkpoints WHERE source_table LIKE '%orders'").text(0, 0));
    ASSERT_TRUE(cp.cursor);
    EXPECT_LT(*cp.cursor, c.scalar("SELECT DATE_FORMAT(NOW(6) + INTERVAL 1 HOUR, '%Y-%m-%d %H:%i:%s.%f')").value());
}

TEST(MysqlSource, cursorSyncByAnIntegerCursorIntoSqlite)
{
    MyTestDb src("mysrc");
    TempDir dir;
    src.exec("CREATE TABLE ledger (id bigint unsigned PRIMARY KEY, seq bigint NOT NULL, note varchar(50), KEY (seq))");
    auto c = src.connect();
    c.exec("INSERT INTO ledger SELECT 18446744073709550000 + seq, seq, CONCAT('n', seq) FROM seq_1_to_500");
    TableSpec s = spec(src.name(), "ledger", Strategy::Cursor);
    s.cursor = "seq";
    s.lookback = "5";
    s.pageSize = 64;
    RecordingObserver obs;
    const std::string path = dir.file("l.db");
    auto job = makeJob("p", s, myEndpoint("src", src.name()), sqliteEndpoint("dst", path));
    TableSync(job, obs).runOnce({});
    c.exec("INSERT INTO ledger VALUES (18446744073709551615, 501, 'last'), (1, 498, 'late')");
    TableSync(job, obs).runOnce({});
    SqliteDb db(path, SqliteDb::Mode::ReadOnly);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM ledger"), 502);
    EXPECT_EQ(sqliteText(db, "SELECT note FROM ledger WHERE id = '18446744073709551615'"), "last");
    EXPECT_EQ(sqliteText(db, "SELECT note FROM ledger WHERE id = '1'"), "late") << "inside the 5-value lookback";
}

TEST(MysqlSource, badEndpointsAndTablesSayWhatToDo)
{
    MyTestDb src("mysrc");
    PgTestDb dst("mydst");
    RecordingObserver obs;
    auto ep = myEndpoint("src", src.name());
    {
        auto job = makeJob("p", spec(src.name(), "missing", Strategy::FullRefresh), ep, pgEndpoint("dst", dst.name()));
        try {
            TableSync(job, obs).runOnce({});
            FAIL();
        } catch (const SchemaError &e) {
            EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
        }
    }
    {
        auto job = makeJob("p", spec("nosuchdb", "t", Strategy::FullRefresh), ep, pgEndpoint("dst", dst.name()));
        try {
            TableSync(job, obs).runOnce({});
            FAIL();
        } catch (const SchemaError &e) {
            EXPECT_NE(std::string(e.what()).find("database nosuchdb does not exist"), std::string::npos) << e.what();
        }
    }
    {
        auto bad = ep;
        bad.dsn =
            "mysql://driftless:wrong@" + servers().myHost + ":" + std::to_string(servers().myPort) + "/" + src.name();
        try {
            MysqlConnection conn(bad.dsn, bad.name);
            FAIL();
        } catch (const ConnectionError &e) {
            EXPECT_NE(std::string(e.what()).find("endpoint 'src'"), std::string::npos) << e.what();
            EXPECT_EQ(std::string(e.what()).find("wrong"), std::string::npos) << "never the password";
            EXPECT_NE(e.hint().find("password"), std::string::npos);
            EXPECT_FALSE(e.isTransient());
        }
    }
    src.exec("CREATE TABLE nokey (a int, updated_at datetime)");
    TableSpec s = spec(src.name(), "nokey", Strategy::Cursor);
    auto job = makeJob("p", s, ep, pgEndpoint("dst", dst.name()));
    try {
        TableSync(job, obs).runOnce({});
        FAIL();
    } catch (const SchemaError &e) {
        EXPECT_NE(std::string(e.what()).find("no primary key"), std::string::npos) << e.what();
    }
}

TEST(MysqlSource, doctorChecksTheSourceTablesAndTheBinlogSettings)
{
    MyTestDb src("mysrc");
    PgTestDb dst("mydst");
    src.exec("CREATE TABLE good (id int PRIMARY KEY, updated_at timestamp(6) NOT NULL, KEY (updated_at))");
    src.exec("CREATE TABLE slow (id int PRIMARY KEY, changed datetime NULL)");
    src.exec("CREATE TABLE nokey (a int)");
    Workspace ws;
    ws.endpoints["shop"] = myEndpoint("shop", src.name());
    ws.endpoints["dw"] = pgEndpoint("dw", dst.name());
    PipelineSpec p;
    p.name = "shop_to_dw";
    p.source = "shop";
    p.target = "dw";
    TableSpec good = spec(src.name(), "good", Strategy::Cursor);
    TableSpec slow = spec(src.name(), "slow", Strategy::Cursor);
    slow.cursor = "changed";
    TableSpec nokey = spec(src.name(), "nokey", Strategy::Cursor);
    TableSpec missing = spec(src.name(), "missing", Strategy::FullRefresh);
    p.tables = {good, slow, nokey, missing};
    ws.pipelines.push_back(p);

    auto findings = runDoctor(ws);
    auto find = [&](const std::string &level, const std::string &subject, const std::string &text) {
        for (const auto &f : findings)
            if (std::string(toString(f.level)) == level && f.subject == subject &&
                f.message.find(text) != std::string::npos)
                return true;
        return false;
    };
    std::string all;
    for (const auto &f : findings)
        all += std::string(toString(f.level)) + " " + f.subject + ": " + f.message + " | " + f.fix + "\n";
    EXPECT_TRUE(find("ok", "endpoint shop", "MariaDB")) << all;
    EXPECT_TRUE(find("ok", "endpoint shop", "binlog ready for change data capture")) << all;
    EXPECT_TRUE(find("ok", "table " + TableRef{src.name(), "good"}.display(), "cursor")) << all;
    EXPECT_TRUE(find("warn", "table " + TableRef{src.name(), "slow"}.display(), "is not indexed")) << all;
    EXPECT_TRUE(find("warn", "table " + TableRef{src.name(), "slow"}.display(), "allows NULL")) << all;
    EXPECT_TRUE(find("error", "table " + TableRef{src.name(), "nokey"}.display(), "no primary key")) << all;
    EXPECT_TRUE(find("error", "table " + TableRef{src.name(), "missing"}.display(), "does not exist")) << all;

    // The probe behind "Test connection": the test server is ready for CDC and the user may read
    // the binlog.
    auto probe = probeMysql(myDsn(src.name()));
    ASSERT_TRUE(probe.connected) << probe.error;
    EXPECT_TRUE(probe.mariadb);
    EXPECT_TRUE(probe.binlog.empty()) << probe.binlog.front().setting;
    EXPECT_TRUE(probe.canReplicate);
    EXPECT_EQ(probe.tables, 3);
    EXPECT_TRUE(probe.advice().empty());
    auto bad = probeMysql(myDsn(src.name()), std::string("not the password"));
    EXPECT_FALSE(bad.connected);
    EXPECT_EQ(bad.code, "1045");
    EXPECT_NE(bad.hint.find("password"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Binlog change data capture.

namespace {

struct Cdc {
    MyTestDb src{"mycdc"};
    PgTestDb dst{"mycdcdst"};
    RecordingObserver obs;
    std::vector<TableJob> jobs;

    void add(const std::string &table, long long pageSize = 50'000)
    {
        TableSpec s = spec(src.name(), table, Strategy::Cdc);
        s.pageSize = pageSize;
        jobs.push_back(makeJob("mp", s, myEndpoint("src", src.name()), pgEndpoint("dst", dst.name()), "public"));
    }
    /// Loads what needs loading and streams until the source's current binlog end is applied.
    void once()
    {
        MysqlCdcPipeline p(jobs, obs);
        p.run({}, {true, nullptr});
    }
};

std::string myRows(MyTestDb &db, const std::string &sql)
{
    auto c = db.connect();
    auto r = c.query(sql);
    std::string out;
    for (const auto &row : r.rows) {
        for (size_t i = 0; i < row.size(); ++i)
            out += (i ? "|" : "") + row[i].value_or("NULL");
        out += "\n";
    }
    return out;
}

std::string pgRows(PgTestDb &db, const std::string &sql)
{
    auto c = db.connect();
    auto r = c.exec(sql);
    std::string out;
    for (int i = 0; i < r.rows(); ++i) {
        for (int j = 0; j < r.columns(); ++j)
            out += (j ? "|" : "") + (r.isNull(i, j) ? std::string("NULL") : r.text(i, j));
        out += "\n";
    }
    return out;
}

} // namespace

TEST(MysqlCdc, loadsThenAppliesInsertsUpdatesDeletesAndKeyChangesInCommitOrder)
{
    Cdc f;
    f.src.exec("CREATE TABLE acct (id int PRIMARY KEY, owner varchar(20) NOT NULL, balance decimal(12,2) NOT NULL)");
    f.src.exec("INSERT INTO acct SELECT seq, CONCAT('o', seq), seq * 10 FROM seq_1_to_2500");
    f.add("acct", 1000);
    f.once();
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM public.acct"), "2500");
    long long chunks = 0;
    for (const auto &a : f.obs.applied)
        chunks += a.result.direct ? 1 : 0;
    EXPECT_EQ(chunks, 3) << "the initial load copies in primary-key chunks";

    auto c = f.src.connect();
    c.exec("UPDATE acct SET balance = balance + 1 WHERE id <= 100");
    c.exec("DELETE FROM acct WHERE id BETWEEN 200 AND 299");
    c.exec("INSERT INTO acct VALUES (3000, 'new', 1.50)");
    c.exec("UPDATE acct SET id = 4000 WHERE id = 3000"); // the key changes
    c.exec("START TRANSACTION");
    c.exec("UPDATE acct SET owner = 'first' WHERE id = 1");
    c.exec("UPDATE acct SET owner = 'second' WHERE id = 1");
    c.exec("COMMIT");
    c.exec("START TRANSACTION");
    c.exec("UPDATE acct SET owner = 'rolled back' WHERE id = 2");
    c.exec("ROLLBACK");
    f.once();
    const std::string q = "SELECT id, owner, balance FROM acct ORDER BY id";
    EXPECT_EQ(pgRows(f.dst, "SELECT id, owner, balance FROM public.acct ORDER BY id"), myRows(f.src, q));
    EXPECT_EQ(f.dst.scalar("SELECT owner FROM public.acct WHERE id = 1"), "second");
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM public.acct WHERE id = 3000"), "0");

    // A restart resumes after what was applied: nothing is written again.
    auto serverEnd = [&c] {
        auto r = c.query("SHOW MASTER STATUS");
        return binlog::Position{*r.at(0, 0), std::stoull(*r.at(0, 1))};
    };
    const auto endBefore = serverEnd();
    f.obs.applied.clear();
    f.once();
    const auto endAfter = serverEnd();
    long long written = 0;
    for (const auto &a : f.obs.applied)
        written += a.result.rowsWritten;
    EXPECT_EQ(written, 0);

    // The stored position is the binlog's, typed, between the server's own end before the run
    // and after it (other tests write to the same server meanwhile); status shows it to a DBA.
    const std::string position = f.dst.scalar("SELECT position FROM _driftless.checkpoints WHERE pipeline = 'mp'");
    const auto stored = BinlogCdcPosition::fromJson(position);
    ASSERT_TRUE(stored) << position;
    EXPECT_TRUE(stored->streaming());
    EXPECT_GE(binlog::positionVersion(stored->at), binlog::positionVersion(endBefore));
    EXPECT_LE(binlog::positionVersion(stored->at), binlog::positionVersion(endAfter));
    TableReport report;
    report.strategy = Strategy::Cdc;
    report.checkpoint = position;
    const auto status = tablesJsonValue({report}).at(0);
    EXPECT_EQ(status["last_synced_binlog"], stored->at.file + ":" + std::to_string(stored->at.offset));
    EXPECT_TRUE(status["last_synced_lsn"].is_null());
}

// Each load chunk reads at a snapshot of its own. When the source writes elsewhere between
// chunks, the later chunks' versions are newer than the position the stream starts from; the
// stream checkpoint must still be stored (it was refused by the checkpoint's version guard, so
// every restart loaded and streamed from the load's start again).
TEST(MysqlCdc, aLoadWhoseChunksSawOtherWritesStoresItsStreamPosition)
{
    Cdc f;
    f.src.exec("CREATE TABLE acct (id int PRIMARY KEY, v int NOT NULL)");
    f.src.exec("CREATE TABLE noise (id int AUTO_INCREMENT PRIMARY KEY, at varchar(20))");
    f.src.exec("INSERT INTO acct SELECT seq, seq FROM seq_1_to_250");
    f.add("acct", 100);
    auto noise = f.src.connect();
    int writes = 0;
    f.obs.onBatch = [&](size_t) {
        if (writes < 2) { // bounded: one write after each of the first two chunks (none after the last)
            ++writes;
            noise.exec("INSERT INTO noise (at) VALUES ('between chunks')");
        }
    };
    f.once();
    f.obs.onBatch = nullptr;
    ASSERT_EQ(writes, 2);
    for (const auto &a : f.obs.applied)
        std::cerr << "DBG " << a.result.direct << " " << a.checkpoint.version << " " << a.checkpoint.position << "\n";
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM public.acct"), "250");
    const std::string q = "SELECT position FROM _driftless.checkpoints WHERE pipeline = 'mp'";
    const auto stored = BinlogCdcPosition::fromJson(f.dst.scalar(q));
    ASSERT_TRUE(stored);
    EXPECT_TRUE(stored->streaming()) << f.dst.scalar(q);

    // A restart streams from there: no load chunk again, and a change made since arrives.
    f.src.exec("UPDATE acct SET v = -1 WHERE id = 7");
    f.obs.applied.clear();
    f.once();
    for (const auto &a : f.obs.applied)
        EXPECT_FALSE(a.result.direct) << "a restart must not load again";
    EXPECT_EQ(f.dst.scalar("SELECT v FROM public.acct WHERE id = 7"), "-1");
    const auto after = BinlogCdcPosition::fromJson(f.dst.scalar(q));
    ASSERT_TRUE(after);
    EXPECT_TRUE(after->streaming());
}

// P4: a value the target cannot hold (a zero date written under a permissive sql_mode) stops
// its table alone. Before, it failed the whole pipeline, and every restart failed on it again.
TEST(MysqlCdc, aZeroDateStopsItsTableAloneUntilARunningSyncTakesItsReSnapshot)
{
    Cdc f;
    f.src.exec("CREATE TABLE zerod (id int PRIMARY KEY, born date, v int)");
    f.src.exec("CREATE TABLE other (id int PRIMARY KEY, v int)");
    f.src.exec("INSERT INTO zerod VALUES (1, '2020-01-01', 1), (2, '2020-01-02', 2)");
    f.src.exec("INSERT INTO other VALUES (1, 1)");
    f.add("zerod");
    f.add("other");
    const std::string zerod = f.jobs[0].spec.table.display();
    auto runOnce = [&] {
        Scheduler::Options o;
        o.once = true;
        return Scheduler(f.jobs, f.obs, o).run({});
    };
    ASSERT_EQ(runOnce(), 0);
    const std::string others = "SELECT id, v FROM other ORDER BY id";
    auto c = f.src.connect();
    c.exec("SET SESSION sql_mode = ''");
    c.exec("START TRANSACTION");
    c.exec("INSERT INTO other VALUES (11, 11)");
    c.exec("INSERT INTO zerod VALUES (7, '0000-00-00', 3)");
    c.exec("INSERT INTO other VALUES (12, 12)");
    c.exec("COMMIT");
    c.exec("INSERT INTO other VALUES (13, 13)");
    EXPECT_EQ(runOnce(), 1) << "the stopped table is reported";
    EXPECT_EQ(pgRows(f.dst, "SELECT id, v FROM public.other ORDER BY id"), myRows(f.src, others))
        << "the other table streams on, its part of the same transaction included";
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM public.zerod"), "2") << "what was synced stays";
    const std::string red = f.obs.lastStateOf(zerod);
    EXPECT_EQ(red.rfind("error: stopped: ", 0), 0u) << red;
    EXPECT_NE(red.find("id=7"), std::string::npos) << "the key: " << red;
    EXPECT_NE(red.find("0000-00-00"), std::string::npos) << "the value: " << red;
    EXPECT_NE(red.find("driftless-cli resnapshot mp " + zerod), std::string::npos) << "what to do: " << red;

    // A restart keeps it stopped with its reason, instead of failing on the same event again.
    c.exec("INSERT INTO other VALUES (14, 14)");
    c.exec("INSERT INTO zerod VALUES (8, '2020-01-08', 8)");
    EXPECT_EQ(runOnce(), 1);
    EXPECT_EQ(pgRows(f.dst, "SELECT id, v FROM public.other ORDER BY id"), myRows(f.src, others));
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM public.zerod"), "2") << "a stopped table takes no changes";
    EXPECT_EQ(f.obs.lastStateOf(zerod), red);

    // Fixed on the source and re-snapshotted (the checkpoint removed, as `resnapshot` does): the
    // running sync sees it within seconds, loads the table again and streams on.
    c.exec("UPDATE zerod SET born = NULL WHERE id = 7");
    std::stop_source stop;
    std::thread runner([&] { Scheduler(f.jobs, f.obs, {}).run(stop.get_token()); });
    auto streaming = [&] { return f.obs.lastStateOf(zerod) == "streaming"; };
    const std::string other = f.jobs[1].spec.table.display();
    for (int i = 0; i < 1200 && f.obs.lastStateOf(other) != "streaming"; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(f.obs.lastStateOf(other), "streaming") << "the sync did not start";
    // Streaming with the table stopped: the pipeline keeps running (it once mistook the stop for
    // a Resume and restarted every 250 ms).
    f.obs.clearEvents();
    std::this_thread::sleep_for(std::chrono::seconds(2));
    EXPECT_FALSE(f.obs.sawEvent("resumed")) << "a stopped table is not resumed by itself";
    EXPECT_EQ(f.obs.lastStateOf(zerod), red);
    createMerger(f.jobs[0].target, {"mp", f.jobs[0].spec.table, f.jobs[0].targetName, Strategy::Cdc})
        ->clearCheckpoint();
    const std::string rows = "SELECT id, born, v FROM zerod ORDER BY id";
    for (int i = 0; i < 1200 && !(streaming() && pgRows(f.dst, "SELECT id, born, v FROM public.zerod ORDER BY id") ==
                                                     myRows(f.src, rows));
         ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    c.exec("INSERT INTO zerod VALUES (9, '2020-01-09', 9)");
    for (int i = 0; i < 1200 && f.dst.scalar("SELECT count(*) FROM public.zerod WHERE id = 9") != "1"; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop.request_stop();
    runner.join();
    EXPECT_EQ(pgRows(f.dst, "SELECT id, born, v FROM public.zerod ORDER BY id"), myRows(f.src, rows));
    EXPECT_EQ(f.obs.lastStateOf(zerod), "idle") << "streamed again, then stopped by us";
}

TEST(MysqlCdc, everyColumnTypeArrivesThroughTheBinlogAsTheMappingSays)
{
    Cdc f;
    f.src.exec(kTypes);
    f.add("alltypes");
    f.once(); // empty table: loads nothing, streams from here
    f.src.exec(kTypeRows);
    f.once();
    for (const auto &e : kExpected) {
        EXPECT_EQ(pgText(f.dst, "public.alltypes", e.column, 1), e.row1) << e.column;
        EXPECT_EQ(pgText(f.dst, "public.alltypes", e.column, 2), e.row2) << e.column;
        EXPECT_EQ(pgText(f.dst, "public.alltypes", e.column, 3), "NULL") << e.column;
    }
    // Updates carry both images; deletes remove.
    f.src.exec("UPDATE alltypes SET d = -0.01, c10 = 'zz', ts = '2030-05-06 07:08:09.5', bl = x'00' WHERE id = 1");
    f.src.exec("DELETE FROM alltypes WHERE id = 2");
    f.once();
    EXPECT_EQ(pgText(f.dst, "public.alltypes", "d", 1), "-0.01");
    EXPECT_EQ(pgText(f.dst, "public.alltypes", "c10", 1), "zz");
    EXPECT_EQ(pgText(f.dst, "public.alltypes", "ts", 1), "2030-05-06 07:08:09.5+00");
    EXPECT_EQ(pgText(f.dst, "public.alltypes", "bl", 1), "\\x00");
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM public.alltypes"), "2");
}

TEST(MysqlCdc, streamsAcrossBinlogRotationAddsNewColumnsAndReplaysTruncate)
{
    Cdc f;
    f.src.exec("CREATE TABLE t (id int PRIMARY KEY, v int)");
    f.src.exec("INSERT INTO t VALUES (1, 1), (2, 2)");
    f.add("t");
    f.once();
    auto c = f.src.connect();
    c.exec("INSERT INTO t VALUES (3, 3)");
    c.exec("FLUSH BINARY LOGS");
    c.exec("INSERT INTO t VALUES (4, 4)");
    c.exec("ALTER TABLE t ADD COLUMN note varchar(10)");
    c.exec("INSERT INTO t VALUES (5, 5, 'five')");
    f.once();
    EXPECT_EQ(pgRows(f.dst, "SELECT id, v, note FROM public.t ORDER BY id"),
              "1|1|NULL\n2|2|NULL\n3|3|NULL\n4|4|NULL\n5|5|five\n");
    c.exec("TRUNCATE TABLE t");
    c.exec("INSERT INTO t VALUES (9, 9, 'after')");
    f.once();
    EXPECT_EQ(pgRows(f.dst, "SELECT id, v, note FROM public.t ORDER BY id"), "9|9|after\n");
}

TEST(MysqlCdc, streamsContinuouslyUntilStopped)
{
    Cdc f;
    f.src.exec("CREATE TABLE t (id int PRIMARY KEY, v int)");
    f.add("t");
    std::jthread runner([&](std::stop_token st) {
        MysqlCdcPipeline p(f.jobs, f.obs);
        try {
            p.run(st, {false, nullptr});
        } catch (const Cancelled &) {
            // stopped during the load: fine
        } catch (const std::exception &e) {
            ADD_FAILURE() << e.what();
        }
    });
    auto c = f.src.connect();
    for (int i = 1; i <= 200; ++i)
        c.exec("INSERT INTO t VALUES (" + std::to_string(i) + ", " + std::to_string(i) + ")");
    c.exec("UPDATE t SET v = -v WHERE id % 2 = 0");
    std::string got;
    for (int i = 0; i < 100; ++i) {
        try {
            got = f.dst.scalar("SELECT count(*) || ':' || coalesce(sum(v), 0) FROM public.t");
        } catch (const Error &) {
            // The pipeline has not created the target table yet.
        }
        if (got == "200:-100")
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(got, "200:-100");
    runner.request_stop();
}

TEST(MysqlCdc, streamsIntoSqliteAndMariaDbTargetsToo)
{
    MyTestDb src("mycdc");
    MyTestDb dstMy("mycdcmy");
    TempDir dir;
    src.exec("CREATE TABLE acct (id int PRIMARY KEY, owner varchar(20) NOT NULL, balance decimal(12,2) NOT NULL, "
             "born date, pic blob)");
    src.exec("INSERT INTO acct SELECT seq, CONCAT('o', seq), seq * 10, '2020-01-01' + INTERVAL seq DAY, "
             "IF(seq % 2, x'00ff', NULL) FROM seq_1_to_500");
    TableSpec s = spec(src.name(), "acct", Strategy::Cdc);
    s.pageSize = 200;
    const std::string lite = dir.file("t.db");
    RecordingObserver obs;
    std::vector<TableJob> toLite{makeJob("ml", s, myEndpoint("src", src.name()), sqliteEndpoint("dst", lite))};
    std::vector<TableJob> toMy{makeJob("mm", s, myEndpoint("src", src.name()), myEndpoint("dst", dstMy.name()))};
    auto once = [&](std::vector<TableJob> &jobs) {
        MysqlCdcPipeline p(jobs, obs);
        p.run({}, {true, nullptr});
    };
    once(toLite);
    once(toMy);
    auto c = src.connect();
    c.exec("UPDATE acct SET balance = -balance, pic = x'01' WHERE id % 10 = 0");
    c.exec("DELETE FROM acct WHERE id > 450");
    c.exec("UPDATE acct SET id = 1000 WHERE id = 1");
    c.exec("INSERT INTO acct VALUES (2000, 'new', 0.01, NULL, x'')");
    once(toLite);
    once(toMy);
    const std::string q = "SELECT id, owner, balance, born, HEX(pic) FROM acct ORDER BY id";
    EXPECT_EQ(myRows(dstMy, q), myRows(src, q));
    SqliteDb db(lite, SqliteDb::Mode::ReadOnly);
    auto st = db.prepare("SELECT id, owner, balance, born, CASE WHEN pic IS NOT NULL THEN hex(pic) END FROM acct "
                         "ORDER BY id");
    std::string got;
    while (st.step())
        got += st.text(0) + "|" + st.text(1) + "|" + st.text(2) + "|" + (st.isNull(3) ? "NULL" : st.text(3)) + "|" +
               (st.isNull(4) ? "NULL" : st.text(4)) + "\n";
    EXPECT_EQ(got, myRows(src, q));
}

TEST(MysqlCdc, aTransactionBiggerThanABatchIsAppliedWholeInPieces)
{
    Cdc f;
    f.src.exec("CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL, note varchar(20))");
    f.add("t");
    f.once();
    auto c = f.src.connect();
    // 70,000 rows (more than three batches' worth) and updates of some of them, in one
    // transaction: the target sees all of it or none of it, with the later change winning.
    c.exec("START TRANSACTION");
    c.exec("INSERT INTO t SELECT seq, seq, 'first' FROM seq_1_to_70000");
    c.exec("UPDATE t SET v = -v, note = 'second' WHERE id % 1000 = 0");
    c.exec("DELETE FROM t WHERE id > 69990");
    c.exec("COMMIT");
    f.obs.applied.clear();
    f.once();
    EXPECT_EQ(pgRows(f.dst, "SELECT count(*), sum(v), count(*) FILTER (WHERE note = 'second') FROM public.t"),
              myRows(f.src, "SELECT COUNT(*), SUM(v), SUM(note = 'second') FROM t"));
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM public.t"), "69990");
    int withRows = 0;
    for (const auto &a : f.obs.applied)
        withRows += a.result.rowsInBatch > 0 ? 1 : 0;
    EXPECT_EQ(withRows, 1) << "one target transaction, one checkpoint, for the one source transaction";
}

TEST(MysqlSource, fullRefreshAndCursorIntoAMariaDbTarget)
{
    MyTestDb src("mysrc");
    MyTestDb dst("mydstmy");
    src.exec("CREATE TABLE acct (id int PRIMARY KEY, owner varchar(20) NOT NULL, balance decimal(12,2) NOT NULL, "
             "opened datetime(3), seen timestamp(6) NULL, pic blob, KEY (opened))");
    src.exec("INSERT INTO acct SELECT seq, CONCAT('ö', seq), seq * -1.25, '2024-01-01' + INTERVAL seq MINUTE, "
             "'2024-06-01 12:00:00.123456' + INTERVAL seq SECOND, IF(seq % 3, x'00ff10', NULL) FROM seq_1_to_700");
    RecordingObserver obs;
    TableSpec full = spec(src.name(), "acct", Strategy::FullRefresh);
    TableSync(makeJob("p", full, myEndpoint("src", src.name()), myEndpoint("dst", dst.name())), obs).runOnce({});
    const std::string q = "SELECT id, owner, balance, opened, seen, HEX(pic) FROM acct ORDER BY id";
    EXPECT_EQ(myRows(dst, q), myRows(src, q));

    MyTestDb dst2("mydstmy2");
    TableSpec cur = spec(src.name(), "acct", Strategy::Cursor);
    cur.cursor = "opened";
    cur.pageSize = 128;
    auto job = makeJob("p2", cur, myEndpoint("src", src.name()), myEndpoint("dst", dst2.name()));
    TableSync(job, obs).runOnce({});
    src.exec("UPDATE acct SET owner = 'moved', opened = NOW(3) WHERE id % 50 = 0");
    TableSync(job, obs).runOnce({});
    EXPECT_EQ(myRows(dst2, q), myRows(src, q));
}

TEST(MysqlCdc, storedAndVirtualGeneratedColumnsFollowTheColumnsTheyDependOnByEveryStrategy)
{
    // With binlog_row_image FULL, MariaDB logs the values of STORED and VIRTUAL columns alike; a
    // session running with a MINIMAL image logs STORED ones but leaves VIRTUAL ones out, even
    // from inserts, so the stream reads those from the source by key.
    MyTestDb src("mygen");
    PgTestDb dst("mygendst");
    TempDir dir;
    src.exec("CREATE TABLE gen (id int PRIMARY KEY, price decimal(10,2) NOT NULL, qty int, "
             "updated_at timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6), "
             "total decimal(20,2) AS (price * qty) STORED, "
             "label varchar(40) AS (CONCAT('#', id, '/', COALESCE(qty, -1))) VIRTUAL, KEY (updated_at))");
    src.exec("INSERT INTO gen (id, price, qty) SELECT seq, seq * 1.25, NULLIF(seq % 7, 3) FROM seq_1_to_500");
    auto job = [&](const std::string &pipeline, Strategy s, const Endpoint &target,
                   std::optional<std::string> schema = std::nullopt) {
        TableSpec t = spec(src.name(), "gen", s);
        t.pageSize = 200;
        return makeJob(pipeline, t, myEndpoint("src", src.name()), target, schema);
    };
    std::vector<TableJob> cdcPg{job("mgp", Strategy::Cdc, pgEndpoint("dst", dst.name()), "public")};
    std::vector<TableJob> cdcLite{job("mgl", Strategy::Cdc, sqliteEndpoint("l", dir.file("cdc.db")))};
    TableJob fullPg = job("mgf", Strategy::FullRefresh, pgEndpoint("dst", dst.name()), "fr");
    TableJob cursorLite = job("mgc", Strategy::Cursor, sqliteEndpoint("c", dir.file("cursor.db")));
    RecordingObserver obs;
    auto syncAll = [&] {
        MysqlCdcPipeline(cdcPg, obs).run({}, {true, nullptr});
        MysqlCdcPipeline(cdcLite, obs).run({}, {true, nullptr});
        TableSync(fullPg, obs).runOnce({});
        TableSync(cursorLite, obs).runOnce({});
    };
    // The generated values as each engine's own SQL prints them; cursor sync does not see
    // deletes, so its target is compared on the keys no change removed.
    auto my = [&](const std::string &where) {
        return src.scalar(
            "SELECT CONCAT(COUNT(*), ' ', GROUP_CONCAT(CONCAT(id, '=', COALESCE(total, 'null'), '|', label) "
            "ORDER BY id SEPARATOR ',')) FROM gen" +
            where);
    };
    auto pg = [&](const std::string &table) {
        return dst.scalar("SELECT count(*) || ' ' || string_agg(id || '=' || coalesce(total::text, 'null') || '|' || "
                          "label, ',' ORDER BY id) FROM " +
                          table);
    };
    auto lite = [&](const std::string &file, const std::string &where) {
        SqliteDb db(dir.file(file), SqliteDb::Mode::ReadOnly);
        return sqliteText(db, "SELECT count(*) || ' ' || group_concat(id || '=' || coalesce(total, 'null') || '|' || "
                              "label, ',') FROM (SELECT * FROM gen" +
                                  where + " ORDER BY id)");
    };
    const std::string kept = " WHERE id BETWEEN 2 AND 480";
    auto expectSynced = [&](const char *when) {
        EXPECT_EQ(pg("public.gen"), my("")) << when;
        EXPECT_EQ(lite("cdc.db", ""), my("")) << when;
        EXPECT_EQ(pg("fr.gen"), my("")) << when;
        EXPECT_EQ(lite("cursor.db", kept), my(kept)) << when;
    };
    syncAll();
    expectSynced("after the initial load");

    auto c = src.connect();
    c.exec("UPDATE gen SET qty = COALESCE(qty, 0) + 10 WHERE id <= 50");
    c.exec("UPDATE gen SET price = price * 2 WHERE id BETWEEN 51 AND 60");
    c.exec("UPDATE gen SET id = 5000 WHERE id = 1"); // label depends on the key
    c.exec("INSERT INTO gen (id, price, qty) VALUES (600, 9.99, 3)");
    c.exec("DELETE FROM gen WHERE id > 480 AND id <= 500");
    auto minimal = src.connect();
    minimal.exec("SET SESSION binlog_row_image = 'MINIMAL'");
    minimal.exec("INSERT INTO gen (id, price, qty) VALUES (700, 2.50, 4)");
    minimal.exec("UPDATE gen SET qty = 7 WHERE id BETWEEN 61 AND 70");
    minimal.exec("UPDATE gen SET price = 1.00 WHERE id = 600");
    syncAll();
    expectSynced("after the changes");
    EXPECT_EQ(pg("public.gen"), pg("fr.gen"));
    EXPECT_EQ(dst.scalar("SELECT label FROM public.gen WHERE id = 700"), "#700/4");
}
