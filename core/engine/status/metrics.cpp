#include "core/engine/status/metrics.h"

#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/twoway.h"

#include <cstdio>
#include <map>

namespace driftless::core {

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

/// One metric family: HELP and TYPE once, then its samples.
class Family {
public:
    Family(std::string &out, const std::string &name, const char *type, const std::string &help)
        : m_out(out), m_name(name)
    {
        m_out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    }
    void sample(const Labels &labels, double value)
    {
        m_out += m_name;
        if (!labels.empty()) {
            m_out += '{';
            for (size_t i = 0; i < labels.size(); ++i)
                m_out += (i ? "," : "") + labels[i].first + "=\"" + prometheusEscape(labels[i].second) + "\"";
            m_out += '}';
        }
        char buf[64];
        std::snprintf(buf, sizeof buf, " %.15g\n", value);
        m_out += buf;
    }

private:
    std::string &m_out;
    std::string m_name;
};

} // namespace

std::string prometheusEscape(const std::string &value)
{
    std::string out;
    for (char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string prometheusText(const std::vector<TableReport> &tables, const std::vector<SourceSlots> &sources,
                           const std::vector<Alert> &alerts)
{
    std::string out;
    {
        Family f(out, "driftless_lag_seconds", "gauge",
                 "How far behind the source the target table is (seconds); absent before its first sync.");
        for (const auto &t : tables)
            if (t.lagSeconds)
                f.sample({{"pipeline", t.pipeline}, {"table", t.table}}, *t.lagSeconds);
    }
    {
        Family f(out, "driftless_freshness_sla_seconds", "gauge", "The table's freshness SLA (seconds).");
        for (const auto &t : tables)
            f.sample({{"pipeline", t.pipeline}, {"table", t.table}}, t.slaSeconds);
    }
    {
        Family f(out, "driftless_table_freshness", "gauge",
                 "1 for the table's freshness: ok, warn (past half the SLA), breach, unknown.");
        for (const auto &t : tables)
            f.sample({{"pipeline", t.pipeline}, {"table", t.table}, {"freshness", std::string(toString(t.freshness))}},
                     1);
    }
    {
        Family f(out, "driftless_table_state", "gauge",
                 "1 for the table's state: idle, running, backfilling, streaming, ok, retrying, error, paused.");
        for (const auto &t : tables)
            f.sample({{"pipeline", t.pipeline},
                      {"table", t.table},
                      {"strategy", std::string(toString(t.strategy))},
                      {"state", std::string(toString(t.state))}},
                     1);
    }
    {
        Family f(out, "driftless_rows_applied_total", "counter", "Rows written into the target table.");
        for (const auto &t : tables)
            f.sample({{"pipeline", t.pipeline}, {"table", t.table}, {"strategy", std::string(toString(t.strategy))}},
                     static_cast<double>(t.rowsApplied));
    }
    {
        Family f(out, "driftless_backfill_rows", "gauge", "Rows copied so far by the backfill running on the table.");
        for (const auto &t : tables)
            if (t.backfill)
                f.sample({{"pipeline", t.pipeline}, {"table", t.table}}, static_cast<double>(t.backfill->rows));
    }
    {
        Family f(out, "driftless_backfill_total_rows", "gauge", "The planner's estimate of the backfill's rows.");
        for (const auto &t : tables)
            if (t.backfill && t.backfill->total)
                f.sample({{"pipeline", t.pipeline}, {"table", t.table}}, static_cast<double>(*t.backfill->total));
    }
    {
        Family f(out, "driftless_source_up", "gauge",
                 "1 when the source's replication slots (or binary logs) could be read.");
        for (const auto &ss : sources) {
            bool up = ss.error.empty();
            for (const auto &b : ss.binlogs)
                up = up && (b.error.empty() || b.bytesBehind || b.neededPurged);
            f.sample({{"source", ss.source}}, up ? 1 : 0);
        }
    }
    auto binlogFamily = [&](const std::string &name, const char *help, auto value) {
        Family f(out, name, "gauge", help);
        for (const auto &ss : sources)
            for (const auto &b : ss.binlogs)
                if (auto v = value(b))
                    f.sample({{"source", b.source}, {"pipeline", b.pipeline}}, *v);
    };
    binlogFamily("driftless_binlog_bytes_behind",
                 "Binlog from the pipeline's stored position to the end of the source's newest file (bytes).",
                 [](const BinlogRetention &b) {
                     return b.bytesBehind ? std::optional<double>(static_cast<double>(*b.bytesBehind)) : std::nullopt;
                 });
    binlogFamily("driftless_binlog_seconds_to_expiry",
                 "Seconds until the source may purge the binlog file the pipeline needs; absent when nothing "
                 "expires or it is not known.",
                 [](const BinlogRetention &b) { return b.secondsToExpiry; });
    auto slotFamily = [&](const std::string &name, const char *help, auto value) {
        Family f(out, name, "gauge", help);
        for (const auto &ss : sources)
            for (const auto &s : ss.replicationSlots)
                if (auto v = value(s))
                    f.sample({{"source", s.source}, {"slot", s.slot}}, *v);
    };
    auto opt = [](const std::optional<std::int64_t> &v) {
        return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
    };
    slotFamily("driftless_slot_retained_bytes", "WAL the replication slot holds on the source (bytes).",
               [&](const SlotReport &s) { return opt(s.retainedBytes); });
    slotFamily("driftless_slot_unconfirmed_bytes", "WAL written since the slot's confirmed_flush_lsn (bytes).",
               [&](const SlotReport &s) { return opt(s.unconfirmedBytes); });
    slotFamily("driftless_slot_safe_wal_bytes",
               "WAL that may still be written before the slot is invalidated (bytes); absent without a limit.",
               [&](const SlotReport &s) { return opt(s.safeWalSize); });
    slotFamily("driftless_slot_seconds_to_limit",
               "Seconds until the slot reaches its slot guard's limit or the server's, at its recent growth rate; "
               "absent when nothing grows towards a limit or none applies.",
               [](const SlotReport &s) { return s.secondsToLimit; });
    slotFamily("driftless_slot_active", "1 when a consumer is reading the slot.",
               [](const SlotReport &s) { return std::optional<double>(s.active ? 1 : 0); });
    {
        Family f(out, "driftless_slot_wal_status", "gauge", "1 for the slot's wal_status.");
        for (const auto &ss : sources)
            for (const auto &s : ss.replicationSlots)
                if (s.walStatus != WalStatus::Unknown)
                    f.sample({{"source", s.source}, {"slot", s.slot}, {"wal_status", toString(s.walStatus)}}, 1);
    }
    {
        Family f(out, "driftless_alerts_open", "gauge", "Open alerts by kind and level.");
        std::map<std::pair<std::string, std::string>, int> n;
        for (const auto &a : alerts)
            ++n[{a.kind, std::string(toString(a.level))}];
        for (const auto &[k, v] : n)
            f.sample({{"kind", k.first}, {"level", k.second}}, v);
    }
    if (const auto loops = loopCountersSnapshot(); !loops.empty()) {
        // Two-way pipelines, per direction (docs/two-way.md): applied / captured is the loop
        // amplification, 1 when nothing comes back.
        auto loopFamily = [&](const std::string &name, const char *help, auto value) {
            Family f(out, name, "counter", help);
            for (const auto &l : loops)
                f.sample({{"pipeline", l.pipeline}, {"direction", l.direction}}, static_cast<double>(value(l)));
        };
        loopFamily("driftless_twoway_changes_captured_total", "Changes read from this direction's source.",
                   [](const LoopCountersSample &l) { return l.captured; });
        loopFamily("driftless_twoway_changes_applied_total", "Changes applied to this direction's target.",
                   [](const LoopCountersSample &l) { return l.applied; });
        loopFamily("driftless_twoway_changes_dropped_own_total",
                   "Changes read from the source that Driftless had applied there itself, dropped (loop prevention).",
                   [](const LoopCountersSample &l) { return l.droppedOwn; });
    }
    if (const auto conflicts = conflictCountsSnapshot(); !conflicts.empty()) {
        Family f(out, "driftless_twoway_conflicts_total", "counter",
                 "Conflicts of two-way tables by outcome (merged, source_won, target_won, queued, resolved).");
        for (const auto &c : conflicts)
            f.sample({{"pipeline", c.pipeline}, {"table", c.table}, {"outcome", c.outcome}},
                     static_cast<double>(c.count));
    }
    return out;
}

} // namespace driftless::core
