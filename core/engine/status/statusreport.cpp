#include "core/engine/status/statusreport.h"

#include "core/base/isotime.h"
#include "core/base/jsonfields.h"
#include "core/engine/jobs/observer.h"
#include "core/engine/jobs/pauses.h"
#include "core/engine/status/freshness.h"
#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

namespace driftless::core {
namespace {

/// The CDC position a table's checkpoint holds: none for other strategies, and none for a damaged
/// one (the engine refuses that one with the fix; a status shows what it can).
std::optional<CdcPosition> cdcPositionOf(Strategy strategy, const std::string &checkpoint)
{
    if (strategy != Strategy::Cdc || checkpoint.empty())
        return std::nullopt;
    try {
        return parseCdcPosition(checkpoint);
    } catch (const Error &) {
        return std::nullopt;
    }
}

/// A CDC table copying its rows again under its stream: while chunks are copied the state says
/// so; while one waits to resume (after a restart, or a pause) its position holds its progress.
bool isRebackfill(Strategy strategy, TableState state, const std::string &message, const std::string &checkpoint)
{
    if (strategy != Strategy::Cdc)
        return false;
    if (state == TableState::Backfilling &&
        (message.starts_with(kRebackfillMessage) || message.starts_with(kRecoveryMessage) ||
         message.starts_with(kAdoptMessage)))
        return true;
    // Most positions carry no copy: a parse only for those that may.
    if (checkpoint.find("\"rebackfill\"") == std::string::npos)
        return false;
    const auto pos = cdcPositionOf(strategy, checkpoint);
    const auto *pg = pos ? std::get_if<PgCdcPosition>(&*pos) : nullptr;
    return pg && pg->rebackfill;
}

} // namespace

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
            const TargetName targetName = tgt ? resolveTargetName(p, t, tgt->kind) : TargetName{"", "?"};
            // A two-way pipeline's table twice: source to target, then target to source (its reverse
            // direction reads the target's table and is stored under the reverse name).
            for (const bool reverse : {false, true}) {
                if (reverse && !p.twoWay)
                    break;
                const std::string direction = reverse ? p.reverseName() : p.name;
                const TableRef read = reverse && tgt ? reverseTableOf(p, t, *tgt) : t.table;
                TableReport r;
                r.pipeline = direction;
                r.table = read.display();
                r.source = (reverse ? p.target : p.source) + ":" + read.display();
                r.target =
                    reverse ? p.source + ":" + t.table.display() : p.target + ":" + (tgt ? targetName.display() : "?");
                if (p.twoWay) {
                    r.twoWay = p.name;
                    r.reverse = reverse;
                }
                r.strategy = t.strategy;
                r.fellBackFromCdc = t.fallbackFrom == Strategy::Cdc;
                r.pickedUp = t.discovered;
                r.slaSeconds = static_cast<double>(t.effectiveSla().count()) / 1000.0;
                std::optional<std::int64_t> fresh;
                if (auto it = byKey.find({direction, read}); it != byKey.end()) {
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
                            b.percent =
                                std::round(1000.0 * static_cast<double>(b.rows) / static_cast<double>(*b.total)) / 10.0;
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
                if (auto it = lastReconcile.find({direction, r.table}); it != lastReconcile.end()) {
                    const auto &rc = *it->second;
                    r.reconcile = rc;
                    r.driftAlertAbove = p.driftAlertAbove();
                    r.driftAlert = rc.error.empty() && rc.missing + rc.extra + rc.different > 0 &&
                                   rc.driftRatio > r.driftAlertAbove;
                    if (r.driftAlert && (r.freshness == Freshness::Ok || r.freshness == Freshness::Unknown))
                        r.freshness = Freshness::Warn; // maybe fresh, but not equal: a DBA should look
                }
                r.rebackfill = isRebackfill(r.strategy, r.state, r.message, r.checkpoint);
                if (const auto cdc = cdcPositionOf(r.strategy, r.checkpoint)) {
                    r.sourceIdentity = sourceIdentityOf(*cdc);
                    // The mark in the checkpoint says what stopped it, whoever mirrored the state.
                    if (r.state == TableState::Error && stoppedBySourceChange(*cdc))
                        r.state = TableState::SourceChanged;
                }
                out.push_back(std::move(r));
            }
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
            {"source", t.source},
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
        // The position a DBA reads first: the LSN (or the binlog file and offset) for CDC, the
        // cursor value for cursor tables.
        const auto cdc = cdcPositionOf(t.strategy, t.checkpoint);
        const std::string streamPos = cdc ? describeStreamPosition(*cdc) : std::string();
        const bool binlogPos = cdc && std::holds_alternative<BinlogCdcPosition>(*cdc);
        j["last_synced_lsn"] = !streamPos.empty() && !binlogPos ? json(streamPos) : json(nullptr);
        j["last_synced_binlog"] = !streamPos.empty() && binlogPos ? json(streamPos) : json(nullptr);
        j["cursor"] = cp.is_object() && cp.contains("cursor") ? cp["cursor"] : json(nullptr);
        j["two_way"] = t.twoWay.empty()
                           ? json(nullptr)
                           : json{{"pipeline", t.twoWay}, {"direction", t.reverse ? "reverse" : "forward"}};
        j["fallback_from"] = t.fellBackFromCdc ? json("cdc") : json(nullptr);
        j["picked_up"] = t.pickedUp;
        j["rebackfill"] = t.rebackfill;
        j["paused"] = t.paused;
        j["paused_at"] = t.pausedAtMs ? json(formatIso8601(*t.pausedAtMs)) : json(nullptr);
        j["source_identity"] = nullptr;
        if (const auto &id = t.sourceIdentity; id && id->postgres)
            j["source_identity"] = {{"system_id", id->systemId.empty() ? json(nullptr) : json(id->systemId)},
                                    {"timeline", id->timeline ? json(id->timeline) : json(nullptr)}};
        else if (id)
            j["source_identity"] = {{"server_id", id->serverId ? json(id->serverId) : json(nullptr)},
                                    {"gtid", id->gtid.empty() ? json(nullptr) : json(id->gtid)}};
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
                              {"alert_above", t.driftAlertAbove},
                              {"error", t.reconcile->error.empty() ? json(nullptr) : json(t.reconcile->error)}};
        j["backfill"] = nullptr;
        if (t.backfill)
            j["backfill"] = {
                {"rows", t.backfill->rows},
                {"total", t.backfill->total ? json(*t.backfill->total) : json(nullptr)},
                {"percent", t.backfill->percent ? json(*t.backfill->percent) : json(nullptr)},
                {"eta_seconds", t.backfill->etaSeconds ? json(std::round(*t.backfill->etaSeconds)) : json(nullptr)}};
        arr.push_back(std::move(j));
    }
    return arr;
}

std::vector<TableReport> tablesFromJson(const nlohmann::json &tables)
{
    if (!tables.is_array())
        throw Error(ErrorKind::Permanent, "the agent's tables are not a JSON array");
    using jsonfields::flag;
    using jsonfields::integer;
    using jsonfields::number;
    using jsonfields::text;
    std::vector<TableReport> out;
    for (const auto &j : tables) {
        if (!j.is_object())
            continue;
        TableReport t;
        t.pipeline = text(j, "pipeline");
        t.table = text(j, "table");
        t.source = text(j, "source");
        t.target = text(j, "target");
        if (auto tw = j.find("two_way"); tw != j.end() && tw->is_object()) {
            t.twoWay = text(*tw, "pipeline");
            t.reverse = text(*tw, "direction") == "reverse";
        }
        t.strategy = strategyFromString(text(j, "strategy")).value_or(Strategy::FullRefresh);
        t.state = tableStateFrom(text(j, "state")).value_or(TableState::Idle);
        t.message = text(j, "message");
        t.rowsApplied = integer(j, "rows_applied").value_or(0);
        t.lastSyncAtMs = parseIso8601(text(j, "last_sync_at"));
        if (auto cp = j.find("checkpoint"); cp != j.end() && !cp->is_null())
            t.checkpoint = cp->is_string() ? cp->get<std::string>() : cp->dump();
        t.version = integer(j, "version").value_or(0);
        t.lagSeconds = number(j, "lag_seconds");
        t.freshness = freshnessFrom(text(j, "freshness")).value_or(Freshness::Unknown);
        t.slaSeconds = number(j, "freshness_sla_seconds").value_or(0);
        t.progress = number(j, "progress");
        t.fellBackFromCdc = text(j, "fallback_from") == "cdc";
        t.pickedUp = flag(j, "picked_up");
        t.rebackfill = flag(j, "rebackfill");
        t.paused = flag(j, "paused");
        t.pausedAtMs = parseIso8601(text(j, "paused_at"));
        if (auto id = j.find("source_identity"); id != j.end() && id->is_object()) {
            SourceIdentity s;
            s.postgres = !id->contains("server_id");
            s.systemId = text(*id, "system_id");
            s.timeline = static_cast<int>(integer(*id, "timeline").value_or(0));
            s.serverId = static_cast<std::uint32_t>(integer(*id, "server_id").value_or(0));
            s.gtid = text(*id, "gtid");
            t.sourceIdentity = s;
        }
        if (auto rc = j.find("reconcile"); rc != j.end() && rc->is_object()) {
            StateStore::ReconcileSummary s;
            s.reportId = integer(*rc, "report_id").value_or(0);
            s.pipeline = t.pipeline;
            s.table = t.table;
            s.finishedMs = parseIso8601(text(*rc, "at")).value_or(0);
            s.sourceRows = integer(*rc, "source_rows").value_or(0);
            s.targetRows = integer(*rc, "target_rows").value_or(0);
            s.missing = integer(*rc, "missing").value_or(0);
            s.extra = integer(*rc, "extra").value_or(0);
            s.different = integer(*rc, "different").value_or(0);
            s.inFlight = integer(*rc, "in_flight").value_or(0);
            s.driftRatio = number(*rc, "drift_ratio").value_or(0);
            s.error = text(*rc, "error");
            t.reconcile = s;
            t.driftAlert = flag(*rc, "alert");
            t.driftAlertAbove = number(*rc, "alert_above").value_or(0);
        }
        if (auto bf = j.find("backfill"); bf != j.end() && bf->is_object()) {
            TableReport::Backfill b;
            b.rows = integer(*bf, "rows").value_or(0);
            b.total = integer(*bf, "total");
            b.percent = number(*bf, "percent");
            b.etaSeconds = number(*bf, "eta_seconds");
            t.backfill = b;
        }
        out.push_back(std::move(t));
    }
    return out;
}

std::string statusJson(const std::vector<TableReport> &tables, std::int64_t nowMs)
{
    using json = nlohmann::json;
    json arr = tablesJsonValue(tables);
    json root = {{"generated_at", formatIso8601(nowMs)}, {"tables", std::move(arr)}};
    if (const auto loops = loopCountersSnapshot(); !loops.empty()) {
        json dirs = json::array();
        const auto conflicts = conflictCountsSnapshot();
        for (const auto &l : loops) {
            json entry = {{"pipeline", l.pipeline},
                          {"direction", l.direction},
                          {"changes_captured", l.captured},
                          {"changes_applied", l.applied},
                          {"changes_dropped_own", l.droppedOwn}};
            // A pipeline's conflicts (both directions', per table and outcome) on its forward entry.
            if (l.direction == l.pipeline) {
                json byTable = json::array();
                for (const auto &c : conflicts)
                    if (c.pipeline == l.pipeline)
                        byTable.push_back({{"table", c.table}, {"outcome", c.outcome}, {"count", c.count}});
                entry["conflicts"] = std::move(byTable);
            }
            dirs.push_back(std::move(entry));
        }
        root["two_way"] = std::move(dirs);
    }
    return root.dump(2);
}

} // namespace driftless::core
