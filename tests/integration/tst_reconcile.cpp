// Reconciliation against real servers: drift injected on either side is found exactly (no more,
// no less), edge values never read as drift between Postgres and SQLite, rows the sync has not
// applied yet count as in flight, repair goes through the guarded merge without disturbing a
// live stream, and an equal table costs one hashing query per side.

#include "core/db/sqlitedb.h"
#include "core/engine/cdc/pg/cdcpipeline.h"
#include "core/engine/reconcile/reconciler.h"
#include "core/engine/rows/rowhash.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <set>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

Workspace workspaceFor(const std::string &pipeline, const Endpoint &src, const Endpoint &dst,
                       const std::vector<TableSpec> &tables)
{
    Workspace ws;
    ws.endpoints[src.name] = src;
    ws.endpoints[dst.name] = dst;
    PipelineSpec p;
    p.name = pipeline;
    p.source = src.name;
    p.target = dst.name;
    p.tables = tables;
    ws.pipelines.push_back(p);
    return ws;
}

TableSpec spec(const std::string &table, Strategy s)
{
    TableSpec t;
    t.table = TableRef::parse(table);
    t.strategy = s;
    t.pageSize = 1000;
    if (s == Strategy::Cursor)
        t.cursor = "updated_at";
    return t;
}

/// Small segments, so a table of a few thousand rows goes through several bisection levels.
ReconcileOptions bisecting()
{
    ReconcileOptions o;
    o.fetchRows = 40;
    o.maxSegments = 8;
    o.minSegmentRows = 4;
    o.settle = std::chrono::milliseconds(0);
    return o;
}

std::set<std::string> keySet(const std::vector<CanonicalKey> &keys)
{
    std::set<std::string> s;
    for (const auto &k : keys)
        s.insert(k.size() == 1 ? k[0] : rowhash::recordText({k.begin(), k.end()}));
    return s;
}

std::set<std::string> keySet(const std::vector<DifferentRow> &rows)
{
    std::vector<CanonicalKey> keys;
    for (const auto &r : rows)
        keys.push_back(r.key);
    return keySet(keys);
}

/// Runs SQL on the test's target: the Postgres database, or the SQLite file t.db in `dir`.
std::function<void(const std::string &)> targetExec(bool sqlite, const PgTestDb &dst, const TempDir &dir)
{
    return [sqlite, &dst, &dir](const std::string &sql) {
        if (sqlite)
            SqliteDb(dir.file("t.db")).exec(sql);
        else
            dst.exec(sql);
    };
}

void runOnce(const Workspace &ws, const std::string &pipeline)
{
    RecordingObserver obs;
    for (auto &job : jobsFor(ws, pipeline)) {
        TableSync sync(job, obs);
        sync.runOnce({});
    }
}

const char *kItems = R"sql(
CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, qty int, price numeric(10,2),
                    updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO items SELECT g, 'item ' || g, g % 97, (g % 1000) / 10.0, now() - interval '1 hour'
FROM generate_series(1, 3000) g;
)sql";

/// Drift on both sides of a cursor table: rows deleted, inserted and updated in the target; a
/// source bulk UPDATE that leaves updated_at alone (F10) and hard deletes, which cursor sync
/// cannot see; and one fresh source change not yet synced, which is in flight, not drift.
void injectDrift(PgTestDb &src, const std::function<void(const std::string &)> &target)
{
    target("DELETE FROM items WHERE id IN (7, 1500, 2999)");
    target(
        "INSERT INTO items (id, name, qty, price, updated_at, _driftless_version) VALUES "
        "(5000, 'ghost', 1, 1.00, '2020-01-01 00:00:00+00', 1), (5001, 'ghost', 2, 2.00, '2020-01-01 00:00:00+00', 1)");
    target("UPDATE items SET name = 'edited by hand' WHERE id IN (10, 11)");
    target("UPDATE items SET price = NULL WHERE id = 12");
    target("UPDATE items SET qty = 0 WHERE id = 2500");
    src.exec("UPDATE items SET qty = qty + 1000 WHERE id IN (100, 200, 300, 400)"); // F10: updated_at untouched
    src.exec("DELETE FROM items WHERE id IN (42, 43)");                             // hard deletes
    src.exec("UPDATE items SET name = 'fresh', updated_at = now() WHERE id = 77");  // in flight
}

void expectInjectedDrift(const TableReconcile &t)
{
    ASSERT_TRUE(t.error.empty()) << t.error;
    EXPECT_EQ(keySet(t.missingKeys), (std::set<std::string>{"7", "1500", "2999"}));
    EXPECT_EQ(keySet(t.extraKeys), (std::set<std::string>{"42", "43", "5000", "5001"}));
    EXPECT_EQ(keySet(t.differentRows), (std::set<std::string>{"10", "11", "12", "2500", "100", "200", "300", "400"}));
    EXPECT_EQ(t.missing, 3);
    EXPECT_EQ(t.extra, 4);
    EXPECT_EQ(t.different, 8);
    EXPECT_EQ(t.inFlight, 1); // id 77: changed within the cursor's recent window
    EXPECT_EQ(t.sourceRows, 2998);
    EXPECT_EQ(t.targetRows, 2999);
    EXPECT_NEAR(t.driftRatio, 15.0 / 2998.0, 1e-9);
    // The differing columns, with each side's value.
    for (const auto &d : t.differentRows) {
        ASSERT_EQ(d.columns.size(), 1u) << d.key[0];
        if (d.key[0] == "10") {
            EXPECT_EQ(d.columns[0].column, "name");
            EXPECT_EQ(d.columns[0].source, "item 10");
            EXPECT_EQ(d.columns[0].target, "edited by hand");
        }
        if (d.key[0] == "12") {
            EXPECT_EQ(d.columns[0].column, "price");
            EXPECT_EQ(d.columns[0].source, "1.2");
            EXPECT_EQ(d.columns[0].target, std::nullopt);
        }
    }
    EXPECT_GT(t.sourceQueries, 3) << "bisection levels were expected";
}

} // namespace

TEST(Reconcile, findsInjectedDriftExactlyAndRepairsItPostgres)
{
    PgTestDb src("rec_src"), dst("rec_dst");
    src.exec(kItems);
    const auto ws = workspaceFor("p", pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()),
                                 {spec("public.items", Strategy::Cursor)});
    runOnce(ws, "p");
    // Equal after a sync: nothing to report, one hashing query per side (after the key's
    // bounds, two index probes).
    auto equal = reconcile(ws, "p", {}, bisecting());
    ASSERT_EQ(equal.tables.size(), 1u);
    EXPECT_EQ(equal.tables[0].drift(), 0);
    EXPECT_EQ(equal.tables[0].sourceQueries, 2);
    EXPECT_EQ(equal.tables[0].targetQueries, 2);

    injectDrift(src, [&](const std::string &sql) { dst.exec(sql); });
    auto report = reconcile(ws, "p", {"public.items"}, bisecting());
    ASSERT_EQ(report.tables.size(), 1u);
    expectInjectedDrift(report.tables[0]);

    // The report survives JSON (the CLI and the state file keep it that way).
    auto back = reportFromJson(reportJsonValue(report));
    expectInjectedDrift(back.tables[0]);

    auto outcomes = repairReport(ws, back);
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_TRUE(outcomes[0].error.empty()) << outcomes[0].error;
    EXPECT_EQ(outcomes[0].keys, 15);
    EXPECT_EQ(outcomes[0].verified, 15);
    EXPECT_EQ(outcomes[0].stillDifferent, 0);
    auto after = reconcile(ws, "p", {}, bisecting());
    EXPECT_EQ(after.tables[0].drift(), 0);
    EXPECT_EQ(after.tables[0].inFlight, 1); // still only the fresh change, which the next pass syncs
    runOnce(ws, "p");
    auto s = src.connect(), d = dst.connect();
    EXPECT_EQ(pgHash(s, "SELECT id, name, qty, price, updated_at FROM items", "id"),
              pgHash(d, "SELECT id, name, qty, price, updated_at FROM items", "id"));
}

TEST(Reconcile, aRepairRunsExactlyItsPlanAndSkipsAKeyTheSourceChangedSince)
{
    PgTestDb src("rec_plan_src"), dst("rec_plan_dst");
    src.exec(kItems);
    const auto ws = workspaceFor("p", pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()),
                                 {spec("public.items", Strategy::Cursor)});
    runOnce(ws, "p");
    injectDrift(src, [&](const std::string &sql) { dst.exec(sql); });
    auto report = reconcile(ws, "p", {}, bisecting());
    expectInjectedDrift(report.tables[0]);

    // The plan: missing rows inserted, different ones updated, extra ones deleted; nothing written.
    auto d = dst.connect();
    const auto before = pgHash(d, "SELECT * FROM items", "id");
    const auto plan = planRepair(ws, report);
    EXPECT_EQ(pgHash(d, "SELECT * FROM items", "id"), before);
    ASSERT_EQ(plan.tables.size(), 1u);
    const auto &t = plan.tables[0];
    ASSERT_TRUE(t.error.empty()) << t.error;
    EXPECT_EQ(t.target, "public.items");
    EXPECT_EQ(t.inserts, 3);
    EXPECT_EQ(t.updates, 8);
    EXPECT_EQ(keySet(t.deleteKeys), (std::set<std::string>{"42", "43", "5000", "5001"}));
    ASSERT_EQ(t.statements.size(), 3u);
    EXPECT_EQ(t.statements[0].kind, "stage");
    EXPECT_EQ(t.statements[0].rows, 15);
    EXPECT_EQ(t.statements[1].kind, "upsert");
    EXPECT_EQ(t.statements[1].rows, 11);
    EXPECT_EQ(t.statements[2].kind, "delete");
    EXPECT_EQ(t.statements[2].rows, 4);
    // The plan survives JSON (the agent API and the app's preview carry it that way).
    const auto back = repairPlanFromJson(repairPlanJsonValue(plan));
    ASSERT_EQ(back.tables.size(), 1u);
    EXPECT_EQ(back.tables[0].statements, t.statements);
    EXPECT_EQ(back.tables[0].upsertKeys, t.upsertKeys);
    EXPECT_EQ(back.tables[0].deleteKeys, t.deleteKeys);
    EXPECT_NE(repairPlanText(plan).find("11 rows: MERGE INTO \"public\".\"items\""), std::string::npos)
        << repairPlanText(plan);

    // Between the preview and the repair the source deletes a row the plan would write: the repair
    // leaves it (the sync's to apply), and runs the rest of the plan exactly.
    src.exec("DELETE FROM items WHERE id = 1500");
    auto outcomes = executeRepair(ws, plan);
    ASSERT_EQ(outcomes.size(), 1u);
    const auto &o = outcomes[0];
    ASSERT_TRUE(o.error.empty()) << o.error;
    EXPECT_EQ(o.skipped, 1);
    ASSERT_EQ(o.statements.size(), 3u);
    EXPECT_EQ(o.statements[0].rows, 14);
    EXPECT_EQ(o.statements[1].rows, 10);
    EXPECT_EQ(o.statements[2], t.statements[2]);
    EXPECT_EQ(o.written, 10);
    EXPECT_EQ(o.deleted, 4);
    EXPECT_EQ(o.verified, 15); // 1500 is gone from both sides now
    // The preview's whole SQL (Show Details) leaves nothing out, and is what the target runs:
    // EXPLAIN takes each statement now that the repair made the staging and tombstone tables.
    for (const auto &st : t.statements) {
        SCOPED_TRACE(st.kind);
        EXPECT_EQ(st.full.find("..."), std::string::npos) << st.full;
        const std::vector<std::string> named =
            st.kind == "delete"
                ? std::vector<std::string>{"\"id\""}
                : std::vector<std::string>{"\"id\"", "\"name\"", "\"qty\"", "\"price\"", "\"updated_at\""};
        for (const auto &column : named)
            EXPECT_NE(st.full.find(column), std::string::npos) << st.full;
        if (st.kind != "stage") {
            EXPECT_NO_THROW(dst.exec("EXPLAIN " + st.full)) << st.full;
        }
    }
    EXPECT_NE(repairPlanDetails(plan).find("MERGE INTO \"public\".\"items\" AS t"), std::string::npos)
        << repairPlanDetails(plan);
    auto after = reconcile(ws, "p", {}, bisecting());
    EXPECT_EQ(after.tables[0].drift(), 0);

    // Nothing changed since the plan: the repair runs it to the row.
    dst.exec("UPDATE items SET qty = -1 WHERE id IN (1, 2); DELETE FROM items WHERE id = 3");
    auto second = reconcile(ws, "p", {}, bisecting());
    const auto plan2 = planRepair(ws, second);
    auto done = executeRepair(ws, plan2);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].statements, plan2.tables[0].statements);
    EXPECT_EQ(done[0].skipped, 0);
    EXPECT_EQ(done[0].written, plan2.tables[0].inserts + plan2.tables[0].updates);
    EXPECT_EQ(plan2.tables[0].inserts, 1);
    EXPECT_EQ(plan2.tables[0].updates, 2);
    EXPECT_EQ(reconcile(ws, "p", {}, bisecting()).tables[0].drift(), 0);
}

TEST(Reconcile, findsInjectedDriftExactlyAndRepairsItSqlite)
{
    PgTestDb src("rec_src");
    TempDir dir;
    src.exec(kItems);
    const auto ws = workspaceFor("p", pgEndpoint("src", src.name()), sqliteEndpoint("dst", dir.file("t.db")),
                                 {spec("public.items", Strategy::Cursor)});
    runOnce(ws, "p");
    EXPECT_EQ(reconcile(ws, "p", {}, bisecting()).tables[0].drift(), 0);
    injectDrift(src, [&](const std::string &sql) {
        SqliteDb db(dir.file("t.db"));
        db.exec(sql);
    });
    auto report = reconcile(ws, "p", {}, bisecting());
    expectInjectedDrift(report.tables[0]);
    auto outcomes = repairReport(ws, report);
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_TRUE(outcomes[0].error.empty()) << outcomes[0].error;
    EXPECT_EQ(outcomes[0].verified, 15);
    EXPECT_EQ(reconcile(ws, "p", {}, bisecting()).tables[0].drift(), 0);
}

namespace {
// Faults F16: edge values that must hash equal on both sides.
const char *kEdge = R"sql(
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE "Edge Cases" (
    "Key" text PRIMARY KEY,
    "select" text, "with space" varchar(20), "quote""d" char(5), j json, jb jsonb, b bytea,
    n numeric, n2 numeric(12,4), f8 float8, f4 real, ts timestamp, tstz timestamptz, d date, t time,
    iv interval, flag boolean, u uuid, arr int[], tarr text[], m mood, i8 bigint, i2 smallint
);
INSERT INTO "Edge Cases" VALUES
 ('a', NULL, '', '', 'null', 'null', '\x00'::bytea, 'NaN', 1.5, 'NaN', 'NaN', 'infinity', '-infinity', 'infinity',
  '24:00', '1 day 02:03:04.5', true, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{}', '{}', 'sad', -9223372036854775808, -32768),
 ('A', '', NULL, 'ab', NULL, '{"b": 1, "a": [1, 2.50, "x"]}', '\x00ff10'::bytea, 'Infinity', 0, 'Infinity', '-Infinity',
  '2024-02-29 23:59:59.999999', '2024-02-29 23:59:59.999999+05:30', '0001-01-01', '00:00:00.000001', '-1 mons',
  false, NULL, '{1,NULL,3}', '{"a,b","c\"d","",NULL,"e\\f"}', 'happy', 9223372036854775807, 32767),
 ('É', '""', '()', ',', '"null"', '""', '', '-Infinity', -0.0001, '-0', '1e-30', '1970-01-01 00:00:00',
  '1999-12-31 23:00:00-01', '2000-02-29', '12:34:56.789', '00:00:00', NULL, '00000000-0000-0000-0000-000000000000',
  NULL, '{" spaced "}', NULL, 0, 0),
 ('é', 'tab	and
newline', 'back\slash', 'x"y', '[1, 2]', '[]', NULL,
  '123456789012345678901234567890123456789012345678901234567890.123456789012345678901234567890', 123.4500, 1e308,
  3.4028235e38, NULL, '2038-01-19 03:14:07.5+00', NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'ok', NULL, NULL),
 ('😀 emoji', 'ünïcødé 𝄞', 'x', NULL, '{"k": "😀"}', '{"k": "😀"}', '\xdeadbeef', 1000000000000000000000,
  1.0000, 2.2250738585072014e-308, 1.17549435e-38, '2000-01-01 00:00:00.5', '2000-01-01 00:00:00.5+00', '1999-01-01',
  NULL, NULL, true, NULL, NULL, NULL, NULL, 1, 1),
 ('z', ' leading', 'trailing ', '  ', '{}', '{}', '\x5c'::bytea, -0.0, -1.10, 0.1, 0.1, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO "Edge Cases" ("Key", n) SELECT 'row ' || g, g / 7.0 FROM generate_series(1, 200) g;
CREATE TABLE uuids (id uuid PRIMARY KEY, v text);
INSERT INTO uuids SELECT md5(g::text)::uuid, 'v' || g FROM generate_series(1, 500) g;
CREATE TABLE composite (region text, day date, seq int, total numeric, PRIMARY KEY (region, day, seq));
INSERT INTO composite SELECT (ARRAY['north', 'North', 'nörth', 'south', 'Zeta', 'émile'])[1 + g % 6],
    date '2024-01-01' + (g % 40), g, g * 1.5 FROM generate_series(1, 1200) g;
)sql";

std::vector<TableSpec> edgeTables()
{
    return {spec("public.\"Edge Cases\"", Strategy::FullRefresh), spec("public.uuids", Strategy::FullRefresh),
            spec("public.composite", Strategy::FullRefresh)};
}
} // namespace

TEST(Reconcile, noFalseDriftOnEdgeValuesPostgresAndSqlite)
{
    PgTestDb src("rec_edge");
    PgTestDb dst("rec_edge_dst");
    TempDir dir;
    src.exec(kEdge);
    for (bool sqlite : {false, true}) {
        SCOPED_TRACE(sqlite ? "sqlite" : "postgres");
        const auto target = sqlite ? sqliteEndpoint("dst", dir.file("t.db")) : pgEndpoint("dst", dst.name());
        const auto ws = workspaceFor("p", pgEndpoint("src", src.name()), target, edgeTables());
        runOnce(ws, "p");
        for (auto opt : {ReconcileOptions{}, bisecting()}) {
            auto r = reconcile(ws, "p", {}, opt);
            ASSERT_EQ(r.tables.size(), 3u);
            for (const auto &t : r.tables) {
                SCOPED_TRACE(t.table);
                EXPECT_TRUE(t.error.empty()) << t.error;
                EXPECT_EQ(t.drift(), 0) << reportJsonValue(r).dump(2);
                EXPECT_GT(t.sourceRows, 0);
                EXPECT_EQ(t.sourceRows, t.targetRows);
            }
        }
        // And one real difference in each table is found, exactly.
        if (sqlite) {
            SqliteDb db(dir.file("t.db"));
            db.exec("UPDATE \"Edge Cases\" SET \"select\" = 'changed' WHERE \"Key\" = 'É'");
            db.exec("UPDATE uuids SET v = 'changed' WHERE id = (SELECT id FROM uuids ORDER BY id LIMIT 1)");
            db.exec("DELETE FROM composite WHERE region = 'nörth' AND seq = 8");
        } else {
            dst.exec("UPDATE \"Edge Cases\" SET \"select\" = 'changed' WHERE \"Key\" = 'É'");
            dst.exec("UPDATE uuids SET v = 'changed' WHERE id = (SELECT id FROM uuids ORDER BY id LIMIT 1)");
            dst.exec("DELETE FROM composite WHERE region = 'nörth' AND seq = 8");
        }
        auto r = reconcile(ws, "p", {}, bisecting());
        ASSERT_EQ(r.tables.size(), 3u);
        EXPECT_EQ(keySet(r.tables[0].differentRows), std::set<std::string>{"É"});
        ASSERT_EQ(r.tables[0].differentRows.size(), 1u);
        ASSERT_EQ(r.tables[0].differentRows[0].columns.size(), 1u) << reportJsonValue(r).dump(2);
        EXPECT_EQ(r.tables[0].differentRows[0].columns[0].column, "select");
        EXPECT_EQ(r.tables[1].different, 1);
        EXPECT_EQ(r.tables[1].drift(), 1);
        EXPECT_EQ(keySet(r.tables[2].missingKeys), std::set<std::string>{"(nörth,2024-01-09,8)"});
        EXPECT_EQ(r.tables[2].drift(), 1);
        auto fixed = repairReport(ws, r);
        for (const auto &o : fixed)
            EXPECT_TRUE(o.error.empty()) << o.error;
        for (const auto &t : reconcile(ws, "p", {}, bisecting()).tables)
            EXPECT_EQ(t.drift(), 0) << t.table;
    }
}

// A full refresh table between passes holds the source as its last pass's snapshot saw it: what
// the source changed since (inserts, updates, deletes) is in flight until the next pass copies
// it, and only what was done to the target is drift ("76 missing, 2.33%" was counted as drift).
// Postgres sources are dated by the transactions the snapshot saw (the plain table, and one
// behind a row filter); a checkpoint written before those were recorded falls back to the
// table's updated_at, and a table without one says its source changes cannot be dated. The
// oracle: row counts and a hash of every row computed in SQL on each side after the next pass.
TEST(Reconcile, aFullRefreshTablesRowsChangedSinceItsLastPassAreInFlightNotDrift)
{
    PgTestDb src("rec_fr_src"), dst("rec_fr_dst");
    TempDir dir;
    for (const std::string t : {"items", "orders"})
        src.exec("CREATE TABLE " + t + " (id bigint PRIMARY KEY, name text, qty int); INSERT INTO " + t +
                 " SELECT g, 'item ' || g, g FROM generate_series(1, 3000) g");
    src.exec("CREATE TABLE stamped (id int PRIMARY KEY, name text, updated_at timestamptz NOT NULL DEFAULT now()); "
             "INSERT INTO stamped SELECT g, 's' || g, now() - interval '1 day' FROM generate_series(1, 500) g");
    TableSpec filtered = spec("public.orders", Strategy::FullRefresh);
    filtered.where = "id <= 2500";
    const std::vector<TableSpec> tables = {spec("public.items", Strategy::FullRefresh), filtered,
                                           spec("public.stamped", Strategy::FullRefresh)};
    for (const bool sqlite : {false, true}) {
        SCOPED_TRACE(sqlite ? "sqlite" : "postgres");
        const auto target = sqlite ? sqliteEndpoint("dst", dir.file("t.db")) : pgEndpoint("dst", dst.name());
        const auto ws = workspaceFor("p", pgEndpoint("src", src.name()), target, tables);
        runOnce(ws, "p");
        const auto onTarget = targetExec(sqlite, dst, dir);
        for (const std::string t : {"items", "orders"}) {
            // After the pass: 76 rows inserted, 5 updated and 3 deleted at the source (in flight) ...
            src.exec("INSERT INTO " + t + " SELECT g, 'new ' || g, g FROM generate_series(3001, 3076) g");
            src.exec("UPDATE " + t + " SET qty = -qty WHERE id IN (10, 20, 30, 2600, 2700)");
            src.exec("DELETE FROM " + t + " WHERE id IN (40, 50, 2800)");
            // ... and by hand in the target: 2 rows deleted, 4 changed, 1 inserted (drift).
            onTarget("DELETE FROM " + t + " WHERE id IN (100, 200)");
            onTarget("UPDATE " + t + " SET name = 'by hand' WHERE id IN (300, 400, 500, 600)");
            onTarget("INSERT INTO " + t + " (id, name, qty) VALUES (9000, 'ghost', 0)");
        }
        src.exec("UPDATE stamped SET name = 'fresh', updated_at = now() WHERE id IN (1, 2)");
        auto r = reconcile(ws, "p", {}, bisecting());
        ASSERT_EQ(r.tables.size(), 3u);
        for (size_t i = 0; i < 2; ++i) {
            const auto &t = r.tables[i];
            SCOPED_TRACE(t.table);
            ASSERT_TRUE(t.error.empty()) << t.error;
            EXPECT_EQ(keySet(t.missingKeys), (std::set<std::string>{"100", "200"})) << reportJsonValue(r).dump(2);
            EXPECT_EQ(keySet(t.differentRows), (std::set<std::string>{"300", "400", "500", "600"}));
            EXPECT_EQ(keySet(t.extraKeys), std::set<std::string>{"9000"});
            // All 84 changes; behind `id <= 2500` only the rows it holds: 3 updated, 2 deleted.
            EXPECT_EQ(t.inFlight, i == 0 ? 84 : 5);
            EXPECT_TRUE(t.note.empty()) << t.note;
        }
        EXPECT_EQ(r.tables[2].drift(), 0) << reportJsonValue(r).dump(2);
        EXPECT_EQ(r.tables[2].inFlight, 2);
        EXPECT_EQ(r.tables[0].sourceRows, std::stoll(src.scalar("SELECT count(*) FROM items")));
        EXPECT_EQ(r.tables[0].targetRows, 3000 - 2 + 1);

        // A checkpoint from before the snapshot's transactions were recorded: updated_at dates
        // the source's rows, and a table without a time column says its changes cannot be dated.
        if (!sqlite) {
            dst.exec("UPDATE _driftless.checkpoints SET position = (position::jsonb - 'snapshot_txids')::text");
            auto old = reconcile(ws, "p", {}, bisecting());
            EXPECT_EQ(old.tables[2].drift(), 0);
            EXPECT_EQ(old.tables[2].inFlight, 2);
            EXPECT_EQ(old.tables[0].missing, 2 + 76);
            EXPECT_EQ(old.tables[0].different, 4 + 5);
            EXPECT_EQ(old.tables[0].extra, 1);
            EXPECT_EQ(old.tables[0].inFlight, 3); // the deleted rows: the pass had loaded them
            EXPECT_NE(old.tables[0].note.find("87 differing rows of the source cannot be dated"), std::string::npos)
                << old.tables[0].note;
        }

        // The next pass copies what was in flight and replaces what was done by hand.
        runOnce(ws, "p");
        for (const auto &t : reconcile(ws, "p", {}, bisecting()).tables) {
            EXPECT_EQ(t.drift(), 0) << t.table;
            EXPECT_EQ(t.inFlight, 0) << t.table;
        }
        if (!sqlite) {
            auto s = src.connect(), d = dst.connect();
            EXPECT_EQ(pgHash(s, "SELECT id, name, qty FROM items", "id"),
                      pgHash(d, "SELECT id, name, qty FROM items", "id"));
            EXPECT_EQ(pgHash(s, "SELECT id, name, qty FROM orders WHERE id <= 2500", "id"),
                      pgHash(d, "SELECT id, name, qty FROM orders", "id"));
        }
        // The next target starts from the same source.
        for (const std::string t : {"items", "orders"})
            src.exec("DELETE FROM " + t + " WHERE id > 3000; UPDATE " + t + " SET qty = abs(qty); INSERT INTO " + t +
                     " SELECT g, 'item ' || g, g FROM generate_series(1, 3000) g ON CONFLICT DO NOTHING");
    }
}

// A table without a primary key (an audit log) gets counts and a checksum of every row, never a
// bare error: equal tables are equal, and the rows one side holds more copies of are listed with
// their values (a changed row is one missing and one extra). Rows the source wrote since the last
// pass are in flight. It is not repaired row by row: the plan says why. Oracle: counts in SQL.
TEST(Reconcile, aTableWithoutAPrimaryKeyIsComparedAsWholeRows)
{
    PgTestDb src("rec_nokey_src"), dst("rec_nokey_dst");
    TempDir dir;
    src.exec("CREATE TABLE audit (at timestamp, who text, what text); "
             "INSERT INTO audit SELECT timestamp '2024-01-01' + g * interval '1 minute', 'u' || (g % 7), "
             "CASE WHEN g % 10 = 0 THEN NULL ELSE 'did ' || (g % 3) END FROM generate_series(1, 2000) g; "
             "INSERT INTO audit SELECT * FROM audit WHERE at IN ('2024-01-01 00:01:00', '2024-01-01 00:08:00', "
             "'2024-01-01 00:15:00')"); // three duplicated rows
    for (const bool sqlite : {false, true}) {
        SCOPED_TRACE(sqlite ? "sqlite" : "postgres");
        const auto target = sqlite ? sqliteEndpoint("dst", dir.file("t.db")) : pgEndpoint("dst", dst.name());
        const auto ws =
            workspaceFor("p", pgEndpoint("src", src.name()), target, {spec("public.audit", Strategy::FullRefresh)});
        runOnce(ws, "p");
        const auto onTarget = targetExec(sqlite, dst, dir);
        const auto equal = reconcile(ws, "p", {}, bisecting());
        ASSERT_TRUE(equal.tables[0].error.empty()) << equal.tables[0].error;
        EXPECT_EQ(equal.tables[0].drift(), 0);
        EXPECT_EQ(equal.tables[0].sourceRows, 2003);
        EXPECT_EQ(equal.tables[0].targetRows, 2003);

        // In the target: one copy of a duplicated row gone, one row changed, one row doubled.
        const std::string dup = sqlite ? "(SELECT rowid FROM audit WHERE at = '2024-01-01 00:01:00' LIMIT 1)"
                                       : "(SELECT ctid FROM audit WHERE at = '2024-01-01 00:01:00' LIMIT 1)";
        onTarget(std::string("DELETE FROM audit WHERE ") + (sqlite ? "rowid" : "ctid") + " = " + dup);
        onTarget("UPDATE audit SET what = 'by hand' WHERE at = '2024-01-01 00:02:00'");
        onTarget("INSERT INTO audit (at, who, what) SELECT at, who, what FROM audit WHERE at = '2024-01-01 00:05:00'");
        // At the source after the pass: two rows written (in flight).
        src.exec("INSERT INTO audit VALUES ('2030-01-01', 'late', 'x'), ('2030-01-02', 'late', NULL)");

        ReconcileOptions opt = bisecting();
        opt.fetchRows = 10'000;
        const auto r = reconcile(ws, "p", {}, opt);
        const auto &t = r.tables[0];
        ASSERT_TRUE(t.error.empty()) << t.error;
        EXPECT_EQ(t.sourceRows, std::stoll(src.scalar("SELECT count(*) FROM audit")));
        EXPECT_EQ(t.targetRows, 2003 - 1 + 1);
        EXPECT_EQ(t.missing, 2) << reportJsonValue(r).dump(2); // the lost copy, the changed row's source value
        EXPECT_EQ(t.extra, 2);                                 // the changed row's target value, the doubled row
        EXPECT_EQ(t.different, 0);
        EXPECT_EQ(t.inFlight, 2);
        EXPECT_TRUE(t.keyColumns.empty());
        EXPECT_EQ(t.columns, (std::vector<std::string>{"at", "who", "what"}));
        std::set<std::string> missing, extra;
        for (const auto &m : t.missingRows)
            missing.insert(*m.values[0] + "|" + m.values[2].value_or("NULL") + "|" + std::to_string(m.copies));
        for (const auto &e : t.extraRows)
            extra.insert(*e.values[0] + "|" + e.values[2].value_or("NULL") + "|" + std::to_string(e.copies));
        EXPECT_EQ(missing, (std::set<std::string>{"2024-01-01 00:01:00|did 1|1", "2024-01-01 00:02:00|did 2|1"}));
        EXPECT_EQ(extra, (std::set<std::string>{"2024-01-01 00:02:00|by hand|1", "2024-01-01 00:05:00|did 2|1"}));
        // The report keeps the rows' values through JSON, and the repair says why it cannot.
        const auto back = reportFromJson(reportJsonValue(r));
        ASSERT_EQ(back.tables[0].missingRows.size(), 2u);
        EXPECT_EQ(back.tables[0].missingRows[0].values, t.missingRows[0].values);
        const auto plan = planRepair(ws, r);
        ASSERT_EQ(plan.tables.size(), 1u);
        EXPECT_NE(plan.tables[0].error.find("has no primary key"), std::string::npos) << plan.tables[0].error;
        // More rows than it may fetch: the counts, and the least drift the checksums prove.
        opt.fetchRows = 100;
        const auto big = reconcile(ws, "p", {}, opt).tables[0];
        EXPECT_EQ(big.missing + big.extra, 2);
        EXPECT_NE(big.note.find("not listed"), std::string::npos) << big.note;
        src.exec("DELETE FROM audit WHERE who = 'late'");
    }
}

namespace {
struct CdcFixture {
    PgTestDb src{"rec_cdc_src"};
    PgTestDb dst{"rec_cdc_dst"};
    RecordingObserver obs;
    std::string pipeline = uniqueName("rec");
    Workspace ws;
    CdcFixture()
    {
        src.exec("CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, qty int); "
                 "INSERT INTO items SELECT g, 'item ' || g, g FROM generate_series(1, 2000) g");
        ws = workspaceFor(pipeline, pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()),
                          {spec("public.items", Strategy::Cdc)});
        once();
    }
    void once()
    {
        CdcPipeline p(jobsFor(ws, pipeline), std::nullopt, obs);
        p.run({}, {true});
    }
    std::string hash(PgTestDb &db)
    {
        auto c = db.connect();
        return pgHash(c, "SELECT id, name, qty FROM items", "id");
    }
};

/// Streams a pipeline on its own thread until stopped.
class Streamer {
public:
    Streamer(const Workspace &ws, const std::string &pipeline, EngineObserver &obs)
        : m_thread([this, &ws, pipeline, &obs] {
              try {
                  CdcPipeline p(jobsFor(ws, pipeline), std::nullopt, obs);
                  p.run(m_stop.get_token(), {false});
              } catch (const std::exception &e) {
                  std::printf("pipeline stopped: %s\n", e.what());
              }
          })
    {
    }
    ~Streamer()
    {
        m_stop.request_stop();
        m_thread.join();
    }

private:
    std::stop_source m_stop;
    std::thread m_thread;
};
} // namespace

TEST(Reconcile, rowsTheSyncHasNotAppliedAreInFlightNotDrift)
{
    CdcFixture f;
    // The sync is stopped; 20 source changes wait in the slot.
    f.src.exec("UPDATE items SET name = name || ' v2' WHERE id % 100 = 0");
    // Without waiting for the sync they look like drift, and the report says why they might not be.
    ReconcileOptions quick = bisecting();
    auto stale = reconcile(f.ws, f.pipeline, {}, quick);
    EXPECT_EQ(stale.tables[0].different, 20);
    EXPECT_NE(stale.tables[0].note.find("is the sync running"), std::string::npos) << stale.tables[0].note;

    // Started while the reconciliation settles, the sync applies them: in flight, not drift.
    ReconcileOptions opt = bisecting();
    opt.settle = std::chrono::seconds(60);
    std::unique_ptr<Streamer> streamer;
    std::vector<std::string> phases;
    opt.onPhase = [&](const std::string &, std::string_view phase) {
        phases.emplace_back(phase);
        if (phase == "settle")
            streamer = std::make_unique<Streamer>(f.ws, f.pipeline, f.obs);
    };
    auto r = reconcile(f.ws, f.pipeline, {}, opt);
    ASSERT_TRUE(streamer) << "the reconciliation never waited for the sync";
    streamer.reset();
    ASSERT_TRUE(r.tables[0].error.empty()) << r.tables[0].error;
    EXPECT_EQ(r.tables[0].drift(), 0) << reportJsonValue(r).dump(2);
    EXPECT_EQ(r.tables[0].inFlight, 20);
    EXPECT_TRUE(r.tables[0].note.empty()) << r.tables[0].note;
    EXPECT_EQ(f.hash(f.src), f.hash(f.dst));
}

// A sync that is not applying is waited for once per reconciliation, not once per table: with a
// stopped engine, reconciling a pipeline of many CDC tables took the settle time for each (20
// tables: over ten minutes, to say what the first wait already showed).
TEST(Reconcile, aSyncThatIsNotApplyingIsWaitedForOncePerRun)
{
    PgTestDb src{"rec_cdc_src"};
    PgTestDb dst{"rec_cdc_dst"};
    RecordingObserver obs;
    const std::string pipeline = uniqueName("rec");
    src.exec("CREATE TABLE a (id int PRIMARY KEY, v int); CREATE TABLE b (id int PRIMARY KEY, v int); "
             "CREATE TABLE c (id int PRIMARY KEY, v int)");
    src.exec("INSERT INTO a VALUES (1, 1); INSERT INTO b VALUES (1, 1); INSERT INTO c VALUES (1, 1)");
    Workspace ws = workspaceFor(
        pipeline, pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()),
        {spec("public.a", Strategy::Cdc), spec("public.b", Strategy::Cdc), spec("public.c", Strategy::Cdc)});
    CdcPipeline(jobsFor(ws, pipeline), std::nullopt, obs).run({}, {true});
    // The engine is stopped; each table has a change it has not applied.
    src.exec("UPDATE a SET v = 2; UPDATE b SET v = 2; UPDATE c SET v = 2");
    ReconcileOptions opt = bisecting();
    opt.settle = std::chrono::seconds(10);
    std::vector<std::string> settled;
    opt.onPhase = [&](const std::string &table, std::string_view phase) {
        if (phase == "settle")
            settled.push_back(table);
    };
    auto r = reconcile(ws, pipeline, {}, opt);
    ASSERT_EQ(r.tables.size(), 3u);
    EXPECT_EQ(settled.size(), 3u);
    EXPECT_GE(r.tables[0].elapsedMs, 10'000) << "the first table waits the settle time";
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(r.tables[i].different, 1) << r.tables[i].table;
        EXPECT_NE(r.tables[i].note.find("is the sync running"), std::string::npos) << r.tables[i].note;
    }
    // The others do not wait again (each would take the whole 10 s if it did).
    EXPECT_LT(r.tables[1].elapsedMs, 10'000);
    EXPECT_LT(r.tables[2].elapsedMs, 10'000);
}

TEST(Reconcile, repairGoesThroughTheGuardAndLeavesALiveStreamAlone)
{
    CdcFixture f;
    // Drift in the target, on keys the source keeps changing while the stream runs.
    f.dst.exec("UPDATE items SET name = 'corrupt' WHERE id <= 50");
    f.dst.exec("DELETE FROM items WHERE id BETWEEN 51 AND 60");
    f.dst.exec("INSERT INTO items (id, name, qty, _driftless_version) VALUES (9001, 'ghost', 0, 0)");
    auto report = reconcile(f.ws, f.pipeline, {}, bisecting());
    ASSERT_EQ(report.tables[0].drift(), 61);
    std::vector<CanonicalKey> keys;
    for (const auto &d : report.tables[0].differentRows)
        keys.push_back(d.key);
    for (const auto &k : report.tables[0].missingKeys)
        keys.push_back(k);
    keys.push_back({"9001"});
    ASSERT_EQ(keys.size(), 61u);

    std::atomic<bool> writing{true};
    {
        Streamer streamer(f.ws, f.pipeline, f.obs);
        std::thread writer([&] {
            auto c = f.src.connect();
            for (int i = 0; writing; ++i) {
                c.exec("UPDATE items SET qty = qty + 1, name = 'live " + std::to_string(i) +
                       "' WHERE id = " + std::to_string(1 + i % 60));
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
        });
        for (int round = 0; round < 5; ++round) {
            auto o = repairKeys(f.ws, f.pipeline, "public.items", keys);
            EXPECT_TRUE(o.error.empty()) << o.error;
        }
        writing = false;
        writer.join();
        // Let the stream catch up with the writer's last changes.
        const auto lsn = f.src.scalar("SELECT pg_current_wal_lsn()");
        for (int i = 0; i < 300; ++i) {
            if (f.hash(f.src) == f.hash(f.dst))
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        (void)lsn;
    }
    // Nothing the stream applied was overwritten by an older repaired row: the copies are equal,
    // and the ghost row the source never had is gone.
    EXPECT_EQ(f.hash(f.src), f.hash(f.dst));
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM items WHERE id = 9001"), "0");
    EXPECT_EQ(reconcile(f.ws, f.pipeline, {}, bisecting()).tables[0].drift(), 0);
}

TEST(Reconcile, equalMillionRowsCostOneQueryPerSideAndNoRows)
{
    PgTestDb src("rec_big"), dst("rec_big_dst");
    const char *ddl = "CREATE TABLE big (id bigint PRIMARY KEY, name text, amount numeric(12,2), at timestamptz); "
                      "INSERT INTO big SELECT g, 'row ' || g, g / 100.0, timestamptz '2024-01-01' + g * interval "
                      "'1 second' FROM generate_series(1, 1000000) g; ANALYZE big";
    src.exec(ddl);
    dst.exec(ddl);
    const auto ws = workspaceFor("p", pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()),
                                 {spec("public.big", Strategy::FullRefresh)});
    auto equal = reconcile(ws, "p", {}, {});
    const auto &e = equal.tables[0];
    ASSERT_TRUE(e.error.empty()) << e.error;
    EXPECT_EQ(e.sourceRows, 1000000);
    EXPECT_EQ(e.drift(), 0);
    // The key's bounds (min and max through the primary key's index), then one hashing scan.
    EXPECT_EQ(e.sourceQueries, 2);
    EXPECT_EQ(e.targetQueries, 2);
    EXPECT_EQ(e.sourceRowsFetched + e.targetRowsFetched, 0);

    // One differing row: a few levels of segments, then only that segment's keys are fetched.
    dst.exec("UPDATE big SET name = 'drift' WHERE id = 654321");
    ReconcileOptions traced;
    const auto t0 = std::chrono::steady_clock::now();
    traced.onPhase = [&](const std::string &, std::string_view phase) {
        std::printf(
            "  %6lld ms %.*s\n",
            static_cast<long long>(
                std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count()),
            static_cast<int>(phase.size()), phase.data());
    };
    auto one = reconcile(ws, "p", {}, traced);
    const auto &t = one.tables[0];
    ASSERT_EQ(t.different, 1);
    EXPECT_EQ(keySet(t.differentRows), std::set<std::string>{"654321"});
    const double log2n = std::log2(1000000.0);
    EXPECT_LE(t.sourceQueries, 8) << "queries per side should grow with log(n), not n";
    EXPECT_LE(t.targetQueries, 8);
    EXPECT_LE(t.sourceRowsFetched + t.targetRowsFetched, 20000) << "fetched far more rows than one segment";
    // An integer key: the first scan's buckets already hold about 64 keys, so the one differing
    // bucket is fetched by its key range, without a level of sampled segments.
    EXPECT_LE(t.sourceRowsFetched, 200);
    EXPECT_LE(t.sourceQueries, 4);
    std::printf("1M rows, 1 difference: %d + %d queries, %lld + %lld rows fetched, %lld ms (log2 n = %.1f)\n",
                t.sourceQueries, t.targetQueries, t.sourceRowsFetched, t.targetRowsFetched, t.elapsedMs, log2n);
    std::printf("1M rows, equal: %lld ms\n", e.elapsedMs);
}

// A one-column integer key is bucketed by value in the first scan. Every integer type, keys at
// the type's limits and on both sides of zero, drift in the first and last buckets, a key range
// wider than 63 bits (which falls back to sampled segments), with default and tiny buckets.
TEST(Reconcile, integerKeyBucketsFindDriftAtTheEdgesOfEveryKeyType)
{
    PgTestDb src("rec_edge"), dst("rec_edge_dst");
    struct Case {
        std::string type, lo, hi;
    };
    const std::vector<Case> cases = {{"smallint", "-32768", "32767"},
                                     {"integer", "-2147483648", "2147483647"},
                                     {"bigint", "9223372036854770000", "9223372036854775807"},
                                     {"bigint", "-9223372036854775808", "9223372036854775807"}};
    std::vector<TableSpec> tables;
    for (size_t i = 0; i < cases.size(); ++i) {
        const auto &c = cases[i];
        const std::string t = "k" + std::to_string(i);
        // The limits, both sides of zero, and a dense run near each limit.
        const std::string ddl = "CREATE TABLE " + t + " (id " + c.type + " PRIMARY KEY, v text); INSERT INTO " + t +
                                " SELECT k, 'v' || k FROM (SELECT " + c.lo +
                                "::numeric + g AS k FROM generate_series(0, 300) g "
                                "UNION SELECT " +
                                c.hi +
                                "::numeric - g FROM generate_series(0, 300) g "
                                "UNION SELECT g FROM generate_series(-3, 3) g) x WHERE k BETWEEN " +
                                c.lo + " AND " + c.hi;
        src.exec(ddl);
        dst.exec(ddl);
        tables.push_back(spec("public." + t, Strategy::FullRefresh));
    }
    const auto ws = workspaceFor("p", pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()), tables);
    for (const bool tiny : {false, true}) {
        ReconcileOptions opt = tiny ? bisecting() : ReconcileOptions{};
        opt.settle = std::chrono::milliseconds(0);
        if (tiny)
            opt.bucketKeys = 3;
        auto equal = reconcile(ws, "p", {}, opt);
        for (const auto &t : equal.tables) {
            ASSERT_TRUE(t.error.empty()) << t.table << ": " << t.error;
            EXPECT_EQ(t.drift(), 0) << t.table;
            EXPECT_GT(t.sourceRows, 600) << t.table;
        }
    }
    for (size_t i = 0; i < cases.size(); ++i) {
        const auto &c = cases[i];
        const std::string t = "k" + std::to_string(i);
        // The lowest and highest keys, one near zero.
        dst.exec("DELETE FROM " + t + " WHERE id = " + c.lo);
        dst.exec("UPDATE " + t + " SET v = 'drift' WHERE id = " + c.hi);
        src.exec("DELETE FROM " + t + " WHERE id = 0");
        src.exec("UPDATE " + t + " SET v = NULL WHERE id = -1");
    }
    for (const bool tiny : {false, true}) {
        ReconcileOptions opt = tiny ? bisecting() : ReconcileOptions{};
        opt.settle = std::chrono::milliseconds(0);
        if (tiny)
            opt.bucketKeys = 3;
        auto report = reconcile(ws, "p", {}, opt);
        ASSERT_EQ(report.tables.size(), cases.size());
        for (size_t i = 0; i < cases.size(); ++i) {
            const auto &t = report.tables[i];
            const auto &c = cases[i];
            ASSERT_TRUE(t.error.empty()) << t.table << ": " << t.error;
            const bool nearZero = c.lo.front() == '-';
            EXPECT_EQ(keySet(t.missingKeys), std::set<std::string>{c.lo}) << t.table << (tiny ? " tiny" : "");
            EXPECT_EQ(keySet(t.extraKeys), nearZero ? std::set<std::string>{"0"} : std::set<std::string>{}) << t.table;
            std::set<std::string> different{c.hi};
            if (nearZero)
                different.insert("-1");
            EXPECT_EQ(keySet(t.differentRows), different) << t.table << (tiny ? " tiny" : "");
        }
    }
}

// Between two Postgres servers rows hash by each column type's own hash function where both
// sides hold the same type (no text per value), and as canonical text elsewhere: the verdicts are
// the ones the text hash gave. A case-insensitive collation still tells 'abc' from 'ABC', an int4
// column against an int8 one and numeric(10,2) against numeric(12,4) compare by value, json and
// interval (no hash of their own that matches their text) by text.
TEST(Reconcile, typedRowHashesSeeWhatTheCanonicalTextSees)
{
    PgTestDb src("rec_typed"), dst("rec_typed_dst");
    const char *coll = "CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)";
    src.exec(coll);
    dst.exec(coll);
    src.exec("CREATE TABLE t (id int PRIMARY KEY, name text COLLATE ci, qty int4, price numeric(10,2), doc json, "
             "period interval, code char(4), at timestamptz, tags text[], u uuid, b bytea, flag bool)");
    dst.exec("CREATE TABLE t (id int PRIMARY KEY, name text COLLATE ci, qty int8, price numeric(12,4), doc json, "
             "period interval, code char(4), at timestamptz, tags text[], u uuid, b bytea, flag bool)");
    const char *rows = "INSERT INTO t SELECT g, 'name ' || g, g * 3, g / 4.0, json_build_object('g', g), "
                       "g * interval '1 hour', 'c' || (g % 10), timestamptz '2024-05-06 07:08:09.123456+02' + g * "
                       "interval '1 minute', ARRAY['a' || g, NULL], md5(g::text)::uuid, decode(md5(g::text), 'hex'), "
                       "g % 2 = 0 FROM generate_series(1, 500) g";
    src.exec(rows);
    dst.exec(rows);
    const auto ws = workspaceFor("p", pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()),
                                 {spec("public.t", Strategy::FullRefresh)});
    ReconcileOptions opt;
    opt.settle = std::chrono::milliseconds(0);
    auto equal = reconcile(ws, "p", {}, opt);
    ASSERT_TRUE(equal.tables[0].error.empty()) << equal.tables[0].error;
    EXPECT_EQ(equal.tables[0].drift(), 0);
    EXPECT_EQ(equal.tables[0].sourceRows, 500);

    dst.exec("UPDATE t SET name = upper(name) WHERE id = 10");        // equal under ci, not the same text
    dst.exec("UPDATE t SET doc = '{\"g\":20}' WHERE id = 20");        // the same JSON value, other text
    dst.exec("UPDATE t SET period = interval '1 day' WHERE id = 24"); // '24:00:00' = '1 day', other text
    dst.exec("UPDATE t SET qty = qty + 1 WHERE id = 30");
    dst.exec("UPDATE t SET price = price + 0.0001 WHERE id = 40");
    dst.exec("UPDATE t SET at = at + interval '1 microsecond' WHERE id = 50");
    dst.exec("UPDATE t SET tags = ARRAY['a60'] WHERE id = 60");
    dst.exec("UPDATE t SET code = 'c0' WHERE id = 71"); // char(4): 'c1  ' against 'c0  '
    dst.exec("UPDATE t SET b = b || '\\x00'::bytea WHERE id = 80");
    dst.exec("UPDATE t SET flag = NOT flag WHERE id = 90");
    src.exec("UPDATE t SET price = 12.5 WHERE id = 100");
    dst.exec("UPDATE t SET price = 12.5000 WHERE id = 100"); // the same value at another scale: equal
    auto report = reconcile(ws, "p", {}, opt);
    const auto &t = report.tables[0];
    ASSERT_TRUE(t.error.empty()) << t.error;
    EXPECT_EQ(keySet(t.differentRows),
              (std::set<std::string>{"10", "20", "24", "30", "40", "50", "60", "71", "80", "90"}));
    EXPECT_EQ(t.missing + t.extra, 0);
}

#include "core/config/workspacefile.h"
#include "core/engine/run/stateobserver.h"
#include "core/engine/status/alerts.h"
#include "core/engine/status/statusreport.h"
#include "core/state/statestore.h"

TEST(Reconcile, scheduledRunsStoreReportsAndDriftAboveTheThresholdRaisesAnAlertAndTurnsTheBadge)
{
    PgTestDb src("rec_sched"), dst("rec_sched_dst");
    TempDir dir;
    src.exec("CREATE TABLE items (id bigint PRIMARY KEY, name text); "
             "INSERT INTO items SELECT g, 'n' || g FROM generate_series(1, 1000) g");
    const auto &s = servers();
    const std::string yaml = "endpoints:\n"
                             "  src: { kind: postgres, dsn: \"host=127.0.0.1 port=" +
                             std::to_string(s.pgPort) + " dbname=" + src.name() + " user=" + s.pgUser +
                             "\" }\n"
                             "  dst: { kind: postgres, dsn: \"host=127.0.0.1 port=" +
                             std::to_string(s.pgPort) + " dbname=" + dst.name() + " user=" + s.pgUser +
                             "\" }\n"
                             "pipelines:\n"
                             "  - name: p\n    source: src\n    target: dst\n"
                             "    reconcile: { every: 1h, alert_above: 0.5% }\n"
                             "    tables:\n      - { table: public.items, strategy: full_refresh }\n";
    Workspace ws = WorkspaceFile::parse(yaml, "ws.yaml", dir.path().string());
    ASSERT_EQ(ws.pipelines[0].reconcileEvery, Millis(3'600'000));
    ASSERT_NEAR(*ws.pipelines[0].reconcileAlertAbove, 0.005, 1e-12);
    // The YAML the CLI exports reads back the same, and the state file keeps it.
    EXPECT_EQ(WorkspaceFile::parse(WorkspaceFile::toYaml(ws), "again.yaml", dir.path().string()), ws);
    StateStore store(dir.file("state.db"));
    store.applyWorkspace(ws);
    EXPECT_EQ(store.loadWorkspace(), ws);

    ReconcileScheduler sched(store, ws);
    const auto now = StateStore::nowMs();
    EXPECT_EQ(sched.runDue(now), 0); // not before the table's first pass: nothing is synced yet
    {
        auto jobs = jobsFor(ws, "p");
        StateObserver observer(store, jobs);
        TableSync(jobs.front(), observer).runOnce({});
    }
    EXPECT_EQ(sched.runDue(now), 1); // never reconciled: due at once
    EXPECT_EQ(sched.runDue(now), 0); // not again within the hour
    auto clean = buildStatus(ws, {}, now, store.latestReconciles());
    ASSERT_TRUE(clean[0].reconcile);
    EXPECT_FALSE(clean[0].driftAlert);

    // 3 rows of 1000 (0.3%) stay under the 0.5% threshold: a report, no alert.
    dst.exec("UPDATE items SET name = 'x' WHERE id <= 3");
    EXPECT_EQ(sched.runDue(now + 3'660'000), 1);
    auto under = buildStatus(ws, {}, now, store.latestReconciles());
    EXPECT_EQ(under[0].reconcile->different, 3);
    EXPECT_FALSE(under[0].driftAlert);
    // 8 rows (0.8%) pass it: the alert opens, says what to do, and the badge turns warn.
    dst.exec("UPDATE items SET name = 'x' WHERE id <= 8");
    EXPECT_EQ(sched.runDue(now + 2 * 3'660'000), 1);
    auto over = buildStatus(ws, {}, now, store.latestReconciles());
    EXPECT_TRUE(over[0].driftAlert);
    EXPECT_EQ(over[0].freshness, Freshness::Warn);
    auto alerts = computeAlerts(ws, over, {}, {}, now);
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].kind, "drift");
    EXPECT_NE(alerts[0].action.find("driftless-cli repair " + std::to_string(over[0].reconcile->reportId)),
              std::string::npos)
        << alerts[0].action;
    auto j = tablesJsonValue(over);
    EXPECT_EQ(j[0]["reconcile"]["different"], 8);
    EXPECT_EQ(j[0]["reconcile"]["alert"], true);
    // Every run left an event.
    int reconcileEvents = 0;
    std::string seen;
    for (const auto &e : store.events(50)) {
        reconcileEvents += e.kind == "reconcile" ? 1 : 0;
        seen += e.kind + ": " + e.message + "\n";
    }
    EXPECT_EQ(reconcileEvents, 3) << seen;
    // Repaired, the next run clears it.
    auto report = loadReport(store, over[0].reconcile->reportId);
    ASSERT_TRUE(report);
    auto fixed = repairReport(ws, *report);
    recordRepair(store, *report, fixed);
    EXPECT_EQ(sched.runDue(now + 3 * 3'660'000), 1);
    auto after = buildStatus(ws, {}, now, store.latestReconciles());
    EXPECT_FALSE(after[0].driftAlert);
    EXPECT_TRUE(computeAlerts(ws, after, {}, {}, now).empty());
    // The history marks the report a repair ran from, and each one compared again since; the
    // agent API's JSON carries the marks.
    const auto history = store.reconcileSummaries();
    ASSERT_EQ(history.size(), 4u);
    EXPECT_FALSE(history[0].repaired);
    EXPECT_EQ(history[0].supersededBy, 0);
    EXPECT_EQ(history[1].reportId, report->id);
    EXPECT_TRUE(history[1].repaired);
    EXPECT_EQ(history[1].supersededBy, history[0].reportId);
    EXPECT_FALSE(history[2].repaired);
    EXPECT_EQ(history[2].supersededBy, history[1].reportId);
    const auto listed = summariesFromJson(summariesJsonValue(history));
    ASSERT_EQ(listed.size(), 4u);
    EXPECT_TRUE(listed[1].repaired);
    EXPECT_EQ(listed[2].supersededBy, history[1].reportId);
    EXPECT_EQ(summariesJsonValue(history)[0]["superseded_by"], nullptr);
}

TEST(Reconcile, generatedColumnsAreComparedOnceTheSyncCarriesThem)
{
    // CDC into SQLite stores a stored generated column's values: a wrong one is drift, and the
    // repair writes the source's. Into Postgres the target computes it: nothing to find.
    PgTestDb src("rec_gen");
    PgTestDb dst("rec_gen_dst");
    TempDir dir;
    src.exec("CREATE TABLE gen (id bigint PRIMARY KEY, qty int, twice int GENERATED ALWAYS AS (qty * 2) STORED); "
             "INSERT INTO gen (id, qty) SELECT g, g FROM generate_series(1, 2000) g");
    const std::string pipeline = uniqueName("rec");
    const auto toLite = workspaceFor(pipeline, pgEndpoint("src", src.name()), sqliteEndpoint("dst", dir.file("t.db")),
                                     {spec("public.gen", Strategy::Cdc)});
    const auto toPg = workspaceFor(pipeline + "_pg", pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()),
                                   {spec("public.gen", Strategy::Cdc)});
    RecordingObserver obs;
    CdcPipeline(jobsFor(toLite, pipeline), std::nullopt, obs).run({}, {true});
    CdcPipeline(jobsFor(toPg, pipeline + "_pg"), std::nullopt, obs).run({}, {true});
    EXPECT_EQ(reconcile(toLite, pipeline, {}, bisecting()).tables[0].drift(), 0);
    EXPECT_EQ(reconcile(toPg, pipeline + "_pg", {}, bisecting()).tables[0].drift(), 0);
    {
        SqliteDb db(dir.file("t.db"));
        db.exec("UPDATE gen SET twice = -1 WHERE id IN (5, 1234)");
    }
    auto report = reconcile(toLite, pipeline, {}, bisecting());
    ASSERT_TRUE(report.tables[0].error.empty()) << report.tables[0].error;
    EXPECT_EQ(keySet(report.tables[0].differentRows), (std::set<std::string>{"5", "1234"}));
    auto outcomes = repairReport(toLite, report);
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_TRUE(outcomes[0].error.empty()) << outcomes[0].error;
    EXPECT_EQ(reconcile(toLite, pipeline, {}, bisecting()).tables[0].drift(), 0);
    {
        SqliteDb db(dir.file("t.db"), SqliteDb::Mode::ReadOnly);
        EXPECT_EQ(db.scalarInt("SELECT twice FROM gen WHERE id = 1234"), 2468);
    }
    // A target an older version made lacks the column until the sync next starts: the other
    // columns are compared meanwhile.
    {
        SqliteDb db(dir.file("t.db"));
        db.exec("ALTER TABLE gen DROP COLUMN twice; UPDATE gen SET qty = 0 WHERE id = 9");
    }
    report = reconcile(toLite, pipeline, {}, bisecting());
    ASSERT_TRUE(report.tables[0].error.empty()) << report.tables[0].error;
    EXPECT_EQ(keySet(report.tables[0].differentRows), (std::set<std::string>{"9"}));
}
