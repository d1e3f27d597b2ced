#include "core/engine/statusreport.h"

#include "core/engine/freshness.h"
#include "core/engine/observer.h"
#include "core/engine/pauses.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include <cstdio>
#include <ctime>
#include <map>

namespace driftless::core {
namespace
{

/// A CDC table copying its rows again under its stream: while chunks are copied the state says
/// so; while one waits to resume (after a restart, or a pause) its position holds its progress.
bool isRebackfill(Strategy strategy, TableState state, const std::string &message, const std::string &checkpoint)
{
    if (strategy != Strategy::Cdc)
        return false;
    if (state == TableState::Backfilling && message.starts_with(kRebackfillMessage))
        return true;
    // Most positions carry no copy: a parse only for those that may.
    if (checkpoint.find("\"rebackfill\"") == std::string::npos)
        return false;
    auto pos = nlohmann::json::parse(checkpoint, nullptr, false);
    return pos.is_object() && pos.contains("rebackfill");
}

} // namespace

std::string formatIso8601(std::int64_t ms)
{
    std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
    return buf;
}

std::vector<TableReport> buildStatus(const Workspace &ws, const std::vector<StateStore::TableStatus> &statuses,
                                     std::int64_t nowMs, const std::vector<StateStore::ReconcileSummary> &reconciles,
                                     const std::vector<StateStore::PausedTable> &paused)
{
    std::map<std::pair<std::string, TableRef>, std::int64_t> pausedAt;
    for (const auto &p : paused)
        pausedAt[{p.pipeline, p.table}] = p.pausedAtMs;
    std::map<std::pair<std::string, std::string>, const StateStore::ReconcileSummary *> lastReconcile;
    for (const auto &s : reconciles) {
        auto &slot = lastReconcile[{s.pipeline, s.table}];
        if (!slot || s.reportId > slot->reportId)
            slot = &s;
    }
    std::map<std::pair<std::string, TableRef>, const StateStore::TableStatus *> byKey;
    for (const auto &s : statuses)
        byKey[{s.pipeline, s.table}] = &s;
    std::vector<TableReport> out;
    for (const auto &p : ws.pipelines) {
        const Endpoint *tgt = ws.endpoint(p.target);
        for (const auto &t : p.tables) {
            TableReport r;
            r.pipeline = p.name;
            r.table = t.table.display();
            r.target = p.target + ":" + (tgt ? resolveTargetName(p, t, tgt->kind).display() : "?");
            r.strategy = t.strategy;
            r.fellBackFromCdc = t.fallbackFrom == Strategy::Cdc;
            r.slaSeconds = static_cast<double>(t.effectiveSla().count()) / 1000.0;
            std::optional<std::int64_t> fresh;
            if (auto it = byKey.find({p.name, t.table}); it != byKey.end()) {
                const auto &s = *it->second;
                r.state = s.state;
                r.message = s.message;
                r.rowsApplied = s.rowsApplied;
                r.lastSyncAtMs = s.lastSyncAtMs;
                // A status written under another strategy says nothing about this one.
                if (s.strategy == t.strategy) {
                    r.checkpoint = s.checkpoint;
                    r.version = s.version;
                    fresh = s.freshAsOfMs;
                }
                r.progress = s.progress;
                if (s.backfillRows) {
                    TableReport::Backfill b;
                    b.rows = *s.backfillRows;
                    if (s.backfillTotal && *s.backfillTotal > 0) {
                        b.total = std::max(*s.backfillTotal, *s.backfillRows);
                        b.percent = std::round(1000.0 * static_cast<double>(b.rows) / static_cast<double>(*b.total)) / 10.0;
                    }
                    if (s.backfillEtaSeconds)
                        b.etaSeconds = std::max(0.0, *s.backfillEtaSeconds -
                                                         static_cast<double>(nowMs - s.updatedAtMs) / 1000.0);
                    r.backfill = b;
                }
            }
            if (auto it = pausedAt.find({p.name, t.table}); it != pausedAt.end()) {
                r.paused = true;
                r.pausedAtMs = it->second;
                // The engine's own words when it took the pause (or is about to resume it), ours
                // when it has not yet.
                if (r.state != TableState::Paused) {
                    r.state = TableState::Paused;
                    r.message = pausedMessage(t.strategy);
                }
            }
            r.lagSeconds = lagSeconds(fresh, nowMs);
            r.freshness = freshnessOf(r.lagSeconds, t.effectiveSla());
            if (auto it = lastReconcile.find({p.name, r.table}); it != lastReconcile.end()) {
                const auto &rc = *it->second;
                r.reconcile = rc;
                r.driftAlertAbove = p.driftAlertAbove();
                r.driftAlert = rc.error.empty() && rc.missing + rc.extra + rc.different > 0 &&
                               rc.driftRatio > r.driftAlertAbove;
                if (r.driftAlert && (r.freshness == Freshness::Ok || r.freshness == Freshness::Unknown))
                    r.freshness = Freshness::Warn; // maybe fresh, but not equal: a DBA should look
            }
            r.rebackfill = isRebackfill(r.strategy, r.state, r.message, r.checkpoint);
            out.push_back(std::move(r));
        }
    }
    return out;
}

std::string describeBackfill(const TableReport::Backfill &b)
{
    std::string s = std::to_string(b.rows);
    if (b.total) {
        char pct[32];
        std::snprintf(pct, sizeof pct, " (%.1f%%)", b.percent.value_or(0));
        s += " of " + std::to_string(*b.total) + " rows" + pct;
    } else {
        s += " rows (no estimate of the total: the table was never analyzed)";
    }
    if (b.etaSeconds) {
        auto secs = static_cast<long long>(std::llround(*b.etaSeconds));
        s += ", about ";
        if (secs >= 3600)
            s += std::to_string(secs / 3600) + "h " + std::to_string(secs % 3600 / 60) + "m";
        else if (secs >= 60)
            s += std::to_string(secs / 60) + "m " + std::to_string(secs % 60) + "s";
        else
            s += std::to_string(secs) + "s";
        s += " left";
    }
    return s;
}

nlohmann::json tablesJsonValue(const std::vector<TableReport> &tables)
{
    using json = nlohmann::json;
    json arr = json::array();
    for (const auto &t : tables) {
        json cp = nullptr;
        if (!t.checkpoint.empty()) {
            cp = json::parse(t.checkpoint, nullptr, false);
            if (cp.is_discarded())
                cp = t.checkpoint;
        }
        json j = {
            {"pipeline", t.pipeline},
            {"table", t.table},
            {"target", t.target},
            {"strategy", toString(t.strategy)},
            {"state", toString(t.state)},
            {"message", t.message},
            {"rows_applied", t.rowsApplied},
            {"last_sync_at", t.lastSyncAtMs ? json(formatIso8601(*t.lastSyncAtMs)) : json(nullptr)},
            {"checkpoint", cp},
            {"version", t.version},
            {"lag_seconds", t.lagSeconds ? json(*t.lagSeconds) : json(nullptr)},
            {"freshness", toString(t.freshness)},
            {"freshness_sla_seconds", t.slaSeconds},
            {"progress", t.progress ? json(*t.progress) : json(nullptr)},
        };
        // The position a DBA reads first: the LSN for CDC, the cursor value for cursor tables.
        j["last_synced_lsn"] = cp.is_object() && cp.contains("lsn") ? cp["lsn"] : json(nullptr);
        j["cursor"] = cp.is_object() && cp.contains("cursor") ? cp["cursor"] : json(nullptr);
        j["fallback_from"] = t.fellBackFromCdc ? json("cdc") : json(nullptr);
        j["rebackfill"] = t.rebackfill;
        j["paused"] = t.paused;
        j["paused_at"] = t.pausedAtMs ? json(formatIso8601(*t.pausedAtMs)) : json(nullptr);
        j["reconcile"] = nullptr;
        if (t.reconcile)
            j["reconcile"] = {{"report_id", t.reconcile->reportId},
                              {"at", formatIso8601(t.reconcile->finishedMs)},
                              {"source_rows", t.reconcile->sourceRows},
                              {"target_rows", t.reconcile->targetRows},
                              {"missing", t.reconcile->missing},
                              {"extra", t.reconcile->extra},
                              {"different", t.reconcile->different},
                              {"in_flight", t.reconcile->inFlight},
                              {"drift_ratio", t.reconcile->driftRatio},
                              {"alert", t.driftAlert},
                              {"error", t.reconcile->error.empty() ? json(nullptr) : json(t.reconcile->error)}};
        j["backfill"] = nullptr;
        if (t.backfill)
            j["backfill"] = {{"rows", t.backfill->rows},
                             {"total", t.backfill->total ? json(*t.backfill->total) : json(nullptr)},
                             {"percent", t.backfill->percent ? json(*t.backfill->percent) : json(nullptr)},
                             {"eta_seconds", t.backfill->etaSeconds ? json(std::round(*t.backfill->etaSeconds))
                                                                    : json(nullptr)}};
        arr.push_back(std::move(j));
    }
    return arr;
}

std::string statusJson(const std::vector<TableReport> &tables, std::int64_t nowMs)
{
    using json = nlohmann::json;
    json arr = tablesJsonValue(tables);
    json root = {{"generated_at", formatIso8601(nowMs)}, {"tables", std::move(arr)}};
    return root.dump(2);
}

} // namespace driftless::core
