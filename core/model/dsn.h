#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace driftless::core {

/// A MySQL/MariaDB endpoint's `mysql://user[:password]@host[:port]/database?options` DSN.
/// Options: `ssl-mode` (disabled, preferred, required, verify_ca, verify_identity), `ssl-ca`,
/// `ssl-cert`, `ssl-key`, `socket`, `connect-timeout` (seconds). The default ssl-mode is
/// `preferred` for loopback hosts and `verify_identity` for every other host.
struct MysqlDsn {
    std::string host = "127.0.0.1";
    int port = 3306;
    std::string user;
    std::optional<std::string> password; ///< only when the DSN itself carries one (discouraged)
    std::string database;
    std::string socket;
    std::string sslMode;
    std::string sslCa, sslCert, sslKey;
    int connectTimeout = 10;

    /// Throws Error naming what is wrong and how to write it.
    static MysqlDsn parse(const std::string &dsn);
    bool isLoopback() const;
    /// user@host:port/database, never the password.
    std::string display() const;
};

/// `v` as a libpq conninfo value: in single quotes, quotes and backslashes escaped.
std::string pgConninfoValue(const std::string &v);

/// Libpq conninfo fields of a DSN (key=value or URI), for validation and display.
/// Throws ConfigError with libpq's reason when the DSN does not parse.
std::vector<std::pair<std::string, std::string>> parsePgDsn(const std::string &dsn);

} // namespace driftless::core
