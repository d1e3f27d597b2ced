// The source changes under a pipeline (reference/faults.md F19-F22, docs/failover.md): a
// MariaDB primary fails over to its GTID replica, which is restarted on the primary's address
// with binary logs of the same names; a replica that lagged takes over without changes the
// target already has; a Postgres standby is promoted. Never silently wrong: the engine resumes
// where the new server provably continues the target's history, or stops naming both servers
// and the command; a re-snapshot then brings the target to the new server and leaves no row
// with an old server's version. The oracle is a count and an md5 computed in SQL on each side.

#include "core/db/mysqlconnection.h"
#include "core/db/sqlitedb.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"
#include "tests/support/throwawaymariadb.h"
#include "tests/support/throwawaypostgres.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cctype>
#include <csignal>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <thread>

using namespace driftless::test;

namespace {

constexpr const char *kItems = "CREATE TABLE shop.items (id bigint PRIMARY KEY, grp int NOT NULL, name varchar(40) "
                               "NOT NULL, qty int, note text)";

/// count|md5 of the rows in key order, computed by the server holding them.
std::string mysqlOracle(const ThrowawayMariadb &db)
{
    auto c = db.connect("shop");
    c.exec("SET SESSION group_concat_max_len = 1073741824");
    return *c.scalar("SELECT CONCAT(COUNT(*), '|', COALESCE(MD5(GROUP_CONCAT(CONCAT_WS('|', id, grp, name, "
                     "COALESCE(qty, '~'), COALESCE(note, '~')) ORDER BY id SEPARATOR '\\n')), '')) FROM items");
}

std::string pgOracle(const PgTestDb &db)
{
    return db.scalar("SELECT count(*) || '|' || coalesce(md5(string_agg(concat_ws('|', id, grp, name, "
                     "coalesce(qty::text, '~'), coalesce(note, '~')), E'\\n' ORDER BY id)), '') FROM shop.items");
}

/// A bounded writer: `n` single-row transactions of inserts, updates (some of the key) and
/// deletes on `db`, from a fixed seed; `next` is the next new key.
void write(const ThrowawayMariadb &db, int n, unsigned seed, long long &next)
{
    auto c = db.connect("shop");
    std::mt19937 rng(seed);
    auto key = [&] { return std::to_string(1 + rng() % next); };
    for (int i = 0; i < n; ++i) {
        switch (rng() % 6) {
        case 0:
        case 1:
            c.exec("INSERT INTO items VALUES (" + std::to_string(next++) + ", " + std::to_string(rng() % 7) + ", 'n" +
                   std::to_string(rng()) + "', " + std::to_string(rng() % 100) + ", REPEAT('x', " +
                   std::to_string(rng() % 300) + "))");
            break;
        case 2:
        case 3:
            c.exec("UPDATE items SET qty = COALESCE(qty, 0) + 1, name = 'u" + std::to_string(rng()) +
                   "' WHERE id = " + key());
            break;
        case 4:
            c.exec("DELETE FROM items WHERE id = " + key());
            break;
        default:
            c.exec("UPDATE IGNORE items SET id = " + std::to_string(next++) + " WHERE id = " + key());
        }
    }
}

struct MariadbFailover : ::testing::Test {
    ThrowawayMariadb primary{1};
    ThrowawayMariadb replica{2};
    PgTestDb dst{"srcchg_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string pipeline = uniqueName("failover");
    long long next = 1;
    /// The target is a SQLite file instead of the shared Postgres (set before SetUp).
    bool liteTarget = false;
    std::string lite = dir.file("dw.db");

    void SetUp() override
    {
        primary.exec("CREATE DATABASE shop");
        primary.exec(kItems);
        replica.replicateFrom(primary);
        auto c = primary.connect("shop");
        c.exec("INSERT INTO items SELECT seq, seq % 7, CONCAT('seed', seq), seq, IF(seq % 5 = 0, NULL, 'note') "
               "FROM seq_1_to_400");
        next = 401;
        replica.catchUpWith(primary);
        // The endpoint names the primary's address; after the switchover the replica answers there.
        writeFile(dir.file("ws.yaml"),
                  "endpoints:\n"
                  "  shop: { kind: mysql, dsn: \"" +
                      primary.dsn("shop") + "\" }\n" +
                      (liteTarget ? "  dw: { kind: sqlite, path: \"" + lite + "\" }\n"
                                  : "  dw: { kind: postgres, dsn: \"" + pgDsn(dst.name()) + "\" }\n") +
                      "pipelines:\n"
                      "  - name: " +
                      pipeline + "\n    source: shop\n    target: dw\n" +
                      (liteTarget ? "" : "    target_schema: shop\n") +
                      "    tables:\n"
                      "      - { table: items, strategy: cdc, page_size: 150 }\n");
        auto r = runCli({"--state", state, "apply", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
        sync();
    }
    void sync()
    {
        auto r = runCli({"--state", state, "run", "--once"});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    /// The stored checkpoint position of the table.
    nlohmann::json checkpoint()
    {
        return nlohmann::json::parse(
            dst.scalar("SELECT position FROM _driftless.checkpoints WHERE pipeline = '" + pipeline + "'"));
    }
    /// The primary dies; the replica is promoted and restarted on the primary's address.
    void failOver()
    {
        const int address = primary.port();
        primary.stop(true);
        replica.promote();
        replica.stop(false);
        replica.start(address);
    }
    /// count|every row's text in key order, built in SQL: on the source `db`, and on the target
    /// (Postgres or SQLite), for the tests that run on both.
    static std::string sourceText(const ThrowawayMariadb &db)
    {
        auto c = db.connect("shop");
        c.exec("SET SESSION group_concat_max_len = 1073741824");
        return *c.scalar("SELECT CONCAT(COUNT(*), '|', COALESCE(GROUP_CONCAT(CONCAT_WS('|', id, grp, name, "
                         "COALESCE(qty, '~'), COALESCE(note, '~')) ORDER BY id SEPARATOR '\\n'), '')) FROM items");
    }
    std::string targetText()
    {
        const std::string row = "id || '|' || grp || '|' || name || '|' || coalesce(CAST(qty AS TEXT), '~') || '|' || "
                                "coalesce(note, '~')";
        if (!liteTarget)
            return dst.scalar("SELECT count(*) || '|' || coalesce(string_agg(" + row +
                              ", E'\\n' ORDER BY id), '') FROM shop.items");
        driftless::core::SqliteDb db(lite);
        auto st = db.prepare("SELECT count(*) || '|' || coalesce(group_concat(r, char(10)), '') FROM (SELECT " + row +
                             " AS r FROM items ORDER BY id)");
        return st.step() ? st.text(0) : "?";
    }
    long long rowsOfOldEpochs()
    {
        return std::stoll(dst.scalar("SELECT count(*) FROM shop.items WHERE _driftless_version < (1::bigint << 56)"));
    }
};

/// F20: the replica, restarted where the primary was, has a binlog.000002 longer than the offset
/// the pipeline stored (read by file and offset, it would decode other transactions' bytes), or
/// shorter. Either way the pipeline resumes from its GTID state, which the replica holds, and the
/// target ends equal to the new primary, including what was written before and after the switch.
class MariadbSwitchover : public MariadbFailover, public ::testing::WithParamInterface<bool> {};

TEST_P(MariadbSwitchover, resumesByGtidNeverByAnotherServersOffset)
{
    const bool longer = GetParam();
    if (longer) {
        replica.exec("FLUSH BINARY LOGS"); // the replica's binlog.000002 takes the bulk below
        write(primary, 300, 1, next);
        replica.catchUpWith(primary);
        primary.exec("FLUSH BINARY LOGS"); // the primary's binlog.000002 starts small
        write(primary, 5, 2, next);
    } else {
        primary.exec("FLUSH BINARY LOGS"); // the primary's binlog.000002 takes the bulk
        replica.exec("FLUSH BINARY LOGS");
        replica.exec("FLUSH BINARY LOGS"); // the replica's takes nearly nothing
        write(primary, 300, 1, next);
    }
    sync();
    const auto cp = checkpoint();
    ASSERT_EQ(cp.at("file"), "binlog.000002") << cp.dump();
    const long long offset = cp.at("pos").get<long long>();
    EXPECT_EQ(cp.value("server_id", 0u), 1u) << cp.dump();
    EXPECT_FALSE(cp.value("gtid", "").empty()) << cp.dump();
    // Written while nothing reads; the replica has them too.
    write(primary, 40, 3, next);
    replica.catchUpWith(primary);
    long long size = -1;
    for (const auto &row : replica.connect().query("SHOW BINARY LOGS").rows)
        if (*row[0] == "binlog.000002")
            size = std::stoll(*row[1]);
    if (longer)
        ASSERT_GT(size, offset) << "the replica's binlog.000002 is longer than the stored offset";
    else
        ASSERT_LT(size, offset) << "the replica's binlog.000002 is shorter than the stored offset";

    failOver();
    write(replica, 40, 4, next);
    auto r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("resuming from GTID"), std::string::npos) << r.out << r.err;
    EXPECT_EQ(pgOracle(dst), mysqlOracle(replica));
    const auto after = checkpoint();
    EXPECT_EQ(after.value("server_id", 0u), 2u) << after.dump();

    // From here on the new server's positions: a restart reads by them, and later writes apply.
    write(replica, 30, 5, next);
    sync();
    EXPECT_EQ(pgOracle(dst), mysqlOracle(replica));
}

INSTANTIATE_TEST_SUITE_P(Binlog, MariadbSwitchover, ::testing::Values(true, false),
                         [](const auto &info) { return info.param ? "longerFile" : "shorterFile"; });

/// F20 + F22: the replica stopped replicating before the primary's last changes, which the
/// target applied; they die with the primary. The new server does not hold the stored GTID: the
/// engine stops (again on every run) naming both servers and the command, reads nothing, and
/// after the re-snapshot the target equals the new primary, without a row of an old version.
TEST_F(MariadbFailover, aReplicaThatLaggedIsRefusedAndAResnapshotBringsTheTargetToIt)
{
    replica.exec("STOP SLAVE");
    // The primary's binary log is files ahead of the replica's (binlog.000004 against .000001):
    // positions of the old server are higher than any the new one has for a while.
    for (int i = 0; i < 3; ++i)
        primary.exec("FLUSH BINARY LOGS");
    write(primary, 150, 6, next); // the changes that die with the primary
    sync();
    const std::string applied = pgOracle(dst);
    EXPECT_EQ(applied, mysqlOracle(primary));

    failOver();
    EXPECT_NE(mysqlOracle(replica), applied);
    for (int attempt = 0; attempt < 2; ++attempt) {
        auto r = runCli({"--state", state, "run", "--once"});
        EXPECT_NE(r.exitCode, 0);
        const std::string all = r.out + r.err;
        EXPECT_NE(all.find("server_id 1"), std::string::npos) << all;
        EXPECT_NE(all.find("server_id 2"), std::string::npos) << all;
        EXPECT_NE(all.find("driftless-cli resnapshot " + pipeline), std::string::npos) << all;
        EXPECT_EQ(pgOracle(dst), applied) << "nothing was read from the new server";
    }

    auto re = runCli({"--state", state, "resnapshot", pipeline});
    ASSERT_EQ(re.exitCode, 0) << re.out << re.err;
    write(replica, 30, 7, next);
    sync();
    EXPECT_EQ(pgOracle(dst), mysqlOracle(replica));
    EXPECT_EQ(rowsOfOldEpochs(), 0) << "rows keep a version the old server wrote";
    write(replica, 30, 8, next);
    sync();
    EXPECT_EQ(pgOracle(dst), mysqlOracle(replica));
}

/// The same failover, brought back by `driftless-cli recover`: every table is loaded again from
/// the new primary under a new epoch, each chunk compared with the target's rows of its key range
/// first, so only the rows that differ are written (the dead primary's changes undone, rows it
/// inserted removed). The rows left alike keep their older versions; every change the new server
/// makes after still lands on them.
/// Into Postgres and into SQLite (the target hashes its rows of each chunk's range alike).
class MariadbRecovery : public MariadbFailover, public ::testing::WithParamInterface<bool> {
public:
    MariadbRecovery() { liteTarget = GetParam(); }
};

TEST_P(MariadbRecovery, recoverBringsTheLaggedReplicaBackByDiff)
{
    replica.exec("STOP SLAVE");
    for (int i = 0; i < 3; ++i)
        primary.exec("FLUSH BINARY LOGS");
    write(primary, 60, 9, next);
    sync();
    failOver();
    auto asked = runCli({"--state", state, "recover", pipeline});
    ASSERT_EQ(asked.exitCode, 0) << asked.out << asked.err;
    auto r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const std::string log = r.out + r.err;
    EXPECT_EQ(targetText(), sourceText(replica)) << log;
    // "recovered by diff, 61 rows copied of 400 compared (9 of them removed: ...), in 0 s"
    const auto at = log.find("recovered by diff, ");
    ASSERT_NE(at, std::string::npos) << log;
    std::cout << "  " << log.substr(at, log.find('\n', at) - at) << "\n"; // the figures, for the record
    const long long copied = std::stoll(log.substr(at + 19));
    const long long compared = std::stoll(log.substr(log.find(" of ", at) + 4));
    EXPECT_EQ(compared, std::stoll(replica.scalar("SELECT COUNT(*) FROM shop.items")));
    EXPECT_GT(copied, 0) << log.substr(at, 200);
    EXPECT_LT(copied, compared / 3) << "copied most of the table: " << log.substr(at, 200);
    EXPECT_NE(log.find("removed: rows the new server does not have"), std::string::npos) << log.substr(at, 200);
    // The new server's changes reach every row, those of an older epoch included.
    replica.exec("UPDATE shop.items SET qty = COALESCE(qty, 0) + 1000");
    write(replica, 30, 10, next);
    sync();
    EXPECT_EQ(targetText(), sourceText(replica));
}

INSTANTIATE_TEST_SUITE_P(Targets, MariadbRecovery, ::testing::Values(false, true),
                         [](const auto &info) { return info.param ? "sqlite" : "postgres"; });

/// Item 4 of the issue: a source restored from a dump into a new server with the same server_id
/// (its own config file): its binary log is another history under the same names, and its GTIDs,
/// generated by the same server_id, pass the stored one with other transactions. Resuming by GTID
/// there would read on from a transaction the target never saw. The engine stops, naming the
/// restore and the commands; `recover` compares the target with the restored server and copies
/// what differs, and the changes the restore rolled back leave the target too.
TEST_F(MariadbFailover, aServerRestoredFromADumpIsNotResumedByItsLookAlikeGtids)
{
    ThrowawayMariadb restored{1};
    {
        // The dump: the rows as they are now.
        auto c = primary.connect("shop");
        c.exec("SET SESSION group_concat_max_len = 1073741824");
        const std::string rows =
            *c.scalar("SELECT GROUP_CONCAT(CONCAT('(', id, ',', grp, ',', QUOTE(name), ',', COALESCE(qty, 'NULL'), "
                      "',', QUOTE(note), ')')) FROM items");
        restored.exec("CREATE DATABASE shop");
        restored.exec(kItems);
        restored.exec("INSERT INTO shop.items VALUES " + rows);
    }
    write(primary, 60, 11, next); // after the dump: the restore loses these
    sync();
    const int address = primary.port();
    primary.stop(true);
    // The restored server takes writes of its own until its GTIDs pass the stored one.
    const auto seqOf = [](const std::string &gtid) { return std::stoll(gtid.substr(gtid.rfind('-') + 1)); };
    const long long stored = seqOf(checkpoint().value("gtid", std::string("0-1-0")));
    long long restoredNext = 100000;
    while (seqOf(restored.scalar("SELECT @@gtid_binlog_pos")) <= stored + 5)
        write(restored, 10, 12, restoredNext);
    restored.stop(false);
    restored.start(address);
    const std::string before = pgOracle(dst);
    for (int attempt = 0; attempt < 2; ++attempt) {
        auto r = runCli({"--state", state, "run", "--once"});
        EXPECT_NE(r.exitCode, 0) << r.out << r.err;
        const std::string all = r.out + r.err;
        EXPECT_NE(all.find("restored or rebuilt"), std::string::npos) << all;
        EXPECT_NE(all.find("driftless-cli recover " + pipeline), std::string::npos) << all;
        EXPECT_EQ(pgOracle(dst), before) << "nothing was read from the restored server";
    }
    auto asked = runCli({"--state", state, "recover", pipeline});
    ASSERT_EQ(asked.exitCode, 0) << asked.out << asked.err;
    // Killed after the comparing load's second chunk: the next run goes on from the third, still
    // comparing, from the range the checkpoint keeps.
    auto crashed = runCli({"--state", state, "run", "--once"}, {{"DRIFTLESS_CRASH_AT", "batch.after_commit:2"}});
    EXPECT_NE(crashed.exitCode, 0) << crashed.out << crashed.err;
    EXPECT_EQ(checkpoint().value("mode", std::string()), "compare") << checkpoint().dump();
    EXPECT_FALSE(checkpoint().value("compare_from", std::vector<std::string>{}).empty()) << checkpoint().dump();
    sync();
    EXPECT_EQ(pgOracle(dst), mysqlOracle(restored));
    restored.exec("UPDATE shop.items SET qty = COALESCE(qty, 0) + 1000");
    write(restored, 30, 13, restoredNext);
    sync();
    EXPECT_EQ(pgOracle(dst), mysqlOracle(restored));
}

/// count|md5 of `schema`.items in key order, on either Postgres.
std::string pgItemsOracle(const std::function<std::string(const std::string &)> &scalar, const std::string &schema)
{
    return scalar("SELECT count(*) || '|' || coalesce(md5(string_agg(concat_ws('|', id, grp, name, "
                  "coalesce(qty::text, '~'), coalesce(note, '~')), E'\\n' ORDER BY id)), '') FROM " +
                  schema + ".items");
}

/// A Postgres primary with a streaming standby, the endpoint listing both with
/// target_session_attrs=read-write, and a CDC pipeline of `items` (`rows` rows) into the shared
/// Postgres. failOver(): the standby stops before the primary's last changes (the target applies
/// them), the primary dies, the standby is promoted: the same system identifier on timeline 2,
/// which left timeline 1 before what the target has.
class PostgresFailover : public ::testing::Test {
protected:
    ThrowawayPostgres primary;
    std::optional<ThrowawayPostgres> standby;
    PgTestDb dst{"pgfo_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string pipeline = uniqueName("pgfo");

    /// Also a `tags` table keyed by (text, uuid), 5,000 rows, changed alike by failOver().
    bool withTags = false;
    /// The target is a SQLite file, or a MariaDB database, instead of the shared Postgres.
    bool liteTarget = false;
    std::string lite = dir.file("dw.db");
    std::optional<MyTestDb> myTarget;
    /// A row of `items` as text, the same expression in Postgres and SQLite.
    static constexpr const char *kRowText =
        "id || '|' || grp || '|' || name || '|' || coalesce(CAST(qty AS TEXT), '~') || '|' || coalesce(note, '~')";

    void start(int rows, const std::string &pipelineExtra = "")
    {
        primary.exec("CREATE TABLE items (id bigint PRIMARY KEY, grp int NOT NULL, name text NOT NULL, qty int, "
                     "note text)");
        primary.exec("INSERT INTO items SELECT g, g % 7, 'seed' || g, g, CASE WHEN g % 5 = 0 THEN NULL ELSE 'note' "
                     "END FROM generate_series(1, " +
                     std::to_string(rows) + ") g");
        if (withTags) {
            primary.exec("CREATE TABLE tags (region text, id uuid, n int, label text, PRIMARY KEY (region, id))");
            primary.exec("INSERT INTO tags SELECT (ARRAY['North', 'north east', 'Zeta', 'alpha'])[1 + g % 4], "
                         "md5(g::text)::uuid, g, 'l' || g FROM generate_series(1, 5000) g");
        }
        standby.emplace(ThrowawayPostgres::StandbyOf{primary});
        const std::string dsn = "host=127.0.0.1,127.0.0.1 port=" + std::to_string(primary.port()) + "," +
                                std::to_string(standby->port()) +
                                " user=postgres dbname=postgres "
                                "target_session_attrs=read-write";
        writeFile(dir.file("ws.yaml"),
                  "endpoints:\n"
                  "  app: { kind: postgres, dsn: \"" +
                      dsn + "\" }\n" +
                      (liteTarget ? "  dw: { kind: sqlite, path: \"" + lite + "\" }\n"
                       : myTarget ? "  dw: { kind: mysql, dsn: \"" + myTarget->dsn() + "\" }\n"
                                  : "  dw: { kind: postgres, dsn: \"" + pgDsn(dst.name()) + "\" }\n") +
                      "pipelines:\n"
                      "  - name: " +
                      pipeline + "\n    source: app\n    target: dw\n" + pipelineExtra +
                      (liteTarget || myTarget ? "" : "    target_schema: public\n") +
                      "    tables:\n"
                      "      - { table: public.items, strategy: cdc, page_size: 1000 }\n" +
                      (withTags ? "      - { table: public.tags, strategy: cdc, page_size: 1000 }\n" : ""));
        auto r = runCli({"--state", state, "apply", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
        sync();
        primary.exec("UPDATE items SET qty = qty + 1 WHERE id % 3 = 0");
        sync();
        standby->catchUpWith(primary);
        EXPECT_EQ(target(), source(*standby));
    }
    std::string sync()
    {
        auto r = runCli({"--state", state, "run", "--once"});
        EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
        return r.out + r.err;
    }
    /// count|md5 of `items` in key order; into SQLite (which has no md5), count|every row's text.
    std::string source(const ThrowawayPostgres &pg) const
    {
        if (liteTarget || myTarget)
            return pg.scalar(std::string("SELECT count(*) || '|' || coalesce(string_agg(") + kRowText +
                             ", E'\\n' ORDER BY id), '') FROM public.items");
        return pgItemsOracle([&](const std::string &sql) { return pg.scalar(sql); }, "public");
    }
    std::string target()
    {
        if (liteTarget) {
            driftless::core::SqliteDb db(lite);
            auto st = db.prepare(std::string("SELECT count(*) || '|' || coalesce(group_concat(r, char(10)), '') FROM "
                                             "(SELECT ") +
                                 kRowText + " AS r FROM items ORDER BY id)");
            return st.step() ? st.text(0) : "?";
        }
        if (myTarget) {
            auto c = myTarget->connect();
            c.exec("SET SESSION group_concat_max_len = 1073741824");
            return c
                .scalar("SELECT CONCAT(COUNT(*), '|', COALESCE(GROUP_CONCAT(CONCAT_WS('|', id, grp, name, "
                        "COALESCE(qty, '~'), COALESCE(note, '~')) ORDER BY id SEPARATOR '\\n'), '')) FROM items")
                .value_or("?");
        }
        return pgItemsOracle([&](const std::string &sql) { return dst.scalar(sql); }, "public");
    }
    static std::string tags(const std::function<std::string(const std::string &)> &scalar)
    {
        return scalar("SELECT count(*) || '|' || md5(string_agg(concat_ws('|', region, id, coalesce(n::text, '~'), "
                      "label), E'\\n' ORDER BY region COLLATE \"C\", id)) FROM public.tags");
    }
    long long rowsOfOldEpochs()
    {
        return std::stoll(dst.scalar("SELECT count(*) FROM public.items WHERE _driftless_version < (1::bigint << 56)"));
    }
    /// Returns the target's rows as they were before the failover (the dead primary's changes in).
    std::string failOver()
    {
        standby->stop(false); // it never sees what follows
        primary.exec("UPDATE items SET name = 'lost ' || id, qty = NULL WHERE id % 97 = 0");
        primary.exec("DELETE FROM items WHERE id % 101 = 0");
        primary.exec("INSERT INTO items SELECT g, 1, 'lost', 0, NULL FROM generate_series(1000001, 1000050) g");
        if (withTags)
            primary.exec("UPDATE tags SET label = 'lost' WHERE n % 89 = 0; DELETE FROM tags WHERE n % 97 = 0; "
                         "INSERT INTO tags SELECT 'zz lost', md5('lost' || g)::uuid, g, 'lost' FROM "
                         "generate_series(1, 20) g");
        sync();
        const std::string applied = target();
        EXPECT_EQ(applied, source(primary));
        primary.stop(true);
        standby->start();
        standby->promote();
        standby->exec("UPDATE items SET note = 'after' WHERE id % 89 = 0");
        if (withTags)
            standby->exec("UPDATE tags SET n = NULL WHERE n % 83 = 0");
        EXPECT_NE(source(*standby), applied);
        return applied;
    }
};

/// F19 + F22: the engine stops naming the timelines and the commands, reads nothing, and after
/// the re-snapshot the target equals the new primary (the dead primary's changes gone from it
/// too), without a row of an old version, even though the new primary's positions are below the
/// versions those changes left.
TEST_F(PostgresFailover, aPromotedStandbyThatLackedChangesIsRefusedAndAResnapshotBringsTheTargetToIt)
{
    start(400);
    const std::string applied = failOver();
    for (int attempt = 0; attempt < 2; ++attempt) {
        auto r = runCli({"--state", state, "run", "--once"});
        EXPECT_NE(r.exitCode, 0);
        const std::string all = r.out + r.err;
        EXPECT_NE(all.find("timeline 1 -> 2"), std::string::npos) << all;
        EXPECT_NE(all.find("driftless-cli recover " + pipeline), std::string::npos) << all;
        EXPECT_NE(all.find("driftless-cli resnapshot " + pipeline), std::string::npos) << all;
        EXPECT_EQ(target(), applied) << "nothing was read from the new primary";
    }
    auto re = runCli({"--state", state, "resnapshot", pipeline});
    ASSERT_EQ(re.exitCode, 0) << re.out << re.err;
    sync();
    EXPECT_EQ(target(), source(*standby));
    EXPECT_EQ(rowsOfOldEpochs(), 0) << "rows keep a version the old primary wrote";
    standby->exec("UPDATE items SET qty = 7 WHERE id % 13 = 0");
    sync();
    EXPECT_EQ(target(), source(*standby));
}

/// Item 3 of the issue: `driftless-cli recover` (or recover: auto) brings the target back to the
/// promoted standby by diff: a new slot, each table compared page by page with the new server and
/// only what differs copied, while the stream goes on. The target equals the new primary; the
/// rows copied are about the rows that changed, not the table.
TEST_F(PostgresFailover, recoverBringsThePromotedStandbyBackByDiff)
{
    constexpr int kRows = 20000;
    withTags = true; // and a key of text and uuid, compared by keyset
    start(kRows);
    failOver();
    auto refused = runCli({"--state", state, "run", "--once"});
    EXPECT_NE(refused.exitCode, 0) << refused.out << refused.err;
    auto asked = runCli({"--state", state, "recover", pipeline});
    ASSERT_EQ(asked.exitCode, 0) << asked.out << asked.err;
    const std::string log = sync();
    EXPECT_EQ(target(), source(*standby)) << log;
    // "recovered by diff, 2,312 rows copied of 20,000 compared, in 1 s"
    const auto at = log.find("recovered by diff, ");
    ASSERT_NE(at, std::string::npos) << log;
    std::string copied;
    for (size_t i = at + 19; i < log.size() && (std::isdigit(static_cast<unsigned char>(log[i])) || log[i] == ','); ++i)
        if (log[i] != ',')
            copied += log[i];
    ASSERT_FALSE(copied.empty()) << log.substr(at, 200);
    std::cout << "  " << log.substr(at, log.find('\n', at) - at) << "\n"; // the figures, for the record
    EXPECT_LT(std::stoll(copied), kRows / 5) << "copied most of the tables: " << log.substr(at, 200);
    EXPECT_GT(std::stoll(copied), 0) << log.substr(at, 200);
    EXPECT_NE(log.find("of 25,000 compared"), std::string::npos) << log.substr(at, 200);
    EXPECT_EQ(tags([&](const std::string &sql) { return dst.scalar(sql); }),
              tags([&](const std::string &sql) { return standby->scalar(sql); }));
    standby->exec("UPDATE items SET qty = 7 WHERE id % 13 = 0");
    sync();
    EXPECT_EQ(target(), source(*standby));
}

/// Into a SQLite or a MariaDB target the same recovery compares page by page too (the target
/// hashes its rows of each page's key range by index range): the target equals the new primary,
/// and the rows copied are about the rows that changed.
class PostgresFailoverInto : public PostgresFailover, public ::testing::WithParamInterface<bool> {};

TEST_P(PostgresFailoverInto, recoverBringsThePromotedStandbyBackByDiff)
{
    constexpr int kRows = 20000;
    if (GetParam())
        liteTarget = true;
    else
        myTarget.emplace("pgfo_my");
    start(kRows, "    recover: auto\n");
    failOver();
    const std::string log = sync();
    EXPECT_EQ(target(), source(*standby)) << log;
    const auto at = log.find("recovered by diff, ");
    ASSERT_NE(at, std::string::npos) << log;
    std::cout << "  " << log.substr(at, log.find('\n', at) - at) << "\n"; // the figures, for the record
    std::string copied;
    for (size_t i = at + 19; i < log.size() && (std::isdigit(static_cast<unsigned char>(log[i])) || log[i] == ','); ++i)
        if (log[i] != ',')
            copied += log[i];
    ASSERT_FALSE(copied.empty()) << log.substr(at, 200);
    EXPECT_LT(std::stoll(copied), kRows / 5) << "copied most of the table: " << log.substr(at, 200);
    EXPECT_GT(std::stoll(copied), 0) << log.substr(at, 200);
    standby->exec("UPDATE items SET qty = 7 WHERE id % 13 = 0");
    sync();
    EXPECT_EQ(target(), source(*standby));
}

INSTANTIATE_TEST_SUITE_P(Targets, PostgresFailoverInto, ::testing::Values(true, false),
                         [](const auto &info) { return info.param ? "sqlite" : "mariadb"; });

/// recover: auto does the same without asking.
TEST_F(PostgresFailover, recoverAutoBringsThePromotedStandbyBackWithoutAsking)
{
    start(2000, "    recover: auto\n");
    failOver();
    const std::string log = sync();
    EXPECT_NE(log.find("recovered by diff"), std::string::npos) << log;
    EXPECT_EQ(target(), source(*standby)) << log;
}

/// Item 4 (F22): the source restored to a point in time: a base backup (the standby, stopped),
/// the dead primary's WAL replayed up to a restore point, promoted there, so timeline 2 leaves
/// timeline 1 before what the target holds. The engine finds the branch before its position and
/// stops without reading; `recover` brings the target to the restored server by diff, and the
/// changes the restore rolled back (a delete, inserted rows) leave the target too.
TEST_F(PostgresFailover, aSourceRestoredToAPointInTimeBeforeTheTargetIsDetectedAndRecovered)
{
    start(2000);
    standby->stop(false);                                             // the base backup, as of now
    primary.exec("UPDATE items SET qty = qty + 10 WHERE id % 7 = 0"); // kept by the restore
    const std::string restorePoint = primary.scalar("SELECT pg_current_wal_insert_lsn()");
    primary.exec("DELETE FROM items WHERE id % 11 = 0"); // rolled back by the restore
    primary.exec("INSERT INTO items SELECT g, 0, 'lost' || g, g, NULL FROM generate_series(2001, 2100) g");
    sync();
    const std::string applied = target();
    EXPECT_EQ(applied, source(primary));
    primary.stop(false);
    standby->restoreTo(primary, restorePoint);
    EXPECT_EQ(standby->scalar("SELECT count(*) FROM items"), "2000");
    EXPECT_EQ(standby->scalar("SELECT count(*) FROM items WHERE id % 7 = 0 AND qty >= id + 10"), "285");
    auto refused = runCli({"--state", state, "run", "--once"});
    EXPECT_NE(refused.exitCode, 0) << refused.out << refused.err;
    EXPECT_NE((refused.out + refused.err).find("timeline 1 -> 2"), std::string::npos) << refused.out << refused.err;
    EXPECT_EQ(target(), applied) << "nothing was read from the restored server";
    auto asked = runCli({"--state", state, "recover", pipeline});
    ASSERT_EQ(asked.exitCode, 0) << asked.out << asked.err;
    const std::string log = sync();
    const auto at = log.find("recovered by diff");
    ASSERT_NE(at, std::string::npos) << log;
    std::cout << "  " << log.substr(at, log.find('\n', at) - at) << "\n"; // the figures, for the record
    EXPECT_EQ(target(), source(*standby)) << log;
    standby->exec("UPDATE items SET qty = 7 WHERE id % 13 = 0");
    sync();
    EXPECT_EQ(target(), source(*standby));
}

/// P7: InnoDB performs a foreign key's ON DELETE / ON UPDATE actions itself, and the binlog
/// carries only the parent's change. A parent with an ON DELETE CASCADE ON UPDATE CASCADE child
/// (whose own child cascades too), an ON DELETE SET NULL ON UPDATE CASCADE child and a child keyed
/// by the parent's unique code, all synced by CDC, under a bounded writer that deletes and re-keys
/// parents (also in transactions that change a child first), with the engine killed twice: every
/// table ends equal to the source, compared by the text of every row built in SQL on each side.
class Cascades : public ::testing::TestWithParam<bool> {
protected:
    MyTestDb src{"fkc_src"};
    PgTestDb pg{"fkc_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string lite = dir.file("replica.db");
    std::string pipeline = uniqueName("fkc");
    bool sqlite() const { return GetParam(); }

    struct Table {
        std::string name;
        std::vector<std::string> columns;
        std::string key;
    };
    const std::vector<Table> m_tables{{"parent", {"id", "code", "name"}, "id"},
                                      {"child_del", {"id", "parent_id", "v"}, "id"},
                                      {"grandchild", {"id", "child_id", "w"}, "id"},
                                      {"child_null", {"id", "parent_id", "v"}, "id"},
                                      {"child_code", {"parent_code", "seq", "v"}, "parent_code, seq"}};

    std::string sourceRows(const Table &t)
    {
        auto c = src.connect();
        c.exec("SET SESSION group_concat_max_len = 1073741824");
        std::string row = "CONCAT_WS('|'";
        for (const auto &col : t.columns)
            row += ", COALESCE(CAST(" + col + " AS CHAR), '~')";
        return c
            .scalar("SELECT CONCAT(COUNT(*), ':', COALESCE(GROUP_CONCAT(" + row + ") ORDER BY " + t.key +
                    " SEPARATOR ';'), '')) FROM " + t.name)
            .value_or("?");
    }
    std::string targetRows(const Table &t)
    {
        std::string row;
        for (const auto &col : t.columns)
            row += (row.empty() ? "" : " || '|' || ") + std::string("coalesce(CAST(") + col + " AS TEXT), '~')";
        if (!sqlite())
            return pg.scalar("SELECT count(*) || ':' || coalesce(string_agg(" + row + ", ';' ORDER BY " + t.key +
                             "), '') FROM public." + t.name);
        driftless::core::SqliteDb db(lite);
        auto st = db.prepare("SELECT count(*) || ':' || coalesce(group_concat(r, ';'), '') FROM (SELECT " + row +
                             " AS r FROM \"" + t.name + "\" ORDER BY " + t.key + ")");
        return st.step() ? st.text(0) : "?";
    }
    std::string diff()
    {
        std::string out;
        for (const auto &t : m_tables) {
            const std::string a = sourceRows(t), b = targetRows(t);
            if (a != b)
                out += t.name + ": source " + a.substr(0, 300) + "\n   target " + b.substr(0, 300) + "\n";
        }
        return out;
    }

    void SetUp() override
    {
        src.exec("CREATE TABLE parent (id int PRIMARY KEY, code varchar(12) NOT NULL UNIQUE, name varchar(40))");
        src.exec("CREATE TABLE child_del (id int PRIMARY KEY, parent_id int NOT NULL, v int, FOREIGN KEY (parent_id) "
                 "REFERENCES parent (id) ON DELETE CASCADE ON UPDATE CASCADE)");
        src.exec("CREATE TABLE grandchild (id int PRIMARY KEY, child_id int NOT NULL, w int, FOREIGN KEY (child_id) "
                 "REFERENCES child_del (id) ON DELETE CASCADE ON UPDATE CASCADE)");
        src.exec("CREATE TABLE child_null (id int PRIMARY KEY, parent_id int NULL, v int, FOREIGN KEY (parent_id) "
                 "REFERENCES parent (id) ON DELETE SET NULL ON UPDATE CASCADE)");
        src.exec("CREATE TABLE child_code (parent_code varchar(12) NOT NULL, seq int NOT NULL, v int, PRIMARY KEY "
                 "(parent_code, seq), FOREIGN KEY (parent_code) REFERENCES parent (code) ON DELETE CASCADE ON "
                 "UPDATE CASCADE)");
        src.exec("INSERT INTO parent SELECT seq, CONCAT('p', seq), CONCAT('parent ', seq) FROM seq_1_to_200");
        src.exec("INSERT INTO child_del SELECT seq, 1 + seq % 200, seq FROM seq_1_to_600");
        src.exec("INSERT INTO grandchild SELECT seq, seq, seq FROM seq_1_to_600");
        src.exec("INSERT INTO child_null SELECT seq, 1 + seq % 200, seq FROM seq_1_to_400");
        src.exec("INSERT INTO child_code SELECT CONCAT('p', 1 + seq % 200), seq, seq FROM seq_1_to_400");
        std::string target = sqlite() ? "  dw: { kind: sqlite, path: \"" + lite + "\" }\n"
                                      : "  dw: { kind: postgres, dsn: \"" + pgDsn(pg.name()) + "\" }\n";
        std::string tables;
        for (const auto &t : m_tables)
            tables += "      - { table: " + t.name + ", strategy: cdc, page_size: 250 }\n";
        writeFile(dir.file("ws.yaml"), "endpoints:\n"
                                       "  shop: { kind: mysql, dsn: \"" +
                                           myDsn(src.name()) + "\" }\n" + target +
                                           "pipelines:\n"
                                           "  - name: " +
                                           pipeline + "\n    source: shop\n    target: dw\n" +
                                           (sqlite() ? "" : "    target_schema: public\n") + "    tables:\n" + tables);
        auto r = runCli({"--state", state, "apply", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
};

TEST_P(Cascades, theChildrenFollowTheirParentsChangesThroughKillNine)
{
    auto first = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
    EXPECT_NE((first.out + first.err).find("foreign-key actions"), std::string::npos) << first.out << first.err;
    EXPECT_EQ(diff(), "");

    const unsigned seed = 20261206u + static_cast<unsigned>(std::random_device{}() % 1000);
    std::printf("seed %u\n", seed);
    std::atomic<int> steps{0};
    // Bounded by count (400 steps) and rate (one every 5 ms); joined on every way out.
    std::jthread writer([&](std::stop_token st) {
        auto c = src.connect();
        std::mt19937 rng(seed);
        int next = 10000;
        auto any = [&] { return std::to_string(1 + rng() % 260); };
        for (int i = 0; i < 400 && !st.stop_requested(); ++i) {
            const std::string k = any();
            switch (rng() % 8) {
            case 0:
                c.exec("DELETE FROM parent WHERE id = " + k);
                break;
            case 1: { // re-key: id and code (children keyed by the code get new keys)
                const std::string n = std::to_string(next++);
                c.exec("UPDATE parent SET id = " + n + ", code = CONCAT('r', " + n + ") WHERE id = " + k);
                break;
            }
            case 2: {
                const std::string n = std::to_string(next++);
                c.exec("START TRANSACTION");
                c.exec("INSERT INTO parent VALUES (" + n + ", CONCAT('n', " + n + "), 'new')");
                c.exec("INSERT INTO child_del VALUES (" + n + ", " + n + ", 1)");
                c.exec("INSERT INTO grandchild VALUES (" + n + ", " + n + ", 1)");
                c.exec("INSERT INTO child_null VALUES (" + n + ", " + n + ", 1)");
                c.exec("INSERT INTO child_code VALUES (CONCAT('n', " + n + "), 1, 1)");
                c.exec("COMMIT");
                break;
            }
            case 3: // a child changed, then its parent deleted, in one transaction
                c.exec("START TRANSACTION");
                c.exec("UPDATE child_del SET v = v + 100 WHERE parent_id = " + k);
                c.exec("UPDATE child_null SET v = v + 100 WHERE parent_id = " + k);
                c.exec("DELETE FROM parent WHERE id = " + k);
                c.exec("COMMIT");
                break;
            case 4:
                c.exec("UPDATE child_del SET v = v + 1 WHERE id = " + std::to_string(1 + rng() % 700));
                break;
            case 5:
                c.exec("DELETE FROM child_del WHERE id = " + std::to_string(1 + rng() % 700));
                break;
            case 6: // a parent deleted, and a new child for another one, in one transaction
                c.exec("START TRANSACTION");
                c.exec("DELETE FROM parent WHERE id = " + k);
                c.exec("INSERT IGNORE INTO child_null SELECT " + std::to_string(next++) +
                       ", id, 7 FROM parent "
                       "ORDER BY id LIMIT 1");
                c.exec("COMMIT");
                break;
            default:
                c.exec("UPDATE child_code SET v = v + 1 WHERE parent_code = CONCAT('p', " + k + ")");
            }
            steps = i + 1;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    });
    std::mt19937 rng(seed);
    for (int kill = 0; kill < 2; ++kill) {
        const int pid = spawnCli({"--state", state, "run"}, {}, dir.file("run.log"));
        std::this_thread::sleep_for(std::chrono::milliseconds(600 + rng() % 1200));
        ::kill(pid, SIGKILL);
        EXPECT_EQ(waitPid(pid, 30), -SIGKILL);
    }
    writer.join();
    EXPECT_EQ(steps.load(), 400);
    auto r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err << readFile(dir.file("run.log"));
    EXPECT_EQ(diff(), "") << "seed " << seed;
}

INSTANTIATE_TEST_SUITE_P(Targets, Cascades, ::testing::Values(false, true),
                         [](const auto &info) { return info.param ? "sqlite" : "postgres"; });

} // namespace
