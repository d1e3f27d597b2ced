#include "core/model/tableref.h"

#include <gtest/gtest.h>

using driftless::core::quoteIdent;
using driftless::core::TableRef;

TEST(TableRef, unquotedNamesFoldToLowerCase)
{
    auto t = TableRef::parse("Public.Orders");
    EXPECT_EQ(t.schema, "public");
    EXPECT_EQ(t.name, "orders");
}

TEST(TableRef, missingSchemaDefaultsToPublic)
{
    auto t = TableRef::parse("plans");
    EXPECT_EQ(t.schema, "public");
    EXPECT_EQ(t.name, "plans");
}

TEST(TableRef, quotedPartsAreKeptExactly)
{
    auto t = TableRef::parse(R"("My Schema"."Order ""Lines"" - 2024")");
    EXPECT_EQ(t.schema, "My Schema");
    EXPECT_EQ(t.name, "Order \"Lines\" - 2024");
    EXPECT_EQ(t.quoted(), R"("My Schema"."Order ""Lines"" - 2024")");
    EXPECT_EQ(TableRef::parse(t.display()), t) << "display() must parse back to the same name";
}

TEST(TableRef, displayQuotesOnlyWhatNeedsIt)
{
    EXPECT_EQ((TableRef{"public", "plans"}).display(), "public.plans");
    EXPECT_EQ((TableRef{"public", "Plans"}).display(), "public.\"Plans\"");
    EXPECT_EQ((TableRef{"public", "select"}).display(), "public.select"); // keywords are fine when quoted in SQL
}

TEST(TableRef, malformedNamesAreRejectedWithAReason)
{
    for (const char *bad : {"", "a.b.c", "a..b", "\"unterminated", "has space", "a-b", "1abc", "\"\""}) {
        EXPECT_THROW(TableRef::parse(bad), std::invalid_argument) << bad;
    }
}

TEST(QuoteIdent, doublesQuotesAndRejectsNul)
{
    EXPECT_EQ(quoteIdent("a\"b"), "\"a\"\"b\"");
    EXPECT_EQ(quoteIdent("with space"), "\"with space\"");
    EXPECT_THROW(quoteIdent(std::string("a\0b", 3)), std::invalid_argument);
    EXPECT_THROW(quoteIdent(""), std::invalid_argument);
}
