// Schema changes, dropped and retyped columns (`schema_changes: { drop_column: keep|drop|pause,
// type_change: widen|pause }`): a column the source drops is kept on the target and no longer
// written, dropped there too, or pauses the table; a column the source widens is widened on the
// target, any other retype pauses the table with the ALTER to run. Everything runs the way a DBA
// does it: YAML, `driftless-cli apply`, then `run`. Contents are compared with the same query on
// each side, never with the engine's own hashing.

#include "core/config/workspacefile.h"
#include "core/db/sqlitedb.h"
#include "core/model/error.h"
#include "core/state/statestore.h"
#include "tests/support/testsupport.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

/// How often this file's conditions are asked again.
constexpr std::chrono::milliseconds kPoll{200};

/// The columns every side keeps, hashed in key order: the same query on each side.
std::string common(const std::string &table)
{
    return "SELECT count(*) || ':' || md5(coalesce(string_agg(ROW(id, a, b)::text, ',' ORDER BY id), '')) FROM " +
           table;
}

std::string seed(const std::string &table, long long rows)
{
    return "CREATE TABLE " + table +
           " (id bigint PRIMARY KEY, a text NOT NULL, c text NOT NULL, b int, v varchar(10));\n"
           "INSERT INTO " +
           table +
           " SELECT g, 'row ' || g, 'c' || g, g % 13, 'v' || (g % 100) FROM "
           "generate_series(1, " +
           std::to_string(rows) + ") g;\n";
}

struct SchemaPolicies : ::testing::Test {
    PgTestDb src{"sp_src"};
    PgTestDb dst{"sp_dst"};
    TempDir dir;
    std::string pipeline = uniqueName("sp");
    std::string state = dir.file("workspace.db");
    std::string file = dir.file("ws.yaml");
    std::vector<int> runners;

    /// `driftless-cli run` in the background, logging to `log`; stopped by TearDown if a failed
    /// assertion left it running.
    int spawnRun(const std::string &log)
    {
        runners.push_back(spawnCli({"--state", state, "run"}, {}, log));
        return runners.back();
    }
    void TearDown() override
    {
        for (int pid : runners)
            if (::kill(pid, 0) == 0) {
                ::kill(pid, SIGKILL);
                waitPid(pid, 30);
            }
    }

    std::string srcDsn() const
    {
        const auto &s = servers();
        return "\"host=127.0.0.1 port=" + std::to_string(s.pgPort) + " dbname=" + src.name() + " user=" + s.pgUser +
               "\"";
    }
    std::string head(const std::string &pipelineExtra = "")
    {
        const auto &s = servers();
        return "endpoints:\n"
               "  app: { kind: postgres, dsn: " +
               srcDsn() +
               " }\n"
               "  dw:  { kind: postgres, dsn: \"host=127.0.0.1 port=" +
               std::to_string(s.pgPort) + " dbname=" + dst.name() + " user=" + s.pgUser +
               "\" }\n"
               "pipelines:\n"
               "  - name: " +
               pipeline +
               "\n"
               "    source: app\n"
               "    target: dw\n" +
               pipelineExtra + "    tables:\n";
    }
    void apply(const std::string &yaml)
    {
        writeFile(file, yaml);
        auto r = runCli({"--state", state, "apply", file});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    void runOnce()
    {
        auto r = runCli({"--state", state, "run", "--once"});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    std::string events()
    {
        SqliteDb db(state);
        auto st = db.prepare("SELECT level || ' ' || message FROM events WHERE kind = 'schema_change' ORDER BY id");
        std::string out;
        while (st.step())
            out += st.text(0) + "\n";
        return out;
    }
    std::string targetType(const std::string &table, const std::string &column)
    {
        return dst.scalar("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'public." +
                          table + "'::regclass AND attname = '" + column + "' AND NOT attisdropped");
    }
};

TEST_F(SchemaPolicies, workspaceFileReadsWritesStoresAndRefusesPolicies)
{
    auto ws = WorkspaceFile::parse(head("    schema_changes: { drop_column: drop, type_change: pause }\n") +
                                       "      - table: public.items\n"
                                       "        strategy: cdc\n"
                                       "        schema_changes: { add_column: ignore, drop_column: pause, type_change: "
                                       "widen, rename_column: pause }\n"
                                       "      - { table: public.other, strategy: cdc }\n",
                                   "ws.yaml", "/");
    const auto &p = ws.pipelines.at(0);
    EXPECT_EQ(p.dropColumn, std::optional<std::string>("drop"));
    EXPECT_EQ(p.typeChange, std::optional<std::string>("pause"));
    EXPECT_EQ(p.addColumn, std::nullopt);
    EXPECT_EQ(p.tables.at(0).addColumn, std::optional<std::string>("ignore"));
    EXPECT_EQ(p.tables.at(0).dropColumn, std::optional<std::string>("pause"));
    EXPECT_EQ(p.tables.at(0).typeChange, std::optional<std::string>("widen"));
    EXPECT_EQ(p.tables.at(0).renameColumn, std::optional<std::string>("pause"));
    EXPECT_EQ(p.tables.at(1).dropColumn, std::nullopt);
    EXPECT_EQ(p.tables.at(1).renameColumn, std::nullopt);
    EXPECT_EQ(WorkspaceFile::parse(WorkspaceFile::toYaml(ws), "again.yaml", "/"), ws);

    struct Bad {
        std::string item, field, needle;
    };
    for (const auto &b :
         std::vector<Bad>{{"        schema_changes: { drop_column: remove }\n", "schema_changes.drop_column",
                           "'remove': expected keep (the default), drop or pause"},
                          {"        schema_changes: { type_change: cast }\n", "schema_changes.type_change",
                           "'cast': expected widen (the default) or pause"},
                          {"        schema_changes: { rename_column: follow }\n", "schema_changes.rename_column",
                           "'follow': expected rename (the default) or pause"}}) {
        try {
            WorkspaceFile::parse(head() + "      - table: public.items\n        strategy: cdc\n" + b.item, "ws.yaml",
                                 "/");
            ADD_FAILURE() << "accepted: " << b.item;
        } catch (const ConfigError &e) {
            EXPECT_EQ(e.line(), 11) << e.what();
            EXPECT_EQ(e.field(), "pipelines[" + pipeline + "].tables[public.items]." + b.field) << e.what();
            EXPECT_NE(std::string(e.what()).find(b.needle), std::string::npos) << e.what();
        }
    }

    src.exec(seed("items", 5) + "CREATE TABLE other (id int PRIMARY KEY);");
    apply(head("    schema_changes: { drop_column: drop, type_change: pause, rename_column: pause }\n") +
          "      - { table: public.items, strategy: cdc, schema_changes: { drop_column: pause, type_change: widen, "
          "rename_column: rename } }\n"
          "      - { table: public.other, strategy: cdc }\n");
    const auto stored = StateStore(state).loadWorkspace();
    ASSERT_EQ(stored.pipelines.size(), 1u);
    EXPECT_EQ(stored.pipelines[0].dropColumn, std::optional<std::string>("drop"));
    EXPECT_EQ(stored.pipelines[0].typeChange, std::optional<std::string>("pause"));
    EXPECT_EQ(stored.pipelines[0].tables.at(0).dropColumn, std::optional<std::string>("pause"));
    EXPECT_EQ(stored.pipelines[0].tables.at(0).typeChange, std::optional<std::string>("widen"));
    EXPECT_EQ(stored.pipelines[0].tables.at(1).typeChange, std::nullopt);
    EXPECT_EQ(stored.pipelines[0].renameColumn, std::optional<std::string>("pause"));
    EXPECT_EQ(stored.pipelines[0].tables.at(0).renameColumn, std::optional<std::string>("rename"));
}

// While the stream runs: a dropped column is kept (the default) and no longer written, then
// int4 -> int8 and varchar(10) -> varchar(50) are widened on the target, and values only the
// wider types hold arrive. The writers are bounded (a fixed number of statements).
TEST_F(SchemaPolicies, whileStreamingADroppedColumnIsKeptAndWidenedColumnsTakeWiderValues)
{
    constexpr long long kRows = 2000;
    src.exec(seed("items", kRows));
    apply(head() + "      - { table: public.items, strategy: cdc }\n");
    const std::string log = dir.file("run.log");
    const int runner = spawnRun(log);
    ASSERT_TRUE(
        waitForIgnoringErrors([&] { return dst.scalar(common("items")) == src.scalar(common("items")); }, 120, kPoll))
        << readFile(log);

    auto c = src.connect();
    c.exec("ALTER TABLE items DROP COLUMN c");
    for (int i = 0; i < 20; ++i) {
        c.exec("INSERT INTO items (id, a, b, v) VALUES (" + std::to_string(kRows + 1 + i) + ", 'new', " +
               std::to_string(i) + ", 'n')");
        c.exec("UPDATE items SET a = 'changed " + std::to_string(i) + "' WHERE id = " + std::to_string(1 + i * 7));
    }
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] {
            return dst.scalar(common("items")) == src.scalar(common("items")) &&
                   events().find("column c dropped on the source; kept on the target, no longer written") !=
                       std::string::npos;
        },
        120, kPoll))
        << readFile(log) << events();
    // The target keeps c: old rows hold their values, rows written after the drop hold NULL.
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE c IS NULL"), "20");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE id > " + std::to_string(kRows) + " AND c IS NULL"), "20");
    EXPECT_EQ(dst.scalar("SELECT c FROM items WHERE id = 8"), "c8"); // updated after the drop, c untouched

    c.exec("ALTER TABLE items ALTER COLUMN b TYPE bigint");
    c.exec("ALTER TABLE items ALTER COLUMN v TYPE varchar(50)");
    c.exec("INSERT INTO items (id, a, b, v) VALUES (5000, 'big', 3000000000, 'a value longer than ten')");
    c.exec("UPDATE items SET b = 4000000000, v = repeat('x', 50) WHERE id = 3");
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] {
            return dst.scalar("SELECT b FROM items WHERE id = 3") == "4000000000" &&
                   dst.scalar("SELECT v FROM items WHERE id = 5000") == "a value longer than ten";
        },
        120, kPoll))
        << readFile(log) << events();
    EXPECT_EQ(::kill(runner, 0), 0) << readFile(log); // it streamed on throughout
    ::kill(runner, SIGTERM);
    EXPECT_EQ(waitPid(runner, 60), 0) << readFile(log);

    EXPECT_EQ(dst.scalar(common("items")), src.scalar(common("items")));
    const std::string allV = "SELECT md5(string_agg(id || ':' || coalesce(v, '-'), ',' ORDER BY id)) FROM items";
    EXPECT_EQ(dst.scalar(allV), src.scalar(allV));
    EXPECT_EQ(targetType("items", "b"), "bigint");
    EXPECT_EQ(targetType("items", "v"), "character varying(50)");
    const std::string ev = events();
    EXPECT_NE(ev.find("info column b widened from integer to bigint on the target"), std::string::npos) << ev;
    EXPECT_NE(ev.find("info column v widened from character varying(10) to character varying(50) on the target"),
              std::string::npos)
        << ev;
}

// Between two `run --once` passes (the engine stopped across the DDL, as after a restart): keep,
// drop and pause side by side. Changes made before the drop are read after it.
TEST_F(SchemaPolicies, droppedColumnsAreKeptDroppedOrPauseTheTable)
{
    src.exec(seed("kept", 300) + seed("gone", 300) + seed("held", 300));
    apply(head("    schema_changes: { drop_column: drop }\n") +
          "      - { table: public.kept, strategy: cdc, schema_changes: { drop_column: keep } }\n"
          "      - { table: public.gone, strategy: cdc }\n"
          "      - { table: public.held, strategy: cdc, schema_changes: { drop_column: pause } }\n");
    runOnce();
    ASSERT_EQ(dst.scalar(common("held")), src.scalar(common("held")));
    const std::string heldBefore = dst.scalar(common("held"));

    for (const char *t : {"kept", "gone", "held"})
        src.exec(std::string("UPDATE ") + t + " SET a = 'before drop', c = 'new c' WHERE id <= 10; ALTER TABLE " + t +
                 " DROP COLUMN c; UPDATE " + t + " SET b = -1 WHERE id BETWEEN 5 AND 20; INSERT INTO " + t +
                 " (id, a, b) SELECT g, 'after', 1 FROM generate_series(301, 330) g;");
    runOnce();

    // keep: c stays, new rows hold NULL there, every other column synced.
    EXPECT_EQ(dst.scalar(common("kept")), src.scalar(common("kept")));
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM kept WHERE c IS NULL"), "30");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM kept WHERE id > 300 AND c IS NULL"), "30");
    EXPECT_EQ(dst.scalar("SELECT col_description('public.kept'::regclass, attnum) FROM pg_attribute WHERE attrelid = "
                         "'public.kept'::regclass AND attname = 'c'"),
              "dropped on the source; kept by Driftless, no longer written");
    // drop: gone from the target, every other column synced.
    EXPECT_EQ(dst.scalar(common("gone")), src.scalar(common("gone")));
    EXPECT_EQ(targetType("gone", "c"), "");
    // pause: nothing applied, and the message says what to do.
    EXPECT_EQ(dst.scalar(common("held")), heldBefore);
    const std::string ev = events();
    EXPECT_NE(ev.find("info column c dropped on the source; dropped on the target (schema_changes: drop_column: drop)"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("info column c dropped on the source; kept on the target, no longer written (schema_changes: "
                      "drop_column: keep)"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("error column(s) c dropped on the source while the engine was stopped (schema_changes: "
                      "drop_column: pause); the table is paused"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("set schema_changes: { drop_column: keep } on the table"), std::string::npos) << ev;
    EXPECT_NE(ev.find("driftless-cli resnapshot " + pipeline + " public.held"), std::string::npos) << ev;

    // The next pass: kept and gone go on syncing, without a new drop (held says again that it
    // is paused, at each start).
    auto count = [](const std::string &text, const std::string &needle) {
        size_t n = 0;
        for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
            ++n;
        return n;
    };
    const std::string before = events();
    src.exec("UPDATE kept SET a = 'later' WHERE id = 40; UPDATE gone SET a = 'later' WHERE id = 40;"
             "INSERT INTO kept (id, a, b) VALUES (400, 'x', 2)");
    runOnce();
    EXPECT_EQ(dst.scalar(common("kept")), src.scalar(common("kept")));
    EXPECT_EQ(dst.scalar(common("gone")), src.scalar(common("gone")));
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM kept WHERE c IS NULL"), "31");
    const std::string after = events();
    EXPECT_EQ(count(after, "dropped on the target"), count(before, "dropped on the target")) << after;
    EXPECT_EQ(count(after, "kept on the target"), count(before, "kept on the target")) << after;
    EXPECT_EQ(after.find("error column(s) c dropped", before.size()) != std::string::npos, true) << after;
}

// A retype that is not a widening (text -> integer) pauses the table with the ALTER to run; with
// type_change: pause even a widening does. While streaming, so the Relation message shows it.
TEST_F(SchemaPolicies, aRetypeThatIsNoWideningOrTypeChangePausePausesWithTheAlter)
{
    src.exec(seed("items", 200) + seed("strict", 200) + "ALTER TABLE items ADD COLUMN code text DEFAULT '42';");
    apply(head() + "      - { table: public.items, strategy: cdc }\n"
                   "      - { table: public.strict, strategy: cdc, schema_changes: { type_change: pause } }\n");
    const std::string log = dir.file("run.log");
    const int runner = spawnRun(log);
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] {
            return dst.scalar(common("items")) == src.scalar(common("items")) &&
                   dst.scalar(common("strict")) == src.scalar(common("strict"));
        },
        120, kPoll))
        << readFile(log);
    // A change before each DDL, so the stream has seen the old types.
    src.exec("UPDATE items SET b = 100 WHERE id = 1; UPDATE strict SET b = 100 WHERE id = 1");
    ASSERT_TRUE(
        waitForIgnoringErrors([&] { return dst.scalar("SELECT b FROM strict WHERE id = 1") == "100"; }, 120, kPoll))
        << readFile(log);
    // The DDL in a transaction of its own (docs/schema-changes.md: a retype and a write in one
    // transaction may reach the engine with the old type).
    src.exec("ALTER TABLE items ALTER COLUMN code DROP DEFAULT, ALTER COLUMN code TYPE integer USING code::integer");
    src.exec("UPDATE items SET b = 101 WHERE id = 2");
    src.exec("ALTER TABLE strict ALTER COLUMN b TYPE bigint");
    src.exec("UPDATE strict SET b = 5000000000 WHERE id = 2");
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] {
            const std::string ev = events();
            return ev.find("column code changed type from text to integer") != std::string::npos &&
                   ev.find("column b changed type from integer to bigint") != std::string::npos;
        },
        120, kPoll))
        << readFile(log) << events();
    ::kill(runner, SIGTERM);
    EXPECT_EQ(waitPid(runner, 60), 0) << readFile(log);

    const std::string ev = events();
    EXPECT_NE(ev.find("error column code changed type from text to integer on the source, which is not a widening the "
                      "engine applies by itself; the table is paused"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("run on the target: ALTER TABLE public.items ALTER COLUMN code TYPE integer USING code::integer, "
                      "then re-snapshot the table: driftless-cli resnapshot " +
                      pipeline + " public.items"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("error column b changed type from integer to bigint on the source (schema_changes: type_change: "
                      "pause); the table is paused"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("ALTER TABLE public.strict ALTER COLUMN b TYPE bigint USING b::bigint"), std::string::npos) << ev;
    // Neither change after the DDL was applied; the target's types are as they were.
    EXPECT_EQ(dst.scalar("SELECT b FROM items WHERE id = 2"), "2");
    EXPECT_EQ(dst.scalar("SELECT b FROM strict WHERE id = 2"), "2");
    EXPECT_EQ(targetType("items", "code"), "text");
    EXPECT_EQ(targetType("strict", "b"), "integer");
}

// A SQLite target: drop uses ALTER TABLE DROP COLUMN; a widening needs no change there (type
// affinity), and the event says so.
TEST_F(SchemaPolicies, aSqliteTargetDropsTheColumnAndTakesWidenedValues)
{
    src.exec(seed("items", 300));
    const std::string lite = dir.file("dw.db");
    apply("endpoints:\n"
          "  app: { kind: postgres, dsn: " +
          srcDsn() +
          " }\n"
          "  dw:  { kind: sqlite, path: \"" +
          lite +
          "\" }\n"
          "pipelines:\n"
          "  - name: " +
          pipeline +
          "\n"
          "    source: app\n"
          "    target: dw\n"
          "    schema_changes: { drop_column: drop }\n"
          "    tables:\n"
          "      - { table: public.items, strategy: cdc }\n");
    runOnce();
    // Each its own transaction: the stream then shows the old layout, then the new one.
    src.exec("UPDATE items SET a = 'before' WHERE id <= 5");
    src.exec("ALTER TABLE items DROP COLUMN c");
    src.exec("ALTER TABLE items ALTER COLUMN b TYPE bigint");
    src.exec("UPDATE items SET b = 6000000000 WHERE id = 7");
    src.exec("INSERT INTO items (id, a, b, v) VALUES (301, 'after', 7000000000, 'z')");
    runOnce();

    SqliteDb db(lite);
    auto cols = db.prepare("SELECT count(*) FROM pragma_table_info('items') WHERE name = 'c'");
    ASSERT_TRUE(cols.step());
    EXPECT_EQ(cols.int64(0), 0);
    auto st = db.prepare("SELECT count(*) || ':' || group_concat(r, ',') FROM (SELECT id || '|' || a || '|' || "
                         "coalesce(b, -1) AS r FROM items ORDER BY id)");
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.text(0), src.scalar("SELECT count(*) || ':' || string_agg(id || '|' || a || '|' || coalesce(b, -1), "
                                     "',' ORDER BY id) FROM items"));
    const std::string ev = events();
    EXPECT_NE(ev.find("column c dropped on the source; dropped on the target"), std::string::npos) << ev;
    EXPECT_NE(ev.find("column b widened from integer to bigint at the source; the SQLite target needs no change"),
              std::string::npos)
        << ev;
}

// Renames while the stream runs, told apart from a drop and an add by the attribute number:
// `a` and the key `id` renamed on `items` are renamed on the target, which keeps every value
// (a drop and an add would leave the renamed columns NULL); on `swap`, dropping its last column
// and adding one in the same statement looks like a rename by position but is none: it pauses;
// on `held`, rename_column: pause pauses with the statements to run. Writers bounded.
TEST_F(SchemaPolicies, whileStreamingARenameIsAppliedAsARenameAndADropPlusAddIsNotTakenForOne)
{
    src.exec(seed("items", 1000) + seed("swap", 100) + seed("held", 100) + seed("grown", 100));
    apply(head() + "      - { table: public.items, strategy: cdc }\n"
                   "      - { table: public.swap, strategy: cdc }\n"
                   "      - { table: public.held, strategy: cdc, schema_changes: { rename_column: pause } }\n"
                   "      - { table: public.grown, strategy: cdc, schema_changes: { add_column: propagate } }\n");
    const std::string log = dir.file("run.log");
    const int runner = spawnRun(log);
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] {
            return dst.scalar(common("items")) == src.scalar(common("items")) &&
                   dst.scalar(common("held")) == src.scalar(common("held"));
        },
        120, kPoll))
        << readFile(log);
    // A change before each DDL, so the stream has seen the old names.
    src.exec("UPDATE items SET b = 100 WHERE id = 1; UPDATE swap SET b = 100 WHERE id = 1; "
             "UPDATE held SET b = 100 WHERE id = 1");
    ASSERT_TRUE(
        waitForIgnoringErrors([&] { return dst.scalar("SELECT b FROM held WHERE id = 1") == "100"; }, 120, kPoll))
        << readFile(log);
    // A column added while the engine runs, then renamed: its attribute number is learnt when
    // it is added.
    src.exec("ALTER TABLE grown ADD COLUMN z int");
    src.exec("UPDATE grown SET z = 1 WHERE id = 1");
    ASSERT_TRUE(
        waitForIgnoringErrors([&] { return dst.scalar("SELECT z FROM grown WHERE id = 1") == "1"; }, 120, kPoll))
        << readFile(log);
    src.exec("ALTER TABLE grown RENAME COLUMN z TO zz");
    src.exec("UPDATE grown SET zz = 2 WHERE id = 2");

    auto c = src.connect();
    c.exec("ALTER TABLE items RENAME COLUMN a TO title");
    c.exec("ALTER TABLE items RENAME COLUMN id TO item_id");
    for (int i = 0; i < 20; ++i) {
        c.exec("INSERT INTO items (item_id, title, c, b) VALUES (" + std::to_string(2000 + i) + ", 'new', 'c', " +
               std::to_string(i) + ")");
        c.exec("UPDATE items SET title = 'renamed " + std::to_string(i) +
               "' WHERE item_id = " + std::to_string(1 + i * 7));
    }
    c.exec("DELETE FROM items WHERE item_id BETWEEN 500 AND 509");
    c.exec("ALTER TABLE swap DROP COLUMN v, ADD COLUMN w varchar(10)");
    c.exec("UPDATE swap SET w = 'w', b = 5 WHERE id = 2");
    c.exec("ALTER TABLE held RENAME COLUMN c TO note");
    c.exec("UPDATE held SET b = 7 WHERE id = 2");
    const std::string all = "SELECT count(*) || ':' || md5(string_agg(ROW(item_id, title, c, b, v)::text, ',' ORDER BY "
                            "item_id)) FROM items";
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] {
            const std::string ev = events();
            return dst.scalar(all) == src.scalar(all) && ev.find("public.swap") != std::string::npos &&
                   ev.find("rename_column: pause") != std::string::npos &&
                   dst.scalar("SELECT zz FROM grown WHERE id = 2") == "2";
        },
        120, kPoll))
        << readFile(log) << events();
    EXPECT_EQ(::kill(runner, 0), 0) << readFile(log); // it streamed on throughout
    ::kill(runner, SIGTERM);
    EXPECT_EQ(waitPid(runner, 60), 0) << readFile(log);

    EXPECT_EQ(dst.scalar(all), src.scalar(all));
    EXPECT_EQ(targetType("items", "a"), "");
    EXPECT_EQ(targetType("items", "title"), "text");
    EXPECT_EQ(targetType("items", "item_id"), "bigint");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE title IS NULL"), "0") << "no value lost to a drop and add";
    const std::string ev = events();
    EXPECT_NE(ev.find("info column a renamed to title on the source; renamed on the target (schema_changes: "
                      "rename_column: rename)"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("info column id renamed to item_id on the source; renamed on the target"), std::string::npos)
        << ev;
    // swap: not a rename (v's attribute is gone, w is a new one); paused, nothing applied after it.
    EXPECT_EQ(ev.find("column v renamed"), std::string::npos) << ev;
    EXPECT_NE(ev.find("error the source's columns changed from (id, a, c, b, v) to (id, a, c, b, w)"),
              std::string::npos)
        << ev;
    EXPECT_EQ(dst.scalar("SELECT b FROM swap WHERE id = 2"), "2");
    EXPECT_EQ(targetType("swap", "v"), "character varying(10)");
    // held: paused with the statement to run and the policy to change.
    EXPECT_NE(ev.find("error column c renamed to note on the source (schema_changes: rename_column: pause); the table "
                      "is paused"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("ALTER TABLE public.held RENAME COLUMN c TO note"), std::string::npos) << ev;
    EXPECT_NE(ev.find("set schema_changes: { rename_column: rename } on the table"), std::string::npos) << ev;
    EXPECT_EQ(dst.scalar("SELECT b FROM held WHERE id = 2"), "2");
    EXPECT_EQ(targetType("held", "c"), "text");
    EXPECT_EQ(dst.scalar("SELECT zz FROM grown WHERE id = 1"), "1");
    EXPECT_NE(ev.find("info column z renamed to zz on the source; renamed on the target"), std::string::npos) << ev;

    // A restart: the target's names match the source's, nothing is renamed or dropped again;
    // the two paused tables stay stopped with their reason (the slot moved on past them with
    // items, which is no slot moved behind our back), and `run --once` says so in its exit code.
    const std::string before = events();
    src.exec("UPDATE items SET title = 'after restart' WHERE item_id = 3");
    auto r = runCli({"--state", state, "run", "--once"});
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_EQ((r.out + r.err).find("moved past"), std::string::npos) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("column c renamed to note on the source"), std::string::npos) << r.out << r.err;
    EXPECT_EQ(dst.scalar(all), src.scalar(all));
    EXPECT_EQ(events().find("renamed to", before.size()), std::string::npos) << "BEFORE\n"
                                                                             << before << "AFTER\n"
                                                                             << events();
    EXPECT_EQ(events().find("dropped on the source", before.size()), std::string::npos) << events();
}

// Renames made while the engine is stopped are renames: the stream's changes from before them
// still name the old columns and apply as they are, then the stream's Relation with the new names
// renames the target's columns, as when the engine runs (the attribute numbers the stream last
// saw are kept in the checkpoint). Before, the start took the old column for dropped and the
// first old-named change for a rename back, and paused the table with the wrong ALTER.
TEST_F(SchemaPolicies, renamesMadeWhileTheEngineIsStoppedAreRenamesAndLoseNothing)
{
    src.exec(seed("items", 200) + seed("quiet", 50));
    apply(head() + "      - { table: public.items, strategy: cdc }\n"
                   "      - { table: public.quiet, strategy: cdc }\n");
    const std::string log = dir.file("run.log");
    const int runner = spawnRun(log);
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] {
            return dst.scalar(common("items")) == src.scalar(common("items")) &&
                   dst.scalar(common("quiet")) == src.scalar(common("quiet"));
        },
        120, kPoll))
        << readFile(log);
    src.exec("UPDATE items SET b = 100 WHERE id = 3"); // a change after the load: the stream's names
    ASSERT_TRUE(
        waitForIgnoringErrors([&] { return dst.scalar("SELECT b FROM items WHERE id = 3") == "100"; }, 120, kPoll))
        << readFile(log);
    ::kill(runner, SIGTERM);
    ASSERT_EQ(waitPid(runner, 60), 0) << readFile(log);

    // items: changes before, between and after two renames (the key's too); quiet: only a rename,
    // then one change.
    src.exec("UPDATE items SET a = 'before rename' WHERE id = 1");
    src.exec("DELETE FROM items WHERE id = 7");
    src.exec("ALTER TABLE items RENAME COLUMN a TO title");
    src.exec("UPDATE items SET title = 'between renames' WHERE id = 2");
    src.exec("ALTER TABLE items RENAME COLUMN id TO item_id");
    src.exec("UPDATE items SET title = 'after rename' WHERE item_id = 4");
    src.exec("INSERT INTO items (item_id, title, c, b) VALUES (500, 'new', 'c', 1)");
    src.exec("ALTER TABLE quiet RENAME COLUMN c TO note");
    src.exec("UPDATE quiet SET note = 'renamed', b = 9 WHERE id = 5");
    auto r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err << events();

    const std::string items = "SELECT count(*) || ':' || md5(string_agg(ROW(item_id, title, c, b, v)::text, ',' ORDER "
                              "BY item_id)) FROM items";
    EXPECT_EQ(dst.scalar(items), src.scalar(items)) << events();
    EXPECT_EQ(dst.scalar("SELECT title FROM items WHERE item_id = 1"), "before rename");
    EXPECT_EQ(dst.scalar("SELECT title FROM items WHERE item_id = 2"), "between renames");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE item_id = 7"), "0");
    EXPECT_EQ(targetType("items", "a"), "") << "renamed, not kept as dropped";
    EXPECT_EQ(targetType("items", "id"), "");
    EXPECT_EQ(targetType("items", "title"), "text");
    EXPECT_EQ(targetType("items", "item_id"), "bigint");
    const std::string quiet =
        "SELECT count(*) || ':' || md5(string_agg(ROW(id, a, note, b, v)::text, ',' ORDER BY id)) FROM quiet";
    EXPECT_EQ(dst.scalar(quiet), src.scalar(quiet)) << events();
    EXPECT_EQ(targetType("quiet", "c"), "");
    const std::string ev = events();
    EXPECT_NE(ev.find("info column a renamed to title on the source; renamed on the target"), std::string::npos) << ev;
    EXPECT_NE(ev.find("info column id renamed to item_id on the source; renamed on the target"), std::string::npos)
        << ev;
    EXPECT_NE(ev.find("info column c renamed to note on the source; renamed on the target"), std::string::npos) << ev;
    EXPECT_EQ(ev.find("dropped on the source"), std::string::npos) << ev;
    EXPECT_EQ(ev.find("added"), std::string::npos) << ev;
    EXPECT_EQ(ev.find("error"), std::string::npos) << ev;

    // Another stop and start: nothing is renamed again, the stream goes on under the new names.
    src.exec("UPDATE items SET title = 'second run' WHERE item_id = 5");
    r = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err << events();
    EXPECT_EQ(dst.scalar(items), src.scalar(items));
    EXPECT_EQ(events(), ev);
}

// A SQLite target renames in place (ALTER TABLE ... RENAME COLUMN), the key too, while the
// stream runs.
TEST_F(SchemaPolicies, aSqliteTargetRenamesTheColumnAndTheKey)
{
    src.exec(seed("items", 300));
    const std::string lite = dir.file("dw.db");
    apply("endpoints:\n"
          "  app: { kind: postgres, dsn: " +
          srcDsn() +
          " }\n"
          "  dw:  { kind: sqlite, path: \"" +
          lite +
          "\" }\n"
          "pipelines:\n"
          "  - name: " +
          pipeline +
          "\n"
          "    source: app\n"
          "    target: dw\n"
          "    tables:\n"
          "      - { table: public.items, strategy: cdc }\n");
    const std::string log = dir.file("run.log");
    const int runner = spawnRun(log);
    auto liteScalar = [&](const std::string &sql) {
        SqliteDb db(lite);
        auto st = db.prepare(sql);
        return st.step() ? st.text(0) : std::string();
    };
    // Loaded, and streaming with nothing to stream: the first Relation message the stream will
    // show has the new names already (the key's place in the columns says which one it is).
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] {
            return liteScalar("SELECT count(*) FROM items") == "300" &&
                   readFile(log).find("streaming from slot") != std::string::npos;
        },
        120, kPoll))
        << readFile(log);
    src.exec("ALTER TABLE items RENAME COLUMN a TO title");
    src.exec("ALTER TABLE items RENAME COLUMN id TO item_id");
    src.exec("UPDATE items SET title = 'after', b = 99 WHERE item_id = 7");
    src.exec("DELETE FROM items WHERE item_id = 8");
    src.exec("INSERT INTO items (item_id, title, c, b) VALUES (301, 'new', 'c', 1)");
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] { return liteScalar("SELECT count(*) FROM items WHERE item_id = 301") == "1"; }, 120, kPoll))
        << readFile(log) << events();
    ::kill(runner, SIGTERM);
    EXPECT_EQ(waitPid(runner, 60), 0) << readFile(log);

    SqliteDb db(lite);
    auto cols =
        db.prepare("SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info('items') WHERE name "
                   "NOT LIKE '\\_driftless%' ESCAPE '\\' ORDER BY cid)");
    ASSERT_TRUE(cols.step());
    EXPECT_EQ(cols.text(0), "item_id,title,c,b,v");
    auto st =
        db.prepare("SELECT count(*) || ':' || group_concat(r, ',') FROM (SELECT item_id || '|' || title || '|' || "
                   "coalesce(b, -1) AS r FROM items ORDER BY item_id)");
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.text(0), src.scalar("SELECT count(*) || ':' || string_agg(item_id || '|' || title || '|' || "
                                     "coalesce(b, -1), ',' ORDER BY item_id) FROM items"));
    const std::string ev = events();
    EXPECT_NE(ev.find("column a renamed to title on the source; renamed on the target"), std::string::npos) << ev;
    EXPECT_NE(ev.find("column id renamed to item_id on the source; renamed on the target"), std::string::npos) << ev;
}

} // namespace
