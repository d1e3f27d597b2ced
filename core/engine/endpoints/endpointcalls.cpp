#include "core/engine/endpoints/endpointcalls.h"

#include "core/base/jsonfields.h"
#include "core/engine/endpoints/endpointtls.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <utility>

namespace driftless::core {

using json = nlohmann::json;

namespace {

using jsonfields::flag;
using jsonfields::integer;
using jsonfields::number;
using jsonfields::text;
using jsonfields::texts;

std::optional<std::string> optionalText(const json &j, const char *k)
{
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? std::optional<std::string>(it->get<std::string>()) : std::nullopt;
}

json optionalJson(const std::optional<std::string> &v)
{
    return v ? json(*v) : json(nullptr);
}

const json &object(const json &j, const char *what)
{
    if (!j.is_object())
        throw Error(ErrorKind::Permanent, std::string("the engine's answer is not ") + what);
    return j;
}

const json &member(const json &j, const char *k)
{
    static const json empty = json::object();
    auto it = j.find(k);
    return it != j.end() && it->is_object() ? *it : empty;
}

} // namespace

bool EndpointProbe::ok() const
{
    switch (kind) {
    case EndpointKind::Postgres:
        return postgres.connected && postgres.error.empty();
    case EndpointKind::Mysql:
        return mysql.connected;
    case EndpointKind::Sqlite:
        return sqlite.ok;
    }
    return false;
}

EndpointProbe probeEndpoint(const Endpoint &e, const std::optional<std::string> &password, int timeoutSeconds)
{
    EndpointProbe p;
    p.kind = e.kind;
    switch (e.kind) {
    case EndpointKind::Sqlite:
        p.sqlite = probeSqlite(e.path);
        break;
    case EndpointKind::Mysql:
    case EndpointKind::Postgres: {
        std::string dsn;
        try {
            dsn = reachableDsn(e);
        } catch (const Error &err) {
            // No tunnel: the probe says why (an untrusted host key names the trust-host command).
            auto fill = [&](auto &probe) {
                probe.error = err.what();
                probe.code = err.code();
                probe.hint = err.hint();
                probe.transient = err.isTransient();
            };
            if (e.kind == EndpointKind::Mysql)
                fill(p.mysql);
            else
                fill(p.postgres);
            break;
        }
        if (e.kind == EndpointKind::Mysql)
            p.mysql = probeMysql(dsn, password);
        else
            p.postgres = probePostgres(dsn, password, timeoutSeconds);
        break;
    }
    }
    return p;
}

json endpointJsonValue(const Endpoint &e)
{
    json j = {{"name", e.name}, {"kind", std::string(toString(e.kind))}, {"dsn", e.dsn}, {"path", e.path}};
    if (e.ssh) {
        json s = {{"host", e.ssh->host}, {"port", e.ssh->port}, {"user", e.ssh->user}};
        if (e.ssh->identityFile)
            s["identity_file"] = *e.ssh->identityFile;
        if (e.ssh->jump)
            s["jump"] = *e.ssh->jump;
        j["ssh"] = std::move(s);
    }
    return j;
}

Endpoint endpointFromJson(const json &j)
{
    if (!j.is_object())
        throw ConfigError("\"endpoint\" takes an object: {\"kind\": \"postgres\", \"dsn\": \"...\"}, or a SQLite "
                          "{\"kind\": \"sqlite\", \"path\": \"...\"}");
    Endpoint e;
    e.name = text(j, "name");
    if (e.name.empty())
        e.name = "endpoint";
    const std::string kind = text(j, "kind");
    auto k = endpointKindFromString(kind);
    if (!k)
        throw ConfigError("unknown endpoint kind '" + kind + "': use postgres, mysql or sqlite");
    e.kind = *k;
    e.dsn = text(j, "dsn");
    e.path = text(j, "path");
    if (j.contains("ssh") && j["ssh"].is_object()) {
        const auto &s = j["ssh"];
        SshTunnelSpec t;
        t.host = text(s, "host");
        t.port = static_cast<int>(integer(s, "port").value_or(22));
        t.user = text(s, "user");
        if (!text(s, "identity_file").empty())
            t.identityFile = text(s, "identity_file");
        if (!text(s, "jump").empty())
            t.jump = text(s, "jump");
        e.ssh = t;
    }
    if (auto problem = endpointProblem(e))
        throw ConfigError(*problem);
    return e;
}

json probeJsonValue(const EndpointProbe &p)
{
    json j = {{"kind", std::string(toString(p.kind))}, {"ok", p.ok()}};
    switch (p.kind) {
    case EndpointKind::Postgres: {
        const auto &pg = p.postgres;
        j["postgres"] = {{"connected", pg.connected},
                         {"server", pg.server},
                         {"server_version", pg.serverVersion},
                         {"server_version_num", pg.serverVersionNum},
                         {"wal_level", pg.walLevel},
                         {"user", pg.user},
                         {"superuser", pg.superuser},
                         {"replication_role", pg.replicationRole},
                         {"can_create", pg.canCreate},
                         {"tables", pg.tables},
                         {"selectable_tables", pg.selectableTables},
                         {"not_selectable", pg.notSelectable},
                         {"tls", tlsJsonValue(pg.tls)},
                         {"loopback", pg.loopback},
                         {"tls_chosen_by", pg.tlsChosenBy},
                         {"tls_warning", pg.tlsWarning},
                         {"tls_fix", pg.tlsFix},
                         {"error", pg.error},
                         {"code", pg.code},
                         {"hint", pg.hint},
                         {"transient", pg.transient}};
        break;
    }
    case EndpointKind::Mysql: {
        const auto &my = p.mysql;
        json binlog = json::array();
        for (const auto &b : my.binlog)
            binlog.push_back({{"setting", b.setting}, {"found", b.found}, {"fix", b.fix}});
        j["mysql"] = {{"connected", my.connected},
                      {"server", my.server},
                      {"version", my.version},
                      {"mariadb", my.mariadb},
                      {"user", my.user},
                      {"server_id", my.serverId},
                      {"binlog", binlog},
                      {"retention", my.retention},
                      {"can_replicate", my.canReplicate},
                      {"can_read_position", my.canReadPosition},
                      {"tables", my.tables},
                      {"tls", tlsJsonValue(my.tls)},
                      {"loopback", my.loopback},
                      {"tls_chosen_by", my.tlsChosenBy},
                      {"tls_warning", my.tlsWarning},
                      {"tls_fix", my.tlsFix},
                      {"error", my.error},
                      {"code", my.code},
                      {"hint", my.hint},
                      {"transient", my.transient}};
        break;
    }
    case EndpointKind::Sqlite: {
        const auto &s = p.sqlite;
        j["sqlite"] = {{"ok", s.ok},         {"exists", s.exists}, {"sqlite_version", s.sqliteVersion},
                       {"tables", s.tables}, {"error", s.error},   {"hint", s.hint}};
        break;
    }
    }
    return j;
}

EndpointProbe probeFromJson(const json &in)
{
    const json &j = object(in, "a probe");
    EndpointProbe p;
    auto kind = endpointKindFromString(text(j, "kind"));
    if (!kind)
        throw Error(ErrorKind::Permanent, "the engine's probe names no endpoint kind");
    p.kind = *kind;
    if (const json &pg = member(j, "postgres"); !pg.empty()) {
        auto &o = p.postgres;
        o.connected = flag(pg, "connected");
        o.server = text(pg, "server");
        o.serverVersion = text(pg, "server_version");
        o.serverVersionNum = number<int>(pg, "server_version_num").value_or(0);
        o.walLevel = text(pg, "wal_level");
        o.user = text(pg, "user");
        o.superuser = flag(pg, "superuser");
        o.replicationRole = flag(pg, "replication_role");
        o.canCreate = flag(pg, "can_create");
        o.tables = number<int>(pg, "tables").value_or(0);
        o.selectableTables = number<int>(pg, "selectable_tables").value_or(0);
        o.notSelectable = texts(pg, "not_selectable");
        o.tls = tlsFromJson(member(pg, "tls"));
        o.loopback = flag(pg, "loopback");
        o.tlsChosenBy = text(pg, "tls_chosen_by");
        o.tlsWarning = text(pg, "tls_warning");
        o.tlsFix = text(pg, "tls_fix");
        o.error = text(pg, "error");
        o.code = text(pg, "code");
        o.hint = text(pg, "hint");
        o.transient = flag(pg, "transient");
    }
    if (const json &my = member(j, "mysql"); !my.empty()) {
        auto &o = p.mysql;
        o.connected = flag(my, "connected");
        o.server = text(my, "server");
        o.version = text(my, "version");
        o.mariadb = flag(my, "mariadb");
        o.user = text(my, "user");
        o.serverId = text(my, "server_id");
        if (auto it = my.find("binlog"); it != my.end() && it->is_array())
            for (const auto &b : *it)
                if (b.is_object())
                    o.binlog.push_back({text(b, "setting"), text(b, "found"), text(b, "fix")});
        o.retention = text(my, "retention");
        o.canReplicate = flag(my, "can_replicate");
        o.canReadPosition = flag(my, "can_read_position");
        o.tables = number<int>(my, "tables").value_or(0);
        o.tls = tlsFromJson(member(my, "tls"));
        o.loopback = flag(my, "loopback");
        o.tlsChosenBy = text(my, "tls_chosen_by");
        o.tlsWarning = text(my, "tls_warning");
        o.tlsFix = text(my, "tls_fix");
        o.error = text(my, "error");
        o.code = text(my, "code");
        o.hint = text(my, "hint");
        o.transient = flag(my, "transient");
    }
    if (const json &s = member(j, "sqlite"); !s.empty()) {
        auto &o = p.sqlite;
        o.ok = flag(s, "ok");
        o.exists = flag(s, "exists");
        o.sqliteVersion = text(s, "sqlite_version");
        o.tables = number<int>(s, "tables").value_or(0);
        o.error = text(s, "error");
        o.hint = text(s, "hint");
    }
    return p;
}

json discoveryJsonValue(const SourceDiscovery &d)
{
    json tables = json::array();
    for (const auto &t : d.tables) {
        json columns = json::array();
        for (const auto &c : t.columns)
            columns.push_back(
                {{"name", c.name}, {"type", c.type}, {"category", std::string(1, c.category)}, {"array", c.isArray}});
        tables.push_back({{"schema", t.table.schema},
                          {"name", t.table.name},
                          {"estimated_rows", t.estimatedRows},
                          {"analyzed", t.analyzed},
                          {"total_bytes", t.totalBytes},
                          {"primary_key", t.primaryKey},
                          {"cursor_candidates", t.cursorCandidates},
                          {"inserts", t.inserts},
                          {"updates", t.updates},
                          {"deletes", t.deletes},
                          {"writes_known", t.writesKnown},
                          {"readable", t.readable},
                          {"cdc_refused", optionalJson(t.cdcRefused)},
                          {"columns", columns}});
    }
    return {{"ok", d.ok},
            {"error", d.error},
            {"abilities",
             {{"logical_wal", d.abilities.logicalWal},
              {"can_replicate", d.abilities.canReplicate},
              {"cdc_refused", optionalJson(d.abilities.cdcRefused)}}},
            {"tables", tables}};
}

SourceDiscovery discoveryFromJson(const json &in)
{
    const json &j = object(in, "a discovery");
    SourceDiscovery d;
    d.ok = flag(j, "ok");
    d.error = text(j, "error");
    const json &a = member(j, "abilities");
    d.abilities.logicalWal = flag(a, "logical_wal");
    d.abilities.canReplicate = flag(a, "can_replicate");
    d.abilities.cdcRefused = optionalText(a, "cdc_refused");
    if (auto it = j.find("tables"); it != j.end() && it->is_array())
        for (const auto &t : *it) {
            if (!t.is_object())
                continue;
            DiscoveredTable o;
            o.table = {text(t, "schema"), text(t, "name")};
            o.estimatedRows = number<double>(t, "estimated_rows").value_or(0);
            o.analyzed = flag(t, "analyzed");
            o.totalBytes = number<std::int64_t>(t, "total_bytes").value_or(0);
            o.primaryKey = texts(t, "primary_key");
            o.cursorCandidates = texts(t, "cursor_candidates");
            o.inserts = number<std::int64_t>(t, "inserts").value_or(0);
            o.updates = number<std::int64_t>(t, "updates").value_or(0);
            o.deletes = number<std::int64_t>(t, "deletes").value_or(0);
            o.writesKnown = flag(t, "writes_known");
            o.readable = flag(t, "readable");
            o.cdcRefused = optionalText(t, "cdc_refused");
            if (auto cs = t.find("columns"); cs != t.end() && cs->is_array())
                for (const auto &c : *cs) {
                    if (!c.is_object())
                        continue;
                    const std::string category = text(c, "category");
                    o.columns.push_back(
                        {text(c, "name"), text(c, "type"), category.empty() ? 'U' : category[0], flag(c, "array")});
                }
            d.tables.push_back(std::move(o));
        }
    return d;
}

} // namespace driftless::core
