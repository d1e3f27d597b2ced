#include "core/engine/status/alerts.h"

#include "core/base/isotime.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/engine/slots/binlogretention.h"
#include "core/engine/slots/slotprojection.h"
#include "core/model/duration.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>

namespace driftless::core {

namespace {

std::string seconds(double s)
{
    return std::to_string(static_cast<long long>(std::llround(s))) + " s";
}

} // namespace

std::vector<Alert> computeAlerts(const Workspace &ws, const std::vector<TableReport> &tables,
                                 const std::vector<SourceSlots> &sources,
                                 const std::map<std::string, std::int64_t> &inactiveSinceMs, std::int64_t nowMs)
{
    std::vector<Alert> out;
    for (const auto &t : tables) {
        if (isStopped(t.state)) {
            Alert a;
            a.kind = "table_error";
            a.level = Level::Error;
            a.pipeline = t.pipeline;
            a.table = t.table;
            a.message = t.pipeline + "/" + t.table + " stopped: " + t.message;
            a.action = t.state == TableState::SourceChanged
                           ? "bring the target back to the new server by diff: driftless-cli recover " + t.pipeline +
                                 ", or load it again: driftless-cli resnapshot " + t.pipeline + " (docs/failover.md)"
                           : "fix the cause named in the message; the table is retried every 5 minutes, or at once "
                             "on the next run";
            out.push_back(std::move(a));
        }
        if (t.driftAlert && t.reconcile) {
            Alert a;
            a.kind = "drift";
            a.level = Level::Warn;
            a.pipeline = t.pipeline;
            a.table = t.table;
            char pct[32];
            std::snprintf(pct, sizeof pct, "%.4g%%", t.reconcile->driftRatio * 100.0);
            a.message = "reconciliation " + std::to_string(t.reconcile->reportId) + " found " + t.pipeline + "/" +
                        t.table + " drifted: " + std::to_string(t.reconcile->missing) + " missing, " +
                        std::to_string(t.reconcile->extra) + " extra, " + std::to_string(t.reconcile->different) +
                        " different rows (" + pct + " of " + std::to_string(t.reconcile->sourceRows) + ")";
            a.action =
                "review the report (driftless-cli reconcile shows it again) and resolve it: driftless-cli repair " +
                std::to_string(t.reconcile->reportId) + " --table " + t.table;
            out.push_back(std::move(a));
        }
        // A paused table falls behind on purpose: its state says so, an alert would be noise.
        if (!isStopped(t.state) && !t.paused && t.freshness == Freshness::Breach && t.lagSeconds) {
            Alert a;
            a.kind = "lag_breach";
            a.level = Level::Warn;
            a.pipeline = t.pipeline;
            a.table = t.table;
            a.message = t.pipeline + "/" + t.table + " is " + seconds(*t.lagSeconds) +
                        " behind the source, past its "
                        "freshness SLA of " +
                        seconds(t.slaSeconds);
            a.action =
                t.state == TableState::Idle || t.state == TableState::Ok
                    ? "no sync is running for it: start one (driftless-cli run, or the app)"
                    : "check the target and the table's recent events (driftless-cli status); a slow target or a "
                      "large backlog catches up by itself";
            out.push_back(std::move(a));
        }
    }
    for (const auto &ss : sources) {
        if (!ss.error.empty()) {
            Alert a;
            a.kind = "source_unreachable";
            a.level = Level::Warn;
            a.source = ss.source;
            a.message = "cannot read the replication slots of " + ss.source + ": " + ss.error;
            a.action = "check the server and the endpoint's connection settings";
            out.push_back(std::move(a));
            continue;
        }
        for (const auto &b : ss.binlogs) {
            Alert a;
            a.source = b.source;
            a.pipeline = b.pipeline;
            if (!b.error.empty() && !b.bytesBehind && !b.neededPurged) {
                a.kind = "source_unreachable";
                a.level = Level::Warn;
                a.message = "cannot read the binlogs of " + b.source + " for pipeline " + b.pipeline + ": " + b.error;
                a.action = "check the server and the endpoint's connection settings (SHOW BINARY LOGS needs the "
                           "BINLOG MONITOR or REPLICATION CLIENT privilege)";
            } else if (b.neededPurged) {
                a.kind = "binlog_purged";
                a.level = Level::Error;
                a.message = "pipeline " + b.pipeline + " needs binlog " + b.neededFile + " on " + b.source +
                            ", which the server has purged (its oldest is " + b.oldestFile + ")";
                a.action = "re-snapshot the pipeline: driftless-cli resnapshot " + b.pipeline +
                           "; and keep binlogs longer than the pipeline may be stopped (binlog_expire_logs_seconds)";
            } else if (b.secondsToExpiry && b.retentionSeconds && *b.retentionSeconds > 0 &&
                       *b.secondsToExpiry < binlogExpiryWarnSeconds(*b.retentionSeconds)) {
                const bool due = *b.secondsToExpiry <= 0;
                a.kind = "binlog_expiry";
                a.level = due ? Level::Error : Level::Warn;
                a.message = "pipeline " + b.pipeline + " needs binlog " + b.neededFile + " on " + b.source +
                            ", which " +
                            (due ? std::string("the server purges at its next binlog rotation")
                                 : "the server may purge in " + humanTimeLeft(*b.secondsToExpiry)) +
                            " (binlog_expire_logs_seconds " + std::to_string(*b.retentionSeconds) + ")";
                a.action = "start the sync of pipeline " + b.pipeline +
                           " so it reads past that file (driftless-cli run, serve, or the app), or keep binlogs "
                           "longer: " +
                           binlogRetentionFix(b, nowMs);
            } else {
                continue;
            }
            a.id = a.kind + ":" + a.source + "/" + binlogSampleKey(a.pipeline);
            out.push_back(std::move(a));
        }
        const Endpoint *ep = ws.endpoint(ss.source);
        const SlotGuard *guard = ep && ep->slotGuard ? &*ep->slotGuard : nullptr;
        for (const auto &s : ss.replicationSlots) {
            auto base = [&](const char *kind, Level level) {
                Alert a;
                a.kind = kind;
                a.level = level;
                a.source = s.source;
                a.slot = s.slot;
                a.pipeline = s.owner;
                return a;
            };
            const bool ours = !s.owner.empty();
            if (s.walStatus == WalStatus::Lost) {
                Alert a = base("slot_lost", Level::Error);
                a.message = "replication slot " + s.slot + " on " + s.source +
                            " was invalidated (wal_status lost): the WAL it needed is gone";
                a.action = ours
                               ? "re-snapshot the pipeline: driftless-cli resnapshot " + s.owner
                               : "drop it (SELECT pg_drop_replication_slot('" + s.slot + "')) and re-sync its consumer";
                out.push_back(std::move(a));
            } else if (s.walStatus == WalStatus::Unreserved) {
                Alert a = base("slot_unreserved", Level::Error);
                a.message = "replication slot " + s.slot + " on " + s.source +
                            " holds more WAL than max_slot_wal_keep_size allows: the next checkpoint invalidates it";
                a.action = ours ? "make sure the sync of pipeline " + s.owner + " is running and catching up"
                                : "resume its consumer now, or drop the slot";
                out.push_back(std::move(a));
            }
            if (guard && guard->maxRetained > 0 && s.retainedBytes && *s.retainedBytes >= guard->effectiveWarn() &&
                s.walStatus != WalStatus::Lost) {
                const bool past = *s.retainedBytes >= guard->maxRetained;
                Alert a = base("slot_retained", past ? Level::Error : Level::Warn);
                a.message = "replication slot " + s.slot + " on " + s.source + " holds " +
                            humanBytes(*s.retainedBytes) + " of WAL (" + (past ? "limit " : "warning level ") +
                            humanBytes(past ? guard->maxRetained : guard->effectiveWarn()) + ")";
                a.action = ours ? "start or unblock the sync of " + s.owner +
                                      " so it catches up; if it cannot, drop the slot before the source's disk fills "
                                      "(driftless-cli resnapshot " +
                                      s.owner + " with the sync stopped)"
                                : "resume the slot's consumer or drop the slot";
                out.push_back(std::move(a));
            }
            if (!s.active && !s.temporary && (ours || s.orphaned)) {
                auto it = inactiveSinceMs.find(s.source + "/" + s.slot);
                const Millis limit = guard ? guard->effectiveInactiveAlert() : Millis(600'000);
                if (it != inactiveSinceMs.end() && nowMs - it->second >= limit.count() && ours) {
                    Alert a = base("slot_inactive", Level::Warn);
                    a.message = "replication slot " + s.slot + " on " + s.source + " has not been read for " +
                                formatDuration(Millis((nowMs - it->second) / 1000 * 1000)) + "; it keeps WAL meanwhile";
                    a.action = "start the sync of pipeline " + s.owner + " (driftless-cli run, serve, or the app)";
                    out.push_back(std::move(a));
                }
            }
            if (s.orphaned) {
                Alert a = base("slot_orphaned", Level::Warn);
                a.message = "replication slot " + s.slot + " on " + s.source +
                            " looks like Driftless's but no pipeline of this workspace reads it" +
                            (s.retainedBytes ? "; it holds " + humanBytes(*s.retainedBytes) + " of WAL" : "");
                a.action = "if no other workspace uses it: SELECT pg_drop_replication_slot('" + s.slot + "')";
                out.push_back(std::move(a));
            }
        }
    }
    // Tunnels live in the process that connects through them: the running engine's.
    for (const auto &[name, e] : ws.endpoints) {
        if (!e.ssh)
            continue;
        const auto state = tunnelState(name);
        if (!state || state->up)
            continue;
        Alert a;
        a.kind = "tunnel_down";
        a.level = Level::Error;
        a.source = name;
        a.id = a.kind + ":" + name;
        a.message = "tunnel down: the SSH tunnel of endpoint " + name + " via " + state->via + " is down (" +
                    state->reason + ")";
        a.action = "fix what the reason names; the engine restarts the tunnel by itself (after 1 s, 2 s, 4 s ... "
                   "at most 30 s) and CDC resumes from its checkpoint";
        out.push_back(std::move(a));
    }
    for (auto &a : out) {
        if (a.id.empty())
            a.id = a.kind + ":" + (a.slot.empty() ? a.pipeline + "/" + a.table : a.source + "/" + a.slot);
        a.sinceMs = nowMs;
    }
    return out;
}

AlertTracker::Change AlertTracker::update(std::vector<Alert> now, std::int64_t nowMs)
{
    Change ch;
    std::map<std::string, Alert> next;
    for (auto &a : now) {
        auto it = m_open.find(a.id);
        if (it != m_open.end())
            a.sinceMs = it->second.sinceMs;
        else {
            a.sinceMs = nowMs;
            ch.opened.push_back(a);
        }
        next[a.id] = std::move(a);
    }
    for (auto &[id, a] : m_open)
        if (!next.count(id))
            ch.cleared.push_back(a);
    m_open = std::move(next);
    return ch;
}

std::vector<Alert> AlertTracker::open() const
{
    std::vector<Alert> out;
    for (const auto &[id, a] : m_open)
        out.push_back(a);
    return out;
}

nlohmann::json alertsJsonValue(const std::vector<Alert> &alerts)
{
    using json = nlohmann::json;
    json arr = json::array();
    auto orNull = [](const std::string &s) { return s.empty() ? json(nullptr) : json(s); };
    for (const auto &a : alerts)
        arr.push_back({{"id", a.id},
                       {"kind", a.kind},
                       {"level", toString(a.level)},
                       {"pipeline", orNull(a.pipeline)},
                       {"table", orNull(a.table)},
                       {"source", orNull(a.source)},
                       {"slot", orNull(a.slot)},
                       {"message", a.message},
                       {"action", a.action},
                       {"since", formatIso8601(a.sinceMs)}});
    return arr;
}

void SlotActivity::observe(const std::vector<SourceSlots> &sources, std::int64_t nowMs)
{
    std::set<std::string> seen, unread;
    for (const auto &ss : sources) {
        if (!ss.error.empty())
            unread.insert(ss.source);
        for (const auto &s : ss.replicationSlots) {
            const std::string key = s.source + "/" + s.slot;
            seen.insert(key);
            if (s.active)
                m_inactiveSince.erase(key);
            else
                m_inactiveSince.try_emplace(key, nowMs);
        }
    }
    std::erase_if(m_inactiveSince, [&](const auto &entry) {
        if (seen.count(entry.first))
            return false;
        const std::string source = entry.first.substr(0, entry.first.find('/'));
        return unread.count(source) == 0;
    });
}

} // namespace driftless::core
