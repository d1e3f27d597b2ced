// Binlog CDC from MariaDB under faults: the oracle of reference/faults.md with kill -9 at random
// times while the source is written (F1, F12), an initial load killed mid-way, and a purged
// binlog (F6) reported with the re-snapshot that recovers from it.

#include "core/db/mysqlconnection.h"
#include "tests/fault/killnine.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <map>
#include <random>
#include <thread>

using namespace driftless::test;

namespace {

struct MysqlFaults : ::testing::Test {
    MyTestDb src{"myf_src"};
    PgTestDb dst{"myf_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string pipeline = uniqueName("myf");

    void SetUp() override
    {
        src.exec("CREATE TABLE docs (id bigint PRIMARY KEY, kind varchar(20) NOT NULL, qty int, body mediumtext)");
        writeFile(dir.file("ws.yaml"), "endpoints:\n"
                                       "  shop: { kind: mysql, dsn: \"" +
                                           myDsn(src.name()) +
                                           "\" }\n"
                                           "  dw: { kind: postgres, dsn: \"" +
                                           pgDsn(dst.name()) +
                                           "\" }\n"
                                           "pipelines:\n"
                                           "  - name: " +
                                           pipeline +
                                           "\n    source: shop\n    target: dw\n"
                                           "    target_schema: public\n    tables:\n"
                                           "      - { table: docs, strategy: cdc, page_size: 500 }\n");
        auto r = runCli({"--state", state, "apply", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    std::map<long long, std::string> sourceRows()
    {
        auto c = src.connect();
        std::map<long long, std::string> m;
        auto r =
            c.query("SELECT id, CONCAT(kind, '/', COALESCE(qty, 'null'), '/', COALESCE(MD5(body), 'null')) FROM docs");
        for (const auto &row : r.rows)
            m[std::stoll(*row[0])] = *row[1];
        return m;
    }
    std::map<long long, std::string> targetRows()
    {
        auto c = dst.connect();
        std::map<long long, std::string> m;
        auto r = c.exec("SELECT id, kind || '/' || coalesce(qty::text, 'null') || '/' || coalesce(md5(body), 'null') "
                        "FROM public.docs");
        for (int i = 0; i < r.rows(); ++i)
            m[r.toInt(i, 0)] = r.text(i, 1);
        return m;
    }
    std::string diff()
    {
        auto a = sourceRows(), b = targetRows();
        std::string out;
        int n = 0;
        for (auto &[k, v] : a) {
            auto it = b.find(k);
            if (it == b.end())
                out += "missing " + std::to_string(k) + " " + v + "\n";
            else if (it->second != v)
                out += "different " + std::to_string(k) + " src " + v + " dst " + it->second + "\n";
            else
                continue;
            if (++n > 15)
                break;
        }
        for (auto &[k, v] : b)
            if (!a.count(k) && n++ < 30)
                out += "extra " + std::to_string(k) + " " + v + "\n";
        return out;
    }
    std::map<long long, long long> versions()
    {
        auto c = dst.connect();
        std::map<long long, long long> out;
        auto r = c.exec("SELECT id, _driftless_version FROM public.docs");
        for (int i = 0; i < r.rows(); ++i)
            out[r.toInt(i, 0)] = r.toInt(i, 1);
        return out;
    }
};

/// The workload: single-row and multi-row transactions of inserts, updates, deletes and
/// primary-key updates, some rolled back.
class Writer {
public:
    Writer(MyTestDb &db, unsigned seed) : m_conn(db.connect()), m_rng(seed) {}
    void step()
    {
        const int kind = static_cast<int>(m_rng() % 10);
        auto key = [&] { return std::to_string(1 + m_rng() % m_next); };
        auto body = [&] {
            return "REPEAT(MD5(" + std::to_string(m_rng()) + "), " + std::to_string(1 + m_rng() % 200) + ")";
        };
        if (kind < 3) {
            m_conn.exec("INSERT INTO docs VALUES (" + std::to_string(++m_next) + ", 'ins', 1, " + body() + ")");
        } else if (kind < 5) {
            m_conn.exec("UPDATE docs SET qty = qty + 1, kind = 'upd' WHERE id = " + key());
        } else if (kind < 6) {
            m_conn.exec("DELETE FROM docs WHERE id = " + key());
        } else if (kind < 7) {
            m_conn.exec("UPDATE IGNORE docs SET id = " + std::to_string(++m_next) + " WHERE id = " + key());
        } else {
            m_conn.exec("START TRANSACTION");
            for (int i = 0; i < 2 + static_cast<int>(m_rng() % 20); ++i) {
                switch (m_rng() % 4) {
                case 0:
                    m_conn.exec("INSERT INTO docs VALUES (" + std::to_string(++m_next) + ", 'multi', 0, 'small')");
                    break;
                case 1:
                    m_conn.exec("UPDATE docs SET qty = qty * 2 WHERE id = " + key());
                    break;
                case 2:
                    m_conn.exec("DELETE FROM docs WHERE id = " + key());
                    break;
                default:
                    m_conn.exec("UPDATE docs SET body = " + body() + " WHERE id = " + key());
                }
            }
            m_conn.exec(m_rng() % 8 == 0 ? "ROLLBACK" : "COMMIT");
        }
        ++m_steps;
    }
    void seedRows(int n)
    {
        m_conn.exec(
            "INSERT INTO docs SELECT seq, 'seed', seq, IF(seq % 10 = 0, REPEAT(MD5(seq), 200), 's') FROM seq_1_to_" +
            std::to_string(n));
        m_next = n;
    }
    long long steps() const { return m_steps; }
    void continueAfter(long long n) { m_next = n; }

private:
    driftless::core::MysqlConnection m_conn;
    std::mt19937 m_rng;
    long long m_next = 0;
    long long m_steps = 0;
};

} // namespace

TEST_F(MysqlFaults, theOracleHoldsThroughRepeatedKillNine)
{
    const unsigned seed = 20261129u + static_cast<unsigned>(std::random_device{}() % 1000);
    std::printf("seed %u\n", seed);
    Writer seedWriter(src, seed);
    seedWriter.seedRows(3000);

    std::atomic<long long> steps{0};
    // Bounded by rate (at most 200 steps a second), and joined on every way out of the test.
    std::jthread writer([&](std::stop_token st) {
        Writer w(src, seed);
        w.continueAfter(3000);
        while (!st.stop_requested()) {
            w.step();
            steps = w.steps();
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    });
    const int kills = killNineRounds(state, dir.file("run.log"), seed, 6, [&] { return versions(); });
    writer.request_stop();
    writer.join();
    EXPECT_GE(kills, 5);
    EXPECT_GT(steps.load(), 50);
    auto final = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(final.exitCode, 0) << final.out << final.err << readFile(dir.file("run.log"));
    EXPECT_EQ(targetRows(), sourceRows()) << "seed " << seed << "\n" << diff();
}

TEST_F(MysqlFaults, aKilledInitialLoadResumesAtItsNextChunkUnderWrites)
{
    Writer w(src, 7);
    w.seedRows(20000);
    auto crashed = runCli({"--state", state, "run", "--once"}, {{"DRIFTLESS_CRASH_AT", "batch.after_commit:5"}});
    ASSERT_EQ(crashed.exitCode, -SIGKILL) << crashed.out << crashed.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.docs"), "2500");
    for (int i = 0; i < 300; ++i)
        w.step();
    auto r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(targetRows(), sourceRows()) << diff();
}

TEST_F(MysqlFaults, aPurgedBinlogIsReportedAndAResnapshotRecovers)
{
    Writer w(src, 11);
    w.seedRows(1000);
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    // While nothing reads, the source writes, rotates and purges the binlog the pipeline's
    // position is in.
    for (int i = 0; i < 50; ++i)
        w.step();
    auto c = src.connect();
    const std::string before = *c.query("SHOW MASTER STATUS").at(0, 0);
    // The server keeps a file until a binlog checkpoint in a later one says InnoDB has it: rotate
    // and purge until the file the pipeline stands in is gone.
    bool purged = false;
    for (int i = 0; i < 50 && !purged; ++i) {
        c.exec("FLUSH BINARY LOGS");
        const std::string current = *c.query("SHOW MASTER STATUS").at(0, 0);
        c.exec("PURGE BINARY LOGS TO '" + current + "'");
        purged = *c.query("SHOW BINARY LOGS").at(0, 0) > before;
        if (!purged)
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_TRUE(purged);
    for (int i = 0; i < 50; ++i)
        w.step();
    auto failed = runCli({"--state", state, "run", "--once"});
    EXPECT_NE(failed.exitCode, 0);
    const std::string all = failed.out + failed.err;
    EXPECT_NE(all.find("purged"), std::string::npos) << all;
    EXPECT_NE(all.find("resnapshot"), std::string::npos) << all;
    EXPECT_NE(targetRows(), sourceRows()) << "nothing was silently skipped";

    auto re = runCli({"--state", state, "resnapshot", pipeline});
    ASSERT_EQ(re.exitCode, 0) << re.out << re.err;
    auto r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(targetRows(), sourceRows()) << diff();
}

// The twin of tst_cdc_faults' case: a re-snapshot killed mid-way resumes in a later snapshot and
// must keep the rows its first chunks merged (they are older than the resumed chunks' snapshot,
// not rows the source no longer has).
TEST_F(MysqlFaults, aKilledResnapshotKeepsTheRowsItsFirstChunksMerged)
{
    Writer w(src, 13);
    w.seedRows(3000);
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    auto re = runCli({"--state", state, "resnapshot", pipeline});
    ASSERT_EQ(re.exitCode, 0) << re.out << re.err;
    for (int i = 0; i < 40; ++i)
        w.step();
    auto crashed = runCli({"--state", state, "run", "--once"}, {{"DRIFTLESS_CRASH_AT", "batch.after_commit:3"}});
    ASSERT_EQ(crashed.exitCode, -SIGKILL) << crashed.out << crashed.err;
    for (int i = 0; i < 40; ++i)
        w.step();
    auto rerun = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(rerun.exitCode, 0) << rerun.out << rerun.err;
    EXPECT_EQ(targetRows(), sourceRows()) << diff();
}
