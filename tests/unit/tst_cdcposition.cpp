#include "core/model/cdcposition.h"
#include "core/model/error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace driftless::core;
using json = nlohmann::json;

namespace {

/// Positions exactly as targets already hold them (written before the positions were typed):
/// every later version must read them, and write them back with the same keys.
constexpr const char *kPgStream =
    R"js({"lsn":"1/6B374D48","paused":true,"rebackfill":{"after":["42","x"],"delete_below":"1/6B000000","rows":4096},)js"
    R"js("slot":"driftless_app_to_dw","stopped":"value too long for type character varying(5)",)js"
    R"js("phase":"stream","system_id":"7301234567890123456"})js";
constexpr const char *kPgLoad =
    R"js({"after":["1000"],"mode":"merge","phase":"load","rows":1000,"slot":"driftless_p",)js"
    R"js("snapshot_lsn":"0/16B3748","stream_from":"0/1600000","system_id":"7301"})js";
constexpr const char *kBinlogStream = R"js({"file":"mariadb-bin.000003","gtid":"0-1-77","phase":"stream","pos":1234})js";
constexpr const char *kBinlogLoad =
    R"js({"after":["7"],"mode":"copy","phase":"load","rows":7,"stream_from":{"file":"mariadb-bin.000002","pos":4}})js";

} // namespace

TEST(CdcPosition, lsnIsFormattedAndParsedAsPostgresPrintsIt)
{
    EXPECT_EQ(formatLsn(0x16B374D48LL), "1/6B374D48");
    EXPECT_EQ(parseLsn("1/6B374D48"), 0x16B374D48LL);
    EXPECT_EQ(parseLsn("0/0"), 0);
    for (const char *bad : {"", "16B374D48", "1/", "x/1", "1/2 ", "1/2/3"})
        EXPECT_FALSE(parseLsn(bad).has_value()) << bad;
    for (std::int64_t lsn : {0LL, 1LL, 0xFFFFFFFFLL, 0x100000000LL, 0x7FFFFFFFFFFFFFFFLL})
        EXPECT_EQ(parseLsn(formatLsn(lsn)), lsn);
}

TEST(CdcPosition, aStoredPostgresStreamPositionReadsWithEveryMark)
{
    auto p = PgCdcPosition::fromJson(kPgStream);
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->streaming());
    EXPECT_EQ(p->lsn, 0x16B374D48LL);
    EXPECT_EQ(p->slot, "driftless_app_to_dw");
    EXPECT_EQ(p->systemId, "7301234567890123456");
    ASSERT_TRUE(p->rebackfill);
    EXPECT_EQ(p->rebackfill->after, (std::vector<std::string>{"42", "x"}));
    EXPECT_EQ(p->rebackfill->deleteBelow, 0x16B000000LL);
    EXPECT_EQ(p->rebackfill->rows, 4096);
    EXPECT_EQ(p->stopped, "value too long for type character varying(5)");
    EXPECT_TRUE(p->paused);
    EXPECT_EQ(json::parse(p->toJson()), json::parse(kPgStream)) << "written back with the same keys and values";
}

TEST(CdcPosition, aComparedReBackfillSaysSoAndAnOlderOneReadsAsCopying)
{
    // A re-backfill an older version began copied every row (no "compared"): it must not resume
    // the compared way, which leaves no seen keys for the end.
    EXPECT_FALSE(PgCdcPosition::fromJson(kPgStream)->rebackfill->compared);
    auto p = PgCdcPosition::fromJson(kPgStream);
    p->rebackfill->compared = true;
    const auto j = json::parse(p->toJson());
    EXPECT_EQ(j["rebackfill"]["compared"], true);
    EXPECT_EQ(PgCdcPosition::fromJson(p->toJson()), p);
}

TEST(CdcPosition, theStreamsColumnNumbersReadAndWriteBack)
{
    // A position an older version wrote has none; one with them keeps each name's number.
    auto p = PgCdcPosition::fromJson(R"js({"lsn":"0/16B3748","phase":"stream","attnums":{"a":2,"id":1}})js");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->attnums, (std::map<std::string, int>{{"a", 2}, {"id", 1}}));
    EXPECT_EQ(PgCdcPosition::fromJson(p->toJson()), p);
    EXPECT_TRUE(PgCdcPosition::fromJson(kPgStream)->attnums.empty());
    EXPECT_FALSE(json::parse(PgCdcPosition::fromJson(kPgStream)->toJson()).contains("attnums"));
}

TEST(CdcPosition, aStoredPostgresLoadPositionReadsItsChunkAndSnapshots)
{
    auto p = PgCdcPosition::fromJson(kPgLoad);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->phase, CdcPhase::Load);
    EXPECT_EQ(p->load.after, std::vector<std::string>{"1000"});
    EXPECT_TRUE(p->load.merge);
    EXPECT_EQ(p->load.rows, 1000);
    EXPECT_EQ(p->snapshotLsn, 0x16B3748LL);
    EXPECT_EQ(p->streamFrom, 0x1600000LL);
    EXPECT_EQ(p->lsn, 0) << "a load has applied no stream position";
    EXPECT_FALSE(p->rebackfill);
    EXPECT_FALSE(p->paused);
    EXPECT_EQ(json::parse(p->toJson()), json::parse(kPgLoad));
}

TEST(CdcPosition, aPlainStreamPositionWritesNoMarks)
{
    PgCdcPosition p;
    p.lsn = 0x2000;
    p.slot = "driftless_p";
    p.systemId = "1";
    EXPECT_EQ(json::parse(p.toJson()), json::parse(R"js({"phase":"stream","lsn":"0/2000","slot":"driftless_p","system_id":"1"})js"));
    EXPECT_EQ(PgCdcPosition::fromJson(p.toJson()), p);
}

TEST(CdcPosition, anAddColumnBackfillInFlightReadsAndWritesBack)
{
    PgCdcPosition p;
    p.lsn = 0x3000;
    p.slot = "driftless_p";
    p.addColumn = PgAddColumnProgress{{"d", "Due Date"}, 0x2F00, {"5000"}, 5000, 4990, 1700000000000};
    const json stored = json::parse(p.toJson());
    EXPECT_EQ(stored["add_column"]["version"], "0/2F00");
    EXPECT_EQ(stored["add_column"]["after"], json::array({"5000"}));
    EXPECT_EQ(PgCdcPosition::fromJson(p.toJson()), p);
    // One without columns or a version is no backfill (nothing to fill, or nothing to guard by).
    EXPECT_FALSE(PgCdcPosition::fromJson(R"js({"lsn":"0/3000","add_column":{"columns":[],"version":"0/2F00"}})js")
                     ->addColumn);
    EXPECT_FALSE(PgCdcPosition::fromJson(R"js({"lsn":"0/3000","add_column":{"columns":["d"]}})js")->addColumn);
}

TEST(CdcPosition, binlogPositionsReadAndWriteBack)
{
    auto s = BinlogCdcPosition::fromJson(kBinlogStream);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->streaming());
    EXPECT_EQ(s->at, (binlog::Position{"mariadb-bin.000003", 1234}));
    EXPECT_EQ(s->gtid, "0-1-77");
    EXPECT_EQ(json::parse(s->toJson()), json::parse(kBinlogStream));

    auto l = BinlogCdcPosition::fromJson(kBinlogLoad);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->phase, CdcPhase::Load);
    EXPECT_EQ(l->streamFrom, (binlog::Position{"mariadb-bin.000002", 4}));
    EXPECT_EQ(l->load.rows, 7);
    EXPECT_FALSE(l->load.merge);
    EXPECT_EQ(json::parse(l->toJson()), json::parse(kBinlogLoad));

    BinlogCdcPosition stopped = *s;
    stopped.gtid.clear();
    stopped.stopped = "Data too long";
    EXPECT_EQ(json::parse(stopped.toJson()),
              json::parse(R"js({"file":"mariadb-bin.000003","phase":"stream","pos":1234,"stopped":"Data too long"})js"));
}

TEST(CdcPosition, eitherSourceIsToldApartAndVersionedAsTheMergerVersionsRows)
{
    auto pg = parseCdcPosition(kPgStream);
    ASSERT_TRUE(pg);
    ASSERT_TRUE(std::holds_alternative<PgCdcPosition>(*pg));
    EXPECT_EQ(appliedVersion(*pg), 0x16B374D48LL);
    EXPECT_EQ(describeStreamPosition(*pg), "1/6B374D48");
    EXPECT_TRUE(markedPaused(*pg));
    EXPECT_TRUE(stoppedBy(*pg));

    auto bl = parseCdcPosition(kBinlogStream);
    ASSERT_TRUE(bl);
    ASSERT_TRUE(std::holds_alternative<BinlogCdcPosition>(*bl));
    EXPECT_EQ(appliedVersion(*bl), binlog::positionVersion({"mariadb-bin.000003", 1234}));
    EXPECT_EQ(describeStreamPosition(*bl), "mariadb-bin.000003:1234");
    EXPECT_FALSE(markedPaused(*bl));
    EXPECT_FALSE(stoppedBy(*bl));

    auto bload = parseCdcPosition(kBinlogLoad);
    ASSERT_TRUE(bload);
    EXPECT_TRUE(std::holds_alternative<BinlogCdcPosition>(*bload)) << "a binlog load is told by its stream_from";
    EXPECT_EQ(appliedVersion(*bload), 0) << "nothing of the stream is applied while loading";
    EXPECT_EQ(describeStreamPosition(*bload), "");
    auto pload = parseCdcPosition(kPgLoad);
    ASSERT_TRUE(pload);
    EXPECT_TRUE(std::holds_alternative<PgCdcPosition>(*pload));
    EXPECT_EQ(phaseOf(*pload), CdcPhase::Load);
}

TEST(CdcPosition, whatIsNoPositionGivesNone)
{
    for (const char *none : {"", "null", "not json", "[1,2]", "42", R"js({"phase":"copying"})js", R"js({"lsn":"0/1"})js"}) {
        EXPECT_FALSE(PgCdcPosition::fromJson(none)) << none;
        EXPECT_FALSE(BinlogCdcPosition::fromJson(none)) << none;
        EXPECT_FALSE(parseCdcPosition(none)) << none;
    }
}

TEST(CdcPosition, aDamagedPositionIsRefusedWithTheWayOut)
{
    for (const char *bad : {R"js({"phase":"load","rows":"many"})js", R"js({"phase":"stream","slot":7})js",
                            R"js({"phase":"stream","file":"b.000001","pos":"x"})js"}) {
        try {
            (void)parseCdcPosition(bad);
            ADD_FAILURE() << "accepted " << bad;
        } catch (const Error &e) {
            EXPECT_NE(e.describe().find("resnapshot"), std::string::npos) << e.describe();
        }
    }
}
