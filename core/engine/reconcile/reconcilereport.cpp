// Reconciliation reports: their JSON form, and storing them (with their events) in the state file.

#include "core/base/clock.h"
#include "core/base/isotime.h"
#include "core/engine/reconcile/reconciler.h"

#include "core/state/statestore.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace driftless::core {

using json = nlohmann::json;

json keyJson(const CanonicalKey &key, const std::vector<bool> &isInteger)
{
    auto one = [&](size_t i) -> json {
        if (i < isInteger.size() && isInteger[i]) {
            try {
                size_t used = 0;
                long long v = std::stoll(key[i], &used);
                if (used == key[i].size())
                    return v;
            } catch (...) {
            }
        }
        return key[i];
    };
    if (key.size() == 1)
        return one(0);
    json arr = json::array();
    for (size_t i = 0; i < key.size(); ++i)
        arr.push_back(one(i));
    return arr;
}

CanonicalKey keyFromJson(const json &j)
{
    auto text = [](const json &v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
    CanonicalKey k;
    if (j.is_array())
        for (const auto &v : j)
            k.push_back(text(v));
    else
        k.push_back(text(j));
    return k;
}

json reportJsonValue(const ReconcileReport &report)
{
    json tables = json::array();
    for (const auto &t : report.tables) {
        json keys = {{"missing", json::array()}, {"extra", json::array()}, {"different", json::array()}};
        for (const auto &k : t.missingKeys)
            keys["missing"].push_back(keyJson(k, t.keyIsInteger));
        for (const auto &k : t.extraKeys)
            keys["extra"].push_back(keyJson(k, t.keyIsInteger));
        json diffs = json::array();
        for (const auto &d : t.differentRows) {
            keys["different"].push_back(keyJson(d.key, t.keyIsInteger));
            json cols = json::array();
            for (const auto &c : d.columns)
                cols.push_back({{"column", c.column},
                                {"source", c.source ? json(*c.source) : json(nullptr)},
                                {"target", c.target ? json(*c.target) : json(nullptr)}});
            diffs.push_back({{"key", keyJson(d.key, t.keyIsInteger)}, {"columns", cols}});
        }
        auto rowsJson = [&](const std::vector<RowValues> &list) {
            json arr = json::array();
            for (const auto &r : list) {
                json values = json::array();
                for (const auto &v : r.values)
                    values.push_back(v ? json(*v) : json(nullptr));
                arr.push_back({{"key", r.key.empty() ? json(nullptr) : keyJson(r.key, t.keyIsInteger)},
                               {"values", values},
                               {"copies", r.copies}});
            }
            return arr;
        };
        tables.push_back(
            {{"table", t.table},
             {"target", t.target},
             {"two_way",
              t.direction.empty() ? json(nullptr) : json{{"pipeline", report.pipeline}, {"direction", t.direction}}},
             {"strategy", t.strategy},
             {"key_columns", t.keyColumns},
             {"key_is_integer", t.keyIsInteger},
             {"source_rows", t.sourceRows},
             {"target_rows", t.targetRows},
             {"missing", t.missing},
             {"extra", t.extra},
             {"different", t.different},
             {"in_flight", t.inFlight},
             {"drift_ratio", t.driftRatio},
             {"keys", keys},
             {"differences", diffs},
             {"columns", t.columns},
             {"rows", {{"missing", rowsJson(t.missingRows)}, {"extra", rowsJson(t.extraRows)}}},
             {"elapsed_ms", t.elapsedMs},
             {"queries", {{"source", t.sourceQueries}, {"target", t.targetQueries}}},
             {"rows_fetched", {{"source", t.sourceRowsFetched}, {"target", t.targetRowsFetched}}},
             {"skipped", t.skipped.empty() ? json(nullptr) : json(t.skipped)},
             {"note", t.note.empty() ? json(nullptr) : json(t.note)},
             {"error", t.error.empty() ? json(nullptr) : json(t.error)},
             {"where", t.where.empty() ? json(nullptr) : json(t.where)}});
    }
    return {{"report_id", report.id},
            {"pipeline", report.pipeline},
            {"started_at", formatIso8601(report.startedAtMs)},
            {"finished_at", formatIso8601(report.finishedAtMs)},
            {"started_at_ms", report.startedAtMs},
            {"finished_at_ms", report.finishedAtMs},
            {"drift", report.drift()},
            {"tables", tables}};
}

ReconcileReport reportFromJson(const json &j)
{
    ReconcileReport r;
    r.id = j.value("report_id", 0LL);
    r.pipeline = j.value("pipeline", "");
    r.startedAtMs = j.value("started_at_ms", 0LL);
    r.finishedAtMs = j.value("finished_at_ms", 0LL);
    auto str = [](const json &v) { return v.is_string() ? v.get<std::string>() : std::string(); };
    for (const auto &t : j.value("tables", json::array())) {
        TableReconcile x;
        x.pipeline = r.pipeline;
        x.table = t.value("table", "");
        x.target = t.value("target", "");
        if (const auto tw = t.find("two_way"); tw != t.end() && tw->is_object())
            x.direction = tw->value("direction", "");
        x.strategy = t.value("strategy", "");
        x.keyColumns = t.value("key_columns", std::vector<std::string>{});
        x.keyIsInteger = t.value("key_is_integer", std::vector<bool>{});
        x.sourceRows = t.value("source_rows", 0LL);
        x.targetRows = t.value("target_rows", 0LL);
        x.missing = t.value("missing", 0LL);
        x.extra = t.value("extra", 0LL);
        x.different = t.value("different", 0LL);
        x.inFlight = t.value("in_flight", 0LL);
        x.driftRatio = t.value("drift_ratio", 0.0);
        const auto keys = t.value("keys", json::object());
        for (const auto &k : keys.value("missing", json::array()))
            x.missingKeys.push_back(keyFromJson(k));
        for (const auto &k : keys.value("extra", json::array()))
            x.extraKeys.push_back(keyFromJson(k));
        for (const auto &d : t.value("differences", json::array())) {
            DifferentRow row;
            row.key = keyFromJson(d.at("key"));
            for (const auto &c : d.value("columns", json::array())) {
                ColumnDiff cd;
                cd.column = c.value("column", "");
                if (c.contains("source") && c["source"].is_string())
                    cd.source = c["source"].get<std::string>();
                if (c.contains("target") && c["target"].is_string())
                    cd.target = c["target"].get<std::string>();
                row.columns.push_back(std::move(cd));
            }
            x.differentRows.push_back(std::move(row));
        }
        x.columns = t.value("columns", std::vector<std::string>{});
        const auto rows = t.value("rows", json::object());
        for (const auto &[kind, list] : {std::pair{"missing", &x.missingRows}, std::pair{"extra", &x.extraRows}})
            for (const auto &e : rows.value(kind, json::array())) {
                if (!e.is_object())
                    continue;
                RowValues r;
                if (const auto k = e.find("key"); k != e.end() && !k->is_null())
                    r.key = keyFromJson(*k);
                for (const auto &v : e.value("values", json::array()))
                    r.values.push_back(v.is_string() ? std::optional<std::string>(v.get<std::string>()) : std::nullopt);
                r.copies = e.value("copies", 1LL);
                list->push_back(std::move(r));
            }
        x.elapsedMs = t.value("elapsed_ms", 0LL);
        const auto q = t.value("queries", json::object());
        x.sourceQueries = q.value("source", 0);
        x.targetQueries = q.value("target", 0);
        const auto f = t.value("rows_fetched", json::object());
        x.sourceRowsFetched = f.value("source", 0LL);
        x.targetRowsFetched = f.value("target", 0LL);
        x.skipped = str(t.value("skipped", json()));
        x.note = str(t.value("note", json()));
        x.error = str(t.value("error", json()));
        x.where = str(t.value("where", json()));
        r.tables.push_back(std::move(x));
    }
    return r;
}

namespace {

json statementsJson(const std::vector<RepairStatement> &statements)
{
    json arr = json::array();
    for (const auto &st : statements)
        arr.push_back({{"kind", st.kind}, {"sql", st.sql}, {"rows", st.rows}, {"full_sql", st.full}});
    return arr;
}

std::vector<RepairStatement> statementsFromJson(const json &j)
{
    std::vector<RepairStatement> out;
    if (!j.is_array())
        return out;
    for (const auto &e : j)
        if (e.is_object())
            out.push_back({e.value("kind", std::string()), e.value("sql", std::string()), e.value("rows", 0LL),
                           e.value("full_sql", std::string())});
    return out;
}

} // namespace

json repairPlanJsonValue(const RepairPlan &plan)
{
    json tables = json::array();
    for (const auto &t : plan.tables) {
        json upsert = json::array(), del = json::array();
        for (const auto &k : t.upsertKeys)
            upsert.push_back(keyJson(k, t.keyIsInteger));
        for (const auto &k : t.deleteKeys)
            del.push_back(keyJson(k, t.keyIsInteger));
        tables.push_back({{"table", t.table},
                          {"target", t.target},
                          {"key_is_integer", t.keyIsInteger},
                          {"inserts", t.inserts},
                          {"updates", t.updates},
                          {"deletes", static_cast<long long>(t.deleteKeys.size())},
                          {"keys", {{"upsert", upsert}, {"delete", del}}},
                          {"statements", statementsJson(t.statements)},
                          {"error", t.error.empty() ? json(nullptr) : json(t.error)}});
    }
    return {{"report_id", plan.reportId}, {"pipeline", plan.pipeline}, {"tables", tables}};
}

RepairPlan repairPlanFromJson(const json &j)
{
    RepairPlan plan;
    if (!j.is_object())
        return plan;
    plan.reportId = j.value("report_id", std::int64_t{0});
    plan.pipeline = j.value("pipeline", std::string());
    for (const auto &t : j.value("tables", json::array())) {
        if (!t.is_object())
            continue;
        TableRepairPlan x;
        x.pipeline = plan.pipeline;
        x.table = t.value("table", std::string());
        x.target = t.value("target", std::string());
        x.keyIsInteger = t.value("key_is_integer", std::vector<bool>{});
        x.inserts = t.value("inserts", 0LL);
        x.updates = t.value("updates", 0LL);
        const auto keys = t.value("keys", json::object());
        for (const auto &k : keys.value("upsert", json::array()))
            x.upsertKeys.push_back(keyFromJson(k));
        for (const auto &k : keys.value("delete", json::array()))
            x.deleteKeys.push_back(keyFromJson(k));
        x.statements = statementsFromJson(t.value("statements", json::array()));
        if (t.contains("error") && t["error"].is_string())
            x.error = t["error"].get<std::string>();
        plan.tables.push_back(std::move(x));
    }
    return plan;
}

namespace {

std::string planText(const RepairPlan &plan, bool details)
{
    std::string out = "repair plan for report " + std::to_string(plan.reportId) + " (pipeline " + plan.pipeline + ")\n";
    if (plan.tables.empty())
        out += "  nothing to repair: the report has no drift\n";
    for (const auto &t : plan.tables) {
        if (!t.error.empty()) {
            out += "  " + t.table + ": cannot be repaired: " + t.error + "\n";
            continue;
        }
        out += "  " + t.table + " -> " + t.target + ": " + std::to_string(t.inserts) + " to insert, " +
               std::to_string(t.updates) + " to update, " + std::to_string(t.deleteKeys.size()) + " to delete\n";
        for (const auto &st : t.statements) {
            const std::string rows = std::to_string(st.rows) + (st.rows == 1 ? " row" : " rows");
            if (!details || st.full.empty()) {
                out += "    " + rows + (st.rows == 1 ? ":  " : ": ") + st.sql + "\n";
                continue;
            }
            // The whole statement in place of its shape, indented under what it does.
            out += "    " + rows + " " +
                   (st.kind == "stage"    ? "staged"
                    : st.kind == "upsert" ? "inserted or updated"
                                          : "deleted") +
                   ":\n";
            std::string::size_type from = 0;
            while (from <= st.full.size()) {
                const auto to = std::min(st.full.find('\n', from), st.full.size());
                out += "        " + st.full.substr(from, to - from) + "\n";
                from = to + 1;
            }
        }
    }
    return out;
}

} // namespace

std::string repairPlanText(const RepairPlan &plan)
{
    return planText(plan, false);
}

std::string repairPlanDetails(const RepairPlan &plan)
{
    return planText(plan, true);
}

json repairJsonValue(const std::vector<RepairOutcome> &outcomes)
{
    json arr = json::array();
    for (const auto &o : outcomes)
        arr.push_back({{"pipeline", o.pipeline},
                       {"table", o.table},
                       {"keys", o.keys},
                       {"written", o.written},
                       {"deleted", o.deleted},
                       {"verified", o.verified},
                       {"still_different", o.stillDifferent},
                       {"skipped", o.skipped},
                       {"statements", statementsJson(o.statements)},
                       {"error", o.error.empty() ? json(nullptr) : json(o.error)}});
    return {{"tables", arr}};
}

std::vector<RepairOutcome> repairFromJson(const json &j)
{
    std::vector<RepairOutcome> out;
    if (!j.is_object() || !j.contains("tables") || !j["tables"].is_array())
        return out;
    for (const auto &t : j["tables"]) {
        if (!t.is_object())
            continue;
        RepairOutcome o;
        o.pipeline = t.value("pipeline", std::string());
        o.table = t.value("table", std::string());
        o.keys = t.value("keys", 0LL);
        o.written = t.value("written", 0LL);
        o.deleted = t.value("deleted", 0LL);
        o.verified = t.value("verified", 0LL);
        o.stillDifferent = t.value("still_different", 0LL);
        o.skipped = t.value("skipped", 0LL);
        o.statements = statementsFromJson(t.value("statements", json::array()));
        if (t.contains("error") && t["error"].is_string())
            o.error = t["error"].get<std::string>();
        out.push_back(std::move(o));
    }
    return out;
}

json summariesJsonValue(const std::vector<ReconcileSummary> &summaries)
{
    json arr = json::array();
    for (const auto &s : summaries)
        arr.push_back({{"report", s.reportId},
                       {"pipeline", s.pipeline},
                       {"table", s.table},
                       {"finished_at_ms", s.finishedMs},
                       {"source_rows", s.sourceRows},
                       {"target_rows", s.targetRows},
                       {"missing", s.missing},
                       {"extra", s.extra},
                       {"different", s.different},
                       {"in_flight", s.inFlight},
                       {"drift_ratio", s.driftRatio},
                       {"error", s.error.empty() ? json(nullptr) : json(s.error)},
                       {"repaired", s.repaired},
                       {"superseded_by", s.supersededBy ? json(s.supersededBy) : json(nullptr)}});
    return arr;
}

std::vector<ReconcileSummary> summariesFromJson(const json &j)
{
    std::vector<ReconcileSummary> out;
    if (!j.is_array())
        return out;
    for (const auto &e : j) {
        if (!e.is_object())
            continue;
        ReconcileSummary s;
        s.reportId = e.value("report", std::int64_t{0});
        s.pipeline = e.value("pipeline", std::string());
        s.table = e.value("table", std::string());
        s.finishedMs = e.value("finished_at_ms", std::int64_t{0});
        s.sourceRows = e.value("source_rows", std::int64_t{0});
        s.targetRows = e.value("target_rows", std::int64_t{0});
        s.missing = e.value("missing", std::int64_t{0});
        s.extra = e.value("extra", std::int64_t{0});
        s.different = e.value("different", std::int64_t{0});
        s.inFlight = e.value("in_flight", std::int64_t{0});
        s.driftRatio = e.value("drift_ratio", 0.0);
        if (e.contains("error") && e["error"].is_string())
            s.error = e["error"].get<std::string>();
        s.repaired = e.value("repaired", false);
        if (const auto by = e.find("superseded_by"); by != e.end() && by->is_number_integer())
            s.supersededBy = by->get<std::int64_t>();
        out.push_back(std::move(s));
    }
    return out;
}

namespace {
std::string percent(double ratio)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g%%", ratio * 100.0);
    return buf;
}
} // namespace

void storeReport(StateStore &store, ReconcileReport &report)
{
    std::vector<StateStore::ReconcileSummary> summaries;
    for (const auto &t : report.tables) {
        StateStore::ReconcileSummary s;
        s.pipeline = report.pipeline;
        s.table = t.table;
        s.sourceRows = t.sourceRows;
        s.targetRows = t.targetRows;
        s.missing = t.missing;
        s.extra = t.extra;
        s.different = t.different;
        s.inFlight = t.inFlight;
        s.driftRatio = t.driftRatio;
        s.error = t.error;
        summaries.push_back(std::move(s));
    }
    report.id = store.addReconcileReport(report.pipeline, report.startedAtMs, report.finishedAtMs, report.drift(),
                                         reportJsonValue(report).dump(), summaries);
    store.updateReconcileReport(report.id, reportJsonValue(report).dump());
    for (const auto &t : report.tables) {
        if (!t.error.empty()) {
            store.addEvent(Level::Error, report.pipeline, t.table, "reconcile", "reconciliation failed: " + t.error);
        } else if (t.drift() > 0) {
            store.addEvent(Level::Warn, report.pipeline, t.table, "reconcile",
                           "drift: " + std::to_string(t.missing) + " missing, " + std::to_string(t.extra) + " extra, " +
                               std::to_string(t.different) + " different of " + std::to_string(t.sourceRows) +
                               " rows (" + percent(t.driftRatio) + "); resolve with: driftless-cli repair " +
                               std::to_string(report.id) + " --table " + t.table);
        } else {
            store.addEvent(Level::Info, report.pipeline, t.table, "reconcile",
                           "no drift in " + std::to_string(t.sourceRows) + " rows" +
                               (t.inFlight ? " (" + std::to_string(t.inFlight) + " in flight)" : "") + ", report " +
                               std::to_string(report.id));
        }
    }
}

std::optional<ReconcileReport> loadReport(StateStore &store, std::int64_t id)
{
    auto text = store.reconcileReport(id);
    if (!text)
        return std::nullopt;
    auto j = json::parse(*text, nullptr, false);
    if (j.is_discarded())
        return std::nullopt;
    auto r = reportFromJson(j);
    r.id = id;
    return r;
}

void recordRepair(StateStore &store, const ReconcileReport &report, const std::vector<RepairOutcome> &outcomes)
{
    for (const auto &o : outcomes) {
        if (!o.error.empty())
            store.addEvent(Level::Error, o.pipeline, o.table, "repair",
                           "repair of report " + std::to_string(report.id) + " failed: " + o.error);
        else
            store.addEvent(o.stillDifferent ? Level::Warn : Level::Info, o.pipeline, o.table, "repair",
                           "repaired from report " + std::to_string(report.id) + ": " + std::to_string(o.written) +
                               " rows written, " + std::to_string(o.deleted) + " deleted, " +
                               std::to_string(o.verified) + " of " + std::to_string(o.keys) + " keys now equal" +
                               (o.stillDifferent ? "; " + std::to_string(o.stillDifferent) +
                                                       " still differ (newer changes the sync has yet to apply)"
                                                 : "") +
                               (o.skipped ? "; " + std::to_string(o.skipped) +
                                                " left to the sync (the source changed them since the plan)"
                                          : ""));
    }
    if (auto text = store.reconcileReport(report.id)) {
        auto j = json::parse(*text, nullptr, false);
        if (j.is_object()) {
            auto &repairs = j["repairs"];
            if (!repairs.is_array())
                repairs = json::array();
            auto r = repairJsonValue(outcomes);
            r["at"] = formatIso8601(wallClockMs());
            repairs.push_back(r);
            store.updateReconcileReport(report.id, j.dump());
        }
    }
}

std::vector<ReportListing> listReports(StateStore &store, int limit, const std::string &pipeline)
{
    // The summaries hold one row per table; a report has at most as many tables as its
    // pipeline, so reading a generous multiple and grouping gives the newest `limit` reports.
    std::vector<ReportListing> out;
    for (const auto &s : store.reconcileSummaries(limit * 64, pipeline)) {
        if (out.empty() || out.back().id != s.reportId) {
            if (static_cast<int>(out.size()) == limit)
                break;
            ReportListing r;
            r.id = s.reportId;
            r.pipeline = s.pipeline;
            r.finishedMs = s.finishedMs;
            out.push_back(std::move(r));
        }
        auto &r = out.back();
        ++r.tables;
        r.missing += s.missing;
        r.extra += s.extra;
        r.different += s.different;
        r.failedTables += s.error.empty() ? 0 : 1;
    }
    for (auto &r : out)
        if (auto text = store.reconcileReport(r.id)) {
            auto j = json::parse(*text, nullptr, false);
            r.repaired = j.is_object() && j.contains("repairs") && j["repairs"].is_array() && !j["repairs"].empty();
        }
    return out;
}

json reportListingJsonValue(const std::vector<ReportListing> &reports)
{
    json arr = json::array();
    for (const auto &r : reports)
        arr.push_back({{"report_id", r.id},
                       {"pipeline", r.pipeline},
                       {"finished_at", formatIso8601(r.finishedMs)},
                       {"finished_at_ms", r.finishedMs},
                       {"tables", r.tables},
                       {"missing", r.missing},
                       {"extra", r.extra},
                       {"different", r.different},
                       {"failed_tables", r.failedTables},
                       {"repaired", r.repaired}});
    return arr;
}

} // namespace driftless::core
