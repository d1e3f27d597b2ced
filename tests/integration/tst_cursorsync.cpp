// Cursor sync: keyset pages on (cursor, key), a lookback window behind the cursor, dedupe by key,
// and the source's clock. Each test names the way `updated_at` lies that it guards against.

#include "core/db/sqlitedb.h"
#include "core/engine/endpoints/connectionpool.h"
#include "core/readers/pgcursorreader.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {
const char *kEvents = R"sql(
CREATE TABLE events (
    id bigint PRIMARY KEY,
    kind text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON events (updated_at);
)sql";

TableSpec cursorSpec(long long pageSize = 1000, const char *lookback = "10m")
{
    TableSpec s;
    s.table = {"public", "events"};
    s.strategy = Strategy::Cursor;
    s.cursor = "updated_at";
    s.lookback = lookback;
    s.pageSize = pageSize;
    return s;
}

struct Fixture {
    PgTestDb src{"cur_src"};
    PgTestDb dst{"cur_dst"};
    RecordingObserver obs;
    Fixture() { src.exec(kEvents); }
    TableSync sync(const TableSpec &spec)
    {
        return TableSync(makeJob("p", spec, pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name())), obs);
    }
    /// The same table into a SQLite file.
    TableJob liteJob(const std::string &pipeline, const TableSpec &spec, const std::string &file)
    {
        return makeJob(pipeline, spec, pgEndpoint("src", src.name()), sqliteEndpoint("l", file));
    }
    std::string srcHash()
    {
        auto c = src.connect();
        return pgHash(c, "SELECT id, kind, updated_at FROM events", "id");
    }
    std::string dstHash()
    {
        auto c = dst.connect();
        return pgHash(c, "SELECT id, kind, updated_at FROM events", "id");
    }
    CursorState state()
    {
        auto c = dst.connect();
        auto r = c.exec("SELECT position FROM _driftless.checkpoints WHERE source_table = 'public.events'");
        return CursorState::fromJson(r.text(0, 0));
    }
};
} // namespace

TEST(CursorSync, initialLoadCopiesEverythingThenPassesPickUpChanges)
{
    Fixture f;
    f.src.exec("INSERT INTO events SELECT g, 'k' || g, now() - interval '1 day' + g * interval '1 second' FROM "
               "generate_series(1, 12345) g");
    auto sync = f.sync(cursorSpec(1000));
    auto first = sync.runOnce({});
    EXPECT_EQ(f.dstHash(), f.srcHash());
    long long direct = 0;
    for (auto &a : f.obs.applied)
        direct += a.result.direct ? a.result.rowsInBatch : 0;
    EXPECT_EQ(direct, 12345) << "the initial load copies straight in, in key chunks";
    EXPECT_EQ(f.state().phase, CursorState::Phase::Incremental);
    (void)first;

    f.src.exec("UPDATE events SET kind = 'changed', updated_at = now() WHERE id % 100 = 0; "
               "INSERT INTO events SELECT g, 'new', now() FROM generate_series(20000, 20099) g");
    auto second = sync.runOnce({});
    EXPECT_EQ(f.dstHash(), f.srcHash());
    EXPECT_EQ(second.rowsRead, 223) << "123 updated + 100 new rows; nothing older than the lookback is re-read";
}

TEST(CursorSync, longTransactionCommittingBehindTheCursorIsCaughtByTheLookback)
{
    Fixture f;
    f.src.exec("INSERT INTO events SELECT g, 'k', now() - interval '1 hour' FROM generate_series(1, 100) g");
    auto sync = f.sync(cursorSpec());
    sync.runOnce({});

    // A transaction stamps a row five minutes in the past and stays open...
    auto late = f.src.connect();
    late.exec("BEGIN; UPDATE events SET kind = 'late', updated_at = now() - interval '5 minutes' WHERE id = 7");
    // ...while other writes commit and a pass moves the cursor past it.
    f.src.exec("INSERT INTO events VALUES (500, 'fresh', now())");
    sync.runOnce({});
    auto cursorAfterPass = f.state().cursor;
    ASSERT_TRUE(cursorAfterPass);
    EXPECT_EQ(f.dst.scalar("SELECT kind FROM events WHERE id = 7"), "k");
    late.exec("COMMIT");
    auto stamped = f.src.scalar("SELECT updated_at < '" + *cursorAfterPass + "'::timestamptz FROM events WHERE id = 7");
    EXPECT_EQ(stamped, "t") << "the late row is dated behind the cursor";

    sync.runOnce({});
    EXPECT_EQ(f.dst.scalar("SELECT kind FROM events WHERE id = 7"), "late");
    EXPECT_EQ(f.dstHash(), f.srcHash());
}

TEST(CursorSync, withoutALookbackTheSameLateCommitIsMissed)
{
    // The control for the test above: proves it would fail without the window.
    Fixture f;
    f.src.exec("INSERT INTO events SELECT g, 'k', now() - interval '1 hour' FROM generate_series(1, 100) g");
    auto sync = f.sync(cursorSpec(1000, "0s"));
    sync.runOnce({});
    auto late = f.src.connect();
    late.exec("BEGIN; UPDATE events SET kind = 'late', updated_at = now() - interval '5 minutes' WHERE id = 7");
    f.src.exec("INSERT INTO events VALUES (500, 'fresh', now())");
    sync.runOnce({});
    late.exec("COMMIT");
    sync.runOnce({});
    EXPECT_EQ(f.dst.scalar("SELECT kind FROM events WHERE id = 7"), "k");
}

TEST(CursorSync, rowsSharingOneTimestampAcrossPageBoundariesArriveExactlyOnce)
{
    Fixture f;
    auto sync = f.sync(cursorSpec(1000));
    sync.runOnce({}); // empty table: the load finds nothing and the cursor starts at the source's now
    // Truncated precision: 20,000 rows with one updated_at, 20 pages of 1,000.
    f.src.exec("INSERT INTO events SELECT g, 'same', date_trunc('second', now()) FROM generate_series(1, 20000) g");
    f.obs.applied.clear();
    auto out = sync.runOnce({});
    EXPECT_EQ(out.rowsRead, 20000) << "each row read once within the pass";
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM events"), "20000");
    EXPECT_EQ(f.dst.scalar("SELECT count(DISTINCT id) FROM events"), "20000");
    int pages = 0;
    for (auto &a : f.obs.applied)
        pages += a.result.rowsInBatch > 0 ? 1 : 0;
    EXPECT_EQ(pages, 20);
    EXPECT_EQ(f.dstHash(), f.srcHash());
}

TEST(CursorSync, aRowUpdatedTwiceBetweenPassesEndsInItsLastState)
{
    Fixture f;
    f.src.exec("INSERT INTO events VALUES (1, 'v1', now())");
    auto sync = f.sync(cursorSpec());
    sync.runOnce({});
    f.src.exec("UPDATE events SET kind = 'v2', updated_at = now() WHERE id = 1");
    f.src.exec("UPDATE events SET kind = 'v3', updated_at = now() WHERE id = 1");
    sync.runOnce({});
    EXPECT_EQ(f.dst.scalar("SELECT kind FROM events WHERE id = 1"), "v3");
}

TEST(CursorSync, theCursorFollowsTheSourceClockNotRowsDatedInTheFuture)
{
    Fixture f;
    // Clock skew: an app server stamps a row a day ahead.
    f.src.exec("INSERT INTO events VALUES (1, 'future', now() + interval '1 day')");
    auto sync = f.sync(cursorSpec());
    sync.runOnce({});
    auto cursor = f.state().cursor;
    ASSERT_TRUE(cursor);
    EXPECT_EQ(f.src.scalar("SELECT '" + *cursor + "'::timestamptz <= now()"), "t")
        << "the cursor must not jump to the future row's date";
    // A row written now, by an honest clock, still arrives.
    f.src.exec("INSERT INTO events VALUES (2, 'now', now())");
    sync.runOnce({});
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM events"), "2");
}

TEST(CursorSync, aStoppedPassResumesAtItsNextPage)
{
    Fixture f;
    auto sync = f.sync(cursorSpec(500));
    sync.runOnce({});
    f.src.exec("INSERT INTO events SELECT g, 'x', now() FROM generate_series(1, 5000) g");
    std::stop_source stop;
    f.obs.applied.clear();
    f.obs.onBatch = [&](size_t n) {
        if (n == 3)
            stop.request_stop();
    };
    auto first = sync.runOnce(stop.get_token());
    f.obs.onBatch = nullptr;
    EXPECT_LT(first.rowsRead, 5000);
    EXPECT_TRUE(f.state().inPass) << "the checkpoint remembers the pass in progress";
    auto second = sync.runOnce({});
    EXPECT_EQ(first.rowsRead + second.rowsRead, 5000) << "the resumed pass starts at the next page, not from zero";
    EXPECT_FALSE(f.state().inPass);
    EXPECT_EQ(f.dstHash(), f.srcHash());
}

TEST(CursorSync, intoSqlite)
{
    Fixture f;
    TempDir dir;
    f.src.exec("INSERT INTO events SELECT g, 'k' || g, now() - interval '2 hours' FROM generate_series(1, 3000) g");
    TableSync sync(f.liteJob("p", cursorSpec(700), dir.file("r.db")), f.obs);
    sync.runOnce({});
    f.src.exec("UPDATE events SET kind = 'upd', updated_at = now() WHERE id <= 10; INSERT INTO events VALUES (9000, "
               "'n', now())");
    sync.runOnce({});
    SqliteDb db(dir.file("r.db"));
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM events"), 3001);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM events WHERE kind = 'upd'"), 10);
}

TEST(CursorSync, numericCursorUsesACountLookback)
{
    PgTestDb src("cur_src"), dst("cur_dst");
    src.exec("CREATE TABLE ledger (id int PRIMARY KEY, seq bigint NOT NULL, note text); "
             "INSERT INTO ledger SELECT g, g, 'n' FROM generate_series(1, 100) g");
    TableSpec spec;
    spec.table = {"public", "ledger"};
    spec.strategy = Strategy::Cursor;
    spec.cursor = "seq";
    spec.lookback = "5";
    RecordingObserver obs;
    TableSync sync(makeJob("p", spec, pgEndpoint("s", src.name()), pgEndpoint("d", dst.name())), obs);
    sync.runOnce({});
    src.exec("UPDATE ledger SET note = 'late', seq = 98 WHERE id = 3; INSERT INTO ledger VALUES (101, 101, 'new')");
    auto out = sync.runOnce({});
    EXPECT_EQ(dst.scalar("SELECT note FROM ledger WHERE id = 3"), "late");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM ledger"), "101");
    EXPECT_LE(out.rowsRead, 8);
}

TEST(CursorSync, rowsReReadInTheLookbackAreNotRewritten)
{
    Fixture f;
    auto sync = f.sync(cursorSpec());
    sync.runOnce({});
    f.src.exec("INSERT INTO events SELECT g, 'recent', now() FROM generate_series(1, 300) g");
    auto first = sync.runOnce({});
    EXPECT_EQ(first.rowsWritten, 300);
    const std::string xmin = f.dst.scalar("SELECT string_agg(xmin::text, ',' ORDER BY id) FROM events");
    auto again = sync.runOnce({});
    EXPECT_EQ(again.rowsRead, 300) << "the lookback window re-reads the recent rows";
    EXPECT_EQ(again.rowsWritten, 0) << "but writes none of them again";
    EXPECT_EQ(f.dst.scalar("SELECT string_agg(xmin::text, ',' ORDER BY id) FROM events"), xmin)
        << "no row version was created";
    // A real change in the window is still written.
    f.src.exec("UPDATE events SET kind = 'edited', updated_at = now() WHERE id = 17");
    EXPECT_EQ(sync.runOnce({}).rowsWritten, 1);
    EXPECT_EQ(f.dst.scalar("SELECT kind FROM events WHERE id = 17"), "edited");
}

TEST(CursorSync, steadyPassesRunNoDdlOnTheTargetAndRecreateWhatADbaDropped)
{
    // Every pass prepares the target. Once the tables exist that must cost no DDL: an ALTER
    // TABLE ... IF NOT EXISTS still takes an ACCESS EXCLUSIVE lock (on the shared checkpoint
    // table it queued every other pass behind it) and fills a log_statement=ddl log.
    Fixture f;
    f.src.exec("INSERT INTO events SELECT g, 'k', now() - interval '1 hour' FROM generate_series(1, 50) g");
    auto sync = f.sync(cursorSpec());
    sync.runOnce({});
    sync.runOnce({});
    f.dst.exec(R"sql(
CREATE TABLE public.ddl_log (tag text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE FUNCTION public.log_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO public.ddl_log (tag) VALUES (tg_tag); END $$;
CREATE EVENT TRIGGER log_ddl ON ddl_command_start EXECUTE FUNCTION public.log_ddl();
)sql");
    f.src.exec("UPDATE events SET kind = 'edited', updated_at = now() WHERE id <= 5");
    for (int i = 0; i < 3; ++i)
        sync.runOnce({});
    EXPECT_EQ(f.dstHash(), f.srcHash());
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM public.ddl_log"), "0")
        << f.dst.scalar("SELECT string_agg(tag, ', ') FROM public.ddl_log");

    // A DBA drops the staging table, then the target: the next passes create them again.
    auto dst = f.dst.connect();
    dst.exec("DROP TABLE " + f.dst.scalar("SELECT '_driftless.' || quote_ident(relname) FROM pg_class WHERE "
                                          "relname LIKE 'stg\\_%' AND relnamespace = '_driftless'::regnamespace"));
    f.src.exec("UPDATE events SET kind = 'again', updated_at = now() WHERE id = 7");
    sync.runOnce({});
    EXPECT_EQ(f.dstHash(), f.srcHash());
    EXPECT_NE(f.dst.scalar("SELECT count(*) FROM public.ddl_log WHERE tag = 'CREATE TABLE'"), "0");
    dst.exec("DROP TABLE public.events");
    dst.exec("DELETE FROM _driftless.checkpoints");
    sync.runOnce({});
    EXPECT_EQ(f.dstHash(), f.srcHash()) << "the target was created and loaded again";
}

TEST(CursorSync, passesReuseTheirConnectionsAndNeverOneTheServerEnded)
{
    // A pool per scheduler run: one source and one target session serve every pass, instead of
    // two logins (and two backend processes) per pass; a session the server ended is not reused.
    Fixture f;
    f.src.exec("INSERT INTO events SELECT g, 'k' || g, now() - interval '1 hour' + g * interval '1 second' FROM "
               "generate_series(1, 1000) g");
    const std::string pipeline = uniqueName("pool");
    const std::string app = "driftless " + pipeline;
    TableSpec spec = cursorSpec(100);
    const TableJob job = makeJob(pipeline, spec, pgEndpoint("src", f.src.name()), pgEndpoint("dst", f.dst.name()));
    PgConnection admin(pgDsn("postgres"));
    auto sessions = [&] {
        std::set<std::string> pids;
        auto r = admin.execParams("SELECT pid FROM pg_stat_activity WHERE application_name = $1", {app});
        for (int i = 0; i < r.rows(); ++i)
            pids.insert(r.text(i, 0));
        return pids;
    };
    ConnectionPool pool;
    std::set<std::string> seen;
    for (int pass = 0; pass < 5; ++pass) {
        f.src.exec("UPDATE events SET kind = 'pass " + std::to_string(pass) +
                   "', updated_at = now() WHERE id % 10 = " + std::to_string(pass));
        TableSync(job, f.obs, &pool).runOnce({});
        EXPECT_EQ(f.dstHash(), f.srcHash()) << "pass " << pass;
        const auto now = sessions();
        EXPECT_EQ(now.size(), 2u) << "one idle source and one idle target session between passes";
        seen.insert(now.begin(), now.end());
    }
    EXPECT_EQ(seen.size(), 2u) << "the same two sessions served every pass";
    EXPECT_EQ(pool.reused(), 8);
    EXPECT_EQ(pool.idleCount(), 2u);

    // The server ends both idle sessions (a restart, pg_terminate_backend, idle_session_timeout):
    // the next pass notices without an error and logs in again.
    admin.execParams("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", {app});
    for (int i = 0; i < 100 && !sessions().empty(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(sessions().empty());
    f.src.exec("UPDATE events SET kind = 'after', updated_at = now() WHERE id <= 10");
    EXPECT_NO_THROW(TableSync(job, f.obs, &pool).runOnce({}));
    EXPECT_EQ(f.dstHash(), f.srcHash());
    EXPECT_EQ(pool.reused(), 8) << "neither ended session was handed out again";
    const auto after = sessions();
    EXPECT_EQ(after.size(), 2u);
    for (const auto &pid : after)
        EXPECT_EQ(seen.count(pid), 0u);

    // A full refresh of the same table through the same pool.
    TableSpec full;
    full.table = {"public", "events"};
    full.targetTable = "events_copy";
    const TableJob copy = makeJob(pipeline, full, pgEndpoint("src", f.src.name()), pgEndpoint("dst", f.dst.name()));
    EXPECT_EQ(TableSync(copy, f.obs, &pool).runOnce({}).rowsWritten, 1000);
    EXPECT_EQ(pool.reused(), 10);
    EXPECT_EQ(f.dst.scalar("SELECT count(*) FROM events_copy"), "1000");
}

TEST(CursorSync, idleConnectionsArePooledOnlyForALimitedTime)
{
    Fixture f;
    f.src.exec("INSERT INTO events SELECT g, 'k' || g, now() FROM generate_series(1, 10) g");
    const std::string pipeline = uniqueName("pool");
    const TableJob job =
        makeJob(pipeline, cursorSpec(), pgEndpoint("src", f.src.name()), pgEndpoint("dst", f.dst.name()));
    ConnectionPool pool(std::chrono::milliseconds(200), 4);
    TableSync(job, f.obs, &pool).runOnce({});
    EXPECT_EQ(pool.idleCount(), 2u);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    pool.closeExpired();
    EXPECT_EQ(pool.idleCount(), 0u);
    PgConnection admin(pgDsn("postgres"));
    const std::string app = "driftless " + pipeline;
    std::string left = "?";
    for (int i = 0; i < 100 && left != "0"; ++i) {
        left = admin.execParams("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", {app}).text(0, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(left, "0") << "expired sessions are closed on the server too";
}

TEST(CursorSync, steadyPassesIntoSqliteChangeNoSchemaAndRecreateWhatWasDropped)
{
    // Once the tables exist a pass only reads the file's schema to prepare (no write lock, no
    // DDL); a bookkeeping table or column someone dropped is created again by the next pass.
    Fixture f;
    TempDir dir;
    f.src.exec("INSERT INTO events SELECT g, 'k' || g, now() - interval '2 hours' FROM generate_series(1, 300) g");
    TableSync sync(f.liteJob("p", cursorSpec(700), dir.file("r.db")), f.obs);
    sync.runOnce({});
    SqliteDb other(dir.file("r.db"));
    const long long schema = other.scalarInt("PRAGMA schema_version");
    for (int i = 0; i < 3; ++i) {
        f.src.exec("UPDATE events SET kind = 'pass" + std::to_string(i) + "', updated_at = now() WHERE id = 5");
        sync.runOnce({});
    }
    EXPECT_EQ(other.scalarInt("SELECT count(*) FROM events WHERE kind = 'pass2'"), 1);
    EXPECT_EQ(other.scalarInt("PRAGMA schema_version"), schema) << "a steady pass changed the schema";

    other.exec("DROP TABLE \"_driftless_seen_events\"");
    f.src.exec("UPDATE events SET kind = 'upd', updated_at = now() WHERE id <= 10");
    sync.runOnce({});
    EXPECT_EQ(other.scalarInt("SELECT count(*) FROM events WHERE kind = 'upd'"), 10);
    EXPECT_EQ(other.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = '_driftless_seen_events'"), 1);

    // The source gains a column: the next pass adds it to the target before writing.
    f.src.exec(
        "ALTER TABLE events ADD COLUMN note text; UPDATE events SET note = 'n', updated_at = now() WHERE id = 3");
    sync.runOnce({});
    EXPECT_EQ(other.scalarInt("SELECT count(*) FROM events WHERE note = 'n'"), 1);
}

TEST(CursorSync, passesIntoSqliteReuseTheOpenFile)
{
    // An open SQLite handle has parsed the file's schema; passes through a pool share it.
    Fixture f;
    TempDir dir;
    f.src.exec("INSERT INTO events SELECT g, 'k' || g, now() - interval '2 hours' FROM generate_series(1, 3000) g");
    const TableJob job = f.liteJob(uniqueName("lite"), cursorSpec(700), dir.file("r.db"));
    ConnectionPool pool;
    TableSync(job, f.obs, &pool).runOnce({});
    EXPECT_EQ(pool.idleCount(), 2u); // the source session and the SQLite handle
    f.src.exec("UPDATE events SET kind = 'upd', updated_at = now() WHERE id <= 10; INSERT INTO events VALUES (9000, "
               "'n', now())");
    TableSync(job, f.obs, &pool).runOnce({});
    EXPECT_EQ(pool.reused(), 2);
    // Another process reading the file sees every change: nothing is held open in a transaction.
    SqliteDb db(dir.file("r.db"));
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM events"), 3001);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM events WHERE kind = 'upd'"), 10);
}

TEST(CursorSync, aGeneratedColumnStaysGeneratedInAPostgresTargetAndFollowsItsColumns)
{
    Fixture f;
    f.src.exec("ALTER TABLE events ADD COLUMN qty int, "
               "ADD COLUMN twice int GENERATED ALWAYS AS (qty * 2) STORED");
    f.src.exec("INSERT INTO events (id, kind, qty, updated_at) SELECT g, 'k', g, now() - interval '1 hour' "
               "FROM generate_series(1, 3000) g");
    TempDir dir;
    auto sync = f.sync(cursorSpec(700));
    TableSync lite(f.liteJob("l", cursorSpec(700), dir.file("r.db")), f.obs);
    const std::string values = "SELECT count(*) || ' ' || sum(twice) || ' ' || sum(id * twice) FROM events";
    for (int pass = 0; pass < 2; ++pass) {
        sync.runOnce({});
        lite.runOnce({});
        EXPECT_EQ(f.dst.scalar(values), f.src.scalar(values)) << "pass " << pass;
        SqliteDb db(dir.file("r.db"), SqliteDb::Mode::ReadOnly);
        auto st = db.prepare(values);
        ASSERT_TRUE(st.step());
        EXPECT_EQ(st.text(0), f.src.scalar(values)) << "pass " << pass;
        f.src.exec("UPDATE events SET qty = -qty, updated_at = now() WHERE id % 10 = 0");
    }
    EXPECT_EQ(f.dst.scalar("SELECT attgenerated FROM pg_attribute WHERE attrelid = 'events'::regclass AND "
                           "attname = 'twice'"),
              "s");
}
