// A binlog pipeline's retention: bytes behind, the needed file's expiry horizon and the seconds
// left, the alert threshold and the retention to suggest, the alerts, and the JSON both ways.

#include "core/engine/slots/binlogretention.h"
#include "core/engine/slots/slots.h"
#include "core/engine/status/alerts.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

using namespace driftless::core;

namespace {

const std::vector<BinlogFile> kFiles = {
    {"mysql-bin.000010", 1000}, {"mysql-bin.000011", 2000}, {"mysql-bin.000012", 3000}, {"mysql-bin.000013", 400}};

constexpr std::int64_t kNow = 1'800'000'000'000; // ms

BinlogRetention needing(const std::string &file, std::uint64_t offset, std::int64_t retention,
                        std::optional<std::int64_t> closedMs)
{
    BinlogRetention r;
    r.source = "shop";
    r.pipeline = "orders";
    r.neededFile = file;
    r.neededOffset = offset;
    r.retentionSeconds = retention;
    r.neededClosedMs = closedMs;
    return r;
}

long long retentionIn(const std::string &sql)
{
    const std::string prefix = "SET GLOBAL binlog_expire_logs_seconds = ";
    EXPECT_EQ(sql.rfind(prefix, 0), 0u) << sql;
    EXPECT_EQ(sql.back(), ';') << sql;
    return std::stoll(sql.substr(prefix.size()));
}

} // namespace

TEST(BinlogRetention, theHorizonIsTheNextFilesStartPlusTheRetention)
{
    // mysql-bin.000011 was closed (000012 started) 100 s ago; binlogs are kept 300 s.
    auto r = needing("mysql-bin.000011", 500, 300, kNow - 100'000);
    projectBinlog(r, kFiles, kNow);
    EXPECT_EQ(r.oldestFile, "mysql-bin.000010");
    EXPECT_EQ(r.newestFile, "mysql-bin.000013");
    EXPECT_FALSE(r.neededPurged);
    ASSERT_TRUE(r.bytesBehind);
    EXPECT_EQ(*r.bytesBehind, (2000 - 500) + 3000 + 400);
    ASSERT_TRUE(r.expiresAtMs);
    EXPECT_EQ(*r.expiresAtMs, kNow + 200'000);
    ASSERT_TRUE(r.secondsToExpiry);
    EXPECT_DOUBLE_EQ(*r.secondsToExpiry, 200.0);

    // Later, the time left shrinks by as much; past the horizon it stays at 0 until the purge.
    auto later = needing("mysql-bin.000011", 500, 300, kNow - 100'000);
    projectBinlog(later, kFiles, kNow + 150'000);
    EXPECT_DOUBLE_EQ(*later.secondsToExpiry, 50.0);
    auto past = needing("mysql-bin.000011", 500, 300, kNow - 100'000);
    projectBinlog(past, kFiles, kNow + 900'000);
    EXPECT_DOUBLE_EQ(*past.secondsToExpiry, 0.0);
    EXPECT_FALSE(past.neededPurged);
}

TEST(BinlogRetention, theFileInUseExpiresNoEarlierThanOneRetentionFromNow)
{
    auto r = needing("mysql-bin.000013", 100, 3600, std::nullopt);
    projectBinlog(r, kFiles, kNow);
    EXPECT_EQ(*r.bytesBehind, 300);
    EXPECT_DOUBLE_EQ(*r.secondsToExpiry, 3600.0);
    EXPECT_FALSE(r.expiresAtMs);
}

TEST(BinlogRetention, nothingExpiresWithoutARetentionAndAnUnknownCloseIsNotGuessed)
{
    auto never = needing("mysql-bin.000011", 0, 0, kNow - 100'000);
    projectBinlog(never, kFiles, kNow);
    EXPECT_EQ(*never.bytesBehind, 2000 + 3000 + 400);
    EXPECT_FALSE(never.secondsToExpiry);
    EXPECT_FALSE(never.expiresAtMs);

    auto unknown = needing("mysql-bin.000011", 0, 300, std::nullopt);
    projectBinlog(unknown, kFiles, kNow);
    EXPECT_FALSE(unknown.secondsToExpiry);

    BinlogRetention none; // no checkpoint yet
    none.retentionSeconds = 300;
    projectBinlog(none, kFiles, kNow);
    EXPECT_EQ(none.oldestFile, "mysql-bin.000010");
    EXPECT_FALSE(none.bytesBehind);
    EXPECT_FALSE(none.secondsToExpiry);
}

TEST(BinlogRetention, aNeededFileTheServerNoLongerListsIsPurged)
{
    auto r = needing("mysql-bin.000008", 4, 300, std::nullopt);
    projectBinlog(r, kFiles, kNow);
    EXPECT_TRUE(r.neededPurged);
    EXPECT_FALSE(r.bytesBehind);
    EXPECT_DOUBLE_EQ(*r.secondsToExpiry, 0.0);
    EXPECT_EQ(nextBinlogFile(kFiles, "mysql-bin.000011"), "mysql-bin.000012");
    EXPECT_EQ(nextBinlogFile(kFiles, "mysql-bin.000013"), "");
    EXPECT_EQ(nextBinlogFile(kFiles, "mysql-bin.000008"), "");
}

TEST(BinlogRetention, theWarningLevelIsTheLesserOfSixHoursAndHalfTheRetention)
{
    EXPECT_DOUBLE_EQ(binlogExpiryWarnSeconds(120), 60.0);
    EXPECT_DOUBLE_EQ(binlogExpiryWarnSeconds(7 * 86400), 6.0 * 3600);
}

TEST(BinlogRetention, theSuggestedRetentionCoversTheGapInWholeHours)
{
    // Closed 5 days ago with a 7-day retention: 5 days + 7 days.
    auto week = needing("mysql-bin.000011", 0, 7 * 86400, kNow - 5LL * 86400'000);
    EXPECT_EQ(retentionIn(binlogRetentionFix(week, kNow)), 12LL * 86400);
    // A short retention: at least three days beyond the file's age.
    auto shortOne = needing("mysql-bin.000011", 0, 120, kNow - 100'500);
    const long long n = retentionIn(binlogRetentionFix(shortOne, kNow));
    EXPECT_GE(n, 3LL * 86400 + 101);
    EXPECT_EQ(n % 3600, 0);
}

TEST(BinlogRetention, anAlertWithTheSetGlobalFiresBeforeTheFileExpiresAndAnErrorOnceItIsGone)
{
    Workspace ws;
    auto close = needing("mysql-bin.000011", 0, 120, kNow - 70'000); // 50 s left, below 60
    projectBinlog(close, kFiles, kNow);
    auto far = needing("mysql-bin.000011", 0, 120, kNow - 30'000); // 90 s left
    projectBinlog(far, kFiles, kNow);
    far.pipeline = "other";
    auto gone = needing("mysql-bin.000008", 4, 120, std::nullopt);
    projectBinlog(gone, kFiles, kNow);
    gone.pipeline = "third";
    SourceSlots ss;
    ss.source = "shop";
    ss.binlog = true;
    ss.binlogs = {close, far, gone};
    auto alerts = computeAlerts(ws, {}, {ss}, {}, kNow);
    ASSERT_EQ(alerts.size(), 2u);
    const Alert &warn = alerts[0];
    EXPECT_EQ(warn.kind, "binlog_expiry");
    EXPECT_EQ(warn.level, Level::Warn);
    EXPECT_EQ(warn.pipeline, "orders");
    EXPECT_NE(warn.message.find("mysql-bin.000011"), std::string::npos) << warn.message;
    EXPECT_NE(warn.message.find("50 s"), std::string::npos) << warn.message;
    EXPECT_NE(warn.action.find("SET GLOBAL binlog_expire_logs_seconds = "), std::string::npos) << warn.action;
    EXPECT_EQ(warn.id, "binlog_expiry:shop/binlog:orders");
    const Alert &err = alerts[1];
    EXPECT_EQ(err.kind, "binlog_purged");
    EXPECT_EQ(err.level, Level::Error);
    EXPECT_NE(err.action.find("driftless-cli resnapshot third"), std::string::npos) << err.action;
}

TEST(BinlogRetention, theJsonCarriesTheFixedKeysAndReadsBack)
{
    auto r = needing("mysql-bin.000011", 500, 300, kNow - 100'000);
    projectBinlog(r, kFiles, kNow);
    SourceSlots ss;
    ss.source = "shop";
    ss.binlog = true;
    ss.binlogs = {r};
    SourceSlots pg{"app", "", "0/100", std::nullopt, {}};
    const auto j = slotsJsonValue({pg, ss});
    ASSERT_EQ(j["binlogs"].size(), 1u);
    const auto &b = j["binlogs"][0];
    EXPECT_EQ(b["pipeline"], "orders");
    EXPECT_EQ(b["needed_file"], "mysql-bin.000011");
    EXPECT_EQ(b["oldest_file"], "mysql-bin.000010");
    EXPECT_EQ(b["bytes_behind"], 4900);
    EXPECT_EQ(b["seconds_to_expiry"], 200);
    EXPECT_EQ(b["retention_seconds"], 300);
    EXPECT_EQ(b["needed_purged"], false);
    ASSERT_EQ(j["sources"].size(), 1u) << "a binlog source has no WAL to list";

    auto back = sourcesFromJson(j);
    ASSERT_EQ(back.size(), 2u);
    const SourceSlots &shop = back[0].source == "shop" ? back[0] : back[1];
    ASSERT_TRUE(shop.binlog);
    ASSERT_EQ(shop.binlogs.size(), 1u);
    EXPECT_EQ(shop.binlogs[0].neededFile, "mysql-bin.000011");
    EXPECT_EQ(shop.binlogs[0].bytesBehind, 4900);
    EXPECT_EQ(shop.binlogs[0].expiresAtMs, kNow + 200'000);
    EXPECT_DOUBLE_EQ(*shop.binlogs[0].secondsToExpiry, 200.0);
}
