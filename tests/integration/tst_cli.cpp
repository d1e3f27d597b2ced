// driftless-cli as a DBA uses it: apply, run, status, doctor; and every kind of bad input gets
// its own one-line message, the right exit code, and leaves the state file as it was.

#include "core/db/sqlitedb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <functional>
#include <map>
#include <set>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>

using namespace driftless::test;

namespace {

struct CliFixture : ::testing::Test {
    PgTestDb src{"cli_src"};
    PgTestDb dst{"cli_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");

    void SetUp() override
    {
        src.exec(R"sql(
CREATE TABLE plans (id int PRIMARY KEY, name text, price numeric(10,2));
INSERT INTO plans SELECT g, 'plan ' || g, g * 9.99 FROM generate_series(1, 5) g;
CREATE TABLE events (id bigint PRIMARY KEY, kind text, updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO events SELECT g, 'k', now() - interval '1 hour' FROM generate_series(1, 1000) g;
CREATE TABLE audit (at timestamptz, line text);
)sql");
    }

    std::string yaml(const std::string &tables, const std::string &srcDsn = {}, const std::string &extraEndpoints = {})
    {
        const auto &s = servers();
        std::string sdsn = srcDsn.empty() ? "host=127.0.0.1 port=" + std::to_string(s.pgPort) +
                                                " dbname=" + src.name() + " user=" + s.pgUser
                                          : srcDsn;
        return "endpoints:\n"
               "  app:  { kind: postgres, dsn: \"" +
               sdsn +
               "\" }\n"
               "  dw:   { kind: postgres, dsn: \"postgresql://" +
               s.pgUser + "@127.0.0.1:" + std::to_string(s.pgPort) + "/" + dst.name() +
               "\" }\n"
               "  lite: { kind: sqlite, path: \"replica.db\" }\n" +
               extraEndpoints +
               "pipelines:\n"
               "  - name: app_to_dw\n"
               "    source: app\n"
               "    target: dw\n"
               "    target_schema: model\n"
               "    tables:\n" +
               tables;
    }
    std::string good()
    {
        return yaml(
            "      - { table: public.plans,  strategy: full_refresh }\n"
            "      - { table: public.events, strategy: cursor, cursor: updated_at, lookback: 10m, page_size: 300 }\n");
    }
    CliResult apply(const std::string &text, std::map<std::string, std::string> env = {})
    {
        std::string f = dir.file("ws.yaml");
        writeFile(f, text);
        return runCli({"--state", state, "apply", f}, env);
    }
};

} // namespace

TEST_F(CliFixture, applyStoresTheWorkspaceAndTheSecondApplyChangesNothing)
{
    auto r = apply(good());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("+ pipeline app_to_dw (2 tables)"), std::string::npos) << r.out;
    std::string before = sqliteDump(state);
    auto again = apply(good());
    EXPECT_EQ(again.exitCode, 0) << again.err;
    EXPECT_NE(again.out.find("workspace unchanged"), std::string::npos) << again.out;
    EXPECT_EQ(sqliteDump(state), before);
}

TEST_F(CliFixture, badInputGetsItsOwnMessageAndLeavesTheStateAlone)
{
    ASSERT_EQ(apply(good()).exitCode, 0);
    const std::string before = sqliteDump(state);
    const auto &s = servers();
    struct Case {
        std::string name;
        std::string text;
        std::map<std::string, std::string> env;
        int exitCode;
        std::string needle;
    };
    std::vector<Case> cases = {
        {"malformed YAML", good() + "  - name: [unclosed\n", {}, 2, "malformed YAML"},
        {"unknown endpoint",
         yaml("      - { table: public.plans, strategy: full_refresh }\n")
             .replace(yaml("").find("target: dw"), 10, "target: warehouse"),
         {},
         2,
         "unknown endpoint 'warehouse'"},
        {"unknown table",
         yaml("      - { table: public.plan, strategy: full_refresh }\n"),
         {},
         2,
         "table public.plan does not exist"},
        {"cursor table without a primary key",
         yaml("      - { table: public.audit, strategy: cursor, cursor: at }\n"),
         {},
         2,
         "has no primary key"},
        {"wrong port",
         yaml("      - { table: public.plans, strategy: full_refresh }\n",
              "host=127.0.0.1 port=1 dbname=" + src.name() + " user=" + s.pgUser),
         {},
         1,
         "Connection refused"},
        {"wrong password", good(), {{"PGPASSWORD", "not-the-password"}}, 1, "password authentication failed"},
        {"password in the file",
         yaml("      - { table: public.plans, strategy: full_refresh }\n",
              "host=127.0.0.1 dbname=x user=y password=hunter2"),
         {},
         2,
         "contains a password"},
    };
    std::set<std::string> firstLines;
    for (const auto &c : cases) {
        auto r = apply(c.text, c.env);
        EXPECT_EQ(r.exitCode, c.exitCode) << c.name << ": " << r.err;
        EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.name << ": " << r.err;
        std::string first = r.err.substr(0, r.err.find('\n'));
        EXPECT_FALSE(first.empty()) << c.name;
        EXPECT_NE(first.find("driftless-cli: "), std::string::npos) << c.name << ": " << first;
        firstLines.insert(first);
        EXPECT_EQ(r.err.find("hunter2"), std::string::npos) << "a secret was echoed: " << r.err;
        EXPECT_EQ(sqliteDump(state), before) << c.name << " changed the state file";
    }
    EXPECT_EQ(firstLines.size(), cases.size()) << "each mistake needs its own message";
}

TEST_F(CliFixture, aRefusedFirstApplyCreatesNoStateFile)
{
    auto r = apply(yaml("      - { table: public.nope, strategy: full_refresh }\n"));
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_FALSE(std::filesystem::exists(state));
}

TEST_F(CliFixture, aCommandOnAMissingWorkspaceSaysHowToMakeOneAndCreatesNoFile)
{
    // A mistyped --state must not leave an empty workspace behind that the next command trusts.
    const std::vector<std::vector<std::string>> commands = {{"doctor"},
                                                            {"export"},
                                                            {"slots", "--json"},
                                                            {"pause", "app_to_dw", "public.orders"},
                                                            {"resume", "app_to_dw"},
                                                            {"promote", "app_to_dw", "--no-run"},
                                                            {"resnapshot", "app_to_dw"},
                                                            {"reconcile", "app_to_dw"},
                                                            {"repair", "1"},
                                                            {"backfill", "app_to_dw", "public.orders"}};
    for (const auto &c : commands) {
        std::vector<std::string> args = {"--state", state};
        args.insert(args.end(), c.begin(), c.end());
        auto r = runCli(args);
        EXPECT_EQ(r.exitCode, 2) << c.front() << ": " << r.out << r.err;
        EXPECT_NE(r.err.find("there is no workspace at " + state), std::string::npos) << c.front() << ": " << r.err;
        EXPECT_NE(r.err.find("apply FILE"), std::string::npos) << c.front() << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(state)) << c.front() << " created " << state;
    }
}

TEST_F(CliFixture, exportDebeziumPrintsAConnectorKafkaConnectTakesAndSaysWhatItCannotExpress)
{
    ASSERT_EQ(apply(good()).exitCode, 0);
    auto r = runCli({"--state", state, "export-debezium", "app_to_dw"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    // stdout is the REST form as it is, for curl --data @- .../connectors.
    auto c = nlohmann::json::parse(r.out);
    EXPECT_EQ(c["name"], "driftless-app_to_dw");
    EXPECT_EQ(c["config"]["connector.class"], "io.debezium.connector.postgresql.PostgresConnector");
    EXPECT_EQ(c["config"]["plugin.name"], "pgoutput");
    EXPECT_EQ(c["config"]["database.dbname"], src.name());
    EXPECT_EQ(c["config"]["table.include.list"], "public\\.plans,public\\.events");
    EXPECT_NE(r.err.find("public.plans: synced by full_refresh"), std::string::npos) << r.err;
    auto bad = runCli({"--state", state, "export-debezium", "nope"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("no pipeline named 'nope'"), std::string::npos) << bad.err;
}

TEST_F(CliFixture, runOnceSyncsAndStatusReportsEveryTable)
{
    ASSERT_EQ(apply(good()).exitCode, 0);
    auto run = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM model.events"), "1000");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM model.plans"), "5");

    auto st = runCli({"--state", state, "status", "--json"});
    ASSERT_EQ(st.exitCode, 0) << st.err;
    auto j = nlohmann::json::parse(st.out);
    ASSERT_TRUE(j["tables"].is_array());
    ASSERT_EQ(j["tables"].size(), 2u);
    for (const auto &t : j["tables"]) {
        for (const char *k : {"pipeline", "table", "strategy", "state", "rows_applied", "last_sync_at", "checkpoint",
                              "lag_seconds", "freshness"})
            EXPECT_TRUE(t.contains(k)) << k;
        EXPECT_EQ(t["pipeline"], "app_to_dw");
        EXPECT_EQ(t["state"], "ok");
        EXPECT_EQ(t["freshness"], "ok");
        EXPECT_TRUE(t["lag_seconds"].is_number());
        EXPECT_TRUE(t["last_sync_at"].is_string());
        EXPECT_GT(t["rows_applied"].get<long long>(), 0);
    }
    EXPECT_EQ(j["tables"][1]["table"], "public.events");
    EXPECT_EQ(j["tables"][1]["checkpoint"]["phase"], "incremental");
    EXPECT_EQ(j["tables"][1]["rows_applied"], 1000);

    auto human = runCli({"--state", state, "status"});
    EXPECT_EQ(human.exitCode, 0);
    EXPECT_NE(human.out.find("public.events"), std::string::npos) << human.out;
}

TEST_F(CliFixture, reconcileReportsDriftAsJsonAndRepairResolvesIt)
{
    ASSERT_EQ(apply(good()).exitCode, 0);
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    auto clean = runCli({"--state", state, "reconcile", "app_to_dw"});
    EXPECT_EQ(clean.exitCode, 0) << clean.out << clean.err;
    EXPECT_NE(clean.out.find("no drift in 1000 rows"), std::string::npos) << clean.out;

    // A hard delete and a write that skips updated_at, which cursor sync cannot see, and a hand edit.
    src.exec("DELETE FROM events WHERE id = 5; UPDATE events SET kind = 'bulk' WHERE id IN (8, 9)");
    dst.exec("UPDATE model.plans SET name = 'edited' WHERE id = 2");
    auto r = runCli({"--state", state, "reconcile", "app_to_dw", "--json"});
    ASSERT_EQ(r.exitCode, 3) << r.out << r.err; // 3: drift found
    auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j["report_id"].is_number_integer());
    ASSERT_EQ(j["tables"].size(), 2u);
    std::map<std::string, nlohmann::json> byTable;
    for (const auto &t : j["tables"]) {
        for (const char *k :
             {"table", "source_rows", "target_rows", "missing", "extra", "different", "drift_ratio", "keys"})
            EXPECT_TRUE(t.contains(k)) << k;
        for (const char *k : {"missing", "extra", "different"})
            EXPECT_TRUE(t["keys"][k].is_array()) << k;
        byTable[t["table"]] = t;
    }
    const auto &ev = byTable["public.events"];
    EXPECT_EQ(ev["source_rows"], 999);
    EXPECT_EQ(ev["target_rows"], 1000);
    EXPECT_EQ(ev["missing"], 0);
    EXPECT_EQ(ev["extra"], 1);
    EXPECT_EQ(ev["different"], 2);
    EXPECT_EQ(ev["keys"]["extra"], nlohmann::json::array({5}));
    EXPECT_EQ(ev["keys"]["different"], nlohmann::json::array({8, 9}));
    EXPECT_NEAR(ev["drift_ratio"].get<double>(), 3.0 / 999.0, 1e-9);
    const auto &pl = byTable["public.plans"];
    EXPECT_EQ(pl["different"], 1);
    EXPECT_EQ(pl["keys"]["different"], nlohmann::json::array({2}));
    EXPECT_EQ(pl["differences"][0]["columns"][0]["column"], "name");
    EXPECT_EQ(pl["differences"][0]["columns"][0]["target"], "edited");

    const std::string id = std::to_string(j["report_id"].get<long long>());
    auto bad = runCli({"--state", state, "repair", "999999"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("no reconciliation report 999999"), std::string::npos) << bad.err;
    auto fix = runCli({"--state", state, "repair", id, "--json"});
    ASSERT_EQ(fix.exitCode, 0) << fix.out << fix.err;
    auto fj = nlohmann::json::parse(fix.out);
    ASSERT_EQ(fj["tables"].size(), 2u);
    for (const auto &t : fj["tables"]) {
        EXPECT_TRUE(t["error"].is_null()) << t.dump();
        EXPECT_EQ(t["still_different"], 0);
    }
    auto again = runCli({"--state", state, "reconcile", "app_to_dw", "public.events"});
    EXPECT_EQ(again.exitCode, 0) << again.out << again.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM model.events"), "999");
    EXPECT_EQ(dst.scalar("SELECT kind FROM model.events WHERE id = 8"), "bulk");

    // repair --sql: the same kind of repair as a script of plain statements, for change control;
    // writing it changes nothing, running it with psql leaves no drift.
    dst.exec("UPDATE model.events SET kind = 'by hand' WHERE id = 12; DELETE FROM model.events WHERE id = 13");
    auto drift = runCli({"--state", state, "reconcile", "app_to_dw", "public.events", "--json"});
    ASSERT_EQ(drift.exitCode, 3) << drift.out << drift.err;
    const std::string sqlFile = dir.file("repair.sql");
    auto script =
        runCli({"--state", state, "repair",
                std::to_string(nlohmann::json::parse(drift.out)["report_id"].get<long long>()), "--sql", sqlFile});
    ASSERT_EQ(script.exitCode, 0) << script.out << script.err;
    const std::string sql = readFile(sqlFile);
    EXPECT_NE(sql.find("1 to insert, 1 to update, 0 to delete"), std::string::npos) << sql;
    EXPECT_NE(sql.find("INSERT INTO \"model\".\"events\""), std::string::npos) << sql;
    EXPECT_EQ(dst.scalar("SELECT kind FROM model.events WHERE id = 12"), "by hand");
    ASSERT_EQ(
        waitPid(spawnProgram("/usr/bin/psql", {"-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", sqlFile, pgDsn(dst.name())},
                             {}, dir.file("psql.log"))),
        0)
        << readFile(dir.file("psql.log"));
    auto clean2 = runCli({"--state", state, "reconcile", "app_to_dw", "public.events"});
    EXPECT_EQ(clean2.exitCode, 0) << clean2.out << clean2.err << sql;
    // The story is in the events.
    auto st = runCli({"--state", state, "status"});
    EXPECT_EQ(st.exitCode, 0);
}

namespace {

/// RFC 4180 records: fields split on commas, quoted fields may hold commas, CRLF and doubled
/// quotes; every record ends in CRLF. Fails the test on anything else.
std::vector<std::vector<std::string>> parseCsv(const std::string &text)
{
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '"') {
            ++i;
            for (;;) {
                if (i >= text.size()) {
                    ADD_FAILURE() << "unterminated quoted field";
                    return rows;
                }
                if (text[i] == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                    field += '"';
                    i += 2;
                } else if (text[i] == '"') {
                    ++i;
                    break;
                } else {
                    field += text[i++];
                }
            }
        }
        while (i < text.size() && text[i] != ',' && text[i] != '\r' && text[i] != '\n') {
            if (text[i] == '"')
                ADD_FAILURE() << "a quote inside an unquoted field at " << i;
            field += text[i++];
        }
        if (i < text.size() && text[i] == ',') {
            row.push_back(std::move(field));
            field.clear();
            ++i;
            continue;
        }
        EXPECT_TRUE(i + 1 < text.size() && text[i] == '\r' && text[i + 1] == '\n') << "records end in CRLF, at " << i;
        row.push_back(std::move(field));
        field.clear();
        rows.push_back(std::move(row));
        row.clear();
        i += 2;
    }
    return rows;
}

/// Every element opened is closed, in order (void elements aside), and no raw `<` or `&` is left
/// in text: what a well-formed page needs.
void expectWellFormedHtml(const std::string &html)
{
    static const std::set<std::string> voids = {"meta", "br", "hr", "img", "link", "input"};
    std::vector<std::string> open;
    size_t i = 0;
    while (i < html.size()) {
        if (html[i] == '&') {
            const size_t semi = html.find(';', i);
            ASSERT_NE(semi, std::string::npos) << "a bare & at " << i;
            const std::string entity = html.substr(i, semi - i + 1);
            EXPECT_TRUE(entity == "&amp;" || entity == "&lt;" || entity == "&gt;" || entity == "&quot;" ||
                        entity == "&#39;")
                << "unknown entity " << entity;
            i = semi + 1;
            continue;
        }
        if (html[i] != '<') {
            ++i;
            continue;
        }
        const size_t end = html.find('>', i);
        ASSERT_NE(end, std::string::npos) << "an unclosed tag at " << i;
        std::string tag = html.substr(i + 1, end - i - 1);
        i = end + 1;
        if (tag.rfind("!DOCTYPE", 0) == 0)
            continue;
        const bool closing = !tag.empty() && tag[0] == '/';
        std::string name = tag.substr(closing ? 1 : 0, tag.find_first_of(" >", closing ? 1 : 0) - (closing ? 1 : 0));
        ASSERT_FALSE(name.empty()) << "a raw < in the text";
        ASSERT_TRUE(std::all_of(name.begin(), name.end(),
                                [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }))
            << "a raw < in the text: <" << tag << ">";
        if (voids.count(name))
            continue;
        if (closing) {
            ASSERT_FALSE(open.empty()) << "</" << name << "> closes nothing";
            ASSERT_EQ(open.back(), name) << "</" << name << "> closes <" << open.back() << ">";
            open.pop_back();
        } else {
            open.push_back(name);
            if (name == "style") { // CSS is not markup
                const size_t close = html.find("</style>", i);
                ASSERT_NE(close, std::string::npos);
                i = close;
            }
        }
    }
    EXPECT_TRUE(open.empty()) << "<" << (open.empty() ? "" : open.back()) << "> never closed";
}

std::string keyCell(const nlohmann::json &key)
{
    return key.is_string() ? key.get<std::string>() : key.dump();
}

} // namespace

TEST_F(CliFixture, reportsListsEveryReportAndItsCsvAndHtmlExportsHoldTheSameRows)
{
    ASSERT_EQ(apply(good()).exitCode, 0);
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    auto none = runCli({"--state", state, "reports"});
    EXPECT_EQ(none.exitCode, 0) << none.err;
    EXPECT_NE(none.out.find("no reconciliation reports"), std::string::npos) << none.out;
    ASSERT_EQ(runCli({"--state", state, "reconcile", "app_to_dw"}).exitCode, 0);

    // Every kind of drift, and values that CSV and HTML must quote or escape.
    src.exec("DELETE FROM events WHERE id = 5; UPDATE events SET kind = 'bulk, \"quoted\"' WHERE id IN (8, 9)");
    dst.exec("DELETE FROM model.events WHERE id = 20");
    dst.exec("UPDATE model.plans SET name = 'a <b> & \"c\"', price = NULL WHERE id = 2");
    auto r = runCli({"--state", state, "reconcile", "app_to_dw", "--json"});
    ASSERT_EQ(r.exitCode, 3) << r.out << r.err;
    const auto reconciled = nlohmann::json::parse(r.out);
    const long long id = reconciled["report_id"].get<long long>();
    const std::string idText = std::to_string(id);

    // The list: both reports, newest first, with their totals.
    auto list = runCli({"--state", state, "reports", "--json"});
    ASSERT_EQ(list.exitCode, 0) << list.err;
    auto lj = nlohmann::json::parse(list.out);
    ASSERT_EQ(lj.size(), 2u) << lj.dump();
    EXPECT_EQ(lj[0]["report_id"], id);
    EXPECT_LT(lj[1]["report_id"].get<long long>(), id);
    EXPECT_EQ(lj[0]["pipeline"], "app_to_dw");
    EXPECT_EQ(lj[0]["tables"], 2);
    EXPECT_EQ(lj[0]["missing"], 1);
    EXPECT_EQ(lj[0]["extra"], 1);
    EXPECT_EQ(lj[0]["different"], 3);
    EXPECT_EQ(lj[0]["repaired"], false);
    EXPECT_EQ(lj[1]["missing"].get<long long>() + lj[1]["extra"].get<long long>() + lj[1]["different"].get<long long>(),
              0);
    auto table = runCli({"--state", state, "reports", "--pipeline", "app_to_dw"});
    ASSERT_EQ(table.exitCode, 0) << table.err;
    EXPECT_NE(table.out.find("REPAIRED"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("\n" + idText + " "), std::string::npos) << table.out;
    auto wrongPipeline = runCli({"--state", state, "reports", "--pipeline", "nope"});
    EXPECT_EQ(wrongPipeline.exitCode, 2);
    EXPECT_NE(wrongPipeline.err.find("no pipeline named 'nope'"), std::string::npos) << wrongPipeline.err;

    // One report: JSON as reconcile printed it; a readable text by default.
    auto rj = runCli({"--state", state, "report", idText, "--json"});
    ASSERT_EQ(rj.exitCode, 0) << rj.err;
    const auto report = nlohmann::json::parse(rj.out);
    EXPECT_EQ(report["tables"], reconciled["tables"]);
    auto text = runCli({"--state", state, "report", idText});
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_NE(text.out.find("public.events: DRIFT 1 missing, 1 extra, 2 different"), std::string::npos) << text.out;
    for (const auto &bad : std::vector<std::vector<std::string>>{
             {"report", "999999"}, {"report", "x1"}, {"report", idText, "--csv", "--html"}, {"report"}}) {
        std::vector<std::string> args = {"--state", state};
        args.insert(args.end(), bad.begin(), bad.end());
        auto b = runCli(args);
        EXPECT_EQ(b.exitCode, 2) << b.out;
        EXPECT_FALSE(b.err.empty());
    }

    // CSV, read back: one row per differing row, equal to the JSON report's, row for row.
    auto csv = runCli({"--state", state, "report", idText, "--csv"});
    ASSERT_EQ(csv.exitCode, 0) << csv.err;
    const auto rows = parseCsv(csv.out);
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(rows[0], (std::vector<std::string>{"pipeline", "table", "key", "kind", "columns", "source", "target"}));
    std::vector<std::vector<std::string>> expected;
    for (const auto &t : report["tables"]) {
        for (const char *kind : {"missing", "extra"})
            for (const auto &k : t["keys"][kind])
                expected.push_back({"app_to_dw", t["table"].get<std::string>(), keyCell(k), kind, "", "", ""});
        for (const auto &d : t["differences"]) {
            std::string cols;
            nlohmann::json s = nlohmann::json::object(), g = nlohmann::json::object();
            for (const auto &c : d["columns"]) {
                cols += (cols.empty() ? "" : ", ") + c["column"].get<std::string>();
                s[c["column"].get<std::string>()] = c["source"];
                g[c["column"].get<std::string>()] = c["target"];
            }
            expected.push_back(
                {"app_to_dw", t["table"].get<std::string>(), keyCell(d["key"]), "different", cols, s.dump(), g.dump()});
        }
    }
    EXPECT_EQ(std::vector<std::vector<std::string>>(rows.begin() + 1, rows.end()), expected);
    EXPECT_EQ(rows.size(), 1u + 5u);
    bool sawPlan = false;
    for (const auto &row : rows)
        if (row.size() == 7 && row[1] == "public.plans") {
            sawPlan = true;
            EXPECT_EQ(row[3], "different");
            EXPECT_EQ(row[4], "name, price");
            const auto target = nlohmann::json::parse(row[6]);
            EXPECT_EQ(target["name"], "a <b> & \"c\"");
            EXPECT_TRUE(target["price"].is_null());
        }
    EXPECT_TRUE(sawPlan);

    // HTML: well-formed, every value escaped.
    auto html = runCli({"--state", state, "report", idText, "--html"});
    ASSERT_EQ(html.exitCode, 0) << html.err;
    expectWellFormedHtml(html.out);
    EXPECT_EQ(html.out.find("a <b>"), std::string::npos);
    EXPECT_NE(html.out.find("a &lt;b&gt; &amp; &quot;c&quot;"), std::string::npos);
    EXPECT_NE(html.out.find("bulk, &quot;quoted&quot;"), std::string::npos);
    EXPECT_NE(html.out.find("<h2>public.events</h2>"), std::string::npos);
}

TEST_F(CliFixture, repairDryRunChangesNothingAndPrintsWhatTheRepairThenDoes)
{
    ASSERT_EQ(apply(good()).exitCode, 0);
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    src.exec("DELETE FROM events WHERE id = 5; UPDATE events SET kind = 'bulk' WHERE id IN (8, 9)");
    dst.exec("DELETE FROM model.events WHERE id IN (20, 21)");
    dst.exec("UPDATE model.plans SET name = 'edited' WHERE id = 2");
    auto r = runCli({"--state", state, "reconcile", "app_to_dw", "--json"});
    ASSERT_EQ(r.exitCode, 3) << r.out << r.err;
    const std::string id = std::to_string(nlohmann::json::parse(r.out)["report_id"].get<long long>());

    auto d = dst.connect();
    const std::string eventsSql = "SELECT * FROM model.events", plansSql = "SELECT * FROM model.plans";
    const auto eventsBefore = pgHash(d, eventsSql, "id"), plansBefore = pgHash(d, plansSql, "id");
    auto dry = runCli({"--state", state, "repair", id, "--dry-run", "--json"});
    ASSERT_EQ(dry.exitCode, 0) << dry.out << dry.err;
    auto text = runCli({"--state", state, "repair", id, "--dry-run"});
    ASSERT_EQ(text.exitCode, 0) << text.err;
    // Nothing changed on the target, and nothing was recorded as a repair.
    EXPECT_EQ(pgHash(d, eventsSql, "id"), eventsBefore);
    EXPECT_EQ(pgHash(d, plansSql, "id"), plansBefore);
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM model.events"), "998");
    EXPECT_EQ(nlohmann::json::parse(runCli({"--state", state, "reports", "--json"}).out)[0]["repaired"], false);

    const auto plan = nlohmann::json::parse(dry.out);
    ASSERT_EQ(plan["tables"].size(), 2u) << plan.dump(2);
    std::map<std::string, nlohmann::json> byTable;
    for (const auto &t : plan["tables"])
        byTable[t["table"]] = t;
    const auto &ev = byTable["public.events"];
    EXPECT_EQ(ev["target"], "model.events");
    EXPECT_EQ(ev["inserts"], 2);
    EXPECT_EQ(ev["updates"], 2);
    EXPECT_EQ(ev["deletes"], 1);
    EXPECT_EQ(ev["keys"]["delete"], nlohmann::json::array({5}));
    std::vector<std::pair<std::string, long long>> evStatements;
    for (const auto &st : ev["statements"])
        evStatements.emplace_back(st["kind"].get<std::string>(), st["rows"].get<long long>());
    EXPECT_EQ(evStatements,
              (std::vector<std::pair<std::string, long long>>{{"stage", 5}, {"upsert", 4}, {"delete", 1}}));
    EXPECT_NE(ev["statements"][1]["sql"].get<std::string>().find("MERGE INTO \"model\".\"events\""), std::string::npos)
        << ev["statements"][1]["sql"];
    EXPECT_NE(ev["statements"][2]["sql"].get<std::string>().find("DELETE FROM \"model\".\"events\""), std::string::npos)
        << ev["statements"][2]["sql"];
    EXPECT_EQ(byTable["public.plans"]["updates"], 1);
    EXPECT_EQ(byTable["public.plans"]["statements"].size(), 2u);
    // The text says the same, a line per statement.
    EXPECT_NE(text.out.find("public.events -> model.events: 2 to insert, 2 to update, 1 to delete"), std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("4 rows: MERGE INTO \"model\".\"events\""), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("1 row:  DELETE FROM \"model\".\"events\""), std::string::npos) << text.out;

    // The repair then runs exactly those statements, with those rows.
    auto fix = runCli({"--state", state, "repair", id, "--json"});
    ASSERT_EQ(fix.exitCode, 0) << fix.out << fix.err;
    const auto done = nlohmann::json::parse(fix.out);
    ASSERT_EQ(done["tables"].size(), 2u);
    for (const auto &o : done["tables"]) {
        EXPECT_TRUE(o["error"].is_null()) << o.dump();
        const auto &planned = byTable[o["table"]];
        EXPECT_EQ(o["statements"], planned["statements"]) << o["table"];
        EXPECT_EQ(o["skipped"], 0);
        EXPECT_EQ(o["written"], planned["inserts"].get<long long>() + planned["updates"].get<long long>());
        EXPECT_EQ(o["deleted"], planned["deletes"]);
        EXPECT_EQ(o["still_different"], 0);
    }
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM model.events"), "999");
    EXPECT_NE(pgHash(d, eventsSql, "id"), eventsBefore);
    EXPECT_EQ(nlohmann::json::parse(runCli({"--state", state, "reports", "--json"}).out)[0]["repaired"], true);
}

TEST_F(CliFixture, aFailingTableMakesRunExitOneAndOthersStillSync)
{
    const auto &s = servers();
    std::string text = yaml("      - { table: public.plans, strategy: full_refresh }\n") +
                       "  - name: to_nowhere\n    source: app\n    target: broken\n    tables:\n"
                       "      - { table: public.plans, strategy: full_refresh }\n";
    text.replace(text.find("pipelines:"), 0,
                 "  broken: { kind: postgres, dsn: \"host=127.0.0.1 port=" + std::to_string(s.pgPort) +
                     " dbname=no_such_db user=" + s.pgUser + "\" }\n");
    std::string f = dir.file("ws.yaml");
    writeFile(f, text);
    ASSERT_EQ(runCli({"--state", state, "apply", f, "--no-check"}).exitCode, 0);
    auto run = runCli({"--state", state, "run", "--once"});
    EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM model.plans"), "5");
    auto st = nlohmann::json::parse(runCli({"--state", state, "status", "--json"}).out);
    bool sawError = false;
    for (auto &t : st["tables"])
        if (t["pipeline"] == "to_nowhere") {
            EXPECT_EQ(t["state"], "error");
            EXPECT_NE(t["message"].get<std::string>().find("no_such_db"), std::string::npos) << t["message"];
            sawError = true;
        }
    EXPECT_TRUE(sawError);
}

TEST_F(CliFixture, aChangeOfSourceIsItsOwnStateAndStatusSaysWhichSourceTheTableFollows)
{
    src.exec("CREATE TABLE orders (id int PRIMARY KEY, total int);"
             "INSERT INTO orders SELECT g, g FROM generate_series(1, 50) g");
    const std::string pipeline = uniqueName("moved");
    std::string text = yaml("      - { table: public.orders, strategy: cdc }\n"
                            "      - { table: public.plans,  strategy: full_refresh }\n");
    text.replace(text.find("name: app_to_dw"), 15, "name: " + pipeline);
    ASSERT_EQ(apply(text).exitCode, 0);
    auto first = runCli({"--state", state, "run", "--once"});
    ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
    const std::string systemId = src.scalar("SELECT system_identifier::text FROM pg_control_system()");
    const std::string timeline = src.scalar("SELECT timeline_id::text FROM pg_control_checkpoint()");

    auto tableOf = [&](const nlohmann::json &status, const char *table) {
        for (const auto &t : status["tables"])
            if (t["table"] == table)
                return t;
        return nlohmann::json();
    };
    auto synced = nlohmann::json::parse(runCli({"--state", state, "status", "--json"}).out);
    const auto orders = tableOf(synced, "public.orders");
    EXPECT_EQ(orders["source_identity"], (nlohmann::json{{"system_id", systemId}, {"timeline", std::stoi(timeline)}}))
        << orders.dump();
    EXPECT_TRUE(tableOf(synced, "public.plans")["source_identity"].is_null()) << "a full refresh has no stream";

    // The target follows another cluster than the one now behind the address (a server rebuilt
    // from a backup under the same address, say): the engine stops before reading anything.
    const std::string other = systemId == "7000000000000000001" ? "7000000000000000002" : "7000000000000000001";
    dst.exec("UPDATE _driftless.checkpoints SET position = jsonb_set(position::jsonb, '{system_id}', '\"" + other +
             "\"')::text WHERE pipeline = '" + pipeline + "' AND strategy = 'cdc'");
    auto run = runCli({"--state", state, "run", "--once"});
    EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
    auto status = nlohmann::json::parse(runCli({"--state", state, "status", "--json"}).out);
    const auto stopped = tableOf(status, "public.orders");
    EXPECT_EQ(stopped["state"], "source_changed") << stopped.dump();
    EXPECT_TRUE(stopped["message"].get<std::string>().starts_with("the source changed")) << stopped["message"];
    EXPECT_NE(stopped["message"].get<std::string>().find("driftless-cli recover " + pipeline), std::string::npos)
        << stopped["message"];
    EXPECT_NE(stopped["message"].get<std::string>().find(other + " -> " + systemId), std::string::npos)
        << stopped["message"];
    // The source it follows, as the engine last recorded its checkpoint (the change above was
    // made behind its back, in the target alone): unchanged by the stop.
    EXPECT_EQ(stopped["source_identity"], orders["source_identity"]);
    EXPECT_EQ(tableOf(status, "public.plans")["state"], "ok") << "the full refresh synced on";

    // The human view says so too, with the message that names the command.
    auto human = runCli({"--state", state, "status"});
    EXPECT_NE(human.out.find("source_changed"), std::string::npos) << human.out;
    EXPECT_NE(human.out.find("driftless-cli recover " + pipeline), std::string::npos) << human.out;
}

TEST_F(CliFixture, doctorWarnsAboutAnUnindexedCursorColumn)
{
    src.exec("ALTER TABLE events ADD COLUMN touched timestamptz NOT NULL DEFAULT now()");
    ASSERT_EQ(apply(yaml("      - { table: public.events, strategy: cursor, cursor: touched }\n")).exitCode, 0);
    auto r = runCli({"--state", state, "doctor"});
    EXPECT_EQ(r.exitCode, 0) << r.out;
    EXPECT_NE(r.out.find("is not indexed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("CREATE INDEX ON public.events (touched)"), std::string::npos) << r.out;
}

namespace {

/// The findings of `doctor --json` about `subject` at `level`.
std::vector<nlohmann::json> findingsOf(const nlohmann::json &doc, const std::string &level, const std::string &subject)
{
    std::vector<nlohmann::json> out;
    for (const auto &f : doc.at("findings"))
        if (f.at("level") == level && f.at("subject") == subject)
            out.push_back(f);
    return out;
}

} // namespace

TEST_F(CliFixture, doctorJsonGivesTheExactSqlThatFixesAFindingAndChecksOneEndpoint)
{
    src.exec("ALTER TABLE events ADD COLUMN touched timestamptz NOT NULL DEFAULT now()");
    ASSERT_EQ(apply(yaml("      - { table: public.events, strategy: cursor, cursor: touched }\n")).exitCode, 0);

    auto r = runCli({"--state", state, "doctor", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    auto warns = findingsOf(doc, "warn", "table public.events");
    ASSERT_EQ(warns.size(), 1u) << doc.dump(2);
    EXPECT_EQ(warns[0]["pipeline"], "app_to_dw");
    EXPECT_NE(warns[0]["message"].get<std::string>().find("is not indexed"), std::string::npos);
    EXPECT_EQ(warns[0]["sql"], "CREATE INDEX ON \"public\".\"events\" (\"touched\");");
    int counted = 0;
    for (const auto &f : doc["findings"])
        counted += f["level"] == "warn";
    EXPECT_EQ(doc["warnings"], counted);
    EXPECT_EQ(doc["errors"], 0);

    // The DBA runs the statement as given; the next check has nothing to say about it.
    src.exec(warns[0]["sql"].get<std::string>());
    auto again = nlohmann::json::parse(runCli({"--state", state, "doctor", "--json"}).out);
    EXPECT_TRUE(findingsOf(again, "warn", "table public.events").empty()) << again.dump(2);
    EXPECT_EQ(findingsOf(again, "ok", "table public.events").size(), 1u) << again.dump(2);

    // One endpoint: the target's own findings only; the source's include the tables read from it.
    auto dw = nlohmann::json::parse(runCli({"--state", state, "doctor", "--json", "--endpoint", "dw"}).out);
    ASSERT_FALSE(dw["findings"].empty());
    for (const auto &f : dw["findings"])
        EXPECT_EQ(f["subject"], "endpoint dw") << f.dump();
    auto app = nlohmann::json::parse(runCli({"--state", state, "doctor", "--json", "--endpoint", "app"}).out);
    std::set<std::string> subjects;
    for (const auto &f : app["findings"])
        subjects.insert(f["subject"]);
    EXPECT_EQ(subjects, (std::set<std::string>{"endpoint app", "table public.events"})) << app.dump(2);
    // An endpoint no pipeline uses is still checked.
    auto lite = nlohmann::json::parse(runCli({"--state", state, "doctor", "--json", "--endpoint", "lite"}).out);
    ASSERT_EQ(lite["findings"].size(), 1u) << lite.dump(2);
    EXPECT_EQ(lite["findings"][0]["level"], "ok");
    EXPECT_NE(lite["findings"][0]["message"].get<std::string>().find("SQLite file"), std::string::npos);

    auto unknown = runCli({"--state", state, "doctor", "--json", "--endpoint", "nosuch"});
    EXPECT_EQ(unknown.exitCode, 2);
    auto u = nlohmann::json::parse(unknown.out);
    ASSERT_EQ(u["findings"].size(), 1u);
    EXPECT_EQ(u["findings"][0]["message"], "no such endpoint");
    EXPECT_EQ(u["errors"], 1);
}

TEST_F(CliFixture, decommissionDropsTheSlotAndPublicationOnceTheRunningSyncLetsGo)
{
    src.exec("CREATE TABLE orders (id int PRIMARY KEY, total int);"
             "INSERT INTO orders SELECT g, g FROM generate_series(1, 100) g");
    const std::string pipeline = uniqueName("decom");
    std::string text = yaml("      - { table: public.orders, strategy: cdc }\n");
    text.replace(text.find("name: app_to_dw"), 15, "name: " + pipeline);
    // A second pipeline keeps the sync running once the first is gone.
    text += "  - name: keep\n"
            "    source: app\n"
            "    target: dw\n"
            "    target_schema: kept\n"
            "    tables:\n"
            "      - { table: public.plans, strategy: full_refresh, every: 30s }\n";
    ASSERT_EQ(apply(text).exitCode, 0);
    const std::string slot = "driftless_" + pipeline;
    const std::string slotCount = "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "'";
    const std::string pubCount = "SELECT count(*) FROM pg_publication WHERE pubname = '" + slot + "'";

    const std::string log = dir.file("run.log");
    const int runner = spawnCli({"--state", state, "run"}, {}, log);
    bool streaming = false;
    for (int i = 0; i < 1200 && !streaming; ++i) {
        streaming =
            src.scalar(slotCount + " AND active") == "1" && dst.scalar("SELECT count(*) FROM model.orders") == "100";
        if (!streaming)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(streaming) << readFile(log);
    ASSERT_EQ(src.scalar(pubCount), "1");

    // Not at a terminal and without --yes: the exact statements, and nothing changed.
    auto asked = runCli({"--state", state, "decommission", pipeline});
    EXPECT_EQ(asked.exitCode, 2) << asked.out << asked.err;
    EXPECT_NE(asked.out.find("SELECT pg_drop_replication_slot('" + slot + "');"), std::string::npos) << asked.out;
    EXPECT_NE(asked.out.find("DROP PUBLICATION \"" + slot + "\";"), std::string::npos) << asked.out;
    EXPECT_NE(asked.out.find("being read right now"), std::string::npos) << asked.out;
    EXPECT_NE(asked.err.find("nothing changed: add --yes"), std::string::npos) << asked.err;
    EXPECT_EQ(src.scalar(slotCount), "1");
    EXPECT_NE(runCli({"--state", state, "status"}).out.find(pipeline), std::string::npos);

    // With --yes, while the sync streams it: the pipeline leaves the workspace, the sync lets go
    // of the slot, and both are dropped; the other pipeline and the target rows stay.
    auto done = runCli({"--state", state, "decommission", "--yes", pipeline}, {}, 120);
    ASSERT_EQ(done.exitCode, 0) << done.out << done.err;
    EXPECT_NE(done.out.find("- pipeline " + pipeline), std::string::npos) << done.out;
    EXPECT_NE(done.out.find("ran on app: SELECT pg_drop_replication_slot('" + slot + "');"), std::string::npos)
        << done.out;
    EXPECT_NE(done.out.find("ran on app: DROP PUBLICATION"), std::string::npos) << done.out;
    EXPECT_EQ(src.scalar(slotCount), "0");
    EXPECT_EQ(src.scalar(pubCount), "0");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM model.orders"), "100");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM _driftless.checkpoints WHERE pipeline = '" + pipeline + "'"), "0");
    auto status = nlohmann::json::parse(runCli({"--state", state, "status", "--json"}).out);
    std::set<std::string> pipelines;
    for (const auto &t : status["tables"])
        pipelines.insert(t["pipeline"]);
    EXPECT_EQ(pipelines, std::set<std::string>{"keep"});
    EXPECT_EQ(::kill(runner, 0), 0) << "the sync goes on with the other pipeline: " << readFile(log);
    ::kill(runner, SIGTERM);
    EXPECT_EQ(waitPid(runner, 60), 0) << readFile(log);

    auto unknown = runCli({"--state", state, "decommission", "--yes", pipeline});
    EXPECT_EQ(unknown.exitCode, 2);
    EXPECT_NE(unknown.err.find("no pipeline named '" + pipeline + "'"), std::string::npos) << unknown.err;
}

TEST_F(CliFixture, passwordsComeFromPgpassAndFromTheServiceFile)
{
    // Without PGPASSWORD, libpq finds the password in ~/.pgpass (here PGPASSFILE); endpoints may
    // name only a service of pg_service.conf (here PGSERVICEFILE).
    const auto &s = servers();
    const std::string port = std::to_string(s.pgPort);
    const std::string pgpass = dir.file("pgpass");
    writeFile(pgpass, s.pgHost + ":" + port + ":*:" + s.pgUser + ":" + s.pgPassword + "\n");
    ::chmod(pgpass.c_str(), 0600);
    const std::map<std::string, std::string> viaPgpass = {{"-PGPASSWORD", ""}, {"PGPASSFILE", pgpass}};
    auto applied = apply(good(), viaPgpass);
    ASSERT_EQ(applied.exitCode, 0) << applied.out << applied.err;
    auto run = runCli({"--state", state, "run", "--once"}, viaPgpass);
    EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM model.plans"), "5");

    // A wrong password there is refused: the file is what libpq used.
    const std::string wrong = dir.file("pgpass-wrong");
    writeFile(wrong, s.pgHost + ":" + port + ":*:" + s.pgUser + ":not-the-password\n");
    ::chmod(wrong.c_str(), 0600);
    auto refused = runCli({"--state", state, "doctor"}, {{"-PGPASSWORD", ""}, {"PGPASSFILE", wrong}});
    EXPECT_EQ(refused.exitCode, 1) << refused.out << refused.err;
    EXPECT_NE(refused.out.find("password authentication failed"), std::string::npos) << refused.out;

    // The source named by its service alone.
    const std::string services = dir.file("pg_service.conf");
    writeFile(services, "[app_source]\nhost=" + s.pgHost + "\nport=" + port + "\ndbname=" + src.name() +
                            "\nuser=" + s.pgUser + "\n");
    auto viaService = viaPgpass;
    viaService["PGSERVICEFILE"] = services;
    const std::string text =
        yaml("      - { table: public.events, strategy: cursor, cursor: updated_at }\n", "service=app_source");
    auto appliedService = apply(text, viaService);
    ASSERT_EQ(appliedService.exitCode, 0) << appliedService.out << appliedService.err;
    auto runService = runCli({"--state", state, "run", "--once"}, viaService);
    EXPECT_EQ(runService.exitCode, 0) << runService.out << runService.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM model.events"), "1000");
    // Without the service file the name means nothing to libpq, and the run says which file.
    const std::string missing = dir.file("none.conf");
    auto lost = runCli({"--state", state, "run", "--once"},
                       {{"-PGPASSWORD", ""}, {"PGPASSFILE", pgpass}, {"PGSERVICEFILE", missing}});
    EXPECT_NE(lost.exitCode, 0);
    EXPECT_NE(lost.err.find("service file \"" + missing + "\" not found"), std::string::npos) << lost.err;
}

TEST_F(CliFixture, usageErrorsExitTwo)
{
    EXPECT_EQ(runCli({"frobnicate"}).exitCode, 2);
    EXPECT_EQ(runCli({}).exitCode, 2);
    EXPECT_EQ(runCli({"--state", state, "run", "--bogus"}).exitCode, 2);
    auto help = runCli({"--help"});
    EXPECT_EQ(help.exitCode, 0);
    EXPECT_NE(help.out.find("apply FILE"), std::string::npos);
}

namespace {

/// A CDC pipeline over one 60k-row table, loaded once, then drifted by hand in the target.
struct CliBackfill : CliFixture {
    std::string pipeline = uniqueName("clibf");
    int exitCode = -1000;

    void SetUp() override
    {
        CliFixture::SetUp();
        src.exec("CREATE TABLE big (id int PRIMARY KEY, v text, n int);"
                 "INSERT INTO big SELECT g, md5(g::text), g FROM generate_series(1, 60000) g; ANALYZE big");
        std::string text = yaml("      - { table: public.big, strategy: cdc, page_size: 500 }\n"
                                "      - { table: public.plans, strategy: full_refresh }\n");
        text.replace(text.find("name: app_to_dw"), 15, "name: " + pipeline);
        auto r = apply(text);
        ASSERT_EQ(r.exitCode, 0) << r.err;
        auto load = runCli({"--state", state, "run", "--once", "--pipeline", pipeline});
        ASSERT_EQ(load.exitCode, 0) << load.out << load.err;
        ASSERT_EQ(dst.scalar("SELECT count(*) FROM model.big"), "60000");
        dst.exec("DELETE FROM model.big WHERE id % 100 = 0; UPDATE model.big SET v = 'drifted' WHERE id % 77 = 0;"
                 "INSERT INTO model.big (id, v, n, _driftless_version) VALUES (999999, 'extra', 1, 0)");
    }
    std::string hashOf(PgTestDb &db, const std::string &schema)
    {
        auto c = db.connect();
        return pgHash(c, "SELECT id, v, n FROM " + schema + ".big", "id");
    }
    nlohmann::json bigStatus()
    {
        auto st = runCli({"--state", state, "status", "--json"});
        EXPECT_EQ(st.exitCode, 0) << st.err;
        auto all = nlohmann::json::parse(st.out);
        for (auto &t : all["tables"])
            if (t["table"] == "public.big")
                return t;
        ADD_FAILURE() << "public.big missing from status: " << st.out;
        return {};
    }
    /// Polls `status --json` until `until` holds, or `pid` exited (its code goes to exitCode),
    /// keeping the backfill objects it saw.
    std::vector<nlohmann::json> watchBackfill(const std::function<bool(const nlohmann::json &)> &until, int pid = 0)
    {
        std::vector<nlohmann::json> seen;
        for (int i = 0; i < 1200; ++i) {
            auto t = bigStatus();
            if (t.contains("backfill") && t["backfill"].is_object())
                seen.push_back(t["backfill"]);
            if (until(t))
                break;
            int status = 0;
            if (pid && ::waitpid(pid, &status, WNOHANG) == pid) {
                exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return seen;
    }
    static void expectProgress(const std::vector<nlohmann::json> &seen)
    {
        ASSERT_FALSE(seen.empty()) << "status never showed the backfill's progress";
        long long lastRows = -1;
        for (auto &b : seen) {
            ASSERT_TRUE(b["rows"].is_number()) << b;
            ASSERT_TRUE(b["total"].is_number()) << b;
            ASSERT_TRUE(b["percent"].is_number()) << b;
            ASSERT_TRUE(b.contains("eta_seconds")) << b;
            EXPECT_GE(b["rows"].get<long long>(), lastRows) << "rows copied never go back";
            lastRows = b["rows"].get<long long>();
            EXPECT_NEAR(b["total"].get<double>(), 60000, 6000) << b;
            EXPECT_GE(b["percent"].get<double>(), 0.0);
            EXPECT_LE(b["percent"].get<double>(), 100.0);
        }
        EXPECT_GT(lastRows, 0) << "status showed rows being copied";
    }
};

} // namespace

TEST_F(CliBackfill, withNoSyncRunningBackfillRunsToTheEndAndStatusShowsItsProgress)
{
    std::string log = dir.file("backfill.log");
    int pid = spawnCli({"--state", state, "backfill", pipeline, "public.big"}, {}, log);
    auto seen = watchBackfill([](const nlohmann::json &) { return false; }, pid);
    if (exitCode == -1000)
        exitCode = waitPid(pid, 300);
    std::string out = readFile(log);
    ASSERT_EQ(exitCode, 0) << out;
    EXPECT_NE(out.find("no sync is running"), std::string::npos) << out;
    EXPECT_NE(out.find("public.big is backfilled and streaming"), std::string::npos) << out;
    expectProgress(seen);
    EXPECT_EQ(hashOf(dst, "model"), hashOf(src, "public")) << "drift repaired, the extra row removed";
    auto after = bigStatus();
    EXPECT_TRUE(after["backfill"].is_null()) << after;
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM _driftless.checkpoints WHERE request IS NOT NULL"), "0")
        << "the request was taken";
}

TEST_F(CliBackfill, onARunningSyncBackfillLeavesARequestThatItPicksUpWhileStreaming)
{
    std::string log = dir.file("run.log");
    int runner = spawnCli({"--state", state, "run", "--pipeline", pipeline}, {}, log);
    watchBackfill([](const nlohmann::json &t) { return t["state"] == "streaming"; });
    auto r = runCli({"--state", state, "backfill", pipeline, "public.big"});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("re-backfill of public.big requested"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the running sync (walsender pid"), std::string::npos) << r.out;
    // Writes go on meanwhile; the stream applies them.
    src.exec("UPDATE big SET n = n + 1 WHERE id % 10 = 0; DELETE FROM big WHERE id % 1000 = 1");
    auto seen = watchBackfill([&](const nlohmann::json &t) {
        return t["state"] == "streaming" && t["backfill"].is_null() &&
               dst.scalar("SELECT count(*) FROM model.big WHERE id = 999999") == "0";
    });
    expectProgress(seen);
    // The stream applies the writes made during the copy.
    for (int i = 0; i < 200 && hashOf(dst, "model") != hashOf(src, "public"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::kill(runner, SIGTERM);
    EXPECT_EQ(waitPid(runner, 60), 0) << readFile(log);
    EXPECT_EQ(hashOf(dst, "model"), hashOf(src, "public"));
}

TEST_F(CliBackfill, aTableThatIsNotCdcIsRefusedWithWhatToDoInstead)
{
    auto r = runCli({"--state", state, "backfill", pipeline, "public.plans"});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("full refresh table reloads whole on every pass"), std::string::npos) << r.err;
    auto unknown = runCli({"--state", state, "backfill", pipeline, "public.nope"});
    EXPECT_EQ(unknown.exitCode, 2);
    EXPECT_NE(unknown.err.find("has no table public.nope"), std::string::npos) << unknown.err;
}

TEST_F(CliBackfill, anInterruptedBackfillIsFinishedByTheNextRunOnce)
{
    // The copy is killed after its third chunk; the next `run --once` resumes it and returns only
    // when it is done (it used to return after the stream's drain with the copy part-way, exit 0).
    auto killed = runCli({"--state", state, "backfill", pipeline, "public.big"},
                         {{"DRIFTLESS_CRASH_AT", "rebackfill.after_chunk:3"}});
    ASSERT_NE(killed.exitCode, 0) << killed.out << killed.err;
    src.exec("UPDATE big SET n = n + 1 WHERE id % 10 = 0"); // streamed by the same pass
    auto run = runCli({"--state", state, "run", "--once", "--pipeline", pipeline});
    EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
    auto pos = nlohmann::json::parse(dst.scalar("SELECT position FROM _driftless.checkpoints WHERE source_table = "
                                                "'public.big'"));
    EXPECT_FALSE(pos.contains("rebackfill")) << pos.dump();
    EXPECT_EQ(hashOf(dst, "model"), hashOf(src, "public")) << "drift repaired, the extra row removed";
    driftless::core::SqliteDb db(state, driftless::core::SqliteDb::Mode::ReadOnly);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM events WHERE message LIKE 're-backfill done: %'"), 1);
}

TEST_F(CliBackfill, anInterruptedBackfillCanBeCancelledAndStartedAgain)
{
    // The copy is killed after its third chunk; cancelling it with no sync running leaves a
    // request the next sync applies first: the copy does not resume, the rows merged so far stay.
    auto killed = runCli({"--state", state, "backfill", pipeline, "public.big"},
                         {{"DRIFTLESS_CRASH_AT", "rebackfill.after_chunk:3"}});
    ASSERT_NE(killed.exitCode, 0) << killed.out << killed.err;
    auto pos = nlohmann::json::parse(dst.scalar("SELECT position FROM _driftless.checkpoints WHERE source_table = "
                                                "'public.big'"));
    ASSERT_TRUE(pos.contains("rebackfill")) << pos.dump();
    EXPECT_EQ(pos["rebackfill"]["rows"], 1500);

    auto cancel = runCli({"--state", state, "backfill", "--cancel", pipeline, "public.big"});
    EXPECT_EQ(cancel.exitCode, 0) << cancel.out << cancel.err;
    EXPECT_NE(cancel.out.find("cancelling the re-backfill of public.big (1500 rows copied)"), std::string::npos)
        << cancel.out;
    EXPECT_NE(cancel.out.find("the next one cancels it"), std::string::npos) << cancel.out;
    auto run = runCli({"--state", state, "run", "--once", "--pipeline", pipeline});
    EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
    pos = nlohmann::json::parse(dst.scalar("SELECT position FROM _driftless.checkpoints WHERE source_table = "
                                           "'public.big'"));
    EXPECT_FALSE(pos.contains("rebackfill")) << pos.dump();
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM model.big WHERE id = 999999"), "1")
        << "a cancelled copy does not look for rows the source no longer has";
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM model.big WHERE id <= 1500 AND id % 100 = 0"), "15")
        << "rows merged before the cancel stay";
    driftless::core::SqliteDb db(state, driftless::core::SqliteDb::Mode::ReadOnly);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM events WHERE message LIKE 're-backfill cancelled after 1500 rows%'"),
              1);

    auto again = runCli({"--state", state, "backfill", pipeline, "public.big"});
    EXPECT_EQ(again.exitCode, 0) << again.out << again.err;
    EXPECT_EQ(hashOf(dst, "model"), hashOf(src, "public"));
}
