// Postgres change data capture against a real server: initial load from the slot's snapshot,
// the stream in commit order, unchanged TOAST values, key changes, TRUNCATE, schema changes,
// and failing closed when the slot is gone or a table cannot be replicated.

#include "core/db/pgcatalog.h"
#include "core/db/sqlitedb.h"
#include "core/engine/cdc/pg/cdcpipeline.h"
#include "core/engine/commands/doctor.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/endpoints/tablediscovery.h"
#include "core/engine/run/scheduler.h"
#include "core/engine/sync/tablesync.h"
#include "core/model/error.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <random>
#include <set>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

struct Cdc : ::testing::Test {
    PgTestDb src{"cdc_src"};
    PgTestDb dst{"cdc_dst"};
    RecordingObserver obs;
    std::string pipeline = uniqueName("cdc");

    TableJob job(const std::string &table, std::optional<std::string> truncate = std::nullopt)
    {
        TableSpec spec;
        spec.table = TableRef::parse(table);
        spec.strategy = Strategy::Cdc;
        spec.pageSize = 1000;
        spec.truncate = truncate;
        return makeJob(pipeline, spec, pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()));
    }
    void once(const std::vector<TableJob> &jobs)
    {
        CdcPipeline p(jobs, std::nullopt, obs);
        p.run({}, {true});
    }
    std::string hash(PgTestDb &db, const std::string &select, const std::string &order = "id")
    {
        auto c = db.connect();
        return pgHash(c, select, order);
    }
    /// Streams `jobs` on a thread until `done()` holds (checked every 20 ms, for at most 30 s).
    void streamUntil(const std::vector<TableJob> &jobs, const std::function<bool()> &done)
    {
        std::stop_source stop;
        std::thread runner([&] {
            CdcPipeline p(jobs, std::nullopt, obs);
            try {
                p.run(stop.get_token(), {false});
            } catch (const std::exception &e) {
                std::printf("pipeline stopped: %s\n", e.what());
            }
        });
        for (int i = 0; i < 1500 && !done(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        stop.request_stop();
        runner.join();
    }
    /// Requests a re-backfill of public.items and streams until it is done.
    void rebackfill(const std::vector<TableJob> &jobs)
    {
        auto m = createMerger(jobs.front().target,
                              {pipeline, jobs.front().spec.table, jobs.front().targetName, Strategy::Cdc});
        m->setRequest("rebackfill");
        obs.events.clear();
        streamUntil(jobs, [&] { return obs.sawEvent("re-backfill done"); });
        ASSERT_TRUE(obs.sawEvent("re-backfill done"));
    }
    /// Runs public.items once and expects the pipeline to stop for good: an Error whose message
    /// has `needle` and whose hint says to re-snapshot, and the table turned red.
    void expectStopsLoudly(const std::string &needle)
    {
        obs.states.clear();
        try {
            once({job("public.items")});
            FAIL() << "expected the pipeline to stop";
        } catch (const Error &e) {
            EXPECT_FALSE(e.isTransient());
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
            EXPECT_NE(e.hint().find("resnapshot"), std::string::npos);
        }
        bool red = false;
        for (auto &s : obs.states)
            red = red || s.rfind("error", 0) == 0;
        EXPECT_TRUE(red);
    }
    std::string position(const std::string &table = "public.items")
    {
        return dst.scalar("SELECT position FROM _driftless.checkpoints WHERE source_table = '" + table + "'");
    }
};

const char *kItems = "CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, qty int, price numeric(10,2))";
const char *kItemCols = "SELECT id, name, qty, price FROM items";

} // namespace

TEST_F(Cdc, loadsThenStreamsInsertsUpdatesAndDeletes)
{
    src.exec(kItems);
    src.exec("INSERT INTO items SELECT g, 'item ' || g, g % 7, g * 1.25 FROM generate_series(1, 2500) g");
    once({job("public.items")});
    EXPECT_EQ(hash(dst, kItemCols), hash(src, kItemCols));
    EXPECT_EQ(src.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'driftless_" + pipeline + "'"),
              "1");
    EXPECT_NE(position().find("\"phase\":\"stream\""), std::string::npos);

    src.exec("INSERT INTO items VALUES (9001, 'new', 1, 1)");
    src.exec("BEGIN; UPDATE items SET qty = qty + 100 WHERE id <= 50; DELETE FROM items WHERE id BETWEEN 100 AND 199; "
             "COMMIT");
    src.exec("UPDATE items SET name = 'renamed' WHERE id = 9001");
    once({job("public.items")});
    EXPECT_EQ(hash(dst, kItemCols), hash(src, kItemCols));
    // Every applied row carries its transaction's commit LSN, above the slot's starting point.
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE id = 9001 AND _driftless_version > "
                         "(SELECT min(_driftless_version) FROM items)"),
              "1");
    // The slot heard of the position the target holds (or, idle, of the WAL end past it).
    auto stored = nlohmann::json::parse(position())["lsn"].get<std::string>();
    EXPECT_EQ(src.scalar("SELECT confirmed_flush_lsn >= '" + stored +
                         "'::pg_lsn FROM pg_replication_slots WHERE "
                         "slot_name = 'driftless_" +
                         pipeline + "'"),
              "t");
}

TEST_F(Cdc, unchangedToastValuesAreNeverWrittenAsNull)
{
    // faults F13: >8 kB incompressible values stored out of line; updates of other columns.
    for (const char *identity : {"DEFAULT", "FULL"}) {
        SCOPED_TRACE(identity);
        pipeline = uniqueName("toast");
        src.exec("DROP TABLE IF EXISTS docs; CREATE TABLE docs (id int PRIMARY KEY, title text, body text); "
                 "ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL; "
                 "ALTER TABLE docs REPLICA IDENTITY " +
                 std::string(identity));
        src.exec("INSERT INTO docs SELECT g, 't' || g, (SELECT string_agg(md5(random()::text || i), '') FROM "
                 "generate_series(1, 300) i) FROM generate_series(1, 20) g");
        dst.exec(
            "DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public; DROP SCHEMA IF EXISTS _driftless CASCADE");
        once({job("public.docs")});
        // An update that leaves the big value alone, and an insert plus a partial update of the
        // same key inside one transaction (one batch).
        src.exec("UPDATE docs SET title = 'edited' WHERE id <= 10");
        src.exec("BEGIN; INSERT INTO docs VALUES (100, 'fresh', repeat(md5('x'), 400)); "
                 "UPDATE docs SET title = 'fresh edited' WHERE id = 100; COMMIT");
        once({job("public.docs")});
        EXPECT_EQ(dst.scalar("SELECT count(*) FROM docs WHERE body IS NULL"), "0");
        EXPECT_EQ(hash(dst, "SELECT id, title, body FROM docs"), hash(src, "SELECT id, title, body FROM docs"));
        EXPECT_EQ(dst.scalar("SELECT title FROM docs WHERE id = 100"), "fresh edited");
    }
}

TEST_F(Cdc, keyChangesOfRowsWithUnchangedLargeValuesReadThoseRowsFromTheSource)
{
    // A key update leaves the large value unsent ('u'); the target lacks the new key, so the
    // row is read from the source: 1,500 of them (more than one lookup of 1,000 keys), with a
    // composite key whose text part needs quoting in an array literal, some deleted at the
    // source after the key change (read as gone; their delete follows in the stream).
    src.exec("CREATE TABLE docs (region text, id int, title text, body text, PRIMARY KEY (region, id)); "
             "ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL");
    src.exec("INSERT INTO docs SELECT (ARRAY['plain', 'q\"uote', 'back\\slash', 'c,o{m}ma'])[1 + g % 4], g, "
             "'t' || g, repeat(md5(g::text), 100) FROM generate_series(1, 1600) g");
    once({job("public.docs")});
    obs.events.clear();
    src.exec("UPDATE docs SET id = id + 10000 WHERE id <= 1500");
    src.exec("DELETE FROM docs WHERE id BETWEEN 10001 AND 10020");
    once({job("public.docs")});
    const char *cols = "SELECT region, id, title, body FROM docs";
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM docs WHERE body IS NULL"), "0");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM docs"), "1580");
    EXPECT_EQ(hash(dst, cols, "region, id"), hash(src, cols, "region, id"));
    EXPECT_TRUE(obs.sawEvent("rows with unsent large values read from the source"))
        << ::testing::PrintToString(obs.events);
}

TEST_F(Cdc, primaryKeyUpdatesMoveTheRow)
{
    src.exec(kItems);
    src.exec("INSERT INTO items SELECT g, 'i', 1, 1 FROM generate_series(1, 10) g");
    once({job("public.items")});
    src.exec("UPDATE items SET id = id + 1000 WHERE id <= 3");
    once({job("public.items")});
    EXPECT_EQ(dst.scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM items"), "4,5,6,7,8,9,10,1001,1002,1003");
}

TEST_F(Cdc, aPrimaryKeyWithIncludeColumnsKeysOnItsKeyColumnsOnly)
{
    // PRIMARY KEY (id) INCLUDE (a, b): the key is the first indnkeyatts columns of the index. Read
    // as all of indkey, the target's key became (id, a, b) and every update of a inserted a
    // second row (200 source rows, 230 target rows after 30 updates).
    src.exec("CREATE TABLE inc (id int, a int, b text, c text, PRIMARY KEY (id) INCLUDE (a, b))");
    src.exec("INSERT INTO inc SELECT g, g, 'b' || g, 'c' || g FROM generate_series(1, 200) g");
    auto conn = src.connect();
    EXPECT_EQ(pgcatalog::describeTable(conn, {"public", "inc"}).primaryKey, std::vector<int>{0});
    for (const auto &t : discoverTables(conn)) {
        if (t.table.name == "inc") {
            EXPECT_EQ(t.primaryKey, std::vector<std::string>{"id"});
        }
    }
    once({job("public.inc")});
    src.exec("UPDATE inc SET a = a + 1000 WHERE id <= 30");
    src.exec("UPDATE inc SET b = 'moved' WHERE id BETWEEN 31 AND 40; DELETE FROM inc WHERE id > 190");
    once({job("public.inc")});
    const char *cols = "SELECT id, a, b, c FROM inc";
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM inc"), "190");
    EXPECT_EQ(hash(dst, cols), hash(src, cols));
    EXPECT_EQ(dst.scalar("SELECT indnkeyatts FROM pg_index WHERE indrelid = 'inc'::regclass AND indisprimary"), "1");
}

// A target table an older version made with the wrong key (id, a, b) for PRIMARY KEY (id) INCLUDE
// (a, b) keeps the duplicates it made: the doctor (and so `apply`) names it and the way out.
TEST_F(Cdc, theDoctorNamesATargetTableKeyedByMoreThanTheSourcesKey)
{
    src.exec("CREATE TABLE inc (id int, a int, b text, PRIMARY KEY (id) INCLUDE (a, b))");
    src.exec("CREATE TABLE fine (id int PRIMARY KEY, a int)");
    dst.exec("CREATE TABLE inc (id int, a int, b text, _driftless_version bigint NOT NULL, PRIMARY KEY (id, a, b))");
    Workspace ws;
    ws.endpoints["src"] = pgEndpoint("src", src.name());
    ws.endpoints["dst"] = pgEndpoint("dst", dst.name());
    PipelineSpec p;
    p.name = pipeline;
    p.source = "src";
    p.target = "dst";
    for (const char *t : {"public.inc", "public.fine"}) {
        TableSpec spec;
        spec.table = TableRef::parse(t);
        spec.strategy = Strategy::Cdc;
        p.tables.push_back(spec);
    }
    ws.pipelines.push_back(p);
    std::vector<Finding> keyFindings;
    for (const auto &f : runDoctor(ws))
        if (f.message.find("keys by") != std::string::npos)
            keyFindings.push_back(f);
    ASSERT_EQ(keyFindings.size(), 1u) << "only the table with the wrong key";
    const auto &f = keyFindings.front();
    EXPECT_EQ(std::string(toString(f.level)), "error");
    EXPECT_EQ(f.subject, "table public.inc");
    EXPECT_NE(f.message.find("keys by (id, a, b), the source by (id)"), std::string::npos) << f.message;
    EXPECT_NE(f.fix.find("DROP TABLE public.inc"), std::string::npos) << f.fix;
    EXPECT_NE(f.fix.find("driftless-cli resnapshot " + pipeline + " public.inc"), std::string::npos) << f.fix;
    // Made by this version, the target keys like the source: nothing to say.
    dst.exec("DROP TABLE inc");
    once({job("public.inc"), job("public.fine")});
    for (const auto &g : runDoctor(ws))
        EXPECT_EQ(g.message.find("keys by"), std::string::npos) << g.message;
}

TEST_F(Cdc, truncateIsAppliedOrIgnoredAsConfigured)
{
    src.exec(kItems);
    src.exec(
        "CREATE TABLE keep (id int PRIMARY KEY, v text); INSERT INTO keep SELECT g, 'k' FROM generate_series(1, 5) g");
    src.exec("INSERT INTO items SELECT g, 'i', 1, 1 FROM generate_series(1, 10) g");
    std::vector<TableJob> jobs{job("public.items"), job("public.keep", "ignore")};
    once(jobs);
    src.exec("BEGIN; INSERT INTO items VALUES (50, 'before', 1, 1); TRUNCATE items, keep; "
             "INSERT INTO items VALUES (51, 'after', 1, 1); COMMIT");
    once(jobs);
    EXPECT_EQ(dst.scalar("SELECT string_agg(id::text, ',') FROM items"), "51");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM keep"), "5") << "truncate: ignore keeps the target's rows";
}

TEST_F(Cdc, anAddedColumnIsAddedToTheTargetAndOtherChangesPauseTheTable)
{
    src.exec(kItems);
    src.exec("CREATE TABLE other (id int PRIMARY KEY, v text)");
    src.exec("INSERT INTO items SELECT g, 'i', 1, 1 FROM generate_series(1, 10) g");
    std::vector<TableJob> jobs{job("public.items"), job("public.other")};
    once(jobs);
    src.exec("ALTER TABLE items ADD COLUMN color text; UPDATE items SET color = 'red' WHERE id = 1");
    once(jobs);
    EXPECT_EQ(dst.scalar("SELECT color FROM items WHERE id = 1"), "red");

    // A dropped column is kept on the target and no longer written (drop_column: keep, the
    // default): the table streams on.
    src.exec("ALTER TABLE items DROP COLUMN qty; UPDATE items SET name = 'after drop' WHERE id = 2");
    once(jobs);
    EXPECT_EQ(dst.scalar("SELECT name || ':' || qty FROM items WHERE id = 2"), "after drop:1")
        << "the kept column holds its last value";

    // A retype that is no widening (text to integer) pauses the table with the reason and the
    // ALTER to run; the other tables stream on.
    src.exec(
        "ALTER TABLE items ALTER COLUMN name TYPE int USING length(name); UPDATE items SET name = 42 WHERE id = 3; "
        "INSERT INTO other VALUES (1, 'still flowing')");
    obs.states.clear();
    once(jobs);
    EXPECT_EQ(dst.scalar("SELECT name FROM items WHERE id = 3"), "i") << "a paused table takes no changes";
    EXPECT_EQ(dst.scalar("SELECT v FROM other WHERE id = 1"), "still flowing") << "other tables keep streaming";
    bool paused = false;
    for (auto &s : obs.states)
        paused = paused || (s.rfind("paused: ", 0) == 0 && s.find("name") != std::string::npos &&
                            s.find("resnapshot") != std::string::npos);
    EXPECT_TRUE(paused) << "the table must be paused with the reason and the fix; states: "
                        << ::testing::PrintToString(obs.states);
}

// P4: an error that is one table's (here a CHECK constraint a DBA added to the target) stops
// that table alone. Before, it failed the whole pipeline: no table streamed until it was fixed.
TEST_F(Cdc, aTableItsTargetRefusesStopsAloneWhileTheOthersStreamOn)
{
    src.exec(kItems);
    src.exec("CREATE TABLE other (id int PRIMARY KEY, v int)");
    src.exec("INSERT INTO items SELECT g, 'i', g, 1 FROM generate_series(1, 10) g");
    src.exec("INSERT INTO other SELECT g, g FROM generate_series(1, 10) g");
    std::vector<TableJob> jobs{job("public.items"), job("public.other")};
    // As `run --once` runs them: the number of tables that ended red.
    auto runOnce = [&] {
        Scheduler::Options o;
        o.once = true;
        return Scheduler(jobs, obs, o).run({});
    };
    ASSERT_EQ(runOnce(), 0);
    const std::string others = "SELECT id, v FROM other";

    dst.exec("ALTER TABLE items ADD CONSTRAINT qty_small CHECK (qty < 1000)");
    // One transaction writes both tables: the other table's part of it must still land.
    src.exec("BEGIN; INSERT INTO other VALUES (11, 11); UPDATE items SET qty = 5000 WHERE id = 3; "
             "INSERT INTO other VALUES (12, 12); COMMIT");
    src.exec("INSERT INTO other VALUES (13, 13)");
    EXPECT_EQ(runOnce(), 1) << "the stopped table is reported";
    EXPECT_EQ(hash(dst, others), hash(src, others)) << "the other table streams on";
    EXPECT_EQ(dst.scalar("SELECT qty FROM items WHERE id = 3"), "3");
    const std::string red = obs.lastStateOf("public.items");
    EXPECT_EQ(red.rfind("error: stopped: ", 0), 0u) << red;
    EXPECT_NE(red.find("qty_small"), std::string::npos) << "the reason: " << red;
    EXPECT_NE(red.find("driftless-cli backfill " + pipeline + " public.items"), std::string::npos)
        << "what to do: " << red;
    EXPECT_EQ(obs.lastStateOf("public.other"), "ok");

    // A restart keeps it stopped (no new failure), the others go on, and the stopped table holds
    // no WAL: the slot moves past its changes.
    src.exec("INSERT INTO other VALUES (14, 14); UPDATE items SET name = 'later' WHERE id = 4");
    const std::string lsn = src.scalar("SELECT pg_current_wal_lsn()");
    obs.events.clear();
    EXPECT_EQ(runOnce(), 1);
    EXPECT_EQ(hash(dst, others), hash(src, others));
    EXPECT_EQ(dst.scalar("SELECT name FROM items WHERE id = 4"), "i") << "a stopped table takes no changes";
    EXPECT_EQ(obs.lastStateOf("public.items"), red) << "it says why, as before";
    EXPECT_FALSE(obs.sawEvent("was stopped by an error")) << "nothing failed again";
    EXPECT_EQ(src.scalar("SELECT confirmed_flush_lsn >= '" + lsn +
                         "'::pg_lsn FROM pg_replication_slots WHERE "
                         "slot_name = 'driftless_" +
                         pipeline + "'"),
              "t");

    // Fixed on the source; the copy asked for ends the stop, while the stream goes on.
    src.exec("UPDATE items SET qty = 999 WHERE id = 3");
    rebackfill(jobs);
    src.exec("UPDATE items SET name = 'streamed again' WHERE id = 5");
    EXPECT_EQ(runOnce(), 0);
    EXPECT_EQ(hash(dst, kItemCols), hash(src, kItemCols));
    EXPECT_EQ(obs.lastStateOf("public.items"), "ok");
    EXPECT_EQ(position().find("stopped"), std::string::npos) << position();
}

TEST_F(Cdc, aTableWithoutAPrimaryKeyIsRefusedWithTheFix)
{
    // faults F17
    src.exec("CREATE TABLE nokey (a int, b text)");
    try {
        once({job("public.nokey")});
        FAIL() << "expected a refusal";
    } catch (const SchemaError &e) {
        EXPECT_NE(std::string(e.what()).find("no primary key"), std::string::npos) << e.what();
        EXPECT_NE(e.hint().find("ADD PRIMARY KEY"), std::string::npos) << e.hint();
    }
    EXPECT_EQ(src.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'driftless_" + pipeline + "'"),
              "0")
        << "nothing is created for a refused pipeline";
}

TEST_F(Cdc, aReplicaIdentityWithoutTheKeyIsRefusedAndOneWithItStreamsDeletes)
{
    // The old row of an update or delete carries the replica identity. Under NOTHING it carries
    // nothing; under USING INDEX on (email) it carries the email alone, so a delete named no
    // target row and the row stayed. Both are refused, at apply and when the pipeline starts.
    src.exec("CREATE TABLE ri (id int PRIMARY KEY, email text NOT NULL UNIQUE, note text); "
             "CREATE UNIQUE INDEX ri_id_email ON ri (id, email); "
             "INSERT INTO ri SELECT g, 'u' || g || '@x', 'n' FROM generate_series(1, 50) g");
    for (const char *identity : {"NOTHING", "USING INDEX ri_email_key"}) {
        SCOPED_TRACE(identity);
        src.exec(std::string("ALTER TABLE ri REPLICA IDENTITY ") + identity);
        try {
            once({job("public.ri")});
            FAIL() << "expected a refusal";
        } catch (const SchemaError &e) {
            EXPECT_NE(std::string(e.what()).find("REPLICA IDENTITY"), std::string::npos) << e.what();
            EXPECT_NE(e.hint().find("REPLICA IDENTITY DEFAULT"), std::string::npos) << e.hint();
        }
        TempDir dir;
        writeFile(dir.file("ws.yaml"), "endpoints:\n  s: { kind: postgres, dsn: \"" + src.dsn() +
                                           "\" }\n  d: { kind: postgres, dsn: \"" + dst.dsn() +
                                           "\" }\npipelines:\n  - name: " + pipeline +
                                           "\n    source: s\n    target: d\n    tables:\n"
                                           "      - { table: public.ri, strategy: cdc }\n");
        auto r = runCli({"--state", dir.file("ws.db"), "apply", dir.file("ws.yaml")});
        EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
        EXPECT_NE((r.out + r.err).find("REPLICA IDENTITY"), std::string::npos) << r.out << r.err;
    }
    // An identity index that holds the key: deletes and key changes match their rows.
    src.exec("ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_id_email");
    once({job("public.ri")});
    src.exec("DELETE FROM ri WHERE id <= 5; UPDATE ri SET id = id + 100 WHERE id BETWEEN 6 AND 8; "
             "UPDATE ri SET note = 'changed' WHERE id = 9");
    once({job("public.ri")});
    const char *cols = "SELECT id, email, note FROM ri";
    EXPECT_EQ(hash(dst, cols), hash(src, cols));
}

TEST_F(Cdc, aPartitionedTableStreamsThroughItsRootAndAPublicationOfItsPartitionsIsRefused)
{
    // Rows move between partitions by an UPDATE of the partition key: through the root that is
    // a delete and an insert of one table. A DBA's publication without publish_via_partition_root
    // sends the partitions' changes under their own names, which would never reach the root's
    // target: refused with the fix, at apply and when the pipeline starts.
    src.exec(
        "CREATE TABLE parts (id int, region text, v int, PRIMARY KEY (id, region)) PARTITION BY LIST (region); "
        "CREATE TABLE parts_eu PARTITION OF parts FOR VALUES IN ('eu'); "
        "CREATE TABLE parts_us PARTITION OF parts FOR VALUES IN ('us'); "
        "INSERT INTO parts SELECT g, CASE WHEN g % 2 = 0 THEN 'eu' ELSE 'us' END, g FROM generate_series(1, 100) g");
    const char *cols = "SELECT id, region, v FROM parts";
    once({job("public.parts")});
    src.exec("UPDATE parts SET region = 'us' WHERE id <= 10 AND region = 'eu'; UPDATE parts SET v = -v WHERE id > 90; "
             "DELETE FROM parts WHERE id BETWEEN 50 AND 59");
    once({job("public.parts")});
    EXPECT_EQ(hash(dst, cols, "id, region"), hash(src, cols, "id, region"));

    src.exec("CREATE PUBLICATION leaves FOR TABLE parts");
    pipeline = uniqueName("dbapub");
    try {
        CdcPipeline p({job("public.parts")}, std::string("leaves"), obs);
        p.run({}, {true});
        FAIL() << "expected a refusal";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("as its partitions"), std::string::npos) << e.what();
        EXPECT_NE(e.hint().find("publish_via_partition_root = true"), std::string::npos) << e.hint();
    }
    TempDir dir;
    writeFile(dir.file("ws.yaml"), "endpoints:\n  s: { kind: postgres, dsn: \"" + src.dsn() +
                                       "\" }\n  d: { kind: postgres, dsn: \"" + dst.dsn() +
                                       "\" }\npipelines:\n  - name: " + pipeline +
                                       "\n    source: s\n    target: d\n    publication: leaves\n    tables:\n"
                                       "      - { table: public.parts, strategy: cdc }\n");
    auto r = runCli({"--state", dir.file("ws.db"), "apply", dir.file("ws.yaml")});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("publish_via_partition_root"), std::string::npos) << r.out << r.err;

    src.exec("ALTER PUBLICATION leaves SET (publish_via_partition_root = true)");
    r = runCli({"--state", dir.file("ws.db"), "apply", dir.file("ws.yaml")});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    dst.exec("DROP TABLE parts");
    {
        CdcPipeline p({job("public.parts")}, std::string("leaves"), obs);
        p.run({}, {true});
    }
    src.exec("UPDATE parts SET region = 'eu' WHERE id <= 5");
    {
        CdcPipeline p({job("public.parts")}, std::string("leaves"), obs);
        p.run({}, {true});
    }
    EXPECT_EQ(hash(dst, cols, "id, region"), hash(src, cols, "id, region"));
}

TEST_F(Cdc, anInheritanceParentSyncsItsOwnRowsOnlyByEveryStrategy)
{
    // A child table of an inheritance tree is a table of its own: a publication of the parent
    // (FOR TABLE ONLY) streams the parent's own rows alone, so the load, the re-reads and the
    // other strategies must read the parent ONLY too, or the child's rows land in the parent's
    // target and never change again.
    src.exec("CREATE TABLE animals (id int PRIMARY KEY, name text, updated_at timestamptz NOT NULL DEFAULT now()); "
             "CREATE TABLE dogs (id int PRIMARY KEY, breed text) INHERITS (animals); "
             "INSERT INTO animals (id, name) SELECT g, 'a' || g FROM generate_series(1, 10) g; "
             "INSERT INTO dogs (id, name, breed) SELECT g, 'd' || g, 'b' FROM generate_series(101, 105) g");
    const char *own = "SELECT id, name FROM ONLY animals";
    once({job("public.animals")});
    src.exec("UPDATE animals SET name = 'renamed' WHERE id IN (1, 101); INSERT INTO dogs (id, name) VALUES (106, 'd'); "
             "DELETE FROM animals WHERE id IN (2, 102)");
    once({job("public.animals")});
    EXPECT_EQ(hash(dst, "SELECT id, name FROM animals"), hash(src, own));
    EXPECT_EQ(src.scalar("SELECT count(*) FROM pg_publication_tables WHERE pubname = 'driftless_" + pipeline + "'"),
              "1")
        << "the publication holds the parent alone";
    for (Strategy strategy : {Strategy::FullRefresh, Strategy::Cursor}) {
        SCOPED_TRACE(toString(strategy));
        TableSpec spec;
        spec.table = {"public", "animals"};
        spec.strategy = strategy;
        const std::string schema = "by_" + std::string(toString(strategy));
        TableSync sync(
            makeJob(uniqueName("inh"), spec, pgEndpoint("src", src.name()), pgEndpoint("dst", dst.name()), schema),
            obs);
        sync.runOnce({});
        EXPECT_EQ(hash(dst, "SELECT id, name FROM " + schema + ".animals"), hash(src, own));
    }
}

TEST_F(Cdc, aSlotDroppedBehindOurBackStopsThePipelineLoudly)
{
    // faults F4
    src.exec(kItems);
    src.exec("INSERT INTO items VALUES (1, 'a', 1, 1)");
    once({job("public.items")});
    src.exec("SELECT pg_drop_replication_slot('driftless_" + pipeline + "')");
    src.exec("INSERT INTO items VALUES (2, 'lost?', 1, 1)");
    expectStopsLoudly("no longer exists");
    EXPECT_EQ(src.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'driftless_" + pipeline + "'"),
              "0")
        << "no silent re-creation";
}

TEST_F(Cdc, aSlotRecreatedBehindOurBackStopsThePipelineLoudly)
{
    // faults F4, second half: same name, same plugin, same database, but it starts after changes
    // we never received.
    src.exec(kItems);
    src.exec("INSERT INTO items VALUES (1, 'a', 1, 1)");
    once({job("public.items")});
    const std::string slot = "driftless_" + pipeline;
    src.exec("SELECT pg_drop_replication_slot('" + slot + "')");
    src.exec("INSERT INTO items VALUES (2, 'never sent', 1, 1)");
    src.exec("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
    src.exec("INSERT INTO items VALUES (3, 'sent', 1, 1)");
    expectStopsLoudly("recreated or advanced behind");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items"), "1") << "nothing applied from a stream with a hole in it";
}

TEST_F(Cdc, replayingFromAnOlderPositionChangesNothing)
{
    // faults F12: the source sends again what the target already has, first with the target's
    // checkpoint ahead of the slot (an acknowledgement lost after the target committed), then
    // with both rewound (every change re-applied through the guarded merge). Not one row may be
    // rewritten: the rows' xmin stays as it was.
    src.exec(kItems);
    src.exec("INSERT INTO items SELECT g, 'n' || g, g, g FROM generate_series(1, 300) g");
    once({job("public.items")});
    const std::string slot = "driftless_" + pipeline;
    src.exec("SELECT pg_copy_logical_replication_slot('" + slot + "', '" + slot + "_keep')");
    const std::string oldPosition = position();
    const std::string oldVersion = dst.scalar("SELECT version FROM _driftless.checkpoints");
    std::mt19937 rng(12);
    for (int i = 0; i < 40; ++i) {
        const auto a = std::to_string(1 + rng() % 300), b = std::to_string(1 + rng() % 300);
        switch (i % 5) {
        case 0:
            src.exec("UPDATE items SET qty = qty + 1 WHERE id IN (" + a + ", " + b + ")");
            break;
        case 1:
            src.exec("DELETE FROM items WHERE id = " + a);
            break;
        case 2:
            src.exec("INSERT INTO items VALUES (" + std::to_string(1000 + i) + ", 'new', 1, 1)");
            break;
        case 3:
            src.exec("UPDATE items SET id = id + 5000 WHERE id = " + a);
            break;
        default:
            src.exec("BEGIN; UPDATE items SET name = 'x" + std::to_string(i) + "' WHERE id = " + b +
                     "; DELETE FROM items WHERE id = " + std::to_string(1000 + i - 2) + "; INSERT INTO items VALUES (" +
                     std::to_string(2000 + i) + ", 'multi', 2, 2); COMMIT");
        }
    }
    once({job("public.items")});
    const std::string want = hash(src, kItemCols);
    ASSERT_EQ(hash(dst, kItemCols), want);
    const std::string rowsBefore = hash(dst, "SELECT id, xmin::text, _driftless_version FROM items");
    const std::string newPosition = position();
    auto rewindSlot = [&] {
        src.exec("SELECT pg_drop_replication_slot('" + slot + "')");
        src.exec("SELECT pg_copy_logical_replication_slot('" + slot + "_keep', '" + slot + "')");
    };

    rewindSlot();
    once({job("public.items")});
    EXPECT_EQ(hash(dst, kItemCols), want);
    EXPECT_EQ(hash(dst, "SELECT id, xmin::text, _driftless_version FROM items"), rowsBefore)
        << "a replay behind the checkpoint rewrote rows";

    rewindSlot();
    dst.exec("UPDATE _driftless.checkpoints SET position = '" + oldPosition + "', version = " + oldVersion);
    once({job("public.items")});
    EXPECT_EQ(hash(dst, kItemCols), want);
    EXPECT_EQ(hash(dst, "SELECT id, xmin::text, _driftless_version FROM items"), rowsBefore)
        << "changes applied a second time rewrote rows";
    const std::string lsnNow = nlohmann::json::parse(position())["lsn"];
    const std::string lsnBefore = nlohmann::json::parse(newPosition)["lsn"];
    EXPECT_EQ(src.scalar("SELECT '" + lsnNow + "'::pg_lsn >= '" + lsnBefore + "'::pg_lsn"), "t")
        << "the checkpoint went back from " << lsnBefore << " to " << lsnNow;
    src.exec("SELECT pg_drop_replication_slot('" + slot + "_keep')");
}

TEST_F(Cdc, anIdleSlotAdvancesWhenOnlyOtherTablesAreWritten)
{
    // faults F18: keepalives are acknowledged, so WAL is freed.
    src.exec(kItems);
    src.exec("CREATE TABLE busy (id serial PRIMARY KEY, v text)");
    src.exec("INSERT INTO items VALUES (1, 'a', 1, 1)");
    once({job("public.items")});
    const std::string slot = "driftless_" + pipeline;
    auto before = src.scalar("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
    std::stop_source stop;
    std::thread runner([&] {
        CdcPipeline p({job("public.items")}, std::nullopt, obs);
        try {
            p.run(stop.get_token(), {false});
        } catch (...) {
        }
    });
    for (int i = 0; i < 30; ++i) {
        src.exec("INSERT INTO busy (v) SELECT 'x' FROM generate_series(1, 200)");
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    auto lsnNow = src.scalar("SELECT pg_current_wal_lsn()");
    std::string after;
    for (int i = 0; i < 100; ++i) {
        after = src.scalar("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
        if (src.scalar("SELECT '" + after + "'::pg_lsn >= '" + lsnNow + "'::pg_lsn") == "t")
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    stop.request_stop();
    runner.join();
    EXPECT_EQ(src.scalar("SELECT '" + after + "'::pg_lsn >= '" + lsnNow + "'::pg_lsn"), "t")
        << "confirmed_flush_lsn stayed at " << after << " (started at " << before << ", WAL at " << lsnNow << ")";
}

TEST_F(Cdc, aConfiguredHeartbeatMovesTheCheckpointOfAnIdleSource)
{
    // faults F18, second half: with `heartbeat:` the engine writes a transactional message into
    // the source database; it comes back through the slot as a transaction of its own, whose end
    // the target's checkpoint and the slot's confirmed_flush_lsn then move to. Nothing else
    // writes into this database, so without heartbeats the checkpoint would not move.
    src.exec(kItems);
    src.exec("INSERT INTO items VALUES (1, 'a', 1, 1)");
    auto j = job("public.items");
    j.heartbeat = std::chrono::milliseconds(1000);
    once({j});
    auto lsnOf = [&] { return nlohmann::json::parse(position())["lsn"].get<std::string>(); };
    const std::string first = lsnOf();
    const std::string slot = "driftless_" + pipeline;
    std::stop_source stop;
    std::thread runner([&] {
        CdcPipeline p({j}, std::nullopt, obs);
        try {
            p.run(stop.get_token(), {false});
        } catch (const std::exception &e) {
            std::printf("pipeline stopped: %s\n", e.what());
        }
    });
    std::set<std::string> seen{first};
    for (int i = 0; i < 100 && seen.size() < 3; ++i) {
        seen.insert(lsnOf());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const std::string last = lsnOf();
    std::string confirmed;
    for (int i = 0; i < 50; ++i) {
        confirmed = src.scalar("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
        if (src.scalar("SELECT '" + confirmed + "'::pg_lsn >= '" + last + "'::pg_lsn") == "t")
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    stop.request_stop();
    runner.join();
    EXPECT_GE(seen.size(), 3u) << "the checkpoint moved with heartbeats only " << seen.size() - 1 << " times";
    EXPECT_EQ(src.scalar("SELECT '" + confirmed + "'::pg_lsn >= '" + last + "'::pg_lsn"), "t")
        << "the slot was not acknowledged at the heartbeat's position " << last << " (confirmed " << confirmed << ")";
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items"), "1") << "a heartbeat is not a change";
    EXPECT_FALSE(obs.sawEvent("cannot write a heartbeat"));
}

TEST_F(Cdc, aTransactionBiggerThanABatchCommitsAtomically)
{
    src.exec(kItems);
    once({job("public.items")});
    // 25 batches' worth of rows in one transaction, with updates of its own rows in between.
    src.exec("BEGIN; INSERT INTO items SELECT g, 'bulk', 0, 1 FROM generate_series(1, 150000) g; "
             "UPDATE items SET qty = 7 WHERE id % 1000 = 0; DELETE FROM items WHERE id % 5000 = 1; COMMIT");
    once({job("public.items")});
    EXPECT_EQ(hash(dst, kItemCols), hash(src, kItemCols));
}

TEST_F(Cdc, aNewTableAddedToARunningPipelineIsLoadedThenStreamed)
{
    src.exec(kItems);
    src.exec("CREATE TABLE later (id int PRIMARY KEY, v text); INSERT INTO later SELECT g, 'v' FROM generate_series(1, "
             "300) g");
    src.exec("INSERT INTO items VALUES (1, 'a', 1, 1)");
    once({job("public.items")});
    src.exec("INSERT INTO items VALUES (2, 'b', 1, 1); UPDATE later SET v = 'changed' WHERE id = 5");
    once({job("public.items"), job("public.later")});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM later"), "300");
    EXPECT_EQ(dst.scalar("SELECT v FROM later WHERE id = 5"), "changed");
    src.exec("DELETE FROM later WHERE id = 6; INSERT INTO items VALUES (3, 'c', 1, 1)");
    once({job("public.items"), job("public.later")});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM later"), "299");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items"), "3");
}

TEST_F(Cdc, intoSqlite)
{
    TempDir dir;
    src.exec(kItems);
    src.exec("INSERT INTO items SELECT g, 'i', g, g FROM generate_series(1, 100) g");
    TableSpec spec;
    spec.table = {"public", "items"};
    spec.strategy = Strategy::Cdc;
    std::vector<TableJob> jobs{
        makeJob(pipeline, spec, pgEndpoint("s", src.name()), sqliteEndpoint("l", dir.file("r.db")))};
    once(jobs);
    src.exec("UPDATE items SET name = 'u' WHERE id <= 10; DELETE FROM items WHERE id > 90");
    once(jobs);
    SqliteDb db(dir.file("r.db"));
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM items"), 90);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM items WHERE name = 'u'"), 10);
}

TEST_F(Cdc, aReBackfillRewritesOnlyTheRowsThatDiffer)
{
    // A re-backfill of a table that is mostly right writes only what is wrong: rows equal to the
    // source keep their tuple (xmin) and their version.
    src.exec(kItems);
    src.exec("INSERT INTO items SELECT g, 'i' || g, g, g FROM generate_series(1, 5000) g");
    std::vector<TableJob> jobs{job("public.items")};
    once(jobs);
    const std::string untouched = "SELECT id, xmin::text, _driftless_version FROM items WHERE id > 10";
    const std::string before = hash(dst, untouched);
    dst.exec("DELETE FROM items WHERE id <= 5; UPDATE items SET name = 'drifted' WHERE id BETWEEN 6 AND 10;"
             "INSERT INTO items (id, name, qty, price, _driftless_version) VALUES (999999, 'extra', 1, 1, 0)");
    rebackfill(jobs);
    EXPECT_EQ(hash(dst, kItemCols), hash(src, kItemCols));
    EXPECT_EQ(hash(dst, untouched), before) << "rows equal to the source were rewritten";
    EXPECT_TRUE(obs.sawEvent("re-backfill done: 5000 rows merged, 1 rows the source no longer has removed"));
}

TEST_F(Cdc, aReBackfillComparesBucketsOfKeysAndCopiesOnlyTheOnesThatDiffer)
{
    // Keys 2, 4, ..., 20000, pages of 1500: each page is compared in buckets of 64 keys, and only
    // the buckets that differ are read from the snapshot and merged. Extra target rows below the
    // first key, between two source keys and past the last one are found and removed.
    src.exec(kItems);
    src.exec("INSERT INTO items SELECT 2 * g, 'i' || g, g, g FROM generate_series(1, 10000) g");
    auto j = job("public.items");
    j.spec.pageSize = 1500;
    std::vector<TableJob> jobs{j};
    once(jobs);
    const std::string untouched = "SELECT id, xmin::text, _driftless_version FROM items WHERE id > 12000";
    const std::string before = hash(dst, untouched);
    dst.exec("DELETE FROM items WHERE id = 100; UPDATE items SET name = 'drifted' WHERE id = 5000; "
             "UPDATE items SET price = NULL WHERE id = 9000; INSERT INTO items (id, name, qty, price, "
             "_driftless_version) VALUES (1, 'x', 1, 1, 0), (7777, 'x', 1, 1, 0), (30001, 'x', 1, 1, 0)");
    rebackfill(jobs);
    EXPECT_EQ(hash(dst, kItemCols), hash(src, kItemCols));
    EXPECT_EQ(hash(dst, untouched), before) << "rows equal to the source were rewritten";
    // Five buckets differ (keys 1 and 100 share the first): at most 5 x 64 of the 10,000 rows are
    // read and merged, every other one was found equal and left alone.
    const auto done = obs.eventIndex("re-backfill done");
    ASSERT_LT(done, obs.events.size());
    const std::string &msg = obs.events[done];
    EXPECT_NE(msg.find("re-backfill done: 10000 rows merged, 3 rows the source no longer has removed; "),
              std::string::npos)
        << msg;
    const auto at = msg.find("; ");
    ASSERT_NE(at, std::string::npos) << msg;
    const long long equal = std::stoll(msg.substr(at + 2));
    EXPECT_GE(equal, 10000 - 5 * 64) << msg;
    EXPECT_LT(equal, 10000) << msg;
}

TEST_F(Cdc, aReBackfillComparesAnyKeyByKeysetBuckets)
{
    // A composite key of text (mixed case, spaces: ordered by the collation both sides share) and
    // uuid: each page of the snapshot's keys is cut into buckets of 64 by key, both sides hash
    // their rows between the same bounds, and only differing buckets are copied. Extra target
    // rows before the first key, between two and past the last are removed.
    src.exec("CREATE TABLE tags (region text, id uuid, n int, label text, PRIMARY KEY (region, id))");
    src.exec("INSERT INTO tags SELECT (ARRAY['North', 'north east', 'Zeta', 'alpha', 'Beta b'])[1 + g % 5], "
             "md5(g::text)::uuid, g, 'l' || g FROM generate_series(1, 8000) g");
    auto j = job("public.tags");
    j.spec.pageSize = 1500;
    std::vector<TableJob> jobs{j};
    once(jobs);
    const std::string cols = "SELECT region, id, n, label FROM tags";
    const std::string untouched = "SELECT region, id, xmin::text, _driftless_version FROM tags WHERE region = 'Zeta'";
    const std::string before = hash(dst, untouched, "region, id");
    dst.exec("DELETE FROM tags WHERE n = 100; UPDATE tags SET label = 'drifted' WHERE n = 5001; "
             "UPDATE tags SET n = NULL WHERE n = 7004; INSERT INTO tags (region, id, n, label, _driftless_version) "
             "VALUES ('', md5('a')::uuid, 1, 'x', 0), ('north east', md5('b')::uuid, 1, 'x', 0), "
             "('zzzz', md5('c')::uuid, 1, 'x', 0)");
    rebackfill(jobs);
    EXPECT_EQ(hash(dst, cols, "region, id"), hash(src, cols, "region, id"));
    EXPECT_EQ(hash(dst, untouched, "region, id"), before) << "rows equal to the source were rewritten";
    const auto done = obs.eventIndex("re-backfill done");
    ASSERT_LT(done, obs.events.size());
    const std::string &msg = obs.events[done];
    EXPECT_NE(msg.find("re-backfill done: 8000 rows merged, 3 rows the source no longer has removed; "),
              std::string::npos)
        << msg;
    const auto at = msg.find("; ");
    ASSERT_NE(at, std::string::npos) << msg;
    const long long equal = std::stoll(msg.substr(at + 2));
    EXPECT_GE(equal, 8000 - 6 * 64) << msg;
    EXPECT_LT(equal, 8000) << msg;

    // The target's text key under another collation: its buckets could hold other rows than the
    // source's, so the re-backfill copies every row instead, and still ends equal.
    dst.exec("ALTER TABLE tags ALTER COLUMN region TYPE text COLLATE \"C\"; DELETE FROM tags WHERE n = 200; "
             "INSERT INTO tags (region, id, n, label, _driftless_version) VALUES ('a', md5('d')::uuid, 1, 'x', 0)");
    rebackfill(jobs);
    EXPECT_EQ(hash(dst, cols, "region, id"), hash(src, cols, "region, id"));
    const std::string &copied = obs.events[obs.eventIndex("re-backfill done")];
    EXPECT_EQ(copied.find("found equal by checksum"), std::string::npos) << copied;
}

TEST_F(Cdc, aComparedReBackfillResumesAfterAStopWhereItWas)
{
    // Stopped half-way, the compared copy resumes from its last page (the position says it
    // compares), and ends with the target equal to the source: the pages done before the stop
    // removed their own extra rows, the ones after it theirs.
    src.exec(kItems);
    src.exec("INSERT INTO items SELECT g, 'i' || g, g, g FROM generate_series(1, 20000) g");
    auto j = job("public.items");
    j.spec.pageSize = 500;
    std::vector<TableJob> jobs{j};
    once(jobs);
    dst.exec("DELETE FROM items WHERE id % 1000 = 7; UPDATE items SET name = 'drifted' WHERE id % 997 = 0; "
             "INSERT INTO items (id, name, qty, price, _driftless_version) SELECT 100000 + g, 'x', 1, 1, 0 FROM "
             "generate_series(1, 30) g; INSERT INTO items (id, name, qty, price, _driftless_version) VALUES "
             "(-5, 'x', 1, 1, 0)");
    src.exec("DELETE FROM items WHERE id = 3"); // after the load: the stream removes it too
    auto m = createMerger(j.target, {pipeline, {"public", "items"}, j.targetName, Strategy::Cdc});
    m->setRequest("rebackfill");
    streamUntil(jobs, [&] {
        auto pos = nlohmann::json::parse(position());
        return pos.contains("rebackfill") && pos["rebackfill"].value("rows", 0) >= 3000;
    });
    auto pos = nlohmann::json::parse(position());
    ASSERT_TRUE(pos.contains("rebackfill")) << "stopped before the copy ended: " << pos.dump();
    EXPECT_TRUE(pos["rebackfill"].value("compared", false)) << pos.dump();
    obs.events.clear();
    streamUntil(jobs, [&] { return obs.sawEvent("re-backfill done"); });
    EXPECT_TRUE(obs.sawEvent("resuming a re-backfill"));
    EXPECT_FALSE(obs.sawEvent("starts over"));
    EXPECT_TRUE(obs.sawEvent("re-backfill done"));
    EXPECT_EQ(hash(dst, kItemCols), hash(src, kItemCols));
}

TEST_F(Cdc, aReBackfillWhoseSeenKeysWereLostStartsOver)
{
    // A target server crash empties the unlogged table of seen keys. A re-backfill resumed after
    // it must not take the rows it merged before for rows the source no longer has. (A row
    // filter makes it copy every row, the way that keeps seen keys; the compared way removes
    // each page's rows with the page and keeps none.)
    src.exec(kItems);
    src.exec("INSERT INTO items SELECT g, 'i' || g, g, g FROM generate_series(1, 20000) g");
    auto j = job("public.items");
    j.spec.pageSize = 500;
    j.spec.where = "id > 0";
    std::vector<TableJob> jobs{j};
    once(jobs);
    auto m = createMerger(j.target, {pipeline, {"public", "items"}, j.targetName, Strategy::Cdc});
    m->setRequest("rebackfill");
    streamUntil(jobs, [&] {
        auto pos = nlohmann::json::parse(position());
        return pos.contains("rebackfill") && pos["rebackfill"].value("rows", 0) >= 3000;
    });
    auto pos = nlohmann::json::parse(position());
    ASSERT_TRUE(pos.contains("rebackfill")) << "stopped before the copy ended: " << pos.dump();
    const std::string seen =
        dst.scalar("SELECT relname FROM pg_class WHERE relname LIKE 'seen\\_items%' AND relnamespace = "
                   "'_driftless'::regnamespace");
    dst.exec("TRUNCATE _driftless." + seen);
    obs.events.clear();
    streamUntil(jobs, [&] { return obs.sawEvent("re-backfill done"); });
    EXPECT_TRUE(obs.sawEvent("re-backfill starts over"));
    EXPECT_TRUE(obs.sawEvent("re-backfill done: 20000 rows merged, 0 rows"));
    EXPECT_EQ(hash(dst, kItemCols), hash(src, kItemCols));
}

TEST_F(Cdc, aReBackfillIntoSqliteRepairsDrift)
{
    TempDir dir;
    src.exec(kItems);
    src.exec("INSERT INTO items SELECT g, 'i' || g, g, g FROM generate_series(1, 3000) g");
    TableSpec spec;
    spec.table = {"public", "items"};
    spec.strategy = Strategy::Cdc;
    spec.pageSize = 700;
    std::vector<TableJob> jobs{
        makeJob(pipeline, spec, pgEndpoint("s", src.name()), sqliteEndpoint("l", dir.file("r.db")))};
    once(jobs);
    {
        SqliteDb db(dir.file("r.db"));
        db.exec("DELETE FROM items WHERE id % 100 = 0; UPDATE items SET name = 'drifted' WHERE id % 77 = 0;"
                "INSERT INTO items (id, name, qty, price, _driftless_version) VALUES (999999, 'extra', 1, 1, 0)");
    }
    src.exec("UPDATE items SET qty = -1 WHERE id % 50 = 1");
    rebackfill(jobs);
    SqliteDb db(dir.file("r.db"));
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM items"), 3000);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM items WHERE name = 'drifted' OR id = 999999"), 0);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM items WHERE qty = -1"), 60);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM _driftless_seen_items"), 0) << "seen keys are forgotten at the end";
}

TEST_F(Cdc, aTransactionEndingExactlyOnABatchBoundaryIsCommittedAndNeverSkipped)
{
    // 100,000 rows: the last change fills the second 50,000-row piece exactly, so the commit
    // arrives with nothing left to stage. It must still close the target transaction, and the
    // slot must not be acknowledged past it before it is applied.
    src.exec(kItems);
    once({job("public.items")});
    src.exec("INSERT INTO items SELECT g, 'exact', 0, 1 FROM generate_series(1, 100000) g");
    once({job("public.items")});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items"), "100000");
    // A second pass finds nothing left to do and nothing lost.
    once({job("public.items")});
    EXPECT_EQ(hash(dst, kItemCols), hash(src, kItemCols));
}

TEST_F(Cdc, aTableIsReBackfilledWhileTheStreamGoesOn)
{
    src.exec(kItems);
    src.exec("CREATE TABLE other (id int PRIMARY KEY, v int)");
    src.exec("INSERT INTO items SELECT g, 'i', g, 1 FROM generate_series(1, 30000) g; "
             "INSERT INTO other SELECT g, 0 FROM generate_series(1, 100) g");
    std::vector<TableJob> jobs{job("public.items"), job("public.other")};
    once(jobs);
    // Drift the target by hand: the re-backfill repairs it.
    dst.exec("DELETE FROM items WHERE id % 100 = 0; UPDATE items SET name = 'drifted' WHERE id % 77 = 0; "
             "INSERT INTO items (id, name, qty, price, _driftless_version) VALUES (999999, 'extra', 1, 1, 0)");

    std::stop_source stop;
    std::thread runner([&] {
        CdcPipeline p(jobs, std::nullopt, obs);
        try {
            p.run(stop.get_token(), {false});
        } catch (const std::exception &e) {
            std::printf("pipeline stopped: %s\n", e.what());
        }
    });
    std::atomic<bool> writing{true};
    std::thread writer([&] {
        auto c = src.connect();
        std::mt19937 rng(11);
        while (writing) {
            c.exec("UPDATE items SET qty = qty + 1 WHERE id = " + std::to_string(1 + rng() % 30000));
            c.exec("UPDATE other SET v = v + 1 WHERE id = " + std::to_string(1 + rng() % 100));
            if (rng() % 5 == 0)
                c.exec("DELETE FROM items WHERE id = " + std::to_string(1 + rng() % 30000));
            std::this_thread::sleep_for(std::chrono::milliseconds(3));
        }
    });
    std::this_thread::sleep_for(std::chrono::seconds(1));
    auto m = createMerger(pgEndpoint("dst", dst.name()),
                          {pipeline, {"public", "items"}, {"public", "items"}, Strategy::Cdc});
    m->setRequest("rebackfill");
    bool done = false;
    for (int i = 0; i < 600 && !done; ++i) {
        done = obs.sawEvent("re-backfill done");
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    writing = false;
    writer.join();
    ASSERT_TRUE(done) << "the re-backfill did not finish";
    const size_t startedAt = obs.eventIndex("starting a re-backfill");
    const size_t doneAt = obs.eventIndex("re-backfill done");
    EXPECT_LT(startedAt, doneAt);
    EXPECT_GT(obs.batchesWithRows("public.other"), 0u) << "the other table kept streaming";
    std::this_thread::sleep_for(std::chrono::seconds(2));
    stop.request_stop();
    runner.join();
    once(jobs);
    EXPECT_EQ(hash(dst, kItemCols), hash(src, kItemCols)) << "drift repaired, concurrent changes kept";
    EXPECT_EQ(hash(dst, "SELECT id, v FROM other"), hash(src, "SELECT id, v FROM other"));
    EXPECT_EQ(m->pendingRequest(), "") << "the request was taken";
}

TEST_F(Cdc, slotCreationNamesTheTransactionItWaitsForAndAStopCancelsIt)
{
    src.exec(kItems);
    src.exec("INSERT INTO items SELECT g, 'item ' || g, g, g FROM generate_series(1, 100) g");
    // A session left idle in transaction after a write: the slot cannot be created before it ends.
    auto holder = src.connect();
    holder.begin();
    holder.exec("INSERT INTO items VALUES (101, 'held', 1, 1)");
    const std::string pid = holder.exec("SELECT pg_backend_pid()").text(0, 0);

    std::stop_source stop;
    std::atomic<bool> ended{false};
    std::string error;
    std::thread runner([&] {
        try {
            CdcPipeline p({job("public.items")}, std::nullopt, obs);
            p.run(stop.get_token(), {true});
        } catch (const std::exception &e) {
            error = e.what();
        }
        ended = true;
    });
    const std::string fix = "pg_terminate_backend(" + pid + ")";
    for (int i = 0; i < 600 && !obs.sawState(fix) && !ended; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(ended.load()) << error;
    // The table says who holds it up, and the log says it once.
    EXPECT_TRUE(obs.sawState("creating replication slot driftless_" + pipeline + ": waiting for 1 transaction"));
    EXPECT_TRUE(obs.sawState("pid " + pid));
    EXPECT_TRUE(obs.sawState("idle in transaction"));
    EXPECT_TRUE(obs.sawState(fix));
    EXPECT_TRUE(obs.sawEvent("warn slot_wait"));

    // Stopping does not wait for the transaction: the creation is cancelled, and no slot is left.
    stop.request_stop();
    for (int i = 0; i < 400 && !ended; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(ended.load());
    runner.join();
    EXPECT_EQ(src.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'driftless_" + pipeline + "'"),
              "0");

    // Once the transaction commits, the slot is created and its row is loaded with the rest.
    holder.commit();
    once({job("public.items")});
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items"), "101");
    EXPECT_EQ(hash(dst, kItemCols), hash(src, kItemCols));
}

namespace {

// Stored generated columns of two types: `total` depends on two columns, `label` on the key and
// on qty; `note` is in no expression.
const char *kGen = "CREATE TABLE gen (id int PRIMARY KEY, price numeric(10,2) NOT NULL, qty int, note text, "
                   "total numeric GENERATED ALWAYS AS (price * qty) STORED, "
                   "label text GENERATED ALWAYS AS ('#' || id || '/' || coalesce(qty, -1)) STORED)";
const char *kGenRows = "INSERT INTO gen (id, price, qty, note) SELECT g, g * 1.25, nullif(g % 7, 3), 'n' || g "
                       "FROM generate_series(1, 1500) g";
// Writes to the columns the generated ones depend on (and to one they do not), a key change
// (label depends on the key), an insert updated in its own transaction, and deletes.
const char *kGenChanges = "UPDATE gen SET qty = coalesce(qty, 0) + 10 WHERE id <= 100;"
                          "UPDATE gen SET price = price * 2 WHERE id BETWEEN 101 AND 150;"
                          "UPDATE gen SET note = 'only the note' WHERE id BETWEEN 151 AND 160;"
                          "UPDATE gen SET id = 6000 WHERE id = 1;"
                          "BEGIN; INSERT INTO gen (id, price, qty) VALUES (5000, 9.99, 3);"
                          "UPDATE gen SET qty = 4 WHERE id = 5000; COMMIT;"
                          "DELETE FROM gen WHERE id > 1400 AND id < 5000";
// The generated values as each side's own SQL prints them.
const char *kGenPg =
    "SELECT count(*) || ' ' || string_agg(id || '=' || coalesce(total::text, 'null') || '|' || label, ',' "
    "ORDER BY id) FROM gen";
const char *kGenLite =
    "SELECT count(*) || ' ' || group_concat(id || '=' || coalesce(total, 'null') || '|' || label, ',') "
    "FROM (SELECT * FROM gen ORDER BY id)";
const char *kGenMy = "SELECT CONCAT(COUNT(*), ' ', GROUP_CONCAT(CONCAT(id, '=', COALESCE(total, 'null'), '|', label) "
                     "ORDER BY id SEPARATOR ',')) FROM gen";

std::string sqliteScalar(const std::string &path, const std::string &sql)
{
    SqliteDb db(path, SqliteDb::Mode::ReadOnly);
    auto st = db.prepare(sql);
    return st.step() ? st.text(0) : "<no row>";
}

} // namespace

TEST_F(Cdc, storedGeneratedColumnsReachEveryTarget)
{
    // pgoutput (Postgres 15) does not send generated columns. A Postgres target computes them
    // with a generated column of its own; SQLite and MariaDB get their values, read from the
    // source by key for every insert and update.
    TempDir dir;
    MyTestDb my("cdcgen");
    src.exec(kGen);
    src.exec(kGenRows);
    TableSpec other;
    other.table = {"public", "gen"};
    other.strategy = Strategy::Cdc;
    other.pageSize = 700;
    std::vector<TableJob> toPg{job("public.gen")};
    std::vector<TableJob> toLite{
        makeJob(pipeline + "_lite", other, pgEndpoint("s", src.name()), sqliteEndpoint("l", dir.file("r.db")))};
    std::vector<TableJob> toMy{
        makeJob(pipeline + "_my", other, pgEndpoint("s", src.name()), myEndpoint("m", my.name()))};
    auto all = [&] {
        once(toPg);
        once(toLite);
        once(toMy);
    };
    all();
    EXPECT_EQ(dst.scalar(kGenPg), src.scalar(kGenPg));
    EXPECT_EQ(sqliteScalar(dir.file("r.db"), kGenLite), src.scalar(kGenPg));
    EXPECT_EQ(my.scalar(kGenMy), src.scalar(kGenPg));

    src.exec(kGenChanges);
    all();
    EXPECT_EQ(
        dst.scalar("SELECT string_agg(attname || ':' || attgenerated::text, ',' ORDER BY attnum) FROM pg_attribute "
                   "WHERE attrelid = 'gen'::regclass AND attname IN ('total', 'label')"),
        "total:s,label:s");
    EXPECT_EQ(dst.scalar(kGenPg), src.scalar(kGenPg));
    EXPECT_EQ(sqliteScalar(dir.file("r.db"), kGenLite), src.scalar(kGenPg));
    EXPECT_EQ(my.scalar(kGenMy), src.scalar(kGenPg));
    EXPECT_EQ(dst.scalar("SELECT label FROM gen WHERE id = 6000"), "#6000/11");
    EXPECT_EQ(hash(dst, "SELECT id, price, qty, note FROM gen"), hash(src, "SELECT id, price, qty, note FROM gen"));

    // A re-backfill into Postgres copies without writing the generated columns, and compares
    // rows without them: an equal table is left alone.
    auto m = createMerger(toPg.front().target, {pipeline, {"public", "gen"}, toPg.front().targetName, Strategy::Cdc});
    m->setRequest("rebackfill");
    obs.events.clear();
    const std::string tuples = dst.scalar("SELECT string_agg(xmin::text, ',' ORDER BY id) FROM gen");
    streamUntil(toPg, [&] { return obs.sawEvent("re-backfill done"); });
    EXPECT_TRUE(obs.sawEvent("re-backfill done: 1401 rows merged, 0 rows the source no longer has removed"));
    EXPECT_EQ(dst.scalar("SELECT string_agg(xmin::text, ',' ORDER BY id) FROM gen"), tuples);
    EXPECT_EQ(dst.scalar(kGenPg), src.scalar(kGenPg));
}

TEST_F(Cdc, aPlainColumnAnOlderVersionMadeInAPostgresTargetKeepsGettingTheValues)
{
    // A target created before generated columns were generated there (by full refresh or cursor
    // sync) holds them as plain columns: it stays so, and CDC writes the source's values into it.
    src.exec(kGen);
    src.exec(kGenRows);
    dst.exec("CREATE TABLE gen (id int PRIMARY KEY, price numeric(10,2) NOT NULL, qty int, note text, total numeric, "
             "label text, _driftless_version bigint NOT NULL DEFAULT 0)");
    once({job("public.gen")});
    EXPECT_EQ(dst.scalar(kGenPg), src.scalar(kGenPg));
    src.exec(kGenChanges);
    once({job("public.gen")});
    EXPECT_EQ(dst.scalar(kGenPg), src.scalar(kGenPg));
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM pg_attribute WHERE attrelid = 'gen'::regclass AND attgenerated <> ''"),
              "0");
}

TEST_F(Cdc, aCdcTargetThatLacksTheGeneratedColumnsGetsThemFilledOnItsNextStart)
{
    // What an older version left: CDC targets without the generated columns. The next start adds
    // them: a Postgres target computes them at once, SQLite's are filled by a re-backfill.
    TempDir dir;
    src.exec(kGen);
    src.exec(kGenRows);
    TableSpec lite;
    lite.table = {"public", "gen"};
    lite.strategy = Strategy::Cdc;
    std::vector<TableJob> toPg{job("public.gen")};
    std::vector<TableJob> toLite{
        makeJob(pipeline + "_lite", lite, pgEndpoint("s", src.name()), sqliteEndpoint("l", dir.file("r.db")))};
    once(toPg);
    once(toLite);
    dst.exec("ALTER TABLE gen DROP COLUMN total, DROP COLUMN label");
    {
        SqliteDb db(dir.file("r.db"));
        db.exec("ALTER TABLE gen DROP COLUMN total; ALTER TABLE gen DROP COLUMN label");
    }
    src.exec("UPDATE gen SET qty = 1 WHERE id = 2");
    once(toPg);
    EXPECT_EQ(dst.scalar(kGenPg), src.scalar(kGenPg));
    obs.events.clear();
    streamUntil(toLite, [&] { return obs.sawEvent("re-backfill done"); });
    EXPECT_TRUE(obs.sawEvent("re-backfill done"));
    EXPECT_EQ(sqliteScalar(dir.file("r.db"), kGenLite), src.scalar(kGenPg));
}

TEST_F(Cdc, aGenerationExpressionThePostgresTargetCannotRunBecomesAPlainColumnWithTheValues)
{
    // The expression calls a function only the source has: the target column is a plain one,
    // and the stream reads its values from the source like any target that stores them.
    src.exec("CREATE FUNCTION twice(int) RETURNS int IMMUTABLE LANGUAGE sql AS 'SELECT $1 * 2'");
    src.exec("CREATE TABLE calc (id int PRIMARY KEY, qty int, doubled int GENERATED ALWAYS AS (twice(qty)) STORED)");
    src.exec("INSERT INTO calc (id, qty) SELECT g, g FROM generate_series(1, 300) g");
    const std::string values = "SELECT count(*) || ' ' || sum(doubled) || ' ' || sum(id * doubled) FROM calc";
    once({job("public.calc")});
    EXPECT_EQ(dst.scalar(values), src.scalar(values));
    src.exec("UPDATE calc SET qty = -qty WHERE id % 3 = 0; INSERT INTO calc (id, qty) VALUES (1000, 7)");
    once({job("public.calc")});
    EXPECT_EQ(dst.scalar(values), src.scalar(values));
    EXPECT_EQ(dst.scalar("SELECT attgenerated::text FROM pg_attribute WHERE attrelid = 'calc'::regclass AND "
                         "attname = 'doubled'"),
              "");
}
