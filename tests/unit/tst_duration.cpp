#include "core/model/duration.h"

#include <gtest/gtest.h>

using namespace driftless::core;
using namespace std::chrono_literals;

TEST(Duration, parsesUnitsAndSums)
{
    EXPECT_EQ(parseDuration("500ms"), Millis(500));
    EXPECT_EQ(parseDuration("30s"), Millis(30'000));
    EXPECT_EQ(parseDuration("10m"), Millis(600'000));
    EXPECT_EQ(parseDuration("1h30m"), Millis(5'400'000));
    EXPECT_EQ(parseDuration("2d"), Millis(172'800'000));
    EXPECT_EQ(parseDuration("45"), Millis(45'000)) << "a bare number is seconds";
}

TEST(Duration, rejectsGarbage)
{
    for (const char *bad : {"", "m", "10 minutes", "-5s", "1.5h", "10x", "5s10"})
        EXPECT_FALSE(parseDuration(bad).has_value()) << bad;
}

TEST(Duration, formatsTheShortestExactSpelling)
{
    EXPECT_EQ(formatDuration(Millis(600'000)), "10m");
    EXPECT_EQ(formatDuration(Millis(90'000)), "90s");
    EXPECT_EQ(formatDuration(Millis(1500)), "1500ms");
    EXPECT_EQ(formatDuration(Millis(86'400'000)), "1d");
    for (long long ms : {1LL, 999LL, 1000LL, 61'000LL, 3'600'000LL, 5'400'000LL})
        EXPECT_EQ(parseDuration(formatDuration(Millis(ms))), Millis(ms));
}

TEST(ByteSize, parsesPostgresStyleUnits)
{
    EXPECT_EQ(parseByteSize("10GB"), 10LL << 30);
    EXPECT_EQ(parseByteSize("64kB"), 64LL << 10);
    EXPECT_EQ(parseByteSize("512"), 512);
    EXPECT_FALSE(parseByteSize("ten GB").has_value());
    EXPECT_EQ(formatByteSize(10LL << 30), "10GB");
}

TEST(ByteSize, humanSizesReadLikeAPersonWouldWriteThem)
{
    EXPECT_EQ(humanBytes(512), "512 B");
    EXPECT_EQ(humanBytes(220 * 1024), "220 kB");
    EXPECT_EQ(humanBytes(12056760), "11 MB");
    EXPECT_EQ(humanBytes(3 * 1024 * 1024 + 300 * 1024), "3.3 MB");
    EXPECT_EQ(humanBytes(10LL << 30), "10 GB");
    EXPECT_EQ(humanBytes(-3 * 1024 * 1024), "-3.0 MB");
}
