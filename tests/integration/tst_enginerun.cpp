// core::EngineRun, the run lifecycle every face (driftless-cli run, serve, the app) shares: it
// refuses a workspace it cannot run, starts again in place when the stored workspace changes,
// and keeps every table's status readable from other threads while it runs and after.

#include "core/engine/run/enginerun.h"
#include "core/engine/run/stateobserver.h"
#include "core/model/error.h"
#include "core/state/statestore.h"
#include "tests/support/testsupport.h"
#include "tests/support/waiting.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

using namespace driftless;
using namespace driftless::test;

namespace {

/// How often this file's conditions are asked again.
constexpr std::chrono::milliseconds kPoll{50};

/// Records what the engine run tells its face.
class Recorder final : public core::EngineRunListener {
public:
    core::EngineObserver *started(const Start &s) override
    {
        std::lock_guard lock(m_mutex);
        std::size_t tables = 0;
        for (const auto &p : s.workspace.pipelines)
            tables += p.tables.size();
        m_starts.push_back({s.restarts, tables, s.jobs.size()});
        return nullptr;
    }
    void finished(int errors, bool restarting) override
    {
        std::lock_guard lock(m_mutex);
        m_finishes.emplace_back(errors, restarting);
    }
    struct StartSeen {
        int restarts;
        std::size_t workspaceTables, jobs;
    };
    std::vector<StartSeen> starts() const
    {
        std::lock_guard lock(m_mutex);
        return m_starts;
    }
    std::vector<std::pair<int, bool>> finishes() const
    {
        std::lock_guard lock(m_mutex);
        return m_finishes;
    }

private:
    mutable std::mutex m_mutex;
    std::vector<StartSeen> m_starts;
    std::vector<std::pair<int, bool>> m_finishes;
};

struct EngineRunTest : ::testing::Test {
    PgTestDb src{"engrun_src"};
    PgTestDb dst{"engrun_dst"};
    TempDir dir;
    std::string statePath = dir.file("workspace.db");
    std::string pipeline = uniqueName("engrun");

    void SetUp() override
    {
        src.exec("CREATE TABLE first (id bigint PRIMARY KEY, v text); "
                 "INSERT INTO first SELECT g, 'v' || g FROM generate_series(1, 50) g; "
                 "CREATE TABLE second (id bigint PRIMARY KEY, v text); "
                 "INSERT INTO second SELECT g, 'w' || g FROM generate_series(1, 70) g");
    }
    core::Workspace workspace(const std::vector<std::string> &tables)
    {
        core::Workspace ws;
        ws.endpoints["app"] = pgEndpoint("app", src.name());
        ws.endpoints["dw"] = pgEndpoint("dw", dst.name());
        core::PipelineSpec p;
        p.name = pipeline;
        p.source = "app";
        p.target = "dw";
        for (const auto &t : tables) {
            core::TableSpec spec;
            spec.table = {"public", t};
            spec.strategy = core::Strategy::FullRefresh;
            p.tables.push_back(spec);
        }
        ws.pipelines = {p};
        return ws;
    }
    static std::string stateOf(const core::EngineRun::Status &s, const std::string &table)
    {
        for (const auto &t : s.tables)
            if (t.table == "public." + table)
                return std::string(toString(t.state));
        return {};
    }
};

TEST_F(EngineRunTest, aWorkspaceItCannotRunIsRefusedBeforeAnythingRuns)
{
    auto state = core::WorkspaceState::create(statePath);
    auto &store = state.store();
    core::EngineRun empty(state, {});
    EXPECT_THROW(empty.run({}), core::ConfigError);
    store.applyWorkspace(workspace({"first"}));
    core::EngineRunOptions o;
    o.pipeline = "no_such_pipeline";
    try {
        core::EngineRun(state, o).run({});
        FAIL() << "an unknown pipeline was run";
    } catch (const core::ConfigError &e) {
        EXPECT_NE(std::string(e.what()).find("no pipeline named 'no_such_pipeline'"), std::string::npos) << e.what();
    }
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM pg_tables WHERE tablename = 'first'"), "0");
}

TEST_F(EngineRunTest, oncePassesEveryTableAndKeepsTheirStatusAfterwards)
{
    auto state = core::WorkspaceState::create(statePath);
    auto &store = state.store();
    store.applyWorkspace(workspace({"first", "second"}));
    core::EngineRunOptions o;
    o.once = true;
    core::EngineRun engine(state, o);
    Recorder face;
    EXPECT_EQ(engine.run({}, &face), 0);
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM first"), "50");
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM second"), "70");
    const auto status = engine.status(core::StateStore::nowMs());
    ASSERT_TRUE(status.workspace);
    EXPECT_EQ(stateOf(status, "first"), "ok");
    EXPECT_EQ(stateOf(status, "second"), "ok");
    ASSERT_EQ(face.starts().size(), 1u);
    ASSERT_EQ(face.finishes().size(), 1u);
    EXPECT_EQ(face.finishes()[0], std::make_pair(0, false));
}

TEST_F(EngineRunTest, aChangedWorkspaceRestartsTheRunInPlace)
{
    auto state = core::WorkspaceState::create(statePath);
    auto &store = state.store();
    store.applyWorkspace(workspace({"first"}));
    core::EngineRunOptions o;
    o.checkEvery = core::Millis(200);
    core::EngineRun engine(state, o);
    Recorder face;
    std::stop_source stop;
    std::atomic<int> result{-1};
    std::jthread runner([&] { result = engine.run(stop.get_token(), &face); });
    struct StopAtEnd {
        std::stop_source &stop;
        ~StopAtEnd() { stop.request_stop(); }
    } stopAtEnd{stop};

    ASSERT_TRUE(
        waitFor([&] { return stateOf(engine.status(core::StateStore::nowMs()), "first") == "ok"; }, kWaitLimit, kPoll));
    EXPECT_EQ(stateOf(engine.status(core::StateStore::nowMs()), "second"), "");

    // Another process (apply, promote, a slot guard fallback) changes the stored workspace.
    core::StateStore(statePath).applyWorkspace(workspace({"first", "second"}));
    ASSERT_TRUE(waitFor([&] { return stateOf(engine.status(core::StateStore::nowMs()), "second") == "ok"; }, kWaitLimit,
                        kPoll));
    EXPECT_EQ(dst.scalar("SELECT count(*) FROM second"), "70");
    auto starts = face.starts();
    ASSERT_EQ(starts.size(), 2u);
    EXPECT_EQ(starts[0].restarts, 0);
    EXPECT_EQ(starts[0].jobs, 1u);
    EXPECT_EQ(starts[1].restarts, 1);
    EXPECT_EQ(starts[1].jobs, 2u);
    ASSERT_GE(face.finishes().size(), 1u);
    EXPECT_TRUE(face.finishes()[0].second) << "the first run ended to start again";

    stop.request_stop();
    runner.join();
    EXPECT_EQ(result.load(), 0);
    ASSERT_EQ(face.finishes().size(), 2u);
    EXPECT_FALSE(face.finishes()[1].second) << "a stop is not a restart";
    // What the last run knew stays readable after it.
    EXPECT_EQ(stateOf(engine.status(core::StateStore::nowMs()), "second"), "ok");
}

TEST_F(EngineRunTest, everyFaceSamplesItsSlotsWithoutTheMonitor)
{
    // run and the app (no monitor, no alerts) keep the slot history too, at their own pace.
    auto ws = workspace({"first"});
    ws.pipelines[0].tables[0].strategy = core::Strategy::Cdc;
    auto state = core::WorkspaceState::create(statePath);
    state.store().applyWorkspace(ws);
    core::EngineRunOptions o;
    o.checkEvery = core::Millis(200);
    o.slotSampleEvery = core::Millis(1000);
    ASSERT_FALSE(o.monitor);
    core::EngineRun engine(state, o);
    std::stop_source stop;
    std::jthread runner([&] { engine.run(stop.get_token(), nullptr); });
    struct StopAtEnd {
        std::stop_source &stop;
        ~StopAtEnd() { stop.request_stop(); }
    } stopAtEnd{stop};

    const std::string slot = "driftless_" + pipeline;
    core::StateStore reader(statePath);
    std::vector<core::SlotSample> samples;
    const auto started = core::StateStore::nowMs();
    ASSERT_TRUE(waitFor(
        [&] {
            samples = reader.slotSamples("app", slot, 0);
            return samples.size() >= 3;
        },
        std::chrono::seconds(120), kPoll))
        << "samples of " << slot << ": " << samples.size();
    const auto elapsed = core::StateStore::nowMs() - started;
    EXPECT_LE(static_cast<std::int64_t>(samples.size()), elapsed / 1000 + 2) << "sampled faster than slotSampleEvery";
    for (std::size_t i = 1; i < samples.size(); ++i)
        EXPECT_GE(samples[i].tsMs - samples[i - 1].tsMs, 900) << "two samples closer than slotSampleEvery";
    EXPECT_TRUE(samples.back().retainedBytes.has_value()) << "a sample holds the WAL the slot retains";
    stop.request_stop();
    runner.join();
}

TEST_F(EngineRunTest, aRunOfOnePipelineKnowsTheOtherPipelinesSlotsAreNotOrphans)
{
    // serve --pipeline A monitors A's source; B's slot there is B's, not an orphan to drop.
    auto ws = workspace({"first"});
    ws.pipelines[0].tables[0].strategy = core::Strategy::Cdc;
    core::PipelineSpec other = ws.pipelines[0];
    other.name = uniqueName("engrun_b");
    other.tables[0].table = {"public", "second"};
    ws.pipelines.push_back(other);
    const std::string otherSlot = "driftless_" + other.name;
    src.exec("SELECT pg_create_logical_replication_slot('" + otherSlot + "', 'pgoutput')");
    auto state = core::WorkspaceState::create(statePath);
    state.store().applyWorkspace(ws);
    core::EngineRunOptions o;
    o.pipeline = pipeline;
    o.monitor = true;
    o.checkEvery = core::Millis(200);
    core::EngineRun engine(state, o);
    std::stop_source stop;
    std::jthread runner([&] { engine.run(stop.get_token(), nullptr); });
    struct StopAtEnd {
        std::stop_source &stop;
        ~StopAtEnd() { stop.request_stop(); }
    } stopAtEnd{stop};

    std::optional<core::SlotReport> seen;
    core::MonitorSample sample;
    ASSERT_TRUE(waitFor(
        [&] {
            sample = engine.monitorSample();
            for (const auto &source : sample.sources)
                for (const auto &s : source.replicationSlots)
                    if (s.slot == otherSlot)
                        seen = s;
            return seen.has_value();
        },
        std::chrono::seconds(120), kPoll))
        << "the monitor never listed " << otherSlot;
    EXPECT_EQ(seen->owner, other.name);
    EXPECT_FALSE(seen->orphaned);
    for (const auto &a : sample.alerts)
        EXPECT_NE(a.kind, "slot_orphaned") << a.message;
    stop.request_stop();
    runner.join();
}

TEST(SlotActivity, remembersSinceWhenASlotIsInactiveAndForgetsOneThatWentAway)
{
    auto slot = [](const std::string &source, const std::string &name, bool active) {
        core::SlotReport r;
        r.source = source;
        r.slot = name;
        r.active = active;
        return r;
    };
    core::SlotActivity a;
    core::SourceSlots app{"app", "", "0/0", std::nullopt, {slot("app", "s1", false), slot("app", "s2", true)}};
    core::SourceSlots other{"other", "", "0/0", std::nullopt, {slot("other", "s3", false)}};
    a.observe({app, other}, 1000);
    EXPECT_EQ(a.inactiveSince(), (std::map<std::string, std::int64_t>{{"app/s1", 1000}, {"other/s3", 1000}}));
    // Still inactive later: since the first sighting.
    a.observe({app, other}, 2000);
    EXPECT_EQ(a.inactiveSince().at("app/s1"), 1000);
    // s1 dropped; the other source unreachable this time: its slot is kept as it was.
    app.replicationSlots = {slot("app", "s2", false)};
    other.error = "connection refused";
    other.replicationSlots.clear();
    a.observe({app, other}, 3000);
    EXPECT_EQ(a.inactiveSince(), (std::map<std::string, std::int64_t>{{"app/s2", 3000}, {"other/s3", 1000}}));
    // Active again: no longer inactive.
    app.replicationSlots = {slot("app", "s2", true)};
    a.observe({app, other}, 4000);
    EXPECT_EQ(a.inactiveSince(), (std::map<std::string, std::int64_t>{{"other/s3", 1000}}));
}

} // namespace
