// SSH tunnels per endpoint, against an OpenSSH server of the test's own (tests/support/sshserver.sh:
// sshd on a free loopback port with its own ed25519 host key and a client key it accepts):
//  - an unknown host is refused with the trust-host command and the fingerprint; trust-host asks
//    (and off a terminal without --yes changes nothing); once trusted, a table syncs through the
//    tunnel, and sshd's log shows the forwarding channel;
//  - a rotated host key is refused with both fingerprints, by the sync and by trust-host;
//  - CDC through the tunnel while a bounded writer writes: sshd is killed (the engine cannot sync,
//    the alert says "tunnel down"), started again, and the target catches up with nothing lost;
//  - a MariaDB endpoint through a tunnel;
//  - a ~/.pgpass line for the database's own host applies through the tunnel;
//  - an engine killed with SIGKILL leaves an ssh behind, which the next start stops;
//  - through a jump host: the jump host's key, then the server's behind it, each refused until
//    trusted (trust-host --jump, the API's "jump": true), then a table syncs over both hops;
//  - an identity file protected by a passphrase: refused with what to do, opened only by the
//    right passphrase from the provider (the keychain's), which no command line shows.
// The shared Postgres and MariaDB listen on loopback TCP, which the tunnel forwards to: the sshd
// log and the outage in the CDC case show the engine's connections really take the tunnel.

#include "core/agent/agentapi.h"
#include "core/base/passwordprovider.h"
#include "core/db/mysqlconnection.h"
#include "core/db/pgconnection.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <thread>

using namespace driftless;
using namespace driftless::test;

namespace {

/// How often this file's conditions are asked again.
constexpr std::chrono::milliseconds kPoll{250};

std::string script()
{
    return std::string(DRIFTLESS_SOURCE_DIR) + "/tests/support/sshserver.sh";
}

bool has(const std::string &text, const std::string &needle)
{
    return text.find(needle) != std::string::npos;
}

/// What a shell command prints on stdout.
std::string output(const std::string &cmd)
{
    std::string out;
    if (FILE *p = ::popen(cmd.c_str(), "r")) {
        char buf[512];
        while (std::fgets(buf, sizeof buf, p))
            out += buf;
        ::pclose(p);
    }
    return out;
}

/// `SHA256:...` of a public key file, as ssh-keygen prints it.
std::string fingerprintOf(const std::string &pubFile)
{
    const std::string line = output("ssh-keygen -lf '" + pubFile + "'");
    const auto start = line.find("SHA256:");
    if (start == std::string::npos)
        return "(no fingerprint for " + pubFile + ")";
    return line.substr(start, line.find(' ', start) - start);
}

struct SshTunnel : ::testing::Test {
    static inline std::string sshDir;
    static inline std::map<std::string, std::string> sshEnv;

    static bool sshd(const std::string &command)
    {
        const std::string cmd = "bash " + script() + " " + command + " " + sshDir + " >>" + sshDir + ".log 2>&1";
        return std::system(cmd.c_str()) == 0;
    }

    static void SetUpTestSuite()
    {
        servers(); // exports PGPASSWORD
        myDsn(""); // exports MYSQL_PWD
        sshDir = (std::filesystem::temp_directory_path() / uniqueName("driftless-sshd")).string();
        if (!sshd("start"))
            return;
        sshEnv = readEnvFile(sshDir + "/env");
    }
    static void TearDownTestSuite()
    {
        sshd("remove");
        std::remove((sshDir + ".log").c_str());
    }

    TempDir dir;
    std::string state = dir.file("workspace.db");
    /// The CLI's environment: a HOME of its own, so no ~/.ssh/known_hosts of the machine counts.
    std::map<std::string, std::string> env{{"HOME", dir.path().string()}};
    std::vector<int> spawned;

    void SetUp() override
    {
        ASSERT_FALSE(sshEnv["SSH_PORT"].empty()) << "sshserver.sh did not start: " << readFile(sshDir + ".log");
    }
    void TearDown() override
    {
        for (int pid : spawned) {
            ::kill(pid, SIGKILL);
            waitPid(pid, 30);
        }
        if (!std::filesystem::exists(sshDir + "/sshd.pid"))
            sshd("start"); // a test that stopped it must not leave the next without one
    }

    std::string sshYaml() const
    {
        return "{ host: 127.0.0.1, port: " + sshEnv.at("SSH_PORT") + ", user: " + sshEnv.at("SSH_USER") +
               ", identity_file: \"" + sshEnv.at("SSH_KEY") + "\" }";
    }
    CliResult cli(const std::vector<std::string> &args, int timeout = 300)
    {
        std::vector<std::string> full{"--state", state};
        full.insert(full.end(), args.begin(), args.end());
        return runCli(full, env, timeout);
    }
    void apply(const std::string &yaml)
    {
        writeFile(dir.file("ws.yaml"), yaml);
        auto r = cli({"apply", "--no-check", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    void trust(const std::string &endpoint)
    {
        auto r = cli({"trust-host", endpoint, "--yes"});
        ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    }
    std::string sshdLog() const { return readFile(sshEnv.at("SSH_LOG")); }
};

std::string pgTableHash(const PgTestDb &db, const std::string &table)
{
    return db.scalar(
        "SELECT count(*) || ' ' || coalesce(md5(string_agg(id || ':' || note, ',' ORDER BY id)), '') FROM " + table);
}

/// Count, sum of keys and of note lengths: the same text from MariaDB and Postgres for equal rows.
std::string pgTableSums(const PgTestDb &db, const std::string &table)
{
    return db.scalar("SELECT count(*) || ' ' || sum(id) || ' ' || sum(char_length(note)) FROM " + table);
}

} // namespace

TEST_F(SshTunnel, anUnknownHostIsRefusedUntilTrustedThenATableSyncsThroughTheTunnel)
{
    PgTestDb src("ssh_src");
    PgTestDb dst("ssh_dst");
    src.exec("CREATE TABLE items (id int PRIMARY KEY, note text NOT NULL);"
             "INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 500) g");
    const std::string yaml = "endpoints:\n"
                             "  src: { kind: postgres, dsn: \"" +
                             src.dsn() + "\", ssh: " + sshYaml() +
                             " }\n"
                             "  dst: { kind: postgres, dsn: \"" +
                             dst.dsn() +
                             "\" }\n"
                             "pipelines:\n"
                             "  - name: " +
                             uniqueName("sshfr") +
                             "\n    source: src\n    target: dst\n"
                             "    tables:\n      - { table: public.items, strategy: full_refresh }\n";
    const std::string fingerprint = fingerprintOf(sshEnv.at("SSH_HOST_KEY"));

    // apply's checks connect through the tunnel: refused, with what to run.
    writeFile(dir.file("ws.yaml"), yaml);
    auto r = cli({"apply", dir.file("ws.yaml")});
    EXPECT_NE(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.out + r.err, "is not trusted yet")) << r.out << r.err;
    EXPECT_TRUE(has(r.out + r.err, "driftless-cli trust-host src")) << r.out << r.err;
    apply(yaml);

    r = cli({"run", "--once"});
    EXPECT_NE(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "the SSH host key of 127.0.0.1:" + sshEnv.at("SSH_PORT") + " is not trusted yet")) << r.err;
    EXPECT_TRUE(has(r.err, "driftless-cli trust-host src")) << r.err;
    EXPECT_TRUE(has(r.err, fingerprint)) << "the fingerprint to check: " << fingerprint << "\n" << r.err;
    EXPECT_EQ(src.scalar("SELECT count(*) FROM items"), "500");

    // Off a terminal without --yes: the fingerprint is shown, nothing is trusted.
    r = cli({"trust-host", "src"});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_TRUE(has(r.out, fingerprint + " (ED25519)")) << r.out;
    EXPECT_TRUE(has(r.err, "trust-host src --yes")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(state + ".known_hosts"));

    r = cli({"trust-host", "src", "--yes"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.out, fingerprint)) << r.out;
    EXPECT_TRUE(has(readFile(state + ".known_hosts"), "[127.0.0.1]:" + sshEnv.at("SSH_PORT") + " ssh-ed25519 "));
    r = cli({"trust-host", "src", "--yes"});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "already trusted")) << r.out;

    const auto channelsBefore = sshdLog().size();
    r = cli({"run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(pgTableHash(dst, "public.items"), pgTableHash(src, "public.items"));
    const std::string log = sshdLog().substr(channelsBefore);
    EXPECT_TRUE(has(log, "direct-tcpip")) << "no forwarding channel in sshd's log:\n" << log;
    EXPECT_TRUE(has(log, "port " + std::to_string(servers().pgPort))) << log;

    // Test Connection (the probe) goes through the tunnel too; status names it.
    r = cli({"doctor", "--endpoint", "src"});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
}

TEST_F(SshTunnel, aPgpassLineWrittenForTheDatabasesOwnHostAppliesThroughTheTunnel)
{
    // Through the tunnel libpq connects to a socket folder, for which it would only read a
    // ~/.pgpass line for localhost; the DBA's line names the database's host and port.
    PgTestDb src("ssh_pgpass");
    src.exec("CREATE TABLE items (id int PRIMARY KEY, note text NOT NULL); INSERT INTO items VALUES (1, 'one')");
    apply("endpoints:\n"
          "  src: { kind: postgres, dsn: \"" +
          src.dsn() + "\", ssh: " + sshYaml() +
          " }\n"
          "  lite: { kind: sqlite, path: \"" +
          dir.file("out.db") +
          "\" }\n"
          "pipelines:\n"
          "  - name: " +
          uniqueName("sshpass") +
          "\n    source: src\n    target: lite\n"
          "    tables:\n      - { table: public.items, strategy: full_refresh }\n");
    trust("src");
    const auto &s = servers();
    ASSERT_NE(s.pgHost, "localhost"); // else libpq's own lookup would match and prove nothing
    const std::string pgpass = dir.file("pgpass");
    writeFile(pgpass, "# comment\n"
                      "otherhost:" +
                          std::to_string(s.pgPort) + ":*:" + s.pgUser + ":wrong\n" + s.pgHost + ":" +
                          std::to_string(s.pgPort) + ":*:" + s.pgUser + ":" + s.pgPassword + "\n");
    ::chmod(pgpass.c_str(), 0600);
    auto viaPgpass = env;
    viaPgpass["-PGPASSWORD"] = "";
    viaPgpass["PGPASSFILE"] = pgpass;
    auto r = runCli({"--state", state, "run", "--once"}, viaPgpass, 300);
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(output("sqlite3 '" + dir.file("out.db") + "' 'SELECT note FROM items'"), "one\n");

    // A file others may read is ignored, as libpq ignores it: the password is missing.
    ::chmod(pgpass.c_str(), 0644);
    src.exec("INSERT INTO items VALUES (2, 'two')");
    r = runCli({"--state", state, "run", "--once"}, viaPgpass, 300);
    EXPECT_NE(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "password")) << r.err;
}

TEST_F(SshTunnel, anEngineKilledWithSigkillLeavesNoTunnelOpenAfterTheNextStart)
{
    PgTestDb src("ssh_kill");
    src.exec("CREATE TABLE items (id int PRIMARY KEY, note text NOT NULL); INSERT INTO items VALUES (1, 'one')");
    apply("endpoints:\n"
          "  src: { kind: postgres, dsn: \"" +
          src.dsn() + "\", ssh: " + sshYaml() +
          " }\n"
          "  lite: { kind: sqlite, path: \"" +
          dir.file("out.db") +
          "\" }\n"
          "pipelines:\n"
          "  - name: " +
          uniqueName("sshkill") +
          "\n    source: src\n    target: lite\n"
          "    tables:\n      - { table: public.items, strategy: full_refresh, every: 1s }\n");
    trust("src");
    // A runtime folder of its own, so only this test's tunnels are in it.
    const std::string runtime = dir.file("rt");
    std::filesystem::create_directories(runtime);
    ::chmod(runtime.c_str(), 0700);
    auto withRuntime = env;
    withRuntime["XDG_RUNTIME_DIR"] = runtime;
    const std::string tunnels = runtime + "/driftless";

    const int pid = spawnCli({"--state", state, "run"}, withRuntime, dir.file("run.log"));
    spawned.push_back(pid);
    const std::string folder = tunnels + "/src." + std::to_string(pid);
    ASSERT_TRUE(waitFor(
        [&] {
            return output("sqlite3 '" + dir.file("out.db") + "' 'SELECT note FROM items' 2>/dev/null") == "one\n" &&
                   std::filesystem::exists(folder + "/ssh.pid");
        },
        120, kPoll))
        << readFile(dir.file("run.log"));
    const int ssh = std::stoi(readFile(folder + "/ssh.pid"));
    ASSERT_GT(ssh, 0);
    ::kill(pid, SIGKILL);
    waitPid(pid, 30);
    spawned.clear();
    // ssh outlives the engine killed under it (nothing can stop it then), holding its socket.
    ASSERT_EQ(::kill(ssh, 0), 0) << "ssh went with the engine; nothing left to sweep";
    EXPECT_TRUE(std::filesystem::exists(folder));

    // The next process that opens a tunnel stops that ssh and removes the folder.
    auto r = runCli({"--state", state, "run", "--once"}, withRuntime, 300);
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_FALSE(std::filesystem::exists(folder));
    EXPECT_TRUE(waitFor(
        [&] {
            const std::string st = readFile("/proc/" + std::to_string(ssh) + "/stat");
            const auto close = st.rfind(')');
            return st.empty() || (close != std::string::npos && close + 2 < st.size() && st[close + 2] == 'Z');
        },
        60, kPoll))
        << "ssh " << ssh << " is still running";
    // Its own folder went when it stopped: nothing is left.
    EXPECT_TRUE(std::filesystem::is_empty(tunnels)) << output("ls -la '" + tunnels + "'");
}

TEST_F(SshTunnel, theJumpHostAndTheServerBehindItAreEachTrustedBeforeATableSyncs)
{
    // The sshd is both the jump host (as 127.0.0.1) and the server behind it (as localhost, a
    // name of its own in known_hosts). ssh-keyscan cannot hop: trust-host asks ssh through the
    // jump, and the jump host is checked as strictly as the server, against the same files.
    PgTestDb src("ssh_jump");
    src.exec("CREATE TABLE items (id int PRIMARY KEY, note text NOT NULL); INSERT INTO items VALUES (1, 'one')");
    const std::string port = sshEnv.at("SSH_PORT");
    const std::string user = sshEnv.at("SSH_USER");
    apply("endpoints:\n"
          "  src: { kind: postgres, dsn: \"" +
          src.dsn() + "\", ssh: { host: localhost, port: " + port + ", user: " + user + ", identity_file: \"" +
          sshEnv.at("SSH_KEY") + "\", jump: \"" + user + "@127.0.0.1:" + port +
          "\" } }\n"
          "  lite: { kind: sqlite, path: \"" +
          dir.file("out.db") +
          "\" }\n"
          "pipelines:\n"
          "  - name: " +
          uniqueName("sshjump") +
          "\n    source: src\n    target: lite\n"
          "    tables:\n      - { table: public.items, strategy: full_refresh }\n");
    const std::string fingerprint = fingerprintOf(sshEnv.at("SSH_HOST_KEY"));
    const std::string knownHosts = state + ".known_hosts";

    // The jump host's key is not trusted: the tunnel and trust-host say so, and what to run.
    auto r = cli({"run", "--once"});
    EXPECT_NE(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "the SSH host key of the jump host 127.0.0.1:" + port + " is not trusted yet (it offers " +
                               fingerprint + " (ED25519))"))
        << r.err;
    EXPECT_TRUE(has(r.err, "driftless-cli trust-host src --jump")) << r.err;
    r = cli({"trust-host", "src", "--yes"});
    EXPECT_NE(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "through the jump host")) << r.err;
    EXPECT_TRUE(has(r.err, "trust-host ENDPOINT --jump")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(knownHosts));

    r = cli({"trust-host", "src", "--jump"});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "the jump host 127.0.0.1:" + port + " offers")) << r.out;
    EXPECT_TRUE(has(r.err, "trust-host src --jump --yes")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(knownHosts));

    // The app trusts the jump host through the API with "jump": true, only the key confirmed.
    driftless::core::setSshKnownHostsFile(knownHosts);
    const nlohmann::json endpoint = {{"name", "src"},
                                     {"kind", "postgres"},
                                     {"dsn", src.dsn()},
                                     {"ssh",
                                      {{"host", "localhost"},
                                       {"port", std::stoi(port)},
                                       {"user", user},
                                       {"identity_file", sshEnv.at("SSH_KEY")},
                                       {"jump", user + "@127.0.0.1:" + port}}}};
    auto post = [](const nlohmann::json &body) {
        driftless::core::ApiRequest req;
        req.method = "POST";
        req.path = "/api/v1/trust-host";
        req.body = body.dump();
        return driftless::core::AgentApi::handleStateless(req);
    };
    auto probe = [&] {
        driftless::core::ApiRequest req;
        req.method = "POST";
        req.path = "/api/v1/probe";
        req.body = nlohmann::json{{"endpoint", endpoint}}.dump();
        return driftless::core::AgentApi::handleStateless(req).body;
    };
    const std::string refusal = probe();
    EXPECT_TRUE(has(refusal, "the SSH host key of the jump host 127.0.0.1:" + port + " is not trusted yet (it offers " +
                                 fingerprint + " (ED25519))"))
        << refusal;
    auto api = post({{"endpoint", endpoint}, {"fingerprint", "SHA256:notTheJumpHostsKey"}, {"jump", true}});
    EXPECT_EQ(api.status, 409) << api.body;
    EXPECT_FALSE(std::filesystem::exists(knownHosts));
    api = post({{"endpoint", endpoint}, {"fingerprint", fingerprint}, {"jump", true}});
    ASSERT_EQ(api.status, 200) << api.body;
    EXPECT_TRUE(has(readFile(knownHosts), "[127.0.0.1]:" + port + " ssh-ed25519 ")) << readFile(knownHosts);
    EXPECT_FALSE(has(readFile(knownHosts), "[localhost]")) << readFile(knownHosts);
    driftless::core::stopAllTunnels();
    driftless::core::setSshKnownHostsFile("");
    r = cli({"trust-host", "src", "--jump", "--yes"});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "already trusted")) << r.out;

    // Now the server behind it: shown through the jump, not trusted until confirmed.
    r = cli({"run", "--once"});
    EXPECT_NE(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "the SSH host key of localhost:" + port + " is not trusted yet")) << r.err;
    EXPECT_TRUE(has(r.err, fingerprint)) << r.err;
    r = cli({"trust-host", "src"});
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "the SSH server localhost:" + port + " offers")) << r.out;
    EXPECT_TRUE(has(r.out, fingerprint + " (ED25519)")) << r.out;
    EXPECT_FALSE(has(readFile(knownHosts), "[localhost]"));
    r = cli({"trust-host", "src", "--yes"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(readFile(knownHosts), "[localhost]:" + port + " ssh-ed25519 ")) << readFile(knownHosts);

    const auto channelsBefore = sshdLog().size();
    r = cli({"run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(output("sqlite3 '" + dir.file("out.db") + "' 'SELECT note FROM items'"), "one\n");
    // Two hops: a channel to the server (localhost) through the jump, and one to Postgres.
    const std::string log = sshdLog().substr(channelsBefore);
    EXPECT_TRUE(has(log, "localhost port " + port) || has(log, "to localhost port " + port)) << log;
}

TEST_F(SshTunnel, aRotatedHostKeyIsRefusedWithBothFingerprints)
{
    PgTestDb src("ssh_rot");
    src.exec("CREATE TABLE items (id int PRIMARY KEY, note text NOT NULL); INSERT INTO items VALUES (1, 'one')");
    apply("endpoints:\n"
          "  src: { kind: postgres, dsn: \"" +
          src.dsn() + "\", ssh: " + sshYaml() +
          " }\n"
          "  lite: { kind: sqlite, path: \"" +
          dir.file("out.db") +
          "\" }\n"
          "pipelines:\n"
          "  - name: " +
          uniqueName("sshrot") +
          "\n    source: src\n    target: lite\n"
          "    tables:\n      - { table: public.items, strategy: full_refresh }\n");
    trust("src");
    const std::string before = fingerprintOf(sshEnv.at("SSH_HOST_KEY"));
    ASSERT_TRUE(sshd("stop"));
    ASSERT_TRUE(sshd("rotate"));
    ASSERT_TRUE(sshd("start"));
    const std::string after = fingerprintOf(sshEnv.at("SSH_HOST_KEY"));
    ASSERT_NE(before, after);

    auto r = cli({"run", "--once"});
    EXPECT_NE(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "has CHANGED")) << r.err;
    EXPECT_TRUE(has(r.err, "trusted " + before + " (ED25519)")) << r.err;
    EXPECT_TRUE(has(r.err, "offered now " + after + " (ED25519)")) << r.err;
    EXPECT_TRUE(has(r.err, "trust-host src --replace")) << r.err;
    auto landed = [&] { return output("sqlite3 '" + dir.file("out.db") + "' 'SELECT note FROM items' 2>/dev/null"); };
    EXPECT_EQ(landed(), "");

    // trust-host shows both and refuses without --replace, even with --yes.
    r = cli({"trust-host", "src", "--yes"});
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_TRUE(has(r.out, before) && has(r.out, after)) << r.out;
    EXPECT_TRUE(has(r.out, "CHANGED")) << r.out;
    EXPECT_FALSE(has(readFile(state + ".known_hosts"),
                     output("cut -d' ' -f2 '" + sshEnv.at("SSH_HOST_KEY") + "'").substr(0, 40)));

    r = cli({"trust-host", "src", "--yes", "--replace"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    r = cli({"run", "--once"});
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(landed(), "one\n");
}

TEST_F(SshTunnel, killingSshdMidStreamRecoversWithNothingLost)
{
    PgTestDb src("ssh_cdc");
    PgTestDb dst("ssh_cdcd");
    src.exec("CREATE TABLE items (id int PRIMARY KEY, note text NOT NULL);"
             "INSERT INTO items SELECT g, 'first ' || g FROM generate_series(1, 100) g");
    const std::string pipeline = uniqueName("sshcdc");
    apply("endpoints:\n"
          "  src: { kind: postgres, dsn: \"" +
          src.dsn() + "\", ssh: " + sshYaml() +
          " }\n"
          "  dst: { kind: postgres, dsn: \"" +
          dst.dsn() +
          "\" }\n"
          "pipelines:\n"
          "  - name: " +
          pipeline +
          "\n    source: src\n    target: dst\n"
          "    tables:\n      - { table: public.items, strategy: cdc }\n");
    trust("src");
    // serve runs the engine and answers /sync/status, where the tunnel's state and alerts show.
    const std::string runLog = dir.file("serve.log");
    const int pid =
        spawnCli({"--state", state, "serve", "--listen", "127.0.0.1:0", "--monitor-every", "300ms"}, env, runLog);
    spawned.push_back(pid);
    int port = 0;
    const std::regex served("serving http://127\\.0\\.0\\.1:([0-9]+)/sync/status");
    ASSERT_TRUE(waitFor(
        [&] {
            std::smatch m;
            const std::string out = readFile(runLog);
            if (std::regex_search(out, m, served))
                port = std::stoi(m[1]);
            return port > 0;
        },
        60, kPoll))
        << readFile(runLog);
    auto status = [&] {
        const auto r = httpRequest(port, "GET", "/sync/status");
        return r.status == 200 ? nlohmann::json::parse(r.body, nullptr, false) : nlohmann::json();
    };
    auto tunnelOf = [&](const nlohmann::json &doc) -> nlohmann::json {
        if (doc.is_object() && doc.contains("endpoints"))
            for (const auto &e : doc["endpoints"])
                if (e.value("name", "") == "src" && e["tunnel"].is_object())
                    return e["tunnel"];
        return nlohmann::json::object();
    };
    auto alertOpen = [&](const nlohmann::json &doc) {
        if (doc.is_object() && doc.contains("alerts"))
            for (const auto &a : doc["alerts"])
                if (a.value("kind", "") == "tunnel_down" && has(a.value("message", ""), "tunnel down"))
                    return true;
        return false;
    };
    auto count = [&] {
        try {
            return std::stoi(dst.scalar("SELECT count(*) FROM public.items"));
        } catch (...) {
            return -1;
        }
    };
    ASSERT_TRUE(waitFor([&] { return count() == 100; }, 180, kPoll)) << readFile(runLog);
    EXPECT_TRUE(waitFor([&] { return tunnelOf(status()).value("state", "") == "up"; }, 60, kPoll)) << status().dump();

    // A bounded writer: 300 rows at most 50 a second; sshd dies after the first 100.
    std::atomic<int> written{0};
    std::thread writer([&] {
        auto c = src.connect();
        for (int i = 101; i <= 400; ++i) {
            c.exec("INSERT INTO items VALUES (" + std::to_string(i) + ", 'second " + std::to_string(i) + "')");
            if (i % 10 == 0)
                c.exec("UPDATE items SET note = note || '+' WHERE id = " + std::to_string(i - 50));
            ++written;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    while (written < 100)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(sshd("stop"));
    writer.join();

    // Status and the alert say so, and nothing written after the outage arrives while it lasts.
    EXPECT_TRUE(waitFor([&] { return tunnelOf(status()).value("state", "") == "down"; }, 120, kPoll))
        << status().dump();
    EXPECT_TRUE(waitFor([&] { return alertOpen(status()); }, 60, kPoll)) << status().dump();
    EXPECT_TRUE(
        waitFor([&] { return has(tunnelOf(status()).value("reason", ""), "refused the connection"); }, 60, kPoll))
        << status().dump();
    EXPECT_LT(count(), 400) << "rows arrived without sshd: the engine does not use the tunnel";
    EXPECT_NE(pgTableHash(dst, "public.items"), pgTableHash(src, "public.items"));

    ASSERT_TRUE(sshd("start"));
    EXPECT_TRUE(
        waitFor([&] { return pgTableHash(dst, "public.items") == pgTableHash(src, "public.items"); }, 300, kPoll))
        << "target " << pgTableHash(dst, "public.items") << " source " << pgTableHash(src, "public.items") << "\n"
        << readFile(runLog);
    EXPECT_TRUE(
        waitFor([&] { return tunnelOf(status()).value("state", "") == "up" && !alertOpen(status()); }, 60, kPoll))
        << status().dump();

    ::kill(pid, SIGTERM);
    EXPECT_EQ(waitPid(pid, 120), 0) << readFile(runLog);
    spawned.clear();
    // The slot goes with the test database's pipeline.
    try {
        src.exec("SELECT pg_drop_replication_slot('driftless_" + pipeline + "')");
    } catch (...) {
    }
}

TEST_F(SshTunnel, aMariaDbEndpointSyncsThroughATunnel)
{
    MyTestDb src("ssh_my");
    PgTestDb dst("ssh_myd");
    src.exec("CREATE TABLE items (id int PRIMARY KEY, note varchar(100) NOT NULL)");
    src.exec("INSERT INTO items SELECT seq, CONCAT('row ', seq) FROM seq_1_to_300");
    apply("endpoints:\n"
          "  shop: { kind: mysql, dsn: \"" +
          src.dsn() + "\", ssh: " + sshYaml() +
          " }\n"
          "  dst: { kind: postgres, dsn: \"" +
          dst.dsn() +
          "\" }\n"
          "pipelines:\n"
          "  - name: " +
          uniqueName("sshmy") +
          "\n    source: shop\n    target: dst\n"
          "    target_schema: public\n"
          "    tables:\n      - { table: " +
          src.name() + ".items, strategy: full_refresh }\n");
    auto r = cli({"run", "--once"});
    EXPECT_NE(r.exitCode, 0) << "an untrusted host: " << r.out << r.err;
    EXPECT_TRUE(has(r.err, "is not trusted yet")) << r.err;
    trust("shop");
    const auto logBefore = sshdLog().size();
    r = cli({"run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const std::string mine =
        src.scalar("SELECT CONCAT(COUNT(*), ' ', SUM(id), ' ', SUM(CHAR_LENGTH(note))) FROM items");
    EXPECT_EQ(mine, "300 45150 1992");
    EXPECT_EQ(pgTableSums(dst, "public.items"), mine);
    EXPECT_EQ(dst.scalar("SELECT note FROM public.items WHERE id = 123"), "row 123");
    const std::string log = sshdLog().substr(logBefore);
    EXPECT_TRUE(has(log, "direct-tcpip")) << log;
    EXPECT_TRUE(has(log, "port " + std::to_string(servers().myPort))) << log;
}

// The app's trust prompt: Test Connection (POST /api/v1/probe) shows the fingerprint of an
// unknown host; POST /api/v1/trust-host trusts exactly the key the DBA confirmed, and only
// while the server still offers it.
TEST_F(SshTunnel, theApiTrustsOnlyTheFingerprintTheDbaConfirmed)
{
    PgTestDb src("ssh_api");
    const std::string knownHosts = dir.file("api.known_hosts");
    driftless::core::setSshKnownHostsFile(knownHosts);
    const nlohmann::json endpoint = {{"name", "src"},
                                     {"kind", "postgres"},
                                     {"dsn", src.dsn()},
                                     {"ssh",
                                      {{"host", "127.0.0.1"},
                                       {"port", std::stoi(sshEnv.at("SSH_PORT"))},
                                       {"user", sshEnv.at("SSH_USER")},
                                       {"identity_file", sshEnv.at("SSH_KEY")}}}};
    auto post = [](const std::string &path, const nlohmann::json &body) {
        driftless::core::ApiRequest req;
        req.method = "POST";
        req.path = "/api/v1/" + path;
        req.body = body.dump();
        return driftless::core::AgentApi::handleStateless(req);
    };
    const std::string fingerprint = fingerprintOf(sshEnv.at("SSH_HOST_KEY"));

    auto r = post("probe", {{"endpoint", endpoint}});
    ASSERT_EQ(r.status, 200) << r.body;
    auto j = nlohmann::json::parse(r.body);
    EXPECT_FALSE(j["ok"].get<bool>()) << r.body;
    EXPECT_TRUE(has(j["postgres"]["error"].get<std::string>(), "is not trusted yet")) << r.body;
    EXPECT_TRUE(has(j["postgres"]["error"].get<std::string>() + j["postgres"]["hint"].get<std::string>(), fingerprint))
        << "the fingerprint to confirm: " << fingerprint << "\n"
        << r.body;

    // A fingerprint the server does not offer is refused and trusts nothing.
    r = post("trust-host", {{"endpoint", endpoint}, {"fingerprint", "SHA256:notTheKeyTheServerOffers"}});
    EXPECT_EQ(r.status, 409) << r.body;
    EXPECT_FALSE(std::filesystem::exists(knownHosts) && has(readFile(knownHosts), "ssh-ed25519"));

    r = post("trust-host", {{"endpoint", endpoint}, {"fingerprint", fingerprint}});
    ASSERT_EQ(r.status, 200) << r.body;
    j = nlohmann::json::parse(r.body);
    EXPECT_TRUE(has(j["trusted"].get<std::string>(), fingerprint)) << r.body;
    EXPECT_EQ(j["known_hosts"], knownHosts);
    EXPECT_TRUE(has(readFile(knownHosts), "[127.0.0.1]:" + sshEnv.at("SSH_PORT") + " ssh-ed25519 "));

    r = post("probe", {{"endpoint", endpoint}});
    ASSERT_EQ(r.status, 200) << r.body;
    j = nlohmann::json::parse(r.body);
    EXPECT_TRUE(j["postgres"]["connected"].get<bool>()) << r.body;

    driftless::core::stopAllTunnels();
    driftless::core::setSshKnownHostsFile("");
}

TEST_F(SshTunnel, anIdentityFileProtectedByAPassphraseOpensWithTheSavedPassphraseOnly)
{
    PgTestDb src("ssh_phrase");
    ::unsetenv("SSH_AUTH_SOCK"); // no agent may open the key instead
    const std::string passphrase = "correct horse 42";
    const std::string key = dir.file("id_locked");
    ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '" + passphrase + "' -C locked -f '" + key + "'").c_str()), 0);
    {
        std::ofstream keys(sshDir + "/authorized_keys", std::ios::app);
        keys << readFile(key + ".pub");
    }
    const std::string knownHosts = dir.file("phrase.known_hosts");
    driftless::core::setSshKnownHostsFile(knownHosts);
    driftless::core::SshTunnelSpec spec{"127.0.0.1", std::stoi(sshEnv.at("SSH_PORT")), sshEnv.at("SSH_USER"), key,
                                        std::nullopt};
    driftless::core::trustHostKeys(spec, driftless::core::scanHostKeys(spec), false);
    const nlohmann::json endpoint = {
        {"name", "locked"},
        {"kind", "postgres"},
        {"dsn", src.dsn()},
        {"ssh", {{"host", spec.host}, {"port", spec.port}, {"user", spec.user}, {"identity_file", key}}}};
    auto probe = [&] {
        driftless::core::ApiRequest req;
        req.method = "POST";
        req.path = "/api/v1/probe";
        req.body = nlohmann::json{{"endpoint", endpoint}}.dump();
        const auto j = nlohmann::json::parse(driftless::core::AgentApi::handleStateless(req).body);
        return j["postgres"];
    };
    // Each refusal starts the tunnel's backoff: wait it out rather than race it.
    auto probeUntil = [&](const std::function<bool(const nlohmann::json &)> &done) {
        nlohmann::json last;
        waitFor(
            [&] {
                last = probe();
                return done(last);
            },
            60, kPoll);
        return last;
    };
    auto errorHas = [](const char *text) {
        return [text](const nlohmann::json &p) { return has(p.value("error", ""), text); };
    };

    // No passphrase known: ssh skips the key; the refusal says why and what to do.
    auto p = probeUntil(errorHas("is protected by a passphrase and none is known"));
    EXPECT_TRUE(has(p.value("error", ""), "is protected by a passphrase and none is known")) << p.dump();
    EXPECT_TRUE(has(p.value("hint", ""), "ssh-add " + key)) << p.dump();

    driftless::core::setSshPassphraseProvider([](const std::string &endpoint) -> std::optional<std::string> {
        return endpoint == "locked" ? std::optional<std::string>("not the passphrase") : std::nullopt;
    });
    p = probeUntil(errorHas("does not open it"));
    EXPECT_TRUE(has(p.value("error", ""), "the passphrase saved for the identity file " + key + " does not open it"))
        << p.dump();

    driftless::core::setSshPassphraseProvider([&](const std::string &endpoint) -> std::optional<std::string> {
        return endpoint == "locked" ? std::optional<std::string>(passphrase) : std::nullopt;
    });
    p = probeUntil([](const nlohmann::json &j) { return j.value("connected", false); });
    EXPECT_TRUE(p.value("connected", false)) << p.dump();
    // Never on a command line another user could read.
    EXPECT_FALSE(has(output("ps -eo args"), passphrase));

    driftless::core::stopAllTunnels();
    driftless::core::setSshPassphraseProvider({});
    driftless::core::setSshKnownHostsFile("");
}

// The database is reachable only through the SSH host: it listens on no TCP port, only on a Unix
// socket on the SSH host's side. The tunnel forwards to that socket (direct-streamlocal), and a
// table syncs from it.
TEST_F(SshTunnel, aPostgresListeningOnlyOnTheSshHostsUnixSocketSyncsThroughTheTunnel)
{
    ASSERT_TRUE(sshd("pgsocket")) << readFile(sshDir + ".log");
    auto pg = readEnvFile(sshDir + "/pgsocket.env");
    ASSERT_FALSE(pg["PGSOCK_PORT"].empty());
    const std::string srcDsn =
        "host=" + pg["PGSOCK_DIR"] + " port=" + pg["PGSOCK_PORT"] + " dbname=postgres user=postgres";
    // Nothing answers on TCP at that port.
    EXPECT_ANY_THROW(driftless::core::PgConnection("host=127.0.0.1 port=" + pg["PGSOCK_PORT"] +
                                                   " dbname=postgres user=postgres connect_timeout=5 sslmode=disable"));
    driftless::core::PgConnection direct(srcDsn);
    direct.exec("DROP TABLE IF EXISTS far_items; CREATE TABLE far_items (id int PRIMARY KEY, note text NOT NULL);"
                "INSERT INTO far_items SELECT g, 'far ' || g FROM generate_series(1, 300) g");
    const std::string expected(
        direct.exec("SELECT count(*) || ' ' || md5(string_agg(id || ':' || note, ',' ORDER BY id)) FROM far_items")
            .value(0, 0));

    PgTestDb dst("ssh_far_dst");
    const std::string yaml = "endpoints:\n"
                             "  far: { kind: postgres, dsn: \"" +
                             srcDsn + "\", ssh: " + sshYaml() +
                             " }\n"
                             "  dst: { kind: postgres, dsn: \"" +
                             dst.dsn() +
                             "\" }\n"
                             "pipelines:\n"
                             "  - name: " +
                             uniqueName("sshfar") +
                             "\n    source: far\n    target: dst\n"
                             "    tables:\n      - { table: public.far_items, strategy: full_refresh }\n";
    apply(yaml);
    trust("far");
    const auto logBefore = sshdLog().size();
    auto r = cli({"run", "--once"});
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_EQ(dst.scalar("SELECT count(*) || ' ' || md5(string_agg(id || ':' || note, ',' ORDER BY id)) FROM "
                         "public.far_items"),
              expected);
    const std::string log = sshdLog().substr(logBefore);
    EXPECT_TRUE(has(log, "streamlocal")) << "no forwarding to the Unix socket in sshd's log:\n" << log;
}
