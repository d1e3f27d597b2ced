// "Test connection" against the real test server: what the probe reports for a superuser, a role
// that may neither replicate nor read every table, a wrong password and a closed port; the
// connect-time password provider; the loader's refusal of DSNs holding passwords; SQLite files.

#include "core/base/passwordprovider.h"
#include "core/db/sqlitedb.h"
#include "core/engine/endpoints/endpointprobe.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

using namespace driftless;
using namespace driftless::test;

namespace {

core::PgConnection admin()
{
    return core::PgConnection(pgDsn("postgres"));
}

bool anyContains(const std::vector<std::string> &lines, const std::string &needle)
{
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string &l) { return l.find(needle) != std::string::npos; });
}

/// A login role with a password of its own, dropped at scope end with what it was granted.
class TestRole {
public:
    explicit TestRole(const std::string &prefix) : m_name(uniqueName(prefix)), m_password("pw-" + m_name)
    {
        admin().exec("CREATE ROLE " + m_name + " LOGIN PASSWORD '" + m_password + "'");
    }
    ~TestRole()
    {
        try {
            admin().exec("DROP ROLE IF EXISTS " + m_name);
        } catch (...) {
        }
    }
    const std::string &name() const { return m_name; }
    const std::string &password() const { return m_password; }
    std::string dsn(const std::string &db) const
    {
        const auto &s = servers();
        return "host=" + s.pgHost + " port=" + std::to_string(s.pgPort) + " user=" + m_name + " dbname=" + db;
    }

private:
    std::string m_name;
    std::string m_password;
};

/// Restores "no provider" even when an assertion fails half-way.
struct ProviderGuard {
    ~ProviderGuard() { core::setPgPasswordProvider({}); }
};

} // namespace

TEST(EndpointProbe, superuserSeesVersionWalLevelAndEveryTable)
{
    PgTestDb db("probe_su");
    db.exec("CREATE TABLE a (id int PRIMARY KEY); CREATE SCHEMA s; CREATE TABLE s.b (id int);");
    const auto p = core::probePostgres(db.dsn());
    ASSERT_TRUE(p.connected) << p.error;
    EXPECT_EQ(p.serverVersion, db.scalar("SHOW server_version"));
    EXPECT_EQ(p.serverVersionNum / 10000, 15);
    EXPECT_EQ(p.walLevel, "logical");
    EXPECT_EQ(p.user, servers().pgUser);
    EXPECT_TRUE(p.superuser);
    EXPECT_TRUE(p.canReplicate());
    EXPECT_TRUE(p.canCreate);
    EXPECT_EQ(p.tables, 2);
    EXPECT_EQ(p.selectableTables, 2);
    EXPECT_TRUE(p.advice().empty()) << p.advice().front();
    EXPECT_NE(p.server.find(db.name()), std::string::npos);
}

TEST(EndpointProbe, plainRoleCannotReplicateNorReadUngrantedTables)
{
    PgTestDb db("probe_role");
    TestRole role("probe_reader");
    db.exec("CREATE TABLE granted (id int PRIMARY KEY); CREATE TABLE secret (id int PRIMARY KEY);"
            "REVOKE CREATE ON DATABASE " +
            db.name() +
            " FROM PUBLIC; REVOKE CREATE ON SCHEMA public FROM PUBLIC;"
            "GRANT SELECT ON granted TO " +
            role.name());
    const auto p = core::probePostgres(role.dsn(db.name()), role.password());
    ASSERT_TRUE(p.connected) << p.error;
    EXPECT_EQ(p.user, role.name());
    EXPECT_FALSE(p.superuser);
    EXPECT_FALSE(p.replicationRole);
    EXPECT_FALSE(p.canReplicate());
    EXPECT_FALSE(p.canCreate);
    EXPECT_EQ(p.tables, 2);
    EXPECT_EQ(p.selectableTables, 1);
    EXPECT_EQ(p.notSelectable, std::vector<std::string>{"public.secret"});
    const auto advice = p.advice();
    EXPECT_TRUE(anyContains(advice, "ALTER ROLE " + role.name() + " REPLICATION")) << advice.front();
    EXPECT_TRUE(anyContains(advice, "1 of 2 tables are not readable by " + role.name() + " (public.secret)"));
    EXPECT_TRUE(anyContains(advice, "GRANT CREATE ON DATABASE"));
    db.exec("REVOKE ALL ON granted FROM " + role.name());

    // Granted REPLICATION, the role may stream.
    db.exec("ALTER ROLE " + role.name() + " REPLICATION");
    EXPECT_TRUE(core::probePostgres(role.dsn(db.name()), role.password()).canReplicate());
}

TEST(EndpointProbe, wrongPasswordShowsLibpqsMessageAndWhatToDo)
{
    PgTestDb db("probe_pw");
    const auto p = core::probePostgres(db.dsn(), std::string("not-the-password"));
    EXPECT_FALSE(p.connected);
    EXPECT_NE(p.error.find("password authentication failed for user \"" + servers().pgUser + "\""), std::string::npos)
        << p.error;
    EXPECT_EQ(p.code, "28P01");
    EXPECT_NE(p.hint.find("password"), std::string::npos) << p.hint;
    EXPECT_FALSE(p.transient);
    EXPECT_EQ(p.error.find("not-the-password"), std::string::npos);
}

TEST(EndpointProbe, closedPortIsTransientAndSaysToCheckHostAndPort)
{
    // Port 1 on loopback: nothing listens there.
    const auto p = core::probePostgres("host=127.0.0.1 port=1 dbname=x user=x", std::nullopt, 3);
    EXPECT_FALSE(p.connected);
    EXPECT_NE(p.error.find("Connection refused"), std::string::npos) << p.error;
    EXPECT_TRUE(p.transient);
    EXPECT_NE(p.hint.find("host and port"), std::string::npos) << p.hint;
}

TEST(EndpointProbe, passwordProviderAnswersAtConnectTimeForItsDsnOnly)
{
    PgTestDb db("probe_provider");
    TestRole role("probe_provided");
    const std::string dsn = role.dsn(db.name());
    ProviderGuard guard;
    // PGPASSWORD holds the test superuser's password, wrong for this role: only the provider's works.
    EXPECT_FALSE(core::probePostgres(dsn).connected);
    core::setPgPasswordProvider([&](const std::string &asked) -> std::optional<std::string> {
        if (asked == dsn)
            return role.password();
        return std::nullopt;
    });
    const auto p = core::probePostgres(dsn);
    ASSERT_TRUE(p.connected) << p.error;
    EXPECT_EQ(p.user, role.name());
    // Other DSNs still get libpq's own sources (PGPASSWORD here).
    EXPECT_TRUE(core::probePostgres(db.dsn()).connected);
    // An explicit password wins over the provider.
    EXPECT_FALSE(core::probePostgres(dsn, std::string("wrong")).connected);
}

TEST(EndpointProbe, refusesDsnsHoldingPasswordsInTheLoadersWords)
{
    core::Endpoint e;
    e.name = "app";
    e.kind = core::EndpointKind::Postgres;
    e.dsn = "host=db.example port=5432 dbname=app user=sync password=hunter2";
    auto problem = core::endpointProblem(e);
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->rfind("the dsn contains a password; workspace files never hold secrets", 0), 0u) << *problem;
    e.dsn = "postgresql://sync:hunter2@db.example:5432/app";
    problem = core::endpointProblem(e);
    ASSERT_TRUE(problem);
    EXPECT_NE(problem->find("contains a password"), std::string::npos);
    e.dsn = "host=db.example dbname=app user=sync sslmode=verify-full";
    EXPECT_FALSE(core::endpointProblem(e)) << *core::endpointProblem(e);
    e.dsn = "host='unterminated";
    problem = core::endpointProblem(e);
    ASSERT_TRUE(problem);
    EXPECT_NE(problem->find("not a libpq connection string"), std::string::npos) << *problem;
}

TEST(EndpointProbe, sqliteFilesExistingNewAndImpossible)
{
    TempDir dir;
    const auto fresh = core::probeSqlite(dir.file("replica.db"));
    EXPECT_TRUE(fresh.ok) << fresh.error;
    EXPECT_FALSE(fresh.exists);
    EXPECT_FALSE(std::filesystem::exists(dir.file("replica.db"))); // probing never creates it

    {
        core::SqliteDb db(dir.file("existing.db"));
        db.exec("CREATE TABLE plans (id INTEGER PRIMARY KEY); CREATE TABLE events (id INTEGER)");
    }
    const auto existing = core::probeSqlite(dir.file("existing.db"));
    EXPECT_TRUE(existing.ok) << existing.error;
    EXPECT_TRUE(existing.exists);
    EXPECT_EQ(existing.tables, 2);
    EXPECT_EQ(existing.sqliteVersion.substr(0, 2), "3.");

    const auto missing = core::probeSqlite(dir.file("no/such/folder/replica.db"));
    EXPECT_FALSE(missing.ok);
    EXPECT_NE(missing.error.find("does not exist"), std::string::npos) << missing.error;

    test::writeFile(dir.file("notes.txt"), "not a database, just text that is long enough to not be a header");
    const auto notDb = core::probeSqlite(dir.file("notes.txt"));
    EXPECT_FALSE(notDb.ok);
    EXPECT_FALSE(notDb.error.empty());
}
