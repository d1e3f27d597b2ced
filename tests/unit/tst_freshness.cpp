#include "core/engine/freshness.h"
#include "core/model/workspace.h"

#include <gtest/gtest.h>

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
