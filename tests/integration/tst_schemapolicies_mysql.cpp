// Schema changes into a MariaDB target (docs/schema-changes.md), from a Postgres source: an added
// column is backfilled (the guarded fill, never over what the stream wrote) and checked; a
// dropped column is kept (nullable, marked by its COMMENT) or dropped; a widened column is
// widened on the target; a renamed column (the key too) is renamed there. Everything runs the
// way a DBA does it: YAML, `driftless-cli apply`, then `run`. Contents are compared with a hash
// computed in SQL on each side by the test's own queries, never with the engine's hashing.

#include "core/db/sqlitedb.h"
#include "tests/support/mysqltestdb.h"
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

/// count:md5 over "id|a|b" per row (`~` for NULL), in id order: on Postgres ...
std::string pgCommon(PgTestDb &db, const std::string &table, const std::string &id = "id", const std::string &a = "a")
{
    return db.scalar("SELECT count(*) || ':' || md5(coalesce(string_agg(" + id + " || '|' || " + a +
                     " || '|' || coalesce(b::text, '~'), ',' ORDER BY " + id + "), '')) FROM " + table);
}

/// ... and the same text built and hashed on MariaDB.
std::string myCommon(MyTestDb &db, const std::string &table, const std::string &id = "id", const std::string &a = "a")
{
    auto c = db.connect();
    c.exec("SET SESSION group_concat_max_len = 4294967295");
    return c
        .scalar("SELECT CONCAT(COUNT(*), ':', MD5(COALESCE(GROUP_CONCAT(CONCAT(" + id + ", '|', " + a +
                ", '|', COALESCE(b, '~')) ORDER BY " + id + " SEPARATOR ','), ''))) FROM " + table)
        .value_or("NULL");
}

struct MysqlTargetPolicies : ::testing::Test {
    PgTestDb src{"spm_src"};
    MyTestDb dst{"spm_dst"};
    TempDir dir;
    std::string pipeline = uniqueName("spm");
    std::string state = dir.file("workspace.db");
    std::string file = dir.file("ws.yaml");

    std::string head(const std::string &pipelineExtra = "")
    {
        return "endpoints:\n"
               "  app: { kind: postgres, dsn: \"" +
               src.dsn() +
               "\" }\n"
               "  my:  { kind: mysql, dsn: \"" +
               dst.dsn() +
               "\" }\n"
               "pipelines:\n"
               "  - name: " +
               pipeline +
               "\n"
               "    source: app\n"
               "    target: my\n" +
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
    /// COLUMN_TYPE, or "" when the target has no such column.
    std::string targetType(const std::string &table, const std::string &column)
    {
        return dst.scalar("SELECT COALESCE(MAX(COLUMN_TYPE), '') FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
                          "DATABASE() AND TABLE_NAME = '" +
                          table + "' AND COLUMN_NAME = '" + column + "'");
    }
};

// ADD COLUMN d int DEFAULT 7 on 12,000 rows (more than two chunks): the existing rows are filled
// on the MariaDB target, the 20 rows the stream wrote after the DDL keep the stream's values,
// and the engine's own column check (count and md5 as Postgres prints ROW()::text) matches.
TEST_F(MysqlTargetPolicies, anAddedColumnIsBackfilledKeepingWhatTheStreamWrote)
{
    constexpr long long kRows = 12000;
    src.exec(seed("items", kRows));
    apply(head() + "      - { table: public.items, strategy: cdc }\n");
    runOnce();
    ASSERT_EQ(myCommon(dst, "items"), pgCommon(src, "items"));

    src.exec("ALTER TABLE items ADD COLUMN d int DEFAULT 7");
    for (int i = 1; i <= 20; ++i)
        src.exec("UPDATE items SET d = " + std::to_string(1000 + i) + " WHERE id = " + std::to_string(i * 10));
    src.exec("INSERT INTO items (id, a, c, b) VALUES (" + std::to_string(kRows + 1) + ", 'new', 'c', 1)");
    runOnce();

    const std::string want =
        src.scalar("SELECT count(*) || ':' || md5(string_agg(id || ',' || coalesce(d::text, 'NULL'), ';' ORDER BY id)) "
                   "FROM items");
    auto c = dst.connect();
    c.exec("SET SESSION group_concat_max_len = 4294967295");
    EXPECT_EQ(c.scalar("SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(CONCAT(id, ',', COALESCE(d, 'NULL')) ORDER BY "
                       "id SEPARATOR ';'))) FROM items"),
              std::optional<std::string>(want));
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM items WHERE d > 1000"), "20");
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM items WHERE d = 7"), std::to_string(kRows + 1 - 20));
    EXPECT_EQ(myCommon(dst, "items"), pgCommon(src, "items"));
    const std::string ev = events();
    EXPECT_NE(ev.find("info column d added, 12,001 rows backfilled in "), std::string::npos) << ev;
    EXPECT_NE(ev.find(" written; rows the stream changed since keep its values); checked: key and d match the source "
                      "(12,001 rows)"),
              std::string::npos)
        << ev;
    // At least the 11,980 rows older than the DDL were written; the 20 the stream changed after
    // it only when a chunk read the source's value before the stream applied the change (the
    // same value; which one comes first depends on timing), and never the inserted row.
    const auto at = ev.find(" s (");
    ASSERT_NE(at, std::string::npos) << ev;
    std::string digits;
    for (size_t i = at + 4; i < ev.size() && ev[i] != ' '; ++i)
        if (ev[i] != ',')
            digits += ev[i];
    const long long written = std::stoll(digits);
    EXPECT_GE(written, 11980) << ev;
    EXPECT_LE(written, 12000) << ev;
    EXPECT_EQ(ev.find("not available for"), std::string::npos) << ev;

    // A second pass has nothing to fill: nothing is written again, and the target still matches.
    runOnce();
    EXPECT_EQ(c.scalar("SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(CONCAT(id, ',', COALESCE(d, 'NULL')) ORDER BY "
                       "id SEPARATOR ';'))) FROM items"),
              std::optional<std::string>(want));
}

// Between two `run --once` passes (the engine stopped across the DDL): keep, drop and pause side
// by side, and widenings (int -> bigint, varchar(10) -> varchar(50)) that the stream shows.
TEST_F(MysqlTargetPolicies, droppedColumnsAreKeptOrDroppedAndWidenedColumnsTakeWiderValues)
{
    src.exec(seed("kept", 300) + seed("gone", 300) + seed("held", 300));
    apply(head("    schema_changes: { drop_column: drop }\n") +
          "      - { table: public.kept, strategy: cdc, schema_changes: { drop_column: keep } }\n"
          "      - { table: public.gone, strategy: cdc }\n"
          "      - { table: public.held, strategy: cdc, schema_changes: { drop_column: pause } }\n");
    runOnce();
    ASSERT_EQ(myCommon(dst, "kept"), pgCommon(src, "kept"));
    EXPECT_EQ(dst.scalar("SELECT IS_NULLABLE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
                         "TABLE_NAME = 'kept' AND COLUMN_NAME = 'c'"),
              "NO");
    const std::string heldBefore = myCommon(dst, "held");

    for (const char *t : {"kept", "gone", "held"})
        src.exec(std::string("UPDATE ") + t + " SET a = 'before drop', c = 'new c' WHERE id <= 10; ALTER TABLE " + t +
                 " DROP COLUMN c; UPDATE " + t + " SET b = -1 WHERE id BETWEEN 5 AND 20; INSERT INTO " + t +
                 " (id, a, b) SELECT g, 'after', 1 FROM generate_series(301, 330) g;");
    // Each its own transaction, so the stream shows the old types, then the new ones.
    src.exec("UPDATE kept SET a = 'before widen' WHERE id = 40");
    src.exec("ALTER TABLE kept ALTER COLUMN b TYPE bigint");
    src.exec("ALTER TABLE kept ALTER COLUMN v TYPE varchar(50)");
    src.exec("UPDATE kept SET b = 4000000000, v = repeat('x', 50) WHERE id = 3");
    src.exec("INSERT INTO kept (id, a, b, v) VALUES (5000, 'big', 3000000000, 'a value longer than ten')");
    runOnce();

    // keep: c stays, nullable and marked; new rows hold NULL there, every other column synced.
    EXPECT_EQ(myCommon(dst, "kept"), pgCommon(src, "kept"));
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM kept WHERE c IS NULL"), "31");
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM kept WHERE id > 300 AND c IS NULL"), "31");
    // Changed in the drop's own transaction, read after it: c is not written (it keeps its value).
    EXPECT_EQ(dst.scalar("SELECT c FROM kept WHERE id = 8"), "c8");
    EXPECT_EQ(dst.scalar("SELECT CONCAT(IS_NULLABLE, ' ', COLUMN_COMMENT) FROM information_schema.COLUMNS WHERE "
                         "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'kept' AND COLUMN_NAME = 'c'"),
              "YES dropped on the source; kept by Driftless, no longer written");
    // widened: the values only the wider types hold arrived.
    EXPECT_EQ(targetType("kept", "b"), "bigint(20)");
    EXPECT_EQ(targetType("kept", "v"), "varchar(50)");
    EXPECT_EQ(dst.scalar("SELECT CONCAT(b, ' ', v) FROM kept WHERE id = 3"), "4000000000 " + std::string(50, 'x'));
    EXPECT_EQ(dst.scalar("SELECT CONCAT(b, ' ', v) FROM kept WHERE id = 5000"), "3000000000 a value longer than ten");
    // drop: gone from the target, every other column synced.
    EXPECT_EQ(myCommon(dst, "gone"), pgCommon(src, "gone"));
    EXPECT_EQ(targetType("gone", "c"), "");
    // pause: nothing applied.
    EXPECT_EQ(myCommon(dst, "held"), heldBefore);
    const std::string ev = events();
    EXPECT_NE(ev.find("info column c dropped on the source; dropped on the target (schema_changes: drop_column: drop)"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("info column c dropped on the source; kept on the target, no longer written (schema_changes: "
                      "drop_column: keep)"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("info column b widened from integer to bigint on the target"), std::string::npos) << ev;
    EXPECT_NE(ev.find("info column v widened from character varying(10) to character varying(50) on the target"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("error column(s) c dropped on the source while the engine was stopped (schema_changes: "
                      "drop_column: pause); the table is paused"),
              std::string::npos)
        << ev;

    // The next pass: kept and gone sync on, and nothing is dropped, kept or widened again.
    const std::string before = events();
    src.exec("UPDATE kept SET a = 'later' WHERE id = 41; UPDATE gone SET a = 'later' WHERE id = 41;"
             "INSERT INTO kept (id, a, b) VALUES (400, 'x', 2)");
    runOnce();
    EXPECT_EQ(myCommon(dst, "kept"), pgCommon(src, "kept"));
    EXPECT_EQ(myCommon(dst, "gone"), pgCommon(src, "gone"));
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM kept WHERE c IS NULL"), "32");
    const std::string after = events().substr(before.size());
    EXPECT_EQ(after.find("dropped on the target"), std::string::npos) << after;
    EXPECT_EQ(after.find("kept on the target"), std::string::npos) << after;
    EXPECT_EQ(after.find("widened"), std::string::npos) << after;
}

// Renames while the stream runs: `a` and the key `id` are renamed on the MariaDB target (and in
// the key's bookkeeping tables), every value kept; deletes after the rename find the key.
TEST_F(MysqlTargetPolicies, whileStreamingARenamedColumnAndKeyAreRenamedOnTheTarget)
{
    src.exec(seed("items", 1000));
    apply(head() + "      - { table: public.items, strategy: cdc }\n");
    const std::string log = dir.file("run.log");
    const int runner = spawnCli({"--state", state, "run"}, {}, log);
    ASSERT_TRUE(waitForIgnoringErrors([&] { return myCommon(dst, "items") == pgCommon(src, "items"); }, 120, kPoll))
        << readFile(log);
    // A change before the DDL, so the stream has seen the old names.
    src.exec("UPDATE items SET b = 100 WHERE id = 1");
    ASSERT_TRUE(
        waitForIgnoringErrors([&] { return dst.scalar("SELECT b FROM items WHERE id = 1") == "100"; }, 120, kPoll))
        << readFile(log);

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
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] { return myCommon(dst, "items", "item_id", "title") == pgCommon(src, "items", "item_id", "title"); }, 120,
        kPoll))
        << readFile(log) << events();
    EXPECT_EQ(::kill(runner, 0), 0) << readFile(log); // it streamed on throughout
    ::kill(runner, SIGTERM);
    EXPECT_EQ(waitPid(runner, 60), 0) << readFile(log);

    EXPECT_EQ(targetType("items", "a"), "");
    EXPECT_EQ(targetType("items", "title"), "longtext");
    EXPECT_EQ(targetType("items", "item_id"), "bigint(20)");
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM items WHERE title IS NULL"), "0") << "no value lost to a drop and add";
    EXPECT_EQ(dst.scalar("SELECT COUNT(*) FROM `_driftless_tomb_items` WHERE item_id BETWEEN 500 AND 509"), "10");
    const std::string ev = events();
    EXPECT_NE(ev.find("info column a renamed to title on the source; renamed on the target (schema_changes: "
                      "rename_column: rename)"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("info column id renamed to item_id on the source; renamed on the target"), std::string::npos)
        << ev;

    // A restart: nothing renamed again, and the stream goes on under the new names.
    const std::string before = events();
    src.exec("UPDATE items SET title = 'after restart' WHERE item_id = 3");
    runOnce();
    EXPECT_EQ(myCommon(dst, "items", "item_id", "title"), pgCommon(src, "items", "item_id", "title"));
    EXPECT_EQ(events().find("renamed to", before.size()), std::string::npos) << events();
}

// A cursor table into MariaDB follows a retype at its next pass: the types it saw at the last
// pass tell the change (the target's own types are spelled otherwise). int -> bigint is widened
// on the target and the wider value arrives; text -> integer is no widening and pauses with the
// MODIFY COLUMN to run; after the DBA runs it and applies widen, the next pass syncs again.
TEST_F(MysqlTargetPolicies, aCursorTableFollowsARetypeAtItsNextPass)
{
    src.exec("CREATE TABLE items (id bigint PRIMARY KEY, a text NOT NULL, b int, c text, updated_at timestamptz NOT "
             "NULL);\n"
             "INSERT INTO items SELECT g, 'row ' || g, g % 13, (g % 7)::text, now() - interval '1 day' FROM "
             "generate_series(1, 200) g;");
    const std::string table = "      - { table: public.items, strategy: cursor, cursor: updated_at, lookback: 0s }\n";
    apply(head() + table);
    runOnce();
    ASSERT_EQ(myCommon(dst, "items"), pgCommon(src, "items"));
    ASSERT_EQ(targetType("items", "b"), "int(11)");

    src.exec("ALTER TABLE items ALTER COLUMN b TYPE bigint; UPDATE items SET b = 1099511627776, updated_at = now() "
             "WHERE id = 3");
    runOnce();
    EXPECT_EQ(targetType("items", "b"), "bigint(20)");
    EXPECT_EQ(dst.scalar("SELECT b FROM items WHERE id = 3"), "1099511627776");
    EXPECT_EQ(myCommon(dst, "items"), pgCommon(src, "items"));
    EXPECT_NE(events().find("info column b widened from integer to bigint on the target"), std::string::npos)
        << events();

    // Another pass without a change changes nothing more.
    const std::string before = events();
    runOnce();
    EXPECT_EQ(events(), before);

    // No widening: paused, with the statement for this target, and nothing read meanwhile.
    src.exec("ALTER TABLE items ALTER COLUMN c TYPE integer USING c::integer; UPDATE items SET a = 'while paused', "
             "updated_at = now() WHERE id = 5");
    auto r = runCli({"--state", state, "run", "--once"});
    EXPECT_NE(r.exitCode, 0) << r.out;
    SqliteDb db(state);
    auto st = db.prepare("SELECT state, message FROM table_status WHERE pipeline = ?1");
    st.bindText(1, pipeline);
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.text(0), "paused");
    const std::string message = st.text(1);
    EXPECT_NE(message.find("column c changed type from text to integer on the source since the last pass, which is "
                           "not a widening the engine applies by itself"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("ALTER TABLE `items` MODIFY COLUMN `c` INT"), std::string::npos) << message;
    EXPECT_NE(message.find("driftless-cli reconcile " + pipeline + " public.items"), std::string::npos) << message;
    EXPECT_EQ(dst.scalar("SELECT a FROM items WHERE id = 5"), "row 5");

    // The DBA runs it: the next pass takes the type and the change made meanwhile (the rows the
    // pass does not read again hold what MariaDB's conversion made of them, '3' -> 3 as on the
    // source; the message says to reconcile them).
    dst.exec("ALTER TABLE `items` MODIFY COLUMN `c` INT");
    runOnce();
    EXPECT_EQ(dst.scalar("SELECT a FROM items WHERE id = 5"), "while paused");
    EXPECT_EQ(myCommon(dst, "items"), pgCommon(src, "items"));
    EXPECT_EQ(dst.scalar("SELECT CONCAT(COUNT(c), ':', SUM(c)) FROM items"),
              src.scalar("SELECT count(c) || ':' || sum(c) FROM items"));
    EXPECT_NE(events().find("info column c changed type from text to integer on the source; the target's column has "
                            "the type for it now"),
              std::string::npos)
        << events();
}

} // namespace
