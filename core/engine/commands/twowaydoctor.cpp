#include "core/engine/commands/twowaydoctor.h"

#include "core/engine/endpoints/connect.h"
#include "core/engine/twoway/newerwins.h"
#include "core/model/error.h"

namespace driftless::core {

namespace {

void postgresSide(const Endpoint &e, const std::vector<TableRef> &tables, const std::string &pipeline, bool commitClock,
                  std::vector<Finding> &out)
{
    PgConnection c = connectPostgres(e, "driftless doctor", false);
    const std::string subject = "endpoint " + e.name;
    auto r = c.exec("SELECT current_setting('wal_level'), r.rolsuper, r.rolreplication OR r.rolsuper, "
                    "has_function_privilege('pg_catalog.pg_replication_origin_create(text)', 'EXECUTE'), "
                    "has_function_privilege('pg_catalog.pg_replication_origin_session_setup(text)', 'EXECUTE'), "
                    "current_user FROM pg_roles r WHERE r.rolname = current_user");
    const std::string user = r.text(0, 5);
    if (r.text(0, 0) != "logical")
        out.push_back({FindingLevel::Error, "config", pipeline, subject,
                       "wal_level is '" + r.text(0, 0) +
                           "'; both sides of a two-way pipeline are read by change "
                           "data capture and need 'logical'",
                       "ALTER SYSTEM SET wal_level = logical; then restart the server",
                       "ALTER SYSTEM SET wal_level = logical;"});
    if (!r.toBool(0, 2))
        out.push_back({FindingLevel::Error, "config", pipeline, subject,
                       "the user may not open replication connections; a two-way pipeline reads this side too",
                       "ALTER ROLE <user> REPLICATION", "ALTER ROLE " + quoteIdent(user) + " REPLICATION;"});
    if (!r.toBool(0, 1) && !(r.toBool(0, 3) && r.toBool(0, 4)))
        // Loop prevention falls back to a logical message first in each applied transaction
        // (markOwnWrites), which needs no privilege.
        out.push_back({FindingLevel::Ok, "config", pipeline, subject,
                       "two-way: the user may not use replication origins, so each transaction applied here "
                       "begins with a pg_logical_emit_message marker (prefix driftless) naming its direction, "
                       "and the other direction drops it; nothing extra is needed",
                       ""});
    else
        out.push_back({FindingLevel::Ok, "config", pipeline, subject,
                       "two-way: changes applied here carry replication origin driftless_" + pipeline +
                           " or its reverse direction's, and are not read back",
                       ""});
    if (commitClock) {
        if (c.exec("SELECT current_setting('track_commit_timestamp')").text(0, 0) != "on")
            out.push_back({FindingLevel::Error, "config", pipeline, subject,
                           "track_commit_timestamp is off; conflicts: newer_wins with clock commit_time compares "
                           "the commit times of both sides, which the server keeps only with it on",
                           "ALTER SYSTEM SET track_commit_timestamp = on; then restart the server",
                           "ALTER SYSTEM SET track_commit_timestamp = on;"});
        else
            out.push_back({FindingLevel::Ok, "config", pipeline, subject,
                           "track_commit_timestamp is on (newer_wins compares commit times)", ""});
    }
    for (const auto &t : tables) {
        auto ri = c.execParams("SELECT relreplident FROM pg_class WHERE oid = to_regclass($1)", {t.quoted()});
        if (ri.rows() == 0)
            continue; // not created yet (the target's tables come with the initial load)
        if (ri.text(0, 0) != "f")
            out.push_back({FindingLevel::Warn, "config", pipeline, "table " + t.display() + " on " + e.name,
                           "REPLICA IDENTITY is not FULL: updates carry no before-image, which conflict "
                           "detection between the two sides needs (the engine sets it when the pipeline starts, "
                           "as the table's owner; a change without one stops the table)",
                           "ALTER TABLE " + t.display() + " REPLICA IDENTITY FULL",
                           "ALTER TABLE " + t.quoted() + " REPLICA IDENTITY FULL;"});
    }
}

void mysqlSide(const Endpoint &e, const std::string &pipeline, std::vector<Finding> &out)
{
    MysqlConnection c = connectMysql(e, false);
    const std::string subject = "endpoint " + e.name;
    auto check = [&](const std::string &var, const std::string &want, const std::string &why) {
        auto v = c.scalar("SELECT @@GLOBAL." + var);
        if (!v || *v != want)
            out.push_back(
                {FindingLevel::Error, "config", pipeline, subject, var + " is '" + v.value_or("") + "'; " + why,
                 "SET GLOBAL " + var + " = '" + want + "', and " + var + " = " + want + " in the server's config",
                 "SET GLOBAL " + var + " = '" + want + "';"});
    };
    if (c.scalar("SELECT @@GLOBAL.log_bin") != std::optional<std::string>("1"))
        out.push_back({FindingLevel::Error, "config", pipeline, subject,
                       "the binary log is off; both sides of a two-way pipeline are read from it",
                       "start the server with log_bin (e.g. log_bin = mariadb-bin in [mariadb]), then restart", ""});
    check("binlog_format", "ROW", "both sides of a two-way pipeline are read from the binlog, which needs ROW");
    check("binlog_row_image", "FULL", "conflict detection between the two sides needs full before-images");
    check("binlog_row_metadata", "FULL", "the binlog's table maps must carry column names");
    // Loop prevention needs no privilege here: the merger's session sets skip_replication, and
    // the other direction's reader drops the events it marks. A server that itself replicates
    // from another and filters marked events would not apply Driftless's changes made there.
    const auto skip = c.scalar("SELECT @@GLOBAL.replicate_events_marked_for_skip");
    if (skip && *skip != "REPLICATE")
        out.push_back({FindingLevel::Warn, "config", pipeline, subject,
                       "replicate_events_marked_for_skip is " + *skip +
                           ": as a replica, this server does not apply events marked skip_replication, which is "
                           "how Driftless marks what it applies (docs/two-way.md); its replicas must keep REPLICATE "
                           "or they miss Driftless's changes",
                       "SET GLOBAL replicate_events_marked_for_skip = 'REPLICATE' (with the replica's threads "
                       "stopped) on this server and its replicas",
                       "SET GLOBAL replicate_events_marked_for_skip = 'REPLICATE';"});
    else
        out.push_back({FindingLevel::Ok, "config", pipeline, subject,
                       "two-way: changes applied here carry skip_replication and are not read back; replicas of "
                       "this server must keep replicate_events_marked_for_skip = REPLICATE to receive them",
                       ""});
}

} // namespace

std::vector<Finding> twoWayFindings(const Workspace &ws, const PipelineSpec &p)
{
    std::vector<Finding> out;
    if (!p.twoWay)
        return out;
    const Endpoint *src = ws.endpoint(p.source);
    const Endpoint *tgt = ws.endpoint(p.target);
    if (!src || !tgt)
        return out;
    std::vector<TableRef> sourceTables, targetTables;
    bool commitClock = false;
    for (const auto &t : p.tables) {
        commitClock = commitClock || usesCommitTimeClock(t.conflicts);
        sourceTables.push_back(t.table);
        auto tn = resolveTargetName(p, t, tgt->kind);
        targetTables.push_back({tn.schema, tn.name});
    }
    auto side = [&](const Endpoint &e, const std::vector<TableRef> &tables) {
        try {
            if (e.kind == EndpointKind::Postgres)
                postgresSide(e, tables, p.name, commitClock, out);
            else if (e.kind == EndpointKind::Mysql)
                mysqlSide(e, p.name, out);
        } catch (const Error &) {
            // Unreachable or not logged in to: the endpoint's own check says so.
        }
    };
    side(*src, sourceTables);
    side(*tgt, targetTables);
    return out;
}

} // namespace driftless::core
