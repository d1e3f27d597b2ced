// A binlog pipeline's retention against a MariaDB of the test's own with
// binlog_expire_logs_seconds = 120 (tests/support/binlogserver.sh; the shared server's globals
// stay as they are): serve's /sync/status lists the pipeline under `binlogs`; with the engine
// stopped and the needed file rotated away, `slots --json` counts down to the file's expiry and
// raises the alert with the SET GLOBAL before the server purges it; once purged, the item says
// so and `run` still refuses with the re-snapshot to run.

#include "core/db/mysqlconnection.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

using namespace driftless::test;
using json = nlohmann::json;

namespace {

constexpr int kRetentionSeconds = 120;

std::string script()
{
    return std::string(DRIFTLESS_SOURCE_DIR) + "/tests/support/binlogserver.sh";
}

std::int64_t nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

struct BinlogExpiry : ::testing::Test {
    static inline std::string envFile;
    static inline int port = 0;

    static void SetUpTestSuite()
    {
        myDsn(""); // exports MYSQL_PWD: the server below gets the same password
        envFile = (std::filesystem::temp_directory_path() / uniqueName("driftless-binlogexpiry")).string() + ".env";
        const std::string cmd = "bash " + script() + " start " + envFile + " '" + servers().myPassword + "' " +
                                std::to_string(kRetentionSeconds) + " >" + envFile + ".log 2>&1";
        if (std::system(cmd.c_str()) != 0)
            return;
        std::ifstream in(envFile);
        std::string line;
        while (std::getline(in, line))
            if (line.rfind("BINLOG_MY_PORT=", 0) == 0)
                port = std::atoi(line.substr(15).c_str());
    }
    static void TearDownTestSuite()
    {
        const std::string cmd = "bash " + script() + " stop " + envFile + " >/dev/null 2>&1";
        [[maybe_unused]] int rc = std::system(cmd.c_str());
        std::remove((envFile + ".log").c_str());
    }

    PgTestDb dst{"blx_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string pipeline = uniqueName("blx");
    std::string db = uniqueName("blx_src");
    int servePid = 0;

    std::string dsn(const std::string &database) const
    {
        return "mysql://" + servers().myUser + "@127.0.0.1:" + std::to_string(port) + "/" + database;
    }
    driftless::core::MysqlConnection connect() const { return driftless::core::MysqlConnection(dsn(db)); }

    void SetUp() override
    {
        ASSERT_GT(port, 0) << "binlogserver.sh did not start: " << readFile(envFile + ".log");
        driftless::core::MysqlConnection(dsn("")).exec("CREATE DATABASE " + db);
        auto c = connect();
        c.exec("CREATE TABLE orders (id bigint PRIMARY KEY, note varchar(200) NOT NULL)");
        for (int i = 1; i <= 50; ++i)
            c.exec("INSERT INTO orders VALUES (" + std::to_string(i) + ", REPEAT('x', 100))");
        writeFile(dir.file("ws.yaml"), "endpoints:\n"
                                       "  shop: { kind: mysql, dsn: \"" +
                                           dsn(db) +
                                           "\" }\n"
                                           "  dw: { kind: postgres, dsn: \"" +
                                           pgDsn(dst.name()) +
                                           "\" }\n"
                                           "pipelines:\n"
                                           "  - name: " +
                                           pipeline +
                                           "\n    source: shop\n    target: dw\n"
                                           "    target_schema: public\n    tables:\n"
                                           "      - { table: orders, strategy: cdc }\n");
        auto r = runCli({"--state", state, "apply", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    void TearDown() override
    {
        if (servePid > 0) {
            ::kill(servePid, SIGKILL);
            waitPid(servePid, 30);
        }
        try {
            driftless::core::MysqlConnection(dsn("")).exec("DROP DATABASE IF EXISTS " + db);
        } catch (...) {
        }
    }

    json slots()
    {
        auto r = runCli({"--state", state, "slots", "--json"});
        EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
        return json::parse(r.out);
    }
    static const json *binlogOf(const json &doc, const std::string &pipeline)
    {
        for (const auto &b : doc["binlogs"])
            if (b["pipeline"] == pipeline)
                return &b;
        return nullptr;
    }
    static const json *alertOf(const json &doc, const std::string &kind)
    {
        for (const auto &a : doc["alerts"])
            if (a["kind"] == kind)
                return &a;
        return nullptr;
    }
    std::vector<std::string> binaryLogs()
    {
        std::vector<std::string> out;
        auto c = connect();
        for (const auto &row : c.query("SHOW BINARY LOGS").rows)
            out.push_back(*row[0]);
        return out;
    }
};

TEST_F(BinlogExpiry, serveListsTheBinlogPipelineInSyncStatus)
{
    const std::string log = dir.file("serve.log");
    servePid = spawnCli({"--state", state, "serve", "--listen", "127.0.0.1:0", "--monitor-every", "300ms"}, {}, log);
    int httpPort = 0;
    std::regex re("serving http://127\\.0\\.0\\.1:([0-9]+)/sync/status");
    for (int i = 0; i < 400 && httpPort == 0; ++i) {
        std::smatch m;
        const std::string out = readFile(log);
        if (std::regex_search(out, m, re))
            httpPort = std::stoi(m[1]);
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_GT(httpPort, 0) << readFile(log);
    // Once the pipeline has streamed, its checkpoint names the file in use.
    json item;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
        auto r = httpRequest(httpPort, "GET", "/sync/status");
        ASSERT_EQ(r.status, 200) << r.body;
        const json doc = json::parse(r.body);
        ASSERT_TRUE(doc.contains("binlogs")) << r.body;
        if (const json *b = binlogOf(doc, pipeline); b && (*b)["needed_file"].is_string()) {
            item = *b;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    ASSERT_FALSE(item.is_null()) << readFile(log);
    const auto files = binaryLogs();
    EXPECT_EQ(item["source"], "shop");
    EXPECT_EQ(item["needed_file"], files.back());
    EXPECT_EQ(item["oldest_file"], files.front());
    EXPECT_TRUE(item["bytes_behind"].is_number_integer()) << item.dump();
    EXPECT_EQ(item["retention_seconds"], kRetentionSeconds);
    // The file in use is purged a full retention after it is closed, at the earliest.
    EXPECT_EQ(item["seconds_to_expiry"], kRetentionSeconds) << item.dump();
    EXPECT_EQ(item["needed_purged"], false);
}

TEST_F(BinlogExpiry, theAlertComesBeforeThePurgeAndAPurgeStillNeedsAResnapshot)
{
    auto first = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
    const json caughtUp = slots();
    const json *b0 = binlogOf(caughtUp, pipeline);
    ASSERT_TRUE(b0) << caughtUp.dump(2);
    const std::string needed = (*b0)["needed_file"];
    EXPECT_EQ(needed, binaryLogs().back());
    EXPECT_FALSE(alertOf(caughtUp, "binlog_expiry")) << caughtUp.dump(2);

    // The engine is stopped: the source writes a bounded amount and rotates its binlog.
    {
        auto c = connect();
        for (int i = 51; i <= 250; ++i)
            c.exec("INSERT INTO orders VALUES (" + std::to_string(i) + ", REPEAT('y', 150))");
    }
    const std::int64_t beforeFlush = nowMs();
    connect().exec("FLUSH BINARY LOGS");
    const std::int64_t afterFlush = nowMs();
    ASSERT_NE(binaryLogs().back(), needed);

    const json rotated = slots();
    const json *b1 = binlogOf(rotated, pipeline);
    ASSERT_TRUE(b1) << rotated.dump(2);
    EXPECT_EQ((*b1)["needed_file"], needed);
    EXPECT_EQ((*b1)["oldest_file"], binaryLogs().front());
    EXPECT_GT((*b1)["bytes_behind"].get<long long>(), 200LL * 150) << b1->dump();
    ASSERT_TRUE((*b1)["seconds_to_expiry"].is_number()) << b1->dump();
    const long long left1 = (*b1)["seconds_to_expiry"];
    EXPECT_LE(left1, kRetentionSeconds);
    EXPECT_GT(left1, 0);
    // The needed file was closed when the server started the next one: by the FLUSH.
    ASSERT_TRUE((*b1)["needed_closed_at"].is_string()) << b1->dump();
    ASSERT_TRUE((*b1)["expires_at"].is_string()) << b1->dump();

    // Below half the retention the alert comes, with the time left and the statement to run,
    // while the server still has the file.
    json alerted;
    long long leftAtAlert = -1;
    std::int64_t readFrom = 0, readTo = 0; // when the reading that raised it was made
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kRetentionSeconds + 60);
    while (std::chrono::steady_clock::now() < deadline) {
        readFrom = nowMs();
        const json doc = slots();
        readTo = nowMs();
        if (const json *a = alertOf(doc, "binlog_expiry")) {
            alerted = *a;
            leftAtAlert = (*binlogOf(doc, pipeline))["seconds_to_expiry"];
            EXPECT_EQ((*binlogOf(doc, pipeline))["needed_purged"], false);
            break;
        }
        std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    ASSERT_FALSE(alerted.is_null()) << "no binlog_expiry alert";
    EXPECT_LT(leftAtAlert, left1) << "the time left counts down";
    EXPECT_GT(leftAtAlert, 0);
    EXPECT_LE(leftAtAlert, kRetentionSeconds / 2);
    // What it says agrees with the clock: closed at the FLUSH (the server keeps whole seconds),
    // expiring a retention later, as seen while the reading was made.
    EXPECT_GE(leftAtAlert, (beforeFlush / 1000 * 1000 + kRetentionSeconds * 1000 - readTo) / 1000 - 1);
    EXPECT_LE(leftAtAlert, (afterFlush + kRetentionSeconds * 1000 - readFrom) / 1000 + 1);
    EXPECT_EQ(alerted["pipeline"], pipeline);
    EXPECT_EQ(alerted["level"], "warn");
    const std::string message = alerted["message"], action = alerted["action"];
    EXPECT_NE(message.find(needed), std::string::npos) << message;
    EXPECT_NE(message.find("may purge in"), std::string::npos) << message;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(action, m, std::regex("SET GLOBAL binlog_expire_logs_seconds = ([0-9]+);")))
        << action;
    EXPECT_GT(std::stoll(m[1]), kRetentionSeconds) << action;
    const auto stillThere = binaryLogs();
    EXPECT_NE(std::find(stillThere.begin(), stillThere.end(), needed), stillThere.end());
    auto text = runCli({"--state", state, "slots"});
    EXPECT_NE(text.out.find("binlog: needs " + needed), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("expires in"), std::string::npos) << text.out;

    // The purge expiry would do. The server keeps a file until a binlog checkpoint in a later
    // one says InnoDB has it: rotate and purge until the needed file is gone.
    bool purged = false;
    for (int i = 0; i < 50 && !purged; ++i) {
        auto c = connect();
        c.exec("FLUSH BINARY LOGS");
        const std::string current = *c.query("SHOW MASTER STATUS").at(0, 0);
        c.exec("PURGE BINARY LOGS TO '" + current + "'");
        purged = *c.query("SHOW BINARY LOGS").at(0, 0) > needed;
        if (!purged)
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_TRUE(purged);
    const json gone = slots();
    const json *b2 = binlogOf(gone, pipeline);
    ASSERT_TRUE(b2) << gone.dump(2);
    EXPECT_EQ((*b2)["needed_file"], needed);
    EXPECT_EQ((*b2)["needed_purged"], true);
    EXPECT_EQ((*b2)["seconds_to_expiry"], 0);
    const json *err = alertOf(gone, "binlog_purged");
    ASSERT_TRUE(err) << gone.dump(2);
    EXPECT_EQ((*err)["level"], "error");
    EXPECT_NE((*err)["action"].get<std::string>().find("driftless-cli resnapshot " + pipeline), std::string::npos);
    EXPECT_FALSE(alertOf(gone, "binlog_expiry"));

    auto refused = runCli({"--state", state, "run", "--once"});
    EXPECT_NE(refused.exitCode, 0);
    const std::string all = refused.out + refused.err;
    EXPECT_NE(all.find("purged"), std::string::npos) << all;
    EXPECT_NE(all.find("driftless-cli resnapshot " + pipeline), std::string::npos) << all;
}

} // namespace
