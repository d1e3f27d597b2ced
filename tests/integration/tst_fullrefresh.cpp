// Full refresh: the target ends equal to the source (per-row hash), and readers of the target
// never see an empty or half-loaded table while it is replaced.

#include "core/db/sqlitedb.h"
#include "core/model/error.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {
const char *kSourceTable = R"sql(
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

TableSpec fullRefresh(const std::string &table)
{
    TableSpec s;
    s.table = TableRef::parse(table);
    s.strategy = Strategy::FullRefresh;
    return s;
}

void fill(PgTestDb &db, int from, int to)
{
    db.exec("INSERT INTO accounts SELECT g, 'owner ' || g, (g * 3.17)::numeric(14,2), "
            "'2020-01-01'::timestamptz + g * interval '1 minute', g % 2 = 0, ARRAY['t' || (g % 5), NULL], "
            "jsonb_build_object('g', g, 'nested', jsonb_build_array(g, 'x')) FROM generate_series(" +
            std::to_string(from) + ", " + std::to_string(to) + ") g");
}

const char *kCols = "id, owner, balance, opened, active, tags, doc";
} // namespace

TEST(FullRefresh, postgresTargetEqualsSourceRowForRow)
{
    PgTestDb src("fr_src"), dst("fr_dst");
    src.exec(kSourceTable);
    fill(src, 1, 30000);
    RecordingObserver obs;
    TableSync sync(makeJob("p", fullRefresh("public.accounts"), pgEndpoint("src", src.name()),
                           pgEndpoint("dst", dst.name()), "model"),
                   obs);
    auto out = sync.runOnce({});
    EXPECT_EQ(out.rowsWritten, 30000);
    auto s = src.connect();
    auto d = dst.connect();
    EXPECT_EQ(pgHash(d, std::string("SELECT ") + kCols + " FROM model.accounts", "id"),
              pgHash(s, std::string("SELECT ") + kCols + " FROM accounts", "id"));

    // Changes of every kind, then another refresh.
    src.exec("DELETE FROM accounts WHERE id % 7 = 0; UPDATE accounts SET owner = 'changed' WHERE id % 11 = 0;");
    fill(src, 30001, 31000);
    sync.runOnce({});
    EXPECT_EQ(pgHash(d, std::string("SELECT ") + kCols + " FROM model.accounts", "id"),
              pgHash(s, std::string("SELECT ") + kCols + " FROM accounts", "id"));
    auto cp = d.exec("SELECT strategy, version > 0 FROM _driftless.checkpoints WHERE source_table = 'public.accounts'");
    ASSERT_EQ(cp.rows(), 1);
    EXPECT_EQ(cp.text(0, 0), "full_refresh");
    EXPECT_TRUE(cp.toBool(0, 1));
}

TEST(FullRefresh, readersNeverSeeAnEmptyOrPartialTable)
{
    PgTestDb src("fr_src"), dst("fr_dst");
    src.exec(kSourceTable);
    fill(src, 1, 150000);
    RecordingObserver obs;
    TableSync sync(
        makeJob("p", fullRefresh("public.accounts"), pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name())),
        obs);
    sync.runOnce({});
    fill(src, 150001, 200000);

    std::atomic<bool> done{false};
    std::set<long long> seen;
    std::string readerError;
    long long reads = 0;
    std::thread reader([&] {
        try {
            auto c = dst.connect();
            while (!done) {
                seen.insert(c.exec("SELECT count(*) FROM public.accounts").toInt(0, 0));
                ++reads;
            }
        } catch (const std::exception &e) {
            readerError = e.what();
        }
    });
    sync.runOnce({});
    src.exec("DELETE FROM accounts WHERE id > 180000");
    sync.runOnce({});
    done = true;
    reader.join();
    EXPECT_EQ(readerError, "");
    EXPECT_GT(reads, 10);
    for (long long n : seen)
        EXPECT_TRUE(n == 150000 || n == 200000 || n == 180000) << "a reader saw " << n << " rows";
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.accounts"), "180000");
}

TEST(FullRefresh, theSwapKeepsIndexesGrantsAndDependentViews)
{
    PgTestDb src("fr_src"), dst("fr_dst");
    src.exec(kSourceTable);
    fill(src, 1, 1000);
    RecordingObserver obs;
    TableSync sync(
        makeJob("p", fullRefresh("public.accounts"), pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name())),
        obs);
    sync.runOnce({});
    const std::string role = uniqueName("reader");
    dst.exec("CREATE ROLE " + role + "; GRANT SELECT ON public.accounts TO " + role +
             "; CREATE INDEX accounts_by_owner ON public.accounts (owner)");
    fill(src, 1001, 2000);
    sync.runOnce({});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM pg_indexes WHERE tablename = 'accounts' AND indexname = "
                         "'accounts_by_owner'"),
              "1");
    EXPECT_EQ(
        dst.scalar("SELECT count(*) FROM pg_indexes WHERE tablename = 'accounts' AND indexname = 'accounts_pkey'"),
        "1");
    EXPECT_EQ(dst.scalar("SELECT has_table_privilege('" + role + "', 'public.accounts', 'SELECT')"), "t");

    // A view on the table: the swap keeps the relation and replaces its rows instead.
    dst.exec("CREATE VIEW rich AS SELECT id FROM public.accounts WHERE balance > 1000");
    fill(src, 2001, 2500);
    sync.runOnce({});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.accounts"), "2500");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM rich"),
              src.scalar("SELECT count(*) FROM accounts WHERE balance > 1000"));
    dst.exec("DROP VIEW rich; DROP OWNED BY " + role + "; DROP ROLE " + role);
}

TEST(FullRefresh, sqliteTargetHoldsEveryRowByTheDocumentedMapping)
{
    PgTestDb src("fr_src");
    TempDir dir;
    src.exec(kSourceTable);
    fill(src, 1, 5000);
    RecordingObserver obs;
    TableSync sync(makeJob("p", fullRefresh("public.accounts"), pgEndpoint("src", src.name()),
                           sqliteEndpoint("lite", dir.file("r.db"))),
                   obs);
    EXPECT_EQ(sync.runOnce({}).rowsWritten, 5000);
    src.exec("DELETE FROM accounts WHERE id <= 100");
    sync.runOnce({});
    SqliteDb db(dir.file("r.db"));
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM accounts"), 4900);
    auto st =
        db.prepare("SELECT owner, balance, typeof(balance), opened, active, tags, doc FROM accounts WHERE id = 4242");
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.text(0), "owner 4242");
    EXPECT_EQ(st.text(1), "13447.14");
    EXPECT_EQ(st.text(2), "text") << "numeric stays exact text";
    EXPECT_EQ(st.text(3), "2020-01-03 22:42:00+00:00");
    EXPECT_EQ(st.int64(4), 1);
    EXPECT_EQ(st.text(5), "{t2,NULL}");
    EXPECT_EQ(st.text(6), "{\"g\": 4242, \"nested\": [4242, \"x\"]}");
}

TEST(FullRefresh, aTableWithoutPrimaryKeyIsRefreshedToo)
{
    PgTestDb src("fr_src"), dst("fr_dst");
    src.exec("CREATE TABLE log (at timestamptz, line text); INSERT INTO log SELECT now(), 'l' || g FROM "
             "generate_series(1, 500) g; INSERT INTO log SELECT now(), 'l1' FROM generate_series(1, 3)");
    RecordingObserver obs;
    TableSync sync(
        makeJob("p", fullRefresh("public.log"), pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name())), obs);
    sync.runOnce({});
    sync.runOnce({});
    auto s = src.connect();
    auto d = dst.connect();
    EXPECT_EQ(pgHash(d, "SELECT at, line FROM log", "at, line"), pgHash(s, "SELECT at, line FROM log", "at, line"));
}

TEST(FullRefresh, aStopRollsBackAndKeepsTheOldTable)
{
    PgTestDb src("fr_src"), dst("fr_dst");
    src.exec(kSourceTable);
    fill(src, 1, 1000);
    RecordingObserver obs;
    TableSync sync(
        makeJob("p", fullRefresh("public.accounts"), pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name())),
        obs);
    sync.runOnce({});
    fill(src, 1001, 400000);
    std::stop_source stop;
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        stop.request_stop();
    });
    EXPECT_THROW(sync.runOnce(stop.get_token()), Error);
    stopper.join();
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.accounts"), "1000");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM pg_tables WHERE tablename LIKE '\\_driftless\\_new%'"), "0");
}

namespace {
const char *kPriced = "CREATE TABLE priced (id int PRIMARY KEY, price numeric(10,2) NOT NULL, qty int, "
                      "total numeric GENERATED ALWAYS AS (price * qty) STORED)";
const char *kPricedValues = "SELECT count(*) || ' ' || string_agg(id || '=' || coalesce(total::text, 'null'), ',' "
                            "ORDER BY id) FROM ";
} // namespace

TEST(FullRefresh, aGeneratedColumnIsGeneratedInANewPostgresTargetAndStaysPlainInAnOldOne)
{
    // The target computes a generated column itself, so the refresh never copies into it; a
    // target an older version made holds it as a plain column, and keeps getting the values.
    PgTestDb src("fr_src"), dst("fr_dst");
    src.exec(kPriced);
    src.exec("INSERT INTO priced (id, price, qty) SELECT g, g * 0.5, nullif(g % 5, 2) FROM generate_series(1, 2000) g");
    dst.exec("CREATE SCHEMA old; CREATE TABLE old.priced (id int PRIMARY KEY, price numeric(10,2) NOT NULL, qty int, "
             "total numeric, _driftless_version bigint NOT NULL DEFAULT 0)");
    RecordingObserver obs;
    TableSync fresh(makeJob("p", fullRefresh("public.priced"), pgEndpoint("src", src.name()),
                            pgEndpoint("dst", dst.name()), "model"),
                    obs);
    TableSync old(
        makeJob("q", fullRefresh("public.priced"), pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()), "old"),
        obs);
    const std::string generated =
        "SELECT attgenerated FROM pg_attribute WHERE attrelid = '%.priced'::regclass AND attname = 'total'";
    auto generatedIn = [&](const std::string &schema) {
        std::string q = generated;
        q.replace(q.find('%'), 1, schema);
        return dst.scalar(q);
    };
    for (int pass = 0; pass < 2; ++pass) {
        fresh.runOnce({});
        old.runOnce({});
        EXPECT_EQ(dst.scalar(std::string(kPricedValues) + "model.priced"),
                  src.scalar(std::string(kPricedValues) + "priced"));
        EXPECT_EQ(dst.scalar(std::string(kPricedValues) + "old.priced"),
                  src.scalar(std::string(kPricedValues) + "priced"));
        EXPECT_EQ(generatedIn("model"), "s") << "pass " << pass;
        EXPECT_EQ(generatedIn("old"), "") << "pass " << pass;
        src.exec("UPDATE priced SET qty = coalesce(qty, 0) + 1 WHERE id % 3 = 0; DELETE FROM priced WHERE id > 1900");
    }
    // A view on the table makes the refresh replace rows in place (INSERT ... SELECT): same outcome.
    dst.exec("CREATE VIEW model.v AS SELECT id, total FROM model.priced");
    fresh.runOnce({});
    EXPECT_EQ(dst.scalar(std::string(kPricedValues) + "model.priced"),
              src.scalar(std::string(kPricedValues) + "priced"));
    EXPECT_EQ(generatedIn("model"), "s");
}
