// Schema changes on cursor and full-refresh tables: the `schema_changes:` policies apply at the
// start of the next pass (docs/schema-changes.md). A column added between passes is added and
// filled (that column only), kept or dropped columns, a widened column, a paused table that goes
// on once the DBA acts, a rename told by its attribute number; a full refresh that includes,
// keeps, drops or ignores columns; a MariaDB cursor source. Everything runs as a DBA runs it:
// YAML, `driftless-cli apply`, `run --once`. Contents are compared with the same query on each
// side, never with the engine's own hashing.

#include "core/db/sqlitedb.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

using namespace driftless::core;
using namespace driftless::test;

namespace {

/// count:md5 of the rows' `columns` (a ROW() list) in key order: the same query on each side.
std::string hashOf(const std::string &table, const std::string &columns)
{
    return "SELECT count(*) || ':' || md5(coalesce(string_agg(ROW(" + columns +
           ")::text, ',' ORDER BY id), '')) FROM " + table;
}

/// Rows dated a day back, so a pass with no lookback reads only what changed since.
std::string seed(const std::string &table, long long rows)
{
    return "CREATE TABLE " + table +
           " (id bigint PRIMARY KEY, a text NOT NULL, b int, c text NOT NULL, updated_at timestamptz NOT NULL);\n"
           "INSERT INTO " +
           table +
           " SELECT g, 'row ' || g, g % 13, 'c' || g, now() - interval '1 day' FROM "
           "generate_series(1, " +
           std::to_string(rows) + ") g;\n";
}

struct SchemaPasses : ::testing::Test {
    PgTestDb src{"spass_src"};
    PgTestDb dst{"spass_dst"};
    TempDir dir;
    std::string pipeline = uniqueName("spass");
    std::string state = dir.file("workspace.db");
    std::string file = dir.file("ws.yaml");

    std::string head(const std::string &sourceEndpoint = {}, const std::string &pipelineExtra = {})
    {
        const auto &s = servers();
        const std::string app =
            sourceEndpoint.empty() ? "  app: { kind: postgres, dsn: \"host=127.0.0.1 port=" + std::to_string(s.pgPort) +
                                         " dbname=" + src.name() + " user=" + s.pgUser + "\" }\n"
                                   : sourceEndpoint;
        return "endpoints:\n" + app +
               "  dw:  { kind: postgres, dsn: \"host=127.0.0.1 port=" + std::to_string(s.pgPort) +
               " dbname=" + dst.name() + " user=" + s.pgUser +
               "\" }\n"
               "pipelines:\n"
               "  - name: " +
               pipeline +
               "\n"
               "    source: app\n"
               "    target: dw\n" +
               pipelineExtra + "    tables:\n";
    }
    static std::string cursorTable(const std::string &table, const std::string &policies = {})
    {
        return "      - { table: public." + table + ", strategy: cursor, cursor: updated_at, lookback: 0s" +
               (policies.empty() ? "" : ", schema_changes: { " + policies + " }") + " }\n";
    }
    static std::string refreshTable(const std::string &table, const std::string &policies = {})
    {
        return "      - { table: public." + table + ", strategy: full_refresh" +
               (policies.empty() ? "" : ", schema_changes: { " + policies + " }") + " }\n";
    }
    void apply(const std::string &yaml)
    {
        writeFile(file, yaml);
        auto r = runCli({"--state", state, "apply", file});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    CliResult run() { return runCli({"--state", state, "run", "--once"}); }
    void runOk()
    {
        auto r = run();
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err << "\nevents:\n" << events();
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
    std::pair<std::string, std::string> tableState(const std::string &table)
    {
        SqliteDb db(state);
        auto st = db.prepare("SELECT state, message FROM table_status WHERE pipeline = ?1 AND source_table = ?2");
        st.bindText(1, pipeline).bindText(2, table);
        if (!st.step())
            return {};
        return {st.text(0), st.text(1)};
    }
    std::string targetType(const std::string &table, const std::string &column)
    {
        return dst.scalar("SELECT coalesce(format_type(atttypid, atttypmod), '') FROM pg_attribute WHERE attrelid = "
                          "'public." +
                          table + "'::regclass AND attname = '" + column +
                          "' AND NOT attisdropped "
                          "UNION ALL SELECT '' LIMIT 1");
    }
    static size_t count(const std::string &text, const std::string &needle)
    {
        size_t n = 0;
        for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
            ++n;
        return n;
    }
};

// ADD COLUMN d int DEFAULT 7 between two passes (no row's cursor moves): the next pass adds d
// and fills it for every row, writing only d (each row's other columns and version stay); an
// update made after the DDL keeps its value.
TEST_F(SchemaPasses, cursorAddColumnBackfillFillsOnlyTheNewColumn)
{
    constexpr long long kRows = 12000; // three fill chunks
    src.exec(seed("items", kRows));
    apply(head() + cursorTable("items"));
    runOk();
    ASSERT_EQ(dst.scalar(hashOf("items", "id, a, b, c")), src.scalar(hashOf("items", "id, a, b, c")));
    const std::string othersBefore = dst.scalar(hashOf("items", "id, a, b, c, _driftless_version"));

    src.exec("ALTER TABLE items ADD COLUMN d int DEFAULT 7");
    src.exec("UPDATE items SET d = 99 WHERE id = 5"); // after the DDL, before the engine sees it
    runOk();

    EXPECT_EQ(targetType("items", "d"), "integer");
    EXPECT_EQ(dst.scalar(hashOf("items", "id, d")), src.scalar(hashOf("items", "id, d")));
    EXPECT_EQ(dst.scalar("SELECT d FROM items WHERE id = 5"), "99");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE d IS NULL"), "0");
    // Only d was written: the other columns and every row's version are as they were.
    EXPECT_EQ(dst.scalar(hashOf("items", "id, a, b, c, _driftless_version")), othersBefore);
    const std::string ev = events();
    EXPECT_NE(ev.find("info source added column(s) d; added to the target, existing rows are being filled"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("info column d added, 12,000 rows backfilled in"), std::string::npos) << ev;
    EXPECT_NE(ev.find("(12,000 written;"), std::string::npos) << ev;
    EXPECT_NE(ev.find("checked: key and d match the source (12,000 rows)"), std::string::npos) << ev;

    // The next pass finds nothing to do: no new event, rows changed since arrive with d.
    src.exec("UPDATE items SET d = 1, updated_at = now() WHERE id <= 10; INSERT INTO items VALUES (20000, 'n', 1, 'c', "
             "now(), 3)");
    runOk();
    EXPECT_EQ(events(), ev);
    EXPECT_EQ(dst.scalar(hashOf("items", "id, a, b, c, d")), src.scalar(hashOf("items", "id, a, b, c, d")));
}

// drop_column: keep (the default) leaves the column, no longer written (rows keep their values,
// new rows NULL); drop_column: drop removes it from the target.
TEST_F(SchemaPasses, cursorDroppedColumnsAreKeptOrDropped)
{
    src.exec(seed("kept", 50) + seed("gone", 50));
    apply(head() + cursorTable("kept") + cursorTable("gone", "drop_column: drop"));
    runOk();

    src.exec(
        "ALTER TABLE kept DROP COLUMN c; ALTER TABLE gone DROP COLUMN c;"
        "UPDATE kept SET a = 'later', updated_at = now() WHERE id = 7; INSERT INTO kept VALUES (100, 'new', 1, now());"
        "UPDATE gone SET a = 'later', updated_at = now() WHERE id = 7; INSERT INTO gone VALUES (100, 'new', 1, "
        "now());");
    runOk();

    EXPECT_EQ(targetType("kept", "c"), "text");
    EXPECT_EQ(dst.scalar("SELECT c FROM kept WHERE id = 7"), "c7") << "a kept column keeps the row's value";
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM kept WHERE c IS NULL"), "1") << "only the new row has none";
    EXPECT_EQ(dst.scalar(hashOf("kept", "id, a, b")), src.scalar(hashOf("kept", "id, a, b")));
    EXPECT_EQ(targetType("gone", "c"), "");
    EXPECT_EQ(dst.scalar(hashOf("gone", "id, a, b")), src.scalar(hashOf("gone", "id, a, b")));
    const std::string ev = events();
    EXPECT_NE(ev.find("info column c dropped on the source; kept on the target, no longer written; rows keep the "
                      "value they had (schema_changes: drop_column: keep)"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("info column c dropped on the source; dropped on the target (schema_changes: drop_column: drop)"),
              std::string::npos)
        << ev;

    // Said once: the next pass has nothing new.
    runOk();
    EXPECT_EQ(events(), ev);
}

// integer -> bigint between passes: widened on the target, and a value only bigint holds arrives.
TEST_F(SchemaPasses, cursorWidensIntegerToBigint)
{
    src.exec(seed("items", 100));
    apply(head() + cursorTable("items"));
    runOk();
    src.exec("ALTER TABLE items ALTER COLUMN b TYPE bigint; UPDATE items SET b = 1099511627776, updated_at = now() "
             "WHERE id = 3");
    runOk();
    EXPECT_EQ(targetType("items", "b"), "bigint");
    EXPECT_EQ(dst.scalar("SELECT b FROM items WHERE id = 3"), "1099511627776");
    EXPECT_EQ(dst.scalar(hashOf("items", "id, a, b, c")), src.scalar(hashOf("items", "id, a, b, c")));
    EXPECT_NE(events().find("info column b widened from integer to bigint on the target"), std::string::npos)
        << events();

    // A retype that is no widening pauses, with the ALTER to run.
    src.exec("ALTER TABLE items ALTER COLUMN c TYPE integer USING length(c)");
    auto r = run();
    EXPECT_NE(r.exitCode, 0) << r.out;
    EXPECT_EQ(tableState("items").first, "paused");
    EXPECT_NE(tableState("items").second.find("column c is text on the target but integer on the source (retyped since "
                                              "the last pass), which is not a widening the engine applies by itself"),
              std::string::npos)
        << tableState("items").second;
    EXPECT_NE(tableState("items").second.find("ALTER TABLE public.items ALTER COLUMN c TYPE integer USING c::integer"),
              std::string::npos)
        << tableState("items").second;
}

// add_column: pause: the table pauses (red, with what to do), nothing is read; the DBA sets the
// policy to backfill and applies, and the next pass takes the column and every change made
// meanwhile.
TEST_F(SchemaPasses, cursorPauseHoldsTheTableAndNothingIsLostAfterTheDbaActs)
{
    src.exec(seed("items", 3000));
    apply(head() + cursorTable("items", "add_column: pause"));
    runOk();

    src.exec("ALTER TABLE items ADD COLUMN e text DEFAULT 'x'");
    src.exec("UPDATE items SET a = 'during pause', e = 'y', updated_at = now() WHERE id % 100 = 0;"
             "INSERT INTO items (id, a, b, c, updated_at, e) VALUES (5000, 'new', 1, 'c', now(), 'z')");
    const std::string before = dst.scalar(hashOf("items", "id, a, b, c"));
    auto r = run();
    EXPECT_NE(r.exitCode, 0) << "a paused table fails run --once: " << r.out;
    const auto [st, message] = tableState("items");
    EXPECT_EQ(st, "paused");
    EXPECT_NE(message.find("source added column(s) e (schema_changes: add_column: pause); the table is paused"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("set schema_changes: { add_column: backfill }"), std::string::npos) << message;
    EXPECT_NE(message.find("driftless-cli apply"), std::string::npos) << message;
    EXPECT_EQ(targetType("items", "e"), "");
    EXPECT_EQ(dst.scalar(hashOf("items", "id, a, b, c")), before) << "nothing read while paused";
    EXPECT_NE(events().find("error source added column(s) e (schema_changes: add_column: pause)"), std::string::npos)
        << events();

    apply(head() + cursorTable("items", "add_column: backfill"));
    runOk();
    EXPECT_EQ(tableState("items").first, "ok");
    EXPECT_EQ(dst.scalar(hashOf("items", "id, a, b, c, e")), src.scalar(hashOf("items", "id, a, b, c, e")));
}

// A Postgres source's column renamed between passes keeps its attribute number: renamed on the
// target (values stay); under rename_column: pause the table pauses with the ALTER to run.
TEST_F(SchemaPasses, cursorRenameIsToldByAttributeNumber)
{
    src.exec(seed("items", 200) + seed("held", 20));
    apply(head() + cursorTable("items") + cursorTable("held", "rename_column: pause"));
    runOk();
    src.exec("ALTER TABLE items RENAME COLUMN a TO title; ALTER TABLE held RENAME COLUMN a TO title");
    auto r = run();
    EXPECT_NE(r.exitCode, 0) << "held is paused: " << r.out;
    EXPECT_EQ(targetType("items", "title"), "text");
    EXPECT_EQ(targetType("items", "a"), "");
    EXPECT_EQ(dst.scalar(hashOf("items", "id, title, b, c")), src.scalar(hashOf("items", "id, title, b, c")));
    EXPECT_NE(events().find("info column a renamed to title on the source; renamed on the target (schema_changes: "
                            "rename_column: rename)"),
              std::string::npos)
        << events();
    EXPECT_EQ(tableState("held").first, "paused");
    EXPECT_NE(tableState("held").second.find("column a renamed to title on the source since the last pass "
                                             "(schema_changes: rename_column: pause)"),
              std::string::npos)
        << tableState("held").second;
    EXPECT_NE(tableState("held").second.find("ALTER TABLE public.held RENAME COLUMN a TO title"), std::string::npos)
        << tableState("held").second;
    EXPECT_EQ(targetType("held", "a"), "text");
}

// Full refresh: an added column is included (its values in every row), a kept column stays
// NULL in every row, a dropped one goes, an ignored one is left out of the reads.
TEST_F(SchemaPasses, fullRefreshIncludesKeepsDropsAndIgnoresColumns)
{
    src.exec(seed("added", 300) + seed("kept", 300) + seed("gone", 300) + seed("ignored", 300));
    apply(head() + refreshTable("added") + refreshTable("kept") + refreshTable("gone", "drop_column: drop") +
          refreshTable("ignored", "add_column: ignore"));
    runOk();

    src.exec("ALTER TABLE added ADD COLUMN d int DEFAULT 7; UPDATE added SET d = id WHERE id < 10;"
             "ALTER TABLE kept DROP COLUMN c; ALTER TABLE gone DROP COLUMN c;"
             "ALTER TABLE ignored ADD COLUMN d int DEFAULT 7; UPDATE ignored SET a = 'changed' WHERE id < 10");
    runOk();

    EXPECT_EQ(dst.scalar(hashOf("added", "id, a, b, c, d")), src.scalar(hashOf("added", "id, a, b, c, d")));
    EXPECT_EQ(targetType("kept", "c"), "text");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM kept WHERE c IS NULL"), "300") << "a full refresh has no value for it";
    EXPECT_EQ(dst.scalar(hashOf("kept", "id, a, b")), src.scalar(hashOf("kept", "id, a, b")));
    EXPECT_EQ(targetType("gone", "c"), "");
    EXPECT_EQ(dst.scalar(hashOf("gone", "id, a, b")), src.scalar(hashOf("gone", "id, a, b")));
    EXPECT_EQ(targetType("ignored", "d"), "");
    EXPECT_EQ(dst.scalar(hashOf("ignored", "id, a, b, c")), src.scalar(hashOf("ignored", "id, a, b, c")));
    const std::string ev = events();
    EXPECT_NE(ev.find("info source added column(s) d; added to the target, and the full refresh loads its values into "
                      "every row (schema_changes: add_column: backfill)"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("kept on the target, no longer written; a full refresh leaves it NULL in every row it loads"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("info column c dropped on the source; dropped on the target"), std::string::npos) << ev;
    EXPECT_NE(ev.find("info source added column(s) d; not added to the target (schema_changes: add_column: ignore)"),
              std::string::npos)
        << ev;

    // The next refresh: nothing new is said, and the ignored column stays out.
    src.exec("UPDATE ignored SET d = 1, a = 'again' WHERE id < 20");
    runOk();
    EXPECT_EQ(events(), ev);
    EXPECT_EQ(targetType("ignored", "d"), "");
    EXPECT_EQ(dst.scalar(hashOf("ignored", "id, a, b, c")), src.scalar(hashOf("ignored", "id, a, b, c")));
}

// Tables with a columns: mapping (an excluded column, a renamed one): between passes a column is
// added (and filled on the cursor table), one widened, one the mapping does not name renamed, then
// dropped and kept. A drop of the column the mapping renames is refused with the YAML entry to
// change, and nothing on the target is lost.
TEST_F(SchemaPasses, mappedCursorAndFullRefreshTablesFollowThePoliciesThroughTheMapping)
{
    const std::string mapping = ", columns: { exclude: [c], rename: { a: label } }";
    for (const char *t : {"mc", "mf"})
        src.exec(std::string("CREATE TABLE ") + t +
                 " (id bigint PRIMARY KEY, a text NOT NULL, b int, c text, v text, updated_at timestamptz NOT NULL);"
                 "INSERT INTO " +
                 t +
                 " SELECT g, 'row ' || g, g % 13, 'SECRET' || g, 'v' || g, now() - interval "
                 "'1 day' FROM generate_series(1, 3000) g;");
    apply(head() + "      - { table: public.mc, strategy: cursor, cursor: updated_at, lookback: 0s" + mapping +
          " }\n      - { table: public.mf, strategy: full_refresh" + mapping + " }\n");
    runOk();
    const std::string srcCols = "id, a, b, v2, d", dstCols = "id, label, b, v2, d";
    for (const char *t : {"mc", "mf"})
        src.exec(std::string("ALTER TABLE ") + t + " ADD COLUMN d int DEFAULT 7; ALTER TABLE " + t +
                 " ALTER COLUMN b TYPE bigint; ALTER TABLE " + t + " RENAME COLUMN v TO v2; UPDATE " + t +
                 " SET d = 99, b = 5000000000, updated_at = now() WHERE id = 5");
    runOk();
    for (const char *t : {"mc", "mf"}) {
        EXPECT_EQ(dst.scalar(hashOf(t, dstCols)), src.scalar(hashOf(t, srcCols))) << t << "\n" << events();
        EXPECT_EQ(targetType(t, "b"), "bigint") << t;
        EXPECT_EQ(targetType(t, "v"), "") << t;
        EXPECT_EQ(targetType(t, "c"), "") << t;
    }
    // The cursor table's rows were not read again: d came by the fill, which wrote d only.
    const std::string ev = events();
    EXPECT_NE(ev.find("checked: key and d match the source (3,000 rows)"), std::string::npos) << ev;
    EXPECT_EQ(count(ev, "column b widened from integer to bigint"), 2u) << ev;
    EXPECT_EQ(count(ev, "column v renamed to v2 on the source; renamed on the target"), 2u) << ev;

    // A column the mapping does not name, dropped: kept as for any table.
    for (const char *t : {"mc", "mf"})
        src.exec(std::string("ALTER TABLE ") + t + " DROP COLUMN v2");
    runOk();
    EXPECT_EQ(dst.scalar("SELECT v2 FROM mc WHERE id = 7"), "v7");
    EXPECT_EQ(count(events(), "column v2 dropped on the source; kept on the target, no longer written"), 2u)
        << events();

    // The renamed column dropped: the mapping names it, so the pass is refused with the entry.
    src.exec("ALTER TABLE mc DROP COLUMN a");
    auto r = run();
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE((r.out + r.err).find("tables[public.mc].columns.rename.a: table public.mc has no column a at the source"),
              std::string::npos)
        << r.out << r.err;
    EXPECT_EQ(dst.scalar("SELECT label FROM mc WHERE id = 7"), "row 7");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM mc"), "3000");
}

// A MariaDB cursor source: an added column is filled (that column only); a column gone while
// another came is a possible rename (no attribute numbers), which pauses with what to run.
TEST_F(SchemaPasses, mariadbCursorSourceFillsAnAddedColumnAndPausesOnAPossibleRename)
{
    MyTestDb my{"spass_my"};
    my.exec("CREATE TABLE items (id BIGINT PRIMARY KEY, a VARCHAR(50) NOT NULL, b INT, updated_at DATETIME(6) NOT "
            "NULL)");
    my.exec("INSERT INTO items SELECT seq, CONCAT('row ', seq), seq % 13, NOW(6) - INTERVAL 1 DAY FROM seq_1_to_7000");
    apply(head("  app: { kind: mysql, dsn: \"" + my.dsn() + "\" }\n", "    target_schema: public\n") +
          "      - { table: " + my.name() + ".items, strategy: cursor, cursor: updated_at, lookback: 0s }\n");
    runOk();
    ASSERT_EQ(dst.scalar(hashOf("items", "id, a, b")), "7000:" + dst.scalar("SELECT md5(string_agg(ROW(g, 'row ' || g, "
                                                                            "g % 13)::text, ',' ORDER BY g)) FROM "
                                                                            "generate_series(1, 7000) g"));
    const std::string others = dst.scalar(hashOf("items", "id, a, b, _driftless_version"));

    my.exec("ALTER TABLE items ADD COLUMN d INT DEFAULT 7");
    my.exec("UPDATE items SET d = id WHERE id % 1000 = 0");
    runOk();
    EXPECT_EQ(dst.scalar("SELECT count(*) || ':' || sum(d) FROM items"),
              "7000:" + my.scalar("SELECT SUM(d) FROM items"));
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM items WHERE d IS NULL"), "0");
    EXPECT_EQ(dst.scalar(hashOf("items", "id, a, b, _driftless_version")), others) << "only d was written";
    EXPECT_NE(events().find("rows backfilled in"), std::string::npos) << events();

    my.exec("ALTER TABLE items CHANGE COLUMN b bb INT");
    auto r = run();
    EXPECT_NE(r.exitCode, 0) << r.out;
    const auto [st, message] = tableState("items");
    EXPECT_EQ(st, "paused");
    EXPECT_NE(message.find("column(s) b gone from the source and bb come since the last pass (a possible rename"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("ALTER TABLE public.items RENAME COLUMN b TO bb"), std::string::npos) << message;
    // The DBA renames it on the target; the next pass goes on.
    dst.exec("ALTER TABLE items RENAME COLUMN b TO bb");
    runOk();
    EXPECT_EQ(tableState("items").first, "ok");
}

// A SQLite target: a cursor table's retype is told by the types the last pass saw (SQLite's
// own are affinities). int -> bigint needs no change there and the wider value arrives;
// text -> integer pauses with what SQLite needs (a new table); once the DBA has rebuilt it with
// the new type, the next pass takes it and what changed meanwhile.
TEST_F(SchemaPasses, sqliteTargetTellsARetypeByTheTypesTheLastPassSaw)
{
    src.exec(seed("items", 300));
    const std::string replica = dir.file("replica.db");
    const std::string yaml = "endpoints:\n"
                             "  app: { kind: postgres, dsn: \"" +
                             src.dsn() +
                             "\" }\n"
                             "  lite: { kind: sqlite, path: \"" +
                             replica +
                             "\" }\n"
                             "pipelines:\n"
                             "  - name: " +
                             pipeline +
                             "\n"
                             "    source: app\n"
                             "    target: lite\n"
                             "    tables:\n" +
                             cursorTable("items");
    apply(yaml);
    runOk();
    const auto lite = [&](const std::string &sql) {
        SqliteDb db(replica);
        auto st = db.prepare(sql);
        return st.step() ? st.text(0) : std::string("(no row)");
    };
    ASSERT_EQ(lite("SELECT count(*) FROM items"), "300");

    src.exec("ALTER TABLE items ALTER COLUMN b TYPE bigint; UPDATE items SET b = 1099511627776, updated_at = now() "
             "WHERE id = 3");
    runOk();
    EXPECT_EQ(lite("SELECT b || ':' || typeof(b) FROM items WHERE id = 3"), "1099511627776:integer");
    EXPECT_NE(events().find("info column b widened from integer to bigint at the source; the SQLite target needs no "
                            "change"),
              std::string::npos)
        << events();

    src.exec("ALTER TABLE items ALTER COLUMN c TYPE integer USING length(c); UPDATE items SET a = 'while paused', "
             "updated_at = now() WHERE id = 5");
    auto r = run();
    EXPECT_NE(r.exitCode, 0) << r.out;
    const auto [st, message] = tableState("items");
    EXPECT_EQ(st, "paused");
    EXPECT_NE(message.find("column c changed type from text to integer on the source since the last pass, which is "
                           "not a widening the engine applies by itself"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("change the type of column c on the target to INTEGER (SQLite changes a type only by "
                           "recreating the table"),
              std::string::npos)
        << message;
    EXPECT_EQ(lite("SELECT a FROM items WHERE id = 5"), "row 5") << "nothing read while paused";

    // The DBA rebuilds the table with c INTEGER, as SQLite asks; the next pass goes on.
    {
        SqliteDb db(replica);
        std::string create = lite("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'items'");
        const std::string text = "\"c\" TEXT";
        const auto at = create.find(text);
        ASSERT_NE(at, std::string::npos) << create;
        create.replace(at, text.size(), "\"c\" INTEGER");
        db.exec("BEGIN; ALTER TABLE items RENAME TO items_old; " + create +
                "; INSERT INTO items SELECT * FROM "
                "items_old; DROP TABLE items_old; UPDATE items SET c = length(c); COMMIT");
    }
    runOk();
    EXPECT_EQ(tableState("items").first, "ok");
    EXPECT_EQ(lite("SELECT a FROM items WHERE id = 5"), "while paused");
    EXPECT_EQ(lite("SELECT count(*) || ':' || sum(c) || ':' || min(typeof(c)) FROM items"),
              src.scalar("SELECT count(*) || ':' || sum(c) || ':integer' FROM items"));
    EXPECT_NE(events().find("info column c changed type from text to integer on the source; the target's column has "
                            "the type for it now"),
              std::string::npos)
        << events();
}

} // namespace
