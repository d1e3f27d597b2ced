// Two-way pipelines (`direction: both`) between a Postgres and a MariaDB endpoint, in both
// orientations (Postgres as the pipeline's source, and MariaDB): each direction marks what it
// writes as the side it writes does (a replication origin, skip_replication) and drops what the
// other direction wrote, so a change is captured once, applied once and never comes back; the
// conflict lookup compares values as the written side spells them (t/1, timestamps, numerics),
// so equal values are no conflict; writers on both sides converge, checked with the schema zoo's
// canonical row text computed in SQL on each side (tests/conformance/zoooracle.h).

#include "core/db/mysqlconnection.h"
#include "core/db/pgconnection.h"
#include "core/engine/commands/doctor.h"
#include "core/engine/run/scheduler.h"
#include "core/engine/sync/tablesync.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"
#include "core/readers/binlog/binlogdecoder.h"
#include "tests/conformance/zoooracle.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"
#include "tests/support/twowayfixture.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <functional>
#include <mutex>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;
using driftless::zoo::Kind;
using driftless::zoo::OracleColumn;

namespace {

// The same table on either engine: int key, varchar, int, boolean, timestamp, numeric.
const char *kPgItems = "CREATE TABLE items (id int PRIMARY KEY, v varchar(100) NOT NULL, n int NOT NULL, flag boolean "
                       "NOT NULL, at timestamp NOT NULL, amount numeric(12,2) NOT NULL)";
const char *kMyItems = "CREATE TABLE items (id int PRIMARY KEY, v varchar(100) NOT NULL, n int NOT NULL, flag boolean "
                       "NOT NULL, at datetime(6) NOT NULL, amount decimal(12,2) NOT NULL)";

/// Inserts `rows` rows (ids 1..rows) with fractional amounts, both flags and timestamps with and
/// without fractions: SQL both engines take.
void seed(const std::function<void(const std::string &)> &exec, int rows)
{
    for (int from = 1; from <= rows; from += 100) {
        std::string sql = "INSERT INTO items (id, v, n, flag, at, amount) VALUES ";
        for (int i = from; i < from + 100 && i <= rows; ++i)
            sql += (i == from ? "(" : ", (") + std::to_string(i) + ", 'v" + std::to_string(i) + "', " +
                   std::to_string(i) + ", " + (i % 2 ? "true" : "false") + ", '2024-05-01 10:00:0" +
                   std::to_string(i % 10) + (i % 3 ? ".5" : "") + "', " + std::to_string(i) + ".50)";
        exec(sql);
    }
}

/// The pair's two sides: a Postgres database and a MariaDB database, either one the pipeline's
/// source (the parameter: true when Postgres is).
struct MixedSides {
    PgTestDb pg{"twx_pg"};
    MyTestDb my{"twx_my"};
    std::string pipeline = uniqueName("twx");
    bool pgIsSource = true;

    /// The direction that reads Postgres and writes MariaDB, and the other one.
    std::string pgReads() const { return pgIsSource ? pipeline : pipeline + PipelineSpec::kReverseSuffix; }
    std::string myReads() const { return pgIsSource ? pipeline + PipelineSpec::kReverseSuffix : pipeline; }

    void createSource(int rows)
    {
        if (pgIsSource) {
            pg.exec(kPgItems);
            seed([&](const std::string &s) { pg.exec(s); }, rows);
        } else {
            my.exec(kMyItems);
            seed([&](const std::string &s) { my.exec(s); }, rows);
        }
    }
    std::string sourceTable() const { return pgIsSource ? "public.items" : my.name() + ".items"; }
    std::string yaml(const std::string &conflicts) const
    {
        const std::string pgEp = "  pg: { kind: postgres, dsn: \"" + pg.dsn() + "\" }\n";
        const std::string myEp = "  my: { kind: mysql, dsn: \"" + my.dsn() + "\" }\n";
        return "endpoints:\n" + pgEp + myEp + "pipelines:\n  - name: " + pipeline +
               "\n    source: " + (pgIsSource ? "pg" : "my") + "\n    target: " + (pgIsSource ? "my" : "pg") + "\n" +
               (pgIsSource ? "" : "    target_schema: public\n") +
               "    direction: both\n    tables:\n      - table: " + sourceTable() + "\n        strategy: cdc\n" +
               (conflicts.empty() ? "" : "        conflicts: " + conflicts + "\n");
    }
    Workspace workspace() const
    {
        Workspace ws;
        ws.endpoints["pg"] = pgEndpoint("pg", pg.name());
        ws.endpoints["my"] = myEndpoint("my", my.name());
        PipelineSpec p;
        p.name = pipeline;
        p.source = pgIsSource ? "pg" : "my";
        p.target = pgIsSource ? "my" : "pg";
        if (!pgIsSource)
            p.targetSchema = "public";
        p.twoWay = true;
        TableSpec t;
        t.table = pgIsSource ? TableRef::parse("public.items") : TableRef{my.name(), "items"};
        t.strategy = Strategy::Cdc;
        p.tables.push_back(t);
        ws.pipelines.push_back(p);
        return ws;
    }

    /// Every checkpoint of the direction that reads MariaDB (kept in Postgres) stands at or past
    /// binlog version `v`.
    bool binlogPassed(std::int64_t v) const { return pgKeptBinlogPassed(pg, myReads(), v); }
    /// Both directions have read their side up to where it is now.
    bool positionsPassNow(int seconds) const { return mixedPassesNow(pg, my, pgReads(), myReads(), seconds); }
    /// The load is done and both directions stream.
    bool streaming(int seconds) const
    {
        return waitFor([&] { return mixedLoadedAndStreaming(pg, my, pgReads(), myReads(), "items"); }, seconds);
    }

    /// The synced columns of the Postgres side, as the zoo oracle reads them.
    std::vector<OracleColumn> pgColumns() const
    {
        auto c = pg.connect();
        auto cols = driftless::zoo::sourceColumns(c, "public.items");
        std::erase_if(cols, [](const OracleColumn &o) { return o.name == "_driftless_version"; });
        return cols;
    }
    /// The canonical digest of the Postgres side (zoooracle.h).
    driftless::zoo::Digest pgDigest() const
    {
        auto c = pg.connect();
        driftless::zoo::prepareSession(c);
        return driftless::zoo::pgDigest(c, pgColumns(), "public.items");
    }
    /// The same canonical text built in MariaDB SQL from the MariaDB side's own values: per column
    /// the form zoooracle.cpp gives the Postgres column of that name (booleans t/f, timestamps
    /// ISO with microseconds, numerics without trailing zeros), length-prefixed, md5 over the rows
    /// in byte order.
    driftless::zoo::Digest myDigest() const
    {
        std::string row = "CONCAT(";
        const auto cols = pgColumns();
        for (size_t i = 0; i < cols.size(); ++i) {
            const std::string q = mysqlIdent(cols[i].name);
            std::string v;
            switch (cols[i].kind) {
            case Kind::Int:
                v = "CAST(" + q + " AS CHAR)";
                break;
            case Kind::Numeric: {
                const std::string s = "CAST(" + q + " AS CHAR)";
                v = "IF(" + s + " LIKE '%.%', TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM " + s + ")), " + s + ")";
                break;
            }
            case Kind::Bool:
                v = "CASE " + q + " WHEN 1 THEN 't' WHEN 0 THEN 'f' ELSE CONCAT('not-bool:', " + q + ") END";
                break;
            case Kind::Ts:
            case Kind::Tstz:
                v = "DATE_FORMAT(" + q + ", '%Y-%m-%dT%H:%i:%s.%f')";
                break;
            default:
                v = q;
                break;
            }
            v = "CONVERT(" + v + " USING utf8mb4) COLLATE utf8mb4_bin";
            row += (i ? ", '|', " : "") + std::string("COALESCE(CONCAT(CHAR_LENGTH(") + v + "), ':', " + v + "), 'N')";
        }
        auto c = my.connect();
        c.exec("SET SESSION group_concat_max_len = 1073741824");
        auto r = c.query("SELECT COUNT(*), COALESCE(LOWER(MD5(GROUP_CONCAT(r ORDER BY r SEPARATOR '\\n'))), '') FROM "
                         "(SELECT CAST(" +
                         row + ") AS BINARY) AS r FROM items) s");
        return {std::stoll(r.text(0, 0)), r.text(0, 1)};
    }
    bool sameDigests() const { return pgDigest() == myDigest(); }
    std::string digests() const
    {
        const auto a = pgDigest();
        const auto b = myDigest();
        return "postgres " + std::to_string(a.rows) + ":" + a.md5 + ", mariadb " + std::to_string(b.rows) + ":" + b.md5;
    }

    /// Logs every row written to the MariaDB side's items (by a writer or by Driftless).
    void addMyWriteLog() const
    {
        my.exec("CREATE TABLE writes (id int NOT NULL, op varchar(8) NOT NULL)");
        my.exec("CREATE TRIGGER log_ins AFTER INSERT ON items FOR EACH ROW INSERT INTO writes VALUES (NEW.id, 'ins')");
        my.exec("CREATE TRIGGER log_upd AFTER UPDATE ON items FOR EACH ROW INSERT INTO writes VALUES (NEW.id, 'upd')");
        my.exec("CREATE TRIGGER log_del AFTER DELETE ON items FOR EACH ROW INSERT INTO writes VALUES (OLD.id, 'del')");
    }
    /// `flag = <not flag>` on the Postgres side: a boolean there when Postgres is the source, a
    /// smallint when MariaDB's boolean (tinyint(1)) was mapped to it.
    std::string pgToggle(const std::string &column) const
    {
        return column + " = " + (pgIsSource ? "NOT " + column : "1 - " + column);
    }
    /// What the Postgres side prints for a flag that is `on`.
    std::string pgFlag(bool on) const { return pgIsSource ? (on ? "t" : "f") : (on ? "1" : "0"); }
    std::string xmin(int id, const std::string &table = "items") const
    {
        return pg.scalar("SELECT xmin::text FROM " + table + " WHERE id = " + std::to_string(id));
    }
    std::string myWrites(int id) const
    {
        return my.scalar("SELECT COUNT(*) FROM writes WHERE id = " + std::to_string(id));
    }

    void dropOrigins() const { dropTwoWayOrigins(pipeline); }
};

std::string orientation(const ::testing::TestParamInfo<bool> &info)
{
    return info.param ? "postgresSource" : "mariadbSource";
}

/// RecordingObserver that also keeps the queued conflicts, for failure messages.
struct ConflictRecorder : RecordingObserver {
    std::mutex m;
    std::vector<std::string> queued;
    void conflict(const ConflictRecord &rec) override
    {
        std::lock_guard lock(m);
        queued.push_back(rec.table + " " + rec.key + " columns " + rec.columns + " source " + rec.source + " target " +
                         rec.target + " base " + rec.base);
    }
    std::string dump()
    {
        std::lock_guard lock(m);
        std::string out;
        for (const auto &q : queued)
            out += q + "\n";
        return out;
    }
};

/// The engine in this process (Scheduler over the pipeline's jobs).
struct MixedTwoWay : ::testing::TestWithParam<bool> {
    MixedSides s;
    ConflictRecorder obs;
    std::stop_source stop;
    std::thread engine;

    void SetUp() override { s.pgIsSource = GetParam(); }
    void TearDown() override
    {
        stopEngine();
        s.dropOrigins();
    }
    void startEngine()
    {
        auto jobs = jobsFor(s.workspace());
        ASSERT_EQ(jobs.size(), 2u);
        stop = std::stop_source();
        engine = std::thread([this, jobs] { Scheduler(jobs, obs, {}).run(stop.get_token()); });
    }
    void stopEngine()
    {
        if (engine.joinable()) {
            stop.request_stop();
            engine.join();
        }
    }
    void waitStreaming()
    {
        ASSERT_TRUE(s.streaming(180)) << "the load and both directions' start; states: "
                                      << obs.lastStateOf(s.sourceTable());
        ASSERT_TRUE(s.positionsPassNow(120)) << "both directions must read past the load";
    }
};

} // namespace

// One UPDATE on the Postgres side (every column type changed) is applied once on MariaDB and is
// dropped as ours when read back, so the Postgres row is never written again (its xmin stays);
// one UPDATE on MariaDB the same the other way (a trigger logs every write of the row). The rows'
// before-images cross engines (t against 1, timestamps, numerics): no false conflict.
TEST_P(MixedTwoWay, anUpdateOnEitherSideIsAppliedOnceAndNeverComesBack)
{
    s.createSource(100);
    startEngine();
    waitStreaming();
    s.addMyWriteLog();
    const auto toMy0 = loopCountersOf(s.pgReads(), MissingCounters::Zero);
    const auto toPg0 = loopCountersOf(s.myReads(), MissingCounters::Zero);

    s.pg.exec("UPDATE items SET v = 'changed on pg', n = n + 1000, " + s.pgToggle("flag") +
              ", at = '2025-01-02 03:04:05.25', amount = 99.90 WHERE id = 7");
    ASSERT_TRUE(waitFor([&] { return s.my.scalar("SELECT v FROM items WHERE id = 7") == "changed on pg"; }, 60))
        << obs.lastStateOf(s.sourceTable());
    const std::string xmin7 = s.xmin(7);
    ASSERT_TRUE(s.positionsPassNow(120)) << "both directions must read past the change and its application";
    auto toMy = loopCountersOf(s.pgReads(), MissingCounters::Zero);
    auto toPg = loopCountersOf(s.myReads(), MissingCounters::Zero);
    EXPECT_EQ(toMy.captured - toMy0.captured, 1);
    EXPECT_EQ(toMy.applied - toMy0.applied, 1);
    EXPECT_EQ(toPg.captured - toPg0.captured, 0) << "the change came back from MariaDB: a loop";
    EXPECT_EQ(toPg.applied - toPg0.applied, 0);
    EXPECT_EQ(toPg.droppedOwn - toPg0.droppedOwn, 1) << "MariaDB->Postgres must see the applied change and drop it";
    EXPECT_EQ(s.xmin(7), xmin7) << "the Postgres row was written again";
    EXPECT_EQ(s.myWrites(7), "1") << "MariaDB's row was written more than once";
    EXPECT_EQ(s.my.scalar("SELECT CONCAT_WS('|', n, flag, at, amount) FROM items WHERE id = 7"),
              "1007|" + std::string(7 % 2 ? "0" : "1") + "|2025-01-02 03:04:05.250000|99.90");

    // And the other way. MariaDB's values spell differently (1/0, DATETIME), the Postgres row's
    // before-image is the same row: applied, not a conflict.
    s.my.exec("UPDATE items SET v = 'changed on mariadb', flag = NOT flag, at = '2025-06-07 08:09:10', "
              "amount = amount + 0.25 WHERE id = 9");
    ASSERT_TRUE(waitFor([&] { return s.pg.scalar("SELECT v FROM items WHERE id = 9") == "changed on mariadb"; }, 60))
        << obs.lastStateOf(s.sourceTable());
    const std::string xmin9 = s.xmin(9);
    ASSERT_TRUE(s.positionsPassNow(120));
    const auto toMy2 = loopCountersOf(s.pgReads(), MissingCounters::Zero);
    const auto toPg2 = loopCountersOf(s.myReads(), MissingCounters::Zero);
    EXPECT_EQ(toPg2.captured - toPg.captured, 1);
    EXPECT_EQ(toPg2.applied - toPg.applied, 1);
    EXPECT_EQ(toMy2.captured - toMy.captured, 0) << "the change came back from Postgres: a loop";
    EXPECT_EQ(toMy2.droppedOwn - toMy.droppedOwn, 1);
    EXPECT_EQ(s.xmin(9), xmin9) << "the Postgres row was written again";
    EXPECT_EQ(s.myWrites(9), "1") << "MariaDB's row was written again";
    EXPECT_EQ(s.pg.scalar("SELECT concat_ws('|', flag, at, amount) FROM items WHERE id = 9"),
              s.pgFlag(9 % 2 == 0) + "|2025-06-07 08:09:10|9.75");
    EXPECT_EQ(s.my.scalar("SELECT COUNT(*) FROM writes"), "2") << "MariaDB: the arrival of 7 and the update of 9";
    EXPECT_FALSE(obs.sawEvent(" conflict: ")) << "equal values spelled by two engines are no conflict";
    EXPECT_TRUE(s.sameDigests()) << s.digests();
}

// Bounded, rate-limited writers on both sides on disjoint keys (inserts, updates of every column,
// deletes): after they stop both sides hold the same rows by the canonical oracle, and every
// change crossed exactly once.
TEST_P(MixedTwoWay, writersOnBothSidesConvergeWithoutLoops)
{
    s.createSource(200);
    startEngine();
    waitStreaming();
    const auto toMy0 = loopCountersOf(s.pgReads(), MissingCounters::Zero);
    const auto toPg0 = loopCountersOf(s.myReads(), MissingCounters::Zero);

    // 200 changes a side, one transaction each, at most about 100 a second.
    auto writer = [](const std::function<void(const std::string &)> &exec, int base, const std::string &toggle) {
        for (int i = 0; i < 200; ++i) {
            const std::string key = std::to_string(base + i % 80);
            if (i < 80)
                exec("INSERT INTO items (id, v, n, flag, at, amount) VALUES (" + key + ", 'new', " + std::to_string(i) +
                     ", " + (toggle.find("1 - ") != std::string::npos ? "1" : "true") +
                     ", '2024-07-01 12:00:00.125', 0.10)");
            else if (i < 180)
                exec("UPDATE items SET n = n + 1, v = 'upd " + std::to_string(i) + "', " + toggle +
                     ", at = '2024-07-02 13:14:15', amount = amount + 1.05 WHERE id = " + key);
            else
                exec("DELETE FROM items WHERE id = " + key);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    };
    auto pgc = s.pg.connect();
    auto myc = s.my.connect();
    std::thread onPg([&] { writer([&](const std::string &q) { pgc.exec(q); }, 1000, s.pgToggle("flag")); });
    std::thread onMy([&] { writer([&](const std::string &q) { myc.exec(q); }, 5000, "flag = NOT flag"); });
    onPg.join();
    onMy.join();

    ASSERT_TRUE(waitFor([&] { return s.sameDigests(); }, 180))
        << s.digests()
        << "; MariaDB ids: " << s.my.scalar("SELECT GROUP_CONCAT(id ORDER BY id) FROM items WHERE id >= 1000")
        << "; events: " << [&] {
               std::string out;
               for (const auto &e : obs.events)
                   if (e.find("conflict") != std::string::npos || e.find("error") != std::string::npos)
                       out += e + "\n";
               return out + obs.dump();
           }();
    EXPECT_EQ(s.pg.scalar("SELECT count(*) FROM items"), "320");
    EXPECT_EQ(s.pg.scalar("SELECT count(*) FROM items WHERE id >= 5000"), "60");
    EXPECT_EQ(s.my.scalar("SELECT COUNT(*) FROM items WHERE id BETWEEN 1000 AND 4999"), "60");
    ASSERT_TRUE(s.positionsPassNow(120));
    const auto toMy = loopCountersOf(s.pgReads(), MissingCounters::Zero);
    const auto toPg = loopCountersOf(s.myReads(), MissingCounters::Zero);
    EXPECT_EQ(toMy.captured - toMy0.captured, 200);
    EXPECT_EQ(toMy.applied - toMy0.applied, 200);
    EXPECT_EQ(toPg.captured - toPg0.captured, 200);
    EXPECT_EQ(toPg.applied - toPg0.applied, 200);
    EXPECT_EQ(toPg.droppedOwn - toPg0.droppedOwn, 200);
    EXPECT_EQ(toMy.droppedOwn - toMy0.droppedOwn, 200);
    EXPECT_FALSE(obs.sawEvent(" conflict: ")) << "disjoint keys make no conflict";
    std::printf("loop amplification: to MariaDB %.2f, to Postgres %.2f (applied / captured)\n",
                double(toMy.applied - toMy0.applied) / double(toMy.captured - toMy0.captured),
                double(toPg.applied - toPg0.applied) / double(toPg.captured - toPg0.captured));
}

// doctor checks each side with that side's checks: the Postgres side's (wal_level, replication
// origins, REPLICA IDENTITY) and the MariaDB side's (binlog row images, skip_replication).
TEST_P(MixedTwoWay, doctorChecksEachSideWithItsOwnChecks)
{
    s.createSource(1);
    bool mariadbSide = false;
    bool postgresSide = false;
    for (const auto &f : runDoctor(s.workspace(), s.pipeline)) {
        if (f.subject == "endpoint my") {
            EXPECT_NE(std::string(toString(f.level)), "error") << f.subject << ": " << f.message;
            mariadbSide = mariadbSide || f.message.find("skip_replication") != std::string::npos;
        }
        // (A Postgres table is flagged until the first run sets it to REPLICA IDENTITY FULL.)
        if (f.subject == "endpoint pg")
            postgresSide = postgresSide || (std::string(toString(f.level)) == "ok" &&
                                            f.message.find("replication origin") != std::string::npos);
    }
    EXPECT_TRUE(mariadbSide);
    EXPECT_TRUE(postgresSide);
}

INSTANTIATE_TEST_SUITE_P(Orientations, MixedTwoWay, ::testing::Values(true, false), orientation);

namespace {

const char *kPgPeople = "CREATE TABLE people (id int PRIMARY KEY, name varchar(100) NOT NULL, email varchar(100), "
                        "phone varchar(100), active boolean NOT NULL, seen timestamp NOT NULL, credit numeric(10,2) "
                        "NOT NULL)";
const char *kMyPeople = "CREATE TABLE people (id int PRIMARY KEY, name varchar(100) NOT NULL, email varchar(100), "
                        "phone varchar(100), active boolean NOT NULL, seen datetime(6) NOT NULL, credit decimal(10,2) "
                        "NOT NULL)";

/// Conflicts across the pair, through the CLI (apply, run, conflicts, resolve) with a workspace
/// state of its own.
struct MixedConflicts : ::testing::TestWithParam<bool> {
    MixedSides s;
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string runLog = dir.file("run.log");
    int engine = -1;

    void SetUp() override { s.pgIsSource = GetParam(); }
    void TearDown() override
    {
        stopRun();
        s.dropOrigins();
    }
    void startRun() { engine = spawnCli({"--state", state, "run"}, {}, runLog); }
    void stopRun()
    {
        if (engine > 0) {
            ::kill(engine, SIGTERM);
            waitPid(engine, 120);
            engine = -1;
        }
    }
    /// Runs SQL on the pipeline's source side, or its target side.
    void onSource(const std::string &sql) const { s.pgIsSource ? s.pg.exec(sql) : s.my.exec(sql); }
    void onTarget(const std::string &sql) const { s.pgIsSource ? s.my.exec(sql) : s.pg.exec(sql); }
    /// `active = <not active>` on the source side or the target side.
    std::string toggle(bool sourceSide) const
    {
        return sourceSide == s.pgIsSource ? s.pgToggle("active") : std::string("active = NOT active");
    }
    /// The row's synced columns as text both engines print alike for these values.
    std::string row(bool pgSide, int id) const
    {
        const std::string on = pgSide && !s.pgIsSource ? "active <> 0" : "active";
        const std::string sql = "SELECT concat_ws('|', name, email, phone, CASE WHEN " + on +
                                " THEN 'yes' ELSE 'no' END, credit) FROM people WHERE id = " + std::to_string(id);
        return pgSide ? s.pg.scalar(sql) : s.my.scalar(sql);
    }
    /// The canonical digest of people on each side (zoooracle.h on Postgres, the same text in
    /// MariaDB SQL).
    bool sameDigests() const
    {
        auto c = s.pg.connect();
        auto cols = driftless::zoo::sourceColumns(c, "public.people");
        std::erase_if(cols, [](const OracleColumn &o) { return o.name == "_driftless_version"; });
        driftless::zoo::prepareSession(c);
        const auto a = driftless::zoo::pgDigest(c, cols, "public.people");
        std::string rowExpr = "CONCAT(";
        for (size_t i = 0; i < cols.size(); ++i) {
            const std::string q = mysqlIdent(cols[i].name);
            std::string v = q;
            if (cols[i].kind == Kind::Int)
                v = "CAST(" + q + " AS CHAR)";
            else if (cols[i].kind == Kind::Numeric)
                v = "IF(CAST(" + q + " AS CHAR) LIKE '%.%', TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM CAST(" + q +
                    " AS CHAR))), CAST(" + q + " AS CHAR))";
            else if (cols[i].kind == Kind::Bool)
                v = "CASE " + q + " WHEN 1 THEN 't' WHEN 0 THEN 'f' ELSE CONCAT('not-bool:', " + q + ") END";
            else if (cols[i].kind == Kind::Ts || cols[i].kind == Kind::Tstz)
                v = "DATE_FORMAT(" + q + ", '%Y-%m-%dT%H:%i:%s.%f')";
            v = "CONVERT(" + v + " USING utf8mb4) COLLATE utf8mb4_bin";
            rowExpr +=
                (i ? ", '|', " : "") + std::string("COALESCE(CONCAT(CHAR_LENGTH(") + v + "), ':', " + v + "), 'N')";
        }
        auto m = s.my.connect();
        m.exec("SET SESSION group_concat_max_len = 1073741824");
        auto r = m.query("SELECT COUNT(*), COALESCE(LOWER(MD5(GROUP_CONCAT(r ORDER BY r SEPARATOR '\\n'))), '') FROM "
                         "(SELECT CAST(" +
                         rowExpr + ") AS BINARY) AS r FROM people) s");
        const driftless::zoo::Digest b{std::stoll(r.text(0, 0)), r.text(0, 1)};
        if (!(a == b))
            std::printf("digests: postgres %lld:%s, mariadb %lld:%s\n", a.rows, a.md5.c_str(), b.rows, b.md5.c_str());
        return a == b;
    }
    nlohmann::json openConflicts()
    {
        auto r = runCli({"--state", state, "conflicts", "--json"});
        EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
        return nlohmann::json::parse(r.out, nullptr, false);
    }
    /// Applies the file, runs until both directions stream past the load, and stops the engine.
    void loadedAndStopped(const std::string &conflicts)
    {
        onSource(s.pgIsSource ? kPgPeople : kMyPeople);
        std::string sql = "INSERT INTO people (id, name, email, phone, active, seen, credit) VALUES ";
        for (int i = 1; i <= 50; ++i)
            sql += (i > 1 ? ", (" : "(") + std::to_string(i) + ", 'name " + std::to_string(i) + "', 'p" +
                   std::to_string(i) + "@old', '555-" + std::to_string(i) + "', " + (i % 2 ? "true" : "false") +
                   ", '2024-03-0" + std::to_string(1 + i % 9) + " 08:00:00.5', " + std::to_string(i) + ".10)";
        onSource(sql);
        std::string yaml = s.yaml(conflicts);
        // MixedSides::yaml names the table items: this fixture syncs people.
        yaml.replace(yaml.find(".items"), 6, ".people");
        writeFile(dir.file("ws.yaml"), yaml);
        auto r = runCli({"--state", state, "apply", "--no-check", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
        startRun();
        ASSERT_TRUE(waitFor(
            [&] {
                try {
                    return s.pg.scalar("SELECT to_regclass('public.people') IS NOT NULL") == "t" &&
                           myTableExists(s.my, "people") && s.pg.scalar("SELECT count(*) FROM people") == "50" &&
                           s.my.scalar("SELECT COUNT(*) FROM people") == "50" &&
                           s.my.scalar("SELECT COUNT(*) FROM _driftless_checkpoints WHERE pipeline = '" + s.pgReads() +
                                       "' AND position LIKE '%\"lsn\"%'") == "1" &&
                           s.binlogPassed(0);
                } catch (const Error &) {
                    return false;
                }
            },
            180))
            << readFile(runLog);
        ASSERT_TRUE(s.positionsPassNow(120)) << readFile(runLog);
        stopRun();
    }
};

} // namespace

// merge_columns (the default): the source side changes email, the target side phone (and its
// boolean) of one row while the engine is stopped; after it starts both edits survive on both
// sides, and nothing is queued.
TEST_P(MixedConflicts, disjointColumnEditsOfOneRowBothSurviveOnBothSides)
{
    loadedAndStopped("");
    onSource("UPDATE people SET email = 'seven@source' WHERE id = 7");
    onTarget("UPDATE people SET phone = '555-0007-target', " + toggle(false) + " WHERE id = 7");
    startRun();
    ASSERT_TRUE(s.positionsPassNow(120)) << readFile(runLog);
    ASSERT_TRUE(waitFor([&] { return row(true, 7) == row(false, 7); }, 60)) << row(true, 7) << " / " << row(false, 7);
    EXPECT_EQ(row(true, 7), "name 7|seven@source|555-0007-target|no|7.10");
    EXPECT_TRUE(sameDigests());
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
}

// on_overlap: manual: both sides change phone of one row; the conflict waits in the queue with
// both versions and the base, neither side written; `resolve --take source` writes the source's
// row over the target's (converted between the engines' spellings), and it does not come back.
TEST_P(MixedConflicts, anOverlapUnderManualIsQueuedAndResolvedFromTheCli)
{
    loadedAndStopped("{ policy: merge_columns, on_overlap: manual }");
    onSource("UPDATE people SET phone = 'phone-source', " + toggle(true) + ", credit = 77.70 WHERE id = 11");
    onTarget("UPDATE people SET phone = 'phone-target' WHERE id = 11");
    startRun();
    ASSERT_TRUE(s.positionsPassNow(120)) << readFile(runLog);
    nlohmann::json list;
    ASSERT_TRUE(waitFor(
        [&] {
            list = openConflicts();
            return list.is_object() && list["conflicts"].size() == 1;
        },
        60))
        << list.dump(2) << readFile(runLog);
    const auto c = list["conflicts"][0];
    for (const char *field : {"id", "pipeline", "table", "key", "columns", "source", "target", "base", "detected_at"})
        EXPECT_TRUE(c.contains(field)) << field << " in " << c.dump(2);
    EXPECT_EQ(c["pipeline"], s.pipeline);
    EXPECT_EQ(c["table"], s.pgIsSource ? std::string("public.people") : s.my.name() + ".people");
    EXPECT_EQ(c["key"], nlohmann::json({{"id", "11"}}));
    EXPECT_EQ(c["columns"], nlohmann::json::array({"phone"})) << c.dump(2);
    EXPECT_EQ(c["source"]["phone"], "phone-source");
    EXPECT_EQ(c["target"]["phone"], "phone-target");
    EXPECT_EQ(c["base"]["phone"], "555-11");
    EXPECT_EQ(row(s.pgIsSource, 11), "name 11|p11@old|phone-source|no|77.70") << "neither side is overwritten";
    EXPECT_EQ(row(!s.pgIsSource, 11), "name 11|p11@old|phone-target|yes|11.10");

    // The source side's row must not be written again by the resolution coming back.
    const std::string pgXmin = s.xmin(11, "people");
    s.my.exec("CREATE TABLE writes (id int NOT NULL, op varchar(8) NOT NULL)");
    s.my.exec("CREATE TRIGGER log_upd AFTER UPDATE ON people FOR EACH ROW INSERT INTO writes VALUES (NEW.id, 'upd')");
    auto r = runCli({"--state", state, "resolve", std::to_string(c["id"].get<long long>()), "--take", "source"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(row(!s.pgIsSource, 11), "name 11|p11@old|phone-source|no|77.70");
    ASSERT_TRUE(s.positionsPassNow(120)) << readFile(runLog);
    if (s.pgIsSource) {
        EXPECT_EQ(s.xmin(11, "people"), pgXmin) << "the resolution written on MariaDB came back to Postgres";
        EXPECT_EQ(s.my.scalar("SELECT COUNT(*) FROM writes"), "1") << "MariaDB: the resolution only";
    } else {
        EXPECT_NE(s.xmin(11, "people"), pgXmin) << "the resolution is written on Postgres";
        EXPECT_EQ(s.my.scalar("SELECT COUNT(*) FROM writes"), "0") << "the resolution came back to MariaDB";
    }
    EXPECT_EQ(row(true, 11), row(false, 11));
    EXPECT_TRUE(sameDigests());
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Orientations, MixedConflicts, ::testing::Values(true, false), orientation);
