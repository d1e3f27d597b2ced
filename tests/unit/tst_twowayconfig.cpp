// `direction: both` in the workspace file: read, refused where a two-way pipeline cannot run
// (with the file, line and field), written back, and turned into two CDC directions.

#include "core/config/workspacefile.h"
#include "core/engine/tablesync.h"
#include "core/model/error.h"

#include <gtest/gtest.h>

using namespace driftless::core;

namespace {

const char *kTwoWay = R"(endpoints:
  east: { kind: postgres, dsn: "host=127.0.0.1 dbname=east" }
  west: { kind: postgres, dsn: "host=127.0.0.1 dbname=west" }
  lite: { kind: sqlite, path: "replica.db" }
pipelines:
  - name: east_west
    source: east
    target: west
    direction: both
    tables:
      - { table: public.customers, strategy: cdc }
      - { table: public.orders, strategy: cdc }
)";

Workspace parse(const std::string &yaml) { return WorkspaceFile::parse(yaml, "ws.yaml", "/home/dba/sync"); }

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
    auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
}

} // namespace

TEST(TwoWayConfig, directionBothIsReadAndWrittenBack)
{
    auto ws = parse(kTwoWay);
    ASSERT_EQ(ws.pipelines.size(), 1u);
    EXPECT_TRUE(ws.pipelines[0].twoWay);
    const std::string yaml = WorkspaceFile::toYaml(ws);
    EXPECT_NE(yaml.find("direction: both"), std::string::npos) << yaml;
    EXPECT_EQ(parse(yaml), ws);
}

TEST(TwoWayConfig, oneWayIsTheDefaultAndStaysAsItWas)
{
    auto absent = parse(replace(kTwoWay, "    direction: both\n", ""));
    auto oneWay = parse(replace(kTwoWay, "direction: both", "direction: one_way"));
    EXPECT_FALSE(absent.pipelines[0].twoWay);
    EXPECT_EQ(absent, oneWay);
    EXPECT_EQ(WorkspaceFile::toYaml(absent).find("direction"), std::string::npos);
    EXPECT_EQ(jobsFor(absent).size(), 2u);
}

TEST(TwoWayConfig, refusalsNameTheFieldAndLine)
{
    auto e = parseError(replace(kTwoWay, "direction: both", "direction: sideways"));
    EXPECT_EQ(e.field(), "pipelines[east_west].direction");
    EXPECT_EQ(e.line(), 9);
    EXPECT_NE(std::string(e.what()).find("one of one_way"), std::string::npos) << e.what();

    e = parseError(replace(kTwoWay, "public.orders, strategy: cdc", "public.orders, strategy: full_refresh"));
    EXPECT_EQ(e.field(), "pipelines[east_west].tables[public.orders].strategy");
    EXPECT_EQ(e.line(), 12);
    EXPECT_NE(std::string(e.what()).find("must be cdc"), std::string::npos) << e.what();

    e = parseError(replace(kTwoWay, "target: west", "target: lite"));
    EXPECT_EQ(e.field(), "pipelines[east_west].direction");
    EXPECT_NE(std::string(e.what()).find("Postgres or MariaDB/MySQL"), std::string::npos) << e.what();

    e = parseError(replace(replace(kTwoWay, "lite: { kind: sqlite, path: \"replica.db\" }",
                                   "shop: { kind: mysql, dsn: \"mysql://sync@127.0.0.1/shop\" }"),
                           "target: west", "target: shop"));
    EXPECT_EQ(e.field(), "pipelines[east_west].direction");
    EXPECT_NE(std::string(e.what()).find("two Postgres endpoints"), std::string::npos) << e.what();

    // The reverse direction's name is taken by another pipeline.
    e = parseError(std::string(kTwoWay) + "  - { name: east_west_rev, source: west, target: east, tables: [ { table: "
                                          "public.x, strategy: cdc } ] }\n");
    EXPECT_EQ(e.field(), "pipelines[east_west].name");
    EXPECT_NE(std::string(e.what()).find("reverse direction"), std::string::npos) << e.what();

    // Slot names are at most 63 characters, the reverse one included.
    e = parseError(replace(kTwoWay, "name: east_west", "name: " + std::string(50, 'e')));
    EXPECT_EQ(e.field(), "pipelines[" + std::string(50, 'e') + "].name");
}

TEST(TwoWayConfig, aTwoWayPipelineRunsAsTwoDirectionsThatNeverCollide)
{
    auto ws = parse(kTwoWay);
    auto jobs = jobsFor(ws);
    ASSERT_EQ(jobs.size(), 4u);
    for (size_t i = 0; i < 2; ++i) {
        const auto &fwd = jobs[i];
        const auto &rev = jobs[i + 2];
        ASSERT_TRUE(fwd.twoWay && rev.twoWay);
        EXPECT_EQ(fwd.pipeline, "east_west");
        EXPECT_EQ(rev.pipeline, "east_west_rev"); // its slot, publication, checkpoints and state
        EXPECT_EQ(fwd.source.name, "east");
        EXPECT_EQ(rev.source.name, "west");
        EXPECT_EQ(rev.target.name, "east");
        EXPECT_EQ(rev.spec.table.display(), fwd.targetName.schema + "." + fwd.targetName.name);
        EXPECT_EQ(rev.targetName.name, fwd.spec.table.name);
        EXPECT_FALSE(fwd.twoWay->reverse);
        EXPECT_TRUE(rev.twoWay->reverse);
        // Each reader drops what the other direction's merger applied.
        EXPECT_EQ(fwd.twoWay->applyOrigin, rev.twoWay->skipOrigin);
        EXPECT_EQ(rev.twoWay->applyOrigin, fwd.twoWay->skipOrigin);
        EXPECT_NE(fwd.twoWay->applyOrigin, rev.twoWay->applyOrigin);
        EXPECT_EQ(fwd.twoWay->reverseSlot, "driftless_east_west_rev");
    }
}
