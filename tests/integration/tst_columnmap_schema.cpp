// Schema changes on a table with a `columns:` mapping (docs/schema-changes.md): while the stream
// runs, a column the source adds is added and backfilled through the mapping, a dropped renamed
// column is kept under its target name, a masked column is widened and keeps being masked, and a
// column the mapping does not name is renamed on the target. An include list keeps an added
// column out. Postgres source, Postgres and MariaDB targets, driven as a DBA does: YAML, apply,
// run. The expected rows are computed by SQL on the source (the masks written out by hand), the
// copies read by SQL on each target.

#include "core/db/sqlitedb.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>
#include <vector>

using namespace driftless::test;
using namespace driftless;

namespace {

/// How often this file's conditions are asked again.
constexpr std::chrono::milliseconds kPoll{200};
constexpr int kRows = 300;

const char *kMapping = "columns: { exclude: [internal_notes], rename: { email: email_address }, "
                       "mask: { phone: { keep_last: 4 } } }";

struct ColumnMapSchema : ::testing::Test {
    PgTestDb src{"cms_src"};
    PgTestDb pgDst{"cms_dst"};
    MyTestDb myDst{"cms_my"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string pgPipeline = uniqueName("cmspg");
    std::string myPipeline = uniqueName("cmsmy");
    std::vector<int> runners;

    void SetUp() override
    {
        src.exec("CREATE TABLE m (id int PRIMARY KEY, name text, email text, internal_notes text, "
                 "phone varchar(20), v varchar(10))");
        src.exec("INSERT INTO m SELECT g, 'name ' || g, 'user' || g || '@example.com', 'SECRETNOTE-' || g, "
                 "'PH-' || lpad(g::text, 8, '0'), 'v' || (g % 50) FROM generate_series(1, " +
                 std::to_string(kRows) + ") g");
    }
    void TearDown() override
    {
        for (int pid : runners)
            if (::kill(pid, 0) == 0) {
                ::kill(pid, SIGKILL);
                waitPid(pid, 30);
            }
    }

    std::string yaml(const std::string &item) const
    {
        return "endpoints:\n"
               "  app: { kind: postgres, dsn: \"" +
               src.dsn() +
               "\" }\n"
               "  dw:  { kind: postgres, dsn: \"" +
               pgDst.dsn() +
               "\" }\n"
               "  my:  { kind: mysql, dsn: \"" +
               myDst.dsn() +
               "\" }\n"
               "pipelines:\n"
               "  - name: " +
               pgPipeline + "\n    source: app\n    target: dw\n    tables:\n" + item + "  - name: " + myPipeline +
               "\n    source: app\n    target: my\n    tables:\n" + item;
    }
    void apply(const std::string &text)
    {
        const std::string f = dir.file("ws.yaml");
        writeFile(f, text);
        auto r = runCli({"--state", state, "apply", f});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    std::string events() const
    {
        core::SqliteDb db(state);
        auto st = db.prepare("SELECT level || ' ' || message FROM events WHERE kind = 'schema_change' ORDER BY id");
        std::string out;
        while (st.step())
            out += st.text(0) + "\n";
        return out;
    }

    /// id|name|phone|v2|d per row, NULL as `~`, in key order, with the mapping's mask on phone
    /// written out in SQL: what both targets must hold.
    std::string expected() const
    {
        return src.scalar("SELECT string_agg(concat_ws('|', id, coalesce(name, '~'), coalesce(repeat('*', "
                          "greatest(length(phone) - 4, 0)) || right(phone, 4), '~'), coalesce(v2, '~'), "
                          "coalesce(d::text, '~')), E'\\n' ORDER BY id) FROM m");
    }
    std::string pgRows() const
    {
        return pgDst.scalar("SELECT string_agg(concat_ws('|', id, coalesce(name, '~'), coalesce(phone, '~'), "
                            "coalesce(v2, '~'), coalesce(d::text, '~')), E'\\n' ORDER BY id) FROM m");
    }
    std::string myRows() const
    {
        auto c = myDst.connect();
        c.exec("SET SESSION group_concat_max_len = 1000000");
        return c
            .scalar("SELECT GROUP_CONCAT(CONCAT_WS('|', id, IFNULL(name, '~'), IFNULL(phone, '~'), IFNULL(v2, '~'), "
                    "IFNULL(d, '~')) ORDER BY id SEPARATOR '\\n') FROM m")
            .value_or("");
    }
    std::string pgColumns() const
    {
        return pgDst.scalar("SELECT string_agg(column_name, ',' ORDER BY column_name) FROM information_schema.columns "
                            "WHERE table_schema = 'public' AND table_name = 'm' AND column_name NOT LIKE "
                            "'\\_driftless%'");
    }
    std::string myColumns() const
    {
        return myDst.scalar("SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY COLUMN_NAME SEPARATOR ',') FROM "
                            "information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'm' AND "
                            "COLUMN_NAME NOT LIKE '\\_driftless%'");
    }
    long long pgCount() const { return std::stoll(pgDst.scalar("SELECT count(*) FROM m")); }
    long long myCount() const { return std::stoll(myDst.scalar("SELECT count(*) FROM m")); }
};

} // namespace

TEST_F(ColumnMapSchema, aMappedTableTakesAddedDroppedWidenedAndRenamedColumnsWhileTheStreamGoesOn)
{
    apply(yaml("      - { table: public.m, strategy: cdc, " + std::string(kMapping) + " }\n"));
    const std::string log = dir.file("run.log");
    runners.push_back(spawnCli({"--state", state, "run"}, {}, log));
    const int runner = runners.back();
    ASSERT_TRUE(waitForIgnoringErrors([&] { return pgCount() == kRows && myCount() == kRows; }, 180, kPoll))
        << readFile(log);

    // Added with a DEFAULT, and a bounded writer changes it right after the DDL: every target row
    // ends with the source's d, and the existing rows are filled through the mapping.
    auto c = src.connect();
    c.exec("ALTER TABLE m ADD COLUMN d int DEFAULT 7");
    for (int i = 1; i <= 20; ++i)
        c.exec("UPDATE m SET d = " + std::to_string(1000 + i) + " WHERE id = " + std::to_string(i * 3));
    c.exec("INSERT INTO m (id, name, email, internal_notes, phone, v) VALUES (1001, 'after add', 'a@x', "
           "'SECRETNOTE-1001', 'PH-00001001', 'va')");
    // Each pipeline reports its own backfill once it is done.
    ASSERT_TRUE(waitForIgnoringErrors(
        [&] {
            const std::string ev = events();
            size_t n = 0;
            for (size_t at = 0; (at = ev.find("column d added, ", at)) != std::string::npos; ++at)
                ++n;
            return n == 2 && pgDst.scalar("SELECT count(*) FROM m WHERE d IS NULL") == "0" &&
                   myDst.scalar("SELECT count(*) FROM m WHERE d IS NULL") == "0";
        },
        180, kPoll))
        << readFile(log) << events();
    EXPECT_EQ(pgDst.scalar("SELECT count(*) FROM m WHERE d = 7"), std::to_string(kRows - 20 + 1));
    EXPECT_EQ(pgDst.scalar("SELECT d FROM m WHERE id = 30"), "1010");
    EXPECT_EQ(myDst.scalar("SELECT d FROM m WHERE id = 30"), "1010");
    {
        const std::string ev = events();
        // Both pipelines compared the column in SQL on each side.
        size_t checked = 0;
        for (size_t at = 0;
             (at = ev.find("checked: key and d match the source (" + std::to_string(kRows + 1) + " rows)", at)) !=
             std::string::npos;
             ++at)
            ++checked;
        EXPECT_EQ(checked, 2u) << ev;
    }

    // The renamed column dropped: kept under its target name, no longer written.
    c.exec("ALTER TABLE m DROP COLUMN email");
    c.exec("INSERT INTO m (id, name, internal_notes, phone, v, d) VALUES (1002, 'after drop', 'SECRETNOTE-1002', "
           "'PH-00001002', 'vb', 2)");
    c.exec("UPDATE m SET name = 'changed after drop' WHERE id = 5");
    // The masked column widened, then a value only the wider type holds.
    c.exec("ALTER TABLE m ALTER COLUMN phone TYPE varchar(40)");
    c.exec("UPDATE m SET phone = 'PH-WIDE-0123456789-0123456789-5555' WHERE id = 6");
    // A column the mapping does not name renamed.
    c.exec("ALTER TABLE m RENAME COLUMN v TO v2");
    c.exec("UPDATE m SET v2 = 'renamed' WHERE id = 7");
    c.exec("INSERT INTO m (id, name, internal_notes, phone, v2, d) VALUES (1003, 'after rename', 'SECRETNOTE-1003', "
           "'PH-00001003', 'vc', 3)");

    ASSERT_TRUE(waitForIgnoringErrors([&] { return pgRows() == expected() && myRows() == expected(); }, 180, kPoll))
        << readFile(log) << events();
    EXPECT_EQ(::kill(runner, 0), 0) << readFile(log); // it streamed on throughout: nothing paused
    ::kill(runner, SIGTERM);
    EXPECT_EQ(waitPid(runner, 60), 0) << readFile(log);

    EXPECT_EQ(pgColumns(), "d,email_address,id,name,phone,v2");
    EXPECT_EQ(myColumns(), "d,email_address,id,name,phone,v2");
    // Rows written before the drop keep their address; those written after it have none.
    EXPECT_EQ(pgDst.scalar("SELECT email_address FROM m WHERE id = 5"), "user5@example.com");
    EXPECT_EQ(myDst.scalar("SELECT email_address FROM m WHERE id = 5"), "user5@example.com");
    EXPECT_EQ(pgDst.scalar("SELECT count(*) FROM m WHERE email_address IS NULL"), "2");
    EXPECT_EQ(pgDst.scalar("SELECT phone FROM m WHERE id = 6"), std::string(30, '*') + "5555");
    EXPECT_EQ(pgDst.scalar("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                           "'public.m'::regclass AND attname = 'phone'"),
              "character varying(40)");
    // The excluded column's values reached neither target.
    EXPECT_EQ(pgDst.scalar("SELECT count(*) FROM information_schema.columns WHERE column_name = 'internal_notes'"),
              "0");
    EXPECT_EQ(readFile(log).find("SECRETNOTE"), std::string::npos);
    EXPECT_EQ(readFile(state).find("SECRETNOTE"), std::string::npos);

    const std::string ev = events();
    EXPECT_NE(ev.find("column email dropped on the source; kept on the target, no longer written (its target column "
                      "email_address) (schema_changes: drop_column: keep)"),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("column phone widened from character varying(20) to character varying(40)"), std::string::npos)
        << ev;
    EXPECT_NE(ev.find("column v renamed to v2 on the source"), std::string::npos) << ev;
    EXPECT_EQ(ev.find("error"), std::string::npos) << ev;
}

// A rename of a column the mapping names leaves the YAML stale: the table pauses and says which
// entry to change; a column the include list does not name is never added.
TEST_F(ColumnMapSchema, aRenameOfAMappedColumnPausesAndAnIncludeListKeepsAnAddedColumnOut)
{
    apply(yaml("      - { table: public.m, strategy: cdc, columns: { include: [id, name, phone, v], "
               "rename: { name: label }, mask: { phone: { keep_last: 4 } } } }\n"));
    auto first = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
    src.exec("ALTER TABLE m ADD COLUMN secret text DEFAULT 'ADDEDSECRET'");
    src.exec("UPDATE m SET name = 'after add' WHERE id = 1");
    auto second = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(second.exitCode, 0) << second.out << second.err;
    EXPECT_EQ(pgColumns(), "id,label,phone,v");
    EXPECT_EQ(myColumns(), "id,label,phone,v");
    EXPECT_EQ(pgDst.scalar("SELECT label FROM m WHERE id = 1"), "after add");

    src.exec("ALTER TABLE m RENAME COLUMN name TO title");
    src.exec("UPDATE m SET title = 'after rename' WHERE id = 2");
    auto third = runCli({"--state", state, "run", "--once"});
    EXPECT_EQ(third.exitCode, 0) << third.out << third.err;
    const std::string ev = events();
    EXPECT_NE(ev.find("column name renamed to title on the source; a renamed column is not handled for a table "
                      "whose columns: mapping names the column (change the entry to the new name) yet"),
              std::string::npos)
        << ev;
    // Nothing already synced is lost: the target keeps what it had. A restart is refused with
    // the YAML entry to change, until a DBA changes it.
    EXPECT_EQ(pgDst.scalar("SELECT label FROM m WHERE id = 2"), "name 2");
    EXPECT_EQ(pgCount(), kRows);
    auto fourth = runCli({"--state", state, "run", "--once"});
    EXPECT_EQ(fourth.exitCode, 1) << fourth.out << fourth.err;
    EXPECT_NE((fourth.out + fourth.err)
                  .find("tables[public.m].columns.include[name]: table public.m has no column "
                        "name at the source"),
              std::string::npos)
        << fourth.out << fourth.err;
    EXPECT_EQ(pgDst.scalar("SELECT label FROM m WHERE id = 2"), "name 2");
}
