// Alerts from table status and slot samples, their open/clear tracking, and the Prometheus text.

#include "core/engine/status/alerts.h"
#include "core/engine/status/metrics.h"

#include <gtest/gtest.h>

using namespace driftless::core;

namespace {

Workspace workspace(SlotGuard::Action action)
{
    Workspace ws;
    Endpoint app{"app", EndpointKind::Postgres, "dbname=app", "", SlotGuard{}, std::nullopt};
    app.slotGuard->maxRetained = 1000;
    app.slotGuard->action = action;
    ws.endpoints["app"] = app;
    ws.endpoints["dw"] = Endpoint{"dw", EndpointKind::Postgres, "dbname=dw", "", std::nullopt, std::nullopt};
    PipelineSpec p;
    p.name = "p1";
    p.source = "app";
    p.target = "dw";
    ws.pipelines.push_back(p);
    return ws;
}

SlotReport slot(const std::string &name, const std::string &owner, std::int64_t retained,
                const std::string &walStatus = "reserved")
{
    SlotReport s;
    s.source = "app";
    s.slot = name;
    s.owner = owner;
    s.retainedBytes = retained;
    s.walStatus = parseWalStatus(walStatus);
    s.active = true;
    return s;
}

const Alert *byKind(const std::vector<Alert> &alerts, const std::string &kind)
{
    for (const auto &a : alerts)
        if (a.kind == kind)
            return &a;
    return nullptr;
}

} // namespace

TEST(Alerts, eachSlotConditionRaisesItsAlertWithWhatToDo)
{
    auto ws = workspace(SlotGuard::Action::Fallback);
    SourceSlots ss{"app", "", "0/100", std::nullopt, {}};
    ss.replicationSlots.push_back(slot("driftless_p1", "p1", 600)); // past warn (500)
    ss.replicationSlots.push_back(slot("other", "", 10, "lost"));   // someone else's, lost
    auto orphan = slot("driftless_gone", "", 50);
    orphan.orphaned = true;
    orphan.active = false;
    ss.replicationSlots.push_back(orphan);
    auto alerts = computeAlerts(ws, {}, {ss}, {}, 10'000);
    const Alert *retained = byKind(alerts, "slot_retained");
    ASSERT_TRUE(retained);
    EXPECT_EQ(retained->level, Level::Warn);
    EXPECT_EQ(retained->pipeline, "p1");
    EXPECT_NE(retained->message.find("warning level"), std::string::npos) << retained->message;
    const Alert *lost = byKind(alerts, "slot_lost");
    ASSERT_TRUE(lost);
    EXPECT_EQ(lost->slot, "other");
    EXPECT_NE(lost->action.find("pg_drop_replication_slot('other')"), std::string::npos);
    const Alert *orph = byKind(alerts, "slot_orphaned");
    ASSERT_TRUE(orph);
    EXPECT_EQ(orph->slot, "driftless_gone");

    ss.replicationSlots[0].retainedBytes = 1500;
    alerts = computeAlerts(ws, {}, {ss}, {}, 10'000);
    ASSERT_TRUE(byKind(alerts, "slot_retained"));
    EXPECT_EQ(byKind(alerts, "slot_retained")->level, Level::Error);
    EXPECT_NE(byKind(alerts, "slot_retained")->message.find("limit"), std::string::npos);

    ss.replicationSlots[0].walStatus = WalStatus::Unreserved;
    alerts = computeAlerts(ws, {}, {ss}, {}, 10'000);
    ASSERT_TRUE(byKind(alerts, "slot_unreserved"));
}

TEST(Alerts, anInactiveSlotAlertsOnlyAfterItsTime)
{
    auto ws = workspace(SlotGuard::Action::Alert);
    ws.endpoints["app"].slotGuard->inactiveAlert = Millis(60'000);
    SourceSlots ss{"app", "", "0/100", std::nullopt, {slot("driftless_p1", "p1", 10)}};
    ss.replicationSlots[0].active = false;
    std::map<std::string, std::int64_t> since{{"app/driftless_p1", 0}};
    EXPECT_FALSE(byKind(computeAlerts(ws, {}, {ss}, since, 59'000), "slot_inactive"));
    auto alerts = computeAlerts(ws, {}, {ss}, since, 61'000);
    ASSERT_TRUE(byKind(alerts, "slot_inactive"));
    EXPECT_NE(byKind(alerts, "slot_inactive")->action.find("p1"), std::string::npos);
}

TEST(Alerts, lagPastTheSlaAndErrorsAreAlerts)
{
    auto ws = workspace(SlotGuard::Action::Alert);
    TableReport late;
    late.pipeline = "p1";
    late.table = "public.orders";
    late.state = TableState::Streaming;
    late.freshness = Freshness::Breach;
    late.lagSeconds = 95;
    late.slaSeconds = 60;
    TableReport broken = late;
    broken.table = "public.events";
    broken.state = TableState::Error;
    broken.message = "permission denied for table events";
    auto alerts = computeAlerts(ws, {late, broken}, {}, {}, 1000);
    ASSERT_TRUE(byKind(alerts, "lag_breach"));
    EXPECT_NE(byKind(alerts, "lag_breach")->message.find("95 s behind"), std::string::npos);
    ASSERT_TRUE(byKind(alerts, "table_error"));
    EXPECT_NE(byKind(alerts, "table_error")->message.find("permission denied"), std::string::npos);
}

TEST(Alerts, theTrackerReportsEachAlertOnceWhenItOpensAndWhenItClears)
{
    AlertTracker t;
    Alert a;
    a.id = "slot_lost:app/s";
    a.kind = "slot_lost";
    auto first = t.update({a}, 1000);
    EXPECT_EQ(first.opened.size(), 1u);
    auto again = t.update({a}, 2000);
    EXPECT_TRUE(again.opened.empty());
    ASSERT_EQ(t.open().size(), 1u);
    EXPECT_EQ(t.open()[0].sinceMs, 1000) << "an open alert keeps when it was first seen";
    auto gone = t.update({}, 3000);
    EXPECT_EQ(gone.cleared.size(), 1u);
    EXPECT_TRUE(t.open().empty());
}

TEST(Metrics, labelValuesAreEscapedAndEveryFamilyHasHelpAndType)
{
    EXPECT_EQ(prometheusEscape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    TableReport t;
    t.pipeline = "p1";
    t.table = "\"Sales\".\"Order Lines\"";
    t.strategy = Strategy::Cdc;
    t.state = TableState::Streaming;
    t.freshness = Freshness::Ok;
    t.lagSeconds = 1.5;
    t.rowsApplied = 42;
    auto text = prometheusText({t}, {}, {});
    EXPECT_NE(text.find("driftless_lag_seconds{pipeline=\"p1\",table=\"\\\"Sales\\\".\\\"Order Lines\\\"\"} 1.5\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("# TYPE driftless_rows_applied_total counter\n"), std::string::npos);
    EXPECT_NE(text.find("} 42\n"), std::string::npos);
}
