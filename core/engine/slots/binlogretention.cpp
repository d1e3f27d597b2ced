#include "core/engine/slots/binlogretention.h"

#include "core/db/mysqlconnection.h"
#include "core/db/mysqlreplication.h"
#include "core/engine/endpoints/binlogidentity.h"
#include "core/engine/endpoints/connect.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>

namespace driftless::core {

namespace {

constexpr std::uint8_t kFormatDescriptionEvent = 15;

/// When each binlog file (by source address and name) was started: a file's start never changes,
/// so one dump per file is enough for the life of the process.
std::mutex g_startedMutex;
std::map<std::string, std::int64_t> g_startedMs;

/// The timestamp of the Format_description event that opens `file`: when the server started it
/// (and closed the file before it). Reads the first few events of a dump from the file's start.
std::optional<std::int64_t> fileStartedMs(const Endpoint &source, const std::string &pipeline, const std::string &file)
{
    const MysqlDsn dsn = MysqlDsn::parse(source.dsn);
    const std::string key = dsn.host + ":" + std::to_string(dsn.port) + dsn.socket + "/" + file;
    {
        std::lock_guard lock(g_startedMutex);
        if (auto it = g_startedMs.find(key); it != g_startedMs.end())
            return it->second;
    }
    // Not the pipeline's own server_id: the server would drop a running sync's dump for ours.
    MysqlReplicationOptions ro = binlogReaderOptions(source, binlogServerIdFor(pipeline) ^ 2u);
    ro.reportHost.clear(); // not listed among the replicas
    ro.readTimeout = std::chrono::seconds(10);
    MysqlReplicationConnection repl(ro);
    ro.password.clear();
    repl.start({{file, 4}, {}});
    std::optional<std::int64_t> out;
    // A fake Rotate (timestamp 0) comes first, then the file's Format_description.
    for (int i = 0; i < 8 && !out; ++i) {
        auto ev = repl.next();
        if (!ev)
            break;
        if (ev->size() < 19)
            continue;
        const auto *b = reinterpret_cast<const unsigned char *>(ev->data());
        const std::uint32_t ts = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
        if (b[4] == kFormatDescriptionEvent && ts != 0)
            out = static_cast<std::int64_t>(ts) * 1000;
    }
    repl.stop();
    if (out) {
        std::lock_guard lock(g_startedMutex);
        g_startedMs[key] = *out;
    }
    return out;
}

std::int64_t retentionOf(MysqlConnection &c)
{
    std::map<std::string, std::string> v;
    for (const auto &r : c.query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('expire_logs_days', "
                                 "'binlog_expire_logs_seconds')")
                             .rows)
        v[r[0].value_or("")] = r[1].value_or("");
    // As the server decides: the seconds when set, else the days (MariaDB keeps the two in step).
    if (v.count("binlog_expire_logs_seconds") && std::atof(v["binlog_expire_logs_seconds"].c_str()) > 0)
        return std::llround(std::atof(v["binlog_expire_logs_seconds"].c_str()));
    if (v.count("expire_logs_days"))
        return std::llround(std::atof(v["expire_logs_days"].c_str()) * 86400);
    return 0;
}

/// The position pipeline `p` resumes from, from its CDC tables' stored checkpoints.
std::optional<binlog::Position> neededPosition(const PipelineSpec &p, const std::vector<TableStatus> &statuses)
{
    std::optional<binlog::Position> out;
    std::optional<std::int64_t> outVersion;
    for (const auto &st : statuses) {
        if (st.pipeline != p.name || st.strategy != Strategy::Cdc || st.checkpoint.empty())
            continue;
        auto pos = BinlogCdcPosition::fromJson(st.checkpoint);
        if (!pos || pos->stopped) // a stopped table needs a re-snapshot, not its old place
            continue;
        const std::optional<binlog::Position> at = pos->streaming() ? std::optional(pos->at) : pos->streamFrom;
        if (!at || at->file.empty())
            continue;
        try {
            const std::int64_t v = binlog::positionVersion(*at);
            if (!outVersion || v < *outVersion) {
                out = *at;
                outVersion = v;
            }
        } catch (const Error &) {
            // not a binlog file name this build can order: not a place to resume from
        }
    }
    return out;
}

} // namespace

void projectBinlog(BinlogRetention &r, const std::vector<BinlogFile> &files, std::int64_t nowMs)
{
    if (files.empty())
        return;
    r.oldestFile = files.front().name;
    r.newestFile = files.back().name;
    if (r.neededFile.empty())
        return;
    auto it = std::find_if(files.begin(), files.end(), [&](const BinlogFile &f) { return f.name == r.neededFile; });
    if (it == files.end()) {
        r.neededPurged = true;
        r.secondsToExpiry = 0;
        return;
    }
    std::int64_t behind = std::max<std::int64_t>(0, it->size - static_cast<std::int64_t>(r.neededOffset));
    for (auto later = it + 1; later != files.end(); ++later)
        behind += later->size;
    r.bytesBehind = behind;
    if (!r.retentionSeconds || *r.retentionSeconds <= 0)
        return;
    if (it + 1 == files.end()) {
        // Still written to: closed now, it would be purged a retention from now at the earliest.
        r.secondsToExpiry = static_cast<double>(*r.retentionSeconds);
        return;
    }
    if (!r.neededClosedMs)
        return;
    r.expiresAtMs = *r.neededClosedMs + *r.retentionSeconds * 1000;
    r.secondsToExpiry = std::max(0.0, static_cast<double>(*r.expiresAtMs - nowMs) / 1000.0);
}

std::string nextBinlogFile(const std::vector<BinlogFile> &files, const std::string &file)
{
    for (std::size_t i = 0; i + 1 < files.size(); ++i)
        if (files[i].name == file)
            return files[i + 1].name;
    return {};
}

double binlogExpiryWarnSeconds(std::int64_t retentionSeconds)
{
    return std::min(6.0 * 3600, static_cast<double>(retentionSeconds) / 2.0);
}

std::string binlogRetentionFix(const BinlogRetention &r, std::int64_t nowMs)
{
    const std::int64_t age = r.neededClosedMs ? std::max<std::int64_t>(0, (nowMs - *r.neededClosedMs + 999) / 1000) : 0;
    const std::int64_t keep = std::max<std::int64_t>(r.retentionSeconds.value_or(0), 3 * 86400);
    const std::int64_t n = (age + keep + 3599) / 3600 * 3600;
    return "SET GLOBAL binlog_expire_logs_seconds = " + std::to_string(n) + ";";
}

void addBinlogs(std::vector<SourceSlots> &sources, const Workspace &ws, const std::vector<TableStatus> &statuses,
                std::int64_t nowMs)
{
    std::map<std::string, std::vector<const PipelineSpec *>> bySource;
    for (const auto &p : ws.pipelines) {
        const Endpoint *e = ws.endpoint(p.source);
        if (!e || e->kind != EndpointKind::Mysql)
            continue;
        if (std::any_of(p.tables.begin(), p.tables.end(),
                        [](const TableSpec &t) { return t.strategy == Strategy::Cdc; }))
            bySource[p.source].push_back(&p);
    }
    for (const auto &[name, pipelines] : bySource) {
        SourceSlots ss;
        ss.source = name;
        ss.binlog = true;
        const Endpoint &source = *ws.endpoint(name);
        for (const auto *p : pipelines) {
            BinlogRetention r;
            r.source = name;
            r.pipeline = p->name;
            if (auto at = neededPosition(*p, statuses)) {
                r.neededFile = at->file;
                r.neededOffset = at->offset;
            }
            ss.binlogs.push_back(std::move(r));
        }
        try {
            MysqlConnection c = connectMysql(source, false);
            std::vector<BinlogFile> files;
            for (const auto &row : c.query("SHOW BINARY LOGS").rows)
                if (row.size() >= 2 && row[0])
                    files.push_back({*row[0], row[1] ? std::atoll(row[1]->c_str()) : 0});
            if (files.empty())
                throw Error(ErrorKind::Permanent, "the server lists no binary logs (log_bin is off)");
            const std::int64_t retention = retentionOf(c);
            for (auto &r : ss.binlogs) {
                r.retentionSeconds = retention;
                const std::string next = nextBinlogFile(files, r.neededFile);
                if (retention > 0 && !next.empty()) {
                    try {
                        r.neededClosedMs = fileStartedMs(source, r.pipeline, next);
                    } catch (const Error &e) {
                        r.error = "when " + r.neededFile + " was closed is not known: " + e.describe();
                    }
                }
                projectBinlog(r, files, nowMs);
            }
        } catch (const Error &e) {
            for (auto &r : ss.binlogs)
                r.error = e.describe();
        }
        sources.push_back(std::move(ss));
    }
}

} // namespace driftless::core
