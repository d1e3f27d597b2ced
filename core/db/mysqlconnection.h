#pragma once

#include "core/model/dsn.h"
#include "core/model/tableref.h"
#include "core/model/tlsstate.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sql {
class Connection;
class ResultSet;
} // namespace sql

namespace driftless::core {

/// Where the password for a MySQL DSN comes from, in order: the password in the DSN, the
/// process's password provider (the desktop app's keychain, see core/base/passwordprovider.h), MYSQL_PWD, then
/// the [client], [client-server] and [client-mariadb] groups of ~/.my.cnf (or $MYSQL_HOME/my.cnf).
std::optional<std::string> mysqlPasswordFor(const std::string &dsn, const MysqlDsn &parsed);

/// A string literal with every special byte escaped, for the few places a value cannot be a
/// parameter (SHOW ... LIKE). Values in queries are parameters everywhere else.
std::string mysqlLiteral(std::string_view value);

/// A small result read whole: rows of nullable text.
struct MysqlRows {
    std::vector<std::string> columns;
    std::vector<std::vector<std::optional<std::string>>> rows;

    size_t size() const { return rows.size(); }
    bool empty() const { return rows.empty(); }
    const std::optional<std::string> &at(size_t row, size_t col) const { return rows.at(row).at(col); }
    std::string text(size_t row, size_t col) const { return at(row, col).value_or(std::string()); }
};

/// One row of a streamed result: values by 0-based column index, as the server's text.
class MysqlRowView {
public:
    explicit MysqlRowView(sql::ResultSet &rs) : m_rs(rs) {}
    bool isNull(unsigned col) const;
    /// The value's bytes (binary values included, NUL bytes kept).
    std::string text(unsigned col) const;

private:
    sql::ResultSet &m_rs;
};

/// An open MySQL/MariaDB session (mysql-connector-c++), set up the way Driftless reads: utf8mb4,
/// time_zone '+00:00' (TIMESTAMP values in UTC), sql_mode without ANSI surprises, autocommit.
///
/// Thread affinity: one thread at a time; `killQuery` may be called from any thread. Failure:
/// ConnectionError (unreachable, refused, wrong password) or Error with the server's message,
/// code and a hint.
class MysqlConnection {
public:
    /// `localInfile`: allow LOAD DATA LOCAL INFILE on this connection (the target merger's bulk
    /// load; the client then sends a file the statement names when the server asks for it). Only
    /// honoured towards a server that cannot be impersonated (loopback, or ssl-mode verify_ca /
    /// verify_identity); elsewhere the merger's INSERT path is used.
    explicit MysqlConnection(const std::string &dsn, const std::string &endpointName = {}, bool localInfile = false);
    ~MysqlConnection();
    MysqlConnection(MysqlConnection &&) noexcept;
    MysqlConnection &operator=(MysqlConnection &&) noexcept;
    MysqlConnection(const MysqlConnection &) = delete;
    MysqlConnection &operator=(const MysqlConnection &) = delete;

    void exec(const std::string &sql);
    /// Runs a statement without a result (SET, INSERT...) with `?` parameters bound as strings.
    void execParams(const std::string &sql, const std::vector<std::optional<std::string>> &params);
    /// Runs `sql` with `?` parameters bound as strings (std::nullopt binds NULL) and reads the
    /// whole result.
    MysqlRows query(const std::string &sql, const std::vector<std::optional<std::string>> &params = {});
    /// The first value of the first row, or nullopt (NULL or no row).
    std::optional<std::string> scalar(const std::string &sql,
                                      const std::vector<std::optional<std::string>> &params = {});
    /// Streams the rows of `sql` (no parameters) one at a time without buffering the result.
    /// Returns the number of rows. An exception from `row` stops the read (the rest of the result
    /// is discarded on the server by killing the query).
    long long stream(const std::string &sql, const std::function<void(const MysqlRowView &)> &row);
    /// Like query() with parameters, calling `row` per row (the result is buffered by the driver;
    /// use for bounded pages).
    long long queryRows(const std::string &sql, const std::vector<std::optional<std::string>> &params,
                        const std::function<void(const MysqlRowView &)> &row);

    /// Stops the statement running on this connection (KILL QUERY from a second connection).
    /// Thread-safe; does nothing when no connection id is known.
    void killQuery();

    const MysqlDsn &dsn() const { return m_dsn; }
    /// `10.11.6-MariaDB-0+deb12u1` style version string.
    const std::string &serverVersion() const { return m_version; }
    bool isMariaDb() const;
    std::uint64_t connectionId() const { return m_connectionId; }
    /// The session's TLS as the server reports it (Ssl_cipher, Ssl_version) and the ssl-mode in force.
    const TlsState &tls() const { return m_tls; }

private:
    [[noreturn]] void rethrow(const std::exception &e, const std::string &what) const;

    std::string m_rawDsn;
    std::string m_endpoint;
    MysqlDsn m_dsn;
    std::unique_ptr<sql::Connection> m_conn;
    std::string m_version;
    std::uint64_t m_connectionId = 0;
    TlsState m_tls;
};

} // namespace driftless::core
