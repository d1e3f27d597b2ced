#include "core/engine/endpoints/endpointprobe.h"

#include "core/config/workspacefile.h"
#include "core/db/pgconnection.h"
#include "core/db/sqlitedb.h"
#include "core/engine/endpoints/endpointtls.h"
#include "core/model/dsn.h"
#include "core/model/error.h"
#include "core/model/tableref.h"

#include <filesystem>

#include <unistd.h>

namespace driftless::core {

namespace {

namespace fs = std::filesystem;

constexpr const char *kRoleSql =
    "SELECT current_setting('server_version'), current_setting('server_version_num')::int, "
    "current_setting('wal_level'), current_user, r.rolsuper, r.rolreplication, "
    "has_database_privilege(current_database(), 'CREATE') "
    "FROM pg_roles r WHERE r.rolname = current_user";

/// User tables (not partitions: their parent is what a pipeline reads), and whether this role
/// may read each (SELECT on the table and USAGE on its schema).
constexpr const char *kTablesCte =
    "WITH t AS (SELECT n.nspname, c.relname, "
    "  has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT') AS readable "
    "  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "  WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition "
    "    AND n.nspname NOT IN ('information_schema', '_driftless') AND n.nspname NOT LIKE 'pg\\_%') ";
constexpr int kUnreadableShown = 5;

std::string pgWithPassword(const std::string &dsn, const std::string &password)
{
    std::string conninfo;
    for (const auto &[k, v] : parsePgDsn(dsn))
        conninfo += k + "=" + pgConninfoValue(v) + " ";
    return conninfo + "password=" + pgConninfoValue(password);
}

} // namespace

std::vector<std::string> PgProbe::advice() const
{
    std::vector<std::string> out;
    if (!connected)
        return out;
    if (!tlsWarning.empty())
        out.push_back(tlsWarning + "; " + tlsFix);
    if (!logicalWal())
        out.push_back("wal_level is " + walLevel +
                      ": change data capture needs logical (ALTER SYSTEM SET wal_level = logical, then restart "
                      "the server); full refresh and cursor sync work as it is");
    if (!canReplicate())
        out.push_back("role " + user + " may not replicate: change data capture needs ALTER ROLE " +
                      displayIdent(user) + " REPLICATION; full refresh and cursor sync work without it");
    if (selectableTables < tables) {
        std::string names;
        for (const auto &n : notSelectable)
            names += (names.empty() ? "" : ", ") + n;
        if (tables - selectableTables > static_cast<int>(notSelectable.size()))
            names += ", ...";
        out.push_back(std::to_string(tables - selectableTables) + " of " + std::to_string(tables) +
                      " tables are not readable by " + user + " (" + names +
                      "): as a source it needs GRANT USAGE "
                      "ON SCHEMA and GRANT SELECT ON the tables to " +
                      displayIdent(user));
    }
    if (!canCreate)
        out.push_back("role " + user +
                      " may not CREATE in this database: as a target it needs GRANT CREATE ON "
                      "DATABASE to " +
                      displayIdent(user) + " (Driftless keeps its checkpoints in schema _driftless)");
    return out;
}

PgProbe probePostgres(const std::string &dsn, const std::optional<std::string> &password, int timeoutSeconds)
{
    PgProbe p;
    PgConnectOptions options;
    options.applicationName = "driftless probe";
    options.connectTimeoutSeconds = timeoutSeconds;
    try {
        PgConnection conn(password ? pgWithPassword(dsn, *password) : dsn, options);
        p.connected = true;
        p.server = conn.describe();
        const auto tls = endpointTlsOf(conn);
        p.tls = tls.tls;
        p.loopback = tls.loopback;
        p.tlsChosenBy = tls.chosenBy;
        Endpoint e;
        e.dsn = dsn;
        if (auto w = tlsWarning(e, tls)) {
            p.tlsWarning = w->message;
            p.tlsFix = w->fix;
        }
        auto r = conn.exec(kRoleSql);
        if (r.rows() == 1) {
            p.serverVersion = r.text(0, 0);
            p.serverVersionNum = static_cast<int>(r.toInt(0, 1));
            p.walLevel = r.text(0, 2);
            p.user = r.text(0, 3);
            p.superuser = r.toBool(0, 4);
            p.replicationRole = r.toBool(0, 5);
            p.canCreate = r.toBool(0, 6);
        }
        auto counts = conn.exec(std::string(kTablesCte) + "SELECT count(*), count(*) FILTER (WHERE readable) FROM t");
        p.tables = static_cast<int>(counts.toInt(0, 0));
        p.selectableTables = static_cast<int>(counts.toInt(0, 1));
        if (p.selectableTables < p.tables) {
            auto names = conn.exec(std::string(kTablesCte) +
                                   "SELECT nspname, relname FROM t WHERE NOT readable "
                                   "ORDER BY 1, 2 LIMIT " +
                                   std::to_string(kUnreadableShown));
            for (int i = 0; i < names.rows(); ++i)
                p.notSelectable.push_back(TableRef{names.text(i, 0), names.text(i, 1)}.display());
        }
    } catch (const Error &e) {
        // A failure after connecting (a query refused) still tells the DBA what to fix.
        p.error = e.what();
        p.code = e.code();
        p.hint = e.hint();
        p.transient = e.isTransient();
        if (p.connected && p.hint.empty())
            p.hint = "the role may lack access to the system catalogs; check its privileges";
    }
    return p;
}

SqliteProbe probeSqlite(const std::string &path)
{
    SqliteProbe p;
    if (path.empty()) {
        p.error = "no file given";
        p.hint = "choose the SQLite database file the target writes to";
        return p;
    }
    std::error_code ec;
    const fs::path file(path);
    if (fs::exists(file, ec)) {
        p.exists = true;
        try {
            SqliteDb db(path, SqliteDb::Mode::ReadOnly, 2000);
            auto st = db.prepare("SELECT sqlite_version(), (SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                                 "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\')");
            if (st.step()) {
                p.sqliteVersion = st.text(0);
                p.tables = static_cast<int>(st.int64(1));
            }
            p.ok = access(path.c_str(), W_OK) == 0;
            if (!p.ok) {
                p.error = "the file is read-only for this user";
                p.hint = "a target must be writable: fix the file's permissions";
            }
        } catch (const Error &e) {
            p.error = e.what();
            p.hint = "choose a SQLite database file, or a new file name for Driftless to create";
        }
        return p;
    }
    const fs::path folder = file.has_parent_path() ? file.parent_path() : fs::current_path(ec);
    if (!fs::is_directory(folder, ec)) {
        p.error = "folder " + folder.string() + " does not exist";
        p.hint = "create the folder or choose another path";
    } else if (access(folder.c_str(), W_OK) != 0) {
        p.error = "folder " + folder.string() + " is not writable for this user";
        p.hint = "choose a folder you can write to";
    } else {
        p.ok = true;
    }
    return p;
}

std::optional<std::string> endpointProblem(const Endpoint &e)
{
    Workspace ws;
    ws.endpoints[e.name] = e;
    try {
        WorkspaceFile::validate(ws);
    } catch (const ConfigError &err) {
        std::string message = err.what();
        // Drop "(workspace):LINE: field: ": the dialog shows the message next to the field.
        if (!err.field().empty()) {
            const auto at = message.find(err.field() + ": ");
            if (at != std::string::npos)
                message = message.substr(at + err.field().size() + 2);
        }
        return message;
    }
    return std::nullopt;
}

} // namespace driftless::core
