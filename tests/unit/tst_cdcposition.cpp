#include "core/model/cdcposition.h"
#include "core/model/error.h"
#include "core/model/rowversion.h"
#include "core/readers/binlog/gtidstate.h"

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
constexpr const char *kBinlogStream =
    R"js({"file":"mariadb-bin.000003","gtid":"0-1-77","phase":"stream","pos":1234})js";
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

TEST(CdcPosition, aStopByAChangeOfSourceKeepsItsKindAndAnOlderStopReadsAsAnError)
{
    // Stops written before the kind was kept are errors, and are written back without a kind.
    EXPECT_EQ(PgCdcPosition::fromJson(kPgStream)->stopKind, StopKind::Error);
    EXPECT_FALSE(stoppedBySourceChange(*parseCdcPosition(kPgStream)));

    auto pg = PgCdcPosition::fromJson(kPgStream);
    pg->stopKind = StopKind::SourceChanged;
    const auto j = json::parse(pg->toJson());
    EXPECT_EQ(j["stop_kind"], "source_changed");
    EXPECT_EQ(j["stopped"], "value too long for type character varying(5)") << "beside the stop, which stays as it was";
    EXPECT_EQ(PgCdcPosition::fromJson(pg->toJson()), pg);
    EXPECT_TRUE(stoppedBySourceChange(*parseCdcPosition(pg->toJson())));

    auto binlog = BinlogCdcPosition::fromJson(kBinlogStream);
    binlog->stopped = "stopped: the source changed: endpoint 'shop' is server_id 2";
    binlog->stopKind = StopKind::SourceChanged;
    EXPECT_EQ(json::parse(binlog->toJson())["stop_kind"], "source_changed");
    EXPECT_EQ(BinlogCdcPosition::fromJson(binlog->toJson()), binlog);
    EXPECT_TRUE(stoppedBySourceChange(*parseCdcPosition(binlog->toJson())));

    // A kind without a stop is no stop; an unknown kind (a later version's) is still a stop.
    EXPECT_FALSE(json::parse(PgCdcPosition::fromJson(kPgLoad)->toJson()).contains("stop_kind"));
    auto lone = PgCdcPosition::fromJson(R"js({"lsn":"0/1","phase":"stream","stop_kind":"source_changed"})js");
    EXPECT_FALSE(lone->stopped);
    EXPECT_FALSE(stoppedBySourceChange(*lone));
    auto later = PgCdcPosition::fromJson(R"js({"lsn":"0/1","phase":"stream","stopped":"x","stop_kind":"other"})js");
    EXPECT_EQ(later->stopped, "x");
    EXPECT_EQ(later->stopKind, StopKind::Error);
}

TEST(CdcPosition, theSourceIdentityIsWhatFailoverChecks)
{
    const auto pg = sourceIdentityOf(*parseCdcPosition(kPgStream));
    EXPECT_TRUE(pg.postgres);
    EXPECT_EQ(pg.systemId, "7301234567890123456");
    EXPECT_EQ(pg.timeline, 0) << "not recorded in this older position";
    EXPECT_TRUE(pg.recorded());
    const auto binlog = sourceIdentityOf(*parseCdcPosition(kBinlogStream));
    EXPECT_FALSE(binlog.postgres);
    EXPECT_EQ(binlog.gtid, "0-1-77");
    EXPECT_EQ(binlog.serverId, 0u);
    EXPECT_TRUE(binlog.recorded());
    EXPECT_FALSE(sourceIdentityOf(*parseCdcPosition(kBinlogLoad)).recorded());
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
    EXPECT_EQ(json::parse(p.toJson()),
              json::parse(R"js({"phase":"stream","lsn":"0/2000","slot":"driftless_p","system_id":"1"})js"));
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
    EXPECT_FALSE(
        PgCdcPosition::fromJson(R"js({"lsn":"0/3000","add_column":{"columns":[],"version":"0/2F00"}})js")->addColumn);
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
    EXPECT_EQ(
        json::parse(stopped.toJson()),
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
    for (const char *none :
         {"", "null", "not json", "[1,2]", "42", R"js({"phase":"copying"})js", R"js({"lsn":"0/1"})js"}) {
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

TEST(CdcPosition, theSourcesIdentityIsKeptWithEveryPosition)
{
    BinlogCdcPosition b;
    b.at = {"binlog.000002", 4242};
    b.gtid = "0-1-405,1-2-7";
    b.serverId = 3355443201u;
    auto back = BinlogCdcPosition::fromJson(b.toJson());
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, b);
    EXPECT_EQ(json::parse(b.toJson())["server_id"], 3355443201u);
    // A load keeps the GTID state of the place its stream starts from.
    BinlogCdcPosition load;
    load.phase = CdcPhase::Load;
    load.streamFrom = binlog::Position{"binlog.000001", 4};
    load.gtid = "0-1-9";
    load.serverId = 1;
    EXPECT_EQ(*BinlogCdcPosition::fromJson(load.toJson()), load);
    // Positions written before the identity was kept read as "not recorded".
    EXPECT_EQ(BinlogCdcPosition::fromJson(kBinlogStream)->serverId, 0u);
    EXPECT_EQ(PgCdcPosition::fromJson(kPgStream)->timeline, 0);

    // A column backfill's second reading (the check found a difference) survives a restart.
    PgAddColumnProgress fill;
    fill.columns = {"score"};
    fill.version = 0x16B3748;
    fill.written = 40;
    fill.repair = true;
    fill.repairFrom = 39;
    b.addColumn = fill;
    EXPECT_EQ(*BinlogCdcPosition::fromJson(b.toJson())->addColumn, fill);

    PgCdcPosition p = *PgCdcPosition::fromJson(kPgStream);
    p.timeline = 2;
    EXPECT_EQ(json::parse(p.toJson())["timeline"], 2);
    EXPECT_EQ(PgCdcPosition::fromJson(p.toJson())->timeline, 2);
}

TEST(RowVersion, aLaterEpochOutranksEveryPositionOfAnEarlierOne)
{
    const std::int64_t highBinlog = binlog::positionVersion({"binlog.999999", 0xFFFFFFF0u});
    const std::int64_t lowLsn = 0x16B3748;
    EXPECT_GT(rowversion::compose(1, lowLsn), rowversion::compose(0, highBinlog));
    EXPECT_GT(rowversion::compose(2, 1), rowversion::compose(1, highBinlog));
    // Epoch 0 is what targets hold today: unchanged.
    EXPECT_EQ(rowversion::compose(0, highBinlog), highBinlog);
    EXPECT_EQ(rowversion::epochOf(highBinlog), 0);
    // Split again.
    const std::int64_t v = rowversion::compose(5, lowLsn);
    EXPECT_EQ(rowversion::epochOf(v), 5);
    EXPECT_EQ(rowversion::positionOf(v), lowLsn);
    // A version read back from a target keeps its epoch; 0 stays 0.
    EXPECT_EQ(rowversion::compose(7, v), v);
    EXPECT_EQ(rowversion::compose(3, 0), 0);
    EXPECT_EQ(rowversion::epochOf(rowversion::compose(rowversion::kMaxEpoch, 1)), rowversion::kMaxEpoch);
    EXPECT_GT(rowversion::compose(rowversion::kMaxEpoch, 1), 0);
    EXPECT_THROW(rowversion::compose(rowversion::kMaxEpoch + 1, 1), Error);
}

TEST(GtidState, isParsedAppliedAndSpelledAsMariadbDoes)
{
    auto s = binlog::GtidState::parse("1-2-7,0-1-405");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->text(), "0-1-405,1-2-7");
    s->apply({0, 3, 406});
    EXPECT_EQ(s->text(), "0-3-406,1-2-7");
    s->apply({5, 1, 1});
    EXPECT_EQ(s->text(), "0-3-406,1-2-7,5-1-1");
    EXPECT_TRUE(binlog::GtidState::parse("")->empty());
    for (const char *bad : {"0-1", "a-1-2", "0-1-2,0-1-3", "0-1-2,", "0--2", "0-1-2x"})
        EXPECT_FALSE(binlog::GtidState::parse(bad)) << bad;
}

TEST(GtidState, aStateAgreesWithThePartAnOlderCheckpointRecorded)
{
    const auto full = *binlog::GtidState::parse("0-1-405,1-2-7");
    EXPECT_TRUE(full.agreesWith(*binlog::GtidState::parse("0-1-405")));
    EXPECT_TRUE(full.agreesWith(full));
    EXPECT_FALSE(full.agreesWith(*binlog::GtidState::parse("0-1-404")));
    EXPECT_FALSE(full.agreesWith(*binlog::GtidState::parse("0-2-405")));
    EXPECT_FALSE(full.agreesWith(*binlog::GtidState::parse("2-1-1")));
}
