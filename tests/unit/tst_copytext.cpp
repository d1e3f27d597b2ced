#include "core/base/copytext.h"
#include "core/model/batch.h"

#include <gtest/gtest.h>

using namespace driftless::core;

TEST(CopyText, escapeThenUnescapeIsIdentityForEveryByte)
{
    std::string all;
    for (int c = 1; c < 256; ++c)
        all += static_cast<char>(c);
    all += std::string("\0tail", 5);
    std::string esc, back;
    copytext::escape(all, esc);
    EXPECT_EQ(esc.find('\t'), std::string::npos);
    EXPECT_EQ(esc.find('\n'), std::string::npos);
    copytext::unescape(esc, back);
    EXPECT_EQ(back, all);
}

TEST(CopyText, escapeFindsEveryEscapedByteAtEveryOffsetOfLongValues)
{
    // escape skips 8 plain bytes at a time: each byte that needs an escape, at each position of
    // such a word and next to bytes just above and below the ones it looks for, is still escaped.
    const std::string special = std::string("\\\n\r\t\b\f\v", 7);
    for (char c : special) {
        for (size_t at = 0; at < 40; ++at) {
            std::string v(40, 'x');
            v[(at + 1) % 40] = '\x0e';
            v[(at + 2) % 40] = '\x07';
            v[(at + 3) % 40] = '[';
            v[(at + 4) % 40] = '\xdc';
            v[at] = c;
            std::string esc, back;
            copytext::escape(v, esc);
            EXPECT_EQ(esc.size(), v.size() + 1) << "byte " << int(c) << " at " << at;
            copytext::unescape(esc, back);
            EXPECT_EQ(back, v) << "byte " << int(c) << " at " << at;
        }
    }
    std::string plain(100000, 'a');
    std::string esc;
    copytext::escape(plain, esc);
    EXPECT_EQ(esc, plain);
}

TEST(CopyText, unescapeUnderstandsOctalAndHexForms)
{
    std::string out;
    copytext::unescape("a\\101\\x42\\\\\\N", out);
    EXPECT_EQ(out, "aAB\\N");
}

TEST(CopyText, splitKeepsEmptyFieldsAndNulls)
{
    std::vector<std::string_view> f;
    copytext::split("1\t\t\\N\tx\n", f);
    ASSERT_EQ(f.size(), 4u);
    EXPECT_EQ(f[0], "1");
    EXPECT_EQ(f[1], "");
    EXPECT_TRUE(copytext::isNull(f[2]));
    EXPECT_EQ(f[3], "x");
}

TEST(RowSet, foldKeepsTheLastChangeOfEachKeyInOrder)
{
    RowSet rs;
    rs.append("1\ta", ChangeOp::Insert, 10);
    rs.append("2\tb", ChangeOp::Insert, 11);
    rs.append("1\tc", ChangeOp::Update, 12);
    rs.append("3\td", ChangeOp::Insert, 13);
    rs.append("2\t\\N", ChangeOp::Delete, 14);
    rs.foldByKey({0});
    ASSERT_EQ(rs.size(), 3u);
    EXPECT_EQ(rs.line(0), "1\tc");
    EXPECT_EQ(rs.row(0).version, 12);
    EXPECT_EQ(rs.line(1), "3\td");
    EXPECT_EQ(rs.line(2), "2\t\\N");
    EXPECT_EQ(rs.row(2).op, ChangeOp::Delete);
}

TEST(RowSet, foldFillsUnchangedColumnsFromTheKeysEarlierRow)
{
    // An insert and a later partial update (unchanged TOAST in column 2) in one batch become one
    // full row: the big value is never lost to NULL.
    RowSet rs;
    rs.append("1\tsmall\tBIG VALUE", ChangeOp::Insert, 10);
    rs.append("1\tedited\t\\N", ChangeOp::Update, 11, "001");
    rs.append("2\tx\t\\N", ChangeOp::Update, 12, "001");
    rs.foldByKey({0});
    ASSERT_EQ(rs.size(), 2u);
    EXPECT_EQ(rs.line(0), "1\tedited\tBIG VALUE");
    EXPECT_TRUE(rs.unchangedMask(0).empty()) << "every column now has its value";
    EXPECT_EQ(rs.row(0).version, 11);
    EXPECT_EQ(rs.line(1), "2\tx\t\\N");
    EXPECT_EQ(rs.unchangedMask(1), "001") << "no earlier row: the merge keeps the target's value";
}

TEST(RowSet, foldKeepsTheFirstBeforeImageAndTheLastAfterImage)
{
    // Two-way conflict detection compares the target with the base both sides started from: the
    // before-image of the key's FIRST change in the batch, not of its last.
    RowSet rs;
    rs.append("1\tb\tx", ChangeOp::Update, 10);
    rs.setBefore(0, "1\ta\tx");
    rs.append("2\tnew\ty", ChangeOp::Insert, 11);
    rs.setNoBase(1);
    rs.append("1\tc\tx", ChangeOp::Update, 12);
    rs.setBefore(2, "1\tb\tx");
    rs.append("2\tnewer\ty", ChangeOp::Update, 13);
    rs.setBefore(3, "2\tnew\ty");
    rs.append("3\tq\tz", ChangeOp::Update, 14);
    rs.setBefore(4, "3\tp\tz");
    rs.foldByKey({0});
    ASSERT_EQ(rs.size(), 3u);
    EXPECT_EQ(rs.line(0), "1\tc\tx");
    EXPECT_EQ(rs.before(0), "1\ta\tx");
    EXPECT_EQ(rs.line(1), "2\tnewer\ty");
    EXPECT_EQ(rs.beforeIndex(1), RowSet::kNoBase) << "inserted in this batch: no row before it";
    EXPECT_EQ(rs.before(2), "3\tp\tz");
}

TEST(RowSet, foldDoesNotInheritAcrossADelete)
{
    RowSet rs;
    rs.append("1\ta\tOLD", ChangeOp::Insert, 10);
    rs.append("1\t\\N\t\\N", ChangeOp::Delete, 11);
    rs.append("1\tb\t\\N", ChangeOp::Update, 12, "001");
    rs.foldByKey({0});
    ASSERT_EQ(rs.size(), 1u);
    EXPECT_EQ(rs.unchangedMask(0), "001");
    EXPECT_EQ(rs.line(0), "1\tb\t\\N");
}
