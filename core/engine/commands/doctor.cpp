#include "core/engine/commands/doctor.h"

#include "core/base/jsonfields.h"
#include "core/db/mysqlcatalog.h"
#include "core/db/pgcatalog.h"
#include "core/db/sqlitedb.h"
#include "core/engine/commands/publicationcheck.h"
#include "core/engine/commands/twowaydoctor.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/endpoints/endpointtls.h"
#include "core/engine/endpoints/mysqlpreflight.h"
#include "core/engine/endpoints/tablepatterns.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/rows/rowfilter.h"
#include "core/engine/slots/slots.h"
#include "core/model/duration.h"
#include "core/model/error.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <unistd.h>

namespace driftless::core {

namespace {

/// The SET statement a binlog fix starts with or names ("SET GLOBAL binlog_format = 'ROW'; and
/// in the server's config"), through its semicolon; empty when it names none.
std::string setStatementIn(const std::string &fix)
{
    auto at = fix.find("SET GLOBAL ");
    if (at == std::string::npos)
        at = fix.find("SET PERSIST ");
    const auto end = at == std::string::npos ? at : fix.find(';', at);
    return end == std::string::npos ? std::string() : fix.substr(at, end - at + 1);
}

/// 'user'@'host' of a MySQL/MariaDB session, as GRANT takes it.
std::string mysqlAccount(MysqlConnection &conn)
{
    const std::string who = conn.scalar("SELECT CURRENT_USER()").value_or("");
    const auto at = who.rfind('@');
    if (at == std::string::npos)
        return mysqlLiteral(who);
    return mysqlLiteral(who.substr(0, at)) + "@" + mysqlLiteral(who.substr(at + 1));
}

struct Probe {
    std::unique_ptr<PgConnection> conn;
    std::string error;
    std::string fix;
    std::string user;                      ///< current_user, for the GRANTs a fix names
    std::string database;                  ///< current_database()
    std::set<std::string> orphansReported; ///< once per source, not once per pipeline
};

/// How the endpoint's connection is protected: a warning with the DSN change when it is not
/// encrypted or not verified off this machine (a mode the DSN, PGSSLMODE or the service file
/// chose), else what it has.
void tlsFinding(const Endpoint &e, const EndpointTls &t, std::vector<Finding> &out, const std::string &pipeline)
{
    if (auto w = tlsWarning(e, t))
        out.push_back({FindingLevel::Warn, "config", pipeline, "endpoint " + e.name, w->message, w->fix});
    else
        out.push_back({FindingLevel::Ok, "connection", pipeline, "endpoint " + e.name,
                       "TLS: " + t.tls.describe() + (t.loopback ? ", on this machine" : ""), ""});
}

Probe probe(const Endpoint &e, std::vector<Finding> &out, const std::string &pipeline)
{
    Probe p;
    try {
        p.conn = std::make_unique<PgConnection>(connectPostgres(e, "driftless doctor", false));
        auto r = p.conn->exec("SELECT current_setting('server_version'), current_setting('wal_level'), current_user, "
                              "current_database()");
        p.user = r.text(0, 2);
        p.database = r.text(0, 3);
        out.push_back({FindingLevel::Ok, "connection", pipeline, "endpoint " + e.name,
                       "reachable: PostgreSQL " + r.text(0, 0) + " at " + p.conn->describe() + " as " + r.text(0, 2) +
                           ", wal_level=" + r.text(0, 1),
                       ""});
        tlsFinding(e, endpointTlsOf(*p.conn), out, pipeline);
    } catch (const Error &err) {
        p.error = err.what();
        p.fix = err.hint();
        out.push_back({FindingLevel::Error, "connection", pipeline, "endpoint " + e.name, err.what(), err.hint()});
    }
    return p;
}

/// A MySQL/MariaDB target: reachable, a database named, and the user may create the target and
/// bookkeeping tables there (CREATE) and the per-connection staging tables (CREATE TEMPORARY
/// TABLES). Privileges granted through roles or wildcard database grants are not resolved, so a
/// missing one is a warning.
void doctorMysqlTarget(const PipelineSpec &p, const Endpoint &tgt, std::vector<Finding> &out,
                       std::set<std::string> &probed)
{
    if (!probed.insert("target " + tgt.name).second)
        return;
    const std::string subject = "endpoint " + tgt.name;
    try {
        auto conn = connectMysql(tgt, false);
        if (conn.dsn().database.empty()) {
            out.push_back({FindingLevel::Error, "config", p.name, subject,
                           "the DSN names no database for the target tables",
                           "add the database to the DSN: mysql://user@host:3306/<database>"});
            return;
        }
        out.push_back({FindingLevel::Ok, "connection", p.name, subject,
                       "reachable: " + conn.serverVersion() + " at " + conn.dsn().display(), ""});
        tlsFinding(tgt, endpointTlsOf(conn), out, p.name);
        // GRANTEE is 'user'@'host'; CURRENT_USER() is user@host.
        const std::string grantee = "CONCAT('''', REPLACE(CURRENT_USER(), '@', '''@'''), '''')";
        auto r = conn.query("SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = " + grantee +
                            " UNION SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = " +
                            grantee + " AND TABLE_SCHEMA = DATABASE()");
        std::set<std::string> privs;
        for (const auto &row : r.rows)
            privs.insert(row[0].value_or(""));
        std::string missing;
        for (const char *need : {"CREATE", "CREATE TEMPORARY TABLES", "INSERT", "UPDATE", "DELETE", "DROP", "ALTER"})
            if (!privs.count(need))
                missing += (missing.empty() ? "" : ", ") + std::string(need);
        if (!missing.empty())
            out.push_back({FindingLevel::Warn, "config", p.name, subject,
                           "the user may lack " + missing + " on database " + conn.dsn().database +
                               " (target tables, _driftless_ bookkeeping and staging need them)",
                           "GRANT CREATE, CREATE TEMPORARY TABLES, SELECT, INSERT, UPDATE, DELETE, DROP, ALTER ON " +
                               mysqlIdent(conn.dsn().database) + ".* TO the endpoint's user",
                           "GRANT CREATE, CREATE TEMPORARY TABLES, SELECT, INSERT, UPDATE, DELETE, DROP, ALTER ON " +
                               mysqlIdent(conn.dsn().database) + ".* TO " + mysqlAccount(conn) + ";"});
        else
            out.push_back({FindingLevel::Ok, "config", p.name, subject,
                           "may create tables in database " + conn.dsn().database, ""});
    } catch (const Error &err) {
        out.push_back({FindingLevel::Error, "connection", p.name, subject, err.what(), err.hint()});
    }
}

/// A MySQL/MariaDB source endpoint: whom it reached, how the connection is protected, and what its
/// binlog settings allow.
/// What a change data capture pipeline needs of a MariaDB source to go on after a failover by
/// GTID (docs/failover.md): strict GTID mode, and a binlog holding what it replicates.
void gtidResumeFindings(MysqlConnection &conn, const Endpoint &src, std::vector<Finding> &out,
                        const std::string &pipeline)
{
    if (!conn.isMariaDb())
        return;
    std::optional<MysqlRows> r;
    try {
        r = conn.query("SELECT @@gtid_strict_mode, @@log_slave_updates, @@server_id");
    } catch (const Error &) {
        return;
    }
    const std::string subject = "endpoint " + src.name;
    if (r->text(0, 0) != "1")
        out.push_back({FindingLevel::Warn, "config", pipeline, subject,
                       "gtid_strict_mode is off: after a failover to a replica, change data capture goes on by GTID "
                       "only where the new server provably holds the same history, which strict mode makes sure of "
                       "(without it a diverged replica may look like one that continues)",
                       "turn it on here and on every replica that may take over: SET GLOBAL gtid_strict_mode = ON; "
                       "and gtid_strict_mode = ON in the servers' config",
                       "SET GLOBAL gtid_strict_mode = ON;"});
    bool replica = false;
    try {
        replica = !conn.query("SHOW SLAVE STATUS").empty();
    } catch (const Error &) {
    }
    if (replica && r->text(0, 1) != "1")
        out.push_back({FindingLevel::Warn, "config", pipeline, subject,
                       "this server (server_id " + r->text(0, 2) +
                           ") is a replica without log_slave_updates: what it replicates is not in its binlog, so "
                           "change data capture reads none of it, and it cannot take over a pipeline by GTID",
                       "log_slave_updates = ON in its config, then restart it"});
    else
        out.push_back({FindingLevel::Ok, "config", pipeline, subject,
                       "server_id " + r->text(0, 2) + (r->text(0, 0) == "1" ? ", GTID strict mode" : "") +
                           ": after a failover to a replica with log_slave_updates, change data capture goes on by "
                           "GTID (docs/failover.md)",
                       ""});
}

void mysqlSourceEndpoint(MysqlConnection &conn, const Endpoint &src, std::vector<Finding> &out,
                         const std::string &pipeline)
{
    out.push_back({FindingLevel::Ok, "connection", pipeline, "endpoint " + src.name,
                   "reachable: " + conn.serverVersion() + " at " + conn.dsn().display(), ""});
    tlsFinding(src, endpointTlsOf(conn), out, pipeline);
    std::string retention;
    auto problems = binlogProblems(conn, &retention);
    if (problems.empty())
        out.push_back({FindingLevel::Ok, "config", pipeline, "endpoint " + src.name,
                       "binlog ready for change data capture (ROW, FULL image and metadata; kept " + retention + ")",
                       ""});
    for (const auto &b : problems)
        out.push_back({FindingLevel::Ok, "config", pipeline, "endpoint " + src.name,
                       b.setting + " is " + b.found +
                           " (fine for full refresh and cursor sync; change data capture will need: " + b.fix + ")",
                       "", setStatementIn(b.fix)});
}

/// A SQLite target: its folder exists and may be written.
void sqliteTarget(const Endpoint &tgt, std::vector<Finding> &out, const std::string &pipeline)
{
    auto dir = std::filesystem::path(tgt.path).parent_path();
    if (dir.empty())
        dir = ".";
    if (!std::filesystem::is_directory(dir))
        out.push_back({FindingLevel::Error, "config", pipeline, "endpoint " + tgt.name,
                       "folder " + dir.string() + " does not exist", "create it or fix the endpoint's path"});
    else if (::access(dir.c_str(), W_OK) != 0)
        out.push_back({FindingLevel::Error, "config", pipeline, "endpoint " + tgt.name,
                       "folder " + dir.string() + " is not writable", "fix its permissions"});
    else
        out.push_back({FindingLevel::Ok, "config", pipeline, "endpoint " + tgt.name, "SQLite file " + tgt.path, ""});
}

/// An endpoint no pipeline uses yet: reached and logged in to, how the connection is protected,
/// and for a MySQL/MariaDB server what its binlog allows.
void checkEndpointAlone(const Endpoint &e, std::vector<Finding> &out)
{
    if (e.kind == EndpointKind::Postgres) {
        probe(e, out, "");
    } else if (e.kind == EndpointKind::Sqlite) {
        sqliteTarget(e, out, "");
    } else {
        try {
            auto conn = connectMysql(e, false);
            mysqlSourceEndpoint(conn, e, out, "");
        } catch (const Error &err) {
            out.push_back({FindingLevel::Error, "connection", "", "endpoint " + e.name, err.what(), err.hint()});
        }
    }
}

/// The table's `columns:` mapping against the live source schema (file, line and field in the
/// message); nothing for a table without one.
void checkMapping(const PipelineSpec &p, const TableSpec &t, const TableSchema &schema, std::vector<Finding> &out)
{
    try {
        checkColumnMapping(t, schema);
    } catch (const ConfigError &e) {
        out.push_back({FindingLevel::Error, "config", p.name, "table " + t.table.display(), e.what(),
                       "fix the table's columns: mapping to name the source's columns as they are now"});
    } catch (const Error &e) {
        out.push_back({FindingLevel::Error, "config", p.name, "table " + t.table.display(), e.what(), e.hint()});
    }
}

void foreignKeyActions(const PipelineSpec &p, MysqlConnection &conn, std::vector<Finding> &out);

/// A MySQL/MariaDB source: reachable, its tables readable with the key and cursor their
/// strategy needs, and the binlog settings change data capture will need.
void doctorMysqlSource(const PipelineSpec &p, const Endpoint &src, std::vector<Finding> &out,
                       std::set<std::string> &probed)
{
    std::optional<MysqlConnection> conn;
    try {
        conn.emplace(connectMysql(src, false));
        if (probed.insert(src.name).second) {
            mysqlSourceEndpoint(*conn, src, out, p.name);
            if (std::any_of(p.tables.begin(), p.tables.end(),
                            [](const TableSpec &t) { return t.strategy == Strategy::Cdc; }))
                gtidResumeFindings(*conn, src, out, p.name);
        }
    } catch (const Error &err) {
        out.push_back({FindingLevel::Error, "connection", p.name, "endpoint " + src.name, err.what(), err.hint()});
        return;
    }
    for (const auto &t : p.tables) {
        const std::string subject = "table " + t.table.display();
        std::optional<mysqlcatalog::MysqlTable> table;
        try {
            table = mysqlcatalog::describeTable(*conn, t.table, t.key);
            conn->exec("SELECT 1 FROM " + mysqlIdent(t.table.schema) + "." + mysqlIdent(t.table.name) + " LIMIT 0");
        } catch (const Error &e) {
            out.push_back({FindingLevel::Error, "config", p.name, subject, e.what(), e.hint()});
            continue;
        }
        const TableSchema &schema = table->schema;
        checkMapping(p, t, schema, out);
        bool anyError = false;
        if (t.where) {
            auto problem = rowFilterProblem(*conn, t.table, *t.where);
            if (!problem.empty()) {
                anyError = true;
                out.push_back({FindingLevel::Error, "config", p.name, subject,
                               "the source refuses the row filter: " + problem,
                               "fix 'where:' (a condition on the table's columns, e.g. tenant_id = 42)"});
            }
        }
        if ((!schema.keyIndex.empty() || schema.keyDeclared) && t.strategy != Strategy::FullRefresh)
            out.push_back(
                {FindingLevel::Ok, "config", p.name, subject,
                 "keyed by " + schema.keyDescription() + ": merged, compared and paged by it as by a primary key", ""});
        if (schema.keyDeclared)
            if (auto problem = mysqlcatalog::declaredKeyProblem(*conn, *table)) {
                anyError = true;
                out.push_back({FindingLevel::Error, "config", p.name, subject, *problem,
                               "fix 'key:' of table " + t.table.display() + " in the pipeline editor (Table tab)"});
            }
        if (!schema.hasPrimaryKey() && t.strategy != Strategy::FullRefresh) {
            anyError = true;
            out.push_back({FindingLevel::Error, "config", p.name, subject,
                           "has no primary key and no unique index on NOT NULL columns; " +
                               std::string(toString(t.strategy)) + " deduplicates and merges by key",
                           "ALTER TABLE " + mysqlIdent(t.table.name) +
                               " ADD PRIMARY KEY (...), or use strategy "
                               "full_refresh"});
            out.back().setting = FindingSetting{t.table.display(), "strategy", "full_refresh"};
        }
        if (t.strategy == Strategy::Cursor) {
            const std::string col = t.cursorColumn();
            const int idx = schema.columnIndex(col);
            if (idx < 0) {
                anyError = true;
                out.push_back({FindingLevel::Error, "config", p.name, subject,
                               "cursor column " + col + " does not exist",
                               "set 'cursor:' to a DATETIME/TIMESTAMP or increasing number column"});
            } else {
                const auto &mc = table->columns[static_cast<size_t>(idx)];
                if (!mysqlcatalog::isTemporal(mc) && !mysqlcatalog::isNumeric(mc)) {
                    anyError = true;
                    out.push_back({FindingLevel::Error, "config", p.name, subject,
                                   "cursor column " + col + " has type " + mc.columnType,
                                   "a cursor must be a DATETIME, TIMESTAMP, DATE or integer/decimal column"});
                } else {
                    auto indexed = conn->scalar("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE "
                                                "TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ? AND "
                                                "SEQ_IN_INDEX = 1",
                                                {t.table.schema, t.table.name, col});
                    if (indexed.value_or("0") == "0")
                        out.push_back(
                            {FindingLevel::Warn, "config", p.name, subject,
                             "cursor column " + col + " is not indexed: every pass scans the table",
                             "ALTER TABLE " + mysqlIdent(t.table.name) + " ADD INDEX (" + mysqlIdent(col) + ")",
                             "ALTER TABLE " + mysqlIdent(t.table.schema) + "." + mysqlIdent(t.table.name) +
                                 " ADD INDEX (" + mysqlIdent(col) + ");"});
                    if (!schema.columns[static_cast<size_t>(idx)].notNull)
                        out.push_back({FindingLevel::Warn, "config", p.name, subject,
                                       "cursor column " + col +
                                           " allows NULL: rows with NULL there are copied by the initial load only",
                                       "make the column NOT NULL with a default, or rely on reconciliation"});
                    if (mc.dataType == "datetime" || mc.dataType == "date")
                        out.push_back({FindingLevel::Ok, "config", p.name, subject,
                                       "cursor " + col + " is a " + mc.dataType +
                                           " (no time zone); read in the server's time zone",
                                       ""});
                }
            }
        }
        if (!anyError)
            out.push_back({FindingLevel::Ok, "config", p.name, subject,
                           std::string(toString(t.strategy)) + ", ~" +
                               std::to_string(std::max(0LL, schema.estimatedRows)) + " rows, " +
                               std::to_string(schema.columns.size()) + " columns",
                           ""});
    }
    foreignKeyActions(p, *conn, out);
}

/// The foreign keys InnoDB acts on without a word in the binlog (ARCHITECTURE.md P7): what each
/// pipeline table gets of them (docs/cdc.md, "Foreign keys").
void foreignKeyActions(const PipelineSpec &p, MysqlConnection &conn, std::vector<Finding> &out)
{
    std::map<TableRef, const TableSpec *> synced;
    std::vector<TableRef> refs;
    for (const auto &t : p.tables) {
        synced[t.table] = &t;
        refs.push_back(t.table);
    }
    std::vector<mysqlcatalog::ForeignKey> fks;
    try {
        fks = mysqlcatalog::foreignKeys(conn, refs);
    } catch (const Error &e) {
        out.push_back({FindingLevel::Warn, "config", p.name, "endpoint " + p.source,
                       "cannot read the foreign keys: " + std::string(e.what()),
                       "GRANT SELECT on the tables to the endpoint's user"});
        return;
    }
    for (const auto &fk : fks) {
        if (!fk.acts())
            continue;
        std::string rules;
        for (const auto &[on, rule] : {std::pair{"DELETE", fk.onDelete}, std::pair{"UPDATE", fk.onUpdate}})
            if (rule == "CASCADE" || rule == "SET NULL" || rule == "SET DEFAULT")
                rules += (rules.empty() ? "ON " : ", ON ") + std::string(on) + " " + rule;
        const std::string what =
            "foreign key " + fk.name + " (" + rules + ") from " + fk.parent.display() + " to " + fk.child.display();
        const std::string subject = "table " + fk.child.display();
        auto child = synced.find(fk.child);
        if (child == synced.end()) {
            out.push_back({FindingLevel::Ok, "config", p.name, "table " + fk.parent.display(),
                           what + ": " + fk.child.display() +
                               " is not synced by this pipeline, so nothing of it is "
                               "applied to the target",
                           ""});
            continue;
        }
        if (fk.onDelete == "SET DEFAULT" || fk.onUpdate == "SET DEFAULT") {
            out.push_back({FindingLevel::Warn, "config", p.name, subject,
                           what + ": SET DEFAULT is not applied to the target (InnoDB refuses it too)",
                           "reconcile the table after its parent changes: driftless-cli reconcile " + p.name + " " +
                               fk.child.display()});
            continue;
        }
        switch (child->second->strategy) {
        case Strategy::Cdc:
            out.push_back({FindingLevel::Ok, "config", p.name, subject,
                           what +
                               ": the binlog does not carry what it does to the child's rows; applied to the "
                               "target with the parent's change" +
                               (synced.count(fk.parent) ? std::string()
                                                        : " (the parent is not synced: its changes are read for it)"),
                           ""});
            break;
        case Strategy::Cursor:
            out.push_back({FindingLevel::Warn, "config", p.name, subject,
                           what + ": cursor sync does not see the rows it deletes or changes (InnoDB does not touch "
                                  "their cursor column)",
                           "sync " + fk.child.display() +
                               " by cdc, or reconcile it on a schedule: reconcile: { "
                               "every: 1h }"});
            break;
        case Strategy::FullRefresh:
            out.push_back(
                {FindingLevel::Ok, "config", p.name, subject, what + ": each full refresh copies the result", ""});
            break;
        }
    }
}

} // namespace

/// A Postgres target table whose primary key is not the source's: versions before the fix of
/// PRIMARY KEY ... INCLUDE made the target's key of every indexed column. Merged by the source's
/// key, such a table keeps old rows beside new ones or refuses updates as duplicates.
void checkTargetKey(Probe &tp, const PipelineSpec &p, const TableSpec &t, const TableSchema &schema,
                    std::vector<Finding> &out)
{
    if (!tp.conn)
        return;
    const TargetName target = resolveTargetName(p, t, EndpointKind::Postgres);
    auto r =
        tp.conn->execParams("SELECT array_to_string(array_agg(a.attname::text ORDER BY k.ord), ', ') FROM pg_index i "
                            "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) "
                            "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
                            "WHERE i.indrelid = to_regclass($1) AND i.indisprimary AND k.ord <= i.indnkeyatts",
                            {quoteIdent(target.schema) + "." + quoteIdent(target.name)});
    if (r.rows() == 0 || r.isNull(0, 0))
        return; // no target table yet (or one without a key, which prepare() refuses)
    std::string want;
    for (int k : schema.primaryKey)
        want += (want.empty() ? "" : ", ") + schema.columns[static_cast<size_t>(k)].name;
    const std::string have = r.text(0, 0);
    if (have == want)
        return;
    const std::string fix = t.strategy == Strategy::Cdc ? "drop the target table (DROP TABLE " + target.display() +
                                                              ";), then load it again: driftless-cli "
                                                              "resnapshot " +
                                                              p.name + " " + t.table.display()
                                                        : "drop the target table (DROP TABLE " + target.display() +
                                                              ";): the next pass copies it again";
    out.push_back({FindingLevel::Error, "config", p.name, "table " + t.table.display(),
                   "the target table " + target.display() + " keys by (" + have + "), the source by (" + want +
                       "): merged by the source's key it would keep stale rows or refuse updates (made by an older "
                       "version that took INCLUDE columns for key columns, or changed by hand)",
                   fix, "DROP TABLE " + quoteIdent(target.schema) + "." + quoteIdent(target.name) + ";"});
}

/// include_tables: the tables the patterns match that the engine has not picked up yet, and
/// those it refuses (with what to do). A source that cannot be read has its own finding.
static void patternFindings(const Workspace &ws, const PipelineSpec &p, std::vector<Finding> &out)
{
    if (p.includeTables.empty())
        return;
    std::vector<PatternPickup> found;
    try {
        found = lookForNewTables(ws, p, {});
    } catch (const Error &) {
        return;
    }
    std::string next;
    for (const auto &f : found) {
        if (!f.refused.empty())
            out.push_back({FindingLevel::Warn, "config", p.name, "table " + f.table.display(), f.refused, f.fix});
        else
            next += (next.empty() ? "" : ", ") + f.table.display() + " (" + std::string(toString(f.strategy)) + ")";
    }
    if (!next.empty())
        out.push_back({FindingLevel::Ok, "config", p.name, "pipeline " + p.name,
                       "include_tables picks up " + next + " when the sync next looks (at start, then every " +
                           formatDuration(p.discoverEvery.value_or(PipelineSpec::kDefaultDiscoverEvery)) + ")",
                       ""});
}

std::vector<Finding> runDoctor(const Workspace &ws, const std::string &onlyPipeline)
{
    return runDoctor(ws, DoctorScope{onlyPipeline, {}});
}

std::vector<Finding> runDoctor(const Workspace &ws, const DoctorScope &scope)
{
    std::vector<Finding> out;
    std::map<std::string, Probe> probes;
    std::set<std::string> mysqlProbed;
    auto probeOnce = [&](const Endpoint &e, const std::string &pipeline) -> Probe & {
        auto it = probes.find(e.name);
        if (it == probes.end())
            it = probes.emplace(e.name, probe(e, out, pipeline)).first;
        return it->second;
    };

    auto checkPipeline = [&](const PipelineSpec &p) {
        const Endpoint &src = *ws.endpoint(p.source);
        const Endpoint &tgt = *ws.endpoint(p.target);

        // Target.
        if (tgt.kind == EndpointKind::Postgres) {
            Probe &tp = probeOnce(tgt, p.name);
            if (tp.conn) {
                auto r = tp.conn->exec("SELECT has_database_privilege(current_user, current_database(), 'CREATE')");
                if (!r.toBool(0, 0))
                    out.push_back(
                        {FindingLevel::Warn, "config", p.name, "endpoint " + tgt.name,
                         "the user may not create schemas in the target database",
                         "GRANT CREATE ON DATABASE ... TO the endpoint's user, or create schema "
                         "_driftless and the target schemas for it",
                         "GRANT CREATE ON DATABASE " + quoteIdent(tp.database) + " TO " + quoteIdent(tp.user) + ";"});
            }
        } else if (tgt.kind == EndpointKind::Sqlite) {
            sqliteTarget(tgt, out, p.name);
        } else {
            doctorMysqlTarget(p, tgt, out, mysqlProbed);
        }

        // Source and its tables.
        if (src.kind == EndpointKind::Mysql) {
            doctorMysqlSource(p, src, out, mysqlProbed);
            return;
        }
        Probe &sp = probeOnce(src, p.name);
        if (!sp.conn)
            return;
        PgConnection &c = *sp.conn;
        bool hasCdc = false;
        for (const auto &t : p.tables)
            hasCdc = hasCdc || t.strategy == Strategy::Cdc;
        if (hasCdc) {
            auto r = c.exec("SELECT current_setting('wal_level'), (SELECT rolreplication OR rolsuper FROM pg_roles "
                            "WHERE rolname = current_user), current_setting('max_replication_slots')::int - "
                            "(SELECT count(*) FROM pg_replication_slots), current_setting('max_wal_senders')::int - "
                            "(SELECT count(*) FROM pg_stat_replication), "
                            "(SELECT setting FROM pg_settings WHERE name = 'max_slot_wal_keep_size')");
            if (r.toInt(0, 3) < 1)
                out.push_back({FindingLevel::Error, "config", p.name, "endpoint " + src.name,
                               "no free WAL sender (max_wal_senders are all in use)",
                               "ALTER SYSTEM SET max_wal_senders = <more>; then restart the server"});
            if (r.text(0, 4) == "-1")
                out.push_back({FindingLevel::Warn, "config", p.name, "endpoint " + src.name,
                               "max_slot_wal_keep_size is unset: a replication slot that is not read keeps WAL "
                               "until the source's disk fills",
                               "ALTER SYSTEM SET max_slot_wal_keep_size = '10GB'; SELECT pg_reload_conf();  -- size "
                               "it to leave room on the WAL disk; a slot past it is invalidated instead",
                               "ALTER SYSTEM SET max_slot_wal_keep_size = '10GB';\nSELECT pg_reload_conf();"});
            // Standbys that may be promoted: a logical slot does not follow a promotion before
            // Postgres 17's failover slots (docs/failover.md).
            try {
                // Physical standbys only: a logical walsender (another pipeline's stream) holds a
                // logical slot.
                auto standbys = c.exec("SELECT count(*) FILTER (WHERE r.state = 'streaming' AND NOT EXISTS (SELECT 1 "
                                       "FROM pg_replication_slots s WHERE s.active_pid = r.pid AND s.slot_type = "
                                       "'logical')), current_setting('server_version_num')::int FROM "
                                       "pg_stat_replication r");
                const long long n = standbys.toInt(0, 0);
                if (n > 0 && standbys.toInt(0, 1) < 170000)
                    out.push_back({FindingLevel::Warn, "config", p.name, "endpoint " + src.name,
                                   std::to_string(n) + " standby" + (n == 1 ? "" : "s") +
                                       " stream from this server, and on Postgres before 17 a promoted standby has "
                                       "none of its logical slots: after a failover the pipeline stops (never reads "
                                       "a wrong place) and is loaded again by driftless-cli resnapshot " +
                                       p.name,
                                   "plan the resnapshot into your failover runbook; Postgres 17's failover slots "
                                   "(failover = true, synchronized_standby_slots) would carry the slot"});
            } catch (const Error &) {
                // pg_stat_replication hides other roles' rows from a plain user: nothing to say
            }
            // An idle source database on a busy cluster: WAL comes from the other databases, and
            // a slot of this one only moves when this database changes or a heartbeat is written.
            if (!p.heartbeat) {
                auto busy = c.exec("SELECT datname FROM pg_stat_database WHERE datname IS NOT NULL AND datname <> "
                                   "current_database() AND NOT datname LIKE 'template%' AND xact_commit > 100 "
                                   "ORDER BY xact_commit DESC LIMIT 3");
                if (busy.rows() > 0) {
                    std::string names;
                    for (int i = 0; i < busy.rows(); ++i)
                        names += (i ? ", " : "") + busy.text(i, 0);
                    out.push_back({FindingLevel::Warn, "config", p.name, "endpoint " + src.name,
                                   "no heartbeat, and other databases on this server write WAL (" + names +
                                       "): while this source is idle its slot cannot advance and holds their WAL",
                                   "add 'heartbeat: 1m' to pipeline " + p.name +
                                       " (a small transactional message in "
                                       "this database moves the slot)"});
                    out.back().setting = FindingSetting{{}, "heartbeat", "1m"};
                }
            }
            // Slots that look like ours but that no pipeline of this workspace reads.
            auto ours = c.exec("SELECT slot_name, temporary FROM pg_replication_slots WHERE database = "
                               "current_database()");
            for (int i = 0; i < ours.rows(); ++i) {
                const std::string name = ours.text(i, 0);
                if (isOrphanedSlot(ws, p.source, name, ours.toBool(i, 1)) && sp.orphansReported.insert(name).second)
                    out.push_back({FindingLevel::Warn, "config", p.name, "slot " + name,
                                   "no pipeline of this workspace reads this slot; it keeps WAL on the source",
                                   "if no other workspace uses it: SELECT pg_drop_replication_slot('" + name + "');",
                                   dropSlotSql(name)});
            }
            if (r.text(0, 0) != "logical")
                out.push_back({FindingLevel::Error, "config", p.name, "endpoint " + src.name,
                               "wal_level is '" + r.text(0, 0) + "'; change data capture needs 'logical'",
                               "ALTER SYSTEM SET wal_level = logical; then restart the server",
                               "ALTER SYSTEM SET wal_level = logical;"});
            if (!r.toBool(0, 1))
                out.push_back({FindingLevel::Error, "config", p.name, "endpoint " + src.name,
                               "the user may not open replication connections", "ALTER ROLE <user> REPLICATION",
                               "ALTER ROLE " + quoteIdent(sp.user) + " REPLICATION;"});
            auto slot = c.execParams("SELECT wal_status, active FROM pg_replication_slots WHERE slot_name = $1",
                                     {p.slotName()});
            if (slot.rows() == 0 && r.toInt(0, 2) < 1)
                out.push_back({FindingLevel::Error, "config", p.name, "endpoint " + src.name,
                               "no free replication slot (max_replication_slots reached)",
                               "raise max_replication_slots, or drop an unused slot"});
            else if (slot.rows() == 1 && slot.text(0, 0) == "lost")
                out.push_back({FindingLevel::Error, "config", p.name, "slot " + p.slotName(),
                               "the slot was invalidated (wal_status lost)", "driftless-cli resnapshot " + p.name});
            else if (r.text(0, 0) == "logical")
                out.push_back({FindingLevel::Ok, "config", p.name, "endpoint " + src.name,
                               slot.rows()
                                   ? "slot " + p.slotName() + ": " + slot.text(0, 0)
                                   : "ready for change data capture (slot " + p.slotName() + " will be created)",
                               ""});
        }
        for (const auto &t : p.tables) {
            const std::string subject = "table " + t.table.display();
            std::optional<TableSchema> schema;
            try {
                schema = pgcatalog::describeTable(c, t.table, t.key);
            } catch (const Error &e) {
                out.push_back({FindingLevel::Error, "config", p.name, subject, e.what(), e.hint()});
                continue;
            }
            checkMapping(p, t, *schema, out);
            auto priv = c.execParams("SELECT has_table_privilege($1, 'SELECT')", {t.table.quoted()});
            if (!priv.toBool(0, 0))
                out.push_back({FindingLevel::Error, "config", p.name, subject, "no SELECT privilege",
                               "GRANT SELECT ON " + t.table.display() + " TO the endpoint's user",
                               "GRANT SELECT ON " + t.table.quoted() + " TO " + quoteIdent(sp.user) + ";"});
            const bool needsKey = t.strategy != Strategy::FullRefresh;
            if (!schema->hasPrimaryKey()) {
                if (needsKey) {
                    out.push_back({FindingLevel::Error, "config", p.name, subject,
                                   "has no primary key and no unique index on NOT NULL columns; " +
                                       std::string(toString(t.strategy)) + " deduplicates and merges by key",
                                   "ALTER TABLE " + t.table.display() +
                                       " ADD PRIMARY KEY (...) (or a UNIQUE index on NOT NULL columns), or use "
                                       "strategy full_refresh"});
                    out.back().setting = FindingSetting{t.table.display(), "strategy", "full_refresh"};
                } else
                    out.push_back({FindingLevel::Ok, "config", p.name, subject,
                                   "no primary key (fine for full refresh; the target gets none either)", ""});
            }
            if (schema->keyDeclared)
                if (auto problem = pgcatalog::declaredKeyProblem(c, *schema))
                    out.push_back({FindingLevel::Error, "config", p.name, subject, *problem,
                                   "fix 'key:' of table " + t.table.display() + " in the pipeline editor (Table tab)"});
            if (needsKey && (!schema->keyIndex.empty() || schema->keyDeclared))
                out.push_back(
                    {FindingLevel::Ok, "config", p.name, subject,
                     "keyed by " + schema->keyDescription() + ": merged, compared and paged by it as by a primary key",
                     ""});
            if (needsKey && schema->hasPrimaryKey() && tgt.kind == EndpointKind::Postgres)
                checkTargetKey(probeOnce(tgt, p.name), p, t, *schema, out);
            checkPublicationCoverage(c, p.name, t.table, out);
            if (t.where) {
                auto problem = rowFilterProblem(c, *schema, *t.where);
                if (!problem.empty())
                    out.push_back({FindingLevel::Error, "config", p.name, subject,
                                   "the source refuses the row filter: " + problem,
                                   "fix 'where:' (a condition on the table's columns, e.g. tenant_id = 42)"});
            }
            if (t.strategy == Strategy::Cursor) {
                const std::string col = t.cursorColumn();
                int idx = schema->columnIndex(col);
                if (idx < 0) {
                    out.push_back({FindingLevel::Error, "config", p.name, subject,
                                   "cursor column " + displayIdent(col) + " does not exist",
                                   "set 'cursor:' to a timestamp or increasing number column"});
                    continue;
                }
                const auto &cc = schema->columns[static_cast<size_t>(idx)];
                const auto &bt = cc.baseType;
                bool okType = !cc.isArray && (bt == "timestamptz" || bt == "timestamp" || bt == "date" ||
                                              bt == "int2" || bt == "int4" || bt == "int8" || bt == "numeric");
                if (!okType) {
                    out.push_back({FindingLevel::Error, "config", p.name, subject,
                                   "cursor column " + displayIdent(col) + " has type " + cc.typeSql,
                                   "a cursor must be a timestamp, date or integer/numeric column"});
                    continue;
                }
                if (!pgcatalog::hasLeadingIndex(c, t.table, col))
                    out.push_back({FindingLevel::Warn, "config", p.name, subject,
                                   "cursor column " + displayIdent(col) + " is not indexed: every pass scans the table",
                                   "CREATE INDEX ON " + t.table.display() + " (" + displayIdent(col) + ")",
                                   "CREATE INDEX ON " + t.table.quoted() + " (" + quoteIdent(col) + ");"});
                if (!cc.notNull)
                    out.push_back({FindingLevel::Warn, "config", p.name, subject,
                                   "cursor column " + displayIdent(col) +
                                       " allows NULL: rows with NULL there are copied by the initial load only",
                                   "make the column NOT NULL with a default, or rely on reconciliation"});
                if (bt == "timestamp" || bt == "date")
                    out.push_back({FindingLevel::Ok, "config", p.name, subject,
                                   "cursor " + displayIdent(col) +
                                       " has no time zone; read in the server's time zone (" + c.serverTimeZone() + ")",
                                   ""});
            }
            if (t.strategy == Strategy::Cdc) {
                if (auto problem = pgcatalog::replicaIdentityProblem(c, *schema))
                    out.push_back(
                        {FindingLevel::Error, "config", p.name, subject, problem->message, problem->fix, problem->sql});
                if (p.publication) {
                    // The DBA's own publication: Driftless reads it and never changes it.
                    auto pub = c.execParams(
                        "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1), "
                        "EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = $1 AND schemaname = $2 AND "
                        "tablename = $3), "
                        "EXISTS (SELECT 1 FROM pg_publication p, pg_class c JOIN pg_namespace n ON n.oid = "
                        "c.relnamespace WHERE p.pubname = $1 AND NOT p.pubviaroot AND c.relkind = 'p' AND "
                        "n.nspname = $2 AND c.relname = $3)",
                        {*p.publication, t.table.schema, t.table.name});
                    if (!pub.toBool(0, 0))
                        out.push_back({FindingLevel::Error, "config", p.name, subject,
                                       "publication " + *p.publication + " does not exist on the source",
                                       "CREATE PUBLICATION " + *p.publication + " FOR TABLE " + t.table.display() +
                                           ", or remove 'publication:' to let Driftless create its own",
                                       "CREATE PUBLICATION " + quoteIdent(*p.publication) + " FOR TABLE " +
                                           t.table.quoted() + ";"});
                    else if (pub.toBool(0, 2))
                        out.push_back(
                            {FindingLevel::Error, "config", p.name, subject,
                             "publication " + *p.publication +
                                 " publishes this partitioned table as its partitions "
                                 "(publish_via_partition_root is off): its changes would not reach it",
                             "ALTER PUBLICATION " + *p.publication + " SET (publish_via_partition_root = true)",
                             "ALTER PUBLICATION " + quoteIdent(*p.publication) +
                                 " SET (publish_via_partition_root = true);"});
                    else if (!pub.toBool(0, 1))
                        out.push_back({FindingLevel::Error, "config", p.name, subject,
                                       "publication " + *p.publication + " does not include this table",
                                       "ALTER PUBLICATION " + *p.publication + " ADD TABLE " + t.table.display(),
                                       "ALTER PUBLICATION " + quoteIdent(*p.publication) + " ADD TABLE " +
                                           t.table.quoted() + ";"});
                }
                // Logical decoding sends no generated columns; the target still gets them.
                for (const auto &c : schema->columns)
                    if (c.generated)
                        out.push_back({FindingLevel::Ok, "config", p.name, subject,
                                       "generated column " + displayIdent(c.name) +
                                           " is not sent by logical decoding; " +
                                           (tgt.kind == EndpointKind::Postgres
                                                ? "the target generates it with the same expression (a target "
                                                  "table made by an older version keeps a plain column, whose "
                                                  "values are read from the source by key for each change)"
                                                : "its value is read from the source by key for each change"),
                                       ""});
            }
            bool anyError = false;
            for (auto &f : out)
                anyError = anyError || (f.level == FindingLevel::Error && f.subject == subject && f.pipeline == p.name);
            if (!anyError)
                out.push_back({FindingLevel::Ok, "config", p.name, subject,
                               std::string(toString(t.strategy)) + ", ~" +
                                   std::to_string(std::max(0LL, schema->estimatedRows)) + " rows, " +
                                   std::to_string(schema->columns.size()) + " columns",
                               ""});
        }
    };

    const Endpoint *only = scope.endpoint.empty() ? nullptr : ws.endpoint(scope.endpoint);
    if (!scope.endpoint.empty() && !only) {
        out.push_back({FindingLevel::Error, "config", scope.pipeline, "endpoint " + scope.endpoint, "no such endpoint",
                       "check the name against the workspace (driftless-cli status, or the Workspace page)"});
        return out;
    }
    if (!scope.pipeline.empty() && !ws.pipeline(scope.pipeline))
        out.push_back({FindingLevel::Error, "config", scope.pipeline, "pipeline " + scope.pipeline, "no such pipeline",
                       "check the name against the workspace (driftless-cli status, or the Workspace page)"});

    bool anyPipeline = false;
    for (const auto &p : ws.pipelines) {
        if (!scope.pipeline.empty() && p.name != scope.pipeline)
            continue;
        if (only && p.source != only->name && p.target != only->name)
            continue;
        anyPipeline = true;
        checkPipeline(p);
        patternFindings(ws, p, out);
        for (auto &f : twoWayFindings(ws, p))
            out.push_back(std::move(f));
    }
    if (!only)
        return out;
    if (!anyPipeline) {
        // An endpoint no pipeline uses yet: its connection, and what it offers as a source.
        checkEndpointAlone(*only, out);
        return out;
    }
    // The endpoint's own findings, and those of the tables and slots read from it.
    std::vector<Finding> mine;
    for (auto &f : out) {
        const PipelineSpec *p = ws.pipeline(f.pipeline);
        const bool readFromIt =
            p && p->source == only->name && (f.subject.starts_with("table ") || f.subject.starts_with("slot "));
        if (f.subject == "endpoint " + only->name || readFromIt || f.subject.starts_with("pipeline "))
            mine.push_back(std::move(f));
    }
    return mine;
}

nlohmann::json doctorJsonValue(const std::vector<Finding> &findings)
{
    nlohmann::json arr = nlohmann::json::array();
    int errors = 0, warnings = 0;
    for (const auto &f : findings) {
        errors += f.level == FindingLevel::Error;
        warnings += f.level == FindingLevel::Warn;
        arr.push_back({{"level", toString(f.level)},
                       {"category", f.category},
                       {"pipeline", f.pipeline},
                       {"subject", f.subject},
                       {"message", f.message},
                       {"fix", f.fix},
                       {"sql", f.sql},
                       {"setting", f.setting ? nlohmann::json{{"table", f.setting->table},
                                                              {"key", f.setting->key},
                                                              {"value", f.setting->value}}
                                             : nlohmann::json(nullptr)}});
    }
    return {{"findings", std::move(arr)}, {"errors", errors}, {"warnings", warnings}};
}

std::vector<Finding> findingsFromJson(const nlohmann::json &doc)
{
    std::vector<Finding> out;
    auto it = doc.find("findings");
    if (it == doc.end() || !it->is_array())
        return out;
    for (const auto &f : *it) {
        out.push_back({parseFindingLevel(jsonfields::text(f, "level")), jsonfields::text(f, "category"),
                       jsonfields::text(f, "pipeline"), jsonfields::text(f, "subject"), jsonfields::text(f, "message"),
                       jsonfields::text(f, "fix"), jsonfields::text(f, "sql")});
        if (const auto s = f.find("setting"); s != f.end() && s->is_object() && !jsonfields::text(*s, "key").empty())
            out.back().setting = FindingSetting{jsonfields::text(*s, "table"), jsonfields::text(*s, "key"),
                                                jsonfields::text(*s, "value")};
    }
    return out;
}

} // namespace driftless::core
