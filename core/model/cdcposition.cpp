#include "core/model/cdcposition.h"

#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace driftless::core::binlog {

std::int64_t positionVersion(const Position &p)
{
    const std::size_t dot = p.file.find_last_of('.');
    const std::string digits = dot == std::string::npos ? std::string() : p.file.substr(dot + 1);
    if (digits.empty() || digits.size() > 7 ||
        !std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
        throw Error(ErrorKind::Permanent, "binlog file name '" + p.file + "' has no numeric suffix");
    const std::int64_t sequence = std::stoll(digits);
    if (p.offset > 0xFFFFFFFFull)
        throw Error(ErrorKind::Permanent, "binlog offset " + std::to_string(p.offset) + " does not fit 32 bits");
    return (std::int64_t(1) << 52) + sequence * (std::int64_t(1) << 32) + static_cast<std::int64_t>(p.offset);
}

} // namespace driftless::core::binlog

namespace driftless::core {

using json = nlohmann::json;

std::string formatLsn(std::int64_t lsn)
{
    char buf[40];
    auto u = static_cast<std::uint64_t>(lsn);
    std::snprintf(buf, sizeof buf, "%" PRIX64 "/%" PRIX64, u >> 32, u & 0xffffffffu);
    return buf;
}

std::optional<std::int64_t> parseLsn(std::string_view text)
{
    const std::string s(text);
    unsigned long long hi = 0, lo = 0;
    char extra = 0;
    if (std::sscanf(s.c_str(), "%llX/%llX%c", &hi, &lo, &extra) != 2)
        return std::nullopt;
    return static_cast<std::int64_t>((hi << 32) | lo);
}

namespace {

constexpr const char *kUnreadable = "the stored CDC position of a table does not parse";

/// The object a stored position holds, or null (not JSON, or not an object: no position).
json parseObject(std::string_view text)
{
    json j = json::parse(text, nullptr, false);
    return j.is_object() ? j : json();
}

std::optional<CdcPhase> phaseFrom(const json &j)
{
    const std::string p = j.value("phase", "");
    if (p == "stream")
        return CdcPhase::Stream;
    if (p == "load")
        return CdcPhase::Load;
    return std::nullopt;
}

constexpr const char *kSourceChangedKind = "source_changed";

void readCommon(const json &j, CdcLoad &load, std::optional<std::string> &stopped, StopKind &kind)
{
    load.after = j.value("after", std::vector<std::string>{});
    const std::string mode = j.value("mode", "copy");
    load.merge = mode == "merge" || mode == "compare";
    load.compare = mode == "compare";
    load.compareFrom = j.value("compare_from", std::vector<std::string>{});
    load.rows = j.value("rows", 0LL);
    if (j.contains("stopped")) {
        stopped = j["stopped"].is_string() ? j["stopped"].get<std::string>() : std::string("stopped by an error");
        // An unknown kind (a later version's) is still a stop: read as an error.
        const auto k = j.find("stop_kind");
        kind = k != j.end() && k->is_string() && k->get<std::string>() == kSourceChangedKind ? StopKind::SourceChanged
                                                                                             : StopKind::Error;
    }
}

void writeStop(json &j, const std::optional<std::string> &stopped, StopKind kind)
{
    if (!stopped)
        return;
    j["stopped"] = *stopped;
    if (kind == StopKind::SourceChanged)
        j["stop_kind"] = kSourceChangedKind;
}

void writeLoad(json &j, const CdcLoad &load)
{
    j["after"] = load.after;
    j["mode"] = load.compare ? "compare" : load.merge ? "merge" : "copy";
    if (load.compare && !load.compareFrom.empty())
        j["compare_from"] = load.compareFrom;
    j["rows"] = load.rows;
}

std::optional<std::int64_t> lsnFrom(const json &j, const char *key)
{
    return j.contains(key) && j[key].is_string() ? parseLsn(j[key].get<std::string>()) : std::nullopt;
}

/// "add_column" with its version as the source kind stores it (`version`).
json addColumnJson(const PgAddColumnProgress &a, json version)
{
    json j{{"columns", a.columns}, {"version", std::move(version)}, {"after", a.after},
           {"rows", a.rows},       {"written", a.written},          {"started_ms", a.startedMs}};
    if (a.repair) {
        j["repair"] = true;
        j["repair_from"] = a.repairFrom;
    }
    return j;
}

/// The progress stored as "add_column", whose version the caller read; none when incomplete.
std::optional<PgAddColumnProgress> addColumnFrom(const json &a, std::int64_t version)
{
    PgAddColumnProgress ac;
    ac.columns = a.value("columns", std::vector<std::string>{});
    ac.version = version;
    ac.after = a.value("after", std::vector<std::string>{});
    ac.rows = a.value("rows", 0LL);
    ac.written = a.value("written", 0LL);
    ac.startedMs = a.value("started_ms", 0LL);
    ac.repair = a.value("repair", false);
    ac.repairFrom = a.value("repair_from", 0LL);
    if (ac.columns.empty() || ac.version <= 0)
        return std::nullopt;
    return ac;
}

binlog::Position binlogPositionFrom(const json &j)
{
    return {j.value("file", ""), j.value("pos", std::uint64_t(0))};
}

/// Runs `read` on the stored object; a key of the wrong type is a damaged position, which is
/// refused with the way out rather than read as something else.
template <typename T, typename Read> std::optional<T> readPosition(std::string_view text, Read read)
{
    const json j = parseObject(text);
    if (j.is_null())
        return std::nullopt;
    const auto phase = phaseFrom(j);
    if (!phase)
        return std::nullopt;
    try {
        T out;
        out.phase = *phase;
        read(j, out);
        return out;
    } catch (const json::exception &e) {
        throw Error(ErrorKind::Permanent, std::string(kUnreadable) + ": " + e.what(), {},
                    "re-snapshot the table: driftless-cli resnapshot PIPELINE TABLE");
    }
}

} // namespace

std::string PgCdcPosition::toJson() const
{
    json j;
    if (phase == CdcPhase::Stream) {
        j["phase"] = "stream";
        j["lsn"] = formatLsn(lsn);
    } else {
        j["phase"] = "load";
        writeLoad(j, load);
        if (snapshotLsn)
            j["snapshot_lsn"] = formatLsn(*snapshotLsn);
        if (streamFrom)
            j["stream_from"] = formatLsn(*streamFrom);
    }
    if (!slot.empty())
        j["slot"] = slot;
    if (!systemId.empty())
        j["system_id"] = systemId;
    if (timeline)
        j["timeline"] = timeline;
    if (rebackfill) {
        j["rebackfill"] = {{"after", rebackfill->after},
                           {"delete_below", formatLsn(rebackfill->deleteBelow)},
                           {"rows", rebackfill->rows}};
        if (rebackfill->compared)
            j["rebackfill"]["compared"] = true;
        if (rebackfill->rowByRow)
            j["rebackfill"]["row_by_row"] = true;
    }
    if (addColumn)
        j["add_column"] = addColumnJson(*addColumn, formatLsn(addColumn->version));
    writeStop(j, stopped, stopKind);
    if (paused)
        j["paused"] = true;
    if (!attnums.empty())
        j["attnums"] = attnums;
    return j.dump();
}

std::optional<PgCdcPosition> PgCdcPosition::fromJson(std::string_view text)
{
    return readPosition<PgCdcPosition>(text, [](const json &j, PgCdcPosition &p) {
        p.lsn = p.streaming() ? lsnFrom(j, "lsn").value_or(0) : 0;
        if (!p.streaming()) {
            p.snapshotLsn = lsnFrom(j, "snapshot_lsn");
            p.streamFrom = lsnFrom(j, "stream_from");
        }
        readCommon(j, p.load, p.stopped, p.stopKind);
        if (p.streaming())
            p.load = {};
        p.slot = j.value("slot", "");
        p.systemId = j.value("system_id", "");
        p.timeline = j.contains("timeline") && j["timeline"].is_number_integer() ? j["timeline"].get<int>() : 0;
        if (j.contains("rebackfill") && j["rebackfill"].is_object()) {
            const json &r = j["rebackfill"];
            PgRebackfillProgress rb;
            rb.after = r.value("after", std::vector<std::string>{});
            rb.deleteBelow = lsnFrom(r, "delete_below").value_or(0);
            rb.rows = r.value("rows", 0LL);
            rb.compared = r.value("compared", false);
            rb.rowByRow = r.value("row_by_row", false);
            p.rebackfill = std::move(rb);
        }
        if (j.contains("add_column") && j["add_column"].is_object())
            p.addColumn = addColumnFrom(j["add_column"], lsnFrom(j["add_column"], "version").value_or(0));
        p.paused = j.value("paused", false);
        if (j.contains("attnums") && j["attnums"].is_object())
            for (auto it = j["attnums"].begin(); it != j["attnums"].end(); ++it)
                if (it.value().is_number_integer())
                    p.attnums[it.key()] = it.value().get<int>();
    });
}

std::string BinlogCdcPosition::toJson() const
{
    json j;
    if (phase == CdcPhase::Stream) {
        j["phase"] = "stream";
        j["file"] = at.file;
        j["pos"] = at.offset;
    } else {
        j["phase"] = "load";
        writeLoad(j, load);
        if (streamFrom)
            j["stream_from"] = {{"file", streamFrom->file}, {"pos", streamFrom->offset}};
    }
    if (!gtid.empty())
        j["gtid"] = gtid;
    if (serverId)
        j["server_id"] = serverId;
    if (addColumn) // the version as a number: a binlog position's is no LSN
        j["add_column"] = addColumnJson(*addColumn, addColumn->version);
    writeStop(j, stopped, stopKind);
    return j.dump();
}

std::optional<BinlogCdcPosition> BinlogCdcPosition::fromJson(std::string_view text)
{
    return readPosition<BinlogCdcPosition>(text, [](const json &j, BinlogCdcPosition &p) {
        p.gtid = j.contains("gtid") && j["gtid"].is_string() ? j["gtid"].get<std::string>() : std::string();
        p.serverId =
            j.contains("server_id") && j["server_id"].is_number_unsigned() ? j["server_id"].get<std::uint32_t>() : 0;
        if (p.streaming()) {
            p.at = binlogPositionFrom(j);
        } else if (j.contains("stream_from") && j["stream_from"].is_object()) {
            p.streamFrom = binlogPositionFrom(j["stream_from"]);
        }
        readCommon(j, p.load, p.stopped, p.stopKind);
        if (p.streaming())
            p.load = {};
        if (j.contains("add_column") && j["add_column"].is_object()) {
            const json &a = j["add_column"];
            p.addColumn = addColumnFrom(
                a, a.contains("version") && a["version"].is_number_integer() ? a["version"].get<std::int64_t>() : 0);
        }
    });
}

std::optional<CdcPosition> parseCdcPosition(std::string_view text)
{
    const json j = parseObject(text);
    if (j.is_null())
        return std::nullopt;
    const bool binlog = j.contains("file") || (j.contains("stream_from") && j["stream_from"].is_object());
    if (binlog) {
        if (auto p = BinlogCdcPosition::fromJson(text))
            return CdcPosition(std::move(*p));
        return std::nullopt;
    }
    if (auto p = PgCdcPosition::fromJson(text))
        return CdcPosition(std::move(*p));
    return std::nullopt;
}

CdcPhase phaseOf(const CdcPosition &position)
{
    return std::visit([](const auto &p) { return p.phase; }, position);
}

std::int64_t appliedVersion(const CdcPosition &position)
{
    if (const auto *pg = std::get_if<PgCdcPosition>(&position))
        return pg->streaming() ? pg->lsn : 0;
    const auto &b = std::get<BinlogCdcPosition>(position);
    return b.streaming() ? binlog::positionVersion(b.at) : 0;
}

std::optional<std::string> stoppedBy(const CdcPosition &position)
{
    return std::visit([](const auto &p) { return p.stopped; }, position);
}

bool stoppedBySourceChange(const CdcPosition &position)
{
    return std::visit([](const auto &p) { return p.stopped && p.stopKind == StopKind::SourceChanged; }, position);
}

SourceIdentity sourceIdentityOf(const CdcPosition &position)
{
    SourceIdentity id;
    if (const auto *pg = std::get_if<PgCdcPosition>(&position)) {
        id.systemId = pg->systemId;
        id.timeline = pg->timeline;
        return id;
    }
    const auto &b = std::get<BinlogCdcPosition>(position);
    id.postgres = false;
    id.serverId = b.serverId;
    id.gtid = b.gtid;
    return id;
}

bool markedPaused(const CdcPosition &position)
{
    const auto *pg = std::get_if<PgCdcPosition>(&position);
    return pg && pg->paused;
}

std::string describeStreamPosition(const CdcPosition &position)
{
    if (phaseOf(position) != CdcPhase::Stream)
        return {};
    if (const auto *pg = std::get_if<PgCdcPosition>(&position))
        return formatLsn(pg->lsn);
    const auto &b = std::get<BinlogCdcPosition>(position);
    return b.at.file + ":" + std::to_string(b.at.offset);
}

} // namespace driftless::core
