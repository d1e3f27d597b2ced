// Column mapping end to end through driftless-cli: a table's excluded, renamed and masked
// columns land transformed in every target by every strategy, the plaintext of a masked or
// excluded value reaches neither the targets (staging included) nor the state file nor the log,
// and a mapping that does not fit the live source schema is refused at apply.

#include "core/db/mysqlconnection.h"
#include "core/db/sqlitedb.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace driftless::test;
using namespace driftless;

namespace {

constexpr const char *kKey = "a-test-hmac-key-0123456789";
constexpr int kRows = 20;

/// The source rows: id, name, email, internal_notes, phone, notes, card, ssn. Every secret
/// carries a marker that must never appear on the target side.
std::string sourceTable(const std::string &name, bool mysql = false)
{
    const std::string ts =
        mysql ? "DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)" : "timestamptz NOT NULL DEFAULT now()";
    return "CREATE TABLE " + name + " (id int PRIMARY KEY, name text, email text, internal_notes text, phone " +
           (mysql ? "varchar(40)" : "text") + ", notes text, card text, ssn text, updated_at " + ts + ")";
}
std::string insertRow(const std::string &table, int i)
{
    const std::string n = std::to_string(i);
    return "INSERT INTO " + table + " (id, name, email, internal_notes, phone, notes, card, ssn) VALUES (" + n +
           ", 'name " + n + "', 'user" + n + "@example.com', 'SECRETNOTE-" + n + "', 'PHONEPFX-555-" +
           std::to_string(1000 + i) + "', 'éclair " + n + "', 'CARDNUM-4111-" + n + "', 'SSNVAL-" + n + "')";
}

std::string hmacHex(const std::string &value)
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    HMAC(EVP_sha256(), kKey, static_cast<int>(std::string(kKey).size()),
         reinterpret_cast<const unsigned char *>(value.data()), value.size(), d, &size);
    std::string out;
    char buf[3];
    for (unsigned i = 0; i < size; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", d[i]);
        out += buf;
    }
    return out;
}

/// What the target must hold for row `i` (phone and notes as written by `phone`/`notes`), as
/// `id|name|email_address|phone|notes|card|ssn` with `~` for NULL: computed here, not by the
/// engine's code.
std::string expectedRow(int i, const std::string &phone, const std::string &notes)
{
    const std::string n = std::to_string(i);
    std::string masked = std::string(phone.size() - 4, '*') + phone.substr(phone.size() - 4);
    // truncate: 3 characters; 'é' is one character of two bytes.
    std::string cut = notes.substr(0, notes.rfind("é", 0) == 0 ? 4 : 3);
    return n + "|name " + n + "|user" + n + "@example.com|" + masked + "|" + cut + "|~|" + hmacHex("SSNVAL-" + n);
}

const char *kMapping = "columns: { exclude: [internal_notes], rename: { email: email_address }, "
                       "mask: { phone: { keep_last: 4 }, notes: { truncate: 3 }, card: { null: true }, "
                       "ssn: { hash: hmac-sha256, key: \"file:hmac.key\" } } }";

const std::vector<std::string> kSecrets = {"SECRETNOTE", "CARDNUM", "SSNVAL", "PHONEPFX", "clair 1"};

struct ColumnMapFixture : ::testing::Test {
    PgTestDb src{"cm_src"};
    PgTestDb pgDst{"cm_dst"};
    MyTestDb myDst{"cm_my"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string lite = dir.file("replica.db");
    const std::vector<std::string> tables = {"c_cdc", "c_full", "c_cur"};

    void SetUp() override
    {
        writeFile(dir.file("hmac.key"), std::string(kKey) + "\n");
        for (const auto &t : tables) {
            src.exec(sourceTable(t));
            for (int i = 1; i <= kRows; ++i)
                src.exec(insertRow(t, i));
        }
    }

    std::string tableItems() const
    {
        return "      - { table: public.c_cdc, strategy: cdc, " + std::string(kMapping) + " }\n" +
               "      - { table: public.c_full, strategy: full_refresh, " + kMapping + " }\n" +
               "      - { table: public.c_cur, strategy: cursor, " + kMapping + " }\n";
    }

    std::string pipelineNames[3] = {uniqueName("cmpg"), uniqueName("cmlite"), uniqueName("cmmy")};

    /// One pipeline per target kind, each with `items`.
    std::string yaml(const std::string &items) const
    {
        return "endpoints:\n"
               "  app:  { kind: postgres, dsn: \"" +
               src.dsn() +
               "\" }\n"
               "  dw:   { kind: postgres, dsn: \"" +
               pgDst.dsn() +
               "\" }\n"
               "  my:   { kind: mysql, dsn: \"" +
               myDst.dsn() +
               "\" }\n"
               "  lite: { kind: sqlite, path: \"" +
               lite +
               "\" }\n"
               "pipelines:\n"
               "  - name: " +
               pipelineNames[0] + "\n    source: app\n    target: dw\n    target_schema: crm\n    tables:\n" + items +
               "  - name: " + pipelineNames[1] + "\n    source: app\n    target: lite\n    tables:\n" + items +
               "  - name: " + pipelineNames[2] + "\n    source: app\n    target: my\n    tables:\n" + items;
    }

    std::string writeYaml(const std::string &text)
    {
        const std::string f = dir.file("ws.yaml");
        writeFile(f, text);
        return f;
    }
    CliResult apply(const std::string &text) { return runCli({"--state", state, "apply", writeYaml(text)}); }

    /// id|name|email_address|phone|notes|card|ssn per row, `~` for NULL, ordered by id.
    std::string pgRows(const std::string &table) const
    {
        return pgDst.scalar("SELECT string_agg(concat_ws('|', id, coalesce(name, '~'), coalesce(email_address, '~'), "
                            "coalesce(phone, '~'), coalesce(notes, '~'), coalesce(card, '~'), coalesce(ssn, '~')), "
                            "E'\\n' ORDER BY id) FROM crm." +
                            table);
    }
    std::string liteRows(const std::string &table) const
    {
        core::SqliteDb db(lite);
        core::SqliteStmt st(db,
                            "SELECT group_concat(r, char(10)) FROM (SELECT id || '|' || ifnull(name, '~') || '|' || "
                            "ifnull(email_address, '~') || '|' || ifnull(phone, '~') || '|' || ifnull(notes, '~') || "
                            "'|' || ifnull(card, '~') || '|' || ifnull(ssn, '~') AS r FROM " +
                                table + " ORDER BY id)");
        return st.step() ? st.text(0) : "";
    }
    std::string myRows(const std::string &table) const
    {
        auto c = myDst.connect();
        c.exec("SET SESSION group_concat_max_len = 1000000");
        return c
            .scalar("SELECT GROUP_CONCAT(CONCAT_WS('|', id, IFNULL(name, '~'), IFNULL(email_address, '~'), "
                    "IFNULL(phone, '~'), IFNULL(notes, '~'), IFNULL(card, '~'), IFNULL(ssn, '~')) ORDER BY id "
                    "SEPARATOR '\\n') FROM " +
                    table)
            .value_or("");
    }
    std::string pgColumns(const std::string &table) const
    {
        return pgDst.scalar("SELECT string_agg(column_name, ',' ORDER BY column_name) FROM information_schema.columns "
                            "WHERE table_schema = 'crm' AND table_name = '" +
                            table + "' AND column_name NOT LIKE '\\_driftless%'");
    }
    std::string liteColumns(const std::string &table) const
    {
        core::SqliteDb db(lite);
        core::SqliteStmt st(db, "SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info('" + table +
                                    "') WHERE name NOT LIKE '\\_driftless%' ESCAPE '\\' ORDER BY name)");
        return st.step() ? st.text(0) : "";
    }
    std::string myColumns(const std::string &table) const
    {
        return myDst.scalar("SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY COLUMN_NAME SEPARATOR ',') FROM "
                            "information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" +
                            table + "' AND COLUMN_NAME NOT LIKE '\\_driftless%'");
    }
};

} // namespace

/// Every target's copy of `table` against what the mapping must make of the source rows.
#define EXPECT_ALL_TARGETS(table, expected)                                                                            \
    do {                                                                                                               \
        EXPECT_EQ(pgRows(table), expected) << "postgres " << table;                                                    \
        EXPECT_EQ(liteRows(table), expected) << "sqlite " << table;                                                    \
        EXPECT_EQ(myRows(table), expected) << "mariadb " << table;                                                     \
    } while (false)

TEST_F(ColumnMapFixture, excludedRenamedAndMaskedColumnsLandTransformedInEveryTargetByEveryStrategy)
{
    auto applied = apply(yaml(tableItems()));
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto first = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(first.exitCode, 0) << first.out << first.err;

    std::vector<std::string> phone(kRows + 2), notes(kRows + 2);
    for (int i = 1; i <= kRows + 1; ++i) {
        phone[static_cast<size_t>(i)] = "PHONEPFX-555-" + std::to_string(1000 + i);
        notes[static_cast<size_t>(i)] = "éclair " + std::to_string(i);
    }
    auto expected = [&](const std::vector<int> &ids) {
        std::string out;
        for (int i : ids)
            out += (out.empty() ? "" : "\n") +
                   expectedRow(i, phone[static_cast<size_t>(i)], notes[static_cast<size_t>(i)]);
        return out;
    };
    std::vector<int> all;
    for (int i = 1; i <= kRows; ++i)
        all.push_back(i);
    const std::string columns = "card,email_address,id,name,notes,phone,ssn,updated_at";
    for (const auto &t : tables) {
        EXPECT_ALL_TARGETS(t, expected(all));
        EXPECT_EQ(pgColumns(t), columns) << t;
        EXPECT_EQ(liteColumns(t), columns) << t;
        EXPECT_EQ(myColumns(t), columns) << t;
    }

    // Changes: an update of masked columns, an insert, and (where the strategy sees deletes) a delete.
    for (const auto &t : tables) {
        src.exec("UPDATE " + t +
                 " SET phone = 'PHONEPFX-777-1234567', notes = 'nougat', updated_at = now() + "
                 "interval '1 second' WHERE id = 2");
        src.exec(insertRow(t, kRows + 1));
        if (t != "c_cur")
            src.exec("DELETE FROM " + t + " WHERE id = 3");
    }
    phone[2] = "PHONEPFX-777-1234567";
    notes[2] = "nougat";
    auto second = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(second.exitCode, 0) << second.out << second.err;
    std::vector<int> after, cursorAfter;
    for (int i = 1; i <= kRows + 1; ++i) {
        cursorAfter.push_back(i);
        if (i != 3)
            after.push_back(i);
    }
    EXPECT_ALL_TARGETS("c_cdc", expected(after));
    EXPECT_ALL_TARGETS("c_full", expected(after));
    EXPECT_ALL_TARGETS("c_cur", expected(cursorAfter));

    // No plaintext of an excluded or masked value anywhere on the target side or in what the
    // engine keeps and prints: the whole SQLite file (staging included), every Postgres target
    // table (staging and bookkeeping included), the state file, the log.
    const std::string liteBytes = readFile(lite), stateBytes = readFile(state);
    for (const auto &secret : kSecrets) {
        EXPECT_EQ(liteBytes.find(secret), std::string::npos) << secret << " in the SQLite target";
        EXPECT_EQ(stateBytes.find(secret), std::string::npos) << secret << " in the state file";
        for (const auto *r : {&first, &second}) {
            EXPECT_EQ(r->out.find(secret), std::string::npos) << secret << " in the log: " << r->out;
            EXPECT_EQ(r->err.find(secret), std::string::npos) << secret << " in the log: " << r->err;
        }
        EXPECT_EQ(pgDst.scalar("SELECT count(*) FROM information_schema.tables WHERE table_schema NOT IN "
                               "('pg_catalog', 'information_schema') AND query_to_xml(format('SELECT * FROM %I.%I', "
                               "table_schema, table_name), true, false, '')::text LIKE '%" +
                               secret + "%'"),
                  "0")
            << secret << " in a Postgres target table";
    }
}

TEST_F(ColumnMapFixture, aColumnTheSourceAddsStaysOutOfAnIncludeListAndACdcStream)
{
    const std::string items = "      - { table: public.c_cdc, strategy: cdc, columns: { include: [id, name], "
                              "rename: { name: label } } }\n";
    auto applied = apply(yaml(items));
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto first = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
    src.exec("ALTER TABLE c_cdc ADD COLUMN secret text");
    src.exec("INSERT INTO c_cdc (id, name, secret) VALUES (100, 'late', 'ADDEDSECRET')");
    src.exec("UPDATE c_cdc SET name = 'renamed 1', secret = 'ADDEDSECRET' WHERE id = 1");
    auto second = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(second.exitCode, 0) << second.out << second.err;
    EXPECT_EQ(pgColumns("c_cdc"), "id,label");
    EXPECT_EQ(liteColumns("c_cdc"), "id,label");
    EXPECT_EQ(myColumns("c_cdc"), "id,label");
    EXPECT_EQ(pgDst.scalar("SELECT label FROM crm.c_cdc WHERE id = 100"), "late");
    EXPECT_EQ(pgDst.scalar("SELECT label FROM crm.c_cdc WHERE id = 1"), "renamed 1");
    EXPECT_EQ(myDst.scalar("SELECT label FROM c_cdc WHERE id = 1"), "renamed 1");
    EXPECT_EQ(pgDst.scalar("SELECT count(*) FROM crm.c_cdc"), std::to_string(kRows + 1));
    EXPECT_EQ(readFile(lite).find("ADDEDSECRET"), std::string::npos);
}

TEST_F(ColumnMapFixture, applyRefusesAMappingThatDoesNotFitTheLiveSourceSchema)
{
    struct Case {
        std::string columns;
        std::string field;
        std::string message;
    };
    const std::vector<Case> cases = {
        {"columns: { exclude: [internal_notes, nope] }", "columns.exclude[nope]", "has no column nope at the source"},
        {"columns: { exclude: [id] }", "columns.exclude[id]", "part of the primary key"},
        {"columns: { rename: { email: name } }", "columns.rename.email", "a column the target already gets"},
        {"columns: { rename: { email: contact, phone: contact } }", "columns.rename.phone", "two columns land on"},
        {"columns: { mask: { id: { null: true } } }", "columns.mask.id", "only a deterministic hash"},
        {"columns: { mask: { ghost: { truncate: 3 } } }", "columns.mask.ghost", "has no column ghost"},
    };
    for (const auto &c : cases) {
        const std::string items = "      - { table: public.c_full, strategy: full_refresh, " + c.columns + " }\n";
        auto r = apply(yaml(items));
        EXPECT_EQ(r.exitCode, 2) << c.columns << "\n" << r.out << r.err;
        EXPECT_NE(r.err.find(dir.file("ws.yaml") + ":"), std::string::npos) << c.columns << ": " << r.err;
        EXPECT_NE(r.err.find(c.field), std::string::npos) << c.columns << ": " << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << c.columns << ": " << r.err;
        EXPECT_NE(r.err.find("nothing applied"), std::string::npos) << r.err;
    }
    // The cursor column cannot be left out of a cursor table.
    auto r = apply(yaml("      - { table: public.c_cur, strategy: cursor, columns: { include: [id, name] } }\n"));
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("is the cursor of"), std::string::npos) << r.err;
    // Shape errors are refused before any server is asked.
    auto both = apply(yaml("      - { table: public.c_full, strategy: full_refresh, columns: { exclude: [card], "
                           "include: [id] } }\n"));
    EXPECT_EQ(both.exitCode, 2);
    EXPECT_NE(both.err.find("exclude and include together"), std::string::npos) << both.err;
    auto inlineKey = apply(yaml("      - { table: public.c_full, strategy: full_refresh, columns: { mask: { ssn: "
                                "{ hash: hmac-sha256, key: s3cret } } } }\n"));
    EXPECT_EQ(inlineKey.exitCode, 2);
    EXPECT_NE(inlineKey.err.find("expected keychain or file:PATH"), std::string::npos) << inlineKey.err;
    // A hash key that cannot be read is refused at apply, saying how to store one.
    auto noKeychain =
        runCli({"--state", state, "apply",
                writeYaml(yaml("      - { table: public.c_full, strategy: full_refresh, columns: { mask: { ssn: "
                               "{ hash: hmac-sha256, key: keychain } } } }\n"))},
               {{"DRIFTLESS_KEYCHAIN", "0"}});
    EXPECT_EQ(noKeychain.exitCode, 2) << noKeychain.out << noKeychain.err;
    EXPECT_NE(noKeychain.err.find("no HMAC key in the OS keychain for table public.c_full"), std::string::npos)
        << noKeychain.err;
    EXPECT_NE(noKeychain.err.find("key hmac:public.c_full"), std::string::npos) << noKeychain.err;
    auto noFile = apply(yaml("      - { table: public.c_full, strategy: full_refresh, columns: { mask: { ssn: "
                             "{ hash: hmac-sha256, key: \"file:missing.key\" } } } }\n"));
    EXPECT_EQ(noFile.exitCode, 2) << noFile.out << noFile.err;
    EXPECT_NE(noFile.err.find("missing.key of table public.c_full is missing, unreadable or empty"), std::string::npos)
        << noFile.err;
    EXPECT_NE(noFile.err.find("openssl rand -hex 32"), std::string::npos) << noFile.err;
    EXPECT_FALSE(std::filesystem::exists(state));
}

TEST_F(ColumnMapFixture, aKeyHashedByItsDeclaredTransformStillMergesUpdatesAndDeletes)
{
    const std::string items = "      - { table: public.c_cdc, strategy: cdc, columns: { include: [id, name], mask: "
                              "{ id: { hash: hmac-sha256, key: \"file:hmac.key\" } } } }\n";
    auto applied = apply(yaml(items));
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    src.exec("UPDATE c_cdc SET name = 'changed' WHERE id = 5");
    src.exec("DELETE FROM c_cdc WHERE id = 6");
    auto second = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(second.exitCode, 0) << second.out << second.err;
    EXPECT_EQ(pgDst.scalar("SELECT count(*) FROM crm.c_cdc"), std::to_string(kRows - 1));
    EXPECT_EQ(pgDst.scalar("SELECT name FROM crm.c_cdc WHERE id = '" + hmacHex("5") + "'"), "changed");
    EXPECT_EQ(pgDst.scalar("SELECT count(*) FROM crm.c_cdc WHERE id = '" + hmacHex("6") + "'"), "0");
    EXPECT_EQ(myDst.scalar("SELECT name FROM c_cdc WHERE id = '" + hmacHex("5") + "'"), "changed");
    EXPECT_EQ(myDst.scalar("SELECT COUNT(*) FROM c_cdc"), std::to_string(kRows - 1));
    EXPECT_EQ(pgDst.scalar("SELECT data_type FROM information_schema.columns WHERE table_schema = 'crm' AND "
                           "table_name = 'c_cdc' AND column_name = 'id'"),
              "text");
}

TEST_F(ColumnMapFixture, aMariadbSourceIsMappedTheSameWayByBinlogCdcAndFullRefresh)
{
    MyTestDb mySrc("cm_mysrc");
    for (const std::string t : {"c_cdc", "c_full"}) {
        mySrc.exec(sourceTable(t, true));
        for (int i = 1; i <= kRows; ++i)
            mySrc.exec(insertRow(t, i));
    }
    const std::string items = "      - { table: c_cdc, strategy: cdc, " + std::string(kMapping) + " }\n" +
                              "      - { table: c_full, strategy: full_refresh, " + kMapping + " }\n";
    const std::string pipes[2] = {uniqueName("cmmypg"), uniqueName("cmmylite")};
    const std::string text = "endpoints:\n"
                             "  shop: { kind: mysql, dsn: \"" +
                             mySrc.dsn() +
                             "\" }\n"
                             "  dw:   { kind: postgres, dsn: \"" +
                             pgDst.dsn() +
                             "\" }\n"
                             "  lite: { kind: sqlite, path: \"" +
                             lite +
                             "\" }\n"
                             "pipelines:\n"
                             "  - name: " +
                             pipes[0] +
                             "\n    source: shop\n    target: dw\n    target_schema: crm\n"
                             "    tables:\n" +
                             items + "  - name: " + pipes[1] + "\n    source: shop\n    target: lite\n    tables:\n" +
                             items;
    auto applied = apply(text);
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto first = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
    for (const std::string t : {"c_cdc", "c_full"}) {
        mySrc.exec("UPDATE " + t + " SET phone = 'PHONEPFX-777-1234567', notes = 'nougat' WHERE id = 2");
        mySrc.exec(insertRow(t, kRows + 1));
        mySrc.exec("DELETE FROM " + t + " WHERE id = 3");
    }
    auto second = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(second.exitCode, 0) << second.out << second.err;
    std::string expected;
    for (int i = 1; i <= kRows + 1; ++i) {
        if (i == 3)
            continue;
        const bool changed = i == 2;
        expected += (expected.empty() ? "" : "\n") +
                    expectedRow(i, changed ? "PHONEPFX-777-1234567" : "PHONEPFX-555-" + std::to_string(1000 + i),
                                changed ? "nougat" : "éclair " + std::to_string(i));
    }
    const std::string columns = "card,email_address,id,name,notes,phone,ssn,updated_at";
    for (const std::string t : {"c_cdc", "c_full"}) {
        EXPECT_EQ(pgRows(t), expected) << t;
        EXPECT_EQ(liteRows(t), expected) << t;
        EXPECT_EQ(pgColumns(t), columns) << t;
        EXPECT_EQ(liteColumns(t), columns) << t;
    }
    const std::string liteBytes = readFile(lite), stateBytes = readFile(state);
    for (const auto &secret : kSecrets) {
        EXPECT_EQ(liteBytes.find(secret), std::string::npos) << secret << " in the SQLite target";
        EXPECT_EQ(stateBytes.find(secret), std::string::npos) << secret << " in the state file";
        for (const auto *r : {&first, &second})
            EXPECT_EQ((r->out + r->err).find(secret), std::string::npos) << secret << " in the log";
    }
}

TEST_F(ColumnMapFixture, reconcileComparesTheTransformedSourceAndRepairWritesMaskedValues)
{
    const std::string mapping = "columns: { exclude: [internal_notes, ssn], rename: { email: email_address, "
                                "updated_at: changed_at }, mask: { phone: { keep_last: 4 }, notes: { truncate: 3 }, "
                                "card: { null: true } } }";
    const std::string items = "      - { table: public.c_cdc, strategy: cdc, " + mapping + " }\n" +
                              "      - { table: public.c_full, strategy: full_refresh, " + mapping + " }\n" +
                              "      - { table: public.c_cur, strategy: cursor, " + mapping + " }\n";
    auto applied = apply(yaml(items));
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto run = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(run.exitCode, 0) << run.out << run.err;

    for (const auto &p : pipelineNames) {
        auto r = runCli({"--state", state, "reconcile", p, "--json"});
        ASSERT_EQ(r.exitCode, 0) << p << "\n" << r.out << r.err;
        auto j = nlohmann::json::parse(r.out);
        ASSERT_EQ(j["tables"].size(), 3u) << r.out;
        for (const auto &t : j["tables"]) {
            EXPECT_FALSE(t.contains("skipped") && !t["skipped"].is_null() && t["skipped"] != "") << r.out;
            EXPECT_EQ(t["source_rows"], kRows) << r.out;
            EXPECT_EQ(t["different"], 0) << r.out;
            EXPECT_EQ(t["missing"], 0) << r.out;
            EXPECT_EQ(t["extra"], 0) << r.out;
        }
    }

    // One tampered row per target; reconcile finds it, repair writes the masked value back.
    pgDst.exec("UPDATE crm.c_full SET phone = 'tampered' WHERE id = 4");
    {
        core::SqliteDb db(lite);
        db.exec("UPDATE c_cdc SET notes = 'zzz' WHERE id = 5");
    }
    // (Not the cursor table: a row changed within its lookback counts as in flight, not drift.)
    myDst.exec("UPDATE c_full SET card = 'tampered' WHERE id = 6");
    const std::string tables[3] = {"c_full", "c_cdc", "c_full"};
    for (size_t i = 0; i < 3; ++i) {
        auto r = runCli({"--state", state, "reconcile", pipelineNames[i], "--json"});
        ASSERT_EQ(r.exitCode, 3) << r.out << r.err;
        for (const auto &secret : kSecrets)
            EXPECT_EQ(r.out.find(secret), std::string::npos) << secret << " in the report: " << r.out;
        auto j = nlohmann::json::parse(r.out);
        for (const auto &t : j["tables"])
            EXPECT_EQ(t["different"], t["table"] == "public." + tables[i] ? 1 : 0) << r.out;
        auto fix = runCli({"--state", state, "repair", std::to_string(j["report_id"].get<long long>())});
        ASSERT_EQ(fix.exitCode, 0) << fix.out << fix.err;
        auto again = runCli({"--state", state, "reconcile", pipelineNames[i]});
        EXPECT_EQ(again.exitCode, 0) << again.out << again.err;
    }
    EXPECT_EQ(pgDst.scalar("SELECT phone FROM crm.c_full WHERE id = 4"), "*************1004");
    {
        core::SqliteDb db(lite);
        core::SqliteStmt st(db, "SELECT notes FROM c_cdc WHERE id = 5");
        ASSERT_TRUE(st.step());
        EXPECT_EQ(st.text(0), "écl");
    }
    EXPECT_EQ(myDst.scalar("SELECT card FROM c_full WHERE id = 6"), "NULL");
    EXPECT_EQ(myDst.scalar("SELECT COUNT(*) FROM c_cur WHERE changed_at IS NOT NULL"), std::to_string(kRows));

    // A hash mask is not computed by the source: such a table is reported as not compared.
    src.exec(sourceTable("c_hash"));
    src.exec(insertRow("c_hash", 1));
    const std::string hashed = "      - { table: public.c_hash, strategy: full_refresh, columns: { mask: { ssn: "
                               "{ hash: hmac-sha256, key: \"file:hmac.key\" } } } }\n";
    ASSERT_EQ(apply(yaml(hashed)).exitCode, 0);
    auto hashedRun = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(hashedRun.exitCode, 0) << hashedRun.out << hashedRun.err;
    auto skipped = runCli({"--state", state, "reconcile", pipelineNames[0], "--json"});
    EXPECT_NE(skipped.out.find("masked by a keyed hash"), std::string::npos) << skipped.out << skipped.err;
}

// A row filter and a column mapping on one table: the filter names the source's columns and
// chooses the rows, the mapping shapes them; reconciliation compares the projection of the
// filtered rows only, and repair writes the masked value back.
TEST_F(ColumnMapFixture, aRowFilterAndAMappingTogetherReconcileOnlyTheFilteredProjection)
{
    const std::string mapping = "columns: { exclude: [internal_notes, ssn], rename: { email: email_address }, "
                                "mask: { phone: { keep_last: 4 }, card: { null: true } } }, where: \"id % 2 = 0\"";
    const std::string items = "      - { table: public.c_cdc, strategy: cdc, " + mapping + " }\n" +
                              "      - { table: public.c_full, strategy: full_refresh, " + mapping + " }\n";
    auto applied = apply(yaml(items));
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto run = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
    // Only the even ids, masked, in every target (an independent count and value on each side).
    EXPECT_EQ(pgDst.scalar("SELECT count(*) || ' ' || sum(id) FROM crm.c_full"), std::to_string(kRows / 2) + " 110");
    EXPECT_EQ(pgDst.scalar("SELECT phone || ' ' || email_address FROM crm.c_cdc WHERE id = 4"),
              "*************1004 user4@example.com");
    EXPECT_EQ(myDst.scalar("SELECT COUNT(*) FROM c_cdc WHERE MOD(id, 2) = 1"), "0");

    for (const auto &p : pipelineNames) {
        auto r = runCli({"--state", state, "reconcile", p, "--json"});
        ASSERT_EQ(r.exitCode, 0) << p << "\n" << r.out << r.err;
        auto j = nlohmann::json::parse(r.out);
        ASSERT_EQ(j["tables"].size(), 2u) << r.out;
        for (const auto &t : j["tables"]) {
            EXPECT_EQ(t["source_rows"], kRows / 2) << r.out;
            EXPECT_EQ(t["different"], 0) << r.out;
            EXPECT_EQ(t["missing"], 0) << r.out;
            EXPECT_EQ(t["extra"], 0) << r.out;
        }
    }
    pgDst.exec("UPDATE crm.c_full SET phone = 'tampered' WHERE id = 6");
    auto r = runCli({"--state", state, "reconcile", pipelineNames[0], "--json"});
    ASSERT_EQ(r.exitCode, 3) << r.out << r.err;
    auto j = nlohmann::json::parse(r.out);
    auto fix = runCli({"--state", state, "repair", std::to_string(j["report_id"].get<long long>())});
    ASSERT_EQ(fix.exitCode, 0) << fix.out << fix.err;
    EXPECT_EQ(pgDst.scalar("SELECT phone FROM crm.c_full WHERE id = 6"), "*************1006");
    EXPECT_EQ(pgDst.scalar("SELECT count(*) FROM crm.c_full"), std::to_string(kRows / 2));
    EXPECT_EQ(runCli({"--state", state, "reconcile", pipelineNames[0]}).exitCode, 0);
}
