// Table discovery and strategy recommendations against the real test servers: size, key, cursor
// candidates and write counters come from the catalog and pg_stat_user_tables, and each rule of
// recommendStrategy() is met by a table built for it. On MariaDB the same facts come from
// information_schema; without performance_schema the write counters are unknown, and the
// reasons say nothing about writes they do not know; CDC is refused when the binlog or the
// user's grants cannot serve it, with the fix.

#include "core/db/mysqlconnection.h"
#include "core/engine/endpoints/mysqlpreflight.h"
#include "core/engine/endpoints/tablediscovery.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace driftless;
using namespace driftless::test;

namespace {

const char *kSchema = R"sql(
CREATE TABLE plans (id int PRIMARY KEY, name text, updated_at timestamptz);
INSERT INTO plans SELECT g, 'plan ' || g, now() FROM generate_series(1, 20) g;
CREATE TABLE nokey (name text, created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO nokey SELECT 'row ' || g FROM generate_series(1, 50) g;
CREATE TABLE counters (id int PRIMARY KEY, n bigint NOT NULL);
INSERT INTO counters SELECT g, 0 FROM generate_series(1, 2000) g;
CREATE TABLE orders (id int PRIMARY KEY, total numeric, updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO orders SELECT g, g FROM generate_series(1, 5000) g;
CREATE TABLE events (id bigint PRIMARY KEY, created_at date, "Updated At" timestamptz NOT NULL DEFAULT now(),
                     payload text);
CREATE INDEX ON events ("Updated At");
INSERT INTO events SELECT g, current_date, now(), 'e' FROM generate_series(1, 3000) g;
CREATE SCHEMA other;
CREATE TABLE other.t (id int PRIMARY KEY);
)sql";

const char *kWrites = R"sql(
UPDATE counters SET n = n + 1; UPDATE counters SET n = n + 1; UPDATE counters SET n = n + 1;
UPDATE orders SET total = total + 1 WHERE id <= 2000;
DELETE FROM orders WHERE id > 4000;
UPDATE events SET payload = 'f'; UPDATE events SET payload = 'g';
ANALYZE;
)sql";

const core::DiscoveredTable *find(const std::vector<core::DiscoveredTable> &ts, const std::string &schema,
                                  const std::string &name)
{
    for (const auto &t : ts)
        if (t.table.schema == schema && t.table.name == name)
            return &t;
    return nullptr;
}

} // namespace

TEST(TableDiscovery, readsSizeKeyCursorCandidatesAndWritesAndRecommends)
{
    PgTestDb db("discovery");
    db.exec(kSchema);
    db.exec(kWrites);

    auto conn = db.connect();
    std::vector<core::DiscoveredTable> tables;
    // pg_stat_user_tables is flushed by the writing backend shortly after it ends.
    for (int i = 0; i < 100; ++i) {
        tables = core::discoverTables(conn);
        const auto *o = find(tables, "public", "orders");
        if (o && o->deletes == 1000 && find(tables, "public", "events")->updates == 6000)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        conn.exec("SELECT pg_stat_clear_snapshot()");
    }
    ASSERT_EQ(tables.size(), 6u);
    EXPECT_EQ(tables.front().table.display(), "other.t"); // ordered by schema, then name

    const auto *orders = find(tables, "public", "orders");
    ASSERT_TRUE(orders);
    EXPECT_EQ(orders->primaryKey, std::vector<std::string>{"id"});
    EXPECT_EQ(orders->cursorCandidates, std::vector<std::string>{"updated_at"});
    EXPECT_EQ(orders->inserts, 5000);
    EXPECT_EQ(orders->updates, 2000);
    EXPECT_EQ(orders->deletes, 1000);
    EXPECT_TRUE(orders->analyzed);
    EXPECT_NEAR(orders->estimatedRows, 4000, 1);
    EXPECT_GT(orders->totalBytes, 0);
    EXPECT_TRUE(orders->readable);

    const auto *events = find(tables, "public", "events");
    ASSERT_TRUE(events);
    // NOT NULL and indexed first; the date column after it.
    EXPECT_EQ(events->cursorCandidates, (std::vector<std::string>{"Updated At", "created_at"}));

    const core::SourceAbilities cdcReady;
    // Small and rarely written: full refresh.
    auto rec = core::recommendStrategy(*find(tables, "public", "plans"), cdcReady);
    EXPECT_EQ(rec.strategy, core::Strategy::FullRefresh);
    EXPECT_NE(rec.reason.find("small"), std::string::npos) << rec.reason;
    EXPECT_TRUE(rec.refused.empty());

    // No primary key: cursor and CDC refused, with the reason.
    rec = core::recommendStrategy(*find(tables, "public", "nokey"), cdcReady);
    EXPECT_EQ(rec.strategy, core::Strategy::FullRefresh);
    EXPECT_EQ(rec.refused.at(core::Strategy::Cursor), "no primary key: cursor sync and CDC merge rows by key");
    EXPECT_EQ(rec.refused.at(core::Strategy::Cdc), "no primary key: cursor sync and CDC merge rows by key");

    // No timestamp column: cursor unavailable; written a lot, so not full refresh.
    rec = core::recommendStrategy(*find(tables, "public", "counters"), cdcReady);
    EXPECT_EQ(rec.refused.at(core::Strategy::Cursor), "no timestamp or date column for a cursor to follow");
    EXPECT_EQ(rec.strategy, core::Strategy::Cdc);

    // Busy with deletes: CDC, which sees them.
    rec = core::recommendStrategy(*orders, cdcReady);
    EXPECT_EQ(rec.strategy, core::Strategy::Cdc);
    EXPECT_NE(rec.reason.find("1000 deletes"), std::string::npos) << rec.reason;

    // Busy without deletes: cursor sync along the best candidate.
    rec = core::recommendStrategy(*events, cdcReady);
    EXPECT_EQ(rec.strategy, core::Strategy::Cursor);
    EXPECT_EQ(rec.cursor, std::optional<std::string>("Updated At"));

    // A source that cannot stream: CDC refused, cursor sync instead, saying what it misses.
    rec = core::recommendStrategy(*orders, core::SourceAbilities{false, true, std::nullopt});
    EXPECT_EQ(rec.refused.at(core::Strategy::Cdc), "the source's wal_level is not logical");
    EXPECT_EQ(rec.strategy, core::Strategy::Cursor);
    EXPECT_NE(rec.reason.find("deletes are not seen"), std::string::npos) << rec.reason;
    rec =
        core::recommendStrategy(*find(tables, "public", "counters"), core::SourceAbilities{true, false, std::nullopt});
    EXPECT_EQ(rec.strategy, core::Strategy::FullRefresh);
    EXPECT_EQ(rec.refused.at(core::Strategy::Cdc), "the source's user may not replicate");
}

TEST(TableDiscovery, aReplicaIdentityWithoutTheKeyRefusesCdcWithTheFix)
{
    // The pipeline editor disables what apply would refuse: CDC of a table whose replica
    // identity leaves the key out of the old row (NOTHING, or an index without the key).
    PgTestDb db("discovery_ri");
    db.exec("CREATE TABLE nothing (id int PRIMARY KEY, v text); ALTER TABLE nothing REPLICA IDENTITY NOTHING;"
            "CREATE TABLE by_email (id int PRIMARY KEY, email text NOT NULL UNIQUE);"
            "ALTER TABLE by_email REPLICA IDENTITY USING INDEX by_email_email_key;"
            "CREATE TABLE by_key (id int PRIMARY KEY, email text NOT NULL);"
            "CREATE UNIQUE INDEX by_key_ix ON by_key (email, id); ALTER TABLE by_key REPLICA IDENTITY USING INDEX "
            "by_key_ix;"
            "CREATE TABLE included (id int, a int, PRIMARY KEY (id) INCLUDE (a))");
    auto conn = db.connect();
    auto tables = core::discoverTables(conn);
    const core::SourceAbilities cdcReady;
    auto rec = core::recommendStrategy(*find(tables, "public", "nothing"), cdcReady);
    ASSERT_TRUE(rec.refused.count(core::Strategy::Cdc));
    EXPECT_NE(rec.refused.at(core::Strategy::Cdc).find("REPLICA IDENTITY NOTHING"), std::string::npos);
    EXPECT_NE(rec.refused.at(core::Strategy::Cdc).find("REPLICA IDENTITY DEFAULT"), std::string::npos);
    rec = core::recommendStrategy(*find(tables, "public", "by_email"), cdcReady);
    ASSERT_TRUE(rec.refused.count(core::Strategy::Cdc));
    EXPECT_NE(rec.refused.at(core::Strategy::Cdc).find("leaves out primary-key column id"), std::string::npos)
        << rec.refused.at(core::Strategy::Cdc);
    EXPECT_FALSE(
        core::recommendStrategy(*find(tables, "public", "by_key"), cdcReady).refused.count(core::Strategy::Cdc));
    const auto *included = find(tables, "public", "included");
    ASSERT_TRUE(included);
    EXPECT_EQ(included->primaryKey, std::vector<std::string>{"id"});
    EXPECT_FALSE(core::recommendStrategy(*included, cdcReady).refused.count(core::Strategy::Cdc));
}

namespace {

const char *kMysqlSchema[] = {
    "CREATE TABLE plans (id INT PRIMARY KEY, name VARCHAR(40), updated_at DATETIME(6))",
    "INSERT INTO plans SELECT seq, CONCAT('plan ', seq), NOW(6) FROM seq_1_to_20",
    "CREATE TABLE nokey (name VARCHAR(40), created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)",
    "CREATE TABLE counters (id INT PRIMARY KEY, n BIGINT NOT NULL)",
    // Case kept, a two-column key, the cursor column indexed and NOT NULL, past "small".
    "CREATE TABLE Orders (region CHAR(2), id INT, total DECIMAL(12, 2), created DATE, "
    "modified_at DATETIME NOT NULL, PRIMARY KEY (region, id), KEY (modified_at))",
    "INSERT INTO Orders SELECT 'eu', seq, seq, CURRENT_DATE, NOW() FROM seq_1_to_150000",
    "CREATE TABLE events (id BIGINT PRIMARY KEY, created_at DATE, `Updated At` TIMESTAMP(3) NOT NULL "
    "DEFAULT CURRENT_TIMESTAMP(3), day DATE NOT NULL, payload TEXT, KEY (`Updated At`))",
    "CREATE VIEW recent AS SELECT * FROM plans",
    "ANALYZE TABLE plans, nokey, counters, Orders, events",
};

} // namespace

TEST(TableDiscovery, readsMysqlTablesFromInformationSchemaAndRecommends)
{
    MyTestDb db("discovery");
    MyTestDb other("discovery_other");
    for (const char *sql : kMysqlSchema)
        db.exec(sql);
    other.exec("CREATE TABLE t (id INT PRIMARY KEY)");

    auto conn = db.connect();
    const auto tables = core::discoverMysqlTables(conn, db.name());
    ASSERT_EQ(tables.size(), 5u); // base tables only: not the view, nothing of the other database
    // database.table with the case kept, ordered by name as bytes.
    EXPECT_EQ(tables.front().table, (core::TableRef{db.name(), "Orders"}));
    EXPECT_EQ(tables.back().table, (core::TableRef{db.name(), "plans"}));

    const auto *orders = find(tables, db.name(), "Orders");
    ASSERT_TRUE(orders);
    EXPECT_EQ(orders->primaryKey, (std::vector<std::string>{"region", "id"}));
    EXPECT_EQ(orders->cursorCandidates, (std::vector<std::string>{"modified_at", "created"}));
    EXPECT_TRUE(orders->analyzed);
    EXPECT_GT(orders->estimatedRows, core::kSmallTableRows); // InnoDB's estimate of 150,000
    EXPECT_LT(orders->estimatedRows, 300'000);
    EXPECT_GT(orders->totalBytes, 1 << 20);
    // The test server runs without performance_schema (MariaDB's default): writes are unknown.
    const bool counters = db.scalar("SELECT @@performance_schema") == "1";
    EXPECT_EQ(orders->writesKnown, counters);

    const auto *events = find(tables, db.name(), "events");
    ASSERT_TRUE(events);
    // NOT NULL and indexed, then NOT NULL, then the nullable date; names kept exactly.
    EXPECT_EQ(events->cursorCandidates, (std::vector<std::string>{"Updated At", "day", "created_at"}));
    EXPECT_TRUE(find(tables, db.name(), "nokey")->primaryKey.empty());
    EXPECT_EQ(find(tables, db.name(), "nokey")->cursorCandidates, std::vector<std::string>{"created_at"});
    EXPECT_TRUE(find(tables, db.name(), "counters")->cursorCandidates.empty());

    // Every database but the system ones when the DSN names none.
    const auto all = core::discoverMysqlTables(conn, "");
    EXPECT_TRUE(find(all, other.name(), "t"));
    EXPECT_TRUE(find(all, db.name(), "Orders"));
    for (const auto &t : all)
        EXPECT_TRUE(t.table.schema != "mysql" && t.table.schema != "sys") << t.table.display();

    // The test server's binlog is ready and driftless may replicate: CDC is available.
    const auto probe = core::probeMysql(db.dsn());
    ASSERT_TRUE(probe.connected) << probe.error;
    const core::SourceAbilities ready = core::mysqlAbilities(probe);
    EXPECT_FALSE(ready.cdcRefused) << *ready.cdcRefused;

    // Small: full refresh, without claiming it is rarely written.
    auto rec = core::recommendStrategy(*find(tables, db.name(), "plans"), ready);
    EXPECT_EQ(rec.strategy, core::Strategy::FullRefresh);
    EXPECT_NE(rec.reason.find("small (about 20 rows)"), std::string::npos) << rec.reason;
    if (!counters) {
        EXPECT_EQ(rec.reason.find("rarely written"), std::string::npos) << rec.reason;
    }

    rec = core::recommendStrategy(*find(tables, db.name(), "nokey"), ready);
    EXPECT_EQ(rec.strategy, core::Strategy::FullRefresh);
    EXPECT_EQ(rec.refused.at(core::Strategy::Cursor), "no primary key: cursor sync and CDC merge rows by key");
    EXPECT_EQ(rec.refused.at(core::Strategy::Cdc), "no primary key: cursor sync and CDC merge rows by key");

    rec = core::recommendStrategy(*find(tables, db.name(), "counters"), ready);
    EXPECT_EQ(rec.refused.at(core::Strategy::Cursor), "no timestamp or date column for a cursor to follow");
    EXPECT_FALSE(rec.refused.count(core::Strategy::Cdc));

    // Large, writes unknown: deletes cannot be ruled out, so CDC; never "no deletes recorded".
    rec = core::recommendStrategy(*orders, ready);
    EXPECT_EQ(rec.cursor, std::optional<std::string>("modified_at"));
    if (!counters) {
        EXPECT_EQ(rec.strategy, core::Strategy::Cdc);
        EXPECT_NE(rec.reason.find("no write counters"), std::string::npos) << rec.reason;
    }
    EXPECT_EQ(rec.reason.find("no deletes recorded"), std::string::npos) << rec.reason;

    // A user without REPLICATION SLAVE: CDC refused with the GRANT; cursor sync instead.
    const std::string user = uniqueName("disc_ro");
    const std::string password = "pw-" + uniqueName("s");
    {
        core::MysqlConnection admin(myDsn(""));
        admin.exec("CREATE USER " + core::mysqlLiteral(user) + "@'127.0.0.1' IDENTIFIED BY " +
                   core::mysqlLiteral(password));
        admin.exec("GRANT SELECT ON " + core::mysqlIdent(db.name()) + ".* TO " + core::mysqlLiteral(user) +
                   "@'127.0.0.1'");
    }
    const auto &s = servers();
    const auto limited = core::probeMysql(
        "mysql://" + user + "@" + s.myHost + ":" + std::to_string(s.myPort) + "/" + db.name(), password);
    core::MysqlConnection(myDsn("")).exec("DROP USER " + core::mysqlLiteral(user) + "@'127.0.0.1'");
    ASSERT_TRUE(limited.connected) << limited.error;
    const core::SourceAbilities noGrant = core::mysqlAbilities(limited);
    ASSERT_TRUE(noGrant.cdcRefused);
    EXPECT_NE(noGrant.cdcRefused->find("may not read the binlog: GRANT REPLICATION SLAVE ON *.* TO '" + user + "'@'"),
              std::string::npos)
        << *noGrant.cdcRefused;
    rec = core::recommendStrategy(*orders, noGrant);
    EXPECT_EQ(rec.refused.at(core::Strategy::Cdc), *noGrant.cdcRefused);
    if (!counters) {
        EXPECT_EQ(rec.strategy, core::Strategy::Cursor);
        EXPECT_NE(rec.reason.find("CDC is unavailable"), std::string::npos) << rec.reason;
        EXPECT_NE(rec.reason.find("whether rows are deleted"), std::string::npos) << rec.reason;
    }

    // A binlog setting CDC cannot run without refuses it with the fix; a short retention only warns.
    core::MysqlProbe statement = probe;
    statement.binlog = {{"binlog_format", "STATEMENT", "SET GLOBAL binlog_format = 'ROW'"}};
    EXPECT_EQ(core::mysqlAbilities(statement).cdcRefused,
              std::optional<std::string>("the source's binlog_format is STATEMENT; SET GLOBAL binlog_format = 'ROW'"));
    core::MysqlProbe shortRetention = probe;
    shortRetention.binlog = {{"expire_logs_days", "24 hours", "keep binlogs at least 3 days"}};
    EXPECT_FALSE(core::mysqlAbilities(shortRetention).cdcRefused);
}

TEST(TableDiscovery, discoverSourceReadsEitherKindOfEndpointAndSaysWhyNotWhenItCannot)
{
    PgTestDb pg("discovery_src");
    pg.exec("CREATE TABLE plans (id int PRIMARY KEY, updated_at timestamptz)");
    MyTestDb my("discovery_src");
    my.exec("CREATE TABLE plans (id INT PRIMARY KEY, updated_at DATETIME)");

    core::Endpoint e;
    e.name = "src";
    e.kind = core::EndpointKind::Postgres;
    e.dsn = pg.dsn();
    auto d = core::discoverSource(e);
    ASSERT_TRUE(d.ok) << d.error;
    EXPECT_TRUE(d.error.empty());
    EXPECT_TRUE(d.abilities.logicalWal); // the test server runs wal_level=logical
    EXPECT_TRUE(find(d.tables, "public", "plans"));

    e.kind = core::EndpointKind::Mysql;
    e.dsn = my.dsn();
    d = core::discoverSource(e);
    ASSERT_TRUE(d.ok) << d.error;
    EXPECT_FALSE(d.abilities.cdcRefused) << *d.abilities.cdcRefused;
    EXPECT_TRUE(find(d.tables, my.name(), "plans"));

    // Nothing listens on port 1: not ok, with the probe's reason and what to check.
    e.kind = core::EndpointKind::Postgres;
    e.dsn = "host=127.0.0.1 port=1 dbname=x user=x connect_timeout=3";
    d = core::discoverSource(e);
    EXPECT_FALSE(d.ok);
    EXPECT_TRUE(d.tables.empty());
    EXPECT_NE(d.error.find("Connection refused"), std::string::npos) << d.error;
    EXPECT_NE(d.error.find("host and port"), std::string::npos) << d.error;

    e.kind = core::EndpointKind::Mysql;
    e.dsn = "postgres://not-a-mysql-uri";
    d = core::discoverSource(e);
    EXPECT_FALSE(d.ok);
    EXPECT_NE(d.error.find("mysql://"), std::string::npos) << d.error;

    e.kind = core::EndpointKind::Sqlite;
    e.dsn.clear();
    d = core::discoverSource(e);
    EXPECT_FALSE(d.ok);
    EXPECT_NE(d.error.find("does not read from"), std::string::npos) << d.error;
}

// A table never analyzed has no row estimate: the reason says what is known (its size), not
// "about 0 rows".
TEST(TableDiscovery, aTableNeverAnalyzedIsSmallByItsSizeNotByAnEstimateOfNothing)
{
    core::DiscoveredTable t;
    t.table = {"public", "plans"};
    t.primaryKey = {"code"};
    t.totalBytes = 32768;
    t.analyzed = false;
    t.inserts = 3;
    const auto rec = core::recommendStrategy(t, core::SourceAbilities{});
    EXPECT_EQ(rec.strategy, core::Strategy::FullRefresh);
    EXPECT_NE(rec.reason.find("small (32 kB, never analyzed)"), std::string::npos) << rec.reason;
    EXPECT_EQ(rec.reason.find("about 0 rows"), std::string::npos) << rec.reason;
}
