#include "core/db/pgreplication.h"

#include "core/db/pgcatalog.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <time.h>
#include <utility>

namespace driftless::core {

namespace {

void putInt64(std::string &buf, std::int64_t v)
{
    auto u = static_cast<std::uint64_t>(v);
    for (int i = 7; i >= 0; --i)
        buf += static_cast<char>((u >> (i * 8)) & 0xff);
}

PgConnectOptions replicationOptions(const std::string &app)
{
    PgConnectOptions o;
    o.applicationName = app;
    o.replication = true;
    return o;
}

} // namespace

std::int64_t nowPgMicros()
{
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count();
    return us - kPgEpochUnixMicros;
}

bool isValidSlotName(std::string_view name)
{
    if (name.empty() || name.size() > 63)
        return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    return true;
}

PgReplicationConnection::PgReplicationConnection(const std::string &dsn, const std::string &applicationName)
    : m_conn(dsn, replicationOptions(applicationName))
{
}

PgReplicationConnection::SystemId PgReplicationConnection::identifySystem()
{
    auto r = m_conn.exec("IDENTIFY_SYSTEM");
    SystemId s;
    s.systemId = r.text(0, 0);
    s.timeline = static_cast<int>(r.toInt(0, 1));
    s.xlogPos = parseLsn(r.text(0, 2)).value_or(0);
    s.dbName = r.text(0, 3);
    return s;
}

std::map<int, std::int64_t> PgReplicationConnection::timelineHistory(int timeline)
{
    std::map<int, std::int64_t> out;
    if (timeline <= 1)
        return out;
    auto r = m_conn.exec("TIMELINE_HISTORY " + std::to_string(timeline));
    // The history file: one line per ancestor, "parent-timeline <TAB> switch-LSN <TAB> reason".
    const std::string content = r.rows() ? r.text(0, 1) : std::string();
    size_t start = 0;
    while (start < content.size()) {
        size_t end = content.find('\n', start);
        if (end == std::string::npos)
            end = content.size();
        const std::string line = content.substr(start, end - start);
        start = end + 1;
        const size_t t1 = line.find('\t');
        if (line.empty() || line[0] == '#' || t1 == std::string::npos)
            continue;
        const size_t t2 = line.find('\t', t1 + 1);
        const auto lsn = parseLsn(line.substr(t1 + 1, t2 == std::string::npos ? std::string::npos : t2 - t1 - 1));
        try {
            if (lsn)
                out[std::stoi(line.substr(0, t1))] = *lsn;
        } catch (const std::exception &) {
        }
    }
    return out;
}

PgReplicationConnection::Slot PgReplicationConnection::createSlot(const std::string &name, bool temporary,
                                                                  bool exportSnapshot)
{
    if (!isValidSlotName(name))
        throw ConfigError("'" + name + "' is not a valid replication slot name ([a-z0-9_], at most 63 characters)");
    auto r = m_conn.exec("CREATE_REPLICATION_SLOT " + name + (temporary ? " TEMPORARY" : "") +
                         " LOGICAL pgoutput (SNAPSHOT '" + (exportSnapshot ? "export" : "nothing") + "')");
    Slot s;
    s.name = r.text(0, 0);
    s.consistentPoint = parseLsn(r.text(0, 1)).value_or(0);
    if (!r.isNull(0, 2))
        s.snapshotName = r.text(0, 2);
    return s;
}

void PgReplicationConnection::dropSlot(const std::string &name)
{
    if (!isValidSlotName(name))
        throw ConfigError("'" + name + "' is not a valid replication slot name");
    m_conn.exec("DROP_REPLICATION_SLOT " + name + " WAIT");
}

void PgReplicationConnection::startReplication(const std::string &slot, std::int64_t startLsn,
                                               const std::string &publication)
{
    if (!isValidSlotName(slot) || !isValidSlotName(publication))
        throw ConfigError("invalid slot or publication name");
    std::string q = "START_REPLICATION SLOT " + slot + " LOGICAL " + formatLsn(startLsn) +
                    " (\"proto_version\" '1', \"publication_names\" " + pgLiteral(quoteIdent(publication)) +
                    ", \"messages\" 'true')";
    PGresult *res = PQexec(m_conn.raw(), q.c_str());
    auto st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (st != PGRES_COPY_BOTH) {
        std::string msg = res ? PQresultErrorMessage(res) : PQerrorMessage(m_conn.raw());
        const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
        std::string code = state ? state : "";
        PQclear(res);
        while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
            msg.pop_back();
        if (msg.rfind("ERROR:  ", 0) == 0)
            msg = msg.substr(8);
        // A missing or invalidated slot, or one in use, needs the DBA: never retried blindly.
        bool permanent = code == "42704" || msg.find("invalidated") != std::string::npos ||
                         msg.find("does not exist") != std::string::npos;
        throw SqlError(permanent ? ErrorKind::Permanent : ErrorKind::Transient,
                       "cannot start replication from slot " + slot + ": " + msg, code);
    }
    PQclear(res);
}

std::optional<std::string> PgReplicationConnection::next(std::chrono::milliseconds timeout)
{
    PGconn *c = m_conn.raw();
    auto deadline = std::chrono::steady_clock::now() + timeout;
    // The last call returned a message: the stream is flowing (see below).
    bool mayPause = std::exchange(m_flowing, false);
    for (;;) {
        char *buf = nullptr;
        int len = PQgetCopyData(c, &buf, 1);
        if (len > 0) {
            std::string msg(buf, static_cast<size_t>(len));
            PQfreemem(buf);
            m_flowing = true;
            return msg;
        }
        if (len == -1) {
            // The server ended the stream: its final result says why.
            PGresult *res = PQgetResult(c);
            std::string msg = res ? PQresultErrorMessage(res) : "";
            const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
            std::string code = state ? state : "";
            PQclear(res);
            while ((res = PQgetResult(c)) != nullptr)
                PQclear(res);
            while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
                msg.pop_back();
            throw SqlError(code.empty() || isTransientSqlState(code) ? ErrorKind::Transient : ErrorKind::Permanent,
                           "replication stream ended: " + (msg.empty() ? std::string("by the server") : msg), code);
        }
        if (len == -2)
            throw SqlError(ErrorKind::Transient, std::string("replication connection lost: ") + PQerrorMessage(c),
                           "08006");
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline)
            return std::nullopt;
        bool readable = true;
        if (mayPause) {
            // Everything read so far is taken and the stream is flowing: let the next messages
            // gather for a moment. The walsender sends each message on its own; woken for every
            // one of them, this thread spent two system calls and a wakeup a message, CPU the
            // walsender and the target share on a small machine. Each pause adds at most this
            // much to the lag.
            mayPause = false;
            timespec pause{0, 200'000};
            ::nanosleep(&pause, nullptr);
        } else {
            pollfd pfd{PQsocket(c), POLLIN, 0};
            int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
            int r = ::poll(&pfd, 1, std::max(1, ms));
            if (r < 0 && errno != EINTR)
                throw SqlError(ErrorKind::Transient, std::string("poll failed: ") + std::strerror(errno), "08006");
            readable = r > 0;
        }
        if (readable && !PQconsumeInput(c))
            throw SqlError(ErrorKind::Transient, std::string("replication connection lost: ") + PQerrorMessage(c),
                           "08006");
    }
}

void PgReplicationConnection::sendStatus(std::int64_t write, std::int64_t flush, bool requestReply)
{
    std::string msg;
    msg.reserve(34);
    msg += 'r';
    putInt64(msg, write);
    putInt64(msg, flush);
    putInt64(msg, 0); // apply: we do not report it (only flush frees WAL)
    putInt64(msg, nowPgMicros());
    msg += static_cast<char>(requestReply ? 1 : 0);
    if (PQputCopyData(m_conn.raw(), msg.data(), static_cast<int>(msg.size())) != 1 || PQflush(m_conn.raw()) != 0)
        throw SqlError(ErrorKind::Transient,
                       std::string("cannot send a status update: ") + PQerrorMessage(m_conn.raw()), "08006");
}

} // namespace driftless::core
