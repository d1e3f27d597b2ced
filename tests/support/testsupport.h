#pragma once

#include "core/db/pgconnection.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace driftless::test {

/// Coordinates of the throwaway servers the ctest fixture started (tests/support/servers.sh),
/// read from the file named by DRIFTLESS_TEST_ENV. Loading it also exports PGPASSWORD, so libpq
/// finds the password the way a DBA's environment would provide it.
struct Servers {
    std::string root;
    std::string pgHost;
    int pgPort = 0;
    std::string pgUser;
    std::string pgPassword;
    std::string pgBin;
    std::string myHost;
    int myPort = 0;
    std::string myUser;
    std::string myPassword;
    std::string mySocket;
};
const Servers &servers();

/// KEY=value lines of an env file a server script wrote; throws when it cannot be read.
std::map<std::string, std::string> readEnvFile(const std::string &path);

/// The TLS test servers tlsservers.sh started (ctest's tls_servers fixture), read from the file
/// named by DRIFTLESS_TLS_ENV: a test CA, another CA, the name in the certificates, and a
/// Postgres and a MariaDB port.
struct TlsServers {
    std::string ca, otherCa, certName, myUser, myPassword;
    int pgPort = 0, myPort = 0;
};
const TlsServers &tlsServers();

/// A key=value DSN (no password) for a database on the test Postgres.
std::string pgDsn(const std::string &db);

/// A fresh name, unique across parallel test processes: prefix_pid_counter.
std::string uniqueName(const std::string &prefix);

/// A database created for one test and dropped when it goes out of scope.
class PgTestDb {
public:
    explicit PgTestDb(const std::string &prefix);
    ~PgTestDb();
    PgTestDb(const PgTestDb &) = delete;
    PgTestDb &operator=(const PgTestDb &) = delete;

    const std::string &name() const { return m_name; }
    std::string dsn() const { return pgDsn(m_name); }
    core::PgConnection connect() const;
    /// Runs SQL on a fresh connection (several statements allowed).
    void exec(const std::string &sql) const;
    std::string scalar(const std::string &sql) const;

private:
    std::string m_name;
};

/// A temporary folder removed with its contents at scope end.
class TempDir {
public:
    TempDir();
    ~TempDir();
    const std::filesystem::path &path() const { return m_path; }
    std::string file(const std::string &name) const { return (m_path / name).string(); }

private:
    std::filesystem::path m_path;
};

/// md5 over the rows of `select` ordered by `orderBy`, each row as Postgres prints a record.
/// Equal data on two databases of the same server gives equal hashes.
std::string pgHash(core::PgConnection &conn, const std::string &select, const std::string &orderBy);

struct CliResult {
    int exitCode = -1;
    std::string out;
    std::string err;
};
/// Runs driftless-cli with `args`; `env` adds or overrides environment variables (value "" with
/// key prefixed '-' removes one: {"-PGPASSWORD", ""}).
CliResult runCli(const std::vector<std::string> &args, const std::map<std::string, std::string> &env = {},
                 int timeoutSeconds = 300);
std::string cliPath();

/// Starts driftless-cli in the background; returns its pid. Output goes to `logFile`.
int spawnCli(const std::vector<std::string> &args, const std::map<std::string, std::string> &env,
             const std::string &logFile);
/// Starts another program the same way (e.g. the desktop app).
int spawnProgram(const std::string &program, const std::vector<std::string> &args,
                 const std::map<std::string, std::string> &env, const std::string &logFile);
/// Waits for a spawned process; returns its exit code, or -signal when killed.
int waitPid(int pid, int timeoutSeconds = 300);

std::string readFile(const std::string &path);
void writeFile(const std::string &path, const std::string &content);

} // namespace driftless::test

#include "core/engine/sync/tablesync.h"

namespace driftless::test {

core::Endpoint pgEndpoint(const std::string &name, const std::string &db);
core::Endpoint sqliteEndpoint(const std::string &name, const std::string &path);
/// A job for one table; the target name follows the workspace rules (target_schema for
/// Postgres, bare name for SQLite).
core::TableJob makeJob(const std::string &pipeline, const core::TableSpec &spec, const core::Endpoint &source,
                       const core::Endpoint &target, std::optional<std::string> targetSchema = std::nullopt);

} // namespace driftless::test

namespace driftless::test {
struct HttpResult {
    int status = 0; ///< 0 when nothing could be read
    std::string contentType;
    std::string body;
};
/// One HTTP/1.1 request to 127.0.0.1:`port` (Connection: close); throws std::runtime_error
/// when the connection fails.
HttpResult httpRequest(int port, const std::string &method, const std::string &path);

/// Every row of every table of a SQLite file as text, to compare files logically.
std::string sqliteDump(const std::string &path);
} // namespace driftless::test
