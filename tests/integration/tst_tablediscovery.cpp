// Table discovery and strategy recommendations against the real test server: size, key, cursor
// candidates and write counters come from the catalog and pg_stat_user_tables, and each rule of
// recommendStrategy() is met by a table built for it.

#include "core/engine/tablediscovery.h"
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
    rec = core::recommendStrategy(*orders, core::SourceAbilities{false, true});
    EXPECT_EQ(rec.refused.at(core::Strategy::Cdc), "the source's wal_level is not logical");
    EXPECT_EQ(rec.strategy, core::Strategy::Cursor);
    EXPECT_NE(rec.reason.find("deletes are not seen"), std::string::npos) << rec.reason;
    rec = core::recommendStrategy(*find(tables, "public", "counters"), core::SourceAbilities{true, false});
    EXPECT_EQ(rec.strategy, core::Strategy::FullRefresh);
    EXPECT_EQ(rec.refused.at(core::Strategy::Cdc), "the source's user may not replicate");
}
