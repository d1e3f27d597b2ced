// Two-way conflicts on tables whose keys the two servers (or the stream and a server) spell
// differently: a BINARY(16) UUID key and a DATETIME(6) key between two MariaDB databases, with a
// VARBINARY column in conflict. Conflict
// detection looks the target's row up by the key a change carries; a key it cannot find there
// would make every change look like a conflict with a deleted row, or skip detection altogether.
// Disjoint edits of one row must merge, an overlapping edit under `manual` must be queued once and
// resolve, and both sides must end equal by a hash computed in SQL on each.

#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"
#include "tests/support/twowayfixture.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <string>

using namespace driftless::test;

namespace {

struct KeyCase {
    const char *name;
    const char *create;  ///< the table `people` with key `k`
    const char *seedKey; ///< SQL for row i's key, `%d` standing for i
};

std::string keyOf(const KeyCase &kc, int i)
{
    std::string s = kc.seedKey;
    const auto at = s.find("%d");
    return s.replace(at, 2, std::to_string(i));
}

const KeyCase kCases[] = {
    {"int",
     "CREATE TABLE people (k int PRIMARY KEY, name varchar(100) NOT NULL, email varchar(100), phone varchar(100), "
     "tag VARBINARY(8))",
     "%d"},
    {"binary16",
     "CREATE TABLE people (k BINARY(16) PRIMARY KEY, name varchar(100) NOT NULL, email varchar(100), "
     "phone varchar(100), tag VARBINARY(8))",
     "UNHEX(MD5(CONCAT('row', %d)))"},
    {"datetime6",
     "CREATE TABLE people (k DATETIME(6) PRIMARY KEY, name varchar(100) NOT NULL, email varchar(100), "
     "phone varchar(100), tag VARBINARY(8))",
     "TIMESTAMP('2024-01-01 00:00:00.123456') + INTERVAL %d MINUTE"},
};

struct TwoWayKeys : ::testing::TestWithParam<KeyCase> {
    MyTestDb a{"twk_a"};
    MyTestDb b{"twk_b"};
    std::string pipeline = uniqueName("twk");
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string runLog = dir.file("run.log");
    int engine = -1;

    void TearDown() override { stopRun(); }

    CliResult apply(const std::string &conflicts)
    {
        writeFile(dir.file("ws.yaml"),
                  "endpoints:\n  a: { kind: mysql, dsn: \"" + a.dsn() + "\" }\n  b: { kind: mysql, dsn: \"" + b.dsn() +
                      "\" }\npipelines:\n  - name: " + pipeline +
                      "\n    source: a\n    target: b\n    direction: both\n    tables:\n      - table: " + a.name() +
                      ".people\n        strategy: cdc\n" +
                      (conflicts.empty() ? "" : "        conflicts: " + conflicts + "\n"));
        return runCli({"--state", state, "apply", "--no-check", dir.file("ws.yaml")});
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
    bool quiesced(int seconds) { return myBinlogPassesNow(a, b, pipeline, seconds); }
    void loadedAndStopped(const std::string &conflicts)
    {
        a.exec(GetParam().create);
        {
            auto c = a.connect();
            for (int i = 1; i <= 30; ++i)
                c.exec("INSERT INTO people VALUES (" + keyOf(GetParam(), i) + ", 'name " + std::to_string(i) + "', 'p" +
                       std::to_string(i) + "@old', '555-" + std::to_string(i) + "', UNHEX('0102'))");
        }
        auto r = apply(conflicts);
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
        startRun();
        ASSERT_TRUE(waitFor(
            [&] {
                return myTableExists(b, "people") && b.scalar("SELECT COUNT(*) FROM people") == "30" &&
                       myDirectionPassed(b, pipeline, 0) && myDirectionPassed(a, pipeline + "_rev", 0);
            },
            180))
            << readFile(runLog);
        ASSERT_TRUE(quiesced(120)) << readFile(runLog);
        stopRun();
    }
    static std::string hash(MyTestDb &db)
    {
        auto c = db.connect();
        c.exec("SET SESSION group_concat_max_len = 1073741824");
        return c
            .scalar("SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', HEX(k), name, COALESCE(email, '<null>'), "
                    "COALESCE(phone, '<null>'), COALESCE(HEX(tag), '<null>')) ORDER BY k SEPARATOR ',')) FROM people")
            .value_or("no rows");
    }
    std::string row(MyTestDb &db, int i)
    {
        return db.scalar("SELECT CONCAT_WS('|', name, email, phone, HEX(tag)) FROM people WHERE k = " +
                         keyOf(GetParam(), i));
    }
    nlohmann::json openConflicts()
    {
        auto r = runCli({"--state", state, "conflicts", "--json"});
        EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
        return nlohmann::json::parse(r.out);
    }
};

} // namespace

TEST_P(TwoWayKeys, disjointEditsMergeAndAnOverlapIsQueuedOnceAndResolves)
{
    loadedAndStopped("{ policy: merge_columns, on_overlap: manual }");
    a.exec("UPDATE people SET email = 'seven@a' WHERE k = " + keyOf(GetParam(), 7));
    b.exec("UPDATE people SET phone = '555-0007-b' WHERE k = " + keyOf(GetParam(), 7));
    a.exec("UPDATE people SET tag = UNHEX('0A0B') WHERE k = " + keyOf(GetParam(), 11));
    b.exec("UPDATE people SET tag = UNHEX('0C0D0E') WHERE k = " + keyOf(GetParam(), 11));
    // Plain one-sided changes, which must not be taken for conflicts.
    a.exec("UPDATE people SET name = 'only a' WHERE k = " + keyOf(GetParam(), 3));
    b.exec("UPDATE people SET name = 'only b' WHERE k = " + keyOf(GetParam(), 4));
    a.exec("DELETE FROM people WHERE k = " + keyOf(GetParam(), 5));
    startRun();
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    nlohmann::json list;
    ASSERT_TRUE(waitFor(
        [&] {
            list = openConflicts();
            return row(a, 7) == row(b, 7) && list["conflicts"].size() >= 1;
        },
        60))
        << row(a, 7) << " / " << row(b, 7) << "\n"
        << list.dump(2) << readFile(runLog);
    EXPECT_EQ(row(a, 7), "name 7|seven@a|555-0007-b|0102");
    EXPECT_EQ(row(b, 3), "only a|p3@old|555-3|0102");
    EXPECT_EQ(row(a, 4), "only b|p4@old|555-4|0102");
    EXPECT_EQ(b.scalar("SELECT COUNT(*) FROM people"), "29");
    ASSERT_EQ(list["conflicts"].size(), 1u) << list.dump(2);
    EXPECT_EQ(list["conflicts"][0]["columns"], nlohmann::json::array({"tag"}));
    EXPECT_EQ(row(a, 11), "name 11|p11@old|555-11|0A0B");
    EXPECT_EQ(row(b, 11), "name 11|p11@old|555-11|0C0D0E");

    auto r = runCli({"--state", state, "resolve", list["conflicts"][0]["id"].dump(), "--take", "target"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    ASSERT_TRUE(waitFor([&] { return row(a, 11) == row(b, 11); }, 60)) << row(a, 11) << " / " << row(b, 11);
    // The bytes, not their hex as text.
    EXPECT_EQ(row(a, 11), "name 11|p11@old|555-11|0C0D0E");
    ASSERT_TRUE(quiesced(120)) << readFile(runLog);
    EXPECT_EQ(hash(a), hash(b));
    EXPECT_EQ(openConflicts()["conflicts"].size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Keys, TwoWayKeys, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return std::string(info.param.name); });
