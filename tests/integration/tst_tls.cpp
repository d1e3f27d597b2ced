// TLS against real servers that speak it (tests/support/tlsservers.sh: a throwaway CA, a server
// certificate for db.driftless.test, localhost and 127.0.0.1, and a second CA that signed
// nothing). A DSN naming db.driftless.test with hostaddr=127.0.0.1 is a host off this machine
// for Driftless (the name decides, as it does for the certificate check) while the packets stay
// on loopback, so the default, the failures and the warnings run for real:
//  - no sslmode: verify-full, which succeeds with the right CA and host name;
//  - a wrong host name, an unknown CA, no CA file, and a server without TLS each fail with their
//    own message and fix;
//  - Test Connection (the probe and its JSON), doctor and /sync/status say what the connection
//    has: encrypted or not, verified or not, and the DSN change when it is weaker off the machine;
//  - MariaDB: the probe's encrypted and verified facts by ssl-mode; an unknown CA, a wrong host
//    name and no CA file each refused in their own words with their fix.

#include "core/db/mysqlconnection.h"
#include "core/db/pgconnection.h"
#include "core/engine/endpoints/endpointcalls.h"
#include "core/engine/endpoints/endpointprobe.h"
#include "core/engine/endpoints/mysqlpreflight.h"
#include "core/model/error.h"
#include "core/model/tableref.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

using namespace driftless;
using namespace driftless::test;
using json = nlohmann::json;

namespace {

/// The TLS Postgres reached by `host` (the name the certificate is checked against) at
/// 127.0.0.1; `extra` adds options (sslmode, sslrootcert).
std::string tlsPgDsn(const std::string &host, const std::string &extra, const std::string &db = "postgres")
{
    return "host=" + host + " hostaddr=127.0.0.1 port=" + std::to_string(tlsServers().pgPort) +
           " user=driftless dbname=" + db + (extra.empty() ? "" : " " + extra);
}

std::string rootCert(const std::string &file)
{
    return "sslrootcert=" + file;
}

/// The connection error for `dsn`; fails the test when it connects.
core::ConnectionError refusal(const std::string &dsn)
{
    try {
        core::PgConnection c(dsn);
    } catch (const core::ConnectionError &e) {
        return e;
    }
    ADD_FAILURE() << "connected: " << dsn;
    return core::ConnectionError(core::ErrorKind::Permanent, "");
}

bool has(const std::string &text, const std::string &needle)
{
    return text.find(needle) != std::string::npos;
}

/// No PGSSLMODE of the machine running the tests may decide these cases.
struct NoSslEnv : ::testing::Test {
    void SetUp() override
    {
        servers(); // exports the shared server's PGPASSWORD
        ::unsetenv("PGSSLMODE");
        ::unsetenv("PGSSLROOTCERT");
    }
};

using Tls = NoSslEnv;

} // namespace

TEST_F(Tls, aHostOffThisMachineIsVerifiedByDefaultAndSucceedsWithTheRightCaAndName)
{
    const auto &t = tlsServers();
    core::PgConnection conn(tlsPgDsn(t.certName, rootCert(t.ca)));
    EXPECT_EQ(conn.tlsChoice().chosenBy, "default");
    EXPECT_FALSE(conn.tlsChoice().loopback);
    const auto tls = conn.tls();
    EXPECT_TRUE(tls.encrypted);
    EXPECT_TRUE(tls.verified);
    EXPECT_TRUE(tls.hostVerified);
    EXPECT_EQ(tls.mode, "verify-full");
    EXPECT_TRUE(tls.protocol.starts_with("TLSv1.")) << tls.protocol;
    EXPECT_FALSE(tls.cipher.empty());
    // The server agrees it is TLS.
    EXPECT_EQ(conn.exec("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").text(0, 0), "t");
    // localhost is in the certificate too, and on this machine nothing is defaulted.
    core::PgConnection local("host=localhost port=" + std::to_string(t.pgPort) +
                             " user=driftless dbname=postgres sslmode=verify-full " + rootCert(t.ca));
    EXPECT_TRUE(local.tls().hostVerified);
    EXPECT_EQ(local.tlsChoice().chosenBy, "dsn");
}

TEST_F(Tls, aWrongHostNameSaysWhichNameWasAskedForAndWhatTheCertificateHolds)
{
    const auto &t = tlsServers();
    const auto e = refusal(tlsPgDsn("wrong.driftless.test", rootCert(t.ca)));
    const std::string msg = e.what();
    EXPECT_TRUE(has(msg, "is for \"db.driftless.test\"")) << msg;
    EXPECT_TRUE(has(msg, "not for \"wrong.driftless.test\", the host name the dsn connects by")) << msg;
    EXPECT_TRUE(has(e.hint(), "host=db.driftless.test")) << e.hint();
    EXPECT_TRUE(has(e.hint(), "sslmode=verify-ca")) << e.hint();
    EXPECT_FALSE(e.isTransient());
    EXPECT_FALSE(has(msg, "CA this machine trusts")) << msg;
}

TEST_F(Tls, anUnknownCaSaysToSetSslrootcert)
{
    const auto &t = tlsServers();
    const auto e = refusal(tlsPgDsn(t.certName, rootCert(t.otherCa)));
    const std::string msg = e.what();
    EXPECT_TRUE(has(msg, "not signed by a CA this machine trusts")) << msg;
    EXPECT_TRUE(has(msg, t.otherCa + " does not hold its CA")) << msg;
    EXPECT_TRUE(has(e.hint(), "set sslrootcert=FILE")) << e.hint();
    EXPECT_TRUE(has(e.hint(), "~/.postgresql/root.crt")) << e.hint();
    EXPECT_FALSE(has(msg, "host name")) << msg;

    // No CA file at all: libpq's root.crt (here named by sslrootcert) is missing.
    const auto none = refusal(tlsPgDsn(t.certName, rootCert("/nonexistent/driftless-root.crt")));
    EXPECT_TRUE(has(none.what(), "no CA certificate to verify the server's TLS certificate with")) << none.what();
    EXPECT_TRUE(has(none.what(), "verify-full is Driftless's default")) << none.what();
    EXPECT_TRUE(has(none.hint(), "~/.postgresql/root.crt")) << none.hint();
}

TEST_F(Tls, aServerWithoutTlsIsRefusedWhenVerifyFullIsRequired)
{
    // The shared test server offers no TLS.
    const auto &s = servers();
    const std::string dsn = "host=" + tlsServers().certName + " hostaddr=127.0.0.1 port=" + std::to_string(s.pgPort) +
                            " user=" + s.pgUser + " dbname=postgres " + rootCert(tlsServers().ca);
    const auto e = refusal(dsn);
    EXPECT_TRUE(has(e.what(), "the server does not offer TLS, and sslmode=verify-full requires it")) << e.what();
    EXPECT_TRUE(has(e.what(), "Driftless's default")) << e.what();
    EXPECT_TRUE(has(e.hint(), "ssl = on")) << e.hint();
    EXPECT_TRUE(has(e.hint(), "sslmode=disable")) << e.hint();
    // Chosen in the DSN, a plain connection is still possible.
    core::PgConnection plain(dsn + " sslmode=disable");
    EXPECT_FALSE(plain.tls().encrypted);
    EXPECT_EQ(plain.tls().mode, "disable");
}

TEST_F(Tls, testConnectionSaysEncryptedAndVerifiedOrWhatIsMissing)
{
    const auto &t = tlsServers();
    auto full = core::probePostgres(tlsPgDsn(t.certName, rootCert(t.ca)));
    ASSERT_TRUE(full.connected) << full.error;
    EXPECT_TRUE(full.tls.encrypted && full.tls.verified && full.tls.hostVerified);
    EXPECT_EQ(full.tls.mode, "verify-full");
    EXPECT_EQ(full.tlsChosenBy, "default");
    EXPECT_TRUE(full.tlsWarning.empty()) << full.tlsWarning;

    auto require = core::probePostgres(tlsPgDsn(t.certName, "sslmode=require"));
    ASSERT_TRUE(require.connected) << require.error;
    EXPECT_TRUE(require.tls.encrypted);
    EXPECT_FALSE(require.tls.verified);
    EXPECT_TRUE(has(require.tlsWarning, "not verified (require, chosen by the dsn)")) << require.tlsWarning;
    EXPECT_TRUE(has(require.tlsFix, tlsPgDsn(t.certName, "sslmode=verify-full"))) << require.tlsFix;
    bool advised = false;
    for (const auto &a : require.advice())
        advised = advised || has(a, "sslmode=verify-full");
    EXPECT_TRUE(advised);

    auto disable = core::probePostgres(tlsPgDsn(t.certName, "sslmode=disable"));
    ASSERT_TRUE(disable.connected) << disable.error;
    EXPECT_FALSE(disable.tls.encrypted);
    EXPECT_TRUE(has(disable.tlsWarning, "not encrypted (disable")) << disable.tlsWarning;

    // The control API's probe JSON carries the same facts, and reads back.
    core::Endpoint e;
    e.name = "tls";
    e.dsn = tlsPgDsn(t.certName, "sslmode=require");
    const json j = core::probeJsonValue(core::probeEndpoint(e));
    EXPECT_EQ(j["postgres"]["tls"]["encrypted"], true) << j.dump();
    EXPECT_EQ(j["postgres"]["tls"]["verified"], false) << j.dump();
    EXPECT_EQ(j["postgres"]["tls"]["mode"], "require") << j.dump();
    EXPECT_EQ(j["postgres"]["loopback"], false);
    EXPECT_FALSE(j["postgres"]["tls_warning"].get<std::string>().empty());
    const auto back = core::probeFromJson(j);
    EXPECT_TRUE(back.postgres.tls.encrypted);
    EXPECT_FALSE(back.postgres.tls.verified);
    EXPECT_EQ(back.postgres.tlsFix, require.tlsFix);

    // A failure says why in the probe too.
    auto wrong = core::probePostgres(tlsPgDsn("wrong.driftless.test", rootCert(t.ca)));
    EXPECT_FALSE(wrong.connected);
    EXPECT_TRUE(has(wrong.error, "not for \"wrong.driftless.test\"")) << wrong.error;
    EXPECT_TRUE(has(wrong.hint, "verify-ca")) << wrong.hint;
}

TEST_F(Tls, doctorWarnsAboutRequireAndDisableWithTheDsnToUse)
{
    const auto &t = tlsServers();
    const std::string db = uniqueName("tls_doc");
    {
        core::PgConnection admin(tlsPgDsn(t.certName, rootCert(t.ca)));
        admin.exec("CREATE DATABASE " + core::quoteIdent(db));
    }
    core::PgConnection(tlsPgDsn(t.certName, rootCert(t.ca), db)).exec("CREATE TABLE t (id int PRIMARY KEY)");
    TempDir dir;
    const std::string state = dir.file("workspace.db");
    writeFile(dir.file("ws.yaml"),
              "endpoints:\n"
              "  app: { kind: postgres, dsn: \"" +
                  tlsPgDsn(t.certName, "sslmode=require", db) +
                  "\" }\n"
                  "  dw: { kind: postgres, dsn: \"" +
                  tlsPgDsn(t.certName, "sslmode=disable", db) +
                  "\" }\n"
                  "  good: { kind: postgres, dsn: \"" +
                  tlsPgDsn(t.certName, rootCert(t.ca), db) +
                  "\" }\n"
                  "pipelines:\n"
                  "  - name: weak\n    source: app\n    target: dw\n    target_schema: copy\n    tables:\n"
                  "      - { table: public.t, strategy: full_refresh }\n"
                  "  - name: strong\n    source: good\n    target: dw\n    target_schema: copy2\n    tables:\n"
                  "      - { table: public.t, strategy: full_refresh }\n");
    auto applied = runCli({"--state", state, "apply", dir.file("ws.yaml")});
    ASSERT_EQ(applied.exitCode, 0) << applied.err;
    EXPECT_TRUE(has(applied.err, "warning: weak: endpoint app: connections to endpoint app are encrypted, but the "
                                 "server's certificate is not verified"))
        << applied.err;

    auto r = runCli({"--state", state, "doctor"});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "warn   weak: endpoint app: connections to endpoint app are encrypted, but the server's "
                           "certificate is not verified (require, chosen by the dsn)"))
        << r.out;
    EXPECT_TRUE(has(r.out, "change endpoint app's dsn to: " + tlsPgDsn(t.certName, "sslmode=verify-full", db)))
        << r.out;
    EXPECT_TRUE(has(r.out, "warn   weak: endpoint dw: connections to endpoint dw are not encrypted (disable")) << r.out;
    EXPECT_TRUE(has(r.out, "change endpoint dw's dsn to: " + tlsPgDsn(t.certName, "sslmode=verify-full", db))) << r.out;
    EXPECT_TRUE(has(r.out, "ok     strong: endpoint good: TLS: TLSv1.")) << r.out;
    EXPECT_TRUE(has(r.out, "certificate and host name verified (verify-full)")) << r.out;
    EXPECT_FALSE(has(r.out, "endpoint good: connections")) << r.out;

    core::PgConnection admin(tlsPgDsn(t.certName, rootCert(t.ca)));
    admin.exec("DROP DATABASE IF EXISTS " + core::quoteIdent(db) + " WITH (FORCE)");
}

TEST_F(Tls, syncStatusSaysPerEndpointWhetherItIsEncryptedAndVerified)
{
    const auto &t = tlsServers();
    const std::string db = uniqueName("tls_st");
    {
        core::PgConnection admin(tlsPgDsn(t.certName, rootCert(t.ca)));
        admin.exec("CREATE DATABASE " + core::quoteIdent(db));
    }
    core::PgConnection(tlsPgDsn(t.certName, rootCert(t.ca), db))
        .exec("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2)");
    PgTestDb dst("tls_dst");
    TempDir dir;
    const std::string state = dir.file("workspace.db");
    const auto &s = servers();
    writeFile(dir.file("ws.yaml"), "endpoints:\n"
                                   "  app: { kind: postgres, dsn: \"" +
                                       tlsPgDsn(t.certName, rootCert(t.ca), db) +
                                       "\" }\n"
                                       "  dw: { kind: postgres, dsn: \"host=127.0.0.1 port=" +
                                       std::to_string(s.pgPort) + " user=" + s.pgUser + " dbname=" + dst.name() +
                                       "\" }\n"
                                       "  lite: { kind: sqlite, path: \"" +
                                       dir.file("unused.db") +
                                       "\" }\n"
                                       "pipelines:\n"
                                       "  - name: tls_status\n    source: app\n    target: dw\n    tables:\n"
                                       "      - { table: public.t, strategy: full_refresh, every: 1h }\n");
    auto applied = runCli({"--state", state, "apply", dir.file("ws.yaml")});
    ASSERT_EQ(applied.exitCode, 0) << applied.err;

    const std::string log = dir.file("serve.log");
    const int pid = spawnCli({"--state", state, "serve", "--listen", "127.0.0.1:0"}, {}, log);
    int port = 0;
    const std::regex re("serving http://127\\.0\\.0\\.1:([0-9]+)/sync/status");
    for (int i = 0; i < 1200 && port == 0; ++i) {
        std::smatch m;
        const std::string out = readFile(log);
        if (std::regex_search(out, m, re))
            port = std::stoi(m[1]);
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_GT(port, 0) << readFile(log);
    // Until the first pass has connected to both ends (generous: a loaded machine is slow).
    json app, dw;
    bool seen = false;
    for (int i = 0; i < 1200 && !seen; ++i) {
        const auto r = httpRequest(port, "GET", "/sync/status");
        ASSERT_EQ(r.status, 200) << r.body;
        const json st = json::parse(r.body);
        ASSERT_TRUE(st.contains("tables")) << "existing keys stay";
        for (const auto &e : st["endpoints"]) {
            EXPECT_NE(e["name"], "lite") << "a SQLite file has no connection to protect";
            if (e["name"] == "app")
                app = e;
            if (e["name"] == "dw")
                dw = e;
        }
        seen = app.is_object() && dw.is_object() && !app["tls"].is_null() && !dw["tls"].is_null();
        if (!seen)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid, SIGTERM);
    waitPid(pid, 60);
    ASSERT_TRUE(seen) << app.dump() << dw.dump() << readFile(log);
    EXPECT_EQ(app["kind"], "postgres");
    EXPECT_EQ(app["loopback"], false);
    EXPECT_EQ(app["tls"]["encrypted"], true) << app.dump();
    EXPECT_EQ(app["tls"]["verified"], true) << app.dump();
    EXPECT_EQ(app["tls"]["host_verified"], true) << app.dump();
    EXPECT_EQ(app["tls"]["mode"], "verify-full") << app.dump();
    EXPECT_EQ(app["tls"]["chosen_by"], "default") << app.dump();
    EXPECT_TRUE(app["tls_warning"].is_null()) << app.dump();
    EXPECT_EQ(dw["loopback"], true);
    EXPECT_EQ(dw["tls"]["encrypted"], false) << dw.dump();
    EXPECT_EQ(dw["tls"]["verified"], false) << dw.dump();
    EXPECT_EQ(dw["tls"]["mode"], "prefer") << dw.dump();
    EXPECT_TRUE(dw["tls_warning"].is_null()) << "on this machine: " << dw.dump();

    core::PgConnection admin(tlsPgDsn(t.certName, rootCert(t.ca)));
    admin.exec("DROP DATABASE IF EXISTS " + core::quoteIdent(db) + " WITH (FORCE)");
}

TEST_F(Tls, mariadbProbeSaysEncryptedAndVerifiedByTheSslModeInForce)
{
    const auto &t = tlsServers();
    const std::string base = "mysql://" + t.myUser + "@127.0.0.1:" + std::to_string(t.myPort) + "/";
    auto verified = core::probeMysql(base + "?ssl-mode=verify_identity&ssl-ca=" + t.ca, t.myPassword);
    ASSERT_TRUE(verified.connected) << verified.error;
    EXPECT_TRUE(verified.tls.encrypted);
    EXPECT_TRUE(verified.tls.verified);
    EXPECT_TRUE(verified.tls.hostVerified);
    EXPECT_EQ(verified.tls.mode, "verify_identity");
    EXPECT_FALSE(verified.tls.cipher.empty());
    EXPECT_TRUE(verified.tls.protocol.starts_with("TLSv1.")) << verified.tls.protocol;

    auto required = core::probeMysql(base + "?ssl-mode=required", t.myPassword);
    ASSERT_TRUE(required.connected) << required.error;
    EXPECT_TRUE(required.tls.encrypted);
    EXPECT_FALSE(required.tls.verified);
    EXPECT_TRUE(required.tlsWarning.empty()) << "on this machine: " << required.tlsWarning;

    auto plain = core::probeMysql(base + "?ssl-mode=disabled", t.myPassword);
    ASSERT_TRUE(plain.connected) << plain.error;
    EXPECT_FALSE(plain.tls.encrypted);
    EXPECT_FALSE(plain.tls.verified);
    EXPECT_TRUE(plain.tls.cipher.empty());

    const json j = core::probeJsonValue([&] {
        core::EndpointProbe p;
        p.kind = core::EndpointKind::Mysql;
        p.mysql = verified;
        return p;
    }());
    EXPECT_EQ(j["mysql"]["tls"]["encrypted"], true) << j.dump();
    EXPECT_EQ(j["mysql"]["tls"]["verified"], true) << j.dump();
    EXPECT_EQ(j["mysql"]["tls"]["mode"], "verify_identity") << j.dump();

    auto unknown = core::probeMysql(base + "?ssl-mode=verify_identity&ssl-ca=" + t.otherCa, t.myPassword);
    EXPECT_FALSE(unknown.connected);
    EXPECT_FALSE(unknown.hint.empty()) << unknown.error;
}

TEST_F(Tls, mariadbUnknownCaAndWrongHostNameFailWithTheirOwnMessageAndFix)
{
    const auto &t = tlsServers();
    const std::string port = std::to_string(t.myPort);
    // The server's certificate names db.driftless.test, localhost and 127.0.0.1. "127.1" reaches
    // the same address but is none of those names (Connector/C checks it as a name).
    auto refused = [&](const std::string &dsn) {
        try {
            core::MysqlConnection c(dsn);
        } catch (const core::ConnectionError &e) {
            return e;
        }
        ADD_FAILURE() << "connected: " << dsn;
        return core::ConnectionError(core::ErrorKind::Permanent, "");
    };
    // The password in the DSN (these connections are not a workspace's), so no MYSQL_PWD changes.
    const std::string user = "mysql://" + t.myUser + ":" + t.myPassword + "@";

    // The right CA and name connect (what the two failures below differ from).
    core::MysqlConnection good(user + "127.0.0.1:" + port + "/?ssl-mode=verify_identity&ssl-ca=" + t.ca);
    EXPECT_TRUE(good.tls().hostVerified);

    const auto unknown = refused(user + "127.0.0.1:" + port + "/?ssl-mode=verify_identity&ssl-ca=" + t.otherCa);
    EXPECT_EQ(unknown.code(), "2026");
    EXPECT_TRUE(has(unknown.what(), "not signed by a CA this machine trusts: " + t.otherCa +
                                        " (ssl-ca) does not "
                                        "hold its CA"))
        << unknown.what();
    EXPECT_TRUE(has(unknown.hint(), "set ssl-ca=FILE in the dsn to the CA certificate")) << unknown.hint();
    EXPECT_FALSE(has(unknown.what(), "does not name")) << unknown.what();

    const auto wrongName = refused(user + "127.1:" + port + "/?ssl-mode=verify_identity&ssl-ca=" + t.ca);
    EXPECT_EQ(wrongName.code(), "2026");
    EXPECT_TRUE(has(wrongName.what(), "signed by a trusted CA but does not name \"127.1\", the host the dsn "
                                      "connects by"))
        << wrongName.what();
    EXPECT_TRUE(has(wrongName.hint(), "connect by a name the certificate holds")) << wrongName.hint();
    EXPECT_TRUE(has(wrongName.hint(), "subjectAltName")) << wrongName.hint();
    EXPECT_FALSE(has(wrongName.what(), "CA this machine trusts")) << wrongName.what();

    // No ssl-ca at all, where the mode verifies: said as such.
    const auto none = refused(user + "127.0.0.1:" + port + "/?ssl-mode=verify_identity");
    EXPECT_TRUE(has(none.what(), "the dsn gives no ssl-ca")) << none.what();
    EXPECT_TRUE(has(none.hint(), "ssl-ca=FILE")) << none.hint();

    // A CA file that is not there: which file, not a CA problem.
    const auto missing = refused(user + "127.0.0.1:" + port + "/?ssl-mode=verify_identity&ssl-ca=/nonexistent/ca.pem");
    EXPECT_TRUE(has(missing.what(), "cannot be read (ssl-ca /nonexistent/ca.pem)")) << missing.what();
    EXPECT_TRUE(has(missing.hint(), "check the path in ssl-ca")) << missing.hint();

    // Test Connection shows the same words.
    auto probed = core::probeMysql(
        "mysql://" + t.myUser + "@127.1:" + port + "/?ssl-mode=verify_identity&ssl-ca=" + t.ca, t.myPassword);
    EXPECT_FALSE(probed.connected);
    EXPECT_TRUE(has(probed.error, "does not name \"127.1\"")) << probed.error;
    EXPECT_TRUE(has(probed.hint, "subjectAltName")) << probed.hint;
}
