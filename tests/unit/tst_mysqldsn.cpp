// The mysql:// DSN of a MySQL/MariaDB endpoint: every part, the TLS default by host, and bad
// input refused with a message that says how to write it.

#include "core/db/mysqlconnection.h"
#include "core/model/error.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using namespace driftless::core;

TEST(MysqlDsn, parsesEveryPart)
{
    auto d =
        MysqlDsn::parse("mysql://app%40ops:p%3Ass@db.example.org:3307/shop%2Dmain?ssl-mode=VERIFY_CA&ssl-ca=/etc/ca.pem"
                        "&connect_timeout=3");
    EXPECT_EQ(d.user, "app@ops");
    ASSERT_TRUE(d.password);
    EXPECT_EQ(*d.password, "p:ss");
    EXPECT_EQ(d.host, "db.example.org");
    EXPECT_EQ(d.port, 3307);
    EXPECT_EQ(d.database, "shop-main");
    EXPECT_EQ(d.sslMode, "verify_ca");
    EXPECT_EQ(d.sslCa, "/etc/ca.pem");
    EXPECT_EQ(d.connectTimeout, 3);
    EXPECT_EQ(d.display(), "app@ops@db.example.org:3307/shop-main") << "never the password";

    auto v6 = MysqlDsn::parse("mysql://u@[::1]:3306/x");
    EXPECT_EQ(v6.host, "::1");
    EXPECT_EQ(v6.port, 3306);
    auto bare = MysqlDsn::parse("mysql://u@h/");
    EXPECT_EQ(bare.port, 3306);
    EXPECT_EQ(bare.database, "");
    EXPECT_FALSE(bare.password);
}

TEST(MysqlDsn, tlsIsVerifiedByDefaultOffTheLocalMachine)
{
    EXPECT_EQ(MysqlDsn::parse("mysql://u@127.0.0.1/x").sslMode, "preferred");
    EXPECT_EQ(MysqlDsn::parse("mysql://u@localhost/x").sslMode, "preferred");
    EXPECT_EQ(MysqlDsn::parse("mysql://u@db.internal/x").sslMode, "verify_identity");
    EXPECT_EQ(MysqlDsn::parse("mysql://u@db.internal/x?ssl-mode=disabled").sslMode, "disabled");
}

TEST(MysqlDsn, badInputSaysHowToWriteIt)
{
    auto message = [](const std::string &dsn) {
        try {
            MysqlDsn::parse(dsn);
        } catch (const ConfigError &e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(message("host=x user=y").find("mysql://user@host:3306/database"), std::string::npos);
    EXPECT_NE(message("mysql://u@h:99999/x").find("not a port"), std::string::npos);
    EXPECT_NE(message("mysql://u@h:abc/x").find("not a port"), std::string::npos);
    EXPECT_NE(message("mysql://u@h/x?sslmode=sometimes").find("not one of"), std::string::npos);
    EXPECT_NE(message("mysql://u@h/x?colour=blue").find("unknown option 'colour'"), std::string::npos);
    EXPECT_NE(message("mysql://u%zz@h/x").find("two hex digits"), std::string::npos);
}

TEST(MysqlDsn, passwordSourcesInOrder)
{
    char tmpl[] = "/tmp/driftless-mycnf-XXXXXX";
    ASSERT_TRUE(::mkdtemp(tmpl));
    const std::string home = tmpl;
    {
        std::ofstream f(home + "/.my.cnf");
        f << "[mysqld]\npassword = server-side\n[client]\nuser = x\npassword = \"from cnf\"\n";
    }
    const char *oldHome = std::getenv("HOME");
    std::string savedHome = oldHome ? oldHome : "";
    ::setenv("HOME", home.c_str(), 1);
    ::unsetenv("MYSQL_HOME");
    ::unsetenv("MYSQL_PWD");
    const std::string dsn = "mysql://u@h/x";
    EXPECT_EQ(mysqlPasswordFor(dsn, MysqlDsn::parse(dsn)).value_or("<none>"), "from cnf");
    ::setenv("MYSQL_PWD", "from env", 1);
    EXPECT_EQ(mysqlPasswordFor(dsn, MysqlDsn::parse(dsn)).value_or("<none>"), "from env");
    const std::string inDsn = "mysql://u:inline@h/x";
    EXPECT_EQ(mysqlPasswordFor(inDsn, MysqlDsn::parse(inDsn)).value_or("<none>"), "inline");
    ::unsetenv("MYSQL_PWD");
    std::remove((home + "/.my.cnf").c_str());
    EXPECT_FALSE(mysqlPasswordFor(dsn, MysqlDsn::parse(dsn)));
    ::rmdir(home.c_str());
    if (oldHome)
        ::setenv("HOME", savedHome.c_str(), 1);
}

TEST(MysqlDsn, identifiersAndLiteralsAreQuoted)
{
    EXPECT_EQ(mysqlIdent("we`ird"), "`we``ird`");
    EXPECT_EQ(mysqlLiteral("it's \\ a\nb"), "'it\\'s \\\\ a\\nb'");
}
