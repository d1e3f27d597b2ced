// driftless-cli serve and slots: /sync/status is JSON with the promised keys, /metrics parses as
// Prometheus text (with the Prometheus project's own parser), only GET on those two paths is
// served, only loopback is bound by default, and the slot monitor raises (and records) an alert
// for an orphaned slot.

#include "core/db/sqlitedb.h"
#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdio>
#include <regex>
#include <thread>

using namespace driftless::test;
using json = nlohmann::json;

namespace {

struct Serve : ::testing::Test {
    PgTestDb src{"serve_src"};
    PgTestDb dst{"serve_dst"};
    TempDir dir;
    std::string state = dir.file("workspace.db");
    std::string pipeline = uniqueName("srv");
    std::string ghost = uniqueName("driftless_ghost");
    int pid = 0;
    int port = 0;
    std::string sla = "60s";

    void SetUp() override
    {
        src.exec("CREATE TABLE orders (id int PRIMARY KEY, total numeric(10,2));"
                 "INSERT INTO orders SELECT g, g FROM generate_series(1, 500) g;"
                 "CREATE TABLE events (id int PRIMARY KEY, updated_at timestamptz NOT NULL DEFAULT now());"
                 "INSERT INTO events SELECT g, now() - interval '1 hour' FROM generate_series(1, 100) g;");
        src.exec("SELECT pg_create_logical_replication_slot('" + ghost + "', 'pgoutput')");
        const auto &s = servers();
        const std::string host = "host=127.0.0.1 port=" + std::to_string(s.pgPort) + " user=" + s.pgUser;
        writeFile(dir.file("ws.yaml"), "endpoints:\n"
                                       "  app: { kind: postgres, dsn: \"" +
                                           host + " dbname=" + src.name() +
                                           "\",\n"
                                           "         slot_guard: { max_retained: 10GB, action: alert } }\n"
                                           "  dw: { kind: postgres, dsn: \"" +
                                           host + " dbname=" + dst.name() +
                                           "\" }\n"
                                           "pipelines:\n"
                                           "  - name: " +
                                           pipeline +
                                           "\n    source: app\n    target: dw\n    tables:\n"
                                           "      - { table: public.orders, strategy: cdc, freshness_sla: " +
                                           sla +
                                           " }\n"
                                           "      - { table: public.events, strategy: cursor, every: 2s }\n");
        auto r = runCli({"--state", state, "apply", dir.file("ws.yaml")});
        ASSERT_EQ(r.exitCode, 0) << r.err;
    }
    void TearDown() override
    {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            waitPid(pid, 30);
        }
    }
    void startServer()
    {
        std::string log = dir.file("serve.log");
        pid = spawnCli({"--state", state, "serve", "--listen", "127.0.0.1:0", "--monitor-every", "300ms"}, {}, log);
        std::regex re("serving http://127\\.0\\.0\\.1:([0-9]+)/sync/status");
        for (int i = 0; i < 200 && port == 0; ++i) {
            std::smatch m;
            std::string out = readFile(log);
            if (std::regex_search(out, m, re))
                port = std::stoi(m[1]);
            else
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ASSERT_GT(port, 0) << readFile(log);
    }
    json status()
    {
        auto r = httpRequest(port, "GET", "/sync/status");
        EXPECT_EQ(r.status, 200);
        EXPECT_EQ(r.contentType, "application/json");
        return json::parse(r.body);
    }
    static const json *find(const json &arr, const std::string &key, const std::string &value)
    {
        for (const auto &x : arr)
            if (x.contains(key) && x[key] == value)
                return &x;
        return nullptr;
    }
    /// The metric families as the prometheus_client parser reads them.
    json parseMetrics(const std::string &text)
    {
        std::string in = dir.file("metrics.txt"), out = dir.file("metrics.json");
        writeFile(in, text);
        std::string cmd =
            "/usr/bin/python3 -c 'import sys, json\n"
            "from prometheus_client.parser import text_string_to_metric_families as parse\n"
            "print(json.dumps([{\"name\": f.name, \"type\": f.type, \"samples\": [{\"name\": s.name, \"labels\": "
            "s.labels, \"value\": s.value} for s in f.samples]} for f in parse(sys.stdin.read())]))' < " +
            in + " > " + out + " 2>&1";
        int rc = std::system(cmd.c_str());
        EXPECT_EQ(rc, 0) << readFile(out) << "\n" << text;
        return rc == 0 ? json::parse(readFile(out)) : json::array();
    }
};

} // namespace

TEST_F(Serve, statusAndMetricsDescribeTablesSlotsAndAlerts)
{
    const auto served = std::chrono::steady_clock::now();
    startServer();
    json st;
    const json *orders = nullptr;
    for (int i = 0; i < 300; ++i) {
        st = status();
        orders = find(st["tables"], "table", "public.orders");
        const json *ghostAlert = nullptr;
        for (const auto &a : st["alerts"])
            if (a["kind"] == "slot_orphaned" && a["slot"] == ghost)
                ghostAlert = &a;
        const json *slot = find(st["slots"], "slot", "driftless_" + pipeline);
        if (orders && (*orders)["state"] == "streaming" && !(*orders)["lag_seconds"].is_null() && ghostAlert && slot &&
            (*slot)["active"] == true)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(orders) << st.dump(2);
    for (const auto &t : st["tables"])
        for (const char *k :
             {"pipeline", "table", "strategy", "state", "last_synced_lsn", "cursor", "lag_seconds", "freshness"})
            EXPECT_TRUE(t.contains(k)) << k << " in " << t.dump();
    EXPECT_EQ((*orders)["state"], "streaming") << st.dump(2);
    EXPECT_EQ((*orders)["pipeline"], pipeline);
    EXPECT_EQ((*orders)["strategy"], "cdc");
    EXPECT_TRUE((*orders)["last_synced_lsn"].is_string()) << orders->dump();
    EXPECT_EQ((*orders)["freshness"], "ok");

    const json *ours = find(st["slots"], "slot", "driftless_" + pipeline);
    ASSERT_TRUE(ours) << st["slots"].dump(2);
    for (const char *k :
         {"slot", "wal_status", "retained_bytes", "active", "source", "confirmed_flush_lsn", "seconds_to_limit"})
        EXPECT_TRUE(ours->contains(k)) << k;
    EXPECT_TRUE((*ours)["seconds_to_limit"].is_null() || (*ours)["seconds_to_limit"].is_number()) << ours->dump();
    EXPECT_EQ((*ours)["active"], true);
    EXPECT_EQ((*ours)["owner"], pipeline);
    EXPECT_EQ((*ours)["wal_status"], "reserved");
    EXPECT_TRUE((*ours)["retained_bytes"].is_number());
    const json *orphan = find(st["slots"], "slot", ghost);
    ASSERT_TRUE(orphan);
    EXPECT_EQ((*orphan)["orphaned"], true);
    EXPECT_EQ((*orphan)["active"], false);

    const json *alert = find(st["alerts"], "kind", "slot_orphaned");
    ASSERT_TRUE(alert) << st["alerts"].dump(2);
    EXPECT_EQ((*alert)["slot"], ghost);
    EXPECT_NE((*alert)["action"].get<std::string>().find("pg_drop_replication_slot('" + ghost + "')"),
              std::string::npos);

    // Metrics, read by the Prometheus client library's parser.
    auto m = httpRequest(port, "GET", "/metrics");
    ASSERT_EQ(m.status, 200);
    EXPECT_EQ(m.contentType.rfind("text/plain; version=0.0.4", 0), 0u) << m.contentType;
    json families = parseMetrics(m.body);
    auto family = [&](const std::string &name) -> const json * { return find(families, "name", name); };
    const json *lag = family("driftless_lag_seconds");
    ASSERT_TRUE(lag) << m.body;
    EXPECT_EQ((*lag)["type"], "gauge");
    bool lagForOrders = false;
    for (const auto &s : (*lag)["samples"])
        lagForOrders |= s["labels"]["pipeline"] == pipeline && s["labels"]["table"] == "public.orders" &&
                        s["value"].get<double>() >= 0;
    EXPECT_TRUE(lagForOrders) << m.body;
    const json *retained = family("driftless_slot_retained_bytes");
    ASSERT_TRUE(retained);
    bool retainedOurs = false;
    for (const auto &s : (*retained)["samples"])
        retainedOurs |= s["labels"]["source"] == "app" && s["labels"]["slot"] == "driftless_" + pipeline;
    EXPECT_TRUE(retainedOurs) << m.body;
    const json *rows = family("driftless_rows_applied"); // the parser drops a counter's _total
    ASSERT_TRUE(rows) << m.body;
    EXPECT_EQ((*rows)["type"], "counter");
    double applied = 0;
    for (const auto &s : (*rows)["samples"])
        if (s["labels"]["table"] == "public.orders")
            applied = s["value"];
    EXPECT_GE(applied, 500);
    const json *alerts = family("driftless_alerts_open");
    ASSERT_TRUE(alerts);

    // Nothing else is served.
    EXPECT_EQ(httpRequest(port, "GET", "/").status, 404);
    EXPECT_EQ(httpRequest(port, "GET", "/sync/status/../../etc/passwd").status, 404);
    EXPECT_NE(httpRequest(port, "POST", "/sync/status").status, 200);

    // The alert was recorded once, as an event.
    ::kill(pid, SIGTERM);
    EXPECT_EQ(waitPid(pid, 60), 0);
    pid = 0;
    const auto servedSeconds =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - served).count();
    driftless::core::SqliteDb db(state, driftless::core::SqliteDb::Mode::ReadOnly);
    EXPECT_EQ(db.scalarInt("SELECT count(*) FROM events WHERE kind = 'alert' AND message LIKE '%" + ghost + "%'"), 1);
    const auto samples = db.scalarInt("SELECT count(*) FROM slot_samples WHERE source = 'app' AND slot = 'driftless_" +
                                      pipeline + "' AND retained_bytes IS NOT NULL");
    EXPECT_GT(samples, 0) << "the monitor keeps what each slot holds over time";
    // Slots are read every 300 ms here, but stored every 15 s (the first reading at once).
    EXPECT_LE(samples, servedSeconds / 15 + 1) << "over " << servedSeconds << " s";
}

TEST_F(Serve, slotsListsEverySlotWithItsOwner)
{
    ASSERT_EQ(runCli({"--state", state, "run", "--once"}).exitCode, 0);
    auto r = runCli({"--state", state, "slots", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = json::parse(r.out);
    const json *ours = find(j["slots"], "slot", "driftless_" + pipeline);
    ASSERT_TRUE(ours) << r.out;
    EXPECT_EQ((*ours)["owner"], pipeline);
    EXPECT_EQ((*ours)["orphaned"], false);
    EXPECT_EQ((*ours)["active"], false);
    const json *orphan = find(j["slots"], "slot", ghost);
    ASSERT_TRUE(orphan);
    EXPECT_EQ((*orphan)["orphaned"], true);
    EXPECT_TRUE((*orphan)["owner"].is_null());
    auto human = runCli({"--state", state, "slots"});
    EXPECT_EQ(human.exitCode, 0);
    EXPECT_NE(human.out.find(ghost), std::string::npos);
    EXPECT_NE(human.out.find("ORPHANED"), std::string::npos) << human.out;
}

TEST_F(Serve, onlyLoopbackIsBoundUnlessAskedOtherwise)
{
    for (const char *addr : {"0.0.0.0:8765", "192.0.2.10:8765", "[::]:8765"}) {
        auto r = runCli({"--state", state, "serve", "--listen", addr});
        EXPECT_EQ(r.exitCode, 2) << addr << ": " << r.out << r.err;
        EXPECT_NE(r.err.find("not a loopback address"), std::string::npos) << r.err;
    }
    auto bad = runCli({"--state", state, "serve", "--listen", "example.org:80"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("not an IP address"), std::string::npos) << bad.err;
    auto port = runCli({"--state", state, "serve", "--listen", "127.0.0.1:99999"});
    EXPECT_EQ(port.exitCode, 2);
    EXPECT_NE(port.err.find("not a port"), std::string::npos) << port.err;
}

namespace {
struct ServeShortSla : Serve {
    ServeShortSla() { sla = "4s"; }
};
} // namespace

TEST_F(ServeShortSla, aStoppedTargetBreachesTheSlaRaisesAnAlertHoldsTheSlotAndCatchesUp)
{
    // faults F7: the target stops taking writes (a lock held on the table). The lag passes the
    // SLA, the badge reads breach, an alert opens; the source is not acknowledged past what the
    // target holds; when the target returns everything catches up and the alert clears.
    startServer();
    auto orders = [&] {
        auto st = status();
        return std::make_pair(*find(st["tables"], "table", "public.orders"), st);
    };
    for (int i = 0; i < 200 && orders().first["state"] != "streaming"; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    src.exec("INSERT INTO orders VALUES (501, 1)");
    for (int i = 0; i < 100 && dst.scalar("SELECT count(*) FROM orders") != "501"; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_EQ(dst.scalar("SELECT count(*) FROM orders"), "501");

    auto blocker = dst.connect();
    blocker.exec("BEGIN; LOCK TABLE public.orders IN ACCESS EXCLUSIVE MODE");
    const std::string slot = "driftless_" + pipeline;
    // Idle positions (keepalives while the walsender reads other databases' WAL) may be
    // acknowledged up to the insert's commit record, never past it: the slot would not send the
    // transaction again. The WAL insert position read just before COMMIT is a lower bound of where
    // the commit record starts (reading it before the INSERT made the test flaky when another
    // database wrote WAL in between and an idle keepalive was acknowledged there).
    std::string held;
    {
        auto writer = src.connect();
        writer.exec("BEGIN");
        writer.exec("INSERT INTO orders SELECT g, g FROM generate_series(502, 600) g");
        held = writer.exec("SELECT pg_current_wal_insert_lsn()").text(0, 0);
        writer.exec("COMMIT");
    }
    json t, st;
    bool alerted = false;
    for (int i = 0; i < 150 && !alerted; ++i) {
        std::tie(t, st) = orders();
        for (const auto &a : st["alerts"])
            alerted |= a["kind"] == "lag_breach" && a["table"] == "public.orders";
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(alerted) << st.dump(2);
    EXPECT_EQ(t["freshness"], "breach") << t.dump();
    EXPECT_GT(t["lag_seconds"].get<double>(), 4.0);
    EXPECT_EQ(src.scalar("SELECT confirmed_flush_lsn <= '" + held +
                         "'::pg_lsn FROM pg_replication_slots WHERE "
                         "slot_name = '" +
                         slot + "'"),
              "t")
        << "the source was acknowledged for changes the target does not have";

    blocker.exec("ROLLBACK");
    bool cleared = false;
    for (int i = 0; i < 200 && !cleared; ++i) {
        std::tie(t, st) = orders();
        bool lagAlert = false;
        for (const auto &a : st["alerts"])
            lagAlert |= a["kind"] == "lag_breach" && a["table"] == "public.orders";
        cleared = t["freshness"] == "ok" && !lagAlert && dst.scalar("SELECT count(*) FROM orders") == "600";
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(cleared) << st.dump(2);
    ::kill(pid, SIGTERM);
    EXPECT_EQ(waitPid(pid, 60), 0);
    pid = 0;
    driftless::core::SqliteDb db(state, driftless::core::SqliteDb::Mode::ReadOnly);
    EXPECT_GE(db.scalarInt("SELECT count(*) FROM events WHERE kind = 'alert' AND message LIKE '%public.orders%'"), 1);
    EXPECT_GE(db.scalarInt("SELECT count(*) FROM events WHERE kind = 'alert_cleared' AND message LIKE "
                           "'%public.orders%'"),
              1);
}

TEST_F(Serve, doctorWarnsAboutOrphanedSlotsAndAnUnboundedSlotSize)
{
    // Another database on the server writes WAL while the source is idle.
    PgTestDb busy("serve_busy");
    {
        auto c = busy.connect();
        for (int i = 0; i < 150; ++i)
            c.exec("SELECT 1");
    } // the backend's statistics are flushed when it exits
    bool counted = false;
    for (int i = 0; i < 50 && !counted; ++i) {
        counted = std::stoll(
                      busy.scalar("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")) > 100;
        if (!counted)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(counted);
    auto r = runCli({"--state", state, "doctor"});
    EXPECT_NE(r.out.find("no heartbeat, and other databases on this server write WAL"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("heartbeat: 1m"), std::string::npos) << r.out;
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err; // warnings only
    EXPECT_NE(r.out.find("slot " + ghost), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("SELECT pg_drop_replication_slot('" + ghost + "');"), std::string::npos) << r.out;
    const bool unbounded = src.scalar("SHOW max_slot_wal_keep_size") == "-1";
    EXPECT_EQ(r.out.find("max_slot_wal_keep_size is unset") != std::string::npos, unbounded) << r.out;
    if (unbounded) {
        EXPECT_NE(r.out.find("ALTER SYSTEM SET max_slot_wal_keep_size"), std::string::npos) << r.out;
    }
}
