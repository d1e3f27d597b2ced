// Two-way pipelines on Postgres for a user who may not use replication origins (no superuser, no
// EXECUTE on pg_replication_origin_session_setup): each applied transaction begins with a
// transactional pg_logical_emit_message marker, and the other direction's reader drops the
// transactions carrying it. Same promises as tst_twoway: a change crosses once and never comes
// back, and what `resolve` writes is not read back either.

#include "core/db/pgconnection.h"
#include "core/engine/commands/doctor.h"
#include "core/engine/run/scheduler.h"
#include "core/engine/sync/tablesync.h"
#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/error.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"
#include "tests/support/twowayfixture.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

using namespace driftless::core;
using namespace driftless::test;

namespace {

/// A login role with REPLICATION and nothing else cluster-wide (the origin functions stay
/// revoked from PUBLIC, as Postgres ships them), dropped when it goes out of scope. It logs in
/// with the fixture's password, which the tests' environment already supplies.
class MarkerRole {
public:
    MarkerRole() : m_name(uniqueName("twm_role"))
    {
        PgConnection admin(pgDsn("postgres"));
        admin.exec("CREATE ROLE " + quoteIdent(m_name) + " LOGIN REPLICATION PASSWORD " +
                   pgLiteral(servers().pgPassword));
    }
    ~MarkerRole()
    {
        try {
            PgConnection admin(pgDsn("postgres"));
            admin.exec("DROP ROLE IF EXISTS " + quoteIdent(m_name));
        } catch (const Error &e) {
            std::printf("role not dropped: %s\n", e.describe().c_str());
        }
    }
    MarkerRole(const MarkerRole &) = delete;
    MarkerRole &operator=(const MarkerRole &) = delete;
    const std::string &name() const { return m_name; }
    /// What an application database's owner grants a sync user: create schemas and tables.
    void grantOn(PgTestDb &db) const
    {
        db.exec("GRANT CREATE ON DATABASE " + quoteIdent(db.name()) + " TO " + quoteIdent(m_name) +
                "; GRANT USAGE, CREATE ON SCHEMA public TO " + quoteIdent(m_name));
    }
    Endpoint endpoint(const std::string &endpointName, const PgTestDb &db) const
    {
        Endpoint e = pgEndpoint(endpointName, db.name());
        const auto &s = servers();
        e.dsn = "host=" + s.pgHost + " port=" + std::to_string(s.pgPort) + " user=" + m_name + " dbname=" + db.name();
        return e;
    }

private:
    std::string m_name;
};

const char *kItems = "CREATE TABLE items (id int PRIMARY KEY, v text NOT NULL, n int NOT NULL)";

struct PgTwoWayMarker : ::testing::Test {
    MarkerRole role; // declared first: dropped after the databases that name it
    PgTestDb a{"twm_a"};
    PgTestDb b{"twm_b"};
    RecordingObserver obs;
    std::string pipeline = uniqueName("twm");
    std::stop_source stop;
    std::thread engine;

    void TearDown() override
    {
        if (engine.joinable()) {
            stop.request_stop();
            engine.join();
        }
    }
    Workspace workspace()
    {
        Workspace ws;
        ws.endpoints["a"] = role.endpoint("a", a);
        ws.endpoints["b"] = role.endpoint("b", b);
        PipelineSpec p;
        p.name = pipeline;
        p.source = "a";
        p.target = "b";
        p.twoWay = true;
        TableSpec t;
        t.table = TableRef::parse("public.items");
        t.strategy = Strategy::Cdc;
        p.tables.push_back(t);
        ws.pipelines.push_back(p);
        return ws;
    }
    std::string hash(PgTestDb &db)
    {
        auto c = db.connect();
        return pgHash(c, "SELECT id, v, n FROM items", "id");
    }
    bool positionsPassNow(int seconds) { return pgSlotsPassNow(a, pipeline, seconds); }
    /// A's table, owned by the role (the reverse direction adds its version column to it), with
    /// `rows` rows; both databases grant the role what a sync user gets.
    void setUpSides(int rows)
    {
        a.exec(std::string(kItems) + "; INSERT INTO items SELECT g, 'v' || g, g FROM generate_series(1, " +
               std::to_string(rows) + ") g; ALTER TABLE items OWNER TO " + quoteIdent(role.name()));
        role.grantOn(a);
        role.grantOn(b);
    }
    void startAndWaitStreaming()
    {
        auto jobs = jobsFor(workspace());
        ASSERT_EQ(jobs.size(), 2u);
        engine = std::thread([this, jobs] { Scheduler(jobs, obs, {}).run(stop.get_token()); });
        ASSERT_TRUE(waitFor([&] { return pgLoadedAndStreaming(a, b, pipeline, "items"); }, 180))
            << "the load and both directions' start; states: " << obs.lastStates["public.items"];
        ASSERT_TRUE(positionsPassNow(120)) << "both directions' slots must pass the load";
    }
};

} // namespace

TEST_F(PgTwoWayMarker, theRoleMayNotUseReplicationOrigins)
{
    PgConnection c(role.endpoint("a", a).dsn);
    EXPECT_EQ(c.exec("SELECT has_function_privilege('pg_catalog.pg_replication_origin_session_setup(text)', "
                     "'EXECUTE'), rolsuper FROM pg_roles WHERE rolname = current_user")
                  .text(0, 0),
              "f");
    EXPECT_EQ(ownWriteMarkFor(c), OwnWriteMark::Message);
    PgConnection su(a.dsn());
    EXPECT_EQ(ownWriteMarkFor(su), OwnWriteMark::Origin);
}

// One UPDATE on A: applied once on B, read back by B->A as our own (by its marker) and dropped,
// so A's row is never written again; the same the other way; no origin was created.
TEST_F(PgTwoWayMarker, anUpdateOnAIsAppliedOnceOnBAndNeverComesBack)
{
    setUpSides(100);
    startAndWaitStreaming();
    const auto fwd0 = loopCountersOf(pipeline);
    const auto rev0 = loopCountersOf(pipeline + "_rev");

    a.exec("UPDATE items SET v = 'changed on a', n = n + 1000 WHERE id = 7");
    const std::string xmin = a.scalar("SELECT xmin::text FROM items WHERE id = 7");
    ASSERT_TRUE(waitFor([&] { return b.scalar("SELECT v FROM items WHERE id = 7") == "changed on a"; }, 60));
    ASSERT_TRUE(positionsPassNow(90)) << "both directions' slots must pass the change";

    const auto fwd = loopCountersOf(pipeline);
    const auto rev = loopCountersOf(pipeline + "_rev");
    EXPECT_EQ(fwd.captured - fwd0.captured, 1);
    EXPECT_EQ(fwd.applied - fwd0.applied, 1);
    EXPECT_EQ(fwd.droppedOwn - fwd0.droppedOwn, 0);
    EXPECT_EQ(rev.captured - rev0.captured, 0) << "B->A captured the change it had applied: a loop";
    EXPECT_EQ(rev.applied - rev0.applied, 0);
    EXPECT_EQ(rev.droppedOwn - rev0.droppedOwn, 1) << "B->A must see the applied change and drop it as ours";
    EXPECT_EQ(a.scalar("SELECT xmin::text FROM items WHERE id = 7"), xmin) << "A's row was written again";
    EXPECT_EQ(hash(a), hash(b));

    b.exec("UPDATE items SET v = 'changed on b' WHERE id = 9");
    ASSERT_TRUE(waitFor([&] { return a.scalar("SELECT v FROM items WHERE id = 9") == "changed on b"; }, 60));
    const std::string bRowXmin = b.scalar("SELECT xmin::text FROM items WHERE id = 9");
    ASSERT_TRUE(positionsPassNow(90));
    const auto fwd2 = loopCountersOf(pipeline);
    const auto rev2 = loopCountersOf(pipeline + "_rev");
    EXPECT_EQ(rev2.captured - rev.captured, 1);
    EXPECT_EQ(rev2.applied - rev.applied, 1);
    EXPECT_EQ(fwd2.captured - fwd.captured, 0) << "A->B captured the change it had applied: a loop";
    EXPECT_EQ(fwd2.droppedOwn - fwd.droppedOwn, 1);
    EXPECT_EQ(b.scalar("SELECT xmin::text FROM items WHERE id = 9"), bRowXmin) << "B's row was written again";
    EXPECT_EQ(hash(a), hash(b));

    // What `resolve` writes on B (as the same role) is marked too: B->A drops it.
    writeResolution(role.endpoint("b", b), pipeline + "_rev", TargetName{"public", "items"}, R"({"id": "11"})",
                    R"({"id": "11", "v": "resolved on b", "n": "11"})");
    EXPECT_EQ(b.scalar("SELECT v FROM items WHERE id = 11"), "resolved on b");
    ASSERT_TRUE(positionsPassNow(90));
    const auto rev3 = loopCountersOf(pipeline + "_rev");
    EXPECT_EQ(rev3.captured - rev2.captured, 0) << "the resolution was read back";
    EXPECT_EQ(rev3.droppedOwn - rev2.droppedOwn, 1);
    EXPECT_EQ(a.scalar("SELECT v FROM items WHERE id = 11"), "v11");

    PgConnection admin(pgDsn("postgres"));
    EXPECT_EQ(admin
                  .execParams("SELECT count(*) FROM pg_replication_origin WHERE roname LIKE $1",
                              {"driftless_" + pipeline + "%"})
                  .toInt(0, 0),
              0)
        << "the role cannot create origins: the marker must have been used";
}

// doctor says which mark each side uses, and that the marker needs nothing extra.
TEST_F(PgTwoWayMarker, doctorSaysEachSideUsesTheMarker)
{
    setUpSides(1);
    for (const std::string side : {"a", "b"}) {
        bool marker = false;
        for (const auto &f : runDoctor(workspace(), pipeline)) {
            if (f.subject != "endpoint " + side)
                continue;
            EXPECT_EQ(f.message.find("GRANT EXECUTE"), std::string::npos) << f.message;
            marker = marker || (std::string(toString(f.level)) == "ok" &&
                                f.message.find("pg_logical_emit_message") != std::string::npos &&
                                f.message.find("nothing extra is needed") != std::string::npos);
        }
        EXPECT_TRUE(marker) << side;
    }
}
