// The pgoutput reader's hand-over against a real walsender: while the apply side cannot take a
// batch, a batch that is only old keeps growing (the walsender is never left waiting on a busy
// apply side), a full one is handed over anyway, and every transaction arrives exactly once, in
// commit order.

#include "core/db/pgcatalog.h"
#include "core/db/pgreplication.h"
#include "core/readers/pglogicalreader.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace driftless::core;
using namespace driftless::test;
using namespace std::chrono_literals;

namespace {

struct ReaderHandOver : ::testing::Test {
    PgTestDb src{"reader_src"};
    std::string publication = uniqueName("pub");

    void SetUp() override
    {
        src.exec("CREATE TABLE items (id bigint PRIMARY KEY, note text NOT NULL);"
                 "CREATE PUBLICATION " +
                 publication + " FOR TABLE items");
    }

    /// `transactions` single-row inserts after a temporary slot is made, then everything read
    /// up to the workload's end with `options`; `ready` says whether the apply side takes a
    /// batch now (it sees the reader and how many batches it handed over). Returns the batches.
    std::vector<CdcBatch> read(int transactions, PgLogicalReader::Options options,
                               std::function<bool(const PgLogicalReader &, std::size_t handedOver)> ready)
    {
        PgReplicationConnection repl(src.dsn(), "driftless test reader");
        const std::string slot = uniqueName("slot");
        auto made = repl.createSlot(slot, /*temporary=*/true, /*exportSnapshot=*/false);
        std::string sql;
        for (int i = 1; i <= transactions; ++i)
            sql += "BEGIN; INSERT INTO items VALUES (" + std::to_string(i) + ", 'note " + std::to_string(i) +
                   "'); COMMIT;";
        src.exec(sql);
        // WAL that is not ours after the workload, as other sessions on a shared server write:
        // the end position is then past the last commit, reached through the idle hand-over.
        src.exec("CREATE TABLE IF NOT EXISTS unpublished (id int); INSERT INTO unpublished VALUES (1)");
        auto conn = src.connect();
        const std::int64_t end = pgcatalog::currentLsn(conn);

        CdcTableInfo info;
        info.table = TableRef{"public", "items"};
        info.keyColumns = {"id"};
        info.columns = {"id", "note"};
        options.slot = slot;
        options.publication = publication;
        options.startLsn = made.consistentPoint;
        options.stopAtLsn = end;
        options.statusInterval = 300ms;
        const PgLogicalReader *self = nullptr;
        std::vector<CdcBatch> batches;
        options.applyReady = [&] { return ready(*self, batches.size()); };
        PgLogicalReader reader(repl, {{info.table, info}}, options);
        self = &reader;

        std::atomic<std::int64_t> acked = made.consistentPoint;
        std::stop_source stop;
        // A reader that never reaches the end fails the test instead of hanging it.
        std::atomic<bool> timedOut = false;
        std::jthread watchdog([&stop, &timedOut](std::stop_token done) {
            for (int i = 0; i < 600 && !done.stop_requested(); ++i) // 60 s
                std::this_thread::sleep_for(100ms);
            if (!done.stop_requested()) {
                timedOut = true;
                stop.request_stop();
            }
        });
        reader.run(
            stop.get_token(),
            [&](CdcBatch &b, std::chrono::milliseconds, bool &accepted) {
                accepted = true;
                // As the apply side does: a batch's end once committed, an idle position once
                // recorded.
                if (b.endVersion)
                    acked = std::max(acked.load(), b.endVersion);
                if (b.idleWalEnd)
                    acked = std::max(acked.load(), *b.idleWalEnd);
                if (!b.tables.empty() || b.transactions > 0)
                    batches.push_back(std::move(b));
                return true;
            },
            [&] { return acked.load(); });
        watchdog.request_stop();
        EXPECT_FALSE(timedOut.load()) << "the reader did not reach the workload's end within 60 s";
        return batches;
    }
};

int transactionsIn(const std::vector<CdcBatch> &batches)
{
    int n = 0;
    for (const auto &b : batches)
        n += b.transactions;
    return n;
}

std::vector<std::string> idsIn(const std::vector<CdcBatch> &batches)
{
    std::vector<std::string> ids;
    for (const auto &b : batches)
        for (const auto &[table, changes] : b.tables)
            for (std::size_t i = 0; i < changes.rows.size(); ++i) {
                const std::string_view line = changes.rows.line(i);
                ids.emplace_back(line.substr(0, line.find('\t')));
            }
    return ids;
}

std::vector<std::string> oneToN(int n)
{
    std::vector<std::string> ids;
    for (int i = 1; i <= n; ++i)
        ids.push_back(std::to_string(i));
    return ids;
}

} // namespace

// Every commit makes the batch old (maxDelay 0): with an apply side that always takes one, each
// transaction goes on its own, as before.
TEST_F(ReaderHandOver, anOldBatchGoesAtOnceWhenTheApplySideTakesIt)
{
    PgLogicalReader::Options o;
    o.maxDelay = 0ms;
    auto batches = read(20, o, [](const PgLogicalReader &, std::size_t) { return true; });
    EXPECT_EQ(batches.size(), 20u);
    EXPECT_EQ(transactionsIn(batches), 20);
    EXPECT_EQ(idsIn(batches), oneToN(20));
}

// The apply side is busy until the reader has received the whole workload: the reader does not
// stop reading to wait for it, so the transactions are gathered into one batch.
TEST_F(ReaderHandOver, anOldBatchKeepsGrowingWhileTheApplySideIsBusy)
{
    PgLogicalReader::Options o;
    o.maxDelay = 0ms;
    auto batches = read(20, o, [](const PgLogicalReader &r, std::size_t) { return r.gatheredRows() >= 20; });
    EXPECT_EQ(batches.size(), 1u) << "the reader waited on the apply side instead of gathering";
    EXPECT_EQ(transactionsIn(batches), 20);
    EXPECT_EQ(idsIn(batches), oneToN(20));
}

// A batch that reaches maxRows is handed over even while the apply side is busy (the hand-over
// then waits for it): batches never grow past their bound. Here the apply side is busy until
// four full batches came (the fourth ends inside the fifth transaction, which follows alone).
TEST_F(ReaderHandOver, aFullBatchIsHandedOverEvenWhileTheApplySideIsBusy)
{
    PgLogicalReader::Options o;
    o.maxDelay = 0ms;
    o.maxRows = 5;
    auto batches = read(20, o, [](const PgLogicalReader &, std::size_t handed) { return handed >= 4; });
    ASSERT_GE(batches.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i)
        EXPECT_EQ(batches[i].tables.begin()->second.rows.size(), 5u) << "batch " << i;
    for (const auto &b : batches)
        EXPECT_LE(b.tables.empty() ? 0u : b.tables.begin()->second.rows.size(), 5u);
    EXPECT_EQ(transactionsIn(batches), 20);
    EXPECT_EQ(idsIn(batches), oneToN(20));
}
