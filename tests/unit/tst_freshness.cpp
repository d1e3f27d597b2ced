#include "core/config/workspacefile.h"
#include "core/engine/jobs/observer.h"
#include "core/engine/status/freshness.h"
#include "core/engine/status/statusreport.h"
#include "core/model/vocabulary.h"
#include "core/model/workspace.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace driftless::core;

TEST(Freshness, badgeFollowsHalfAndFullSla)
{
    const Millis sla(60'000);
    EXPECT_EQ(freshnessOf(std::nullopt, sla), Freshness::Unknown);
    EXPECT_EQ(freshnessOf(10.0, sla), Freshness::Ok);
    EXPECT_EQ(freshnessOf(30.0, sla), Freshness::Ok);
    EXPECT_EQ(freshnessOf(30.5, sla), Freshness::Warn);
    EXPECT_EQ(freshnessOf(60.0, sla), Freshness::Warn);
    EXPECT_EQ(freshnessOf(61.0, sla), Freshness::Breach);
}

TEST(Freshness, lagIsMeasuredFromTheFreshAsOfTime)
{
    EXPECT_FALSE(lagSeconds(std::nullopt, 1000).has_value());
    EXPECT_DOUBLE_EQ(*lagSeconds(1000, 6000), 5.0);
}

TEST(Freshness, defaultSlaIsSixtySecondsForCdcAndTwiceTheScheduleOtherwise)
{
    TableSpec cdc;
    cdc.strategy = Strategy::Cdc;
    EXPECT_EQ(cdc.effectiveSla(), Millis(60'000));
    TableSpec cursor;
    cursor.strategy = Strategy::Cursor;
    cursor.every = Millis(30'000);
    EXPECT_EQ(cursor.effectiveSla(), Millis(60'000));
    cursor.freshnessSla = Millis(5000);
    EXPECT_EQ(cursor.effectiveSla(), Millis(5000));
}

TEST(Vocabulary, everyWordIsSpelledAsTheStatusEndpointSpellsItAndReadsBack)
{
    // The spellings are part of /sync/status, status --json and the state file.
    const std::pair<TableState, const char *> states[] = {{TableState::Idle, "idle"},
                                                          {TableState::Running, "running"},
                                                          {TableState::Backfilling, "backfilling"},
                                                          {TableState::Streaming, "streaming"},
                                                          {TableState::Ok, "ok"},
                                                          {TableState::Error, "error"},
                                                          {TableState::Retrying, "retrying"},
                                                          {TableState::Paused, "paused"},
                                                          {TableState::SourceChanged, "source_changed"}};
    for (const auto &[s, word] : states) {
        EXPECT_EQ(toString(s), word);
        EXPECT_EQ(tableStateFrom(word), s) << word;
    }
    const std::pair<Freshness, const char *> freshness[] = {{Freshness::Ok, "ok"},
                                                            {Freshness::Warn, "warn"},
                                                            {Freshness::Breach, "breach"},
                                                            {Freshness::Unknown, "unknown"}};
    for (const auto &[f, word] : freshness) {
        EXPECT_EQ(toString(f), word);
        EXPECT_EQ(freshnessFrom(word), f) << word;
    }
    const std::pair<Level, const char *> levels[] = {
        {Level::Info, "info"}, {Level::Warn, "warn"}, {Level::Error, "error"}};
    for (const auto &[l, word] : levels) {
        EXPECT_EQ(toString(l), word);
        EXPECT_EQ(levelFrom(word), l) << word;
    }
    EXPECT_FALSE(tableStateFrom("Streaming"));
    EXPECT_FALSE(freshnessFrom(""));
    EXPECT_FALSE(levelFrom("warning"));
    EXPECT_TRUE(isFailing(TableState::Retrying));
    EXPECT_FALSE(isFailing(TableState::Paused));
    EXPECT_TRUE(isStopped(TableState::SourceChanged));
    EXPECT_TRUE(isFailing(TableState::SourceChanged));
    EXPECT_FALSE(isStopped(TableState::Retrying));
}

namespace {

Workspace cdcWorkspace()
{
    return WorkspaceFile::parse(R"(endpoints:
  app: { kind: postgres, dsn: "host=db1 dbname=app user=sync" }
  dw: { kind: postgres, dsn: "host=db2 dbname=dw user=sync" }
pipelines:
  - name: p1
    source: app
    target: dw
    tables:
      - { table: public.orders, strategy: cdc }
      - { table: public.events, strategy: cursor }
)",
                                "t.yaml", "/");
}

TableStatus status(const std::string &table, Strategy strategy, TableState state, const std::string &message,
                   const std::string &checkpoint = {})
{
    TableStatus s;
    s.pipeline = "p1";
    s.table = TableRef::parse(table);
    s.strategy = strategy;
    s.state = state;
    s.message = message;
    s.checkpoint = checkpoint;
    return s;
}

const TableReport &reportOf(const std::vector<TableReport> &reports, const std::string &table)
{
    for (const auto &r : reports)
        if (r.table == table)
            return r;
    throw std::runtime_error("no report for " + table);
}

} // namespace

TEST(Vocabulary, aRebackfillIsToldFromAnInitialLoadByTheEngineNotByTheFace)
{
    const auto ws = cdcWorkspace();
    auto flag = [&](TableStatus orders, TableStatus events = status("public.events", Strategy::Cursor,
                                                                    TableState::Backfilling, kRebackfillMessage)) {
        const auto reports = buildStatus(ws, {orders, events}, 1'700'000'000'000);
        EXPECT_FALSE(reportOf(reports, "public.events").rebackfill) << "only a CDC table re-backfills";
        return reportOf(reports, "public.orders").rebackfill;
    };
    EXPECT_FALSE(flag(status("public.orders", Strategy::Cdc, TableState::Backfilling, "initial load")));
    EXPECT_FALSE(flag(
        status("public.orders", Strategy::Cdc, TableState::Backfilling, "initial load (merging into existing rows)")));
    EXPECT_TRUE(flag(status("public.orders", Strategy::Cdc, TableState::Backfilling, kRebackfillMessage)));
    EXPECT_FALSE(flag(status("public.orders", Strategy::Cdc, TableState::Streaming, "")));
    // Interrupted (the engine stopped): the position still carries the copy to resume.
    EXPECT_TRUE(flag(status("public.orders", Strategy::Cdc, TableState::Idle, "stopped",
                            R"({"phase":"stream","lsn":"0/1","rebackfill":{"rows":100}})")));
    EXPECT_FALSE(flag(status("public.orders", Strategy::Cdc, TableState::Idle, "stopped",
                             R"({"phase":"stream","lsn":"0/1","note":"rebackfill"})")));
    // A position written under another strategy says nothing about this one.
    EXPECT_FALSE(
        flag(status("public.orders", Strategy::Cursor, TableState::Idle, "stopped", R"({"rebackfill":{"rows":100}})")));

    // The faces read the flag and the words as the endpoint spells them.
    auto reports = buildStatus(
        ws, {status("public.orders", Strategy::Cdc, TableState::Backfilling, kRebackfillMessage)}, 1'700'000'000'000);
    auto json = nlohmann::json::parse(statusJson(reports, 1'700'000'000'000));
    const auto &orders = json["tables"][0];
    EXPECT_EQ(orders["table"], "public.orders");
    EXPECT_EQ(orders["state"], "backfilling");
    EXPECT_EQ(orders["strategy"], "cdc");
    EXPECT_EQ(orders["freshness"], "unknown");
    EXPECT_EQ(orders["rebackfill"], true);
    EXPECT_EQ(json["tables"][1]["state"], "idle");
    EXPECT_EQ(json["tables"][1]["rebackfill"], false);
}

TEST(Vocabulary, aTableStoppedByAChangeOfSourceHasItsOwnStateAndSaysWhichSourceItFollows)
{
    const auto ws = cdcWorkspace();
    constexpr std::int64_t now = 1'700'000'000'000;
    // Stopped with the mark in its checkpoint: `source_changed`, even where the state mirrored
    // says plain `error` (the mark is what the engine keeps across restarts).
    const std::string marked = R"({"phase":"stream","lsn":"0/3000158","system_id":"7301234567890123456",)"
                               R"("timeline":2,"stopped":"stopped: the source changed","stop_kind":"source_changed"})";
    auto reports = buildStatus(ws, {status("public.orders", Strategy::Cdc, TableState::Error, "stopped", marked)}, now);
    const auto &orders = reportOf(reports, "public.orders");
    EXPECT_EQ(orders.state, TableState::SourceChanged);
    ASSERT_TRUE(orders.sourceIdentity);
    EXPECT_EQ(orders.sourceIdentity->systemId, "7301234567890123456");
    EXPECT_EQ(orders.sourceIdentity->timeline, 2);
    EXPECT_FALSE(reportOf(reports, "public.events").sourceIdentity) << "a cursor table has no CDC source identity";

    auto json = nlohmann::json::parse(statusJson(reports, now));
    const auto &t = json["tables"][0];
    EXPECT_EQ(t["state"], "source_changed");
    EXPECT_EQ(t["source_identity"], (nlohmann::json{{"system_id", "7301234567890123456"}, {"timeline", 2}}));
    EXPECT_TRUE(json["tables"][1]["source_identity"].is_null());
    // Every key there was is still there.
    for (const char *k : {"pipeline", "table", "state", "message", "checkpoint", "last_synced_lsn", "rebackfill",
                          "paused", "backfill", "reconcile"})
        EXPECT_TRUE(t.contains(k)) << k;

    // The state and the identity read back as a client of the agent API reads them.
    const auto back = tablesFromJson(json["tables"]);
    EXPECT_EQ(back[0].state, TableState::SourceChanged);
    EXPECT_EQ(back[0].sourceIdentity, orders.sourceIdentity);
    EXPECT_FALSE(back[1].sourceIdentity);

    // A stop without the mark (any other error, or one an older version wrote) stays `error`;
    // a state the engine mirrored as `source_changed` says so without a mark (a stop of the
    // whole pipeline, before anything was read).
    const std::string plain = R"({"phase":"stream","lsn":"0/1","system_id":"7301","stopped":"stopped: x"})";
    EXPECT_EQ(reportOf(buildStatus(ws, {status("public.orders", Strategy::Cdc, TableState::Error, "x", plain)}, now),
                       "public.orders")
                  .state,
              TableState::Error);
    EXPECT_EQ(reportOf(buildStatus(ws,
                                   {status("public.orders", Strategy::Cdc, TableState::SourceChanged,
                                           "the source changed", R"({"phase":"stream","lsn":"0/1"})")},
                                   now),
                       "public.orders")
                  .state,
              TableState::SourceChanged);

    // MariaDB: the server id and the GTID state; what is not recorded is null.
    const std::string binlog = R"({"phase":"stream","file":"binlog.000002","pos":4,"gtid":"0-1-405","server_id":1})";
    json = nlohmann::json::parse(statusJson(
        buildStatus(ws, {status("public.orders", Strategy::Cdc, TableState::Streaming, "", binlog)}, now), now));
    EXPECT_EQ(json["tables"][0]["source_identity"], (nlohmann::json{{"server_id", 1}, {"gtid", "0-1-405"}}));
    json = nlohmann::json::parse(statusJson(buildStatus(ws,
                                                        {status("public.orders", Strategy::Cdc, TableState::Streaming,
                                                                "", R"({"phase":"stream","lsn":"0/1"})")},
                                                        now),
                                            now));
    EXPECT_EQ(json["tables"][0]["source_identity"], (nlohmann::json{{"system_id", nullptr}, {"timeline", nullptr}}));
    EXPECT_EQ(tablesFromJson(json["tables"])[0].sourceIdentity->postgres, true);

    // A recovery after a change of source is a copy under the stream, with its progress, that
    // says what it is.
    TableStatus recovering = status("public.orders", Strategy::Cdc, TableState::Backfilling, kRecoveryMessage,
                                    R"({"phase":"stream","lsn":"0/1"})");
    recovering.backfillRows = 400;
    recovering.backfillTotal = 1000;
    const auto recoveringReports = buildStatus(ws, {recovering}, now);
    const auto &r = reportOf(recoveringReports, "public.orders");
    EXPECT_EQ(r.state, TableState::Backfilling);
    EXPECT_TRUE(r.rebackfill);
    EXPECT_EQ(r.message, "recovering after a source change");
    ASSERT_TRUE(r.backfill);
    EXPECT_EQ(r.backfill->percent, 40.0);
    // So is an adopted table's first comparison (docs/adopt.md).
    TableStatus adopting = recovering;
    adopting.message = kAdoptMessage;
    const auto adoptingReports = buildStatus(ws, {adopting}, now);
    EXPECT_TRUE(reportOf(adoptingReports, "public.orders").rebackfill);
    EXPECT_EQ(reportOf(adoptingReports, "public.orders").message, kAdoptMessage);
}
