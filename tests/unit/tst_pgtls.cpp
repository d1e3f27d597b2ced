// Which sslmode a Postgres connection gets before it connects: verify-full for a host off this
// machine when nothing chose (the DSN, PGSSLMODE, PGREQUIRESSL, the service file), libpq's prefer
// on it; and the warning with the exact DSN change for a weaker mode chosen off the machine.
// Also the ~/.pgpass lookup Driftless makes for a connection it rewrote to go through a tunnel.

#include "core/db/pgpass.h"
#include "core/db/pgtls.h"
#include "core/engine/endpoints/endpointtls.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace driftless::core;

namespace {

/// Sets (or, with nullptr, unsets) an environment variable for one test and puts it back.
class EnvVar {
public:
    EnvVar(const char *name, const char *value) : m_name(name)
    {
        if (const char *old = std::getenv(name))
            m_old = old;
        value ? ::setenv(name, value, 1) : ::unsetenv(name);
    }
    ~EnvVar() { m_old ? ::setenv(m_name, m_old->c_str(), 1) : ::unsetenv(m_name); }

private:
    const char *m_name;
    std::optional<std::string> m_old;
};

/// No PG* variable of the machine running the tests may decide these cases.
struct CleanEnv {
    EnvVar mode{"PGSSLMODE", nullptr};
    EnvVar require{"PGREQUIRESSL", nullptr};
    EnvVar host{"PGHOST", nullptr};
    EnvVar hostaddr{"PGHOSTADDR", nullptr};
    EnvVar service{"PGSERVICE", nullptr};
    EnvVar serviceFile{"PGSERVICEFILE", "/nonexistent/driftless-test-pg_service.conf"};
};

Endpoint pg(const std::string &dsn)
{
    Endpoint e;
    e.name = "app";
    e.kind = EndpointKind::Postgres;
    e.dsn = dsn;
    return e;
}

} // namespace

TEST(PgTls, aHostOffThisMachineGetsVerifyFullWhenNothingChose)
{
    CleanEnv env;
    for (const char *dsn : {"host=db.example.org dbname=app user=sync", "postgresql://sync@db.example.org:5433/app",
                            "host=10.0.0.7 dbname=app", "host=localhost,db2.example.org dbname=app",
                            "host=db.example.org hostaddr=127.0.0.1 dbname=app"}) {
        const auto c = resolvePgTls(dsn);
        EXPECT_FALSE(c.loopback) << dsn;
        EXPECT_EQ(c.chosenBy, "default") << dsn;
        EXPECT_TRUE(c.verifyByDefault()) << dsn;
        EXPECT_EQ(c.mode, "verify-full") << dsn;
        EXPECT_FALSE(c.weakerByChoice()) << dsn;
    }
}

TEST(PgTls, thisMachineKeepsLibpqsPrefer)
{
    CleanEnv env;
    for (const char *dsn : {"host=127.0.0.1 dbname=app", "host=127.1.2.3 dbname=app", "host=localhost dbname=app",
                            "host=::1 dbname=app", "host=/var/run/postgresql dbname=app", "dbname=app",
                            "postgresql:///app", "hostaddr=127.0.0.1 dbname=app", "host=LOCALHOST,127.0.0.1"}) {
        const auto c = resolvePgTls(dsn);
        EXPECT_TRUE(c.loopback) << dsn;
        EXPECT_FALSE(c.verifyByDefault()) << dsn;
        EXPECT_EQ(c.mode, "prefer") << dsn;
        EXPECT_EQ(c.chosenBy, "default") << dsn;
    }
    EXPECT_FALSE(isLoopbackHost("127.example.org"));
    EXPECT_FALSE(isLoopbackHost("128.0.0.1"));
    EXPECT_TRUE(isLoopbackHost("0:0:0:0:0:0:0:1"));
}

TEST(PgTls, aModeTheDsnChoosesStaysWithAWarning)
{
    CleanEnv env;
    for (const char *mode : {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}) {
        const auto c = resolvePgTls(std::string("host=db.example.org dbname=app sslmode=") + mode);
        EXPECT_EQ(c.mode, mode);
        EXPECT_EQ(c.chosenBy, "dsn");
        EXPECT_FALSE(c.verifyByDefault());
        EXPECT_EQ(c.weakerByChoice(), std::string(mode) != "verify-full") << mode;
    }
    const auto uri = resolvePgTls("postgresql://sync@db.example.org/app?sslmode=require");
    EXPECT_EQ(uri.mode, "require");
    EXPECT_EQ(uri.chosenBy, "dsn");
}

TEST(PgTls, theEnvironmentAndTheServiceFileCountAsChoosing)
{
    CleanEnv env;
    {
        EnvVar mode("PGSSLMODE", "require");
        const auto c = resolvePgTls("host=db.example.org dbname=app");
        EXPECT_EQ(c.mode, "require");
        EXPECT_EQ(c.chosenBy, "PGSSLMODE");
        EXPECT_EQ(c.chosenWhere(), "PGSSLMODE in the environment");
        // The DSN still wins over the environment, as in libpq.
        EXPECT_EQ(resolvePgTls("host=db.example.org sslmode=verify-ca").chosenBy, "dsn");
    }
    {
        EnvVar host("PGHOST", "db.example.org");
        const auto c = resolvePgTls("dbname=app");
        EXPECT_FALSE(c.loopback) << "PGHOST decides the host";
        EXPECT_EQ(c.mode, "verify-full");
    }
    const auto dir = std::filesystem::temp_directory_path() / ("driftless-pgtls-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = (dir / "pg_service.conf").string();
    std::ofstream(file)
        << "# test services\n[weak]\nhost=db.example.org\nsslmode=require\n\n[plain]\nhost=db.example.org\n"
           "dbname=app\n";
    {
        EnvVar serviceFile("PGSERVICEFILE", file.c_str());
        const auto weak = resolvePgTls("service=weak dbname=app");
        EXPECT_FALSE(weak.loopback);
        EXPECT_EQ(weak.mode, "require");
        EXPECT_EQ(weak.chosenBy, "service");
        EXPECT_EQ(weak.service, "weak");
        const auto plain = resolvePgTls("service=plain");
        EXPECT_FALSE(plain.loopback);
        EXPECT_EQ(plain.chosenBy, "default");
        EXPECT_EQ(plain.mode, "verify-full");
        EnvVar service("PGSERVICE", "weak");
        EXPECT_EQ(resolvePgTls("dbname=app").chosenBy, "service");
    }
    std::filesystem::remove_all(dir);
}

TEST(PgTls, aDsnLibpqCannotResolveIsLeftToTheConnection)
{
    CleanEnv env;
    const auto c = resolvePgTls("service=no_such_service");
    EXPECT_TRUE(c.mode.empty());
    EXPECT_FALSE(c.verifyByDefault());
}

TEST(PgTls, theWarningSaysTheExactDsnChange)
{
    CleanEnv env;
    EndpointTls plain{{}, false, "dsn", {}, 1};
    plain.tls.mode = "disable";
    auto w = tlsWarning(pg("host=db.example.org dbname=app sslmode=disable"), plain);
    ASSERT_TRUE(w);
    EXPECT_NE(w->message.find("not encrypted (disable, chosen by the dsn)"), std::string::npos) << w->message;
    EXPECT_NE(w->fix.find("change endpoint app's dsn to: host=db.example.org dbname=app sslmode=verify-full"),
              std::string::npos)
        << w->fix;
    EXPECT_NE(w->fix.find("sslrootcert=FILE"), std::string::npos) << w->fix;

    EndpointTls unverified{{true, false, false, "require", "TLSv1.3", "x"}, false, "dsn", {}, 1};
    w = tlsWarning(pg("postgresql://sync@db.example.org/app?sslmode=require&sslrootcert=/etc/ca.pem"), unverified);
    ASSERT_TRUE(w);
    EXPECT_NE(w->message.find("not verified (require"), std::string::npos) << w->message;
    EXPECT_NE(w->fix.find("postgresql://sync@db.example.org/app?sslmode=verify-full&sslrootcert=/etc/ca.pem"),
              std::string::npos)
        << w->fix;
    EXPECT_EQ(w->fix.find("sslrootcert=FILE"), std::string::npos) << "the dsn names its CA already: " << w->fix;

    unverified.chosenBy = "PGSSLMODE";
    w = tlsWarning(pg("host=db.example.org"), unverified);
    ASSERT_TRUE(w);
    EXPECT_NE(w->fix.find("unset PGSSLMODE"), std::string::npos) << w->fix;
    EXPECT_NE(w->fix.find("host=db.example.org sslmode=verify-full"), std::string::npos) << w->fix;

    EndpointTls caOnly{{true, true, false, "verify-ca", "TLSv1.3", "x"}, false, "dsn", {}, 1};
    w = tlsWarning(pg("host=db.example.org sslmode = 'verify-ca' dbname=app"), caOnly);
    ASSERT_TRUE(w);
    EXPECT_NE(w->message.find("not its host name"), std::string::npos) << w->message;
    EXPECT_NE(w->fix.find("host=db.example.org sslmode = verify-full dbname=app"), std::string::npos) << w->fix;

    EndpointTls verified{{true, true, true, "verify-full", "TLSv1.3", "x"}, false, "default", {}, 1};
    EXPECT_FALSE(tlsWarning(pg("host=db.example.org"), verified));
    EndpointTls local{{false, false, false, "prefer", {}, {}}, true, "default", {}, 1};
    EXPECT_FALSE(tlsWarning(pg("host=127.0.0.1"), local)) << "nothing crosses a network";

    Endpoint my;
    my.name = "shop";
    my.kind = EndpointKind::Mysql;
    my.dsn = "mysql://sync@db1.internal:3306/shop?ssl-mode=required";
    EndpointTls myRequired{{true, false, false, "required", "TLSv1.3", "x"}, false, "dsn", {}, 1};
    w = tlsWarning(my, myRequired);
    ASSERT_TRUE(w);
    EXPECT_NE(w->fix.find("mysql://sync@db1.internal:3306/shop?ssl-mode=verify_identity"), std::string::npos) << w->fix;
    EXPECT_NE(w->fix.find("ssl-ca=FILE"), std::string::npos) << w->fix;
}

TEST(PgPass, theFirstLineMatchingTheDsnsOwnHostPortDatabaseAndUserWins)
{
    CleanEnv env;
    EnvVar port{"PGPORT", nullptr};
    EnvVar user{"PGUSER", nullptr};
    EnvVar database{"PGDATABASE", nullptr};
    char tmpl[] = "/tmp/driftless-pgpass-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    ::close(fd);
    const std::string file = tmpl;
    std::ofstream(file) << "# a comment line\n"
                           "db.example.org:5433:app:sync:for-5433\n"
                           "db.example.org:5432:other:sync:for-other\n"
                           "db\\:odd:5432:*:sync:escaped\\:colon\n"
                           "db.example.org:*:*:sync:pa\\\\ss\n"
                           "*:*:*:*:anyone\n";
    ::chmod(file.c_str(), 0600);
    const std::string pf = " passfile=" + file;
    EXPECT_EQ(pgpassPasswordFor("host=db.example.org port=5433 dbname=app user=sync" + pf), "for-5433");
    EXPECT_EQ(pgpassPasswordFor("host=db.example.org dbname=other user=sync" + pf), "for-other");
    EXPECT_EQ(pgpassPasswordFor("host=db.example.org dbname=app user=sync" + pf), "pa\\ss");
    EXPECT_EQ(pgpassPasswordFor("host=db:odd dbname=app user=sync" + pf), "escaped:colon");
    EXPECT_EQ(pgpassPasswordFor("host=elsewhere dbname=app user=sync" + pf), "anyone");
    // The database defaults to the user, as libpq's does.
    EXPECT_EQ(pgpassPasswordFor("host=db.example.org port=5432 user=sync" + pf), "pa\\ss");
    {
        EnvVar viaEnv{"PGPASSFILE", file.c_str()};
        EXPECT_EQ(pgpassPasswordFor("host=db.example.org port=5433 dbname=app user=sync"), "for-5433");
    }
    // Readable by others: ignored, as libpq ignores it.
    ::chmod(file.c_str(), 0644);
    EXPECT_EQ(pgpassPasswordFor("host=db.example.org port=5433 dbname=app user=sync" + pf), std::nullopt);
    std::filesystem::remove(file);
    EXPECT_EQ(pgpassPasswordFor("host=db.example.org dbname=app user=sync" + pf), std::nullopt);
}
