// Which server answers behind a MariaDB/MySQL source's address, and whether the stored binlog
// positions still mean what they meant (ARCHITECTURE.md P6, docs/failover.md).

#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/mysql/mysqlcdctable.h"

#include "core/base/clock.h"

#include "core/db/mysqlconnection.h"
#include "core/model/dsn.h"
#include "core/model/error.h"
#include "core/readers/binlog/gtidstate.h"

#include <map>
#include <set>

namespace driftless::core {

namespace {

/// The binary logs a server has (SHOW BINARY LOGS), by file name: their sizes.
std::map<std::string, std::uint64_t> binaryLogs(MysqlConnection &src)
{
    std::map<std::string, std::uint64_t> logs;
    for (const auto &row : src.query("SHOW BINARY LOGS").rows)
        if (row.size() >= 2 && row[0] && row[1])
            logs[*row[0]] = std::stoull(*row[1]);
    return logs;
}

std::string describeServer(std::uint32_t serverId, const std::string &gtid)
{
    return "server_id " + std::to_string(serverId) + (gtid.empty() ? "" : ", GTID " + gtid);
}

} // namespace

std::string MysqlCdcPipeline::gtidStateAt(MysqlConnection &src, const binlog::Position &at)
{
    if (at.file.empty())
        return {};
    auto r = src.query("SELECT BINLOG_GTID_POS(?, ?)", {at.file, std::to_string(at.offset)});
    return r.empty() ? std::string() : r.text(0, 0);
}

std::string MysqlCdcPipeline::sourceAddress() const
{
    const Endpoint &src = m_jobs.front().source;
    const MysqlDsn dsn = MysqlDsn::parse(src.dsn);
    return "endpoint '" + src.name + "' (" +
           (dsn.socket.empty() ? dsn.host + ":" + std::to_string(dsn.port) : dsn.socket) + ")";
}

void MysqlCdcPipeline::checkSourceIdentity(MysqlConnection &src, TargetSession &session)
{
    m_resume.reset();
    m_serverId = static_cast<std::uint32_t>(std::stoul(src.scalar("SELECT @@server_id").value_or("0")));
    const std::string pipelineFix = "load it again: driftless-cli resnapshot " + m_pipeline;

    // Tables whose position was read from another server, or lies where this server's binlog
    // does not have it (a file past its newest, an offset past a file's end, a GTID state there
    // other than the one recorded): the positions are another history's.
    std::uint32_t was = 0;
    std::string why;
    // The server_id the checkpoints were read from answers, with another history: a restored or
    // rebuilt server. Its GTIDs carry the same server_id and may pass the stored one with other
    // transactions, so they cannot say where the target stands.
    bool sameServer = false;
    std::map<std::string, std::uint64_t> logs;
    bool logsRead = false;
    std::map<std::pair<std::string, std::uint64_t>, std::string> stateAt;
    for (auto &t : m_tables) {
        if (!t->position || t->position->stopped)
            continue;
        const BinlogCdcPosition &p = *t->position;
        if (p.serverId && p.serverId != m_serverId) {
            was = p.serverId;
            why = "server_id " + std::to_string(m_serverId) +
                  " answers where the checkpoints were read from server_id " + std::to_string(p.serverId);
            break;
        }
        if (!t->streaming())
            continue;
        if (!logsRead) {
            logs = binaryLogs(src);
            logsRead = true;
        }
        const auto file = logs.find(p.at.file);
        const bool pastNewest = !logs.empty() && p.at.file > logs.rbegin()->first;
        if (pastNewest || (file != logs.end() && p.at.offset > file->second)) {
            was = p.serverId ? p.serverId : m_serverId;
            sameServer = p.serverId != 0;
            why = "the server's binary log " +
                  (pastNewest ? "ends before " + p.at.file
                              : p.at.file + " is only " + std::to_string(file->second) + " bytes long") +
                  ", yet " + t->job.spec.table.display() + " was synced up to " + p.at.file + ":" +
                  std::to_string(p.at.offset);
            break;
        }
        if (file == logs.end() || p.gtid.empty())
            continue; // purged: the stream says so with the re-snapshot that recovers
        auto &here = stateAt[{p.at.file, p.at.offset}];
        if (here.empty())
            here = gtidStateAt(src, p.at);
        const auto stored = binlog::GtidState::parse(p.gtid);
        const auto found = binlog::GtidState::parse(here);
        if (stored && found && !found->agreesWith(*stored)) {
            was = p.serverId ? p.serverId : m_serverId;
            sameServer = p.serverId != 0;
            why = "at " + p.at.file + ":" + std::to_string(p.at.offset) + " the server's binary log stands at GTID " +
                  (here.empty() ? std::string("(none)") : here) + ", not at " + p.gtid + " as when " +
                  t->job.spec.table.display() + " was synced there (a restored or rebuilt server)";
            break;
        }
    }
    if (why.empty()) {
        // A `driftless-cli recover` asked for while the source is the one the target follows.
        for (auto &t : m_tables)
            if (t->position && t->merger->pendingRequest() == "recover") {
                t->merger->setRequest("");
                m_observer.event(Level::Info, t->key, "request",
                                 "recover: the source is the server the target follows; nothing to recover");
            }
        return;
    }

    const std::string now = src.scalar("SELECT @@gtid_binlog_pos").value_or("");
    const std::string intro =
        "the source changed: " + sourceAddress() + " is " + describeServer(m_serverId, now) + "; " + why;
    if (sameServer) {
        const std::string restored =
            intro + ". The same server_id with another binary log is a restored or rebuilt server: its GTIDs, "
                    "made under the same server_id, are not the transactions the target has seen";
        if (recoveryAllowed()) {
            reloadForRecovery(restored + " (a restore rolls the target back with it: rows it no longer has are "
                                         "removed)");
            return;
        }
        throw SourceChangedError(
            restored + "; nothing was read from it", {},
            "bring the target to the restored server: driftless-cli recover " + m_pipeline +
                " (or set recover: auto on the pipeline; it compares every table with the restored server, "
                "copies what differs and removes the rows the restore rolled back), or " +
                pipelineFix);
    }
    // What streams resumes from its GTID state, if the tables agree on one; a table loading
    // starts its load over on this server; a paused one cannot say where it stood.
    std::string gtid;
    bool disagree = false;
    for (auto &t : m_tables) {
        if (!t->position || t->position->stopped)
            continue;
        if (!t->streaming()) {
            t->position.reset();
            m_observer.event(Level::Warn, t->key, "source_changed",
                             intro + ": its initial load starts over on this server");
            continue;
        }
        if (t->userPaused && !recoveryAllowed()) {
            stopTable(*t,
                      SourceChangedError(intro + ", while the table was paused: where it stood cannot be found on "
                                                 "this server",
                                         {},
                                         "bring the target back to this server: driftless-cli recover " + m_pipeline +
                                             ", or " + pipelineFix),
                      *t->merger, session, false);
            continue;
        }
        if (gtid.empty())
            gtid = t->position->gtid;
        else if (t->position->gtid != gtid)
            disagree = true;
    }
    bool anyStreaming = false;
    for (auto &t : m_tables)
        anyStreaming = anyStreaming || (t->streaming() && !t->paused);
    if (!anyStreaming)
        return;
    if (gtid.empty() || disagree || !binlog::GtidState::parse(gtid)) {
        if (recoveryAllowed()) {
            reloadForRecovery(intro + " and the checkpoints hold no GTID state it could go on from");
            return;
        }
        throw SourceChangedError(
            intro + ". The checkpoints hold " +
                (gtid.empty() ? std::string("no GTID")
                 : disagree   ? std::string("different GTID states")
                              : "'" + gtid + "'") +
                ", so the new server cannot be asked for what follows; nothing was read from it",
            {},
            "point the endpoint back at server_id " + std::to_string(was) +
                ", or bring the target back to it: driftless-cli recover " + m_pipeline +
                " (or set recover: auto on the pipeline; it compares every table with the new server and "
                "copies what differs), or " +
                pipelineFix);
    }
    m_resume = Resume{gtid, was, intro};
}

bool MysqlCdcPipeline::recoveryAllowed() const
{
    if (m_jobs.front().recoverAuto)
        return true;
    for (const auto &t : m_tables)
        if (t->position && t->merger && t->merger->pendingRequest() == "recover")
            return true;
    return false;
}

void MysqlCdcPipeline::reloadForRecovery(const std::string &what)
{
    // Every streaming table loads again from the new server under a new epoch, comparing each
    // chunk with the rows the target holds (MysqlLoadCompare): only the rows that differ are
    // copied and the rows the new server lacks removed, so the target follows the new server
    // exactly. run() says the figures when the loads are done.
    int tables = 0;
    for (auto &t : m_tables)
        if (t->streaming() && !t->position->stopped) {
            t->position.reset();
            t->paused = t->userPaused = false;
            m_observer.tableState(t->key, TableState::Backfilling, kRecoveryMessage, std::nullopt);
            ++tables;
        }
    m_recovery = Recovery{what, wallClockMs()};
    m_resume.reset(); // the loads give the stream its positions on the new server
    m_observer.event(Level::Warn, m_tables.front()->key, "source_changed",
                     what + ": recovering by diff: " + std::to_string(tables) +
                         " table(s) compared with the new server chunk by chunk and the differing rows copied, "
                         "under a new epoch");
}

} // namespace driftless::core
