#include "core/config/workspacefile.h"
#include "core/engine/run/workspacestate.h"
#include "core/model/error.h"
#include "core/state/migrations.h"
#include "core/state/statestore.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <map>

#include <sqlite3.h>
#include <sys/stat.h>

using namespace driftless::core;
using driftless::test::TempDir;

namespace {
Workspace sample()
{
    return WorkspaceFile::parse(R"(endpoints:
  app: { kind: postgres, dsn: "host=db1 dbname=app user=sync",
         slot_guard: { max_retained: 10GB, action: alert, min_safe_wal: 1GB, inactive_alert: 5m },
         ssh: { host: bastion, port: 2222, user: tunnel, identity_file: "~/.ssh/id_db", jump: edge } }
  lite: { kind: sqlite, path: "/data/replica.db" }
pipelines:
  - name: p1
    source: app
    target: lite
    tables:
      - { table: public.plans, strategy: full_refresh, every: 5m, deletes: soft }
      - { table: public.events, strategy: cursor, lookback: 15m, page_size: 1000,
          where: "tenant_id = 42", deletes: ignore,
          columns: { exclude: [notes], rename: { email: email_address }, mask: { phone: { keep_last: 4 } } } }
)",
                                "t.yaml", "/");
}

std::string dump(const std::string &path)
{
    // Content of every table, to compare files logically (WAL makes byte comparison moot).
    sqlite3 *db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    std::string out;
    for (const char *t : {"endpoints", "pipelines", "table_specs", "table_status", "runs", "events"}) {
        sqlite3_stmt *st = nullptr;
        sqlite3_prepare_v2(db, (std::string("SELECT * FROM ") + t).c_str(), -1, &st, nullptr);
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int i = 0; i < sqlite3_column_count(st); ++i) {
                auto *v = sqlite3_column_text(st, i);
                out += v ? reinterpret_cast<const char *>(v) : "NULL";
                out += '|';
            }
            out += '\n';
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return out;
}
} // namespace

TEST(StateStore, fileIsCreatedPrivateInWalModeAtTheCurrentSchemaVersion)
{
    TempDir dir;
    std::string path = dir.file("sub/folder/workspace.db");
    StateStore store(path);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_EQ(::stat(dir.file("sub/folder").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    SqliteDb db(path, SqliteDb::Mode::ReadOnly);
    EXPECT_EQ(db.scalarInt("PRAGMA user_version"), StateStore::kSchemaVersion);
    auto mode = db.prepare("PRAGMA journal_mode");
    ASSERT_TRUE(mode.step());
    EXPECT_EQ(mode.text(0), "wal");
}

TEST(StateStore, aFileFromTheFirstVersionIsMigratedKeepingItsStatus)
{
    TempDir dir;
    std::string path = dir.file("v1.db");
    {
        SqliteDb db(path);
        db.exec(std::string(stateMigrations()[0]));
        db.exec("PRAGMA user_version = 1");
        db.exec("INSERT INTO table_status (pipeline, source_schema, source_table, strategy, state, rows_applied, "
                "updated_at_ms) VALUES ('p1', 'public', 'orders', 'cdc', 'streaming', 42, 1)");
    }
    StateStore store(path);
    auto s = store.tableStatus("p1", {"public", "orders"});
    ASSERT_TRUE(s);
    EXPECT_EQ(s->state, TableState::Streaming);
    EXPECT_EQ(s->rowsApplied, 42);
    EXPECT_FALSE(s->backfillRows);
    s->backfillRows = 10;
    s->backfillTotal = 40;
    s->backfillEtaSeconds = 7.5;
    store.upsertTableStatus(*s);
    auto again = store.tableStatus("p1", {"public", "orders"});
    EXPECT_EQ(again->backfillRows, 10);
    EXPECT_EQ(again->backfillTotal, 40);
    EXPECT_EQ(again->backfillEtaSeconds, 7.5);
    SqliteDb db(path, SqliteDb::Mode::ReadOnly);
    EXPECT_EQ(db.scalarInt("PRAGMA user_version"), StateStore::kSchemaVersion);
}

TEST(StateStore, refusesAFileFromANewerVersion)
{
    TempDir dir;
    std::string path = dir.file("ws.db");
    {
        StateStore store(path);
    }
    {
        SqliteDb db(path);
        db.exec("PRAGMA user_version = 99");
    }
    try {
        StateStore again(path);
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
    }
}

TEST(StateStore, workspaceRoundTripsAndApplyingTwiceChangesNothing)
{
    TempDir dir;
    std::string path = dir.file("ws.db");
    StateStore store(path);
    auto first = store.applyWorkspace(sample());
    EXPECT_TRUE(first.changed);
    EXPECT_EQ(store.loadWorkspace(), sample());
    std::string before = dump(path);
    auto second = store.applyWorkspace(sample());
    EXPECT_FALSE(second.changed);
    EXPECT_EQ(dump(path), before);

    Workspace changed = sample();
    changed.pipelines[0].tables[1].pageSize = 2000;
    auto third = store.applyWorkspace(changed);
    ASSERT_TRUE(third.changed);
    ASSERT_EQ(third.lines.size(), 1u);
    EXPECT_EQ(third.lines[0], "~ table p1/public.events");
}

TEST(StateStore, tablesThePatternsPickedUpJoinTheWorkspaceButNotItsFile)
{
    TempDir dir;
    StateStore store(dir.file("ws.db"));
    Workspace ws = sample();
    auto &p = ws.pipelines[0];
    p.includeTables = {"public.*"};
    p.excludeTables = {"public.tmp_*"};
    p.tableDefaults = PipelineSpec::TableDefaults{std::nullopt, {}};
    p.tableDefaults->keys.freshnessSla = Millis(120'000);
    ASSERT_TRUE(store.applyWorkspace(ws).changed);
    EXPECT_EQ(store.loadWorkspace(), ws) << "options round-trip";

    EXPECT_TRUE(store.addDiscoveredTable({"p1", {"public", "invoices"}, Strategy::Cursor, "paid_at", "", 0}));
    EXPECT_FALSE(store.addDiscoveredTable({"p1", {"public", "invoices"}, Strategy::Cdc, {}, "", 0})) << "once";
    EXPECT_TRUE(store.addDiscoveredTable({"p1", {"public", "log"}, Strategy::Cdc, {}, "no key; list it", 0}));
    EXPECT_TRUE(store.addDiscoveredTable({"p1", {"public", "plans"}, Strategy::Cdc, {}, "", 0}));
    Workspace loaded = store.loadWorkspace();
    const auto &tables = loaded.pipelines[0].tables;
    ASSERT_EQ(tables.size(), 3u) << "the listed two, invoices; not the refused log, and plans stays as listed";
    EXPECT_FALSE(tables[0].discovered);
    EXPECT_EQ(tables[0].strategy, Strategy::FullRefresh) << "a listed table wins over a pattern";
    EXPECT_EQ(tables[2].table.display(), "public.invoices");
    EXPECT_TRUE(tables[2].discovered);
    EXPECT_EQ(tables[2].strategy, Strategy::Cursor);
    EXPECT_EQ(tables[2].cursor, "paid_at");
    EXPECT_EQ(tables[2].freshnessSla, Millis(120'000)) << "table_defaults";

    // The file's form (no picked-up tables) applied again changes nothing, and they stay.
    EXPECT_FALSE(store.applyWorkspace(ws).changed);
    EXPECT_EQ(store.loadWorkspace(), loaded);
    // The slot guard moving it to another strategy is kept.
    Workspace moved = loaded;
    moved.pipelines[0].tables[2].strategy = Strategy::Cursor;
    moved.pipelines[0].tables[2].cursor = "updated_at";
    moved.pipelines[0].tables[2].fallbackFrom = Strategy::Cdc;
    EXPECT_TRUE(store.applyWorkspace(moved).changed);
    EXPECT_EQ(store.loadWorkspace(), moved);
    // A pattern that no longer picks it up leaves it out.
    ws.pipelines[0].excludeTables.push_back("public.inv*");
    store.applyWorkspace(ws);
    EXPECT_EQ(store.loadWorkspace().pipelines[0].tables.size(), 2u);
    EXPECT_EQ(store.discoveredTables("p1").size(), 3u) << "what was found stays recorded";
}

TEST(StateStore, statusMirrorKeepsCheckpointsAndStates)
{
    TempDir dir;
    StateStore store(dir.file("ws.db"));
    StateStore::TableStatus s;
    s.pipeline = "p1";
    s.table = {"public", "events"};
    s.strategy = Strategy::Cursor;
    s.state = TableState::Ok;
    s.checkpoint = R"({"cursor":"2026-01-01 00:00:00+00"})";
    s.version = 1234;
    s.rowsApplied = 42;
    s.freshAsOfMs = 1000;
    store.upsertTableStatus(s);
    store.setTableState("p1", {"public", "events"}, Strategy::Cursor, TableState::Error, "boom");
    auto got = store.tableStatus("p1", {"public", "events"});
    ASSERT_TRUE(got);
    EXPECT_EQ(got->state, TableState::Error);
    EXPECT_EQ(got->message, "boom");
    EXPECT_EQ(got->checkpoint, s.checkpoint) << "a state change keeps the checkpoint";
    EXPECT_EQ(got->rowsApplied, 42);
    EXPECT_EQ(got->freshAsOfMs, 1000);
}

TEST(StateStore, lagSamplesAreThinnedAndExpired)
{
    TempDir dir;
    StateStore store(dir.file("ws.db"));
    const std::int64_t now = 10'000'000'000;
    for (int i = 0; i < 600; ++i) // every 10 s for 100 minutes
        store.addLagSample({"p", "t", now - i * 10'000, static_cast<double>(i), 0});
    store.addLagSample({"p", "t", now - 8LL * 86'400'000, 1.0, 0});
    store.pruneLagSamples(now, 7LL * 86'400'000);
    auto samples = store.lagSamples("p", "t", 0);
    // The last hour stays at full resolution (360 samples), the 40 minutes before it thin to
    // one a minute, and the 8-day-old one expires.
    EXPECT_GE(samples.size(), 360u + 39u);
    EXPECT_LE(samples.size(), 360u + 42u);
    EXPECT_GT(samples.front().tsMs, now - 8LL * 86'400'000);
}

TEST(StateStore, slotSamplesKeepTheHighestRetainedWalOfEachMinute)
{
    TempDir dir;
    StateStore store(dir.file("ws.db"));
    const std::int64_t now = 10'000'000'000;
    std::vector<StateStore::SlotSample> samples;
    for (int i = 0; i < 720; ++i) // every 5 s for an hour, then an hour more
        samples.push_back({"app", "driftless_p", now - 3'600'000 - i * 5'000, 1000 + i, i, std::nullopt});
    samples.push_back({"app", "driftless_p", now - 1000, 5, 0, -42});
    store.addSlotSamples(samples);
    store.pruneSlotSamples(now, 7LL * 86'400'000);
    auto kept = store.slotSamples("app", "driftless_p", 0);
    std::map<std::int64_t, std::int64_t> maxPerMinute;
    for (const auto &x : samples)
        if (x.tsMs < now - 3'600'000)
            maxPerMinute[x.tsMs / 60000] = std::max(maxPerMinute[x.tsMs / 60000], *x.retainedBytes);
    // Past an hour: one a minute; within the hour (the sample exactly an hour old, and the
    // recent one) all stay.
    EXPECT_EQ(kept.size(), maxPerMinute.size() + 2) << "older than an hour: one a minute";
    ASSERT_FALSE(kept.empty());
    EXPECT_EQ(kept.back().retainedBytes, 5);
    EXPECT_EQ(kept.back().safeWalSize, -42);
    EXPECT_FALSE(kept.front().safeWalSize);
    // Each minute kept its highest retained WAL.
    for (size_t i = 0; i < kept.size(); ++i)
        if (kept[i].tsMs < now - 3'600'000) {
            EXPECT_EQ(*kept[i].retainedBytes, maxPerMinute[kept[i].tsMs / 60000]) << "sample " << i;
        }
}

TEST(StateStore, eventsAreKeptNewestFirst)
{
    TempDir dir;
    StateStore store(dir.file("ws.db"));
    store.addEvent(Level::Info, "p", "t", "a", "first");
    store.addEvent(Level::Error, "p", "t", "b", "second");
    auto ev = store.events(10);
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[0].message, "second");
    EXPECT_EQ(ev[1].kind, "a");
}

TEST(WorkspaceState, refusesAMissingWorkspaceWithoutCreatingItAndReadsWhatIsStored)
{
    TempDir dir;
    const std::string path = dir.file("typo.db");
    try {
        WorkspaceState state(path);
        FAIL() << "a missing workspace was opened";
    } catch (const ConfigError &e) {
        EXPECT_NE(std::string(e.what()).find("there is no workspace at " + path), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("apply FILE"), std::string::npos) << e.what();
    }
    struct stat st {};
    EXPECT_NE(::stat(path.c_str(), &st), 0) << "the refused path was created";

    auto created = WorkspaceState::create(path);
    EXPECT_TRUE(created.apply(sample()).changed);
    EXPECT_FALSE(created.apply(sample()).changed);
    created.note("engine_started", "engine started for 2 tables");

    // A second door on the same file sees what the first stored.
    WorkspaceState state(path);
    EXPECT_EQ(state.path(), path);
    const auto snap = state.snapshot(1'000'000, 10);
    EXPECT_EQ(snap.workspace, sample());
    ASSERT_EQ(snap.tables.size(), 2u);
    EXPECT_EQ(snap.tables[0].table, "public.plans");
    EXPECT_EQ(snap.tables[0].state, TableState::Idle);
    EXPECT_EQ(snap.tables[1].strategy, Strategy::Cursor);
    ASSERT_FALSE(snap.events.empty());
    EXPECT_EQ(snap.events.front().kind, "engine_started");
    EXPECT_EQ(snap.events.front().level, Level::Info);

    const auto changes = state.setPaused(snap.workspace, "p1", {"public.events"}, true);
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_TRUE(changes[0].changed);
    const auto after = state.snapshot(1'000'000, 10);
    EXPECT_FALSE(after.tables[0].paused);
    EXPECT_TRUE(after.tables[1].paused);
    EXPECT_EQ(after.tables[1].state, TableState::Paused);
    EXPECT_THROW(state.setPaused(snap.workspace, "p1", {"public.nope"}, true), ConfigError);
    EXPECT_TRUE(state.reconcileSummaries(10).empty());
    EXPECT_FALSE(state.loadReport(1));
}

// The conflict queue: both directions of a two-way pipeline report the same conflict, which is
// queued once; a resolved one is no longer open and a new conflict of the row opens a new entry.
TEST(StateStore, aConflictIsQueuedOnceUntilResolved)
{
    TempDir dir;
    StateStore store((dir.path() / "ws.db").string());
    ConflictRecord c{"east_west",        "public.customers", R"({"id":"7"})",     R"(["email"])",
                     R"({"email":"a"})", R"({"email":"b"})", R"({"email":"old"})"};
    const auto id = store.addConflict(c);
    c.target = R"({"email":"b2"})";
    EXPECT_EQ(store.addConflict(c), id) << "the other direction's view of the same conflict";
    auto open = store.conflicts();
    ASSERT_EQ(open.size(), 1u);
    EXPECT_EQ(open[0].record.target, R"({"email":"b2"})");
    EXPECT_EQ(open[0].status, "open");
    EXPECT_TRUE(store.conflicts("other").empty());

    store.markConflictResolved(id, "target");
    EXPECT_TRUE(store.conflicts().empty());
    ASSERT_EQ(store.conflicts({}, true).size(), 1u);
    EXPECT_EQ(store.conflict(id)->resolution, "target");
    EXPECT_NE(store.addConflict(c), id) << "a new conflict of the row after the resolution";
}
