#include "app/cli/liveview.h"

#include "core/engine/statusreport.h"

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
    std::fprintf(stdout, "%s %s\n", formatIso8601(StateStore::nowMs()).c_str(), line.c_str());
    if (m_terminal) {
        std::fputs(statusLine().c_str(), stdout);
        m_lineShown = true;
    }
    std::fflush(stdout);
}

std::string LiveView::statusLine() const
{
    auto reports = buildStatus(m_ws, m_state.snapshot(), StateStore::nowMs());
    std::string line;
    long long rows = 0;
    for (const auto &r : reports) {
        rows += r.rowsApplied;
        std::string part = r.table + " " + r.state;
        if (r.state == "backfilling" && r.progress)
            part += " " + std::to_string(static_cast<int>(*r.progress * 100)) + "%";
        else if (r.lagSeconds)
            part += " " + std::to_string(static_cast<long long>(*r.lagSeconds)) + "s " + r.freshness;
        line += (line.empty() ? "" : " | ") + part;
    }
    line = "[" + std::to_string(rows) + " rows] " + line + "  (Ctrl+C stops)";
    if (line.size() > 200)
        line = line.substr(0, 197) + "...";
    return line;
}

void LiveView::tableState(const TableKey &key, const std::string &state, const std::string &message,
                          std::optional<double>)
{
    if (state == "error" || state == "retrying")
        printLine(key.display() + ": " + state + ": " + message);
}

void LiveView::batchApplied(const TableKey &key, const ApplyResult &result, const Checkpoint &,
                            std::optional<std::int64_t> freshAsOfMs)
{
    if (result.rowsInBatch == 0 && !freshAsOfMs)
        return;
    std::string what = result.direct ? "loaded" : "merged";
    std::string line = key.display() + " (" + std::string(toString(key.strategy)) + "): " + what + " " +
                       std::to_string(result.rowsInBatch) + " rows, " + std::to_string(result.rowsWritten) + " written";
    if (freshAsOfMs)
        line += ", pass complete";
    if (!m_terminal || result.rowsInBatch > 0 || freshAsOfMs)
        printLine(line);
}

void LiveView::event(const std::string &level, const TableKey &key, const std::string &kind, const std::string &message)
{
    if (kind == "sync_failed")
        return; // already printed as a state change
    printLine(level + ": " + key.display() + ": " + message);
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
