// Tables without a primary key, keyed by a unique index on NOT NULL columns (issue 46 item 2,
// first step) or by a declared `key:`: CDC and cursor sync take that index as the key, on both sources, into a Postgres
// target, through the CLI; the oracle is a hash computed in SQL on each side. A Postgres table
// whose replica identity cannot carry that key is refused with the exact statement that fixes
// it, and a unique index with a nullable column is not a key.

#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <string>

using namespace driftless;
using namespace driftless::test;

namespace {

enum class Source { Postgres, Mariadb };

struct UniqueKeys : ::testing::TestWithParam<Source> {
    std::unique_ptr<PgTestDb> pgSrc;
    std::unique_ptr<MyTestDb> mySrc;
    PgTestDb dst{"uk_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string pipeline = uniqueName("uk");

    bool mariadb() const { return GetParam() == Source::Mariadb; }
    std::string schema() const { return mariadb() ? mySrc->name() : "public"; }
    void exec(const std::string &sql) const { mariadb() ? mySrc->exec(sql) : pgSrc->exec(sql); }

    void SetUp() override
    {
        if (mariadb())
            mySrc = std::make_unique<MyTestDb>("uk_src");
        else
            pgSrc = std::make_unique<PgTestDb>("uk_src");
        const std::string stamp =
            mariadb() ? "datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)" : "timestamptz NOT NULL DEFAULT now()";
        // No primary key; `code` is unique and NOT NULL. `alt` is unique too but nullable: not a key.
        for (const char *t : {"uk_cdc", "uk_cursor"})
            exec(std::string("CREATE TABLE ") + t + " (code varchar(20) NOT NULL, alt int, v varchar(40), updated_at " +
                 stamp + ", CONSTRAINT " + t + "_alt UNIQUE (alt), CONSTRAINT " + t + "_code UNIQUE (code))");
        if (!mariadb())
            exec("ALTER TABLE uk_cdc REPLICA IDENTITY USING INDEX uk_cdc_code");
        for (const char *t : {"uk_cdc", "uk_cursor"})
            for (int i = 1; i <= 60; ++i)
                exec(std::string("INSERT INTO ") + t + " (code, alt, v) VALUES ('c" + std::to_string(i) + "', " +
                     (i % 3 ? std::to_string(i) : "NULL") + ", 'v" + std::to_string(i) + "')");
    }
    std::string sourceHash(const std::string &t) const
    {
        if (mariadb())
            return mySrc->scalar("SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(CONCAT(code, '|', IFNULL(alt, '~'), "
                                 "'|', IFNULL(v, '~')) ORDER BY code SEPARATOR ','))) FROM " +
                                 t);
        return pgSrc->scalar(
            "SELECT count(*) || ':' || md5(string_agg(code || '|' || coalesce(alt::text, '~') || '|' || "
            "coalesce(v, '~'), ',' ORDER BY code COLLATE \"C\")) FROM " +
            t);
    }
    std::string targetHash(const std::string &t) const
    {
        return dst.scalar("SELECT count(*) || ':' || md5(string_agg(code || '|' || coalesce(alt::text, '~') || '|' || "
                          "coalesce(v, '~'), ',' ORDER BY code COLLATE \"C\")) FROM model." +
                          t);
    }
    CliResult apply(const std::string &cdcTable = "uk_cdc", bool noCheck = false)
    {
        const std::string src = mariadb() ? "{ kind: mysql, dsn: \"" + mySrc->dsn() + "\" }"
                                          : "{ kind: postgres, dsn: \"" + pgSrc->dsn() + "\" }";
        const std::string file = dir.file("ws.yaml");
        writeFile(file, "endpoints:\n  src: " + src + "\n  dw: { kind: postgres, dsn: \"" + dst.dsn() +
                            "\" }\npipelines:\n  - name: " + pipeline +
                            "\n    source: src\n    target: dw\n    target_schema: model\n    tables:\n"
                            "      - { table: " +
                            schema() + "." + cdcTable + ", strategy: cdc }\n      - { table: " + schema() +
                            ".uk_cursor, strategy: cursor, lookback: 0s }\n");
        if (noCheck)
            return runCli({"--state", state, "apply", "--no-check", file});
        return runCli({"--state", state, "apply", file});
    }
};

} // namespace

TEST_P(UniqueKeys, aUniqueIndexOnNotNullColumnsKeysCdcAndCursorSync)
{
    auto applied = apply();
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto doctor = runCli({"--state", state, "doctor"});
    EXPECT_NE(doctor.out.find("keyed by unique index uk_cdc_code (code), no primary key"), std::string::npos)
        << "the doctor says which index keys it, not the nullable one:\n"
        << doctor.out << doctor.err;
    auto first = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
    EXPECT_EQ(targetHash("uk_cdc"), sourceHash("uk_cdc"));
    EXPECT_EQ(targetHash("uk_cursor"), sourceHash("uk_cursor"));
    EXPECT_EQ(dst.scalar("SELECT string_agg(a.attname, ',') FROM pg_index i JOIN pg_attribute a ON a.attrelid = "
                         "i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = 'model.uk_cdc'::regclass AND "
                         "i.indisprimary"),
              "code")
        << "the target is keyed by the source's unique key";

    // Updates, deletes, a key change and an insert; the cursor table's rows move their cursor.
    exec("UPDATE uk_cdc SET v = 'changed' WHERE code IN ('c1', 'c2', 'c3')");
    exec("DELETE FROM uk_cdc WHERE code IN ('c4', 'c5')");
    exec("UPDATE uk_cdc SET code = 'renamed6' WHERE code = 'c6'");
    exec("INSERT INTO uk_cdc (code, alt, v) VALUES ('new1', NULL, 'n'), ('new2', 1001, 'n')");
    const std::string later = mariadb() ? "CURRENT_TIMESTAMP(6) + INTERVAL 1 SECOND" : "now() + interval '1 second'";
    exec("UPDATE uk_cursor SET v = 'changed', updated_at = " + later + " WHERE code IN ('c7', 'c8')");
    exec("INSERT INTO uk_cursor (code, alt, v, updated_at) VALUES ('new3', NULL, 'n', " + later + ")");
    auto second = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(second.exitCode, 0) << second.out << second.err;
    EXPECT_EQ(targetHash("uk_cdc"), sourceHash("uk_cdc")) << "streamed by the unique key";
    EXPECT_EQ(targetHash("uk_cursor"), sourceHash("uk_cursor")) << "paged by the cursor and the unique key";
}

TEST_P(UniqueKeys, aKeyTheSourceCannotStreamIsRefusedWithTheStatementThatFixesIt)
{
    std::string table = "uk_cdc", says;
    if (!mariadb()) {
        // REPLICA IDENTITY DEFAULT without a primary key: the old key never reaches the stream.
        exec("ALTER TABLE uk_cdc REPLICA IDENTITY DEFAULT");
        says = "ALTER TABLE public.uk_cdc REPLICA IDENTITY USING INDEX uk_cdc_code";
    } else {
        // Only a nullable unique column: no key at all.
        exec("CREATE TABLE uk_nullable (alt int, v varchar(40), CONSTRAINT uk_nullable_alt UNIQUE (alt))");
        table = "uk_nullable";
        says = "no primary key and no unique index on NOT NULL columns";
    }
    auto applied = apply(table);
    EXPECT_EQ(applied.exitCode, 2) << "apply checks the live source first";
    EXPECT_NE(applied.err.find(says), std::string::npos) << applied.out << applied.err;
    // Stored anyway (--no-check), the engine refuses it before anything is published or copied.
    auto forced = apply(table, true);
    ASSERT_EQ(forced.exitCode, 0) << forced.out << forced.err;
    auto run = runCli({"--state", state, "run", "--once"});
    EXPECT_NE(run.exitCode, 0);
    EXPECT_NE((run.out + run.err).find(says), std::string::npos) << run.out << run.err;
    if (!mariadb()) {
        EXPECT_EQ(pgSrc->scalar("SELECT count(*) FROM pg_publication_tables WHERE tablename = 'uk_cdc'"), "0")
            << "never published: the source would refuse the application's updates";
    }
}

// `key: [a, b]` on tables with no key of their own: apply checks the source (a Postgres CDC table
// needs REPLICA IDENTITY FULL; values must be unique and never NULL), then CDC and cursor sync key
// the rows by the declared columns, the target's primary key included.
TEST_P(UniqueKeys, aDeclaredKeyKeysTablesThatHaveNone)
{
    const std::string stamp =
        mariadb() ? "datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)" : "timestamptz NOT NULL DEFAULT now()";
    for (const char *t : {"dk_cdc", "dk_cursor"}) {
        exec(std::string("CREATE TABLE ") + t + " (a int, b varchar(10), v varchar(40), updated_at " + stamp + ")");
        for (int i = 1; i <= 40; ++i)
            exec(std::string("INSERT INTO ") + t + " (a, b, v) VALUES (" + std::to_string(i % 7) + ", 'b" +
                 std::to_string(i / 7) + "', 'v" + std::to_string(i) + "')");
    }
    auto hash = [&](bool source, const std::string &t) {
        if (source && mariadb())
            return mySrc->scalar("SELECT CONCAT(COUNT(*), ':', MD5(GROUP_CONCAT(CONCAT(a, '|', b, '|', IFNULL(v, '~')) "
                                 "ORDER BY a, b SEPARATOR ','))) FROM " +
                                 t);
        const std::string sql = "SELECT count(*) || ':' || md5(string_agg(a || '|' || b || '|' || coalesce(v, '~'), "
                                "',' ORDER BY a, b COLLATE \"C\")) FROM " +
                                std::string(source ? "" : "model.") + t;
        return source ? pgSrc->scalar(sql) : dst.scalar(sql);
    };
    const std::string src = mariadb() ? "{ kind: mysql, dsn: \"" + mySrc->dsn() + "\" }"
                                      : "{ kind: postgres, dsn: \"" + pgSrc->dsn() + "\" }";
    const std::string file = dir.file("declared.yaml");
    writeFile(file, "endpoints:\n  src: " + src + "\n  dw: { kind: postgres, dsn: \"" + dst.dsn() +
                        "\" }\npipelines:\n  - name: " + pipeline +
                        "\n    source: src\n    target: dw\n    target_schema: model\n    tables:\n      - { table: " +
                        schema() + ".dk_cdc, strategy: cdc, key: [a, b] }\n      - { table: " + schema() +
                        ".dk_cursor, strategy: cursor, lookback: 0s, key: [a, b] }\n");
    if (!mariadb()) {
        auto refused = runCli({"--state", state, "apply", file});
        EXPECT_EQ(refused.exitCode, 2) << refused.out << refused.err;
        EXPECT_NE(refused.err.find("ALTER TABLE public.dk_cdc REPLICA IDENTITY FULL"), std::string::npos)
            << "the old rows must carry the declared key:\n"
            << refused.out << refused.err;
        exec("ALTER TABLE dk_cdc REPLICA IDENTITY FULL");
    }
    auto applied = runCli({"--state", state, "apply", file});
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto doctor = runCli({"--state", state, "doctor"});
    EXPECT_NE(doctor.out.find("keyed by declared key (a, b)"), std::string::npos) << doctor.out << doctor.err;
    auto first = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
    EXPECT_EQ(hash(false, "dk_cdc"), hash(true, "dk_cdc"));
    EXPECT_EQ(hash(false, "dk_cursor"), hash(true, "dk_cursor"));
    EXPECT_EQ(dst.scalar("SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM pg_index i CROSS JOIN LATERAL "
                         "unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) JOIN pg_attribute a ON a.attrelid = "
                         "i.indrelid AND a.attnum = k.attnum WHERE i.indrelid = 'model.dk_cdc'::regclass AND "
                         "i.indisprimary"),
              "a,b")
        << "the target is keyed by the declared key";

    exec("UPDATE dk_cdc SET v = 'changed' WHERE a = 1");
    exec("DELETE FROM dk_cdc WHERE a = 2 AND b = 'b0'");
    exec("UPDATE dk_cdc SET b = 'moved' WHERE a = 3 AND b = 'b1'");
    exec("INSERT INTO dk_cdc (a, b, v) VALUES (100, 'new', 'n')");
    const std::string later = mariadb() ? "CURRENT_TIMESTAMP(6) + INTERVAL 1 SECOND" : "now() + interval '1 second'";
    exec("UPDATE dk_cursor SET v = 'changed', updated_at = " + later + " WHERE a = 4");
    auto second = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(second.exitCode, 0) << second.out << second.err;
    EXPECT_EQ(hash(false, "dk_cdc"), hash(true, "dk_cdc")) << "updates, a delete and a key change by the declared key";
    EXPECT_EQ(hash(false, "dk_cursor"), hash(true, "dk_cursor"));

    // Values the key cannot tell apart: apply refuses, saying so and what to do.
    exec("INSERT INTO dk_cursor (a, b, v) VALUES (5, 'b0', 'twin'), (5, NULL, 'no key')");
    auto refused = runCli({"--state", state, "apply", file});
    EXPECT_EQ(refused.exitCode, 2) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("declared key (a, b) of " + schema() +
                               ".dk_cursor does not key its rows on the source: 1 row(s) hold NULL in it, and 1 of "
                               "its values are held by more than one row"),
              std::string::npos)
        << refused.out << refused.err;
}

INSTANTIATE_TEST_SUITE_P(BothSources, UniqueKeys, ::testing::Values(Source::Postgres, Source::Mariadb),
                         [](const auto &info) { return info.param == Source::Mariadb ? "Mariadb" : "Postgres"; });
