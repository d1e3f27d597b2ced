#include "app/cli/liveview.h"

#include "core/base/clock.h"
#include "core/base/isotime.h"
#include "core/engine/status/statusreport.h"

#include <cstdio>

namespace driftless::cli {

using namespace driftless::core;

LiveView::LiveView(const Workspace &ws, const StateObserver &state, bool terminal)
    : m_ws(ws), m_state(state), m_terminal(terminal)
{
}

LiveView::~LiveView()
{
    if (m_terminal && m_lineShown)
        std::fputs("\n", stdout);
}

void LiveView::printLine(const std::string &line)
{
    std::lock_guard lock(m_mutex);
    if (m_terminal && m_lineShown)
        std::fputs("\r\033[K", stdout);
    std::fprintf(stdout, "%s %s\n", formatIso8601(wallClockMs()).c_str(), line.c_str());
    if (m_terminal) {
        std::fputs(statusLine().c_str(), stdout);
        m_lineShown = true;
    }
    std::fflush(stdout);
}

std::string LiveView::statusLine() const
{
    auto reports = buildStatus(m_ws, m_state.snapshot(), wallClockMs());
    std::string line;
    long long rows = 0;
    for (const auto &r : reports) {
        rows += r.rowsApplied;
        std::string part = r.table + " " + std::string(toString(r.state));
        if (r.state == TableState::Backfilling && r.backfill)
            part += " " + (r.backfill->percent ? std::to_string(static_cast<int>(*r.backfill->percent)) + "%"
                                               : std::to_string(r.backfill->rows) + " rows");
        else if (r.lagSeconds)
            part +=
                " " + std::to_string(static_cast<long long>(*r.lagSeconds)) + "s " + std::string(toString(r.freshness));
        line += (line.empty() ? "" : " | ") + part;
    }
    line = "[" + std::to_string(rows) + " rows] " + line + "  (Ctrl+C stops)";
    if (line.size() > 200)
        line = line.substr(0, 197) + "...";
    return line;
}

void LiveView::tableState(const TableKey &key, TableState state, const std::string &message,
                          std::optional<core::Progress>)
{
    if (isFailing(state))
        printLine(key.display() + ": " + std::string(toString(state)) + ": " + message);
}

void LiveView::batchApplied(const TableKey &key, const ApplyResult &result, const Checkpoint &,
                            std::optional<std::int64_t> freshAsOfMs)
{
    const std::string name = key.display() + " (" + std::string(toString(key.strategy)) + ")";
    if (result.direct && key.strategy != Strategy::FullRefresh) {
        // Initial load: one line per chunk, so progress is visible on big tables.
        printLine(name + ": loaded " + std::to_string(result.rowsInBatch) + " rows");
        return;
    }
    PassTotals totals;
    {
        std::lock_guard lock(m_mutex);
        auto &t = m_pass[key.display()];
        t.read += result.rowsInBatch;
        t.written += result.rowsWritten;
        t.batches += result.rowsInBatch > 0 ? 1 : 0;
        if (!freshAsOfMs)
            return;
        if (key.strategy == Strategy::Cdc) {
            // A stream has no passes: one summary line per table every 10 seconds at most.
            const auto now = wallClockMs();
            if (t.sinceMs == 0)
                t.sinceMs = now;
            if (now - t.sinceMs < 10'000 || t.read == 0)
                return;
        }
        totals = t;
        m_pass.erase(key.display());
    }
    if (key.strategy == Strategy::Cdc) {
        printLine(name + ": streamed " + std::to_string(totals.read) + " changes, wrote " +
                  std::to_string(totals.written) + " rows (" + std::to_string(totals.batches) + " batches)");
        return;
    }
    if (totals.read == 0)
        return; // nothing changed: the status line shows the table is alive
    if (key.strategy == Strategy::FullRefresh)
        printLine(name + ": refreshed, " + std::to_string(totals.written) + " rows");
    else
        printLine(name + ": pass complete, read " + std::to_string(totals.read) + " rows, wrote " +
                  std::to_string(totals.written) + " (" + std::to_string(totals.batches) + " batches)");
}

void LiveView::event(Level level, const TableKey &key, const std::string &kind, const std::string &message)
{
    if (kind == "sync_failed")
        return; // already printed as a state change
    printLine(std::string(toString(level)) + ": " + key.display() + ": " + message);
}

void LiveView::tick()
{
    if (!m_terminal)
        return;
    std::lock_guard lock(m_mutex);
    std::fputs("\r\033[K", stdout);
    std::fputs(statusLine().c_str(), stdout);
    std::fflush(stdout);
    m_lineShown = true;
}

} // namespace driftless::cli
