// export-debezium: a pipeline as the Debezium source connector that captures the same tables,
// checked against golden files written from Debezium's documentation (not from the exporter).

#include "core/config/workspacefile.h"
#include "core/engine/commands/debeziumexport.h"
#include "core/model/error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>

using namespace driftless::core;
using nlohmann::json;

namespace {

Workspace workspace()
{
    return WorkspaceFile::parse(R"(endpoints:
  app: { kind: postgres, dsn: "host=db1.example.org port=5433 dbname=app user=sync sslmode=verify-full",
         slot_guard: { max_retained: 10GB, action: alert } }
  shop: { kind: mysql, dsn: "mysql://sync@db3.example.org:3307/shop" }
  dw: { kind: postgres, dsn: "host=db2 dbname=dw user=sync" }
pipelines:
  - name: app_to_dw
    source: app
    target: dw
    heartbeat: 30s
    reconcile: { every: 24h }
    tables:
      - { table: public.orders, strategy: cdc }
      - { table: public.events, strategy: cursor, target_table: events_copy }
      - { table: '"Sales"."Order Lines"', strategy: cdc }
  - name: shop_to_dw
    source: shop
    target: dw
    tables:
      - { table: shop.orders, strategy: cdc, truncate: ignore }
      - { table: shop.order_items, strategy: cdc, truncate: ignore }
)",
                                "t.yaml", "/");
}

json golden(const std::string &name)
{
    std::ifstream in(std::string(DRIFTLESS_GOLDEN_DIR) + "/" + name);
    EXPECT_TRUE(in) << "no golden file " << name;
    std::stringstream ss;
    ss << in.rdbuf();
    return json::parse(ss.str());
}

/// The property names of Debezium 2.x's PostgreSQL and MySQL connector documentation that an
/// export may use; a key outside them would be ignored by Kafka Connect without a word.
const std::set<std::string> kDocumented = {"connector.class",
                                           "tasks.max",
                                           "database.hostname",
                                           "database.port",
                                           "database.user",
                                           "database.password",
                                           "database.dbname",
                                           "database.sslmode",
                                           "database.sslrootcert",
                                           "topic.prefix",
                                           "plugin.name",
                                           "slot.name",
                                           "publication.name",
                                           "publication.autocreate.mode",
                                           "table.include.list",
                                           "snapshot.mode",
                                           "skipped.operations",
                                           "heartbeat.interval.ms",
                                           "heartbeat.action.query",
                                           "database.server.id",
                                           "database.include.list",
                                           "schema.history.internal.kafka.topic",
                                           "schema.history.internal.kafka.bootstrap.servers"};

void expectDocumented(const json &connector)
{
    ASSERT_TRUE(connector.contains("name"));
    ASSERT_TRUE(connector.contains("config"));
    for (const auto &[key, value] : connector["config"].items()) {
        EXPECT_TRUE(kDocumented.count(key)) << key << " is not a documented Debezium property";
        EXPECT_TRUE(value.is_string()) << key << ": Kafka Connect's REST form takes strings";
    }
}

bool mentions(const std::vector<std::string> &lines, const std::string &needle)
{
    for (const auto &l : lines)
        if (l.find(needle) != std::string::npos)
            return true;
    return false;
}

} // namespace

TEST(DebeziumExport, aPostgresPipelineBecomesThePostgresConnectorOnAPgoutputSlotOfItsOwn)
{
    auto out = exportDebezium(workspace(), "app_to_dw");
    expectDocumented(out.connector);
    EXPECT_EQ(out.connector, golden("debezium-postgres.json")) << out.connector.dump(2);
    // What the connector cannot say is said, each with what to do.
    EXPECT_TRUE(mentions(out.notExpressed, "public.events: synced by cursor"));
    EXPECT_TRUE(mentions(out.notExpressed, "target_table events_copy"));
    EXPECT_TRUE(mentions(out.notExpressed, "slot_guard on app"));
    EXPECT_TRUE(mentions(out.notExpressed, "beside the engine's driftless_app_to_dw"));
    EXPECT_TRUE(mentions(out.notExpressed, "database.password: never exported"));
    EXPECT_TRUE(mentions(out.notExpressed, "reconcile every 86400 s"));
    EXPECT_EQ(out.connector.dump().find("password\":"), std::string::npos) << "no secret leaves the workspace";
}

TEST(DebeziumExport, theConnectorVerifiesTlsOffTheLocalMachineAsTheEngineDoes)
{
    auto ws = workspace();
    ws.endpoints["app"].dsn = "host=db1.example.org dbname=app user=sync sslrootcert=/etc/ssl/db-ca.pem";
    auto out = exportDebezium(ws, "app_to_dw");
    expectDocumented(out.connector);
    EXPECT_EQ(out.connector["config"]["database.sslmode"], "verify-full") << "the DSN chose nothing";
    EXPECT_EQ(out.connector["config"]["database.sslrootcert"], "/etc/ssl/db-ca.pem");
    ws.endpoints["app"].dsn = "host=db1.example.org dbname=app user=sync sslmode=require";
    EXPECT_EQ(exportDebezium(ws, "app_to_dw").connector["config"]["database.sslmode"], "require");
    ws.endpoints["app"].dsn = "host=127.0.0.1 dbname=app user=sync";
    EXPECT_FALSE(exportDebezium(ws, "app_to_dw").connector["config"].contains("database.sslmode"));
}

TEST(DebeziumExport, aMariaDbPipelineBecomesTheMySqlConnectorWithAnotherServerIdThanTheEngines)
{
    DebeziumOptions o;
    o.bootstrapServers = "kafka1:9092";
    auto out = exportDebezium(workspace(), "shop_to_dw", o);
    expectDocumented(out.connector);
    EXPECT_EQ(out.connector, golden("debezium-mysql.json")) << out.connector.dump(2);
    EXPECT_FALSE(mentions(out.notExpressed, "bootstrap.servers"));
    // Without the Kafka cluster the history topic has nowhere to live: said, and left empty.
    auto bare = exportDebezium(workspace(), "shop_to_dw");
    EXPECT_EQ(bare.connector["config"]["schema.history.internal.kafka.bootstrap.servers"], "");
    EXPECT_TRUE(mentions(bare.notExpressed, "--bootstrap-servers"));
}

TEST(DebeziumExport, anUnknownPipelineIsRefusedWithWhereToLook)
{
    try {
        exportDebezium(workspace(), "nope");
        FAIL() << "expected a ConfigError";
    } catch (const Error &e) {
        EXPECT_NE(e.describe().find("no pipeline named 'nope'"), std::string::npos) << e.describe();
    }
}
