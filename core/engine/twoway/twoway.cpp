#include "core/engine/twoway/twoway.h"

#include "core/db/pgreplication.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/engine/jobs/tablejob.h"
#include "core/mergers/merger.h"
#include "core/mergers/mysqlmerger.h"
#include "core/mergers/pgmerger.h"
#include "core/model/dsn.h"
#include "core/model/error.h"

#include <map>
#include <mutex>

namespace driftless::core {

void writeUnderOrigin(PgConnection &c, const std::string &origin)
{
    try {
        c.execParams("SELECT pg_replication_origin_create($1) WHERE NOT EXISTS "
                     "(SELECT 1 FROM pg_replication_origin WHERE roname = $1)",
                     {origin});
        c.execParams("SELECT pg_replication_origin_session_setup($1)", {origin});
    } catch (const Error &e) {
        // The backend of a run that just ended (killed) may still hold the origin: wait.
        if (e.code() == "55006")
            throw Error(ErrorKind::Transient,
                        "replication origin " + origin +
                            " is still in use (the connection of a run that ended, "
                            "or another engine running this pipeline): " +
                            e.what(),
                        e.code());
        if (e.code() != "42501")
            throw;
        throw Error(ErrorKind::Permanent,
                    "the target user may not apply changes under a replication origin, which a two-way "
                    "pipeline needs so that its own changes are not read back (" +
                        e.describe() + ")",
                    e.code(),
                    "run as a superuser: GRANT EXECUTE ON FUNCTION pg_replication_origin_create(text), "
                    "pg_replication_origin_session_setup(text) TO <the endpoint's user> "
                    "(driftless-cli doctor prints the statements)");
    }
}

OwnWriteMark ownWriteMarkFor(PgConnection &c)
{
    return c.exec("SELECT rolsuper OR (has_function_privilege('pg_catalog.pg_replication_origin_create(text)', "
                  "'EXECUTE') AND has_function_privilege('pg_catalog.pg_replication_origin_session_setup(text)', "
                  "'EXECUTE')) FROM pg_roles WHERE rolname = current_user")
                   .toBool(0, 0)
               ? OwnWriteMark::Origin
               : OwnWriteMark::Message;
}

OwnWriteMark markOwnWrites(PgConnection &c, const std::string &origin)
{
    if (ownWriteMarkFor(c) == OwnWriteMark::Origin) {
        writeUnderOrigin(c, origin);
        return OwnWriteMark::Origin;
    }
    // A transactional message is decoded inside its transaction, before the transaction's
    // changes when it is the first statement: the other direction's reader drops the whole
    // transaction (docs/two-way.md, "Loop prevention").
    c.setTransactionPrologue("SELECT pg_catalog.pg_logical_emit_message(true, " + pgLiteral(kOwnWriteMessagePrefix) +
                             ", " + pgLiteral(origin) + ")");
    return OwnWriteMark::Message;
}

void markOwnWrites(TargetSession &session, const std::string &origin)
{
    if (auto *pg = dynamic_cast<PgTargetSession *>(&session)) {
        markOwnWrites(pg->connection(), origin);
        return;
    }
    if (auto *my = dynamic_cast<MysqlTargetSession *>(&session)) {
        // Every event this session writes carries LOG_EVENT_SKIP_REPLICATION_F (0x8000).
        my->connection().exec("SET SESSION skip_replication = 1");
        return;
    }
    throw Error(ErrorKind::Permanent, "two-way pipelines need a Postgres or MariaDB/MySQL target");
}

void addVersionColumns(PgConnection &conn, const std::vector<TableRef> &tables)
{
    for (const auto &t : tables) {
        conn.exec("ALTER TABLE " + t.quoted() +
                  " ADD COLUMN IF NOT EXISTS _driftless_version bigint NOT NULL DEFAULT 0");
        // The forward direction reads these tables: their changes must carry whole before-images
        // for conflict detection on the other side. Set only when not already, so a running
        // stream sees no needless catalog change.
        if (conn.execParams("SELECT relreplident <> 'f' FROM pg_class WHERE oid = $1::regclass", {t.quoted()})
                .toBool(0, 0))
            conn.exec("ALTER TABLE " + t.quoted() + " REPLICA IDENTITY FULL");
    }
}

bool ensureReverseSlot(const Endpoint &target, const std::string &reverseDirection, const std::vector<TableRef> &tables)
{
    const std::string name = "driftless_" + reverseDirection;
    PgConnection c = connectPostgres(target, "driftless " + reverseDirection);
    // The tables Driftless created here log whole before-images, which conflict detection
    // between the two sides compares with the other side's row (docs/two-way.md).
    for (const auto &t : tables)
        c.exec("ALTER TABLE " + t.quoted() + " REPLICA IDENTITY FULL");
    if (c.execParams("SELECT 1 FROM pg_publication WHERE pubname = $1", {name}).rows() == 0) {
        std::string list;
        for (const auto &t : tables)
            list += (list.empty() ? "" : ", ") + t.quoted();
        c.exec("CREATE PUBLICATION " + quoteIdent(name) + " FOR TABLE " + list +
               " WITH (publish_via_partition_root = true)");
    }
    if (c.execParams("SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", {name}).rows() > 0)
        return false;
    PgReplicationConnection repl(reachableDsn(target), "driftless " + reverseDirection);
    repl.createSlot(name, false, false);
    return true;
}

void requireForwardTables(PgConnection &src, const std::vector<TableRef> &tables, const std::string &pipeline)
{
    for (const auto &t : tables)
        if (src.execParams("SELECT to_regclass($1) IS NULL", {t.quoted()}).toBool(0, 0))
            throw Error(ErrorKind::Transient, "waiting for two-way pipeline " + pipeline + " to create " + t.display() +
                                                  " (its initial load creates the tables this direction reads)");
}

void requireManagedTarget(const TableJob &job, Merger &merger)
{
    if (!job.twoWay || job.twoWay->reverse || !merger.unmanagedTarget())
        return;
    throw SchemaError("target table " + job.targetName.display() +
                          " exists but is not managed by Driftless (it has no _driftless_version column), and a "
                          "two-way pipeline cannot adopt a table",
                      "to keep its rows, adopt it one way first: remove direction: both from pipeline " +
                          job.twoWay->pipeline +
                          " and set adopt: true (rows are compared and only those that differ are copied; where the "
                          "two sides differ the source's rows win, and rows only the target has are removed), run "
                          "it until the table streams, then set direction: both again (the target's changes are "
                          "read back from then on). Or drop or rename the table, or set target_table to another "
                          "name");
}

namespace {
bool ownColumn(const std::string &name)
{
    return name.rfind("_driftless_", 0) == 0;
}
} // namespace

void dropOwnColumns(TableSchema &schema)
{
    std::vector<std::string> key;
    for (int k : schema.primaryKey)
        key.push_back(schema.columns[static_cast<size_t>(k)].name);
    std::erase_if(schema.columns, [](const ColumnInfo &c) { return ownColumn(c.name); });
    schema.primaryKey.clear();
    for (const auto &k : key)
        schema.primaryKey.push_back(schema.columnIndex(k));
}

std::vector<std::string> withoutOwnColumns(const std::vector<std::string> &columns)
{
    std::vector<std::string> out;
    for (const auto &c : columns)
        if (!ownColumn(c))
            out.push_back(c);
    return out;
}

} // namespace driftless::core
