// Row filters (`where:` on a table): only rows the source's own SQL holds the filter for reach the
// target, under every strategy; an update that moves a row out of the filter deletes it on the
// target, and one that moves it back restores it with its current values. Target contents are
// compared with an independent query on each side, never with the engine's own hashing.

#include "core/config/workspacefile.h"
#include "core/db/sqlitedb.h"
#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/pg/cdcpipeline.h"
#include "core/engine/commands/doctor.h"
#include "core/engine/reconcile/reconciler.h"
#include "core/model/error.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace driftless::core;
using namespace driftless::test;

namespace {

const char *kItems = R"sql(
CREATE TABLE items (
    id bigint PRIMARY KEY,
    name text NOT NULL,
    tenant_id int NOT NULL,
    qty int,
    notes text,
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
ALTER TABLE items ALTER COLUMN notes SET STORAGE EXTERNAL;
INSERT INTO items (id, name, tenant_id, qty)
    SELECT g, 'item ' || g, CASE WHEN g % 3 = 0 THEN 42 ELSE 7 END, g % 11 FROM generate_series(1, 3000) g;
)sql";

/// The rows as one text, in key order: the same expression runs on Postgres and SQLite.
const char *kRowText = "id || '|' || name || '|' || tenant_id || '|' || coalesce(qty, -1)";

struct RowFilter : ::testing::Test {
    PgTestDb src{"rf_src"};
    PgTestDb dst{"rf_dst"};
    TempDir dir;
    RecordingObserver obs;
    std::string pipeline = uniqueName("rf");

    void SetUp() override { src.exec(kItems); }

    TableSpec spec(Strategy s)
    {
        TableSpec t;
        t.table = {"public", "items"};
        t.strategy = s;
        t.pageSize = 500;
        t.where = "tenant_id = 42";
        if (s == Strategy::Cursor) {
            t.cursor = "updated_at";
            t.lookback = "1s";
        }
        return t;
    }
    /// What the target must hold: the source's rows the filter holds for, by a query of its own.
    std::string expected()
    {
        return src.scalar(std::string("SELECT md5(coalesce(string_agg(") + kRowText +
                          ", ';' ORDER BY id), '')) FROM items WHERE tenant_id = 42");
    }
    std::string pgTarget()
    {
        return dst.scalar(std::string("SELECT md5(coalesce(string_agg(") + kRowText +
                          ", ';' ORDER BY id), '')) FROM items");
    }
    std::string liteTarget(const std::string &file)
    {
        SqliteDb db(file);
        auto st = db.prepare(std::string("SELECT coalesce(group_concat(r, ';'), '') FROM (SELECT ") + kRowText +
                             " AS r FROM items ORDER BY id)");
        st.step();
        // md5 on the Postgres side of the same text, so both compare as one kind of value.
        auto c = src.connect();
        auto r = c.execParams("SELECT md5($1)", {st.text(0)});
        return r.text(0, 0);
    }
    std::string srcCount(const std::string &where) { return src.scalar("SELECT count(*) FROM items WHERE " + where); }

    /// The moves every strategy must follow: out of the filter, back in with new values, an
    /// insert outside, a delete inside.
    void moveRows(bool withDelete = true)
    {
        src.exec("UPDATE items SET tenant_id = 7, updated_at = clock_timestamp() WHERE id IN (3, 6, 9)");
        src.exec("UPDATE items SET qty = 500, updated_at = clock_timestamp() WHERE id = 12");
        src.exec("INSERT INTO items (id, name, tenant_id, qty) VALUES (5001, 'outside', 8, 1), "
                 "(5002, 'inside', 42, 2)");
        if (withDelete)
            src.exec("DELETE FROM items WHERE id = 15");
    }
    void moveBack()
    {
        src.exec("UPDATE items SET tenant_id = 42, name = 'back', qty = 77, updated_at = clock_timestamp() "
                 "WHERE id IN (3, 6)");
        src.exec("UPDATE items SET tenant_id = 42, updated_at = clock_timestamp() WHERE id = 1");
    }
};

TEST_F(RowFilter, workspaceFileReadsWritesAndRefusesFilterKeys)
{
    const std::string head = "endpoints:\n"
                             "  a: { kind: postgres, dsn: \"dbname=a\" }\n"
                             "  b: { kind: postgres, dsn: \"dbname=b\" }\n"
                             "pipelines:\n"
                             "  - name: p\n"
                             "    source: a\n"
                             "    target: b\n"
                             "    tables:\n";
    auto ws = WorkspaceFile::parse(head + "      - table: public.items\n"
                                          "        strategy: cdc\n"
                                          "        where: \"tenant_id = 42 AND name <> 'x'\"\n"
                                          "        deletes: ignore\n",
                                   "ws.yaml", "/");
    const auto &t = ws.pipelines.at(0).tables.at(0);
    EXPECT_EQ(t.where, std::optional<std::string>("tenant_id = 42 AND name <> 'x'"));
    EXPECT_EQ(t.deletes, std::optional<std::string>("ignore"));
    EXPECT_EQ(WorkspaceFile::parse(WorkspaceFile::toYaml(ws), "again.yaml", "/"), ws);

    struct Bad {
        std::string item, field, needle;
    };
    for (const auto &b : std::vector<Bad>{{"        where: \"tenant_id = 42; DROP TABLE items\"\n", "where", "';'"},
                                          {"        deletes: purge\n", "deletes", "hard, soft or ignore"},
                                          {"        where: \"\"\n", "where", "must not be empty"}}) {
        try {
            WorkspaceFile::parse(head + "      - table: public.items\n        strategy: cdc\n" + b.item, "ws.yaml",
                                 "/");
            ADD_FAILURE() << "accepted: " << b.item;
        } catch (const ConfigError &e) {
            EXPECT_EQ(e.line(), 11) << e.what();
            EXPECT_EQ(e.field(), "pipelines[p].tables[public.items]." + b.field);
            EXPECT_NE(std::string(e.what()).find(b.needle), std::string::npos) << e.what();
        }
    }
    try {
        WorkspaceFile::parse(head + "      - { table: public.items, strategy: full_refresh, deletes: ignore }\n",
                             "ws.yaml", "/");
        ADD_FAILURE() << "a full refresh accepted deletes: ignore";
    } catch (const ConfigError &e) {
        EXPECT_NE(std::string(e.what()).find("full refresh replaces the whole table"), std::string::npos) << e.what();
    }
}

TEST_F(RowFilter, applyRefusesAFilterTheSourceRejects)
{
    const auto &s = servers();
    const std::string state = dir.file("workspace.db");
    const std::string file = dir.file("ws.yaml");
    auto yaml = [&](const std::string &where) {
        return "endpoints:\n"
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
               "        strategy: full_refresh\n"
               "        where: \"" +
               where + "\"\n";
    };
    writeFile(file, yaml("tenant = 42"));
    auto r = runCli({"--state", state, "apply", file});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("ws.yaml:11"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("tables[public.items].where"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("column \"tenant\" does not exist"), std::string::npos) << r.err;

    writeFile(file, yaml("tenant_id = = 42"));
    r = runCli({"--state", state, "apply", file});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("syntax error"), std::string::npos) << r.err;

    writeFile(file, yaml("tenant_id = 42"));
    r = runCli({"--state", state, "apply", file});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;

    // Through the state file a run syncs only the filter's rows.
    r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const std::string wanted = src.scalar("SELECT count(*) FROM items WHERE tenant_id = 42");
    ASSERT_NE(wanted, "0");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items"), wanted);
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE tenant_id <> 42"), "0");

    // The source changed under the filter after apply: the run says which key to fix, and the
    // target keeps what it had.
    src.exec("ALTER TABLE items RENAME COLUMN tenant_id TO tenant_no");
    r = runCli({"--state", state, "run", "--once"});
    EXPECT_NE(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.err.find("refuses its row filter (where: tenant_id = 42)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("fix the table's where:"), std::string::npos) << r.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items"), wanted);
    src.exec("ALTER TABLE items RENAME COLUMN tenant_no TO tenant_id");
}

TEST_F(RowFilter, fullRefreshCopiesOnlyMatchingRowsIntoPostgresAndSqlite)
{
    const std::string lite = dir.file("r.db");
    auto pgJob =
        makeJob(pipeline, spec(Strategy::FullRefresh), pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()));
    auto liteJob =
        makeJob(pipeline, spec(Strategy::FullRefresh), pgEndpoint("src", src.name()), sqliteEndpoint("l", lite));
    TableSync(pgJob, obs).runOnce({});
    TableSync(liteJob, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items"), srcCount("tenant_id = 42"));
    EXPECT_EQ(pgTarget(), expected());
    EXPECT_EQ(liteTarget(lite), expected());

    moveRows();
    TableSync(pgJob, obs).runOnce({});
    TableSync(liteJob, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE id IN (3, 6, 9, 15, 5001)"), "0");
    EXPECT_EQ(pgTarget(), expected());
    EXPECT_EQ(liteTarget(lite), expected());

    moveBack();
    TableSync(pgJob, obs).runOnce({});
    TableSync(liteJob, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT name || ',' || qty FROM items WHERE id = 3"), "back,77");
    EXPECT_EQ(pgTarget(), expected());
    EXPECT_EQ(liteTarget(lite), expected());
}

TEST_F(RowFilter, cursorLoadsMatchingRowsAndDeletesRowsThatLeaveTheFilter)
{
    const std::string lite = dir.file("r.db");
    auto pgJob =
        makeJob(pipeline, spec(Strategy::Cursor), pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()));
    auto liteJob = makeJob(pipeline, spec(Strategy::Cursor), pgEndpoint("src", src.name()), sqliteEndpoint("l", lite));
    TableSync(pgJob, obs).runOnce({});
    TableSync(liteJob, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items"), srcCount("tenant_id = 42"));
    EXPECT_EQ(pgTarget(), expected());
    EXPECT_EQ(liteTarget(lite), expected());

    moveRows(false); // a cursor pass sees no deletes
    TableSync(pgJob, obs).runOnce({});
    TableSync(liteJob, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE id IN (3, 6, 9, 5001)"), "0");
    EXPECT_EQ(dst.scalar("SELECT qty FROM items WHERE id = 12"), "500");
    EXPECT_EQ(pgTarget(), expected());
    EXPECT_EQ(liteTarget(lite), expected());

    moveBack();
    TableSync(pgJob, obs).runOnce({});
    TableSync(liteJob, obs).runOnce({});
    EXPECT_EQ(dst.scalar("SELECT name || ',' || qty FROM items WHERE id = 3"), "back,77");
    EXPECT_EQ(pgTarget(), expected());
    EXPECT_EQ(liteTarget(lite), expected());
}

TEST_F(RowFilter, cdcDecidesEveryChangeByTheFilterOnTheSource)
{
    auto job = makeJob(pipeline, spec(Strategy::Cdc), pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()));
    auto once = [&] {
        CdcPipeline p({job}, std::nullopt, obs);
        p.run({}, {true});
    };
    once();
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items"), srcCount("tenant_id = 42"));
    EXPECT_EQ(pgTarget(), expected());

    // Driftless never puts the filter into the publication.
    EXPECT_EQ(src.scalar("SELECT count(*) FROM pg_publication_tables WHERE pubname = 'driftless_" + pipeline +
                         "' AND rowfilter IS NULL AND attnames IS NOT NULL"),
              "1");
    EXPECT_EQ(src.scalar("SELECT count(*) FROM pg_publication_tables WHERE rowfilter IS NOT NULL"), "0");

    moveRows();
    once();
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE id IN (3, 6, 9, 15, 5001)"), "0");
    EXPECT_EQ(dst.scalar("SELECT qty FROM items WHERE id = 12"), "500");
    EXPECT_EQ(pgTarget(), expected());

    moveBack();
    // A row that comes back with its large value unchanged (not sent in the stream): its values
    // are read from the source.
    src.exec("UPDATE items SET notes = repeat('n', 100000), updated_at = clock_timestamp() WHERE id = 9");
    src.exec("UPDATE items SET tenant_id = 42 WHERE id = 9");
    // And one that leaves the filter with its large value unchanged.
    src.exec("UPDATE items SET notes = repeat('m', 100000) WHERE id = 18");
    once();
    src.exec("UPDATE items SET tenant_id = 5 WHERE id = 18");
    once();
    EXPECT_EQ(dst.scalar("SELECT name || ',' || qty FROM items WHERE id = 3"), "back,77");
    EXPECT_EQ(dst.scalar("SELECT length(notes) FROM items WHERE id = 9"), "100000");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE id = 18"), "0");
    EXPECT_EQ(pgTarget(), expected());
}

TEST_F(RowFilter, deletesIgnoreKeepsTheRowAndLogsTheDeleteUnderCdcAndCursor)
{
    const std::string lite = dir.file("r.db");
    auto cdcSpec = spec(Strategy::Cdc);
    cdcSpec.deletes = "ignore";
    auto curSpec = spec(Strategy::Cursor);
    curSpec.deletes = "ignore";
    auto cdcJob = makeJob(pipeline, cdcSpec, pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()));
    auto curJob = makeJob(pipeline + "c", curSpec, pgEndpoint("src", src.name()), sqliteEndpoint("l", lite));
    auto once = [&] {
        CdcPipeline p({cdcJob}, std::nullopt, obs);
        p.run({}, {true});
        TableSync(curJob, obs).runOnce({});
    };
    once();
    const std::string before = expected();
    EXPECT_EQ(pgTarget(), before);
    EXPECT_EQ(liteTarget(lite), before);
    obs.events.clear();
    src.exec("DELETE FROM items WHERE id IN (15, 18)");
    src.exec("UPDATE items SET tenant_id = 7, updated_at = clock_timestamp() WHERE id = 21");
    src.exec("UPDATE items SET qty = 600, updated_at = clock_timestamp() WHERE id = 24");
    once();
    // The deleted rows and the one that left the filter stay as they were; other changes apply.
    EXPECT_EQ(dst.scalar("SELECT string_agg(id || ':' || tenant_id || ':' || qty, ',' ORDER BY id) FROM items "
                         "WHERE id IN (15, 18, 21, 24)"),
              "15:42:4,18:42:7,21:42:10,24:42:600");
    {
        SqliteDb db(lite);
        EXPECT_EQ(db.scalarInt("SELECT count(*) FROM items WHERE id IN (21, 24)"), 2);
        EXPECT_EQ(db.scalarInt("SELECT qty FROM items WHERE id = 24"), 600);
    }
    std::string all;
    for (auto &e : obs.events)
        all += e + "\n";
    // The source's deletes are logged; a row leaving the filter is kept without a word.
    EXPECT_TRUE(obs.sawEvent("delete_ignored: 2 deletes not applied (deletes: ignore)")) << all;
    EXPECT_EQ(std::count_if(obs.events.begin(), obs.events.end(),
                            [](const std::string &e) { return e.find("delete_ignored") != std::string::npos; }),
              1)
        << all;
}

TEST_F(RowFilter, reconcileComparesTheFilteredSourceAndRepairWritesOnlyItsRows)
{
    Workspace ws;
    ws.endpoints["src"] = pgEndpoint("src", src.name());
    ws.endpoints["dst"] = pgEndpoint("dst", dst.name());
    PipelineSpec p;
    p.name = "p";
    p.source = "src";
    p.target = "dst";
    p.tables.push_back(spec(Strategy::FullRefresh));
    ws.pipelines.push_back(p);
    TableSync(jobsFor(ws, "p").at(0), obs).runOnce({});
    EXPECT_EQ(reconcile(ws, "p", {}).drift(), 0);

    // Drift on the target: a row outside the filter, a changed row and a missing one.
    dst.exec("INSERT INTO items (id, name, tenant_id, qty, updated_at, _driftless_version) "
             "SELECT id, name, tenant_id, qty, updated_at, 1 FROM (VALUES (1::bigint, 'stray', 7, 1, now())) "
             "AS v(id, name, tenant_id, qty, updated_at)");
    dst.exec("UPDATE items SET qty = -5 WHERE id = 30");
    dst.exec("DELETE FROM items WHERE id = 33");
    auto report = reconcile(ws, "p", {});
    EXPECT_EQ(report.drift(), 3);
    repairReport(ws, report);
    EXPECT_EQ(reconcile(ws, "p", {}).drift(), 0);
    EXPECT_EQ(pgTarget(), expected());
}

TEST_F(RowFilter, doctorWarnsAboutAPublicationThatBreaksUpdatesOnTheSource)
{
    Workspace ws;
    ws.endpoints["src"] = pgEndpoint("src", src.name());
    ws.endpoints["dst"] = pgEndpoint("dst", dst.name());
    PipelineSpec p;
    p.name = pipeline;
    p.source = "src";
    p.target = "dst";
    p.tables.push_back(spec(Strategy::Cdc));
    ws.pipelines.push_back(p);
    auto warnings = [&] {
        std::vector<Finding> pubs;
        for (auto &f : runDoctor(ws))
            if (std::string(toString(f.level)) == "warn" && f.message.find("publication ") == 0)
                pubs.push_back(f);
        return pubs;
    };
    EXPECT_TRUE(warnings().empty());

    // The doctor also asks the source about the filter.
    ws.pipelines[0].tables[0].where = "tenant = 42";
    bool refused = false;
    for (auto &f : runDoctor(ws))
        refused = refused || (std::string(toString(f.level)) == "error" &&
                              f.message.find("refuses the row filter") != std::string::npos &&
                              f.message.find("\"tenant\" does not exist") != std::string::npos);
    EXPECT_TRUE(refused);
    ws.pipelines[0].tables[0].where = "tenant_id = 42";

    // A DBA's publication with a column list that misses the key: the footgun is real...
    src.exec("CREATE PUBLICATION dba_cols FOR TABLE items (name, tenant_id)");
    try {
        src.exec("UPDATE items SET qty = 1 WHERE id = 1");
        ADD_FAILURE() << "Postgres accepted the update";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("replica identity"), std::string::npos) << e.what();
    }
    // ...and the doctor names it, says why, and gives the statements that make it safe.
    auto w = warnings();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].message.find("dba_cols"), std::string::npos) << w[0].message;
    EXPECT_NE(w[0].message.find("lacks the replica identity column(s) id"), std::string::npos) << w[0].message;
    EXPECT_NE(w[0].sql.find("ALTER PUBLICATION \"dba_cols\" DROP TABLE \"public\".\"items\""), std::string::npos)
        << w[0].sql;
    src.exec(w[0].sql);
    src.exec("UPDATE items SET qty = 1 WHERE id = 1");
    EXPECT_TRUE(warnings().empty());

    // A row filter on a column outside the replica identity.
    src.exec("CREATE PUBLICATION dba_rows FOR TABLE items WHERE (tenant_id = 42)");
    w = warnings();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].message.find("dba_rows"), std::string::npos) << w[0].message;
    EXPECT_NE(w[0].message.find("outside the replica identity: tenant_id"), std::string::npos) << w[0].message;
    // One on the key alone is safe; so is one that publishes no UPDATE or DELETE.
    src.exec("DROP PUBLICATION dba_rows");
    src.exec("CREATE PUBLICATION dba_key FOR TABLE items WHERE (id > 10)");
    src.exec("CREATE PUBLICATION dba_inserts FOR TABLE items (name) WITH (publish = 'insert')");
    EXPECT_TRUE(warnings().empty());
}

/// A MariaDB source: the filter in MariaDB's SQL, under binlog CDC into Postgres and cursor sync
/// into a MariaDB target.
struct MyRowFilter : ::testing::Test {
    MyTestDb src{"rfmy_src"};
    PgTestDb dst{"rfmy_dst"};
    MyTestDb mydst{"rfmy_dst"};
    RecordingObserver obs;

    void SetUp() override
    {
        src.exec("CREATE TABLE items (id bigint PRIMARY KEY, name varchar(40) NOT NULL, tenant_id int NOT NULL, "
                 "qty int, updated_at datetime(6) NOT NULL DEFAULT NOW(6), KEY (updated_at))");
        src.exec("INSERT INTO items (id, name, tenant_id, qty) SELECT seq, CONCAT('item ', seq), "
                 "IF(seq % 3 = 0, 42, 7), seq % 11 FROM seq_1_to_1500");
    }
    TableSpec spec(Strategy s)
    {
        TableSpec t;
        t.table = {src.name(), "items"};
        t.strategy = s;
        t.pageSize = 400;
        t.where = "tenant_id = 42 AND name <> 'skip'";
        if (s == Strategy::Cursor) {
            t.cursor = "updated_at";
            t.lookback = "1s";
        }
        return t;
    }
    std::string expected()
    {
        return src.scalar("SELECT MD5(COALESCE(GROUP_CONCAT(CONCAT_WS('|', id, name, tenant_id, qty) ORDER BY id "
                          "SEPARATOR ';'), '')) FROM items WHERE tenant_id = 42 AND name <> 'skip'");
    }
    std::string pgTarget()
    {
        return dst.scalar("SELECT md5(coalesce(string_agg(concat_ws('|', id, name, tenant_id, qty), ';' ORDER BY id), "
                          "'')) FROM public.items");
    }
    std::string myTarget()
    {
        return mydst.scalar("SELECT MD5(COALESCE(GROUP_CONCAT(CONCAT_WS('|', id, name, tenant_id, qty) ORDER BY id "
                            "SEPARATOR ';'), '')) FROM items");
    }
    void moveRows(bool withDelete)
    {
        src.exec("UPDATE items SET tenant_id = 7, updated_at = NOW(6) WHERE id IN (3, 6)");
        src.exec("UPDATE items SET name = 'skip', updated_at = NOW(6) WHERE id = 9");
        src.exec("UPDATE items SET qty = 500, updated_at = NOW(6) WHERE id = 12");
        src.exec(
            "INSERT INTO items (id, name, tenant_id, qty) VALUES (5001, 'outside', 8, 1), (5002, 'inside', 42, 2)");
        if (withDelete)
            src.exec("DELETE FROM items WHERE id = 15");
    }
    void moveBack()
    {
        src.exec("UPDATE items SET tenant_id = 42, name = 'back', qty = 77, updated_at = NOW(6) WHERE id IN (3, 9)");
    }
};

TEST_F(MyRowFilter, binlogCdcDecidesEveryChangeByTheFilterOnTheSource)
{
    auto job =
        makeJob("rfmy", spec(Strategy::Cdc), myEndpoint("src", src.name()), pgEndpoint("dst", dst.name()), "public");
    auto once = [&] {
        MysqlCdcPipeline p({job}, obs);
        p.run({}, {true, nullptr});
    };
    once();
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.items"), "500");
    EXPECT_EQ(pgTarget(), expected());
    moveRows(true);
    once();
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM public.items WHERE id IN (3, 6, 9, 15, 5001)"), "0");
    EXPECT_EQ(pgTarget(), expected());
    moveBack();
    once();
    EXPECT_EQ(dst.scalar("SELECT name || ',' || qty FROM public.items WHERE id = 9"), "back,77");
    EXPECT_EQ(pgTarget(), expected());

    // Reconciliation compares the filtered source; repair removes a row outside the filter.
    Workspace ws;
    ws.endpoints["src"] = myEndpoint("src", src.name());
    ws.endpoints["dst"] = pgEndpoint("dst", dst.name());
    PipelineSpec p;
    p.name = "rfmy";
    p.source = "src";
    p.target = "dst";
    p.targetSchema = "public";
    p.tables.push_back(job.spec);
    ws.pipelines.push_back(p);
    EXPECT_EQ(reconcile(ws, "rfmy", {}).drift(), 0);
    dst.exec("INSERT INTO public.items (id, name, tenant_id, qty, updated_at, _driftless_version) "
             "VALUES (1, 'stray', 7, 1, now(), 1)");
    auto report = reconcile(ws, "rfmy", {});
    EXPECT_EQ(report.drift(), 1);
    repairReport(ws, report);
    EXPECT_EQ(reconcile(ws, "rfmy", {}).drift(), 0);
    EXPECT_EQ(pgTarget(), expected());
}

TEST_F(MyRowFilter, cursorIntoAMariaDbTargetFollowsRowsOutAndBackIn)
{
    auto job = makeJob("rfmyc", spec(Strategy::Cursor), myEndpoint("src", src.name()), myEndpoint("dst", mydst.name()));
    TableSync(job, obs).runOnce({});
    EXPECT_EQ(mydst.scalar("SELECT count(*) FROM items"), "500");
    EXPECT_EQ(myTarget(), expected());
    moveRows(false);
    TableSync(job, obs).runOnce({});
    EXPECT_EQ(mydst.scalar("SELECT count(*) FROM items WHERE id IN (3, 6, 9, 5001)"), "0");
    EXPECT_EQ(myTarget(), expected());
    moveBack();
    TableSync(job, obs).runOnce({});
    EXPECT_EQ(mydst.scalar("SELECT CONCAT(name, ',', qty) FROM items WHERE id = 3"), "back,77");
    EXPECT_EQ(myTarget(), expected());
}

} // namespace
