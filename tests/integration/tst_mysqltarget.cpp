// A MySQL/MariaDB target end to end: a Postgres source by full refresh (readers see the old or the
// new table, never an empty one) and by cursor, a MariaDB source by cursor into another database
// of the same server, the type mapping (values equal, and a clear error where MySQL cannot hold a
// value), and a CDC-style session committing two tables in one transaction.

#include "core/db/pgcatalog.h"
#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/pg/cdcpipeline.h"
#include "core/engine/commands/doctor.h"
#include "core/engine/endpoints/connect.h"
#include "core/mergers/mysqlmerger.h"
#include "core/mergers/mysqltypes.h"
#include "core/model/error.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {
const char *kAccounts = R"sql(
CREATE TABLE accounts (
    id bigint PRIMARY KEY,
    owner text NOT NULL,
    balance numeric(14,2),
    opened timestamptz,
    active boolean,
    tags text[],
    doc jsonb
);
)sql";

void fill(PgTestDb &db, int from, int to)
{
    db.exec("INSERT INTO accounts SELECT g, 'owner ' || g, (g * 3.17)::numeric(14,2), "
            "'2020-01-01'::timestamptz + g * interval '1 minute', g % 2 = 0, ARRAY['t' || (g % 5), NULL], "
            "jsonb_build_object('g', g, 'nested', jsonb_build_array(g, 'x')) FROM generate_series(" +
            std::to_string(from) + ", " + std::to_string(to) + ") g");
}

TableSpec spec(const std::string &schema, const std::string &table, Strategy s)
{
    TableSpec t;
    t.table = {schema, table};
    t.strategy = s;
    return t;
}

TableSchema describePg(PgTestDb &db, const std::string &table)
{
    auto c = db.connect();
    return pgcatalog::describeTable(c, {"public", table});
}
} // namespace

TEST(MysqlTarget, postgresFullRefreshHoldsEveryValueByTheDocumentedMapping)
{
    PgTestDb src("myt_src");
    MyTestDb dst("myt_dst");
    src.exec(kAccounts);
    fill(src, 1, 5000);
    src.exec("INSERT INTO accounts VALUES (0, 'emoji 😀 and tab\tand \\ backslash', -0.01, "
             "'2024-06-30 23:30:00.123456-02:30', NULL, '{}', '{\"k\": \"ü\"}')");
    RecordingObserver obs;
    TableSync sync(makeJob("p", spec("public", "accounts", Strategy::FullRefresh), pgEndpoint("src", src.name()),
                           myEndpoint("dst", dst.name())),
                   obs);
    EXPECT_EQ(sync.runOnce({}).rowsWritten, 5001);
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM accounts"), "5001");
    EXPECT_EQ(dst.scalar("SELECT SUM(balance) FROM accounts"), src.scalar("SELECT sum(balance) FROM accounts"));
    auto c = dst.connect();
    auto r = c.query("SELECT owner, balance, opened, active, tags, JSON_EXTRACT(doc, '$.nested[1]') FROM accounts "
                     "WHERE id = 4242");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r.text(0, 0), "owner 4242");
    EXPECT_EQ(r.text(0, 1), "13447.14");
    EXPECT_EQ(r.text(0, 2), "2020-01-03 22:42:00.000000");
    EXPECT_EQ(r.text(0, 3), "1");
    EXPECT_EQ(r.text(0, 4), "{t2,NULL}");
    EXPECT_EQ(r.text(0, 5), "\"x\"");
    r = c.query("SELECT owner, balance, opened, active IS NULL, JSON_VALUE(doc, '$.k') FROM accounts WHERE id = 0");
    EXPECT_EQ(r.text(0, 0), "emoji 😀 and tab\tand \\ backslash");
    EXPECT_EQ(r.text(0, 1), "-0.01");
    EXPECT_EQ(r.text(0, 2), "2024-07-01 02:00:00.123456") << "timestamptz is stored in UTC";
    EXPECT_EQ(r.text(0, 3), "1");
    EXPECT_EQ(r.text(0, 4), "ü");
    EXPECT_EQ(c.scalar("SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
                       "TABLE_NAME = 'accounts' AND COLUMN_NAME = 'balance'"),
              "decimal(14,2)");

    // Deletes and updates on the source, then a refresh: the target follows.
    src.exec("DELETE FROM accounts WHERE id % 7 = 0; UPDATE accounts SET owner = 'changed' WHERE id % 11 = 0");
    sync.runOnce({});
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM accounts"), src.scalar("SELECT count(*) FROM accounts"));
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM accounts WHERE owner = 'changed'"),
              src.scalar("SELECT count(*) FROM accounts WHERE owner = 'changed'"));
    EXPECT_EQ(dst.scalar("SELECT strategy FROM _driftless_checkpoints WHERE source_table = 'public.accounts'"),
              "full_refresh");
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND "
                         "TABLE_NAME LIKE '\\_driftless\\_shadow%'"),
              "0");
}

TEST(MysqlTarget, realExtremesLandAsTheSameFloat)
{
    // Postgres prints the lowest and highest real as ±3.4028235e+38, past FLT_MAX as a decimal:
    // MySQL refuses that text for a FLOAT column, so the merger writes the float's exact value.
    PgTestDb src("myt_real_src");
    MyTestDb dst("myt_real_dst");
    src.exec("CREATE TABLE r (id int PRIMARY KEY, x real, d double precision)");
    src.exec("INSERT INTO r VALUES (1, '-3.4028235e+38', 1), (2, '3.4028235e+38', -1.7976931348623157e308), "
             "(3, '1.4e-45', 5e-324), (4, '0.1', 0.1), (5, NULL, NULL)");
    RecordingObserver obs;
    for (Strategy s : {Strategy::FullRefresh, Strategy::Cursor}) {
        SCOPED_TRACE(s == Strategy::Cursor ? "cursor" : "full refresh");
        TableSpec t = spec("public", "r", s);
        if (s == Strategy::Cursor) {
            t.cursor = "id";
            t.targetTable = "r_cursor";
        }
        TableSync sync(makeJob(s == Strategy::Cursor ? "p_cursor" : "p_full", t, pgEndpoint("src", src.name()),
                               myEndpoint("dst", dst.name())),
                       obs);
        EXPECT_EQ(sync.runOnce({}).rowsWritten, 5);
        const std::string table = s == Strategy::Cursor ? "r_cursor" : "r";
        auto c = dst.connect();
        auto rows = c.query("SELECT id, CAST(x AS DOUBLE), d FROM " + table + " ORDER BY id");
        ASSERT_EQ(rows.size(), 5u);
        EXPECT_EQ(rows.text(0, 1), "-3.4028234663852886e38");
        EXPECT_EQ(rows.text(1, 1), "3.4028234663852886e38");
        EXPECT_EQ(rows.text(1, 2), "-1.7976931348623157e308");
        EXPECT_EQ(rows.text(2, 1), "1.401298464324817e-45");
        EXPECT_EQ(rows.text(3, 1), "0.10000000149011612");
        EXPECT_FALSE(rows.at(4, 1).has_value());
    }
}

TEST(MysqlTarget, fullRefreshSwapIsAtomicForReaders)
{
    PgTestDb src("myt_src");
    MyTestDb dst("myt_dst");
    src.exec(kAccounts);
    fill(src, 1, 30000);
    RecordingObserver obs;
    TableSync sync(makeJob("p", spec("public", "accounts", Strategy::FullRefresh), pgEndpoint("src", src.name()),
                           myEndpoint("dst", dst.name())),
                   obs);
    sync.runOnce({});
    dst.exec("CREATE INDEX accounts_by_owner ON accounts (owner(20))");
    fill(src, 30001, 40000);

    std::atomic<bool> done{false};
    std::set<long long> seen;
    std::string readerError;
    long long reads = 0;
    std::thread reader([&] {
        try {
            auto c = dst.connect();
            while (!done) {
                seen.insert(std::stoll(c.scalar("SELECT COUNT(*) FROM accounts").value_or("-1")));
                ++reads;
            }
        } catch (const std::exception &e) {
            readerError = e.what();
        }
    });
    sync.runOnce({});
    src.exec("DELETE FROM accounts WHERE id > 35000");
    sync.runOnce({});
    done = true;
    reader.join();
    EXPECT_EQ(readerError, "");
    EXPECT_GT(reads, 10);
    for (long long n : seen)
        EXPECT_TRUE(n == 30000 || n == 40000 || n == 35000) << "a reader saw " << n << " rows";
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM accounts"), "35000");
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND "
                         "TABLE_NAME = 'accounts' AND INDEX_NAME = 'accounts_by_owner'"),
              "1")
        << "the swap keeps the DBA's indexes";
}

TEST(MysqlTarget, aFullRefreshOfManyLoadsLandsWholeOrLeavesTheTableAsItWas)
{
    // 130,000 rows are three LOAD DATA files, each written while the one before loads: every row
    // arrives, and a row that cannot land in the last file (refused by the engine while a load
    // runs, or by the server inside a load) fails the refresh with the old table untouched.
    PgTestDb src("myt_src");
    MyTestDb dst("myt_dst");
    src.exec("CREATE TABLE wide (id int PRIMARY KEY, code varchar(8) NOT NULL, ts timestamptz, note text)");
    src.exec("INSERT INTO wide SELECT g, 'c' || (g % 1000), '2020-01-01'::timestamptz + g * interval '1 second', "
             "repeat(md5(g::text), 1 + g % 3) || E'\\t\\n\\\\' FROM generate_series(1, 130000) g");
    RecordingObserver obs;
    TableSync sync(makeJob("p", spec("public", "wide", Strategy::FullRefresh), pgEndpoint("src", src.name()),
                           myEndpoint("dst", dst.name())),
                   obs);
    // The oracle: one digest of every row in key order, computed in SQL on each side.
    auto pgDigest = [&] {
        return src.scalar("SELECT count(*) || ':' || md5(string_agg(id || '|' || code || '|' || "
                          "to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || '|' || note, '#' ORDER BY id)) "
                          "FROM wide");
    };
    auto myDigest = [&] {
        auto c = dst.connect();
        c.exec("SET SESSION group_concat_max_len = 1073741824");
        return c
            .scalar("SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(CONCAT_WS('|', id, code, "
                    "DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s'), note) ORDER BY id SEPARATOR '#'))) FROM wide")
            .value_or("");
    };
    EXPECT_EQ(sync.runOnce({}).rowsWritten, 130000);
    const std::string loaded = pgDigest();
    ASSERT_EQ(loaded.substr(0, loaded.find(':')), "130000");
    EXPECT_EQ(myDigest(), loaded);
    auto noLeftovers = [&] {
        EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND "
                             "TABLE_NAME LIKE '\\_driftless\\_shadow\\_%'"),
                  "0");
    };
    noLeftovers();

    // Refused by the engine: a year MySQL's DATETIME cannot hold, in the third file.
    src.exec("UPDATE wide SET ts = '10000-01-01', note = 'changed' WHERE id = 125000");
    src.exec("UPDATE wide SET note = 'also changed' WHERE id = 10");
    try {
        sync.runOnce({});
        ADD_FAILURE() << "a year 10000 was loaded";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("column ts"), std::string::npos) << e.what();
    }
    EXPECT_EQ(myDigest(), loaded) << "the table is the one loaded before";
    noLeftovers();

    // Refused by the server inside a load: a CHECK the DBA put on the table (copied to the
    // shadow by CREATE TABLE ... LIKE) turns one row of the third file into a warning.
    src.exec("UPDATE wide SET ts = '2030-01-01' WHERE id = 125000");
    dst.exec("ALTER TABLE wide ADD CONSTRAINT not_changed CHECK (note <> 'changed')");
    try {
        sync.runOnce({});
        ADD_FAILURE() << "a row the CHECK refuses was loaded";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("not_changed"), std::string::npos) << e.what();
    }
    EXPECT_EQ(myDigest(), loaded) << "the table is the one loaded before";
    noLeftovers();

    dst.exec("ALTER TABLE wide DROP CONSTRAINT not_changed");
    EXPECT_EQ(sync.runOnce({}).rowsWritten, 130000);
    EXPECT_EQ(myDigest(), pgDigest());
}

TEST(MysqlTarget, postgresCursorSyncMergesChangesUnderTheGuard)
{
    PgTestDb src("myt_src");
    MyTestDb dst("myt_dst");
    src.exec("CREATE TABLE events (id bigint PRIMARY KEY, kind text NOT NULL, payload bytea, "
             "updated_at timestamptz NOT NULL DEFAULT now()); CREATE INDEX ON events (updated_at)");
    src.exec("INSERT INTO events SELECT g, 'k' || g, decode(md5(g::text), 'hex'), now() - interval '1 hour' + g * "
             "interval '1 ms' FROM generate_series(1, 3000) g");
    TableSpec s = spec("public", "events", Strategy::Cursor);
    s.cursor = "updated_at";
    s.lookback = "10m";
    s.pageSize = 700;
    RecordingObserver obs;
    auto job = makeJob("p", s, pgEndpoint("src", src.name()), myEndpoint("dst", dst.name()));
    TableSync(job, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM events"), "3000");
    EXPECT_EQ(dst.scalar("SELECT HEX(payload) FROM events WHERE id = 17"),
              src.scalar("SELECT upper(encode(payload, 'hex')) FROM events WHERE id = 17"));

    src.exec("UPDATE events SET kind = 'changed', updated_at = now() WHERE id % 100 = 0");
    src.exec("INSERT INTO events VALUES (5000, 'new', NULL, now())");
    auto out = TableSync(job, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM events"), "3001");
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM events WHERE kind = 'changed'"), "30");
    EXPECT_EQ(dst.scalar("SELECT kind FROM events WHERE id = 5000"), "new");
    // Another pass re-reads the lookback window and writes nothing.
    out = TableSync(job, obs).runOnce({});
    EXPECT_EQ(out.rowsWritten, 0);
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM _driftless_checkpoints WHERE strategy = 'cursor'"), "1");
}

TEST(MysqlTarget, mariadbSourceToAnotherDatabaseByCursor)
{
    MyTestDb src("myt_msrc"), dst("myt_mdst");
    src.exec("CREATE TABLE orders (region varchar(10) NOT NULL, n int NOT NULL, amount decimal(10,2), "
             "note text, updated_at datetime(6) NOT NULL, PRIMARY KEY (region, n), KEY (updated_at))");
    auto c = src.connect();
    c.exec("INSERT INTO orders SELECT ELT(1 + seq % 4, 'b', 'A', 'a', 'ä'), seq, seq / 10, CONCAT('n', seq, ' 🚀'), "
           "NOW(6) - INTERVAL 1 DAY + INTERVAL seq SECOND FROM seq_1_to_2000");
    TableSpec s = spec(src.name(), "orders", Strategy::Cursor);
    s.cursor = "updated_at";
    s.pageSize = 333;
    RecordingObserver obs;
    auto job = makeJob("p", s, myEndpoint("src", src.name()), myEndpoint("dst", dst.name()));
    TableSync(job, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM orders"), "2000");
    EXPECT_EQ(dst.scalar("SELECT SUM(amount) FROM orders"), c.scalar("SELECT SUM(amount) FROM orders").value());
    EXPECT_EQ(dst.scalar("SELECT COUNT(DISTINCT region) FROM orders"), "4")
        << "keys differing only by case stay distinct";

    c.exec("UPDATE orders SET amount = -1, updated_at = NOW(6) WHERE n % 100 = 0");
    c.exec("INSERT INTO orders VALUES ('new', 1, 5.00, NULL, NOW(6))");
    TableSync(job, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM orders"), "2001");
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM orders WHERE amount = -1"), "20");
    EXPECT_EQ(dst.scalar("SELECT note FROM orders WHERE n = 7"), "n7 🚀");
    EXPECT_EQ(dst.scalar("SELECT SUM(amount) FROM orders"), c.scalar("SELECT SUM(amount) FROM orders").value());
}

TEST(MysqlTarget, valuesMysqlCannotHoldAreAClearErrorNotATruncation)
{
    PgTestDb src("myt_src");
    MyTestDb dst("myt_dst");
    src.exec("CREATE TABLE odd (id int PRIMARY KEY, n numeric(10,2), f float8, ts timestamptz, d date, code "
             "varchar(4))");
    auto schema = describePg(src, "odd");
    MysqlMerger m(dst.connect(), MergeTarget{"p", {"public", "odd"}, {"", "odd"}, Strategy::Cursor});
    m.prepare(schema);
    auto one = [](const std::string &line) {
        Batch b;
        b.rows.append(line, ChangeOp::Insert, 1);
        b.checkpoint = {"{}", 1};
        return b;
    };
    auto expectRefused = [&](const std::string &line, const std::string &needle) {
        try {
            m.apply(one(line));
            ADD_FAILURE() << line << " was accepted";
        } catch (const Error &e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    expectRefused("1\tNaN\t\\N\t\\N\t\\N\t\\N", "column n");
    expectRefused("1\t\\N\tInfinity\t\\N\t\\N\t\\N", "column f");
    expectRefused("1\t\\N\t\\N\t10000-01-01 00:00:00+00\t\\N\t\\N", "column ts");
    expectRefused("1\t\\N\t\\N\t9999-12-31 23:00:00-02\t\\N\t\\N", "column ts");
    expectRefused("1\t\\N\t\\N\t\\N\t0044-03-15 BC\t\\N", "column d");
    expectRefused("1\t\\N\t\\N\t\\N\tinfinity\t\\N", "column d");
    // The server refuses what would be truncated (strict sql_mode).
    EXPECT_THROW(m.apply(one("1\t\\N\t\\N\t\\N\t\\N\ttoolong")), Error);
    EXPECT_THROW(m.apply(one("1\t123456789.00\t\\N\t\\N\t\\N\t\\N")), Error);
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM odd"), "0");
    EXPECT_FALSE(m.readCheckpoint());
    m.apply(one("1\t-12345678.99\t-1.5e+300\t0001-01-01 00:00:00+00\t9999-12-31\tabcd"));
    EXPECT_EQ(dst.scalar("SELECT CONCAT_WS('|', n, f, ts, d, code) FROM odd"),
              "-12345678.99|-1.5e300|0001-01-01 00:00:00.000000|9999-12-31|abcd");
}

TEST(MysqlTarget, aSessionCommitsTwoTablesTogetherOrNeither)
{
    PgTestDb src("myt_src");
    MyTestDb dst("myt_dst");
    src.exec("CREATE TABLE a (id int PRIMARY KEY, v text); CREATE TABLE b (id int PRIMARY KEY, v text)");
    auto session = createTargetSession(myEndpoint("dst", dst.name()), "test");
    auto ma = session->merger({"p", {"public", "a"}, {"", "a"}, Strategy::Cdc});
    auto mb = session->merger({"p", {"public", "b"}, {"", "b"}, Strategy::Cdc});
    ma->prepare(describePg(src, "a"));
    mb->prepare(describePg(src, "b"));
    RowSet rows;
    rows.append("1\tone", ChangeOp::Insert, 5);
    session->begin();
    ma->mergeInTransaction(rows);
    mb->mergeInTransaction(rows);
    ma->writeCheckpointInTransaction({"{\"lsn\":5}", 5}, 1);
    mb->writeCheckpointInTransaction({"{\"lsn\":5}", 5}, 1);
    session->rollback();
    EXPECT_EQ(dst.scalar("SELECT (SELECT COUNT(*) FROM a) + (SELECT COUNT(*) FROM b)"), "0");
    EXPECT_FALSE(ma->readCheckpoint());
    session->begin();
    ma->mergeInTransaction(rows);
    mb->mergeInTransaction(rows);
    ma->writeCheckpointInTransaction({"{\"lsn\":5}", 5}, 1);
    mb->writeCheckpointInTransaction({"{\"lsn\":5}", 5}, 1);
    session->commit();
    EXPECT_EQ(dst.scalar("SELECT (SELECT COUNT(*) FROM a) + (SELECT COUNT(*) FROM b)"), "2");
    EXPECT_EQ(mb->readCheckpoint()->version, 5);
}

TEST(MysqlTarget, doctorChecksTheTarget)
{
    PgTestDb src("myt_src");
    MyTestDb dst("myt_dst");
    src.exec("CREATE TABLE a (id int PRIMARY KEY, v text)");
    Workspace ws;
    ws.endpoints["src"] = pgEndpoint("src", src.name());
    ws.endpoints["dw"] = myEndpoint("dw", dst.name());
    ws.endpoints["gone"] = myEndpoint("gone", "no_such_database_here");
    PipelineSpec p;
    p.name = "to_dw";
    p.source = "src";
    p.target = "dw";
    p.tables = {spec("public", "a", Strategy::Cursor)};
    p.tables[0].cursor = "id";
    ws.pipelines.push_back(p);
    p.name = "to_gone";
    p.target = "gone";
    ws.pipelines.push_back(p);
    auto findings = runDoctor(ws);
    std::string all;
    auto find = [&](const std::string &level, const std::string &subject, const std::string &text) {
        for (const auto &f : findings)
            if (std::string(toString(f.level)) == level && f.subject == subject &&
                f.message.find(text) != std::string::npos)
                return true;
        return false;
    };
    for (const auto &f : findings)
        all += std::string(toString(f.level)) + " " + f.subject + ": " + f.message + " | " + f.fix + "\n";
    EXPECT_TRUE(find("ok", "endpoint dw", "MariaDB")) << all;
    EXPECT_TRUE(find("ok", "endpoint dw", "may create tables")) << all;
    EXPECT_TRUE(find("error", "endpoint gone", "no_such_database_here")) << all;
    for (const auto &f : findings)
        EXPECT_EQ(f.message.find("not supported"), std::string::npos) << all;
}

TEST(MysqlTarget, bulkLoadTurnsServerWarningsIntoErrorsAndFallsBackToTheMergeOnExistingKeys)
{
    // Batches of 1000+ rows go through LOAD DATA LOCAL INFILE, where the server only warns.
    PgTestDb src("myt_src");
    MyTestDb dst("myt_dst");
    src.exec("CREATE TABLE bulk (id int PRIMARY KEY, code varchar(4), blob bytea)");
    auto m = createMerger(myEndpoint("dst", dst.name()), {"p", {"public", "bulk"}, {"", "bulk"}, Strategy::Cursor});
    m->prepare(describePg(src, "bulk"));
    auto batch = [](int from, int to, const std::string &code, long long v) {
        Batch b;
        for (int i = from; i <= to; ++i)
            b.rows.append(std::to_string(i) + "\t" + code + "\t\\\\x00ff" + (i % 2 ? "0a" : ""), ChangeOp::Insert, v);
        b.checkpoint = {"{}", v};
        b.directLoad = true;
        return b;
    };
    Batch bad = batch(1, 1500, "ok", 10);
    bad.rows.append("1501\ttoo long\t\\N", ChangeOp::Insert, 10);
    EXPECT_THROW(m->apply(bad), Error);
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM bulk"), "0");
    EXPECT_FALSE(m->readCheckpoint());

    auto r = m->apply(batch(1, 1500, "a\\tb", 10)); // COPY text: an escaped TAB
    EXPECT_TRUE(r.direct);
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM bulk WHERE code = 'a\tb'"), "1500");
    EXPECT_EQ(dst.scalar("SELECT HEX(`blob`) FROM bulk WHERE id = 7"), "00FF0A");
    EXPECT_EQ(dst.scalar("SELECT HEX(`blob`) FROM bulk WHERE id = 8"), "00FF");
    // Overlapping keys: the direct load is refused and the batch merged under the guard.
    r = m->apply(batch(1001, 2500, "new", 20));
    EXPECT_FALSE(r.direct);
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM bulk"), "2500");
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM bulk WHERE code = 'new' AND _driftless_version = 20"), "1500");
    // An older bulk merge changes nothing.
    r = m->apply(batch(1, 2500, "old", 5));
    EXPECT_EQ(r.rowsWritten, 0);
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM bulk WHERE code = 'old'"), "0");
}

TEST(MysqlTarget, snapshotChunksWriteOnlyDifferingRowsAndPartialRowsKeepUnchangedColumns)
{
    PgTestDb src("myt_src");
    MyTestDb dst("myt_dst");
    src.exec("CREATE TABLE t (id int PRIMARY KEY, a text, b text)");
    MysqlMerger m(dst.connect(), MergeTarget{"p", {"public", "t"}, {"", "t"}, Strategy::Cdc});
    m.prepare(describePg(src, "t"));
    Batch b;
    for (int i = 1; i <= 5; ++i)
        b.rows.append(std::to_string(i) + "\ta" + std::to_string(i) + "\tb" + std::to_string(i), ChangeOp::Insert, 10);
    b.checkpoint = {"{}", 10};
    m.apply(b);

    // A re-backfill at version 50 that no longer has key 5 and changed key 2.
    RowSet snap;
    for (int i = 1; i <= 4; ++i)
        snap.append(std::to_string(i) + "\ta" + std::to_string(i) + (i == 2 ? "x" : "") + "\tb" + std::to_string(i),
                    ChangeOp::Insert, 50);
    m.connection().exec("START TRANSACTION");
    m.clearSeenInTransaction();
    auto r = m.mergeSnapshotChunkInTransaction(snap);
    EXPECT_EQ(r.rowsWritten, 1) << "equal rows are not rewritten";
    EXPECT_EQ(m.seenCount(), 4);
    EXPECT_EQ(m.deleteUnseenInTransaction(50), 1);
    m.connection().exec("COMMIT");
    EXPECT_EQ(dst.scalar("SELECT GROUP_CONCAT(CONCAT(id, a, ':', _driftless_version) ORDER BY id)"
                         " FROM t"),
              "1a1:10,2a2x:50,3a3:10,4a4:10");
    EXPECT_EQ(m.seenCount(), 0);

    // A partial row (column b unchanged, not sent) for a row the target has, and one it lacks.
    Batch p;
    p.rows.append("3\tnew\t\\N", ChangeOp::Update, 60, "001");
    p.rows.append("9\tnew\t\\N", ChangeOp::Update, 60, "001");
    p.checkpoint = {"{}", 60};
    EXPECT_EQ(m.partialRowsWithoutTarget(p.rows), (std::vector<size_t>{1}));
    r = m.apply(p);
    EXPECT_EQ(r.partialRowsMissing, 1);
    EXPECT_EQ(dst.scalar("SELECT CONCAT(a, b, ':', _driftless_version) FROM t WHERE id = 3"), "newb3:60");
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM t WHERE id = 9"), "0");
    EXPECT_EQ(m.guardVersions(p.rows), (std::vector<std::int64_t>{60, 0}));
    // deleteOlder inside the caller's transaction, rolled back with it.
    m.connection().exec("START TRANSACTION");
    EXPECT_EQ(m.deleteOlderInTransaction(50), 2);
    m.connection().exec("ROLLBACK");
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM t"), "4");
}

TEST(MysqlTarget, postgresCdcStreamsIntoMariadb)
{
    PgTestDb src("myt_cdc_src");
    MyTestDb dst("myt_cdc_dst");
    src.exec("CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, qty int, price numeric(10,2))");
    src.exec("INSERT INTO items SELECT g, 'item ' || g, g % 7, g * 1.25 FROM generate_series(1, 2500) g");
    TableSpec t = spec("public", "items", Strategy::Cdc);
    t.pageSize = 1000;
    const std::string pipeline = uniqueName("mycdc");
    auto job = makeJob(pipeline, t, pgEndpoint("src", src.name()), myEndpoint("dst", dst.name()));
    RecordingObserver obs;
    auto once = [&] {
        CdcPipeline p({job}, std::nullopt, obs);
        p.run({}, {true, nullptr});
    };
    once();
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM items"), "2500");
    src.exec("INSERT INTO items VALUES (9001, 'new 😀', 1, 1)");
    src.exec("BEGIN; UPDATE items SET qty = qty + 100 WHERE id <= 50; DELETE FROM items WHERE id BETWEEN 100 AND 199; "
             "COMMIT");
    once();
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM items"), src.scalar("SELECT count(*) FROM items"));
    EXPECT_EQ(dst.scalar("SELECT SUM(qty) FROM items"), src.scalar("SELECT sum(qty) FROM items"));
    EXPECT_EQ(dst.scalar("SELECT SUM(price) FROM items"), src.scalar("SELECT sum(price) FROM items"));
    EXPECT_EQ(dst.scalar("SELECT name FROM items WHERE id = 9001"), "new 😀");
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM _driftless_tomb_items"), "100");
    EXPECT_NE(
        dst.scalar("SELECT position FROM _driftless_checkpoints WHERE source_table = 'public.items'").find("stream"),
        std::string::npos);
    auto c = src.connect();
    c.exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'driftless_" +
           pipeline + "'");
}

TEST(MysqlTarget, mariadbBinlogCdcIntoAnotherDatabase)
{
    MyTestDb src("myt_bsrc"), dst("myt_bdst");
    src.exec("CREATE TABLE acct (id int PRIMARY KEY, owner varchar(20) NOT NULL, balance decimal(12,2) NOT NULL, "
             "note text, at datetime(6))");
    src.exec("INSERT INTO acct SELECT seq, CONCAT('o', seq), seq * 10, IF(seq % 3 = 0, NULL, 'ü 🚀'), "
             "'2024-01-01 00:00:00.5' + INTERVAL seq SECOND FROM seq_1_to_2500");
    TableSpec s = spec(src.name(), "acct", Strategy::Cdc);
    s.pageSize = 1000;
    auto job = makeJob("mp", s, myEndpoint("src", src.name()), myEndpoint("dst", dst.name()));
    RecordingObserver obs;
    auto once = [&] {
        MysqlCdcPipeline p({job}, obs);
        p.run({}, {true, nullptr});
    };
    once();
    const std::string rows = "SELECT COUNT(*), SUM(balance), SUM(CRC32(CONCAT_WS('|', id, owner, balance, "
                             "COALESCE(note, 'NULL'), at))) FROM acct";
    auto fingerprint = [&](MyTestDb &db) {
        auto c = db.connect();
        auto r = c.query(rows);
        return r.text(0, 0) + "/" + r.text(0, 1) + "/" + r.text(0, 2);
    };
    EXPECT_EQ(fingerprint(dst), fingerprint(src));
    auto c = src.connect();
    c.exec("START TRANSACTION");
    c.exec("UPDATE acct SET balance = -balance, note = 'changed' WHERE id % 10 = 0");
    c.exec("DELETE FROM acct WHERE id BETWEEN 100 AND 149");
    c.exec("INSERT INTO acct VALUES (9001, 'new', 1.50, NULL, NULL)");
    c.exec("COMMIT");
    c.exec("UPDATE acct SET id = 9002 WHERE id = 7");
    once();
    EXPECT_EQ(fingerprint(dst), fingerprint(src));
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM acct WHERE id = 7"), "0");
}
