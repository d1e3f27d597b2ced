// The canonical text and hashes the reconciler computes outside Postgres must match what Postgres
// computes in SQL (the integration tests compare both on real servers; these pin the rules).

#include "core/db/sqlitedb.h"
#include "core/engine/rows/rowhash.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace driftless::core::rowhash;

TEST(RowHash, recordTextQuotesLikePostgresRowOutput)
{
    // SELECT ROW(NULL, '', 'a', 'a b', 'x"y', 'back\slash', '(p)', 'c,d')::text
    EXPECT_EQ(recordText({std::nullopt, "", "a", "a b", "x\"y", "back\\slash", "(p)", "c,d"}),
              R"x((,"",a,"a b","x""y","back\\slash","(p)","c,d"))x");
    // NULL, '' and '""' are three different records.
    EXPECT_NE(recordText({std::nullopt}), recordText({""}));
    EXPECT_NE(recordText({""}), recordText({"\"\""}));
    EXPECT_EQ(recordText({"tab\there"}), "(\"tab\there\")");
}

TEST(RowHash, hashIsTheFirstSixtyBitsOfTheMd5)
{
    // Both values as Postgres 15 computes them:
    // SELECT ('x' || substr(md5('(1,a)'), 1, 15))::bit(60)::bigint, ... md5('') ...
    EXPECT_EQ(hashRecord("(1,a)"), 954767297499530112LL);
    EXPECT_EQ(hashRecord(""), 955282973525019424LL); // md5('') = d41d8cd98f00b20...
    EXPECT_NE(hashRecord("(1,b)"), hashRecord("(1,a)"));
}

TEST(RowHash, numericsLoseTrailingZerosOnly)
{
    EXPECT_EQ(trimNumeric("1.500"), "1.5");
    EXPECT_EQ(trimNumeric("2.000"), "2");
    EXPECT_EQ(trimNumeric("100"), "100");
    EXPECT_EQ(trimNumeric("-0.00"), "0");
    EXPECT_EQ(trimNumeric("NaN"), "NaN");
    EXPECT_EQ(trimNumeric("-Infinity"), "-Infinity");
    EXPECT_EQ(trimNumeric("10.010"), "10.01");
}

TEST(RowHash, floatsAreTheirBytesWithMinusZeroAsZero)
{
    EXPECT_EQ(floatBytes(1.5), "\\x3ff8000000000000");
    EXPECT_EQ(floatBytes(-0.0), floatBytes(0.0));
    EXPECT_EQ(floatBytes(std::numeric_limits<double>::quiet_NaN()), "\\x7ff8000000000000");
    EXPECT_EQ(floatBytes(std::numeric_limits<double>::infinity()), "\\x7ff0000000000000");
    EXPECT_EQ(canonicalFromSqliteText(Canon::Float, "NaN"), floatBytes(std::nan("")));
    EXPECT_EQ(canonicalFromSqliteText(Canon::Float, "-Infinity"), "\\xfff0000000000000");
}

TEST(RowHash, storedSqliteTextBecomesPostgresText)
{
    EXPECT_EQ(canonicalFromSqliteText(Canon::TimestampTz, "2024-01-01 10:00:00.5+00:00"), "2024-01-01 10:00:00.5+00");
    EXPECT_EQ(canonicalFromSqliteText(Canon::TimestampTz, "infinity"), "infinity");
    EXPECT_EQ(canonicalFromSqliteText(Canon::Boolean, "1"), "t");
    EXPECT_EQ(canonicalFromSqliteText(Canon::Numeric, "12.3400"), "12.34");
    EXPECT_EQ(canonicalFromSqliteText(Canon::Text, "  x  "), "  x  ");
}

TEST(RowHash, checksumsSumExactlyPastSixtyFourBits)
{
    Checksum c;
    const std::int64_t big = (std::int64_t(1) << 60) - 1;
    for (int i = 0; i < 32; ++i)
        c.add(big);
    EXPECT_EQ(c.rows, 32);
    EXPECT_EQ(c.sumDecimal(), "36893488147419103200"); // 32 * (2^60 - 1)
    EXPECT_EQ(Checksum::fromDecimal(32, "36893488147419103200"), c);
    EXPECT_NE(Checksum::fromDecimal(31, "36893488147419103200"), c);
    EXPECT_EQ(Checksum{}.sumDecimal(), "0");
}

TEST(RowHash, aRowHashedInPartsHashesAsTheWholeRow)
{
    // A SQLite function takes at most 127 arguments, so the reconciler hashes wider rows in
    // parts; a part may start or end with a NULL or an empty string, and the hash must not move.
    driftless::core::SqliteDb db(":memory:");
    driftless::core::rowhash::registerSqliteFunctions(db.raw());
    const auto whole = db.scalarInt("SELECT driftless_rowhash('TTTTT', 'a', NULL, '', 'x,y', NULL)");
    EXPECT_EQ(db.scalarInt("SELECT driftless_rowhash_parts(driftless_record_part('TT', 'a', NULL), "
                           "driftless_record_part('TT', '', 'x,y'), driftless_record_part('T', NULL))"),
              whole);
    EXPECT_EQ(db.scalarInt("SELECT driftless_rowhash_parts(driftless_record_part('T', 'a'), "
                           "driftless_record_part('TTTT', NULL, '', 'x,y', NULL))"),
              whole);
    EXPECT_NE(db.scalarInt("SELECT driftless_rowhash_parts(driftless_record_part('TT', 'a', NULL), "
                           "driftless_record_part('TTT', 'x,y', '', NULL))"),
              whole);
}
