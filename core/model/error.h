#pragma once

#include <stdexcept>
#include <string>

namespace driftless::core {

/// Whether retrying the same operation later can succeed.
enum class ErrorKind {
    Transient, ///< network drop, server restart, lock timeout, serialization failure: retry with backoff
    Permanent  ///< bad config, wrong password, missing table or privilege: stop and tell the DBA
};

/// The one error type the engine throws. Everything that reaches the job boundary is an Error;
/// the scheduler turns it into a visible table state and an event.
///
/// `code()` keeps the server's own code (SQLSTATE for Postgres, errno for MySQL, sqlite result
/// code) so callers can branch on it; `hint()` says what the DBA should do, in one sentence.
class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, std::string message, std::string code = {}, std::string hint = {});

    ErrorKind kind() const noexcept { return m_kind; }
    bool isTransient() const noexcept { return m_kind == ErrorKind::Transient; }
    const std::string &code() const noexcept { return m_code; }
    const std::string &hint() const noexcept { return m_hint; }
    /// message plus hint, as one line for stderr and the event log.
    std::string describe() const;

private:
    ErrorKind m_kind;
    std::string m_code;
    std::string m_hint;
};

/// Any exception as one line for the DBA: an Error's describe(), else "internal error: " and
/// what() (a bug of ours, not a fault of the databases).
std::string describe(const std::exception &e);

/// A workspace file or command-line argument is wrong. Carries the file, line and field.
class ConfigError : public Error {
public:
    ConfigError(std::string message, std::string file = {}, int line = 0, std::string field = {});
    const std::string &file() const noexcept { return m_file; }
    int line() const noexcept { return m_line; }
    const std::string &field() const noexcept { return m_field; }

private:
    std::string m_file;
    int m_line;
    std::string m_field;
};

/// Could not reach or log in to a server. Refused connections are transient; authentication
/// failures and unknown databases are permanent.
class ConnectionError : public Error {
public:
    using Error::Error;
};

/// A statement failed on the server; the kind follows the SQLSTATE class.
class SqlError : public Error {
public:
    using Error::Error;
};

/// The source or target does not have the shape the pipeline needs (missing table, no primary
/// key, unsupported type, schema changed under us). Always permanent.
class SchemaError : public Error {
public:
    explicit SchemaError(std::string message, std::string hint = {})
        : Error(ErrorKind::Permanent, std::move(message), {}, std::move(hint))
    {
    }
};

/// Another server, or another history, answers behind a source's address than the one the
/// checkpoints were read from, and the stream cannot read on from them (docs/failover.md). Always
/// permanent; the tables it stops show `source_changed`, and the hint names `recover` and
/// `resnapshot`.
class SourceChangedError : public Error {
public:
    SourceChangedError(std::string message, std::string code, std::string hint)
        : Error(ErrorKind::Permanent, std::move(message), std::move(code), std::move(hint))
    {
    }
};

/// The operation was cancelled through its stop token.
class Cancelled : public Error {
public:
    Cancelled() : Error(ErrorKind::Transient, "cancelled") {}
};

/// True for Postgres SQLSTATEs worth retrying: connection exceptions (08), transaction rollbacks
/// such as serialization failures and deadlocks (40), insufficient resources (53), operator
/// intervention such as admin shutdown (57P), and lock timeouts (55P03).
bool isTransientSqlState(const std::string &sqlstate);

} // namespace driftless::core
