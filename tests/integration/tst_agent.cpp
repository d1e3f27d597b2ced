// driftless-cli serve as an agent: the control API under /api/v1/, over HTTPS with the agent's
// self-signed certificate, read and driven with curl (an independent client that checks the
// certificate itself). The token is required (401, an event, a lockout after repeated
// failures), a rotated token takes at once, a certificate other than the pinned one is refused,
// and what the API does (pause, backfill, apply, reconcile, engine stop/start) shows in the
// state file, in `status --json` and in the target's rows.

#include "core/db/pgconnection.h"
#include "core/db/sqlitedb.h"
#include "core/engine/endpoints/endpointcalls.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <netinet/in.h>
#include <poll.h>
#include <regex>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace driftless::test;
using json = nlohmann::json;

namespace {

std::string shellQuote(const std::string &s)
{
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

struct Curl {
    int exit = -1; ///< curl's exit code: 0, or e.g. 60 (the certificate is not trusted)
    int status = 0;
    std::string body;
    json parsed() const { return json::parse(body); }
};

struct Agent : ::testing::Test {
    PgTestDb src{"agent_src"};
    PgTestDb dst{"agent_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string pipeline = uniqueName("agt");
    std::string host;
    int pid = 0;
    int port = 0;
    std::string log;

    void SetUp() override
    {
        src.exec("CREATE TABLE orders (id int PRIMARY KEY, total numeric(10,2));"
                 "INSERT INTO orders SELECT g, g FROM generate_series(1, 300) g;"
                 "CREATE TABLE events (id int PRIMARY KEY, note text);"
                 "INSERT INTO events SELECT g, 'n' || g FROM generate_series(1, 50) g;");
        const auto &s = servers();
        host = "host=127.0.0.1 port=" + std::to_string(s.pgPort) + " user=" + s.pgUser;
        writeFile(dir.file("ws.yaml"), yaml(false));
        auto r = runCli({"--state", state, "apply", "--no-check", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.err;
    }
    void TearDown() override
    {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            waitPid(pid, 30);
        }
    }
    std::string yaml(bool withEvents) const
    {
        std::string y = "endpoints:\n"
                        "  app: { kind: postgres, dsn: \"" +
                        host + " dbname=" + src.name() +
                        "\" }\n"
                        "  dw: { kind: postgres, dsn: \"" +
                        host + " dbname=" + dst.name() +
                        "\" }\n"
                        "pipelines:\n"
                        "  - name: " +
                        pipeline +
                        "\n    source: app\n    target: dw\n    tables:\n"
                        "      - { table: public.orders, strategy: cdc }\n";
        if (withEvents)
            y += "      - { table: public.events, strategy: full_refresh, every: 1s }\n";
        return y;
    }
    void startAgent(std::vector<std::string> extra = {"--tls"})
    {
        log = dir.file("serve-" + std::to_string(++m_starts) + ".log");
        std::vector<std::string> args = {"--state",         state,  "serve", "--listen", "127.0.0.1:0",
                                         "--monitor-every", "300ms"};
        args.insert(args.end(), extra.begin(), extra.end());
        pid = spawnCli(args, {}, log);
        std::regex re("agent API at https?://[0-9.]+:([0-9]+)/api/v1/");
        port = 0;
        for (int i = 0; i < 1200 && port == 0; ++i) {
            std::smatch m;
            std::string out = readFile(log);
            if (std::regex_search(out, m, re))
                port = std::stoi(m[1]);
            else
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ASSERT_GT(port, 0) << readFile(log);
    }
    void stopAgent()
    {
        ::kill(pid, SIGTERM);
        EXPECT_EQ(waitPid(pid, 120), 0) << readFile(log);
        pid = 0;
    }
    std::string token()
    {
        auto r = runCli({"--state", state, "agent-token"});
        EXPECT_EQ(r.exitCode, 0) << r.err;
        std::string t = r.out;
        while (!t.empty() && t.back() == '\n')
            t.pop_back();
        return t;
    }
    /// curl against the agent, trusting only `cacert` (the agent's certificate by default);
    /// `url` instead of https://127.0.0.1:PORT.
    Curl curl(const std::string &method, const std::string &path, const std::string &bearer,
              const std::string &body = {}, const std::string &cacert = {}, const std::string &from = {},
              const std::string &url = {})
    {
        return curlAs("curl", method, path, bearer, body, cacert, from, url);
    }
    /// curl() with files of its own (`tag`), for requests sent at the same time.
    Curl curlOn(const std::string &tag, const std::string &method, const std::string &path, const std::string &bearer,
                const std::string &body = {})
    {
        return curlAs(tag, method, path, bearer, body, {}, {}, {});
    }
    Curl curlAs(const std::string &tag, const std::string &method, const std::string &path, const std::string &bearer,
                const std::string &body, const std::string &cacert, const std::string &from, const std::string &url)
    {
        const std::string out = dir.file(tag + ".out"), bodyFile = dir.file(tag + ".body");
        std::string cmd = "curl -sS --max-time 60 -o " + shellQuote(out) + " -w '%{http_code}' -X " + method +
                          " --cacert " + shellQuote(cacert.empty() ? state + ".agent.crt" : cacert);
        if (!from.empty())
            cmd += " --interface " + from;
        if (!bearer.empty())
            cmd += " -H " + shellQuote("Authorization: Bearer " + bearer);
        if (!body.empty()) {
            writeFile(bodyFile, body);
            cmd += " -H 'Content-Type: application/json' --data-binary @" + shellQuote(bodyFile);
        }
        cmd += " " + shellQuote((url.empty() ? "https://127.0.0.1:" + std::to_string(port) : url) + path) + " 2>" +
               shellQuote(dir.file(tag + ".err"));
        std::remove(out.c_str());
        Curl c;
        FILE *p = ::popen(cmd.c_str(), "r");
        if (!p)
            return c;
        char buf[64] = {};
        std::string code;
        while (std::fgets(buf, sizeof buf, p))
            code += buf;
        const int rc = ::pclose(p);
        c.exit = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
        c.status = code.empty() ? 0 : std::atoi(code.c_str());
        c.body = std::filesystem::exists(out) ? readFile(out) : std::string();
        return c;
    }
    json statusJson()
    {
        auto r = runCli({"--state", state, "status", "--json"});
        EXPECT_EQ(r.exitCode, 0) << r.err;
        return json::parse(r.out);
    }
    static const json *find(const json &arr, const std::string &key, const std::string &value)
    {
        for (const auto &x : arr)
            if (x.contains(key) && x[key] == value)
                return &x;
        return nullptr;
    }
    /// Polls the agent's tables until `pred` holds for public.orders (or about 90 s pass).
    json waitOrders(const std::string &tok, const std::function<bool(const json &)> &pred)
    {
        json orders;
        for (int i = 0; i < 900; ++i) {
            auto r = curl("GET", "/api/v1/tables", tok);
            if (r.status == 200) {
                const json body = r.parsed();
                const json *o = find(body["tables"], "table", "public.orders");
                if (o) {
                    orders = *o;
                    if (pred(orders))
                        return orders;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        ADD_FAILURE() << "public.orders never got there: " << orders.dump(2) << "\n" << readFile(log);
        return orders;
    }
    long long count(const std::string &kind, const std::string &like)
    {
        driftless::core::SqliteDb db(state, driftless::core::SqliteDb::Mode::ReadOnly);
        return db.scalarInt("SELECT count(*) FROM events WHERE kind = '" + kind + "' AND message LIKE '" + like + "'");
    }

    /// Polls a job until it ends (or about 120 s pass), collecting every phase it reports, each
    /// asked for from where the last poll left off.
    json waitJob(const std::string &tok, const std::string &poll, std::vector<json> *phases = nullptr)
    {
        json job;
        std::size_t seen = 0;
        for (int i = 0; i < 1200; ++i) {
            auto r = curl("GET", poll + "?phases_from=" + std::to_string(seen), tok);
            EXPECT_EQ(r.status, 200) << r.body;
            if (r.status != 200)
                return job;
            job = r.parsed();
            EXPECT_EQ(job["phases_from"], seen);
            for (const auto &p : job["phases"]) {
                ++seen;
                if (phases)
                    phases->push_back(p);
            }
            if (job["state"] != "running")
                return job;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        ADD_FAILURE() << "the job never ended: " << job.dump(2);
        return job;
    }
    std::string started(const Curl &c)
    {
        EXPECT_EQ(c.status, 202) << c.body;
        return c.status == 202 ? c.parsed()["poll"].get<std::string>() : std::string();
    }

private:
    int m_starts = 0;
};

} // namespace

TEST_F(Agent, theApiServesTheTablesOfStatusOverHttpsOnlyWithTheToken)
{
    startAgent();
    const std::string tok = token();
    ASSERT_EQ(tok.size(), 64u);
    struct stat st {};
    ASSERT_EQ(::stat((state + ".agent-token").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_EQ(::stat((state + ".agent.key").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);

    // The fingerprint serve printed is the certificate's, as openssl computes it.
    auto fp = runCli({"--state", state, "agent-token", "--fingerprint"});
    ASSERT_EQ(fp.exitCode, 0) << fp.err;
    EXPECT_NE(readFile(log).find("fingerprint " + fp.out.substr(0, fp.out.size() - 1)), std::string::npos);
    std::string cmd = "openssl x509 -noout -fingerprint -sha256 -in " + shellQuote(state + ".agent.crt") + " > " +
                      shellQuote(dir.file("fp.txt"));
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    EXPECT_NE(readFile(dir.file("fp.txt")).find(fp.out.substr(0, fp.out.size() - 1)), std::string::npos);

    const json orders = waitOrders(tok, [](const json &o) { return o["state"] == "streaming"; });
    EXPECT_EQ(orders["pipeline"], pipeline);
    EXPECT_EQ(orders["strategy"], "cdc");
    EXPECT_EQ(orders["rows_applied"], 300);

    // The same items as status --json, read from the state file by another process.
    auto api = curl("GET", "/api/v1/tables", tok);
    ASSERT_EQ(api.status, 200) << api.body;
    const json cli = statusJson(), served = api.parsed();
    ASSERT_EQ(served["tables"].size(), cli["tables"].size());
    for (const auto &t : cli["tables"]) {
        const json *same = find(served["tables"], "table", t["table"].get<std::string>());
        ASSERT_TRUE(same) << t.dump();
        for (const char *k : {"pipeline", "strategy", "state", "rows_applied", "last_synced_lsn", "freshness"})
            EXPECT_EQ((*same)[k], t[k]) << k;
    }

    // No token, a wrong one, or a token cut short: 401 with nothing of the workspace in it.
    for (const std::string &bearer : {std::string(), std::string(64, 'a'), tok.substr(1)}) {
        auto r = curl("GET", "/api/v1/tables", bearer);
        EXPECT_EQ(r.status, 401) << r.body;
        EXPECT_EQ(r.body.find("orders"), std::string::npos) << r.body;
        EXPECT_EQ(r.body.find(pipeline), std::string::npos) << r.body;
    }
    // Unknown paths under the prefix are not told apart from known ones without the token.
    EXPECT_EQ(curl("GET", "/api/v1/no-such-thing", "").status, 401);
    EXPECT_EQ(curl("GET", "/api/v1/no-such-thing", tok).status, 404);
    EXPECT_EQ(curl("DELETE", "/api/v1/tables", tok).status, 405);
    EXPECT_EQ(count("agent_unauthorized", "%from 127.0.0.1 (GET /api/v1/tables)%"), 3);

    // Monitoring keeps its unauthenticated endpoints, over the same HTTPS.
    EXPECT_EQ(curl("GET", "/sync/status", "").status, 200);
    EXPECT_EQ(curl("GET", "/metrics", "").status, 200);

    // A rotated token takes at the next request; the old one is refused.
    auto rotated = runCli({"--state", state, "agent-token", "--rotate"});
    ASSERT_EQ(rotated.exitCode, 0) << rotated.err;
    const std::string fresh = rotated.out.substr(0, rotated.out.size() - 1);
    EXPECT_NE(fresh, tok);
    EXPECT_EQ(curl("GET", "/api/v1/tables", tok).status, 401);
    EXPECT_EQ(curl("GET", "/api/v1/tables", fresh).status, 200);
}

TEST_F(Agent, repeatedFailuresLockTheAddressOutAndOthersGoOn)
{
    startAgent();
    const std::string tok = token();
    // From 127.0.0.2: five wrong tokens lock that address out, even with the right token after.
    for (int i = 0; i < 5; ++i)
        EXPECT_EQ(curl("GET", "/api/v1/tables", "wrong", {}, {}, "127.0.0.2").status, 401);
    auto locked = curl("GET", "/api/v1/tables", tok, {}, {}, "127.0.0.2");
    EXPECT_EQ(locked.status, 429) << locked.body;
    EXPECT_EQ(locked.body.find("orders"), std::string::npos);
    // Another address is not held to it.
    EXPECT_EQ(curl("GET", "/api/v1/tables", tok).status, 200);
    EXPECT_EQ(count("agent_unauthorized", "%from 127.0.0.2%"), 5);
    EXPECT_EQ(count("agent_unauthorized", "%from 127.0.0.2%locked out%"), 1);
}

TEST_F(Agent, aCertificateOtherThanThePinnedOneIsRefused)
{
    startAgent();
    const std::string tok = token();
    const std::string pinned = dir.file("pinned.crt");
    std::filesystem::copy_file(state + ".agent.crt", pinned);
    EXPECT_EQ(curl("GET", "/api/v1/tables", tok, {}, pinned).status, 200);
    stopAgent();
    // Another agent answers on the address (here: the same one with a new certificate).
    std::filesystem::remove(state + ".agent.crt");
    std::filesystem::remove(state + ".agent.key");
    startAgent();
    auto r = curl("GET", "/api/v1/tables", tok, {}, pinned);
    EXPECT_EQ(r.exit, 60) << "curl exit " << r.exit << ": " << readFile(dir.file("curl.err"));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(curl("GET", "/api/v1/tables", tok).status, 200); // its own certificate is trusted

    // A certificate the DBA provides is served instead, checked to match its key.
    const std::string crt = dir.file("own.crt"), key = dir.file("own.key");
    std::string make = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "
                       "/CN=agent -addext subjectAltName=IP:127.0.0.1 -keyout " +
                       shellQuote(key) + " -out " + shellQuote(crt) + " >/dev/null 2>&1 && chmod 600 " +
                       shellQuote(key);
    ASSERT_EQ(std::system(make.c_str()), 0);
    stopAgent();
    startAgent({"--cert", crt, "--key", key});
    EXPECT_EQ(curl("GET", "/api/v1/tables", tok, {}, crt).status, 200);
    EXPECT_EQ(curl("GET", "/api/v1/tables", tok).exit, 60);
    stopAgent();
    // A key that is not the certificate's is refused before anything runs, saying so.
    auto wrong =
        runCli({"--state", state, "serve", "--listen", "127.0.0.1:0", "--cert", crt, "--key", state + ".agent.key"});
    EXPECT_EQ(wrong.exitCode, 1);
    EXPECT_NE(wrong.err.find("is not the key of"), std::string::npos) << wrong.err;
}

TEST_F(Agent, controlActionsTakeEffectAndAreEventsNamingTheirOrigin)
{
    startAgent();
    const std::string tok = token();
    waitOrders(tok, [](const json &o) { return o["state"] == "streaming"; });

    // Pause: the state file says so (status --json, another process) and new rows wait.
    auto paused =
        curl("POST", "/api/v1/pause", tok, json({{"pipeline", pipeline}, {"tables", {"public.orders"}}}).dump());
    ASSERT_EQ(paused.status, 200) << paused.body;
    EXPECT_EQ(paused.parsed()["changes"][0]["changed"], true);
    waitOrders(tok, [](const json &o) { return o["state"] == "paused"; });
    const json cli = statusJson();
    ASSERT_TRUE(find(cli["tables"], "table", "public.orders"));
    EXPECT_EQ((*find(cli["tables"], "table", "public.orders"))["paused"], true);
    EXPECT_EQ(count("agent_control", "paused " + pipeline + "/public.orders (agent API, from 127.0.0.1)"), 1);

    src.exec("INSERT INTO orders SELECT g, g FROM generate_series(301, 320) g");
    auto resumed = curl("POST", "/api/v1/resume", tok, json({{"pipeline", pipeline}}).dump());
    ASSERT_EQ(resumed.status, 200) << resumed.body;
    waitOrders(tok, [](const json &o) { return o["state"] == "streaming"; });

    // A re-backfill through the API: the running engine takes it and streams again.
    src.exec("UPDATE orders SET total = total + 1 WHERE id <= 10");
    auto bf = curl("POST", "/api/v1/backfill", tok, json({{"pipeline", pipeline}, {"table", "public.orders"}}).dump());
    ASSERT_EQ(bf.status, 200) << bf.body;
    EXPECT_EQ(count("agent_control", "re-backfill " + pipeline + "/public.orders:%from 127.0.0.1)"), 1);
    auto s = src.connect(), d = dst.connect();
    bool equal = false;
    for (int i = 0; i < 900 && !equal; ++i) {
        equal = pgHash(s, "SELECT id, total FROM orders", "id") == pgHash(d, "SELECT id, total FROM orders", "id");
        if (!equal)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(equal) << readFile(log);
    waitOrders(tok, [](const json &o) { return o["state"] == "streaming"; });

    // Bad requests say what to change.
    auto bad = curl("POST", "/api/v1/pause", tok, "{\"tables\": 3}");
    EXPECT_EQ(bad.status, 400);
    EXPECT_NE(bad.body.find("pipeline"), std::string::npos) << bad.body;
    auto nopipe = curl("POST", "/api/v1/pause", tok, json({{"pipeline", "nope"}}).dump());
    EXPECT_GE(nopipe.status, 400) << nopipe.body;
    EXPECT_NE(nopipe.body.find("nope"), std::string::npos) << nopipe.body;

    // Apply a workspace with a second table: the engine starts again with it.
    auto applied = curl("PUT", "/api/v1/workspace?check=false", tok, yaml(true));
    ASSERT_EQ(applied.status, 200) << applied.body;
    EXPECT_EQ(applied.parsed()["changed"], true);
    json events;
    for (int i = 0; i < 900; ++i) {
        auto r = curl("GET", "/api/v1/tables", tok);
        const json body = r.status == 200 ? r.parsed() : json::object();
        const json *e = body.contains("tables") ? find(body["tables"], "table", "public.events") : nullptr;
        if (e && (*e)["rows_applied"] == 50) {
            events = *e;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(events["strategy"], "full_refresh") << events.dump();
    auto ws = curl("GET", "/api/v1/workspace", tok);
    ASSERT_EQ(ws.status, 200);
    EXPECT_NE(ws.parsed()["yaml"].get<std::string>().find("public.events"), std::string::npos);
    // A workspace that does not parse is refused, and the stored one stays.
    auto broken = curl("PUT", "/api/v1/workspace", tok, "pipelines: [ {name: x, source: nowhere} ]");
    EXPECT_EQ(broken.status, 422) << broken.body;
    EXPECT_NE(curl("GET", "/api/v1/workspace", tok).parsed()["yaml"].get<std::string>().find("public.events"),
              std::string::npos);

    // Reconcile as a job, then read its report.
    auto job =
        curl("POST", "/api/v1/reconcile", tok, json({{"pipeline", pipeline}, {"tables", {"public.orders"}}}).dump());
    ASSERT_EQ(job.status, 202) << job.body;
    const std::string poll = job.parsed()["poll"];
    json done;
    for (int i = 0; i < 1200; ++i) {
        auto r = curl("GET", poll, tok);
        ASSERT_EQ(r.status, 200) << r.body;
        if (r.parsed()["state"] != "running") {
            done = r.parsed();
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(done["state"], "done") << done.dump(2);
    EXPECT_EQ(done["origin"], "127.0.0.1");
    const auto reportId = done["result"]["report_id"].get<long long>();
    auto list = curl("GET", "/api/v1/reconciles?pipeline=" + pipeline, tok);
    ASSERT_EQ(list.status, 200);
    const json rows = list.parsed();
    const json *row = find(rows, "table", "public.orders");
    ASSERT_TRUE(row) << list.body;
    EXPECT_EQ((*row)["report"], reportId);
    EXPECT_EQ((*row)["source_rows"], 320);
    EXPECT_EQ((*row)["missing"].get<long long>() + (*row)["extra"].get<long long>() +
                  (*row)["different"].get<long long>(),
              0);
    EXPECT_EQ(curl("GET", "/api/v1/reconciles/" + std::to_string(reportId), tok).status, 200);

    // The events, the agent's own history of all this, name the origin.
    auto ev = curl("GET", "/api/v1/events?limit=500&pipeline=" + pipeline, tok);
    ASSERT_EQ(ev.status, 200);
    int controls = 0;
    for (const auto &e : ev.parsed())
        controls += e["kind"] == "agent_control" ? 1 : 0;
    EXPECT_GE(controls, 4) << ev.body;
}

TEST_F(Agent, engineStopAndStartKeepTheApiUpAndTheSyncGoesOnAfter)
{
    startAgent();
    const std::string tok = token();
    waitOrders(tok, [](const json &o) { return o["state"] == "streaming"; });
    auto stopped = curl("POST", "/api/v1/engine/stop", tok);
    ASSERT_EQ(stopped.status, 200) << stopped.body;
    EXPECT_EQ(stopped.parsed()["running"], false);
    // The slot is let go of: no walsender reads it while the engine is stopped.
    bool idle = false;
    for (int i = 0; i < 900 && !idle; ++i) {
        idle = src.scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'driftless_" + pipeline +
                          "' AND NOT active") == "1";
        if (!idle)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(idle) << readFile(log);
    EXPECT_EQ(curl("GET", "/api/v1/engine", tok).parsed()["running"], false);
    src.exec("INSERT INTO orders SELECT g, g FROM generate_series(301, 340) g");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM orders"), "300"); // nothing applied while stopped
    ASSERT_EQ(curl("POST", "/api/v1/engine/start", tok).status, 200);
    bool caughtUp = false;
    for (int i = 0; i < 900 && !caughtUp; ++i) {
        caughtUp = dst.scalar("SELECT count(*) FROM orders") == "340";
        if (!caughtUp)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(caughtUp) << readFile(log);
    EXPECT_EQ(count("agent_control", "stopped the engine (agent API, from 127.0.0.1)"), 1);
    EXPECT_EQ(count("agent_control", "started the engine (agent API, from 127.0.0.1)"), 1);
    stopAgent();
}

TEST_F(Agent, overPlainHttpTheApiAnswersThisMachineOnly)
{
    // A client on another machine is one that reaches us by a non-loopback address.
    std::string ip = dir.file("ip.txt");
    std::system(("hostname -I > " + shellQuote(ip) + " 2>/dev/null").c_str());
    std::string addr;
    std::smatch m;
    const std::string text = readFile(ip);
    if (std::regex_search(text, m, std::regex("\\b((?!127\\.)[0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+)\\b")))
        addr = m[1];
    if (addr.empty())
        GTEST_SKIP() << "this machine has no IPv4 address but loopback";
    pid = spawnCli({"--state", state, "serve", "--listen", "0.0.0.0:0", "--allow-remote"}, {},
                   log = dir.file("serve-plain.log"));
    std::regex re("agent API at http://0\\.0\\.0\\.0:([0-9]+)/api/v1/");
    for (int i = 0; i < 1200 && port == 0; ++i) {
        std::smatch pm;
        std::string out = readFile(log);
        if (std::regex_search(out, pm, re))
            port = std::stoi(pm[1]);
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_GT(port, 0) << readFile(log);
    const std::string tok = token();
    const std::string remote = "http://" + addr + ":" + std::to_string(port);
    auto refused = curl("GET", "/api/v1/tables", tok, {}, {}, addr, remote);
    EXPECT_EQ(refused.status, 403) << refused.body;
    EXPECT_NE(refused.body.find("--tls"), std::string::npos) << refused.body;
    EXPECT_EQ(refused.body.find("orders"), std::string::npos);
    EXPECT_EQ(curl("GET", "/sync/status", {}, {}, {}, addr, remote).status, 200);
    EXPECT_EQ(curl("GET", "/api/v1/tables", tok, {}, {}, {}, "http://127.0.0.1:" + std::to_string(port)).status, 200);
}

TEST_F(Agent, reconcileJobsReportEveryPhaseCancelAndRepairsCompareAgain)
{
    startAgent();
    const std::string tok = token();
    waitOrders(tok, [](const json &o) { return o["state"] == "streaming"; });

    // Drift the target behind the engine's back: a row gone, a row changed.
    dst.exec("DELETE FROM orders WHERE id = 7; UPDATE orders SET total = -1 WHERE id = 8");

    // A comparison waiting for the stopped engine to apply the source's newest change (settle)
    // is cancelled: it stores nothing.
    ASSERT_EQ(curl("POST", "/api/v1/engine/stop", tok).status, 200);
    src.exec("INSERT INTO orders VALUES (301, 301)");
    const auto reportsBefore = curl("GET", "/api/v1/reconciles?pipeline=" + pipeline, tok).parsed().size();
    const std::string slow = started(curl("POST", "/api/v1/reconcile", tok, json({{"pipeline", pipeline}}).dump()));
    ASSERT_FALSE(slow.empty());
    bool settling = false;
    for (int i = 0; i < 1200 && !settling; ++i) {
        const json j = curl("GET", slow, tok).parsed();
        settling = j["progress"].is_object() && j["progress"]["phase"] == "settle";
        if (!settling)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(settling) << curl("GET", slow, tok).body;
    auto cancel = curl("POST", slow + "/cancel", tok);
    ASSERT_EQ(cancel.status, 202) << cancel.body;
    EXPECT_EQ(cancel.parsed()["cancelling"], true);
    const json cancelled = waitJob(tok, slow);
    EXPECT_EQ(cancelled["state"], "cancelled") << cancelled.dump(2);
    EXPECT_EQ(cancelled["error"], "cancelled; nothing was stored");
    EXPECT_EQ(curl("GET", "/api/v1/reconciles?pipeline=" + pipeline, tok).parsed().size(), reportsBefore);
    ASSERT_EQ(curl("POST", "/api/v1/engine/start", tok).status, 200);
    waitOrders(tok, [](const json &o) { return o["state"] == "streaming"; });
    bool caughtUp = false;
    for (int i = 0; i < 900 && !caughtUp; ++i) {
        caughtUp = dst.scalar("SELECT count(*) FROM orders WHERE id = 301") == "1";
        if (!caughtUp)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(caughtUp) << readFile(log);

    // A comparison polled now and then still hears of every phase, once, in order.
    std::vector<json> phases;
    const json done = waitJob(tok,
                              started(curl("POST", "/api/v1/reconcile", tok,
                                           json({{"pipeline", pipeline}, {"tables", {"public.orders"}}}).dump())),
                              &phases);
    ASSERT_EQ(done["state"], "done") << done.dump(2);
    ASSERT_FALSE(phases.empty());
    EXPECT_EQ(phases.front()["phase"], "checksum") << json(phases).dump();
    EXPECT_EQ(phases.back()["phase"], "done") << json(phases).dump();
    EXPECT_EQ(phases.back()["done"], 1);
    EXPECT_EQ(phases.back()["total"], 1);
    int dones = 0;
    for (const auto &p : phases)
        dones += p["phase"] == "done" ? 1 : 0;
    EXPECT_EQ(dones, 1) << json(phases).dump();
    const auto reportId = done["result"]["report_id"].get<long long>();
    const json report = curl("GET", "/api/v1/reconciles/" + std::to_string(reportId), tok).parsed();
    ASSERT_EQ(report["tables"].size(), 1u) << report.dump(2);
    EXPECT_EQ(report["tables"][0]["missing"], 1) << report.dump(2);
    EXPECT_EQ(report["tables"][0]["different"], 1) << report.dump(2);
    EXPECT_EQ(report["tables"][0]["keys"]["missing"], json::array({7})) << report.dump(2);

    // The same report as CSV and HTML, as `report ID --csv|--html` writes it.
    const auto csv = curl("GET", "/api/v1/reconciles/" + std::to_string(reportId) + "?format=csv", tok);
    ASSERT_EQ(csv.status, 200) << csv.body;
    EXPECT_EQ(csv.body.rfind("pipeline,table,key,kind,columns,source,target\r\n", 0), 0u) << csv.body;
    EXPECT_NE(csv.body.find(pipeline + ",public.orders,7,missing,,,\r\n"), std::string::npos) << csv.body;
    const auto html = curl("GET", "/api/v1/reconciles/" + std::to_string(reportId) + "?format=html", tok);
    ASSERT_EQ(html.status, 200);
    EXPECT_EQ(html.body.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_EQ(curl("GET", "/api/v1/reconciles/" + std::to_string(reportId) + "?format=xml", tok).status, 400);

    // The plan first (dry_run): what the repair of key 7 will run, and nothing written.
    const auto dry =
        curl("POST", "/api/v1/repair", tok,
             json({{"report", reportId}, {"table", "public.orders"}, {"keys", {7}}, {"dry_run", true}}).dump());
    ASSERT_EQ(dry.status, 200) << dry.body;
    const json plan = dry.parsed();
    ASSERT_EQ(plan["tables"].size(), 1u) << plan.dump(2);
    EXPECT_EQ(plan["tables"][0]["inserts"], 1) << plan.dump(2);
    EXPECT_EQ(plan["tables"][0]["statements"].size(), 2u) << plan.dump(2); // stage, upsert
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM orders WHERE id = 7"), "0");
    const json whole =
        curl("POST", "/api/v1/repair", tok, json({{"report", reportId}, {"dry_run", true}}).dump()).parsed();
    ASSERT_EQ(whole["tables"].size(), 1u) << whole.dump(2);
    EXPECT_EQ(whole["tables"][0]["inserts"], 1) << whole.dump(2);
    EXPECT_EQ(whole["tables"][0]["updates"], 1) << whole.dump(2);
    EXPECT_EQ(curl("POST", "/api/v1/repair", tok, json({{"report", reportId}, {"dry_run", "yes"}}).dump()).status, 400);

    // Repairing one key of it: that row is the source's again, the other still differs, and the
    // comparison made after the repair (a report of its own) says so.
    const json repaired =
        waitJob(tok, started(curl("POST", "/api/v1/repair", tok,
                                  json({{"report", reportId}, {"table", "public.orders"}, {"keys", {7}}}).dump())));
    ASSERT_EQ(repaired["state"], "done") << repaired.dump(2);
    ASSERT_EQ(repaired["result"]["tables"].size(), 1u) << repaired.dump(2);
    EXPECT_EQ(repaired["result"]["tables"][0]["statements"], plan["tables"][0]["statements"]) << repaired.dump(2);
    EXPECT_EQ(repaired["result"]["tables"][0]["keys"], 1);
    EXPECT_EQ(repaired["result"]["tables"][0]["written"], 1);
    EXPECT_EQ(dst.scalar("SELECT total FROM orders WHERE id = 7"), src.scalar("SELECT total FROM orders WHERE id = 7"));
    EXPECT_EQ(dst.scalar("SELECT total FROM orders WHERE id = 8"), "-1.00");
    ASSERT_TRUE(repaired["result"]["check_report"].is_number_integer()) << repaired.dump(2);
    const json check =
        curl("GET", "/api/v1/reconciles/" + std::to_string(repaired["result"]["check_report"].get<long long>()), tok)
            .parsed();
    EXPECT_EQ(check["tables"][0]["missing"], 0) << check.dump(2);
    EXPECT_EQ(check["tables"][0]["different"], 1) << check.dump(2);

    // Keys without their table, or a cancel of no job: refused with what to send.
    EXPECT_EQ(curl("POST", "/api/v1/repair", tok, json({{"report", reportId}, {"keys", {7}}}).dump()).status, 400);
    EXPECT_EQ(curl("POST", "/api/v1/jobs/999999/cancel", tok).status, 404);

    // Slots read now, where the agent runs.
    const json slots = curl("GET", "/api/v1/slots?fresh=true", tok).parsed();
    bool ours = false;
    for (const auto &s : slots["slots"])
        ours = ours || s.value("slot", std::string()) == "driftless_" + pipeline;
    EXPECT_TRUE(ours) << slots.dump(2);
    stopAgent();
}

// Test connection and the pipeline editor's discovery run where the agent runs, over its API:
// what they find is what the engine there finds, a DSN with a password is refused as apply
// refuses it, and a probe left waiting for a server that never answers holds up nothing else.
TEST_F(Agent, probeAndDiscoverReadEndpointsWhereTheAgentRunsAndASlowOneHoldsNothingUp)
{
    startAgent();
    const std::string tok = token();
    const auto &s = servers();

    // An endpoint of the workspace, by name.
    auto r = curl("POST", "/api/v1/probe", tok, R"({"endpoint": "app"})");
    ASSERT_EQ(r.status, 200) << r.body;
    json p = r.parsed();
    EXPECT_EQ(p["kind"], "postgres");
    EXPECT_TRUE(p["ok"].get<bool>()) << p.dump(2);
    EXPECT_TRUE(p["postgres"]["connected"].get<bool>());
    EXPECT_EQ(p["postgres"]["wal_level"], "logical");
    EXPECT_EQ(p["postgres"]["tables"], 2) << p.dump(2);
    // One being edited, whole: a database that does not exist is the server's refusal, with its code.
    r = curl("POST", "/api/v1/probe", tok,
             json{{"endpoint", {{"kind", "postgres"}, {"dsn", host + " dbname=no_such_db_here"}}}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    p = r.parsed();
    EXPECT_FALSE(p["ok"].get<bool>());
    EXPECT_FALSE(p["postgres"]["connected"].get<bool>());
    EXPECT_EQ(p["postgres"]["code"], "3D000") << p.dump(2);
    EXPECT_FALSE(p["postgres"]["hint"].get<std::string>().empty());
    // MariaDB with the password given for this probe only.
    r = curl(
        "POST", "/api/v1/probe", tok,
        json{{"endpoint",
              {{"kind", "mysql"}, {"dsn", "mysql://" + s.myUser + "@" + s.myHost + ":" + std::to_string(s.myPort)}}},
             {"password", s.myPassword}}
            .dump());
    ASSERT_EQ(r.status, 200) << r.body;
    p = r.parsed();
    EXPECT_TRUE(p["mysql"]["connected"].get<bool>()) << p.dump(2);
    EXPECT_TRUE(p["mysql"]["mariadb"].get<bool>());
    EXPECT_TRUE(p["mysql"]["binlog"].is_array());
    // A SQLite file the first sync would create.
    r = curl("POST", "/api/v1/probe", tok,
             json{{"endpoint", {{"kind", "sqlite"}, {"path", dir.file("later.db")}}}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    p = r.parsed();
    EXPECT_TRUE(p["sqlite"]["ok"].get<bool>()) << p.dump(2);
    EXPECT_FALSE(p["sqlite"]["exists"].get<bool>());
    EXPECT_FALSE(std::filesystem::exists(dir.file("later.db")));
    // Refused as the workspace loader refuses it, and nothing is tried.
    r = curl("POST", "/api/v1/probe", tok,
             json{{"endpoint", {{"kind", "postgres"}, {"dsn", host + " dbname=x password=hunter2x"}}}}.dump());
    EXPECT_EQ(r.status, 422) << r.body;
    EXPECT_NE(r.body.find("password"), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find("hunter2x"), std::string::npos) << r.body;
    r = curl("POST", "/api/v1/probe", tok, R"({"endpoint": "nowhere"})");
    EXPECT_EQ(r.status, 422) << r.body;
    r = curl("POST", "/api/v1/probe", tok, R"({"endpoint": {"kind": "oracle", "dsn": "x"}})");
    EXPECT_EQ(r.status, 422) << r.body;
    r = curl("POST", "/api/v1/probe", tok, R"({})");
    EXPECT_EQ(r.status, 400) << r.body;
    r = curl("POST", "/api/v1/probe", "", R"({"endpoint": "app"})");
    EXPECT_EQ(r.status, 401) << r.body;
    EXPECT_EQ(r.body.find("postgres"), std::string::npos) << r.body;

    // Discovery: what the engine finds in process, table for table.
    r = curl("POST", "/api/v1/discover", tok, R"({"endpoint": "app"})");
    ASSERT_EQ(r.status, 200) << r.body;
    const auto served = driftless::core::discoveryFromJson(r.parsed());
    driftless::core::Endpoint app;
    app.name = "app";
    app.dsn = host + " dbname=" + src.name();
    const auto direct = driftless::core::discoverSource(app);
    ASSERT_TRUE(served.ok) << served.error;
    ASSERT_TRUE(direct.ok) << direct.error;
    EXPECT_TRUE(served.abilities.logicalWal);
    EXPECT_TRUE(served.abilities.canReplicate);
    ASSERT_EQ(served.tables.size(), direct.tables.size());
    for (std::size_t i = 0; i < direct.tables.size(); ++i) {
        EXPECT_EQ(served.tables[i].table, direct.tables[i].table);
        EXPECT_EQ(served.tables[i].primaryKey, direct.tables[i].primaryKey);
        EXPECT_EQ(served.tables[i].cursorCandidates, direct.tables[i].cursorCandidates);
        EXPECT_EQ(served.tables[i].readable, direct.tables[i].readable);
        EXPECT_EQ(served.tables[i].cdcRefused, direct.tables[i].cdcRefused);
    }
    ASSERT_EQ(served.tables.size(), 2u);
    EXPECT_EQ(served.tables[1].table.name, "orders");
    EXPECT_EQ(served.tables[1].primaryKey, std::vector<std::string>{"id"});
    r = curl("POST", "/api/v1/discover", tok,
             json{{"endpoint", {{"kind", "sqlite"}, {"path", dir.file("later.db")}}}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_FALSE(r.parsed()["ok"].get<bool>());
    EXPECT_NE(r.parsed()["error"].get<std::string>().find("does not read from"), std::string::npos) << r.body;

    // A "server" that takes the connection and never answers: the probe waits for libpq's
    // timeout (10 s) while the agent goes on answering.
    const int silent = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(silent, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(silent, 8), 0);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::getsockname(silent, reinterpret_cast<sockaddr *>(&addr), &len), 0);
    const std::string silentDsn = "host=127.0.0.1 port=" + std::to_string(ntohs(addr.sin_port)) + " dbname=x";
    std::atomic<bool> probing{true};
    Curl slow;
    std::thread prober([&] {
        slow = curlOn("slow", "POST", "/api/v1/probe", tok,
                      json{{"endpoint", {{"kind", "postgres"}, {"dsn", silentDsn}}}}.dump());
        probing = false;
    });
    // The probe is in the agent (its connection has reached the silent server) ...
    bool waiting = false;
    for (int i = 0; i < 600 && !waiting; ++i) {
        pollfd pfd{silent, POLLIN, 0};
        waiting = ::poll(&pfd, 1, 50) > 0;
    }
    EXPECT_TRUE(waiting) << "the probe never reached the silent server";
    // ... and the agent answers others meanwhile.
    auto metrics = curlOn("metrics", "GET", "/metrics", {});
    EXPECT_EQ(metrics.status, 200);
    auto tables = curlOn("tables", "GET", "/api/v1/tables", tok);
    EXPECT_EQ(tables.status, 200);
    EXPECT_TRUE(probing.load()) << "the probe ended before the others were answered: " << slow.body;
    prober.join();
    ::close(silent);
    ASSERT_EQ(slow.status, 200) << slow.body;
    EXPECT_FALSE(json::parse(slow.body)["postgres"]["connected"].get<bool>()) << slow.body;
    stopAgent();
}
