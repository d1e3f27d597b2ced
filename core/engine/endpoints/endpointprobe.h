#pragma once

#include "core/model/tlsstate.h"
#include "core/model/workspace.h"

#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// What "Test connection" found on a Postgres server: whether the endpoint can serve as a source
/// (CDC needs wal_level=logical and a role that may replicate, every strategy needs SELECT) or a
/// target (CREATE on the database), or libpq's reason why it cannot be reached.
struct PgProbe {
    bool connected = false;

    // When connected.
    std::string server;        ///< host:port/dbname
    std::string serverVersion; ///< SHOW server_version, e.g. "15.5 (Debian 15.5-0+deb12u1)"
    int serverVersionNum = 0;  ///< e.g. 150005
    std::string walLevel;      ///< replica, logical, minimal
    std::string user;
    bool superuser = false;
    bool replicationRole = false;           ///< rolreplication
    bool canCreate = false;                 ///< CREATE on the database (a target makes its own schemas)
    int tables = 0;                         ///< ordinary and partitioned tables outside the system schemas
    int selectableTables = 0;               ///< ... of which the user may SELECT
    std::vector<std::string> notSelectable; ///< the first few it may not, as schema.name
    TlsState tls;                           ///< what the connection got, as libpq reports it
    bool loopback = false;                  ///< the server is on this machine (no network to protect)
    std::string tlsChosenBy;                ///< dsn, PGSSLMODE, PGREQUIRESSL, service or default (core/db/pgtls.h)
    /// Off this machine and not verified: what is wrong and the DSN change that fixes it.
    std::string tlsWarning, tlsFix;

    // When not connected.
    std::string error; ///< libpq's message, one line
    std::string code;  ///< the SQLSTATE the connection error was filed under (28P01, 3D000, 08001, ...)
    std::string hint;  ///< what to do about it
    bool transient = false;

    bool canReplicate() const { return superuser || replicationRole; }
    bool logicalWal() const { return walLevel == "logical"; }
    /// What stands in the way, one sentence each with the fix: a connection off this machine that
    /// is not encrypted or not verified, CDC without logical WAL or a replicating role, tables it
    /// may not read. Empty when nothing does.
    std::vector<std::string> advice() const;
};

/// Connects to `dsn` and reads the server's version, wal_level, the role's rights and its SELECT
/// privileges on the database's tables. `password`, when given, is handed to libpq for this
/// connection only (the DSN itself must hold none); otherwise the process's password provider
/// (core/base/passwordprovider.h) and libpq's own sources apply, as for the engine.
///
/// Blocking (up to `timeoutSeconds` to connect): call it off the UI thread. Never throws for a
/// server's refusal or a failing query: those land in error/code/hint.
PgProbe probePostgres(const std::string &dsn, const std::optional<std::string> &password = std::nullopt,
                      int timeoutSeconds = 10);

/// What "Test connection" found for a SQLite file: an existing database, or a file the first
/// sync can create.
struct SqliteProbe {
    bool ok = false;
    bool exists = false;
    std::string sqliteVersion; ///< when it exists and opened
    int tables = 0;
    std::string error; ///< why it cannot be used
    std::string hint;
};

/// Opens `path` read-only when it exists (never creating it), else checks that its folder exists
/// and is writable. Blocking; call it off the UI thread.
SqliteProbe probeSqlite(const std::string &path);

/// Why the workspace loader would refuse `e` (a DSN holding a password, a DSN libpq cannot
/// parse, a bad name or path), in the loader's own words without file and line; nullopt when it
/// takes it.
std::optional<std::string> endpointProblem(const Endpoint &e);

} // namespace driftless::core
