#include "core/engine/run/workspacestate.h"

#include "core/base/clock.h"
#include "core/engine/slots/binlogretention.h"
#include "core/engine/slots/slotguard.h"
#include "core/engine/slots/slotprojection.h"
#include "core/engine/slots/slots.h"
#include "core/model/error.h"
#include "core/state/statestore.h"

#include <filesystem>

namespace driftless::core {

namespace {

std::unique_ptr<StateStore> openExisting(const std::string &path)
{
    std::error_code ec;
    if (path.empty() || !std::filesystem::exists(path, ec))
        throw ConfigError("there is no workspace at " + path + "; store one with 'driftless-cli --state " + path +
                          " apply FILE'");
    return std::make_unique<StateStore>(path);
}

} // namespace

WorkspaceState::WorkspaceState(const std::string &path) : m_store(openExisting(path)) {}
WorkspaceState::WorkspaceState(std::unique_ptr<StateStore> store) : m_store(std::move(store)) {}
WorkspaceState WorkspaceState::create(const std::string &path)
{
    return WorkspaceState(std::make_unique<StateStore>(path));
}
WorkspaceState::~WorkspaceState() = default;
WorkspaceState::WorkspaceState(WorkspaceState &&) noexcept = default;
WorkspaceState &WorkspaceState::operator=(WorkspaceState &&) noexcept = default;

const std::string &WorkspaceState::path() const
{
    return m_store->path();
}
StateStore &WorkspaceState::store()
{
    return *m_store;
}

WorkspaceState::Snapshot WorkspaceState::snapshot(std::int64_t nowMs, int eventLimit)
{
    Snapshot s;
    s.workspace = m_store->loadWorkspace();
    s.tables =
        buildStatus(s.workspace, m_store->tableStatuses(), nowMs, m_store->latestReconciles(), m_store->pausedTables());
    s.events = m_store->events(eventLimit);
    return s;
}

Workspace WorkspaceState::workspace()
{
    return m_store->loadWorkspace();
}

std::vector<EventRecord> WorkspaceState::events(int limit, const std::string &pipeline, const std::string &table)
{
    return m_store->events(limit, pipeline, table);
}

std::vector<LagSample> WorkspaceState::lagSamples(const std::string &pipeline, const std::string &table,
                                                  std::int64_t sinceMs)
{
    return m_store->lagSamples(pipeline, table, sinceMs);
}

std::vector<SlotSample> WorkspaceState::slotSamples(const std::string &source, const std::string &slot,
                                                    std::int64_t sinceMs)
{
    return m_store->slotSamples(source, slot, sinceMs);
}

std::vector<SourceSlots> WorkspaceState::slotsNow(bool record)
{
    const Workspace ws = workspace();
    auto sources = listSlots(ws);
    const std::int64_t now = wallClockMs();
    try {
        projectSlots(*m_store, ws, sources, now);
    } catch (const Error &) {
        // The slots as read now are still worth showing; only the projection is missing.
    }
    addBinlogs(sources, ws, m_store->tableStatuses(), now);
    if (record) {
        // Each slot's history goes on while no engine samples it: a slot grows most while the
        // sync is stopped (issue 45).
        std::vector<SlotSample> samples;
        for (const auto &ss : sources) {
            for (const auto &s : ss.replicationSlots)
                samples.push_back({s.source, s.slot, now, s.retainedBytes, s.unconfirmedBytes, s.safeWalSize});
            for (const auto &b : ss.binlogs)
                if (b.bytesBehind)
                    samples.push_back(
                        {b.source, binlogSampleKey(b.pipeline), now, b.bytesBehind, std::nullopt, std::nullopt});
        }
        try {
            m_store->addSlotSamples(samples); // pruned by the next engine run, as its own are
        } catch (const Error &) {
            // The slots read now are still shown; this point of their history is missing.
        }
    }
    return sources;
}

std::vector<ReconcileSummary> WorkspaceState::reconcileSummaries(int limit, const std::string &pipeline)
{
    return m_store->reconcileSummaries(limit, pipeline);
}

void WorkspaceState::storeReport(ReconcileReport &report)
{
    core::storeReport(*m_store, report);
}

std::optional<ReconcileReport> WorkspaceState::loadReport(std::int64_t id)
{
    return core::loadReport(*m_store, id);
}

std::vector<ReportListing> WorkspaceState::listReports(int limit, const std::string &pipeline)
{
    return core::listReports(*m_store, limit, pipeline);
}

void WorkspaceState::recordRepair(const ReconcileReport &report, const std::vector<RepairOutcome> &outcomes)
{
    core::recordRepair(*m_store, report, outcomes);
}

ApplySummary WorkspaceState::apply(const Workspace &ws)
{
    return m_store->applyWorkspace(ws);
}

std::vector<PauseChange> WorkspaceState::setPaused(const Workspace &ws, const std::string &pipeline,
                                                   const std::vector<std::string> &tables, bool pause)
{
    return setTablesPaused(*m_store, ws, pipeline, tables, pause);
}

std::vector<std::string> WorkspaceState::promoteToCdc(const std::string &pipeline,
                                                      const std::vector<std::string> &tables)
{
    return core::promoteToCdc(*m_store, pipeline, tables);
}

std::string WorkspaceState::defaultPath()
{
    return StateStore::defaultPath();
}

void WorkspaceState::note(const std::string &kind, const std::string &message)
{
    m_store->addEvent(Level::Info, {}, {}, kind, message);
}

void WorkspaceState::note(Level level, const std::string &pipeline, const std::string &table, const std::string &kind,
                          const std::string &message)
{
    m_store->addEvent(level, pipeline, table, kind, message);
}

} // namespace driftless::core
