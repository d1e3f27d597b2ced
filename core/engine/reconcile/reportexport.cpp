// Reconciliation reports as CSV and HTML, for the CLI (`report ID --csv|--html`), the agent API
// and the app's Export buttons alike.

#include "core/engine/reconcile/reportexport.h"

#include "core/base/isotime.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace driftless::core {

using json = nlohmann::json;

namespace {

std::string csvField(const std::string &v)
{
    if (v.find_first_of(",\"\r\n") == std::string::npos)
        return v;
    std::string q = "\"";
    for (char c : v)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string keyCell(const CanonicalKey &key, const std::vector<bool> &isInteger)
{
    return key.size() == 1 ? key.front() : keyJson(key, isInteger).dump();
}

void csvRow(std::string &out, const std::vector<std::string> &fields)
{
    for (size_t i = 0; i < fields.size(); ++i)
        out += (i ? "," : "") + csvField(fields[i]);
    out += "\r\n";
}

std::string number(long long n)
{
    return std::to_string(n);
}

} // namespace

std::string reportCsv(const ReconcileReport &report)
{
    std::string out;
    csvRow(out, {"pipeline", "table", "key", "kind", "columns", "source", "target"});
    for (const auto &t : report.tables) {
        for (const auto &k : t.missingKeys)
            csvRow(out, {report.pipeline, t.table, keyCell(k, t.keyIsInteger), "missing", "", "", ""});
        for (const auto &k : t.extraKeys)
            csvRow(out, {report.pipeline, t.table, keyCell(k, t.keyIsInteger), "extra", "", "", ""});
        for (const auto &d : t.differentRows) {
            std::string columns;
            json source = json::object(), target = json::object();
            for (const auto &c : d.columns) {
                columns += (columns.empty() ? "" : ", ") + c.column;
                source[c.column] = c.source ? json(*c.source) : json(nullptr);
                target[c.column] = c.target ? json(*c.target) : json(nullptr);
            }
            csvRow(out, {report.pipeline, t.table, keyCell(d.key, t.keyIsInteger), "different", columns, source.dump(),
                         target.dump()});
        }
    }
    return out;
}

std::string htmlEscape(const std::string &text)
{
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string reportHtml(const ReconcileReport &report)
{
    const auto e = htmlEscape;
    auto value = [&](const std::optional<std::string> &v) {
        return v ? "<code>" + e(*v) + "</code>" : std::string("<i>NULL</i>");
    };
    const std::string title = "Reconciliation report " + number(report.id) + ": " + report.pipeline;
    std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + e(title) +
                    "</title>\n<style>\nbody{font-family:sans-serif;margin:2em;color:#222}\n"
                    "table{border-collapse:collapse;margin:0.5em 0 1.5em}\n"
                    "th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left;vertical-align:top}\n"
                    "th{background:#f0f0f0}\n.drift{color:#b00020}\n.ok{color:#1b5e20}\n"
                    "td.n{text-align:right}\n</style>\n</head>\n<body>\n<h1>" +
                    e(title) + "</h1>\n<p>Started " + e(formatIso8601(report.startedAtMs)) + ", finished " +
                    e(formatIso8601(report.finishedAtMs)) + "; " + number(report.drift()) +
                    " differing rows in all.</p>\n<h2>Summary</h2>\n<table>\n<tr><th>Table</th><th>Target</th>"
                    "<th>Strategy</th><th>Source rows</th><th>Target rows</th><th>Missing</th><th>Extra</th>"
                    "<th>Different</th><th>In flight</th><th>Result</th></tr>\n";
    for (const auto &t : report.tables) {
        std::string result;
        if (!t.error.empty())
            result = "<span class=\"drift\">failed: " + e(t.error) + "</span>";
        else if (!t.skipped.empty())
            result = "not compared: " + e(t.skipped);
        else if (t.drift())
            result = "<span class=\"drift\">drift</span>";
        else
            result = "<span class=\"ok\">no drift</span>";
        if (!t.note.empty())
            result += "<br>" + e(t.note);
        h += "<tr><td>" + e(t.table) + "</td><td>" + e(t.target) + "</td><td>" + e(t.strategy) +
             "</td><td class=\"n\">" + number(t.sourceRows) + "</td><td class=\"n\">" + number(t.targetRows) +
             "</td><td class=\"n\">" + number(t.missing) + "</td><td class=\"n\">" + number(t.extra) +
             "</td><td class=\"n\">" + number(t.different) + "</td><td class=\"n\">" + number(t.inFlight) +
             "</td><td>" + result + "</td></tr>\n";
    }
    h += "</table>\n";
    for (const auto &t : report.tables) {
        if (t.missingKeys.empty() && t.extraKeys.empty() && t.differentRows.empty())
            continue;
        h += "<h2>" + e(t.table) + "</h2>\n";
        const long long kept =
            static_cast<long long>(t.missingKeys.size() + t.extraKeys.size() + t.differentRows.size());
        if (kept < t.drift())
            h += "<p>The first " + number(kept) + " of " + number(t.drift()) + " differing rows.</p>\n";
        h += "<table>\n<tr><th>Key</th><th>Kind</th><th>Column</th><th>Source</th><th>Target</th></tr>\n";
        for (const auto &k : t.missingKeys)
            h += "<tr><td>" + e(keyCell(k, t.keyIsInteger)) + "</td><td>missing</td><td></td><td></td><td></td></tr>\n";
        for (const auto &k : t.extraKeys)
            h += "<tr><td>" + e(keyCell(k, t.keyIsInteger)) + "</td><td>extra</td><td></td><td></td><td></td></tr>\n";
        for (const auto &d : t.differentRows) {
            const std::string span = number(std::max<long long>(1, static_cast<long long>(d.columns.size())));
            h += "<tr><td rowspan=\"" + span + "\">" + e(keyCell(d.key, t.keyIsInteger)) + "</td><td rowspan=\"" +
                 span + "\">different</td>";
            if (d.columns.empty())
                h += "<td></td><td></td><td></td></tr>\n";
            for (size_t i = 0; i < d.columns.size(); ++i) {
                const auto &c = d.columns[i];
                h += std::string(i ? "<tr>" : "") + "<td>" + e(c.column) + "</td><td>" + value(c.source) + "</td><td>" +
                     value(c.target) + "</td></tr>\n";
            }
        }
        h += "</table>\n";
    }
    h += "</body>\n</html>\n";
    return h;
}

} // namespace driftless::core
