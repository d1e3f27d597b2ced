#include "core/config/workspacefile.h"
#include "core/engine/schema/columnbackfill.h"
#include "core/engine/schema/schemapolicy.h"
#include "core/model/error.h"

#include <gtest/gtest.h>

using namespace driftless::core;

namespace {

// The form the README promises; it must keep working.
const char *kReadmeForm = R"(endpoints:
  app:  { kind: postgres, dsn: "host=127.0.0.1 port=5432 dbname=app user=sync" }
  dw:   { kind: postgres, dsn: "postgresql://sync@127.0.0.1:5433/dw" }
  lite: { kind: sqlite, path: "replica.db" }
pipelines:
  - name: app_to_dw
    source: app
    target: dw
    target_schema: model          # Postgres targets; default: the source table's schema
    tables:
      - { table: public.plans,  strategy: full_refresh }
      - { table: public.events, strategy: cursor, cursor: updated_at, lookback: 10m, page_size: 50000 }
      - { table: public.orders, strategy: cdc, freshness_sla: 60s }   # CDC arrives in the next issue
)";

Workspace parse(const std::string &yaml)
{
    return WorkspaceFile::parse(yaml, "ws.yaml", "/home/dba/sync");
}

ConfigError parseError(const std::string &yaml)
{
    try {
        parse(yaml);
    } catch (const ConfigError &e) {
        return e;
    }
    ADD_FAILURE() << "expected a ConfigError for:\n" << yaml;
    return ConfigError("none");
}

std::string replace(std::string s, const std::string &from, const std::string &to)
{
    auto pos = s.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    return s.replace(pos, from.size(), to);
}

} // namespace

TEST(WorkspaceFile, readsTheReadmeForm)
{
    Workspace ws = parse(kReadmeForm);
    ASSERT_EQ(ws.endpoints.size(), 3u);
    EXPECT_EQ(ws.endpoints.at("lite").path, "/home/dba/sync/replica.db") << "relative to the file's folder";
    EXPECT_EQ(ws.endpoints.at("dw").dsn, "postgresql://sync@127.0.0.1:5433/dw");
    ASSERT_EQ(ws.pipelines.size(), 1u);
    const auto &p = ws.pipelines[0];
    EXPECT_EQ(p.targetSchema, "model");
    ASSERT_EQ(p.tables.size(), 3u);
    EXPECT_EQ(p.tables[0].strategy, Strategy::FullRefresh);
    EXPECT_EQ(p.tables[1].cursor, "updated_at");
    EXPECT_EQ(p.tables[1].lookback, "10m");
    EXPECT_EQ(p.tables[1].pageSize, 50000);
    EXPECT_EQ(p.tables[2].strategy, Strategy::Cdc);
    EXPECT_EQ(p.tables[2].freshnessSla, Millis(60'000));
    auto tn = resolveTargetName(p, p.tables[1], EndpointKind::Postgres);
    EXPECT_EQ(tn.schema, "model");
    EXPECT_EQ(tn.name, "events");
}

TEST(WorkspaceFile, yamlRoundTripsToAnEqualWorkspace)
{
    std::string yaml = replace(kReadmeForm, "user=sync\" }",
                               "user=sync\", slot_guard: { max_retained: 10GB, action: alert, warn_retained: "
                               "2GB } }") +
                       R"(  - name: odd_names
    source: app
    target: lite
    publication: existing_pub
    heartbeat: 30s
    tables:
      - { table: '"Sales Dept"."Order-Lines"', strategy: cursor, cursor: "Updated At", every: 90s, target_table: "order lines" }
)";
    Workspace ws = parse(yaml);
    EXPECT_EQ(ws.pipelines[1].tables[0].table.schema, "Sales Dept");
    EXPECT_EQ(ws.pipelines[1].tables[0].table.name, "Order-Lines");
    EXPECT_EQ(ws.pipelines[1].publication, "existing_pub");
    EXPECT_EQ(ws.pipelines[1].heartbeat, Millis(30000));
    EXPECT_FALSE(ws.pipelines[0].heartbeat);
    ASSERT_TRUE(ws.endpoints.at("app").slotGuard);
    EXPECT_EQ(ws.endpoints.at("app").slotGuard->maxRetained, 10LL << 30);
    EXPECT_EQ(ws.endpoints.at("app").slotGuard->effectiveWarn(), 2LL << 30);
    EXPECT_EQ(ws.endpoints.at("app").slotGuard->action, SlotGuard::Action::Alert);
    EXPECT_FALSE(ws.endpoints.at("dw").slotGuard);
    Workspace again = WorkspaceFile::parse(WorkspaceFile::toYaml(ws), "export.yaml", "/elsewhere");
    EXPECT_EQ(again, ws);
}

TEST(WorkspaceFile, malformedYamlNamesFileAndLine)
{
    auto e = parseError("endpoints:\n  app: { kind: postgres, dsn: \"x\"\n pipelines: [\n");
    EXPECT_EQ(e.file(), "ws.yaml");
    EXPECT_GT(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find("malformed YAML"), std::string::npos) << e.what();
}

TEST(WorkspaceFile, unknownEndpointIsRefusedWithTheFieldAndLine)
{
    auto e = parseError(replace(kReadmeForm, "target: dw", "target: warehouse"));
    EXPECT_EQ(e.line(), 8);
    EXPECT_EQ(e.field(), "pipelines[app_to_dw].target");
    EXPECT_NE(std::string(e.what()).find("unknown endpoint 'warehouse'"), std::string::npos) << e.what();
}

TEST(WorkspaceFile, eachMistakeHasItsOwnMessage)
{
    struct Case {
        std::string from, to, field, needle;
    } cases[] = {
        {"strategy: full_refresh", "strategy: mirror", "pipelines[app_to_dw].tables[public.plans].strategy",
         "not a strategy"},
        {"lookback: 10m", "lookback: ten minutes", "pipelines[app_to_dw].tables[public.events].lookback",
         "neither a duration"},
        {"page_size: 50000", "page_size: 0", "pipelines[app_to_dw].tables[public.events].page_size", "whole number"},
        {"freshness_sla: 60s", "freshness_sla: soon", "pipelines[app_to_dw].tables[public.orders].freshness_sla",
         "not a duration"},
        {"name: app_to_dw", "name: App-To-DW", "pipelines[0].name", "lower-case"},
        {"kind: sqlite", "kind: oracle", "endpoints.lite.kind", "not a kind"},
        {"user=sync\" }", "user=sync password=hunter2\" }", "endpoints.app.dsn", "contains a password"},
        {"postgresql://sync@", "postgresql://sync:hunter2@", "endpoints.dw.dsn", "contains a password"},
        {"table: public.plans,", "table: public.plans, strategy: cursor, cursr: x,",
         "pipelines[app_to_dw].tables[0].cursr", "unknown key"},
        {"target_schema: model", "target_schema: model\n    tablez: []", "pipelines[0].tablez", "unknown key"},
        {"user=sync\" }", "user=sync\", slot_guard: { max_retained: lots, action: alert } }",
         "endpoints.app.slot_guard.max_retained", "not a size"},
        {"user=sync\" }", "user=sync\", slot_guard: { max_retained: 1GB, action: panic } }",
         "endpoints.app.slot_guard.action", "one of fallback, alert"},
        {"table: public.plans,", "table: public.plans, fallback_from: cdc,",
         "pipelines[app_to_dw].tables[public.plans].fallback_from", "written by the slot guard"},
        {"user=sync\" }", "user=sync\", slot_guard: { max_retained: 1GB } }", "endpoints.app.slot_guard.action",
         "missing"},
        {"path: \"replica.db\" }", "path: \"replica.db\", slot_guard: { max_retained: 1GB, action: alert } }",
         "endpoints.lite.slot_guard", "Postgres"},
        {"target_schema: model", "target_schema: model\n    heartbeat: often", "pipelines[app_to_dw].heartbeat",
         "not a duration"},
        {"target_schema: model", "target_schema: model\n    heartbeat: 10ms", "pipelines[app_to_dw].heartbeat",
         "at least 1s"},
    };
    for (const auto &c : cases) {
        auto e = parseError(replace(kReadmeForm, c.from, c.to));
        EXPECT_EQ(e.field(), c.field) << c.to << " -> " << e.what();
        EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
        EXPECT_GT(e.line(), 0) << e.what();
    }
}

TEST(WorkspaceFile, sshTunnelsAreReadCheckedAndWrittenBack)
{
    std::string yaml =
        replace(kReadmeForm, "user=sync\" }", "user=sync\", ssh: { host: bastion.example.com, user: tunnel } }");
    yaml = replace(yaml, "/dw\" }",
                   "/dw\", ssh: { host: db-gw, port: 2222, user: ops, identity_file: keys/dw_ed25519, "
                   "jump: \"jumper@edge.example.com:2200\" } }");
    yaml += R"(  - name: from_maria
    source: maria
    target: lite
    tables:
      - { table: shop.orders, strategy: full_refresh }
)";
    yaml = replace(yaml, "  lite:",
                   "  maria: { kind: mysql, dsn: \"mysql://sync@10.0.0.7:3306/shop\", ssh: { host: gw, "
                   "user: me, identity_file: \"~/.ssh/id_gw\" } }\n  lite:");
    Workspace ws = parse(yaml);
    const auto &app = ws.endpoints.at("app");
    ASSERT_TRUE(app.ssh);
    EXPECT_EQ(app.ssh->host, "bastion.example.com");
    EXPECT_EQ(app.ssh->port, 22) << "the default port";
    EXPECT_EQ(app.ssh->user, "tunnel");
    EXPECT_FALSE(app.ssh->identityFile);
    EXPECT_FALSE(app.ssh->jump);
    const auto &dw = ws.endpoints.at("dw");
    ASSERT_TRUE(dw.ssh);
    EXPECT_EQ(dw.ssh->port, 2222);
    EXPECT_EQ(dw.ssh->identityFile, "/home/dba/sync/keys/dw_ed25519") << "relative to the file's folder";
    EXPECT_EQ(dw.ssh->jump, "jumper@edge.example.com:2200");
    EXPECT_EQ(dw.ssh->display(), "ops@db-gw:2222 via jumper@edge.example.com:2200");
    const auto &maria = ws.endpoints.at("maria");
    ASSERT_TRUE(maria.ssh);
    EXPECT_EQ(maria.ssh->identityFile, "~/.ssh/id_gw") << "~ is expanded when the tunnel starts, not in the file";
    EXPECT_FALSE(ws.endpoints.at("lite").ssh);
    const std::string out = WorkspaceFile::toYaml(ws);
    EXPECT_NE(out.find("ssh: {host: \"db-gw\", port: 2222"), std::string::npos) << out;
    EXPECT_EQ(WorkspaceFile::parse(out, "export.yaml", "/elsewhere"), ws);
}

TEST(WorkspaceFile, sshTunnelMistakesNameTheField)
{
    struct Case {
        std::string to, field, needle;
    } cases[] = {
        {"user=sync\", ssh: { user: tunnel } }", "endpoints.app.ssh.host", "missing"},
        {"user=sync\", ssh: { host: gw } }", "endpoints.app.ssh.user", "missing"},
        {"user=sync\", ssh: { host: gw, user: t, port: 70000 } }", "endpoints.app.ssh.port", "not a port"},
        {"user=sync\", ssh: { host: gw, user: t, port: twenty } }", "endpoints.app.ssh.port", "not a port"},
        {"user=sync\", ssh: { host: t@gw, user: t } }", "endpoints.app.ssh.host", "put the login in 'user'"},
        {"user=sync\", ssh: { host: gw, user: t, proxy: x } }", "endpoints.app.ssh.proxy", "unknown key"},
        {"user=sync\", ssh: { host: gw, user: t, jump: -oProxyCommand=x } }", "endpoints.app.ssh.jump",
         "not a jump host"},
        {"user=sync\", ssh: bastion }", "endpoints.app.ssh", "expected a map"},
    };
    for (const auto &c : cases) {
        auto e = parseError(replace(kReadmeForm, "user=sync\" }", c.to));
        EXPECT_EQ(e.field(), c.field) << c.to << " -> " << e.what();
        EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
        EXPECT_GT(e.line(), 0) << e.what();
    }
    auto e = parseError(
        replace(kReadmeForm, "path: \"replica.db\" }", "path: \"replica.db\", ssh: { host: gw, user: t } }"));
    EXPECT_EQ(e.field(), "endpoints.lite.ssh");
    EXPECT_NE(std::string(e.what()).find("SQLite endpoints are files on this machine"), std::string::npos) << e.what();
}

TEST(WorkspaceFile, passwordsNeverReachTheWorkspace)
{
    auto e = parseError(replace(kReadmeForm, "user=sync\" }", "user=sync password=hunter2\" }"));
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << "the message must not echo the secret";
}

TEST(WorkspaceFile, sqliteNameClashIsAnError)
{
    std::string yaml = std::string(kReadmeForm) + R"(  - name: to_lite
    source: app
    target: lite
    tables:
      - { table: public.orders, strategy: full_refresh }
      - { table: archive.orders, strategy: full_refresh }
)";
    auto e = parseError(yaml);
    EXPECT_NE(std::string(e.what()).find("already written by to_lite/public.orders"), std::string::npos) << e.what();
    EXPECT_EQ(e.line(), 19);
    // Renaming one of them resolves it.
    yaml = replace(yaml, "table: archive.orders, strategy: full_refresh",
                   "table: archive.orders, strategy: full_refresh, target_table: archive_orders");
    EXPECT_NO_THROW(parse(yaml));
    // SQLite table names ignore ASCII case: "Orders" and "orders" are one table there.
    yaml = replace(yaml, "target_table: archive_orders", "target_table: ORDERS");
    e = parseError(yaml);
    EXPECT_NE(std::string(e.what()).find("already written by to_lite/public.orders"), std::string::npos) << e.what();
}

TEST(WorkspaceFile, duplicateTableInOnePipelineIsAnError)
{
    std::string yaml =
        replace(kReadmeForm, "{ table: public.orders, strategy: cdc", "{ table: public.PLANS, strategy: cdc");
    auto e = parseError(yaml);
    EXPECT_NE(std::string(e.what()).find("listed twice"), std::string::npos) << e.what();
}

TEST(WorkspaceFile, mysqlSourcesNameTablesAsMysqlDoes)
{
    const std::string yaml = R"(endpoints:
  shop: { kind: mysql, dsn: "mysql://sync@127.0.0.1:3306/shop" }
  dw:   { kind: postgres, dsn: "postgresql://sync@127.0.0.1:5433/dw" }
pipelines:
  - name: shop_to_dw
    source: shop
    target: dw
    tables:
      - { table: Orders, strategy: cursor, cursor: updated_at }
      - { table: "`billing`.`Invoice.2024`", strategy: full_refresh }
)";
    Workspace ws = parse(yaml);
    const auto &t = ws.pipelines.at(0).tables;
    EXPECT_EQ(t.at(0).table, (TableRef{"shop", "Orders"})) << "a bare name is in the DSN's database, case kept";
    EXPECT_EQ(t.at(1).table, (TableRef{"billing", "Invoice.2024"}));

    auto withPassword = parseError(replace(yaml, "mysql://sync@", "mysql://sync:secret@"));
    EXPECT_NE(std::string(withPassword.what()).find("contains a password"), std::string::npos) << withPassword.what();
    EXPECT_EQ(std::string(withPassword.what()).find("secret"), std::string::npos) << "never echo the password";
    auto badOption = parseError(replace(yaml, "3306/shop", "3306/shop?sslmode=maybe"));
    EXPECT_EQ(badOption.field(), "endpoints.shop.dsn");
    EXPECT_NE(std::string(badOption.what()).find("not one of"), std::string::npos) << badOption.what();
    auto noDb = parseError(replace(yaml, "3306/shop", "3306/"));
    EXPECT_NE(std::string(noDb.what()).find("write database.table"), std::string::npos) << noDb.what();
    Workspace cdc = parse(replace(yaml, "strategy: cursor, cursor: updated_at", "strategy: cdc"));
    EXPECT_EQ(cdc.pipelines.at(0).tables.at(0).strategy, Strategy::Cdc) << "binlog CDC";
}

TEST(WorkspaceFile, columnMappingIsReadWithItsSpotsAndWrittenBack)
{
    const std::string yaml = replace(kReadmeForm, "{ table: public.plans,  strategy: full_refresh }",
                                     "{ table: public.plans, strategy: full_refresh, target_table: crm_plans, columns: "
                                     "{ exclude: [internal_notes], rename: { email: email_address }, mask: { ssn: "
                                     "{ hash: hmac-sha256, key: keychain }, phone: { keep_last: 4 }, notes: "
                                     "{ truncate: 200 }, card: { null: true }, pin: { hash: hmac-sha256, key: "
                                     "\"file:keys/hmac.key\" } } } }");
    Workspace ws = parse(yaml);
    const auto &t = ws.pipelines[0].tables[0];
    ASSERT_TRUE(t.columns);
    EXPECT_EQ(t.targetTable, "crm_plans");
    EXPECT_EQ(t.columns->exclude, std::vector<std::string>{"internal_notes"});
    EXPECT_FALSE(t.columns->hasInclude);
    ASSERT_EQ(t.columns->rename.size(), 1u);
    EXPECT_EQ(t.columns->rename[0].second, "email_address");
    ASSERT_EQ(t.columns->mask.size(), 5u);
    EXPECT_EQ(t.columns->mask[0].second.kind, ColumnMask::Kind::Hash);
    EXPECT_EQ(t.columns->mask[0].second.key, "keychain");
    EXPECT_EQ(t.columns->mask[1].second.kind, ColumnMask::Kind::KeepLast);
    EXPECT_EQ(t.columns->mask[1].second.count, 4);
    EXPECT_EQ(t.columns->mask[2].second.count, 200);
    EXPECT_EQ(t.columns->mask[3].second.kind, ColumnMask::Kind::Null);
    EXPECT_EQ(t.columns->mask[4].second.key, "file:/home/dba/sync/keys/hmac.key") << "relative to the file's folder";
    const auto spot = t.columns->spot("exclude:internal_notes");
    EXPECT_EQ(spot.file, "ws.yaml");
    EXPECT_EQ(spot.line, 11);
    EXPECT_EQ(spot.field, "pipelines[app_to_dw].tables[public.plans].columns.exclude[internal_notes]");
    Workspace again = WorkspaceFile::parse(WorkspaceFile::toYaml(ws), "export.yaml", "/elsewhere");
    EXPECT_EQ(again, ws);
    ASSERT_TRUE(again.pipelines[0].tables[0].columns);
    EXPECT_EQ(again.pipelines[0].tables[0].columns->mask, t.columns->mask);

    auto bad = [&](const std::string &columns) {
        return parseError(replace(kReadmeForm, "{ table: public.plans,  strategy: full_refresh }",
                                  "{ table: public.plans, strategy: full_refresh, columns: " + columns + " }"));
    };
    auto both = bad("{ exclude: [a], include: [b] }");
    EXPECT_EQ(both.field(), "pipelines[app_to_dw].tables[public.plans].columns.include");
    EXPECT_EQ(both.line(), 11);
    EXPECT_NE(std::string(both.what()).find("exclude and include together"), std::string::npos);
    EXPECT_EQ(bad("{ drop: [a] }").field(), "pipelines[app_to_dw].tables[public.plans].columns.drop");
    EXPECT_EQ(bad("{ exclude: a }").field(), "pipelines[app_to_dw].tables[public.plans].columns.exclude");
    EXPECT_EQ(bad("{ mask: { a: { truncate: -1 } } }").field(),
              "pipelines[app_to_dw].tables[public.plans].columns.mask.a.truncate");
    EXPECT_EQ(bad("{ mask: { a: { null: true, truncate: 3 } } }").field(),
              "pipelines[app_to_dw].tables[public.plans].columns.mask.a");
    auto inlineKey = bad("{ mask: { a: { hash: hmac-sha256, key: s3cret } } }");
    EXPECT_EQ(inlineKey.field(), "pipelines[app_to_dw].tables[public.plans].columns.mask.a.key");
    EXPECT_NE(std::string(inlineKey.what()).find("never goes in the file"), std::string::npos);
    EXPECT_EQ(bad("{ mask: { a: { hash: md5, key: keychain } } }").field(),
              "pipelines[app_to_dw].tables[public.plans].columns.mask.a.hash");
}

// What the engine compares: the table's schema_changes policy, else the pipeline's, else the
// default, as enums named back in the file's spelling.
TEST(WorkspaceFile, schemaChangePoliciesResolveTableThenPipelineThenDefault)
{
    const Workspace ws = WorkspaceFile::parse(
        "endpoints:\n  a: { kind: postgres, dsn: \"host=x\" }\n  b: { kind: postgres, dsn: \"host=y\" }\n"
        "pipelines:\n  - name: p\n    source: a\n    target: b\n"
        "    schema_changes: { add_column: propagate, drop_column: drop }\n    tables:\n"
        "      - { table: public.t1, strategy: cdc, schema_changes: { add_column: pause, type_change: pause } }\n"
        "      - { table: public.t2, strategy: cdc }\n",
        "ws.yaml", "/");
    const PipelineSpec &p = ws.pipelines.at(0);
    const TableSpec &t1 = p.tables.at(0), &t2 = p.tables.at(1);
    EXPECT_EQ(addColumnPolicy(t1, p.addColumn), AddColumnPolicy::Pause);
    EXPECT_EQ(addColumnPolicy(t2, p.addColumn), AddColumnPolicy::Propagate);
    EXPECT_EQ(addColumnPolicy(t2, std::nullopt), AddColumnPolicy::Backfill);
    EXPECT_EQ(dropColumnPolicy(t1, p.dropColumn), DropColumnPolicy::Drop);
    EXPECT_EQ(dropColumnPolicy(t1, std::nullopt), DropColumnPolicy::Keep);
    EXPECT_EQ(typeChangePolicy(t1, p.typeChange), TypeChangePolicy::Pause);
    EXPECT_EQ(typeChangePolicy(t2, p.typeChange), TypeChangePolicy::Widen);
    EXPECT_EQ(renameColumnPolicy(t2, p.renameColumn), RenameColumnPolicy::Rename);
    for (const char *name : {"backfill", "propagate", "ignore", "pause"})
        EXPECT_EQ(policyName(*parseAddColumnPolicy(name)), name);
    for (const char *name : {"keep", "drop", "pause"})
        EXPECT_EQ(policyName(*parseDropColumnPolicy(name)), name);
    EXPECT_EQ(policyName(*parseTypeChangePolicy("widen")), "widen");
    EXPECT_EQ(policyName(*parseRenameColumnPolicy("rename")), "rename");
    EXPECT_FALSE(parseAddColumnPolicy("Backfill")) << "the file's spelling only";
    EXPECT_FALSE(parseDropColumnPolicy("widen"));
}

TEST(WorkspaceFile, tablesByPatternParseRoundTripAndPickUpByName)
{
    const std::string yaml = replace(kReadmeForm, "    tables:\n", R"(    include_tables: ["public.*", "sales.order_?"]
    exclude_tables: ["public.tmp_*"]
    table_defaults: { strategy: cdc, freshness_sla: 5m, deletes: soft }
    discover_every: 30s
    tables:
)");
    Workspace ws = parse(yaml);
    const auto &p = ws.pipelines[0];
    EXPECT_EQ(p.includeTables, (std::vector<std::string>{"public.*", "sales.order_?"}));
    EXPECT_EQ(p.excludeTables, std::vector<std::string>{"public.tmp_*"});
    ASSERT_TRUE(p.tableDefaults);
    EXPECT_EQ(p.tableDefaults->strategy, Strategy::Cdc);
    EXPECT_EQ(p.tableDefaults->keys.freshnessSla, Millis(300'000));
    EXPECT_EQ(p.discoverEvery, Millis(30'000));
    EXPECT_TRUE(p.picksUp({"public", "invoices"}));
    EXPECT_TRUE(p.picksUp({"sales", "order_1"}));
    EXPECT_FALSE(p.picksUp({"sales", "order_12"})) << "? is one character";
    EXPECT_FALSE(p.picksUp({"public", "tmp_x"})) << "excluded";
    EXPECT_FALSE(p.picksUp({"audit", "invoices"}));
    const TableSpec picked = p.pickedUp({"public", "invoices"}, Strategy::FullRefresh, std::nullopt, std::nullopt);
    EXPECT_EQ(picked.strategy, Strategy::Cdc) << "table_defaults' strategy wins over the recorded one";
    EXPECT_EQ(picked.deletes, "soft");
    EXPECT_TRUE(picked.discovered);

    // A table a pattern picked up is not written to the file: the pattern picks it up again.
    Workspace withPicked = ws;
    withPicked.pipelines[0].tables.push_back(picked);
    const std::string text = WorkspaceFile::toYaml(withPicked);
    EXPECT_EQ(text.find("invoices"), std::string::npos) << text;
    EXPECT_EQ(WorkspaceFile::parse(text, "export.yaml", "/elsewhere"), ws);

    // Patterns alone are a pipeline's whole list of tables.
    const std::string onlyPatterns = R"(endpoints:
  app: { kind: postgres, dsn: "host=127.0.0.1 dbname=app" }
  dw:  { kind: postgres, dsn: "host=127.0.0.1 dbname=dw" }
pipelines:
  - { name: all_public, source: app, target: dw, include_tables: ["public.*"] }
)";
    Workspace patterns = parse(onlyPatterns);
    EXPECT_TRUE(patterns.pipelines[0].tables.empty());
    EXPECT_EQ(WorkspaceFile::parse(WorkspaceFile::toYaml(patterns), "export.yaml", "/x"), patterns);
}

TEST(WorkspaceFile, tablesByPatternMistakesSayWhatToWrite)
{
    const std::string head = R"(endpoints:
  app: { kind: postgres, dsn: "host=127.0.0.1 dbname=app" }
  dw:  { kind: postgres, dsn: "host=127.0.0.1 dbname=dw" }
pipelines:
  - name: p
    source: app
    target: dw
)";
    struct Case {
        std::string body, field, says;
    };
    for (const auto &c : std::vector<Case>{
             {"    include_tables: [\"invoices*\"]\n", "pipelines[p].include_tables[0]", "not a schema.name pattern"},
             {"    include_tables: \"public.*\"\n", "pipelines[p].include_tables", "expected a list"},
             {"    exclude_tables: [\"public.tmp_*\"]\n    tables: [{ table: public.a, strategy: cdc }]\n",
              "pipelines[p].exclude_tables", "narrows include_tables"},
             {"    discover_every: 1m\n    tables: [{ table: public.a, strategy: cdc }]\n",
              "pipelines[p].discover_every", "add include_tables"},
             {"    include_tables: [\"public.*\"]\n    table_defaults: { strategy: often }\n",
              "pipelines[p].table_defaults.strategy", "not a strategy"},
             {"    include_tables: [\"public.*\"]\n    table_defaults: { table: public.x }\n",
              "pipelines[p].table_defaults.table", "unknown key"},
             {"    include_tables: [\"public.*\"]\n    table_defaults: { target_table: same }\n",
              "pipelines[p].table_defaults.target_table", "same target table"},
             {"    include_tables: [\"public.*\"]\n    discover_every: 1s\n", "pipelines[p].discover_every", ""},
             {"", "pipelines[p].tables", "include_tables"},
             {"    direction: both\n    include_tables: [\"public.*\"]\n    tables: [{ table: public.a, strategy: cdc "
              "}]\n",
              "pipelines[p].include_tables", "two-way pipeline"},
         }) {
        auto e = parseError(head + c.body);
        EXPECT_EQ(e.field(), c.field) << c.body << e.what();
        EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.body << e.what();
    }
}

TEST(WorkspaceFile, adoptIsReadOnTablesAndPipelinesAndWrittenBack)
{
    const Workspace ws =
        parse(replace(replace(kReadmeForm, "    target_schema: model", "    adopt: true\n    target_schema: model"),
                      "strategy: full_refresh }", "strategy: full_refresh, adopt: false }"));
    const auto &p = ws.pipelines.at(0);
    EXPECT_EQ(p.adopt, true);
    EXPECT_EQ(p.tables.at(0).adopt, false);
    EXPECT_EQ(p.tables.at(1).adopt, std::nullopt);
    EXPECT_EQ(WorkspaceFile::parse(WorkspaceFile::toYaml(ws), "export.yaml", "/home/dba/sync"), ws);
    const auto e = parseError(replace(kReadmeForm, "strategy: cdc,", "strategy: cdc, adopt: yes,"));
    EXPECT_NE(std::string(e.what()).find("pipelines[app_to_dw].tables[public.orders].adopt"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("true (take the target table that exists"), std::string::npos) << e.what();
    const auto both = parseError("endpoints:\n  a: { kind: postgres, dsn: \"dbname=a\" }\n"
                                 "  b: { kind: postgres, dsn: \"dbname=b\" }\npipelines:\n  - name: ab\n    source: a\n"
                                 "    target: b\n    direction: both\n"
                                 "    tables: [{ table: public.t, strategy: cdc, adopt: true }]\n");
    EXPECT_NE(std::string(both.what()).find("adopt them one way first"), std::string::npos) << both.what();
}

TEST(WorkspaceFile, aDeclaredKeyIsReadPerTableAndWrittenBack)
{
    const Workspace ws = parse(replace(kReadmeForm, "strategy: cdc,", "strategy: cdc, key: [order_id, line_no],"));
    const auto &orders = ws.pipelines.at(0).tables.at(2);
    ASSERT_TRUE(orders.key.has_value());
    EXPECT_EQ(*orders.key, (std::vector<std::string>{"order_id", "line_no"}));
    EXPECT_EQ(ws.pipelines.at(0).tables.at(0).key, std::nullopt);
    EXPECT_EQ(WorkspaceFile::parse(WorkspaceFile::toYaml(ws), "export.yaml", "/home/dba/sync"), ws);
    EXPECT_EQ(
        *parse(replace(kReadmeForm, "strategy: cdc,", "strategy: cdc, key: code,")).pipelines.at(0).tables.at(2).key,
        (std::vector<std::string>{"code"}))
        << "one column may be written bare";
    struct Case {
        std::string key, says;
    };
    for (const auto &c : std::vector<Case>{{"key: [a, a],", "column a is named twice in the key"},
                                           {"key: [],", "expected the key's columns"}}) {
        const auto e = parseError(replace(kReadmeForm, "strategy: cdc,", "strategy: cdc, " + c.key));
        EXPECT_EQ(e.field(), "pipelines[app_to_dw].tables[public.orders].key") << e.what();
        EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
    }
    const auto defaults = parseError("endpoints:\n  a: { kind: postgres, dsn: \"dbname=a\" }\n"
                                     "  b: { kind: postgres, dsn: \"dbname=b\" }\npipelines:\n  - name: p\n"
                                     "    source: a\n    target: b\n    include_tables: [\"public.*\"]\n"
                                     "    table_defaults: { key: [id] }\n");
    EXPECT_EQ(defaults.field(), "pipelines[p].table_defaults.key") << defaults.what();
    EXPECT_NE(std::string(defaults.what()).find("declare it on the table under tables:"), std::string::npos)
        << defaults.what();
}
