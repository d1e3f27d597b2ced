// Soft deletes (`deletes: soft` on a table): a delete that wins the version guard, or a row
// leaving the row filter, marks the target row in `_driftless_deleted_at` instead of removing it;
// a later insert or update of the key clears the mark and writes the values. The guard and
// replays hold as for hard deletes. Every target (Postgres, SQLite, MariaDB), both sources, CDC
// and full refresh; reconciliation counts marked rows as absent. Target contents are compared
// with an independent query on each side, never with the engine's own hashing.

#include "core/config/workspacefile.h"
#include "core/db/pgcatalog.h"
#include "core/db/sqlitedb.h"
#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/pg/cdcpipeline.h"
#include "core/mergers/mysqlmerger.h"
#include "core/mergers/pgmerger.h"
#include "core/mergers/sqlitemerger.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace driftless::core;
using namespace driftless::test;

namespace {

const char *kItems = R"sql(
CREATE TABLE items (
    id bigint PRIMARY KEY,
    name text NOT NULL,
    tenant_id int NOT NULL,
    qty int,
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
INSERT INTO items (id, name, tenant_id, qty)
    SELECT g, 'item ' || g, CASE WHEN g % 3 = 0 THEN 42 ELSE 7 END, g % 11 FROM generate_series(1, 300) g;
)sql";

/// One row as text, the same expression on Postgres and SQLite.
const char *kRowText = "id || '|' || name || '|' || tenant_id || '|' || coalesce(qty, -1)";
/// The same on MariaDB.
const char *kMyRowText = "CONCAT_WS('|', id, name, tenant_id, COALESCE(qty, -1))";

struct SoftDelete : ::testing::Test {
    PgTestDb src{"sd_src"};
    PgTestDb dst{"sd_dst"};
    TempDir dir;
    RecordingObserver obs;
    std::string pipeline = uniqueName("sd");

    void SetUp() override { src.exec(kItems); }

    TableSpec spec(Strategy s)
    {
        TableSpec t;
        t.table = {"public", "items"};
        t.strategy = s;
        t.where = "tenant_id = 42";
        t.deletes = "soft";
        return t;
    }
    /// The source's rows the filter holds for, by a query of its own: what the target's live rows
    /// must be.
    std::string expected()
    {
        return src.scalar(std::string("SELECT md5(coalesce(string_agg(") + kRowText +
                          ", ';' ORDER BY id), '')) FROM items WHERE tenant_id = 42");
    }
    std::string md5(const std::string &text)
    {
        auto c = src.connect();
        return c.execParams("SELECT md5($1)", {text}).text(0, 0);
    }
    std::string pgLive()
    {
        return dst.scalar(std::string("SELECT md5(coalesce(string_agg(") + kRowText +
                          ", ';' ORDER BY id), '')) FROM items WHERE _driftless_deleted_at IS NULL");
    }
    std::string pgMarked()
    {
        return dst.scalar("SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM items WHERE "
                          "_driftless_deleted_at IS NOT NULL");
    }
    std::string liteLive(const std::string &file)
    {
        SqliteDb db(file);
        auto st = db.prepare(std::string("SELECT coalesce(group_concat(r, ';'), '') FROM (SELECT ") + kRowText +
                             " AS r FROM items WHERE _driftless_deleted_at IS NULL ORDER BY id)");
        st.step();
        return md5(st.text(0));
    }
    std::string liteMarked(const std::string &file)
    {
        SqliteDb db(file);
        auto st = db.prepare("SELECT coalesce(group_concat(id, ','), '') FROM (SELECT id FROM items WHERE "
                             "_driftless_deleted_at IS NOT NULL ORDER BY id)");
        st.step();
        return st.text(0);
    }
    std::string myLive(const MyTestDb &db)
    {
        return db.scalar(std::string("SELECT MD5(COALESCE(GROUP_CONCAT(") + kMyRowText +
                         " ORDER BY id SEPARATOR ';'), '')) FROM items WHERE _driftless_deleted_at IS NULL");
    }
    std::string myMarked(const MyTestDb &db)
    {
        return db.scalar("SELECT COALESCE(GROUP_CONCAT(id ORDER BY id SEPARATOR ','), '') FROM items WHERE "
                         "_driftless_deleted_at IS NOT NULL");
    }
    /// A key deleted, a row leaving the filter, an update inside it.
    void deleteAndMoveOut()
    {
        src.exec("DELETE FROM items WHERE id = 15");
        src.exec("UPDATE items SET tenant_id = 7, updated_at = clock_timestamp() WHERE id = 3");
        src.exec("UPDATE items SET qty = 500, updated_at = clock_timestamp() WHERE id = 12");
    }
    /// The deleted key inserted again with new values, the row back into the filter.
    void reinsertAndMoveBack()
    {
        src.exec("INSERT INTO items (id, name, tenant_id, qty) VALUES (15, 'again', 42, 9)");
        src.exec("UPDATE items SET tenant_id = 42, name = 'back', updated_at = clock_timestamp() WHERE id = 3");
    }
};

TEST_F(SoftDelete, workspaceFileKeepsSoftOnEveryStrategy)
{
    const std::string head = "endpoints:\n"
                             "  a: { kind: postgres, dsn: \"dbname=a\" }\n"
                             "  b: { kind: postgres, dsn: \"dbname=b\" }\n"
                             "pipelines:\n"
                             "  - name: p\n"
                             "    source: a\n"
                             "    target: b\n"
                             "    tables:\n";
    auto ws = WorkspaceFile::parse(head + "      - { table: public.a, strategy: cdc, deletes: soft }\n"
                                          "      - { table: public.b, strategy: full_refresh, deletes: soft }\n"
                                          "      - { table: public.c, strategy: cursor, cursor: u, deletes: soft }\n",
                                   "ws.yaml", "/");
    for (const auto &t : ws.pipelines.at(0).tables)
        EXPECT_EQ(t.deletes, std::optional<std::string>("soft")) << t.table.display();
    EXPECT_EQ(WorkspaceFile::parse(WorkspaceFile::toYaml(ws), "again.yaml", "/"), ws);

    // Two-way reads each target back as a source: a marked row would go back live.
    try {
        WorkspaceFile::parse(head.substr(0, head.find("    tables:")) + "    direction: both\n    tables:\n" +
                                 "      - { table: public.a, strategy: cdc, deletes: soft }\n",
                             "ws.yaml", "/");
        ADD_FAILURE() << "a two-way pipeline accepted deletes: soft";
    } catch (const ConfigError &e) {
        EXPECT_EQ(e.field(), "pipelines[p].tables[public.a].deletes") << e.what();
        EXPECT_NE(std::string(e.what()).find("use deletes: hard on a two-way pipeline"), std::string::npos) << e.what();
    }
}

TEST_F(SoftDelete, cdcThroughTheCliMarksDeletesRevivesKeysAndReconcilesClean)
{
    const auto &s = servers();
    const std::string state = dir.file("workspace.db");
    const std::string file = dir.file("ws.yaml");
    writeFile(file, "endpoints:\n"
                    "  app: { kind: postgres, dsn: \"host=127.0.0.1 port=" +
                        std::to_string(s.pgPort) + " dbname=" + src.name() + " user=" + s.pgUser +
                        "\" }\n"
                        "  dw:  { kind: postgres, dsn: \"host=127.0.0.1 port=" +
                        std::to_string(s.pgPort) + " dbname=" + dst.name() + " user=" + s.pgUser +
                        "\" }\n"
                        "pipelines:\n"
                        "  - name: " +
                        pipeline +
                        "\n"
                        "    source: app\n"
                        "    target: dw\n"
                        "    tables:\n"
                        "      - table: public.items\n"
                        "        strategy: cdc\n"
                        "        where: \"tenant_id = 42\"\n"
                        "        deletes: soft\n");
    auto r = runCli({"--state", state, "apply", file});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    // Kept through the state store.
    r = runCli({"--state", state, "export"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("deletes: soft"), std::string::npos) << r.out;
    auto run = [&] {
        auto res = runCli({"--state", state, "run", "--once"});
        ASSERT_EQ(res.exitCode, 0) << res.out << res.err;
    };
    run();
    EXPECT_EQ(dst.scalar("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                         "'items'::regclass AND attname = '_driftless_deleted_at'"),
              "timestamp with time zone");
    EXPECT_EQ(pgMarked(), "");
    EXPECT_EQ(pgLive(), expected());

    // A delete and a row leaving the filter: both stay, marked; the rest applies.
    deleteAndMoveOut();
    run();
    EXPECT_EQ(pgMarked(), "3,15");
    EXPECT_EQ(dst.scalar("SELECT name FROM items WHERE id = 15"), "item 15");
    EXPECT_EQ(dst.scalar("SELECT qty FROM items WHERE id = 12"), "500");
    EXPECT_EQ(pgLive(), expected());
    const std::string markVersion = dst.scalar("SELECT _driftless_version FROM items WHERE id = 15");
    EXPECT_GT(std::stoll(markVersion), 0);

    // The key comes back, and so does the row: marks cleared, new values.
    reinsertAndMoveBack();
    run();
    EXPECT_EQ(pgMarked(), "");
    EXPECT_EQ(dst.scalar("SELECT name || ',' || qty FROM items WHERE id = 15"), "again,9");
    EXPECT_EQ(dst.scalar("SELECT name || ',' || tenant_id FROM items WHERE id = 3"), "back,42");
    EXPECT_GT(std::stoll(dst.scalar("SELECT _driftless_version FROM items WHERE id = 15")), std::stoll(markVersion));
    EXPECT_EQ(pgLive(), expected());

    // Reconciliation counts marked rows as absent: clean with one marked.
    src.exec("DELETE FROM items WHERE id = 18");
    run();
    EXPECT_EQ(pgMarked(), "18");
    r = runCli({"--state", state, "reconcile", pipeline});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE _driftless_deleted_at IS NULL"),
              src.scalar("SELECT count(*) FROM items WHERE tenant_id = 42"));

    // Drift on the target: a stray live row (extra) and a row marked by hand (missing). The
    // repair marks the stray one instead of removing it, and revives the other.
    dst.exec("INSERT INTO items (id, name, tenant_id, qty, updated_at, _driftless_version) "
             "VALUES (9999, 'stray', 42, 1, now(), 1)");
    dst.exec("UPDATE items SET _driftless_deleted_at = now() WHERE id = 30");
    r = runCli({"--state", state, "reconcile", pipeline, "--json"});
    ASSERT_EQ(r.exitCode, 3) << r.out << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["tables"].size(), 1u);
    EXPECT_EQ(j["tables"][0]["keys"]["extra"], nlohmann::json::array({9999}));
    EXPECT_EQ(j["tables"][0]["keys"]["missing"], nlohmann::json::array({30}));
    r = runCli({"--state", state, "repair", std::to_string(j["report_id"].get<long long>()), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(pgMarked(), "18,9999");
    EXPECT_EQ(dst.scalar("SELECT name FROM items WHERE id = 9999"), "stray");
    r = runCli({"--state", state, "reconcile", pipeline});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(pgLive(), expected());

    // A run after the repair keeps both marks where they are.
    src.exec("UPDATE items SET qty = 1 WHERE id = 21");
    run();
    EXPECT_EQ(pgMarked(), "18,9999");
    EXPECT_EQ(pgLive(), expected());
}

/// The guard and replays, merger by merger: what the CDC and repair paths rely on.
TEST_F(SoftDelete, theGuardAndReplaysHoldOnEveryTarget)
{
    src.exec("CREATE TABLE plain (id bigint PRIMARY KEY, val text)");
    TableSchema schema;
    {
        auto c = src.connect();
        schema = pgcatalog::describeTable(c, {"public", "plain"});
    }
    MyTestDb mydst{"sd_guard"};
    const std::string lite = dir.file("g.db");
    const MergeTarget pgTarget{"p", {"public", "plain"}, {"public", "plain"}, Strategy::Cdc, true};
    const MergeTarget bareTarget{"p", {"public", "plain"}, {"", "plain"}, Strategy::Cdc, true};

    struct Case {
        std::string name;
        std::function<std::unique_ptr<Merger>()> merger;
        /// "val|version|marked" of key 1, "" when absent; marked is the mark's text or "-".
        std::function<std::string()> row;
    };
    std::vector<Case> cases{
        {"postgres", [&] { return std::make_unique<PgMerger>(dst.connect(), pgTarget); },
         [&] {
             return dst.scalar("SELECT coalesce((SELECT val || '|' || _driftless_version || '|' || "
                               "coalesce(_driftless_deleted_at::text, '-') FROM plain WHERE id = 1), '')");
         }},
        {"sqlite", [&] { return std::make_unique<SqliteMerger>(lite, bareTarget); },
         [&] {
             SqliteDb db(lite);
             auto st = db.prepare("SELECT coalesce((SELECT val || '|' || _driftless_version || '|' || "
                                  "coalesce(_driftless_deleted_at, '-') FROM plain WHERE id = 1), '')");
             st.step();
             return st.text(0);
         }},
        {"mariadb", [&] { return std::make_unique<MysqlMerger>(mydst.connect(), bareTarget); },
         [&] {
             return mydst.scalar("SELECT COALESCE((SELECT CONCAT_WS('|', val, _driftless_version, "
                                 "COALESCE(_driftless_deleted_at, '-')) FROM plain WHERE id = 1), '')");
         }},
    };
    // Each batch with a checkpoint of its own, so a replay reaches the merge (a merger may skip a
    // batch whose checkpoint is the one stored).
    int sent = 0;
    auto batch = [&sent](char op, const char *val, long long v) {
        Batch b;
        b.rows.append(std::string("1\t") + (val ? val : "\\N"), static_cast<ChangeOp>(op), v);
        b.checkpoint = {"{\"v\":" + std::to_string(v) + ",\"n\":" + std::to_string(++sent) + "}", v};
        return b;
    };
    auto field = [](const std::string &row, int n) {
        size_t from = 0;
        for (int i = 0; i < n; ++i)
            from = row.find('|', from) + 1;
        return row.substr(from, row.find('|', from) - from);
    };
    for (auto &c : cases) {
        SCOPED_TRACE(c.name);
        auto m = c.merger();
        m->prepare(schema);
        m->apply(batch('i', "a", 10));
        EXPECT_EQ(c.row(), "a|10|-");
        EXPECT_EQ(m->apply(batch('d', nullptr, 20)).rowsWritten, 1);
        const std::string marked = c.row();
        EXPECT_EQ(marked.substr(0, 5), "a|20|");
        const std::string mark = field(marked, 2);
        EXPECT_NE(mark, "-");
        if (c.name == "sqlite") { // ISO-8601 UTC text
            EXPECT_EQ(mark.back(), 'Z') << mark;
        }
        // A replayed delete writes nothing and leaves the mark's time as it was.
        EXPECT_EQ(m->apply(batch('d', nullptr, 20)).rowsWritten, 0);
        EXPECT_EQ(c.row(), marked);
        // An older insert (replayed) cannot revive the key.
        EXPECT_EQ(m->apply(batch('i', "old", 15)).rowsWritten, 0);
        EXPECT_EQ(c.row(), marked);
        // A newer delete of a marked row moves its version (the guard) but keeps the first time.
        m->apply(batch('d', nullptr, 25));
        EXPECT_EQ(c.row(), "a|25|" + mark);
        // A newer insert revives it with its values; replays of the older changes do nothing.
        EXPECT_EQ(m->apply(batch('i', "b", 30)).rowsWritten, 1);
        EXPECT_EQ(c.row(), "b|30|-");
        m->apply(batch('d', nullptr, 25));
        m->apply(batch('i', "old", 15));
        EXPECT_EQ(c.row(), "b|30|-");
        // Deleted and inserted again with the very same values: revived all the same.
        m->apply(batch('d', nullptr, 40));
        EXPECT_EQ(m->apply(batch('i', "b", 41)).rowsWritten, 1);
        EXPECT_EQ(c.row(), "b|41|-");
        EXPECT_EQ(m->targetColumns().size(), 2u); // the mark is bookkeeping, never a data column
    }
    EXPECT_EQ(mydst.scalar("SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
                           "TABLE_NAME = 'plain' AND COLUMN_NAME = '_driftless_deleted_at'"),
              "datetime(6)");
}

TEST_F(SoftDelete, cdcIntoSqliteAndMariaDbTargetsMarksAndRevives)
{
    const std::string lite = dir.file("t.db");
    MyTestDb mydst{"sd_dst"};
    auto liteJob =
        makeJob(pipeline + "l", spec(Strategy::Cdc), pgEndpoint("src", src.name()), sqliteEndpoint("l", lite));
    auto myJob =
        makeJob(pipeline + "m", spec(Strategy::Cdc), pgEndpoint("src", src.name()), myEndpoint("dst", mydst.name()));
    auto once = [&] {
        for (const auto &job : {liteJob, myJob}) {
            CdcPipeline p({job}, std::nullopt, obs);
            p.run({}, {true});
        }
    };
    once();
    EXPECT_EQ(liteLive(lite), expected());
    EXPECT_EQ(myLive(mydst), expected());
    deleteAndMoveOut();
    once();
    EXPECT_EQ(liteMarked(lite), "3,15");
    EXPECT_EQ(myMarked(mydst), "3,15");
    EXPECT_EQ(liteLive(lite), expected());
    EXPECT_EQ(myLive(mydst), expected());
    reinsertAndMoveBack();
    once();
    EXPECT_EQ(liteMarked(lite), "");
    EXPECT_EQ(myMarked(mydst), "");
    EXPECT_EQ(mydst.scalar("SELECT CONCAT(name, ',', qty) FROM items WHERE id = 15"), "again,9");
    EXPECT_EQ(liteLive(lite), expected());
    EXPECT_EQ(myLive(mydst), expected());
}

TEST_F(SoftDelete, fullRefreshKeepsMissingRowsMarkedInEveryTarget)
{
    const std::string lite = dir.file("f.db");
    MyTestDb mydst{"sd_dst"};
    std::vector<TableJob> jobs{
        makeJob(pipeline, spec(Strategy::FullRefresh), pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name())),
        makeJob(pipeline, spec(Strategy::FullRefresh), pgEndpoint("src", src.name()), sqliteEndpoint("l", lite)),
        makeJob(pipeline, spec(Strategy::FullRefresh), pgEndpoint("src", src.name()), myEndpoint("dst", mydst.name()))};
    auto refresh = [&] {
        for (const auto &j : jobs)
            TableSync(j, obs).runOnce({});
    };
    auto marked = [&] { return pgMarked() + " " + liteMarked(lite) + " " + myMarked(mydst); };
    auto live = [&] {
        const std::string e = expected();
        EXPECT_EQ(pgLive(), e);
        EXPECT_EQ(liteLive(lite), e);
        EXPECT_EQ(myLive(mydst), e);
    };
    refresh();
    EXPECT_EQ(marked(), "  ");
    live();

    deleteAndMoveOut();
    refresh();
    EXPECT_EQ(marked(), "3,15 3,15 3,15");
    EXPECT_EQ(dst.scalar("SELECT name FROM items WHERE id = 15"), "item 15");
    live();
    const std::string pgMark = dst.scalar("SELECT _driftless_deleted_at::text FROM items WHERE id = 15");
    const std::string myMark = mydst.scalar("SELECT _driftless_deleted_at FROM items WHERE id = 15");

    // Another refresh: a second row goes; the rows marked before keep their first time.
    src.exec("DELETE FROM items WHERE id = 18");
    refresh();
    EXPECT_EQ(marked(), "3,15,18 3,15,18 3,15,18");
    EXPECT_EQ(dst.scalar("SELECT _driftless_deleted_at::text FROM items WHERE id = 15"), pgMark);
    EXPECT_EQ(mydst.scalar("SELECT _driftless_deleted_at FROM items WHERE id = 15"), myMark);
    live();

    reinsertAndMoveBack();
    refresh();
    EXPECT_EQ(marked(), "18 18 18");
    EXPECT_EQ(dst.scalar("SELECT name || ',' || qty FROM items WHERE id = 15"), "again,9");
    live();
}

TEST_F(SoftDelete, cursorMarksRowsLeavingTheFilterAndRevivesThemOnTheWayBack)
{
    const std::string lite = dir.file("c.db");
    auto cursor = spec(Strategy::Cursor);
    cursor.cursor = "updated_at";
    cursor.lookback = "1s";
    cursor.pageSize = 50;
    std::vector<TableJob> jobs{makeJob(pipeline, cursor, pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name())),
                               makeJob(pipeline, cursor, pgEndpoint("src", src.name()), sqliteEndpoint("l", lite))};
    auto pass = [&] {
        for (const auto &j : jobs)
            TableSync(j, obs).runOnce({});
    };
    pass();
    EXPECT_EQ(pgLive(), expected());
    EXPECT_EQ(liteLive(lite), expected());
    // A cursor pass sees no deletes of its own: only the row that leaves the filter is marked.
    src.exec("UPDATE items SET tenant_id = 7, updated_at = clock_timestamp() WHERE id IN (3, 6)");
    pass();
    EXPECT_EQ(pgMarked(), "3,6");
    EXPECT_EQ(liteMarked(lite), "3,6");
    EXPECT_EQ(pgLive(), expected());
    EXPECT_EQ(liteLive(lite), expected());
    src.exec("UPDATE items SET tenant_id = 42, name = 'back', updated_at = clock_timestamp() WHERE id = 3");
    pass();
    EXPECT_EQ(pgMarked(), "6");
    EXPECT_EQ(liteMarked(lite), "6");
    EXPECT_EQ(dst.scalar("SELECT name FROM items WHERE id = 3"), "back");
    EXPECT_EQ(pgLive(), expected());
    EXPECT_EQ(liteLive(lite), expected());
}

/// A MariaDB source: binlog CDC into Postgres.
TEST_F(SoftDelete, mariaDbSourceMarksDeletesAndRowsLeavingTheFilter)
{
    MyTestDb mysrc{"sd_mysrc"};
    mysrc.exec("CREATE TABLE items (id bigint PRIMARY KEY, name varchar(40) NOT NULL, tenant_id int NOT NULL, "
               "qty int)");
    mysrc.exec("INSERT INTO items (id, name, tenant_id, qty) SELECT seq, CONCAT('item ', seq), "
               "IF(seq % 3 = 0, 42, 7), seq % 11 FROM seq_1_to_300");
    TableSpec t;
    t.table = {mysrc.name(), "items"};
    t.strategy = Strategy::Cdc;
    t.where = "tenant_id = 42";
    t.deletes = "soft";
    auto job = makeJob(pipeline, t, myEndpoint("src", mysrc.name()), pgEndpoint("dst", dst.name()), "public");
    auto once = [&] {
        MysqlCdcPipeline p({job}, obs);
        p.run({}, {true, nullptr});
    };
    auto myExpected = [&] {
        return mysrc.scalar(std::string("SELECT MD5(COALESCE(GROUP_CONCAT(") + kMyRowText +
                            " ORDER BY id SEPARATOR ';'), '')) FROM items WHERE tenant_id = 42");
    };
    once();
    EXPECT_EQ(pgMarked(), "");
    EXPECT_EQ(pgLive(), myExpected());
    mysrc.exec("DELETE FROM items WHERE id = 15");
    mysrc.exec("UPDATE items SET tenant_id = 7 WHERE id = 3");
    once();
    EXPECT_EQ(pgMarked(), "3,15");
    EXPECT_EQ(pgLive(), myExpected());
    mysrc.exec("INSERT INTO items VALUES (15, 'again', 42, 9)");
    mysrc.exec("UPDATE items SET tenant_id = 42, name = 'back' WHERE id = 3");
    once();
    EXPECT_EQ(pgMarked(), "");
    EXPECT_EQ(dst.scalar("SELECT name || ',' || qty FROM items WHERE id = 15"), "again,9");
    EXPECT_EQ(pgLive(), myExpected());
}

} // namespace
