#include "core/db/pgconnection.h"

#include "core/base/passwordprovider.h"
#include "core/db/pgpass.h"
#include "core/model/error.h"

#include <cstdlib>
#include <functional>

#include <poll.h>

namespace driftless::core {

namespace {

std::string oneLine(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\n') {
            while (i + 1 < s.size() && (s[i + 1] == '\t' || s[i + 1] == ' '))
                ++i;
            out += "; ";
        } else {
            out += s[i];
        }
    }
    return out;
}

bool contains(const std::string &h, const char *n)
{
    return h.find(n) != std::string::npos;
}

constexpr const char *kSessionSetup = "SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'; "
                                      "SET TimeZone = 'UTC'; SET extra_float_digits = 3; "
                                      "SET bytea_output = 'hex'; SET client_encoding = 'UTF8'; "
                                      "SET standard_conforming_strings = on; SET statement_timeout = 0";

} // namespace

long long PgResult::toInt(int row, int col) const
{
    auto v = value(row, col);
    return std::strtoll(std::string(v).c_str(), nullptr, 10);
}

long long PgResult::affected() const
{
    const char *s = PQcmdTuples(m_res.get());
    return (s && *s) ? std::strtoll(s, nullptr, 10) : 0;
}

std::string pgTextArray(const std::vector<std::string> &values)
{
    std::string arr = "{";
    for (size_t i = 0; i < values.size(); ++i) {
        arr += i ? ",\"" : "\"";
        for (char ch : values[i]) {
            if (ch == '"' || ch == '\\')
                arr += '\\';
            arr += ch;
        }
        arr += '"';
    }
    return arr + "}";
}

std::string pgLiteral(std::string_view v)
{
    std::string out = "'";
    for (char c : v) {
        if (c == '\0')
            throw std::invalid_argument("string literal contains a NUL byte");
        if (c == '\'')
            out += '\'';
        out += c;
    }
    out += '\'';
    return out;
}

PgConnection::PgConnection(const std::string &dsn, const PgConnectOptions &options)
{
    // The DSN goes in as an expandable dbname, so key=value strings and URIs both work; the
    // keywords after it override only what we must control.
    std::vector<const char *> keys{"dbname", "fallback_application_name", "connect_timeout"};
    std::string timeout = std::to_string(options.connectTimeoutSeconds);
    std::vector<const char *> vals{dsn.c_str(), options.applicationName.c_str(), timeout.c_str()};
    bool hasTimeout = false;
    bool hasPassword = false;
    try {
        for (auto &[k, v] : parsePgDsn(dsn)) {
            hasTimeout = hasTimeout || k == "connect_timeout";
            hasPassword = hasPassword || k == "password";
        }
    } catch (const ConfigError &e) {
        throw ConnectionError(ErrorKind::Permanent, e.what(), {}, "fix the endpoint's dsn");
    }
    if (hasTimeout) {
        keys.pop_back();
        vals.pop_back();
    }
    // A keychain password is handed over here, at connect time only (core/base/passwordprovider.h).
    auto password = hasPassword ? std::nullopt : pgPasswordFor(dsn);
    // A DSN rewritten to go through an SSH tunnel names a socket folder, so libpq would look for
    // a ~/.pgpass line for localhost: the line the DBA wrote is for the database's own host.
    if (!hasPassword && !password) {
        const char *env = std::getenv("PGPASSWORD");
        if (!env || !*env)
            if (auto written = pgDsnAliasedFrom(dsn))
                password = pgpassPasswordFor(*written);
    }
    if (password) {
        keys.push_back("password");
        vals.push_back(password->c_str());
    }
    if (options.replication) {
        keys.push_back("replication");
        vals.push_back("database");
    }
    m_tlsChoice = resolvePgTls(dsn);
    if (m_tlsChoice.verifyByDefault()) {
        keys.push_back("sslmode");
        vals.push_back("verify-full");
    }
    keys.push_back(nullptr);
    vals.push_back(nullptr);
    m_conn = PQconnectdbParams(keys.data(), vals.data(), 1);
    if (!m_conn)
        throw ConnectionError(ErrorKind::Transient, "out of memory creating a connection");
    if (PQstatus(m_conn) != CONNECTION_OK) {
        std::string msg = oneLine(PQerrorMessage(m_conn));
        bool needsPw = PQconnectionNeedsPassword(m_conn);
        bool usedPw = PQconnectionUsedPassword(m_conn);
        close();
        if (auto tls = explainPgTlsFailure(msg, m_tlsChoice))
            throw ConnectionError(ErrorKind::Permanent, tls->message, "08001", tls->hint);
        if (needsPw)
            throw ConnectionError(ErrorKind::Permanent, msg, "28P01",
                                  "no password was found: put it in ~/.pgpass, PGPASSWORD, the service file or "
                                  "the keychain");
        if (contains(msg, "password authentication failed") || contains(msg, "authentication failed") ||
            (usedPw && contains(msg, "password")))
            throw ConnectionError(ErrorKind::Permanent, msg, "28P01",
                                  "the server rejected the password: fix it in ~/.pgpass, PGPASSWORD, the service "
                                  "file or the keychain");
        if (contains(msg, "does not exist"))
            throw ConnectionError(ErrorKind::Permanent, msg, "3D000", "create the database or role, or fix the dsn");
        if (contains(msg, "no pg_hba.conf entry") || contains(msg, "permission denied"))
            throw ConnectionError(ErrorKind::Permanent, msg, "28000",
                                  "the server does not allow this login: ask the DBA for a pg_hba.conf entry or "
                                  "the CONNECT privilege");
        if (contains(msg, "Connection refused") || contains(msg, "could not translate host name") ||
            contains(msg, "timeout expired") || contains(msg, "No route to host"))
            throw ConnectionError(ErrorKind::Transient, msg, "08001",
                                  "check host and port in the dsn; is the server running and listening there?");
        throw ConnectionError(ErrorKind::Transient, msg, "08001");
    }
    m_cancel = PQgetCancel(m_conn);
    // Server notices ("already exists, skipping") are not for the user's terminal.
    PQsetNoticeProcessor(
        m_conn, [](void *, const char *) {}, nullptr);
    PgResult tz(PQexec(m_conn, "SHOW TimeZone"));
    if (PQresultStatus(tz.raw()) == PGRES_TUPLES_OK && tz.rows() == 1)
        m_serverTimeZone = tz.text(0, 0);
    std::string setup = kSessionSetup;
    if (!options.replication && !options.lockTimeout.empty())
        setup += "; SET lock_timeout = " + pgLiteral(options.lockTimeout);
    exec(setup);
}

PgConnection::~PgConnection()
{
    close();
}

PgConnection::PgConnection(PgConnection &&o) noexcept
    : m_conn(o.m_conn), m_cancel(o.m_cancel), m_serverTimeZone(std::move(o.m_serverTimeZone)),
      m_tlsChoice(std::move(o.m_tlsChoice)), m_prologue(std::move(o.m_prologue))
{
    o.m_conn = nullptr;
    o.m_cancel = nullptr;
}

PgConnection &PgConnection::operator=(PgConnection &&o) noexcept
{
    if (this != &o) {
        close();
        m_conn = o.m_conn;
        m_cancel = o.m_cancel;
        m_serverTimeZone = std::move(o.m_serverTimeZone);
        m_tlsChoice = std::move(o.m_tlsChoice);
        m_prologue = std::move(o.m_prologue);
        o.m_conn = nullptr;
        o.m_cancel = nullptr;
    }
    return *this;
}

void PgConnection::close() noexcept
{
    if (m_cancel) {
        PQfreeCancel(m_cancel);
        m_cancel = nullptr;
    }
    if (m_conn) {
        PQfinish(m_conn);
        m_conn = nullptr;
    }
}

std::string PgConnection::describe() const
{
    if (!m_conn)
        return "(closed)";
    std::string host = PQhost(m_conn) ? PQhost(m_conn) : "";
    std::string port = PQport(m_conn) ? PQport(m_conn) : "";
    std::string db = PQdb(m_conn) ? PQdb(m_conn) : "";
    return host + ":" + port + "/" + db;
}

void PgConnection::throwConnectionLost(std::string_view what)
{
    std::string msg = oneLine(PQerrorMessage(m_conn));
    throw SqlError(ErrorKind::Transient,
                   "connection to " + describe() + " lost during " + std::string(what) +
                       (msg.empty() ? "" : ": " + msg),
                   "08006", "the engine reconnects and retries");
}

void PgConnection::throwResultError(PGresult *res, std::string_view sql)
{
    PgResult owned(res);
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    std::string sqlstate = state ? state : "";
    std::string msg = oneLine(res ? PQresultErrorMessage(res) : PQerrorMessage(m_conn));
    if (msg.rfind("ERROR:  ", 0) == 0)
        msg = msg.substr(8);
    if (sqlstate.empty() && PQstatus(m_conn) != CONNECTION_OK)
        throwConnectionLost(sql.substr(0, 40));
    (void)sql;
    ErrorKind kind = isTransientSqlState(sqlstate) ? ErrorKind::Transient : ErrorKind::Permanent;
    std::string hint;
    if (sqlstate == "42501")
        hint = "grant the privilege named above to the endpoint's user";
    else if (sqlstate == "25006")
        hint = "the server is read-only (a standby, or default_transaction_read_only): the engine retries";
    if (sqlstate == "25006")
        kind = ErrorKind::Transient;
    throw SqlError(kind, msg, sqlstate, hint);
}

PgResult PgConnection::check(PGresult *res, std::string_view sql)
{
    auto st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY)
        return PgResult(res);
    throwResultError(res, sql);
}

PgResult PgConnection::exec(std::string_view sql)
{
    std::string q(sql);
    return check(PQexec(m_conn, q.c_str()), sql);
}

PgResult PgConnection::execParams(std::string_view sql, const Params &params)
{
    std::string q(sql);
    std::vector<const char *> values;
    std::vector<int> lengths;
    values.reserve(params.size());
    for (const auto &p : params) {
        values.push_back(p ? p->c_str() : nullptr);
        lengths.push_back(p ? static_cast<int>(p->size()) : 0);
    }
    return check(PQexecParams(m_conn, q.c_str(), static_cast<int>(params.size()), nullptr, values.data(),
                              lengths.data(), nullptr, 0),
                 sql);
}

void PgConnection::startCopy(std::string_view sql, ExecStatusType expected)
{
    std::string q(sql);
    PGresult *res = PQexec(m_conn, q.c_str());
    if (!res || PQresultStatus(res) != expected)
        throwResultError(res, sql);
    PQclear(res);
}

void PgConnection::finishCopy(int lastLen, std::string_view sql)
{
    if (lastLen == -2)
        throwConnectionLost("COPY");
    PGresult *res = PQgetResult(m_conn);
    if (!res || PQresultStatus(res) != PGRES_COMMAND_OK)
        throwResultError(res, sql);
    PQclear(res);
    while ((res = PQgetResult(m_conn)) != nullptr)
        PQclear(res);
}

void PgConnection::abandonCopyOut() noexcept
{
    // Drain what the server still sends so the connection stays usable for a ROLLBACK.
    cancel();
    for (;;) {
        char *buf = nullptr;
        int len = PQgetCopyData(m_conn, &buf, 0);
        if (buf)
            PQfreemem(buf);
        if (len < 0)
            break;
    }
    while (PGresult *res = PQgetResult(m_conn))
        PQclear(res);
}

void PgConnection::beginCopyIn(std::string_view sql)
{
    startCopy(sql, PGRES_COPY_IN);
}

void PgConnection::putCopyData(std::string_view data)
{
    if (data.empty())
        return;
    if (PQputCopyData(m_conn, data.data(), static_cast<int>(data.size())) != 1)
        throwConnectionLost("COPY");
}

long long PgConnection::endCopy()
{
    if (PQputCopyEnd(m_conn, nullptr) != 1)
        throwConnectionLost("COPY");
    PGresult *res = PQgetResult(m_conn);
    if (!res || PQresultStatus(res) != PGRES_COMMAND_OK)
        throwResultError(res, "COPY FROM STDIN");
    PgResult owned(res);
    long long n = owned.affected();
    while ((res = PQgetResult(m_conn)) != nullptr)
        PQclear(res);
    return n;
}

void PgConnection::abortCopy(const char *reason) noexcept
{
    if (!m_conn)
        return;
    PQputCopyEnd(m_conn, reason);
    while (PGresult *res = PQgetResult(m_conn))
        PQclear(res);
}

void PgConnection::begin(std::string_view mode)
{
    std::string q = "BEGIN";
    if (!mode.empty())
        q += " " + std::string(mode);
    exec(q);
    if (!m_prologue.empty() && mode.find("READ ONLY") == std::string_view::npos)
        exec(m_prologue);
}

void PgConnection::commit()
{
    exec("COMMIT");
}

void PgConnection::rollback() noexcept
{
    if (!m_conn || PQstatus(m_conn) != CONNECTION_OK)
        return;
    auto ts = PQtransactionStatus(m_conn);
    if (ts == PQTRANS_ACTIVE) {
        // An exception left a COPY open: end it so the connection takes the ROLLBACK.
        while (PGresult *res = PQgetResult(m_conn)) {
            auto st = PQresultStatus(res);
            PQclear(res);
            if (st == PGRES_COPY_IN) {
                PQputCopyEnd(m_conn, "aborted by driftless");
            } else if (st == PGRES_COPY_OUT) {
                abandonCopyOut();
                break;
            }
        }
    }
    if (PQtransactionStatus(m_conn) != PQTRANS_IDLE)
        PQclear(PQexec(m_conn, "ROLLBACK"));
}

bool PgConnection::inTransaction() const
{
    auto ts = PQtransactionStatus(m_conn);
    return ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR;
}

bool PgConnection::reusable() noexcept
{
    if (!m_conn || PQstatus(m_conn) != CONNECTION_OK || PQtransactionStatus(m_conn) != PQTRANS_IDLE || PQisBusy(m_conn))
        return false;
    // An idle session hears from the server only when something happened to it: a termination
    // (FATAL, then the socket closes), a shutdown, or a notice. Anything to read, or a hang-up,
    // and it is not handed out again.
    pollfd p{};
    p.fd = PQsocket(m_conn);
    p.events = POLLIN;
    if (p.fd < 0)
        return false;
    const int ready = ::poll(&p, 1, 0);
    return ready == 0;
}

void PgConnection::cancel() noexcept
{
    if (!m_cancel)
        return;
    char err[256];
    PQcancel(m_cancel, err, sizeof err);
}

std::stop_callback<std::function<void()>> PgConnection::cancelOn(std::stop_token token)
{
    return std::stop_callback<std::function<void()>>(std::move(token), [this] { cancel(); });
}

} // namespace driftless::core
