#include "core/engine/commands/debeziumexport.h"

#include "core/db/pgtls.h"
#include "core/engine/endpoints/binlogidentity.h"
#include "core/model/dsn.h"
#include "core/model/error.h"

#include <algorithm>
#include <cctype>

namespace driftless::core {
namespace {

/// Debezium matches `table.include.list` entries as regular expressions against
/// `schema.table`: the names are escaped so that a dot or a `$` means itself.
std::string regexLiteral(const std::string &s)
{
    std::string out;
    for (char c : s) {
        if (std::string_view(R"(\.^$|?*+()[]{})").find(c) != std::string_view::npos)
            out += '\\';
        out += c;
    }
    return out;
}

/// Kafka topic names allow `[a-zA-Z0-9._-]`.
std::string topicSafe(const std::string &s)
{
    std::string out = s;
    for (char &c : out)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
            c = '_';
    return out;
}

std::string field(const std::vector<std::pair<std::string, std::string>> &fields, const std::string &key,
                  const std::string &fallback)
{
    for (const auto &[k, v] : fields)
        if (k == key)
            return v;
    return fallback;
}

} // namespace

DebeziumExport exportDebezium(const Workspace &ws, const std::string &pipeline, const DebeziumOptions &options)
{
    const PipelineSpec *p = ws.pipeline(pipeline);
    if (!p)
        throw ConfigError("no pipeline named '" + pipeline + "' in this workspace; driftless-cli status lists them");
    const Endpoint *src = ws.endpoint(p->source);
    if (!src)
        throw ConfigError("pipeline '" + pipeline + "' reads endpoint '" + p->source + "', which is not defined");

    DebeziumExport out;
    nlohmann::json config = nlohmann::json::object();
    std::string tables;
    for (const auto &t : p->tables) {
        tables += (tables.empty() ? "" : ",") + regexLiteral(t.table.schema) + "\\." + regexLiteral(t.table.name);
        if (t.strategy != Strategy::Cdc)
            out.notExpressed.push_back(t.table.display() + ": synced by " + std::string(toString(t.strategy)) +
                                       " here; Debezium captures it from the log instead (deletes included, so "
                                       "the source needs what CDC needs: a primary key or REPLICA IDENTITY)");
        if (t.targetTable)
            out.notExpressed.push_back(t.table.display() + ": target_table " + *t.targetTable +
                                       " names the sink's table: set it in the sink connector");
        if (t.freshnessSla)
            out.notExpressed.push_back(t.table.display() +
                                       ": the freshness SLA: watch the connector's MilliSecondsBehindSource metric");
        if (t.columns && !t.columns->empty())
            out.notExpressed.push_back(t.table.display() +
                                       ": the columns: mapping (exclude/include, rename, masks): express it with the "
                                       "connector's column.exclude.list, column.mask.* and column.truncate.* "
                                       "options and the sink's field renames");
    }
    config["table.include.list"] = tables;
    config["topic.prefix"] = topicSafe(p->name);
    config["tasks.max"] = "1";
    config["snapshot.mode"] = "initial";
    const bool anyTruncateIgnored =
        std::any_of(p->tables.begin(), p->tables.end(), [](const TableSpec &t) { return t.truncate == "ignore"; });
    const bool anyTruncateApplied =
        std::any_of(p->tables.begin(), p->tables.end(), [](const TableSpec &t) { return t.truncate != "ignore"; });
    if (anyTruncateIgnored && anyTruncateApplied)
        out.notExpressed.push_back("truncate: ignore on some tables only: Debezium skips truncates per connector "
                                   "(skipped.operations); they are passed on here");

    if (src->kind == EndpointKind::Postgres) {
        const auto fields = parsePgDsn(src->dsn);
        config["connector.class"] = "io.debezium.connector.postgresql.PostgresConnector";
        config["database.hostname"] = field(fields, "host", field(fields, "hostaddr", "localhost"));
        config["database.port"] = field(fields, "port", "5432");
        config["database.user"] = field(fields, "user", "");
        config["database.dbname"] = field(fields, "dbname", field(fields, "user", ""));
        config["plugin.name"] = "pgoutput";
        config["slot.name"] = "debezium_" + p->name; // slot-safe, as the engine's driftless_<name>
        config["publication.name"] = p->publicationName();
        // The pipeline's publication when the engine made it; Debezium makes one of the listed
        // tables when it is missing.
        config["publication.autocreate.mode"] = "filtered";
        config["skipped.operations"] = anyTruncateApplied ? "none" : "t";
        // The engine's own default off this machine (core/db/pgtls.h): the connector should not
        // trust the network more than the engine did. Judged by the DSN alone, since the
        // connector runs elsewhere with an environment of its own.
        std::string sslmode = field(fields, "sslmode", "");
        if (sslmode.empty() && !isLoopbackHost(config["database.hostname"].get<std::string>()))
            sslmode = "verify-full";
        if (!sslmode.empty())
            config["database.sslmode"] = sslmode;
        if (const std::string ca = field(fields, "sslrootcert", ""); !ca.empty())
            config["database.sslrootcert"] = ca;
        if (p->heartbeat) {
            config["heartbeat.interval.ms"] = std::to_string(p->heartbeat->count());
            config["heartbeat.action.query"] = "SELECT pg_logical_emit_message(true, 'debezium', 'heartbeat')";
        }
        if (src->slotGuard)
            out.notExpressed.push_back("slot_guard on " + src->name +
                                       ": Debezium has no slot guard; bound the slot with the server's "
                                       "max_slot_wal_keep_size and alert on pg_replication_slots");
        out.notExpressed.push_back("slot " + config["slot.name"].get<std::string>() +
                                   ": a new slot, beside the engine's " + p->slotName() +
                                   "; drop the engine's (driftless-cli resnapshot, or pg_drop_replication_slot) "
                                   "once the connector has taken over, or it keeps WAL");
    } else if (src->kind == EndpointKind::Mysql) {
        const auto dsn = MysqlDsn::parse(src->dsn);
        config["connector.class"] = "io.debezium.connector.mysql.MySqlConnector";
        config["database.hostname"] = dsn.host;
        config["database.port"] = std::to_string(dsn.port);
        config["database.user"] = dsn.user;
        // Another replica id than the engine's, so both can read the binlog during a hand-over.
        config["database.server.id"] = std::to_string(binlogServerIdFor(p->name) ^ 1u);
        if (!dsn.database.empty())
            config["database.include.list"] = regexLiteral(dsn.database);
        config["schema.history.internal.kafka.topic"] = "schema-changes." + topicSafe(p->name);
        config["schema.history.internal.kafka.bootstrap.servers"] = options.bootstrapServers;
        config["skipped.operations"] = anyTruncateApplied ? "none" : "t";
        if (options.bootstrapServers.empty())
            out.notExpressed.push_back("schema.history.internal.kafka.bootstrap.servers: the Kafka cluster the "
                                       "connector keeps its schema history in (--bootstrap-servers HOST:PORT)");
    } else {
        throw ConfigError("pipeline '" + pipeline + "' reads a SQLite file, which Debezium cannot capture");
    }
    out.notExpressed.push_back("database.password: never exported; add it, or a config provider reference "
                               "(e.g. ${file:/path/secrets.properties:password})");
    if (p->reconcileEvery)
        out.notExpressed.push_back("reconcile every " + std::to_string(p->reconcileEvery->count() / 1000) +
                                   " s: Debezium does not compare source and target; keep running "
                                   "driftless-cli reconcile against the sink");
    out.connector = {{"name", "driftless-" + topicSafe(p->name)}, {"config", std::move(config)}};
    return out;
}

} // namespace driftless::core
