// The time until a slot reaches its limit, projected from hand-made sample series: the rate is
// the least-squares slope over the recent window, the earliest limit wins, a limit already
// reached is 0, and nothing growing, no limit or too little history is null; seconds_to_limit
// in the slots document (and read back) and the gauge in /metrics.

#include "core/engine/slots/slotprojection.h"
#include "core/engine/slots/slots.h"
#include "core/engine/status/metrics.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>

using namespace driftless::core;

namespace {

constexpr std::int64_t kT0 = 1'700'000'000'000;
constexpr std::int64_t kMB = 1024 * 1024;

/// Samples every `everyMs` from kT0, retained = start + rate * t (bytes/s), plus `noise(i)`.
std::vector<SlotSample> series(int count, std::int64_t everyMs, double start, double ratePerSecond,
                               std::function<double(int)> noise = {}, std::optional<double> safeStart = std::nullopt)
{
    std::vector<SlotSample> out;
    for (int i = 0; i < count; ++i) {
        const std::int64_t ts = kT0 + i * everyMs;
        const double t = static_cast<double>(i * everyMs) / 1000.0;
        const double grown = ratePerSecond * t + (noise ? noise(i) : 0.0);
        SlotSample s;
        s.source = "app";
        s.slot = "driftless_p";
        s.tsMs = ts;
        s.retainedBytes = static_cast<std::int64_t>(start + grown);
        if (safeStart)
            s.safeWalSize = static_cast<std::int64_t>(*safeStart - grown);
        out.push_back(s);
    }
    return out;
}

SlotLimits maxRetained(std::int64_t bytes)
{
    SlotLimits l;
    l.maxRetained = bytes;
    return l;
}

} // namespace

TEST(SlotProjection, steadyGrowthReachesTheGuardLimitAtThatRate)
{
    // 1 MB/s from 100 MB, every 15 s for 15 minutes; the guard acts at 10 GB.
    auto s = series(61, 15'000, 100.0 * kMB, 1.0 * kMB);
    const std::int64_t now = s.back().tsMs;
    const double left = static_cast<double>(10'240 * kMB - *s.back().retainedBytes) / kMB;
    auto got = secondsToLimit(s, maxRetained(10'240 * kMB), now);
    ASSERT_TRUE(got);
    EXPECT_NEAR(*got, left, 1.0);
}

TEST(SlotProjection, timeSinceTheLastReadingIsAlreadySpent)
{
    auto s = series(10, 15'000, 0, 1000);
    const std::int64_t limit = *s.back().retainedBytes + 100'000; // 100 s away at 1000 B/s
    auto atReading = secondsToLimit(s, maxRetained(limit), s.back().tsMs);
    auto later = secondsToLimit(s, maxRetained(limit), s.back().tsMs + 40'000);
    ASSERT_TRUE(atReading && later);
    EXPECT_NEAR(*atReading, 100, 0.5);
    EXPECT_NEAR(*later, 60, 0.5);
    EXPECT_EQ(secondsToLimit(s, maxRetained(limit), s.back().tsMs + 500'000), 0.0) << "overdue: 0, not negative";
}

TEST(SlotProjection, nothingGrowingHasNoTimeToTheLimit)
{
    EXPECT_FALSE(secondsToLimit(series(20, 15'000, 50.0 * kMB, 0), maxRetained(kMB * 1024), kT0 + 300'000));
    EXPECT_FALSE(secondsToLimit(series(20, 15'000, 50.0 * kMB, -10'000), maxRetained(kMB * 1024), kT0 + 300'000))
        << "a consumer catching up";
}

TEST(SlotProjection, noLimitMeansNoProjection)
{
    auto s = series(20, 15'000, 0, 1.0 * kMB);
    EXPECT_FALSE(secondsToLimit(s, SlotLimits{}, s.back().tsMs)) << "no guard, no server limit";
}

TEST(SlotProjection, noisyGrowthIsFittedNotTakenFromTheLastTwoSamples)
{
    // 500 kB/s with a checkpoint-like sawtooth of +-20 MB: two neighbouring samples can say
    // anything, the fit says 500 kB/s.
    auto s = series(61, 15'000, 200.0 * kMB, 500'000, [](int i) { return (i % 2 ? 20.0 : -20.0) * kMB; });
    const std::int64_t limit = 2048 * kMB;
    auto got = secondsToLimit(s, maxRetained(limit), s.back().tsMs);
    ASSERT_TRUE(got);
    const double expected = static_cast<double>(limit - *s.back().retainedBytes) / 500'000.0;
    EXPECT_NEAR(*got, expected, expected * 0.1);
}

TEST(SlotProjection, tooFewSamplesOrTooShortASpanGiveNoRate)
{
    EXPECT_FALSE(secondsToLimit(series(2, 15'000, 0, kMB), maxRetained(kMB * 1024), kT0 + 15'000)) << "two samples";
    EXPECT_FALSE(secondsToLimit(series(10, 1000, 0, kMB), maxRetained(kMB * 1024), kT0 + 9000)) << "9 s of history";
    EXPECT_TRUE(secondsToLimit(series(3, 15'000, 0, kMB), maxRetained(kMB * 1024), kT0 + 30'000)) << "3 over 30 s";
    EXPECT_FALSE(secondsToLimit({}, maxRetained(kMB), kT0));
}

TEST(SlotProjection, onlyTheRecentWindowCounts)
{
    // Fast growth an hour ago, then flat for the last 20 minutes: nothing grows now.
    auto old = series(40, 15'000, 0, kMB);
    std::vector<SlotSample> s = old;
    const std::int64_t flatFrom = kT0 + 3'600'000;
    for (int i = 0; i < 80; ++i) {
        SlotSample x = old.back();
        x.tsMs = flatFrom + i * 15'000;
        s.push_back(x);
    }
    EXPECT_FALSE(secondsToLimit(s, maxRetained(kMB * 10'240), s.back().tsMs));
}

TEST(SlotProjection, aLimitAlreadyReachedIsZero)
{
    auto s = series(1, 15'000, 2048.0 * kMB, 0); // one reading is enough: no rate needed
    EXPECT_EQ(secondsToLimit(s, maxRetained(1024 * kMB), s.back().tsMs), 0.0);
    SlotLimits l;
    l.minSafeWal = 64 * kMB;
    s.back().safeWalSize = 10 * kMB;
    EXPECT_EQ(secondsToLimit(s, l, s.back().tsMs), 0.0) << "safe_wal_size below min_safe_wal";
    s.back().safeWalSize = -5;
    EXPECT_EQ(secondsToLimit(s, SlotLimits{}, s.back().tsMs), 0.0) << "invalidated at the next checkpoint";
}

TEST(SlotProjection, theServerLimitCountsWithoutAGuardAndTheEarliestLimitWins)
{
    // safe_wal_size falls at the rate retained grows: 1 GB of room left, 1 MB/s.
    auto s = series(21, 15'000, 0, 1.0 * kMB, {}, 1024.0 * kMB + 300.0 * kMB);
    const std::int64_t now = s.back().tsMs;
    const double room = static_cast<double>(*s.back().safeWalSize) / kMB;
    auto serverOnly = secondsToLimit(s, SlotLimits{}, now);
    ASSERT_TRUE(serverOnly);
    EXPECT_NEAR(*serverOnly, room, 1.0);

    SlotLimits withMinSafe;
    withMinSafe.minSafeWal = 100 * kMB; // the guard acts 100 s earlier
    auto guarded = secondsToLimit(s, withMinSafe, now);
    ASSERT_TRUE(guarded);
    EXPECT_NEAR(*guarded, room - 100, 1.0);

    SlotLimits tight = withMinSafe;
    tight.maxRetained = *s.back().retainedBytes + 50 * kMB; // 50 s away: sooner still
    auto earliest = secondsToLimit(s, tight, now);
    ASSERT_TRUE(earliest);
    EXPECT_NEAR(*earliest, 50, 1.0);
}

TEST(SlotProjection, theGuardSetsTheLimits)
{
    Workspace ws;
    Endpoint app{"app", EndpointKind::Postgres, "dbname=app", "", SlotGuard{}, std::nullopt};
    app.slotGuard->maxRetained = 5 * kMB;
    app.slotGuard->minSafeWal = kMB;
    ws.endpoints["app"] = app;
    ws.endpoints["plain"] = Endpoint{"plain", EndpointKind::Postgres, "dbname=plain", "", std::nullopt, std::nullopt};
    auto l = slotLimitsFor(ws, "app");
    EXPECT_EQ(l.maxRetained, 5 * kMB);
    EXPECT_EQ(l.minSafeWal, kMB);
    auto none = slotLimitsFor(ws, "plain");
    EXPECT_FALSE(none.maxRetained);
    EXPECT_EQ(none.minSafeWal, 0);
    EXPECT_FALSE(slotLimitsFor(ws, "missing").maxRetained);
}

TEST(SlotProjection, aDbaReadsTheTimeLeftInTwoUnits)
{
    EXPECT_EQ(humanTimeLeft(3 * 3600 + 10 * 60 + 12), "3 h 10 min");
    EXPECT_EQ(humanTimeLeft(3 * 3600 + 5), "3 h");
    EXPECT_EQ(humanTimeLeft(45 * 60 + 30), "45 min");
    EXPECT_EQ(humanTimeLeft(40.7), "40 s");
    EXPECT_EQ(humanTimeLeft(2 * 86'400 + 5 * 3600 + 59), "2 d 5 h");
    EXPECT_EQ(humanTimeLeft(-3), "0 s");
}

TEST(SlotProjection, secondsToLimitTravelsInTheSlotsDocumentAndBack)
{
    SourceSlots ss;
    ss.source = "app";
    SlotReport a;
    a.source = "app";
    a.slot = "driftless_p";
    a.secondsToLimit = 11'400.4;
    SlotReport b = a;
    b.slot = "flat";
    b.secondsToLimit.reset();
    ss.replicationSlots = {a, b};
    auto j = slotsJsonValue({ss});
    ASSERT_TRUE(j["slots"][0]["seconds_to_limit"].is_number()) << j.dump();
    EXPECT_EQ(j["slots"][0]["seconds_to_limit"], 11'400);
    EXPECT_TRUE(j["slots"][1].contains("seconds_to_limit"));
    EXPECT_TRUE(j["slots"][1]["seconds_to_limit"].is_null());
    auto back = sourcesFromJson(j);
    ASSERT_EQ(back.size(), 1u);
    ASSERT_EQ(back[0].replicationSlots.size(), 2u);
    EXPECT_EQ(back[0].replicationSlots[0].secondsToLimit, 11'400.0);
    EXPECT_FALSE(back[0].replicationSlots[1].secondsToLimit);
}

TEST(SlotProjection, theGaugeIsOmittedWhenThereIsNoProjection)
{
    SourceSlots ss;
    ss.source = "app";
    SlotReport a;
    a.source = "app";
    a.slot = "driftless_p";
    a.secondsToLimit = 3600;
    SlotReport b = a;
    b.slot = "flat";
    b.secondsToLimit.reset();
    ss.replicationSlots = {a, b};
    const auto text = prometheusText({}, {ss}, {});
    EXPECT_NE(text.find("# TYPE driftless_slot_seconds_to_limit gauge\n"), std::string::npos) << text;
    EXPECT_NE(text.find("driftless_slot_seconds_to_limit{source=\"app\",slot=\"driftless_p\"} 3600\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("driftless_slot_seconds_to_limit{source=\"app\",slot=\"flat\"}"), std::string::npos) << text;
}
