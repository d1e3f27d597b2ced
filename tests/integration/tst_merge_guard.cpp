// The guarded merge (P2, P3): an older change never overwrites or deletes a newer row, deletes
// leave tombstones so older inserts cannot resurrect rows, replays change nothing, and a batch
// commits atomically with its checkpoint. Run against every target: Postgres, SQLite and MariaDB.

#include "core/db/pgcatalog.h"
#include "core/db/sqlitedb.h"
#include "core/mergers/mysqlmerger.h"
#include "core/mergers/pgmerger.h"
#include "core/mergers/sqlitemerger.h"
#include "core/model/error.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <sstream>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

struct Row {
    std::string val;
    long long version;
    bool operator==(const Row &) const = default;
};
using Table = std::map<long long, Row>;

class Target {
public:
    virtual ~Target() = default;
    std::unique_ptr<Merger> merger() { return merger("p", "items"); }
    /// A merger of source table public.`table` in `pipeline`, into a target table of that name.
    virtual std::unique_ptr<Merger> merger(const std::string &pipeline, const std::string &table) = 0;
    virtual Table rows() = 0;
    virtual long long tombstones() = 0;
};

class PgTarget : public Target {
public:
    PgTarget() : m_db("guard_tgt") {}
    std::unique_ptr<Merger> merger(const std::string &pipeline, const std::string &table) override
    {
        return std::make_unique<PgMerger>(
            m_db.connect(), MergeTarget{pipeline, {"public", table}, {"public", table}, Strategy::Cursor});
    }
    Table rows() override
    {
        auto c = m_db.connect();
        auto r = c.exec("SELECT id, coalesce(val, '<null>'), _driftless_version FROM public.items ORDER BY id");
        Table t;
        for (int i = 0; i < r.rows(); ++i)
            t[r.toInt(i, 0)] = {r.text(i, 1), r.toInt(i, 2)};
        return t;
    }
    long long tombstones() override
    {
        PgMerger m(m_db.connect(), MergeTarget{"p", {"public", "items"}, {"public", "items"}, Strategy::Cursor});
        auto c = m_db.connect();
        return c.exec("SELECT count(*) FROM " + m.tombstoneTable()).toInt(0, 0);
    }
    const PgTestDb &db() const { return m_db; }

private:
    PgTestDb m_db;
};

class SqliteTarget : public Target {
public:
    std::unique_ptr<Merger> merger(const std::string &pipeline, const std::string &table) override
    {
        return std::make_unique<SqliteMerger>(m_dir.file("t.db"),
                                              MergeTarget{pipeline, {"public", table}, {"", table}, Strategy::Cursor});
    }
    Table rows() override
    {
        SqliteDb db(m_dir.file("t.db"));
        auto st = db.prepare("SELECT id, coalesce(val, '<null>'), _driftless_version FROM items ORDER BY id");
        Table t;
        while (st.step())
            t[st.int64(0)] = {st.text(1), st.int64(2)};
        return t;
    }
    long long tombstones() override
    {
        SqliteDb db(m_dir.file("t.db"));
        return db.scalarInt("SELECT count(*) FROM _driftless_tomb_items");
    }

private:
    TempDir m_dir;
};

class MysqlTarget : public Target {
public:
    MysqlTarget() : m_db("guard_tgt") {}
    std::unique_ptr<Merger> merger(const std::string &pipeline, const std::string &table) override
    {
        return std::make_unique<MysqlMerger>(m_db.connect(),
                                             MergeTarget{pipeline, {"public", table}, {"", table}, Strategy::Cursor});
    }
    Table rows() override
    {
        auto c = m_db.connect();
        auto r = c.query("SELECT id, COALESCE(val, '<null>'), _driftless_version FROM items ORDER BY id");
        Table t;
        for (size_t i = 0; i < r.size(); ++i)
            t[std::stoll(r.text(i, 0))] = {r.text(i, 1), std::stoll(r.text(i, 2))};
        return t;
    }
    long long tombstones() override { return std::stoll(m_db.scalar("SELECT COUNT(*) FROM _driftless_tomb_items")); }

private:
    MyTestDb m_db;
};

TableSchema itemsSchema()
{
    // Described from a real source table, as the engine does.
    static PgTestDb src("guard_src");
    static bool made = false;
    if (!made) {
        src.exec("CREATE TABLE items (id bigint PRIMARY KEY, val text)");
        made = true;
    }
    auto c = src.connect();
    return pgcatalog::describeTable(c, {"public", "items"});
}

Batch batch(std::initializer_list<std::tuple<char, long long, const char *, long long>> changes,
            long long cpVersion = -1)
{
    Batch b;
    long long maxV = 0;
    for (auto &[op, id, val, v] : changes) {
        std::string line = std::to_string(id) + "\t" + (val ? val : "\\N");
        b.rows.append(line, static_cast<ChangeOp>(op), v);
        maxV = std::max(maxV, v);
    }
    b.checkpoint = {"{\"v\":" + std::to_string(cpVersion < 0 ? maxV : cpVersion) + "}",
                    cpVersion < 0 ? maxV : cpVersion};
    return b;
}

class MergeGuard : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override
    {
        if (GetParam() == "postgres")
            target = std::make_unique<PgTarget>();
        else if (GetParam() == "mariadb")
            target = std::make_unique<MysqlTarget>();
        else
            target = std::make_unique<SqliteTarget>();
        merger = target->merger();
        merger->prepare(itemsSchema());
    }
    std::unique_ptr<Target> target;
    std::unique_ptr<Merger> merger;
};

} // namespace

TEST_P(MergeGuard, olderUpdateNeverOverwritesNewerRow)
{
    merger->apply(batch({{'u', 1, "new", 10}}));
    auto r = merger->apply(batch({{'u', 1, "old", 5}}));
    EXPECT_EQ(r.rowsWritten, 0);
    EXPECT_EQ(target->rows(), (Table{{1, {"new", 10}}}));
    merger->apply(batch({{'u', 1, "newer", 11}}));
    EXPECT_EQ(target->rows(), (Table{{1, {"newer", 11}}}));
}

TEST_P(MergeGuard, olderDeleteNeverDeletesNewerRow)
{
    merger->apply(batch({{'i', 1, "kept", 10}}));
    auto r = merger->apply(batch({{'d', 1, nullptr, 9}}));
    EXPECT_EQ(r.rowsWritten, 0);
    EXPECT_EQ(target->rows(), (Table{{1, {"kept", 10}}}));
}

TEST_P(MergeGuard, newerDeleteWinsAndItsTombstoneStopsAnOlderInsertFromResurrectingTheRow)
{
    merger->apply(batch({{'i', 1, "a", 5}, {'i', 2, "b", 5}}));
    merger->apply(batch({{'d', 1, nullptr, 10}}));
    EXPECT_EQ(target->rows(), (Table{{2, {"b", 5}}}));
    EXPECT_EQ(target->tombstones(), 1);
    // The old insert is replayed: it must not bring the row back.
    merger->apply(batch({{'i', 1, "a", 5}}));
    EXPECT_EQ(target->rows(), (Table{{2, {"b", 5}}}));
    // A delete that arrives before the (older) insert it follows, for a key never seen.
    merger->apply(batch({{'d', 3, nullptr, 20}}));
    merger->apply(batch({{'i', 3, "late", 15}}));
    EXPECT_EQ(target->rows().count(3), 0u);
    // A genuinely newer insert after the delete does land.
    merger->apply(batch({{'i', 1, "again", 30}}));
    EXPECT_EQ(target->rows().at(1), (Row{"again", 30}));
}

TEST_P(MergeGuard, replayingBatchesInAnyOrderLeavesTheTargetUnchanged)
{
    std::mt19937 rng(20261129);
    std::printf("seed 20261129\n");
    std::vector<Batch> batches;
    long long version = 100;
    for (int b = 0; b < 12; ++b) {
        Batch batch;
        std::map<long long, bool> used;
        for (int i = 0; i < 40; ++i) {
            long long key = rng() % 60;
            if (used[key])
                continue; // batches are folded: one change per key
            used[key] = true;
            int kind = static_cast<int>(rng() % 10);
            ++version;
            if (kind < 2)
                batch.rows.append(std::to_string(key) + "\t\\N", ChangeOp::Delete, version);
            else
                batch.rows.append(std::to_string(key) + "\tv" + std::to_string(version),
                                  kind < 5 ? ChangeOp::Insert : ChangeOp::Update, version);
        }
        batch.checkpoint = {"{}", version};
        batches.push_back(std::move(batch));
    }
    for (auto &b : batches)
        merger->apply(b);
    const Table expected = target->rows();
    ASSERT_FALSE(expected.empty());

    // The last three again, as a retry after a lost acknowledgement would send them.
    for (size_t i = batches.size() - 3; i < batches.size(); ++i)
        merger->apply(batches[i]);
    EXPECT_EQ(target->rows(), expected);
    // All of them again, newest first: older batches arrive after newer ones.
    for (size_t i = batches.size(); i-- > 0;)
        merger->apply(batches[i]);
    EXPECT_EQ(target->rows(), expected);
    // And shuffled.
    std::vector<size_t> order(batches.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order)
        merger->apply(batches[i]);
    EXPECT_EQ(target->rows(), expected);
}

TEST_P(MergeGuard, checkpointCommitsWithTheDataAndNeverMovesBack)
{
    merger->apply(batch({{'i', 1, "a", 20}}, 20));
    EXPECT_EQ(merger->readCheckpoint()->version, 20);
    merger->apply(batch({{'i', 2, "b", 10}}, 10));
    auto cp = merger->readCheckpoint();
    EXPECT_EQ(cp->version, 20);
    EXPECT_EQ(cp->position, "{\"v\":20}");
}

TEST_P(MergeGuard, pendingRequestsReadsThePipelinesRequestsForAllItsTablesAtOnce)
{
    // What a stream polls four times a second: one query answers for every table of its
    // pipeline, and another pipeline's requests in the same target are not among them.
    auto other = target->merger("p", "other");
    auto elsewhere = target->merger("q", "items");
    for (Merger *m : {merger.get(), other.get(), elsewhere.get()}) {
        m->prepare(itemsSchema());
        m->apply(batch({{'i', 1, "a", 10}}, 10)); // a checkpoint to leave requests on
    }
    EXPECT_TRUE(merger->pendingRequests().empty());
    merger->setRequest("rebackfill");
    other->setRequest("cancel_rebackfill");
    elsewhere->setRequest("rebackfill");
    const std::map<std::string, std::string> expected{{"public.items", "rebackfill"},
                                                      {"public.other", "cancel_rebackfill"}};
    EXPECT_EQ(merger->pendingRequests(), expected);
    EXPECT_EQ(other->pendingRequests(), expected) << "any table's merger answers for the pipeline";
    EXPECT_EQ(elsewhere->pendingRequests(), (std::map<std::string, std::string>{{"public.items", "rebackfill"}}));
    EXPECT_EQ(merger->pendingRequest(), "rebackfill") << "the one-table read agrees";
    merger->setRequest(""); // taken
    EXPECT_EQ(other->pendingRequests(), (std::map<std::string, std::string>{{"public.other", "cancel_rebackfill"}}));
}

TEST_P(MergeGuard, aBatchIntoATableThatGrewSinceItsStatisticsProbesItsKeysInsteadOfScanningIt)
{
    // A stream into a new target: the table fills up long before autovacuum counts its rows, and
    // a merge planned on the old count hashed the whole table for every batch (B9: each batch
    // of a 1M-row stream scanned everything streamed before it).
    if (GetParam() != "postgres")
        GTEST_SKIP() << "the plan choice is the Postgres merger's";
    const auto &db = static_cast<PgTarget &>(*target).db();
    auto rows = [](long long from, long long to, long long version) {
        Batch b;
        for (long long id = from; id <= to; ++id)
            b.rows.append(std::to_string(id) + "\tv" + std::to_string(id), ChangeOp::Insert, version);
        b.checkpoint = {"{\"v\":" + std::to_string(version) + "}", version};
        return b;
    };
    // Each batch from a merger of its own whose session then ends: a session reports its
    // counters when it ends, so the table's counters are complete once its inserts show.
    auto counters = [&](long long inserted) {
        std::string c;
        for (int i = 0; i < 400; ++i) { // up to 20 s
            c = db.scalar("SELECT n_tup_ins || ' ' || seq_scan || ' ' || coalesce(idx_scan, 0) FROM "
                          "pg_stat_user_tables WHERE relid = 'public.items'::regclass");
            if (std::stoll(c.substr(0, c.find(' '))) >= inserted)
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        std::istringstream in(c);
        long long ins = 0, seq = 0, idx = 0;
        in >> ins >> seq >> idx;
        EXPECT_EQ(ins, inserted) << "the counters did not arrive";
        return std::pair{seq, idx};
    };
    auto applyAlone = [&](const Batch &b) {
        auto m = target->merger();
        m->prepare(itemsSchema());
        m->apply(b);
    };
    applyAlone(rows(1, 20000, 10)); // into the empty table
    ASSERT_EQ(db.scalar("SELECT reltuples <= 0 FROM pg_class WHERE oid = 'public.items'::regclass"), "t")
        << "the test needs a table its statistics have not counted yet";
    const auto [seqBefore, idxBefore] = counters(20000);
    applyAlone(rows(20001, 20200, 20)); // a 200-row batch: a hundredth of the table
    const auto [seqAfter, idxAfter] = counters(20200);
    EXPECT_EQ(seqAfter, seqBefore) << "the batch scanned the whole target";
    EXPECT_GT(idxAfter, idxBefore) << "the batch did not probe the key index";
    EXPECT_EQ(db.scalar("SELECT count(*) FROM public.items"), "20200");
}

TEST_P(MergeGuard, aFailingBatchLeavesNeitherRowsNorCheckpoint)
{
    merger->apply(batch({{'i', 1, "a", 10}}, 10));
    Batch bad;
    bad.rows.append("2\tfine", ChangeOp::Insert, 20);
    bad.rows.append("not-a-number\tboom", ChangeOp::Insert, 20);
    bad.checkpoint = {"{\"v\":20}", 20};
    EXPECT_THROW(merger->apply(bad), Error);
    EXPECT_EQ(target->rows(), (Table{{1, {"a", 10}}}));
    EXPECT_EQ(merger->readCheckpoint()->version, 10);
    // The merger is still usable afterwards.
    merger->apply(batch({{'i', 2, "b", 30}}));
    EXPECT_EQ(target->rows().size(), 2u);
}

TEST_P(MergeGuard, directLoadFallsBackToTheMergeWhenKeysExist)
{
    merger->apply(batch({{'i', 1, "a", 10}}));
    Batch load = batch({{'i', 1, "a2", 20}, {'i', 2, "b", 20}});
    load.directLoad = true;
    auto r = merger->apply(load);
    EXPECT_FALSE(r.direct);
    EXPECT_EQ(target->rows(), (Table{{1, {"a2", 20}}, {2, {"b", 20}}}));
    Batch fresh = batch({{'i', 3, "c", 21}});
    fresh.directLoad = true;
    EXPECT_TRUE(merger->apply(fresh).direct);
}

INSTANTIATE_TEST_SUITE_P(Targets, MergeGuard, ::testing::Values("postgres", "sqlite", "mariadb"),
                         [](const auto &info) { return info.param; });

TEST_P(MergeGuard, aMergedValueIsStoredAsTheTargetColumnSaysCompressedOrNot)
{
    // The merge copies a staged value into the target as it was staged, compressed or not:
    // staging must store each column as the target does, also when the DBA changed the target's
    // column after the staging table was made.
    if (GetParam() != "postgres")
        GTEST_SKIP() << "compression and storage are the Postgres target's";
    const auto &db = static_cast<PgTarget &>(*target).db();
    const std::string big(30000, 'a'); // compresses to almost nothing
    auto withBig = [&](std::initializer_list<std::pair<long long, long long>> idVersion) {
        Batch b;
        long long maxV = 0;
        for (auto [id, v] : idVersion) {
            b.rows.append(std::to_string(id) + "\t" + big, ChangeOp::Update, v);
            maxV = std::max(maxV, v);
        }
        b.checkpoint = {"{\"v\":" + std::to_string(maxV) + "}", maxV};
        return b;
    };
    merger->apply(batch({{'i', 1, "a", 1}, {'i', 2, "b", 1}, {'i', 3, "c", 1}}));
    ASSERT_EQ(db.scalar("SELECT count(*) FROM public.items"), "3");
    auto compression = [&](long long id) {
        return db.scalar("SELECT coalesce(pg_column_compression(val), 'none') || ' ' || length(val) FROM public.items "
                         "WHERE id = " +
                         std::to_string(id));
    };

    // The default (pglz on this server): staged compressed, kept so.
    merger->apply(withBig({{1, 2}}));
    EXPECT_EQ(compression(1), "pglz 30000");

    // The DBA asks for lz4 on the target column (where the server was built with it).
    bool lz4 = true;
    try {
        db.exec("ALTER TABLE public.items ALTER COLUMN val SET COMPRESSION lz4");
    } catch (const std::exception &) {
        lz4 = false;
    }
    if (lz4) {
        auto m = target->merger();
        m->prepare(itemsSchema());
        m->apply(withBig({{2, 3}}));
        EXPECT_EQ(compression(2), "lz4 30000") << "the value was compressed as staging, not the target, says";
    }

    // EXTERNAL: kept uncompressed (for fast substrings).
    db.exec("ALTER TABLE public.items ALTER COLUMN val SET STORAGE EXTERNAL");
    auto m = target->merger();
    m->prepare(itemsSchema());
    m->apply(withBig({{3, 4}}));
    EXPECT_EQ(compression(3), "none 30000") << "a column the target keeps uncompressed got a compressed value";
    EXPECT_EQ(db.scalar("SELECT string_agg(md5(val), ',' ORDER BY id) FROM public.items"),
              db.scalar("SELECT string_agg(md5(v), ',' ORDER BY id) FROM (VALUES (1, repeat('a', 30000)), "
                        "(2, repeat('a', 30000)), (3, repeat('a', 30000))) AS x(id, v)"));
}
