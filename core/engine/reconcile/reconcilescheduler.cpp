// Scheduled reconciliations, and those a slot guard fallback owes.

#include "core/base/clock.h"
#include "core/engine/reconcile/reconciler.h"

#include "core/state/statestore.h"

#include <chrono>
#include <thread>

namespace driftless::core {

ReconcileScheduler::ReconcileScheduler(StateStore &store, Workspace ws, std::string onlyPipeline)
    : m_store(store), m_ws(std::move(ws)), m_only(std::move(onlyPipeline))
{
}

ReconcileScheduler::~ReconcileScheduler()
{
    if (m_thread.joinable()) {
        m_thread.request_stop();
        m_thread.join();
    }
}

void ReconcileScheduler::start()
{
    m_thread = std::jthread([this](std::stop_token stop) {
        while (!stop.stop_requested()) {
            try {
                runDue(wallClockMs(), stop);
            } catch (const std::exception &e) {
                try {
                    m_store.addEvent(Level::Error, "", "", "reconcile",
                                     std::string("scheduled reconciliation failed: ") + e.what());
                } catch (...) {
                }
            }
            for (int i = 0; i < 50 && !stop.stop_requested(); ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    });
}

int ReconcileScheduler::runPending(std::stop_token stop)
{
    int ran = 0;
    const Workspace ws = m_store.loadWorkspace();
    const auto statuses = m_store.tableStatuses();
    for (const auto &pending : m_store.pendingReconciles()) {
        if (stop.stop_requested())
            break;
        if (!m_only.empty() && pending.pipeline != m_only)
            continue;
        if (!ws.pipeline(pending.pipeline)) {
            m_store.clearPendingReconcile(pending.pipeline, pending.table);
            continue;
        }
        // Only once the table has completed a pass since it was owed one.
        bool passed = false;
        for (const auto &s : statuses)
            passed = passed || (s.pipeline == pending.pipeline && s.table.display() == pending.table &&
                                s.lastSyncAtMs && *s.lastSyncAtMs > pending.sinceMs && !isStopped(s.state));
        if (!passed)
            continue;
        ReconcileOptions opt;
        opt.stop = stop;
        auto report = reconcile(ws, pending.pipeline, {pending.table}, opt);
        if (stop.stop_requested())
            break;
        storeReport(m_store, report);
        if (pending.repair && report.drift() > 0) {
            auto outcomes = repairReport(ws, report);
            recordRepair(m_store, report, outcomes);
        }
        m_store.clearPendingReconcile(pending.pipeline, pending.table);
        ++ran;
    }
    return ran;
}

int ReconcileScheduler::runDue(std::int64_t now, std::stop_token stop)
{
    int ran = runPending(stop);
    m_ws = m_store.loadWorkspace();
    std::vector<StateStore::TableStatus> statuses;
    bool statusesRead = false;
    for (const auto &p : m_ws.pipelines) {
        if (stop.stop_requested())
            break;
        if (!p.reconcileEvery || (!m_only.empty() && p.name != m_only))
            continue;
        auto last = m_store.reconcileSummaries(1, p.name);
        if (!last.empty() && now - last.front().finishedMs < p.reconcileEvery->count())
            continue;
        // Not while a table is still loading (or stopped): its differences are not drift yet.
        if (!statusesRead) {
            statuses = m_store.tableStatuses();
            statusesRead = true;
        }
        bool ready = true;
        for (const auto &t : p.tables) {
            bool ok = false;
            for (const auto &s : statuses)
                if (s.pipeline == p.name && s.table == t.table)
                    ok = s.strategy == t.strategy && s.lastSyncAtMs &&
                         (s.state == TableState::Ok || s.state == TableState::Running ||
                          s.state == TableState::Streaming);
            ready = ready && ok;
        }
        if (!ready)
            continue;
        ReconcileOptions opt;
        opt.stop = stop;
        auto report = reconcile(m_ws, p.name, {}, opt);
        if (stop.stop_requested() && report.tables.size() < p.tables.size())
            break; // cut short: not a report
        storeReport(m_store, report);
        ++ran;
    }
    return ran;
}

} // namespace driftless::core
