// `direction: both` in the workspace file: read, refused where a two-way pipeline cannot run
// (with the file, line and field), written back, and turned into two CDC directions.

#include "core/config/workspacefile.h"
#include "core/engine/sync/tablesync.h"
#include "core/model/conflictpolicy.h"
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

    // A Postgres<->MariaDB pair runs both ways, but MariaDB keeps no commit time per row.
    const std::string mixed = replace(replace(kTwoWay, "lite: { kind: sqlite, path: \"replica.db\" }",
                                              "shop: { kind: mysql, dsn: \"mysql://sync@127.0.0.1/shop\" }"),
                                      "target: west", "target: shop");
    EXPECT_TRUE(parse(mixed).pipelines[0].twoWay);
    e = parseError(replace(mixed, "    direction: both\n",
                           "    direction: both\n    conflicts: { newer_wins: { clock: commit_time } }\n"));
    EXPECT_EQ(e.field(), "pipelines[east_west].tables[public.customers].conflicts");
    EXPECT_NE(std::string(e.what()).find("MariaDB keeps no commit time"), std::string::npos) << e.what();

    // A mapping or a row filter has no inverse on the way back: refused, on the table's own line.
    e = parseError(replace(kTwoWay, "public.orders, strategy: cdc",
                           "public.orders, strategy: cdc, columns: { mask: { note: { null: true } } }"));
    EXPECT_EQ(e.field(), "pipelines[east_west].tables[public.orders].columns");
    EXPECT_EQ(e.line(), 12);
    EXPECT_NE(std::string(e.what()).find("masked value would overwrite the original"), std::string::npos) << e.what();
    e = parseError(replace(kTwoWay, "public.customers, strategy: cdc",
                           "public.customers, strategy: cdc, columns: { rename: { email: mail } }"));
    EXPECT_EQ(e.field(), "pipelines[east_west].tables[public.customers].columns");
    e = parseError(replace(kTwoWay, "public.orders, strategy: cdc", "public.orders, strategy: cdc, where: \"id > 5\""));
    EXPECT_EQ(e.field(), "pipelines[east_west].tables[public.orders].where");
    EXPECT_NE(std::string(e.what()).find("make the pipeline one-way"), std::string::npos) << e.what();
    // The same tables one way are fine.
    EXPECT_FALSE(parse(replace(replace(kTwoWay, "    direction: both\n", ""), "public.orders, strategy: cdc",
                               "public.orders, strategy: cdc, where: \"id > 5\""))
                     .pipelines[0]
                     .twoWay);

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

// `conflicts:` on a two-way table or pipeline: each form is read into one stored policy and
// written back; the pipeline's is the default of its tables; each mistake names line and field.
TEST(TwoWayConfig, conflictPoliciesAreReadDefaultedAndWrittenBack)
{
    std::string yaml = replace(kTwoWay, "    direction: both\n", "    direction: both\n    conflicts: source_wins\n");
    yaml = replace(
        yaml, "{ table: public.orders, strategy: cdc }",
        "{ table: public.orders, strategy: cdc, conflicts: { policy: merge_columns, on_overlap: target_wins } }");
    auto ws = parse(yaml);
    const auto &t = ws.pipelines[0].tables;
    EXPECT_EQ(t[0].conflicts, std::optional<std::string>("source_wins")) << "the pipeline's default";
    EXPECT_EQ(t[1].conflicts, std::optional<std::string>("merge_columns/target_wins"));
    const std::string back = WorkspaceFile::toYaml(ws);
    EXPECT_EQ(parse(back), ws) << back;

    for (const auto &[form, stored] : std::vector<std::pair<std::string, std::string>>{
             {"manual", "manual"},
             {"target_wins", "target_wins"},
             {"merge_columns", "merge_columns/manual"},
             {"{ merge_columns: { on_overlap: source_wins } }", "merge_columns/source_wins"},
             {"{ policy: manual }", "manual"},
             {"{ newer_wins: { column: updated_at } }", "newer_wins;max_skew_ms=5000;column=updated_at"},
             {"{ newer_wins: { clock: commit_time, max_skew: 30s } }",
              "newer_wins;max_skew_ms=30000;clock=commit_time"},
             {"{ newer_wins: { column: \"odd;col/umn\", max_skew: 0s } }",
              "newer_wins;max_skew_ms=0;column=odd;col/umn"},
             {"{ policy: merge_columns, on_overlap: { newer_wins: { column: changed, max_skew: 1500ms } } }",
              "merge_columns/newer_wins;max_skew_ms=1500;column=changed"},
             {"{ merge_columns: { on_overlap: { newer_wins: { clock: commit_time } } } }",
              "merge_columns/newer_wins;max_skew_ms=5000;clock=commit_time"}}) {
        auto w = parse(replace(kTwoWay, "{ table: public.orders, strategy: cdc }",
                               "{ table: public.orders, strategy: cdc, conflicts: " + form + " }"));
        EXPECT_EQ(w.pipelines[0].tables[1].conflicts, std::optional<std::string>(stored)) << form;
        EXPECT_FALSE(w.pipelines[0].tables[0].conflicts.has_value());
        // The stored form reads back as the same policy, and the written YAML as the same file.
        auto policy = ConflictPolicy::parse(stored);
        ASSERT_TRUE(policy.has_value()) << stored;
        EXPECT_EQ(policy->text(), stored);
        const std::string written = WorkspaceFile::toYaml(w);
        EXPECT_EQ(parse(written), w) << written;
    }
    EXPECT_FALSE(ConflictPolicy::parse("newer_wins").has_value()) << "newer_wins without a clock";
    EXPECT_FALSE(ConflictPolicy::parse("manual;max_skew_ms=5;column=x").has_value());
}

TEST(TwoWayConfig, conflictPolicyMistakesAreRefusedWithTheirLine)
{
    auto refused = [](const std::string &form, const std::string &field, const std::string &says) {
        const auto e = parseError(replace(kTwoWay, "{ table: public.orders, strategy: cdc }",
                                          "{ table: public.orders, strategy: cdc, conflicts: " + form + " }"));
        const std::string msg = e.what();
        EXPECT_NE(msg.find("ws.yaml:12"), std::string::npos) << form << ": " << msg;
        EXPECT_NE(msg.find(field), std::string::npos) << form << ": " << msg;
        EXPECT_NE(msg.find(says), std::string::npos) << form << ": " << msg;
    };
    refused("last_write_wins", "tables[public.orders].conflicts", "expected source_wins, target_wins");
    refused("newer_wins", "conflicts", "newer_wins needs a clock");
    refused("{ policy: merge_columns, on_overlap: newer_wins }", "conflicts.on_overlap", "newer_wins needs a clock");
    refused("{ newer_wins: { max_skew: 5s } }", "conflicts.newer_wins", "newer_wins needs a clock");
    refused("{ newer_wins: { clock: wall } }", "conflicts.newer_wins.clock", "expected commit_time");
    refused("{ newer_wins: { column: a, clock: commit_time } }", "conflicts.newer_wins.clock", "not both");
    refused("{ newer_wins: { column: a, max_skew: soon } }", "conflicts.newer_wins.max_skew", "not a duration");
    refused("{ newer_wins: { column: a, skew: 5s } }", "conflicts.newer_wins.skew", "unknown key");
    refused("{ policy: source_wins, on_overlap: manual }", "conflicts.on_overlap", "merge_columns only");
    refused("{ policy: merge_columns, on_overlap: merge_columns }", "conflicts.on_overlap",
            "expected source_wins, target_wins, manual or { newer_wins");
    refused("{ policy: merge_columns, overlap: manual }", "conflicts.overlap", "unknown key");

    // One-way pipelines have no conflicts to resolve.
    std::string oneWay = replace(kTwoWay, "    direction: both\n", "");
    oneWay = replace(oneWay, "{ table: public.orders, strategy: cdc }",
                     "{ table: public.orders, strategy: cdc, conflicts: manual }");
    const std::string msg = parseError(oneWay).what();
    EXPECT_NE(msg.find("ws.yaml:11"), std::string::npos) << msg;
    EXPECT_NE(msg.find("two-way pipelines only"), std::string::npos) << msg;
}

// MariaDB<->MariaDB: accepted; the reverse direction reads the target database's table (a MySQL
// target's tables live in the database its DSN names) and writes the source's.
TEST(TwoWayConfig, twoMariaDbEndpointsMakeTwoDirections)
{
    const char *yaml = R"(endpoints:
  left: { kind: mysql, dsn: "mysql://sync@127.0.0.1/shop_a" }
  right: { kind: mysql, dsn: "mysql://sync@127.0.0.1/shop_b" }
pipelines:
  - name: left_right
    source: left
    target: right
    direction: both
    conflicts: manual
    tables:
      - { table: shop_a.items, strategy: cdc }
)";
    auto ws = parse(yaml);
    ASSERT_TRUE(ws.pipelines[0].twoWay);
    EXPECT_EQ(parse(WorkspaceFile::toYaml(ws)), ws);
    auto jobs = jobsFor(ws);
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[0].spec.table.display(), "shop_a.items");
    EXPECT_EQ(jobs[1].pipeline, "left_right_rev");
    EXPECT_EQ(jobs[1].spec.table.display(), "shop_b.items") << "the reverse direction reads the target's database";
    EXPECT_EQ(jobs[1].targetName.name, "items");
    EXPECT_TRUE(jobs[1].twoWay && jobs[1].twoWay->reverse);

    // MariaDB keeps no commit time per row.
    std::string withClock = yaml;
    withClock.replace(withClock.find("conflicts: manual"), 17, "conflicts: { newer_wins: { clock: commit_time } }");
    const auto e = parseError(withClock);
    EXPECT_NE(std::string(e.what()).find("needs Postgres sides"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ws.yaml:9"), std::string::npos) << e.what();
}
