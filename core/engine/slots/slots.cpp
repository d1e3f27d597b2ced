#include "core/engine/slots/slots.h"

#include "core/base/isotime.h"
#include "core/base/jsonfields.h"
#include "core/engine/endpoints/connect.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>

namespace driftless::core {

const char *toString(WalStatus status)
{
    switch (status) {
    case WalStatus::Reserved:
        return "reserved";
    case WalStatus::Extended:
        return "extended";
    case WalStatus::Unreserved:
        return "unreserved";
    case WalStatus::Lost:
        return "lost";
    case WalStatus::Purged:
        return "purged";
    case WalStatus::Unknown:
        break;
    }
    return "";
}

WalStatus parseWalStatus(const std::string &word)
{
    for (WalStatus s :
         {WalStatus::Reserved, WalStatus::Extended, WalStatus::Unreserved, WalStatus::Lost, WalStatus::Purged})
        if (word == toString(s))
            return s;
    return WalStatus::Unknown;
}

namespace {

constexpr const char *kSlotsSql = R"sql(
SELECT s.slot_name, s.slot_type, coalesce(s.plugin, ''), coalesce(s.database, ''), s.temporary, s.active,
       s.active_pid, coalesce(s.wal_status, ''),
       pg_wal_lsn_diff(pg_current_wal_lsn(), s.restart_lsn)::bigint,
       s.safe_wal_size, coalesce(s.restart_lsn::text, ''), coalesce(s.confirmed_flush_lsn::text, ''),
       pg_wal_lsn_diff(pg_current_wal_lsn(), s.confirmed_flush_lsn)::bigint,
       s.database = current_database()
FROM pg_replication_slots s ORDER BY s.slot_name
)sql";

std::optional<std::int64_t> optInt(const PgResult &r, int row, int col)
{
    if (r.isNull(row, col))
        return std::nullopt;
    return r.toInt(row, col);
}

} // namespace

std::string slotOwner(const Workspace &ws, const std::string &source, const std::string &slot)
{
    for (const auto &p : ws.pipelines)
        if (p.source == source && p.slotName() == slot)
            return p.name;
    return {};
}

bool isOrphanedSlot(const Workspace &ws, const std::string &source, const std::string &slot, bool temporary)
{
    return !temporary && slot.rfind("driftless_", 0) == 0 && slot.rfind("driftless_tmp_", 0) != 0 &&
           slotOwner(ws, source, slot).empty();
}

std::vector<SourceSlots> listSlots(const Workspace &ws, const Workspace *owners)
{
    const Workspace &whole = owners ? *owners : ws;
    std::set<std::string> sources;
    for (const auto &p : ws.pipelines)
        if (auto *e = ws.endpoint(p.source); e && e->kind == EndpointKind::Postgres)
            sources.insert(p.source);
    std::vector<SourceSlots> out;
    for (const auto &name : sources) {
        SourceSlots ss;
        ss.source = name;
        try {
            PgConnection c = connectPostgres(*ws.endpoint(name), "driftless slots");
            auto head = c.exec("SELECT pg_current_wal_lsn()::text, "
                               "(SELECT setting::bigint FROM pg_settings WHERE name = 'max_slot_wal_keep_size')");
            ss.currentLsn = head.text(0, 0);
            if (!head.isNull(0, 1) && head.toInt(0, 1) >= 0)
                ss.maxSlotWalKeepSize = head.toInt(0, 1) * 1024 * 1024; // the setting is in MB
            auto r = c.exec(kSlotsSql);
            for (int i = 0; i < r.rows(); ++i) {
                SlotReport s;
                s.source = name;
                s.slot = r.text(i, 0);
                s.slotType = r.text(i, 1);
                s.plugin = r.text(i, 2);
                s.database = r.text(i, 3);
                s.temporary = r.toBool(i, 4);
                s.active = r.toBool(i, 5);
                if (!r.isNull(i, 6))
                    s.activePid = static_cast<int>(r.toInt(i, 6));
                s.walStatus = parseWalStatus(r.text(i, 7));
                s.retainedBytes = optInt(r, i, 8);
                s.safeWalSize = optInt(r, i, 9);
                s.restartLsn = r.text(i, 10);
                s.confirmedFlushLsn = r.text(i, 11);
                s.unconfirmedBytes = optInt(r, i, 12);
                const bool here = r.toBool(i, 13); // slots of other databases belong to others
                if (here) {
                    s.owner = slotOwner(whole, name, s.slot);
                    s.orphaned = isOrphanedSlot(whole, name, s.slot, s.temporary);
                }
                ss.replicationSlots.push_back(std::move(s));
            }
        } catch (const Error &e) {
            ss.error = e.describe();
        }
        out.push_back(std::move(ss));
    }
    return out;
}

std::string binlogSampleKey(const std::string &pipeline)
{
    return "binlog:" + pipeline;
}

nlohmann::json slotsJsonValue(const std::vector<SourceSlots> &sources)
{
    using json = nlohmann::json;
    auto opt = [](const std::optional<std::int64_t> &v) { return v ? json(*v) : json(nullptr); };
    auto orNull = [](const std::string &s) { return s.empty() ? json(nullptr) : json(s); };
    auto when = [](const std::optional<std::int64_t> &ms) { return ms ? json(formatIso8601(*ms)) : json(nullptr); };
    json arr = json::array();
    json errors = json::array();
    json perSource = json::array();
    json binlogs = json::array();
    for (const auto &ss : sources) {
        for (const auto &b : ss.binlogs)
            binlogs.push_back(
                {{"source", b.source},
                 {"pipeline", b.pipeline},
                 {"needed_file", orNull(b.neededFile)},
                 {"needed_pos", b.neededFile.empty() ? json(nullptr) : json(b.neededOffset)},
                 {"oldest_file", orNull(b.oldestFile)},
                 {"newest_file", orNull(b.newestFile)},
                 {"bytes_behind", opt(b.bytesBehind)},
                 {"retention_seconds", opt(b.retentionSeconds)},
                 {"needed_closed_at", when(b.neededClosedMs)},
                 {"expires_at", when(b.expiresAtMs)},
                 {"seconds_to_expiry", b.secondsToExpiry ? json(std::llround(*b.secondsToExpiry)) : json(nullptr)},
                 {"needed_purged", b.neededPurged},
                 {"error", orNull(b.error)}});
        if (ss.binlog)
            continue;
        perSource.push_back({{"source", ss.source},
                             {"current_lsn", ss.currentLsn.empty() ? json(nullptr) : json(ss.currentLsn)},
                             {"max_slot_wal_keep_size", opt(ss.maxSlotWalKeepSize)},
                             {"error", ss.error.empty() ? json(nullptr) : json(ss.error)}});
        if (!ss.error.empty())
            errors.push_back({{"source", ss.source}, {"error", ss.error}});
        for (const auto &s : ss.replicationSlots)
            arr.push_back(
                {{"source", s.source},
                 {"slot", s.slot},
                 {"slot_type", s.slotType},
                 {"plugin", s.plugin},
                 {"database", s.database},
                 {"owner", s.owner.empty() ? json(nullptr) : json(s.owner)},
                 {"orphaned", s.orphaned},
                 {"temporary", s.temporary},
                 {"active", s.active},
                 {"active_pid", s.activePid ? json(*s.activePid) : json(nullptr)},
                 {"wal_status", s.walStatus == WalStatus::Unknown ? json(nullptr) : json(toString(s.walStatus))},
                 {"retained_bytes", opt(s.retainedBytes)},
                 {"safe_wal_size", opt(s.safeWalSize)},
                 {"restart_lsn", s.restartLsn.empty() ? json(nullptr) : json(s.restartLsn)},
                 {"confirmed_flush_lsn", s.confirmedFlushLsn.empty() ? json(nullptr) : json(s.confirmedFlushLsn)},
                 {"unconfirmed_bytes", opt(s.unconfirmedBytes)},
                 {"seconds_to_limit", s.secondsToLimit ? json(std::llround(*s.secondsToLimit)) : json(nullptr)}});
    }
    return json{{"slots", arr}, {"errors", errors}, {"sources", perSource}, {"binlogs", binlogs}};
}

std::vector<SourceSlots> sourcesFromJson(const nlohmann::json &j)
{
    using json = nlohmann::json;
    using jsonfields::integer;
    using jsonfields::number;
    using jsonfields::text;
    std::vector<SourceSlots> out;
    auto sourceNamed = [&](const std::string &name) -> SourceSlots & {
        for (auto &s : out)
            if (s.source == name)
                return s;
        out.push_back({});
        out.back().source = name;
        return out.back();
    };
    if (!j.is_object())
        return out;
    for (const auto &s : j.value("sources", json::array())) {
        SourceSlots &ss = sourceNamed(text(s, "source"));
        ss.currentLsn = text(s, "current_lsn");
        ss.maxSlotWalKeepSize = integer(s, "max_slot_wal_keep_size");
        ss.error = text(s, "error");
    }
    for (const auto &e : j.value("errors", json::array()))
        sourceNamed(text(e, "source")).error = text(e, "error");
    for (const auto &s : j.value("slots", json::array())) {
        SlotReport r;
        r.source = text(s, "source");
        r.slot = text(s, "slot");
        r.slotType = text(s, "slot_type");
        r.plugin = text(s, "plugin");
        r.database = text(s, "database");
        r.owner = text(s, "owner");
        r.orphaned = s.value("orphaned", false);
        r.temporary = s.value("temporary", false);
        r.active = s.value("active", false);
        if (auto pid = integer(s, "active_pid"))
            r.activePid = static_cast<int>(*pid);
        r.walStatus = parseWalStatus(text(s, "wal_status"));
        r.retainedBytes = integer(s, "retained_bytes");
        r.safeWalSize = integer(s, "safe_wal_size");
        r.restartLsn = text(s, "restart_lsn");
        r.confirmedFlushLsn = text(s, "confirmed_flush_lsn");
        r.unconfirmedBytes = integer(s, "unconfirmed_bytes");
        r.secondsToLimit = number(s, "seconds_to_limit");
        sourceNamed(r.source).replicationSlots.push_back(std::move(r));
    }
    for (const auto &b : j.value("binlogs", json::array())) {
        BinlogRetention r;
        r.source = text(b, "source");
        r.pipeline = text(b, "pipeline");
        r.neededFile = text(b, "needed_file");
        r.neededOffset = static_cast<std::uint64_t>(integer(b, "needed_pos").value_or(0));
        r.oldestFile = text(b, "oldest_file");
        r.newestFile = text(b, "newest_file");
        r.bytesBehind = integer(b, "bytes_behind");
        r.retentionSeconds = integer(b, "retention_seconds");
        r.neededClosedMs = parseIso8601(text(b, "needed_closed_at"));
        r.expiresAtMs = parseIso8601(text(b, "expires_at"));
        r.secondsToExpiry = number(b, "seconds_to_expiry");
        r.neededPurged = b.value("needed_purged", false);
        r.error = text(b, "error");
        SourceSlots &ss = sourceNamed(r.source);
        ss.binlog = true;
        ss.binlogs.push_back(std::move(r));
    }
    return out;
}

std::string slotsJson(const std::vector<SourceSlots> &sources)
{
    return slotsJsonValue(sources).dump(2);
}

std::string dropSlotSql(const std::string &slot)
{
    return "SELECT pg_drop_replication_slot(" + pgLiteral(slot) + ");";
}

void dropSlot(const Endpoint &source, const std::string &slot)
{
    if (source.kind != EndpointKind::Postgres)
        throw ConfigError("endpoint '" + source.name +
                          "' is not a Postgres endpoint: only Postgres has replication slots");
    PgConnection c = connectPostgres(source, "driftless drop slot");
    c.exec(dropSlotSql(slot));
}

} // namespace driftless::core
