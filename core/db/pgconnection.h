#pragma once

#include "core/db/pgtls.h"
#include "core/model/dsn.h"

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <libpq-fe.h>

namespace driftless::core {

/// Owns one PGresult.
class PgResult {
public:
    PgResult() = default;
    explicit PgResult(PGresult *r) : m_res(r, &PQclear) {}

    int rows() const { return m_res ? PQntuples(m_res.get()) : 0; }
    int columns() const { return m_res ? PQnfields(m_res.get()) : 0; }
    bool isNull(int row, int col) const { return PQgetisnull(m_res.get(), row, col) != 0; }
    /// The value as the server sent it (text format). Empty for NULL; check isNull().
    std::string_view value(int row, int col) const
    {
        return {PQgetvalue(m_res.get(), row, col), static_cast<size_t>(PQgetlength(m_res.get(), row, col))};
    }
    std::string text(int row, int col) const { return std::string(value(row, col)); }
    std::optional<std::string> optText(int row, int col) const
    {
        if (isNull(row, col))
            return std::nullopt;
        return text(row, col);
    }
    long long toInt(int row, int col) const;
    bool toBool(int row, int col) const { return value(row, col) == "t"; }
    std::string columnName(int col) const { return PQfname(m_res.get(), col); }
    /// Rows affected by INSERT/UPDATE/DELETE/MERGE/COPY.
    long long affected() const;
    PGresult *raw() const { return m_res.get(); }

private:
    std::shared_ptr<PGresult> m_res;
};

struct PgConnectOptions {
    std::string applicationName = "driftless";
    /// Opens a walsender connection (replication=database) that takes replication commands and
    /// simple-protocol SQL only.
    bool replication = false;
    int connectTimeoutSeconds = 10;
    /// How long DDL on the target may wait for a lock before failing (and being retried): a
    /// waiting ACCESS EXCLUSIVE request would otherwise queue every reader behind it.
    std::string lockTimeout = "10s";
};

using Params = std::vector<std::optional<std::string>>;

/// One libpq connection. RAII; move-only.
///
/// Thread affinity: one thread at a time (libpq connections are not thread-safe), except
/// cancel(), which any thread may call while a query runs.
///
/// Every session is set up so that values print the same way on every server: DateStyle ISO,
/// IntervalStyle postgres, TimeZone UTC, extra_float_digits 3, bytea_output hex, UTF8. That makes
/// COPY text pg→pg byte-exact and lets pg→SQLite conversion work on one form per type.
///
/// TLS: when neither the DSN, PGSSLMODE nor the service file chose an sslmode and the host is off
/// this machine, the connection uses sslmode=verify-full (core/db/pgtls.h); tls() says what the
/// open session actually has.
///
/// Failure: connect throws ConnectionError (transient when the server is unreachable, permanent
/// for authentication failures, missing databases and TLS that does not verify, each TLS cause
/// with its own message and fix); statements throw SqlError carrying the SQLSTATE, transient or
/// permanent by its class.
class PgConnection {
public:
    explicit PgConnection(const std::string &dsn, const PgConnectOptions &options = {});
    ~PgConnection();
    PgConnection(PgConnection &&) noexcept;
    PgConnection &operator=(PgConnection &&) noexcept;
    PgConnection(const PgConnection &) = delete;
    PgConnection &operator=(const PgConnection &) = delete;

    PgResult exec(std::string_view sql);
    PgResult execParams(std::string_view sql, const Params &params);

    /// Runs `COPY ... TO STDOUT` and hands each row (with its trailing newline) to `sink`.
    /// Returns the number of rows.
    template <typename Sink> long long copyOut(std::string_view sql, Sink &&sink)
    {
        startCopy(sql, PGRES_COPY_OUT);
        long long n = 0;
        for (;;) {
            char *buf = nullptr;
            int len = PQgetCopyData(m_conn, &buf, 0);
            if (len > 0) {
                std::string_view row(buf, static_cast<size_t>(len));
                try {
                    sink(row);
                } catch (...) {
                    PQfreemem(buf);
                    abandonCopyOut();
                    throw;
                }
                PQfreemem(buf);
                ++n;
                continue;
            }
            if (buf)
                PQfreemem(buf);
            finishCopy(len, sql);
            return n;
        }
    }

    /// Starts `COPY ... FROM STDIN`; then putCopyData() any number of times and endCopy().
    void beginCopyIn(std::string_view sql);
    void putCopyData(std::string_view data);
    /// Ends the COPY and returns the number of rows loaded. Throws if the server rejected data.
    long long endCopy();
    /// Aborts a COPY FROM in progress (the transaction is then failed).
    void abortCopy(const char *reason) noexcept;

    void begin(std::string_view mode = "");
    /// A statement begin() runs right after every BEGIN (not in READ ONLY transactions), so that
    /// it comes first in each transaction this connection writes: two-way pipelines mark their
    /// own writes with it when the user may not use replication origins. Empty: none.
    void setTransactionPrologue(std::string sql) { m_prologue = std::move(sql); }
    void commit();
    void rollback() noexcept;
    bool inTransaction() const;

    /// Cancels the statement in progress; safe from any thread.
    void cancel() noexcept;
    /// While `token` lives, a stop request cancels the running statement.
    std::stop_callback<std::function<void()>> cancelOn(std::stop_token token);

    int serverVersion() const { return PQserverVersion(m_conn); }
    /// The TimeZone the database hands out by default (before this session set UTC): the clock
    /// apps on that server most likely write `timestamp without time zone` values in.
    const std::string &serverTimeZone() const { return m_serverTimeZone; }
    /// host:port/dbname, for messages. Never contains a password.
    std::string describe() const;
    bool isOk() const { return m_conn && PQstatus(m_conn) == CONNECTION_OK; }
    /// Open, outside any transaction and with nothing pending, so another task may use it.
    /// Looks at the socket without waiting: a session the server ended (a restart,
    /// pg_terminate_backend, idle_session_timeout) or spoke to while idle is not reusable.
    bool reusable() noexcept;
    PGconn *raw() const { return m_conn; }
    /// Encrypted or not, certificate and host name verified or not, as libpq reports it.
    TlsState tls() const { return pgTlsState(m_conn); }
    /// How the sslmode was chosen (the DSN, PGSSLMODE, the service file or the default).
    const PgTlsChoice &tlsChoice() const { return m_tlsChoice; }

private:
    void startCopy(std::string_view sql, ExecStatusType expected);
    void finishCopy(int lastLen, std::string_view sql);
    void abandonCopyOut() noexcept;
    [[noreturn]] void throwResultError(PGresult *res, std::string_view sql);
    [[noreturn]] void throwConnectionLost(std::string_view what);
    PgResult check(PGresult *res, std::string_view sql);
    void close() noexcept;

    PGconn *m_conn = nullptr;
    PGcancel *m_cancel = nullptr;
    std::string m_serverTimeZone;
    PgTlsChoice m_tlsChoice;
    std::string m_prologue;
};

/// Escapes a string literal for the simple-query protocol (only used on replication connections,
/// which cannot take parameters). Standard-conforming strings are always on in our sessions.
std::string pgLiteral(std::string_view value);
/// A Postgres array literal of texts, for a `$n::type[]` parameter: {"a","b\"c"}.
std::string pgTextArray(const std::vector<std::string> &values);

} // namespace driftless::core
