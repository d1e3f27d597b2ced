#pragma once

#include "core/model/tlsstate.h"

#include <optional>
#include <string>
#include <string_view>

#include <libpq-fe.h>

namespace driftless::core {

/// How a Postgres connection will choose TLS, worked out before connecting.
///
/// libpq takes a connection's options from the DSN, then from the service file entry it names
/// (`service=` or PGSERVICE), then from the PG* variables, then from its built-in defaults.
/// resolvePgTls() asks libpq itself for that result, so Driftless sees what psql would. A mode
/// counts as chosen when the DSN says `sslmode` (or `requiressl`), when PGSSLMODE (or
/// PGREQUIRESSL) is set, or when the service file sets anything but `prefer` (libpq's own default,
/// which cannot be told apart from it). When nothing chose and the host is off this machine,
/// Driftless connects with `sslmode=verify-full`; on this machine libpq's `prefer` stays.
struct PgTlsChoice {
    std::string host;     ///< the host list as resolved (empty: libpq's default Unix socket)
    std::string hostaddr; ///< as resolved, when given
    /// Every host the connection may use is on this machine: 127.0.0.0/8, ::1, localhost or a
    /// Unix socket directory. The name in `host` decides when both `host` and `hostaddr` are
    /// given, since that is the name verify-full checks the certificate against.
    bool loopback = true;
    std::string mode;        ///< the sslmode the connection will use
    std::string chosenBy;    ///< dsn, PGSSLMODE, PGREQUIRESSL, service, or default
    std::string service;     ///< the service file entry in use, when one is
    std::string sslrootcert; ///< as resolved; empty: libpq's ~/.postgresql/root.crt
    /// Driftless adds sslmode=verify-full to the connection (nothing chose, host off this machine).
    bool verifyByDefault() const { return chosenBy == "default" && !loopback; }
    /// Off this machine and weaker than verify-full by choice: what doctor and Test Connection
    /// warn about.
    bool weakerByChoice() const { return !loopback && chosenBy != "default" && mode != "verify-full"; }
    /// Where the mode was chosen, in words: "the dsn", "PGSSLMODE", "service 'x' of the service
    /// file", "Driftless's default off this machine", "libpq's default".
    std::string chosenWhere() const;
};

/// Resolves `dsn` as libpq would (no network: libpq stops before any lookup). When libpq cannot
/// resolve it (a service that does not exist, a bad option), `mode` is empty and the connection
/// itself reports why.
PgTlsChoice resolvePgTls(const std::string &dsn);

/// 127.0.0.0/8, ::1, localhost, or a Unix socket directory (a path, or `@` for Linux's abstract
/// namespace).
bool isLoopbackHost(std::string_view host);

/// What TLS an open connection has (PQsslInUse, PQsslAttribute, the sslmode in force).
TlsState pgTlsState(PGconn *conn);

/// A connection failure caused by TLS, restated with what to do; nullopt for other failures.
/// Told apart: a certificate signed by a CA this machine does not trust, no CA file to check it
/// with, a certificate for another host name, and a server without TLS where it is required.
struct PgTlsFailure {
    std::string message;
    std::string hint;
};
std::optional<PgTlsFailure> explainPgTlsFailure(const std::string &libpqMessage, const PgTlsChoice &choice);

} // namespace driftless::core
