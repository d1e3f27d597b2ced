#pragma once

#include "core/model/tlsstate.h"
#include "core/model/workspace.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

class MysqlConnection;
class PgConnection;

/// How an endpoint's connections are protected, and how its TLS mode was chosen.
struct EndpointTls {
    TlsState tls;
    /// The server is on this machine (loopback or a Unix socket): nothing crosses a network.
    bool loopback = false;
    /// Who chose the mode: dsn, PGSSLMODE, PGREQUIRESSL, service (Postgres), or default.
    std::string chosenBy;
    std::string service;   ///< Postgres: the service file entry, when chosenBy is service
    std::int64_t atMs = 0; ///< when the connection was opened (0: not yet)
};

/// What an open connection has, and how its mode was chosen, as of now.
EndpointTls endpointTlsOf(const PgConnection &conn);
EndpointTls endpointTlsOf(const MysqlConnection &conn);

/// A connection that is not encrypted, or whose server is not verified, off this machine: what
/// is wrong and the exact change to the DSN (or environment, or service file) that fixes it.
/// nullopt when the connection is verified (verify-full, verify_identity) or on this machine.
/// An endpoint without a name (Test Connection's) is "this endpoint".
struct TlsWarning {
    std::string message;
    std::string fix;
};
std::optional<TlsWarning> tlsWarning(const Endpoint &e, const EndpointTls &t);

/// `dsn` with its TLS mode set to the strongest one (Postgres sslmode=verify-full, MySQL
/// ssl-mode=verify_identity), replacing the mode it names or adding one, in the DSN's own form
/// (key=value or URI).
std::string dsnWithVerifiedTls(const Endpoint &e);

/// Notes the TLS of a connection just opened to `e` (the engine's connect functions call it),
/// and, with `warn`, logs a warning the first time an endpoint's connections are unprotected
/// (tlsWarning) or when that changes. Thread-safe; process-wide.
void recordEndpointTls(const Endpoint &e, const EndpointTls &t, bool warn = true);
/// What the newest connection to `e` (with its current DSN) had; nullopt before one was opened.
std::optional<EndpointTls> observedEndpointTls(const Endpoint &e);

/// `{"encrypted", "verified", "host_verified", "mode", "protocol", "cipher"}`.
nlohmann::json tlsJsonValue(const TlsState &t);
TlsState tlsFromJson(const nlohmann::json &j);
/// One database endpoint of a workspace as the ledger (recordEndpointTls) knows it.
struct EndpointTlsStatus {
    std::string name;
    EndpointKind kind = EndpointKind::Postgres;
    /// On this machine: from the newest connection, else from the DSN.
    bool loopback = false;
    /// What the newest connection with the current DSN had; nullopt before one was opened.
    std::optional<EndpointTls> tls;
    /// tlsWarning() of that connection (none through an SSH tunnel).
    std::optional<TlsWarning> warning;
    /// Through an SSH tunnel: what protects the way to the server; empty otherwise.
    std::string tunnelNote;
    /// tunnelJsonValue(): null without a tunnel.
    nlohmann::json tunnel;
};
/// Per database endpoint of `ws` (SQLite files have no connection to protect), by name.
std::vector<EndpointTlsStatus> endpointsTlsStatus(const Workspace &ws);

/// `/sync/status`'s `endpoints`: per database endpoint of `ws`, `name`, `kind`, `loopback` and
/// `tls` (tlsJsonValue plus `chosen_by` and `checked_at`; null before the engine connected) and
/// `tls_warning` (null, or `{message, fix}`), and `tunnel` (null without `ssh:`, else
/// `{state, reason, via, since}`: core/engine/sshtunnel.h).
nlohmann::json endpointsTlsJsonValue(const Workspace &ws);
nlohmann::json endpointsTlsJsonValue(const std::vector<EndpointTlsStatus> &endpoints);
/// What endpointsTlsJsonValue() wrote (an agent's answer); entries it cannot read are left out.
std::vector<EndpointTlsStatus> endpointsTlsFromJson(const nlohmann::json &j);

} // namespace driftless::core
