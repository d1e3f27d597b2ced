#include "core/config/workspacefile.h"

#include "core/model/conflictpolicy.h"
#include "core/model/dsn.h"
#include "core/model/error.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace driftless::core {

namespace fs = std::filesystem;

namespace {
bool allOf(const std::string &s, bool (*ok)(char))
{
    for (char c : s)
        if (!ok(c))
            return false;
    return true;
}
bool lowerWord(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}
bool endpointChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
}

} // namespace

bool isValidPipelineName(const std::string &name)
{
    return !name.empty() && name.size() <= 53 && name[0] >= 'a' && name[0] <= 'z' && allOf(name, lowerWord);
}

namespace {

struct Ctx {
    std::string file;
    std::string baseDir;
};

int lineOf(const YAML::Node &n)
{
    return n.Mark().is_null() ? 0 : n.Mark().line + 1;
}

[[noreturn]] void fail(const Ctx &c, const YAML::Node &n, const std::string &field, const std::string &msg)
{
    throw ConfigError(msg, c.file, lineOf(n), field);
}

void checkKeys(const Ctx &c, const YAML::Node &map, const std::string &field, const std::set<std::string> &allowed)
{
    for (auto it = map.begin(); it != map.end(); ++it) {
        auto key = it->first.as<std::string>();
        if (!allowed.count(key)) {
            std::string list;
            for (auto &a : allowed)
                list += (list.empty() ? "" : ", ") + a;
            fail(c, it->first, field.empty() ? key : field + "." + key, "unknown key; expected one of: " + list);
        }
    }
}

std::string scalar(const Ctx &c, const YAML::Node &n, const std::string &field)
{
    if (!n.IsScalar())
        fail(c, n, field, "expected a single value");
    auto s = n.as<std::string>();
    if (s.empty())
        fail(c, n, field, "must not be empty");
    return s;
}

Millis duration(const Ctx &c, const YAML::Node &n, const std::string &field, Millis min)
{
    auto s = scalar(c, n, field);
    auto d = parseDuration(s);
    if (!d)
        fail(c, n, field, "'" + s + "' is not a duration; write e.g. 500ms, 30s, 10m, 1h or 1d");
    if (*d < min)
        fail(c, n, field, "must be at least " + formatDuration(min));
    return *d;
}

/// `adopt: true | false`.
bool adoptFlag(const Ctx &c, const YAML::Node &n, const std::string &field)
{
    const std::string v = scalar(c, n, field);
    if (v == "true")
        return true;
    if (v == "false")
        return false;
    fail(c, n, field,
         "'" + v + "': true (take the target table that exists: compare its rows and copy only what differs) or false");
}

void checkDsnHasNoPassword(const Ctx &c, const YAML::Node &n, const std::string &field, const std::string &dsn)
{
    std::vector<std::pair<std::string, std::string>> opts;
    try {
        opts = parsePgDsn(dsn);
    } catch (const ConfigError &e) {
        fail(c, n, field, e.what());
    }
    for (auto &[k, v] : opts) {
        if (k == "password")
            fail(c, n, field,
                 "the dsn contains a password; workspace files never hold secrets: remove it and use ~/.pgpass, "
                 "PGPASSWORD, a service file or the keychain");
        if (k == "replication")
            fail(c, n, field, "remove 'replication' from the dsn; the engine opens replication connections itself");
    }
}

SshTunnelSpec parseSsh(const Ctx &c, const YAML::Node &n, const std::string &field, EndpointKind kind)
{
    if (kind == EndpointKind::Sqlite)
        fail(c, n, field, "SQLite endpoints are files on this machine and take no SSH tunnel; remove it");
    if (!n.IsMap())
        fail(c, n, field, "expected a map such as { host: bastion.example.com, user: driftless }");
    checkKeys(c, n, field, {"host", "port", "user", "identity_file", "jump"});
    SshTunnelSpec t;
    if (!n["host"])
        fail(c, n, field + ".host", "missing; the SSH server to tunnel through");
    t.host = scalar(c, n["host"], field + ".host");
    if (t.host.front() == '-' || t.host.find_first_of(" \t@") != std::string::npos)
        fail(c, n["host"], field + ".host", "'" + t.host + "' is not a host name; put the login in 'user'");
    if (n["port"]) {
        const auto text = scalar(c, n["port"], field + ".port");
        int port = 0;
        try {
            size_t used = 0;
            port = std::stoi(text, &used);
            if (used != text.size())
                port = 0;
        } catch (...) {
            port = 0;
        }
        if (port < 1 || port > 65535)
            fail(c, n["port"], field + ".port", "'" + text + "' is not a port; expected a number from 1 to 65535");
        t.port = port;
    }
    if (!n["user"])
        fail(c, n, field + ".user", "missing; the login on the SSH server");
    t.user = scalar(c, n["user"], field + ".user");
    if (t.user.front() == '-' || t.user.find_first_of(" \t@") != std::string::npos)
        fail(c, n["user"], field + ".user", "'" + t.user + "' is not a login name");
    if (n["identity_file"]) {
        fs::path p = scalar(c, n["identity_file"], field + ".identity_file");
        // `~/` stays as written (expanded when the tunnel starts); a relative path is the file's folder's.
        if (p.is_relative() && p.string().rfind("~/", 0) != 0)
            p = (fs::path(c.baseDir) / p).lexically_normal();
        t.identityFile = p.string();
    }
    if (n["jump"]) {
        t.jump = scalar(c, n["jump"], field + ".jump");
        if (t.jump->front() == '-' || t.jump->find_first_of(" \t") != std::string::npos)
            fail(c, n["jump"], field + ".jump", "'" + *t.jump + "' is not a jump host; write [user@]host[:port]");
    }
    return t;
}

Endpoint parseEndpoint(const Ctx &c, const std::string &name, const YAML::Node &n)
{
    std::string field = "endpoints." + name;
    if (name.empty() || name.size() > 63 || name[0] == '.' || name[0] == '-' || !allOf(name, endpointChar))
        fail(c, n, field, "endpoint names use letters, digits, '_', '.', '-' (at most 63)");
    if (!n.IsMap())
        fail(c, n, field, "expected a map such as { kind: postgres, dsn: \"...\" }");
    checkKeys(c, n, field, {"kind", "dsn", "path", "slot_guard", "ssh"});
    Endpoint e;
    e.name = name;
    if (!n["kind"])
        fail(c, n, field + ".kind", "missing; one of postgres, mysql, sqlite");
    auto kindText = scalar(c, n["kind"], field + ".kind");
    auto kind = endpointKindFromString(kindText);
    if (!kind)
        fail(c, n["kind"], field + ".kind", "'" + kindText + "' is not a kind; one of postgres, mysql, sqlite");
    e.kind = *kind;
    if (e.kind == EndpointKind::Sqlite) {
        if (n["dsn"])
            fail(c, n["dsn"], field + ".dsn", "sqlite endpoints take 'path', not 'dsn'");
        if (!n["path"])
            fail(c, n, field + ".path", "missing; the SQLite database file");
        fs::path p = scalar(c, n["path"], field + ".path");
        if (p.is_relative())
            p = fs::path(c.baseDir) / p;
        e.path = p.lexically_normal().string();
    } else {
        if (n["path"])
            fail(c, n["path"], field + ".path", "only sqlite endpoints take 'path'; use 'dsn'");
        if (!n["dsn"])
            fail(c, n, field + ".dsn", "missing; a libpq connection string or URI");
        e.dsn = scalar(c, n["dsn"], field + ".dsn");
        if (e.kind == EndpointKind::Postgres) {
            checkDsnHasNoPassword(c, n["dsn"], field + ".dsn", e.dsn);
        } else {
            try {
                auto dsn = MysqlDsn::parse(e.dsn);
                if (dsn.password)
                    fail(c, n["dsn"], field + ".dsn",
                         "the dsn contains a password; use ~/.my.cnf, MYSQL_PWD or the keychain");
            } catch (const ConfigError &err) {
                if (!err.file().empty())
                    throw;
                fail(c, n["dsn"], field + ".dsn", err.what());
            }
        }
    }
    if (auto g = n["slot_guard"]) {
        const std::string gf = field + ".slot_guard";
        if (e.kind != EndpointKind::Postgres)
            fail(c, g, gf, "slot guards watch Postgres replication slots; remove it");
        if (!g.IsMap())
            fail(c, g, gf, "expected a map such as { max_retained: 10GB, action: fallback }");
        checkKeys(c, g, gf, {"max_retained", "action", "warn_retained", "min_safe_wal", "inactive_alert"});
        SlotGuard sg;
        auto size = [&](const char *key) -> std::int64_t {
            auto text = scalar(c, g[key], gf + "." + key);
            auto v = parseByteSize(text);
            if (!v || *v <= 0)
                fail(c, g[key], gf + "." + key, "'" + text + "' is not a size; write e.g. 512MB, 10GB or 1TB");
            return *v;
        };
        if (!g["max_retained"])
            fail(c, g, gf + ".max_retained", "missing; the most WAL a slot may hold, e.g. 10GB");
        sg.maxRetained = size("max_retained");
        if (g["warn_retained"])
            sg.warnRetained = size("warn_retained");
        if (g["min_safe_wal"])
            sg.minSafeWal = size("min_safe_wal");
        if (g["inactive_alert"])
            sg.inactiveAlert = duration(c, g["inactive_alert"], gf + ".inactive_alert", Millis(1000));
        if (g["action"]) {
            auto a = scalar(c, g["action"], gf + ".action");
            if (a == "fallback")
                sg.action = SlotGuard::Action::Fallback;
            else if (a == "alert")
                sg.action = SlotGuard::Action::Alert;
            else
                fail(c, g["action"], gf + ".action", "'" + a + "' is not an action; one of fallback, alert");
        } else {
            fail(c, g, gf + ".action", "missing; fallback (drop the slot, switch to cursor sync) or alert");
        }
        if (sg.warnRetained && *sg.warnRetained > sg.maxRetained)
            fail(c, g["warn_retained"], gf + ".warn_retained", "must not be above max_retained");
        e.slotGuard = sg;
    }
    if (auto s = n["ssh"])
        e.ssh = parseSsh(c, s, field + ".ssh", e.kind);
    return e;
}

/// `columns: { exclude: [..] | include: [..], rename: { src: dst }, mask: { col: {...} } }`.
ColumnMapping parseColumns(const Ctx &c, const YAML::Node &n, const std::string &field)
{
    if (!n.IsMap())
        fail(c, n, field, "expected a map such as { exclude: [internal_notes], rename: { email: email_address } }");
    checkKeys(c, n, field, {"exclude", "include", "rename", "mask"});
    if (n["exclude"] && n["include"])
        fail(c, n["include"], field + ".include",
             "exclude and include together; list the columns to leave out (exclude) or the ones to keep (include)");
    ColumnMapping m;
    auto spotOf = [&](const YAML::Node &at, const std::string &f) { return MappingSpot{c.file, lineOf(at), f}; };
    auto names = [&](const char *key, std::vector<std::string> &out) {
        const YAML::Node list = n[key];
        const std::string f = field + "." + key;
        if (!list.IsSequence())
            fail(c, list, f, "expected a list of column names such as [internal_notes]");
        std::set<std::string> seen;
        for (size_t i = 0; i < list.size(); ++i) {
            auto name = scalar(c, list[i], f + "[" + std::to_string(i) + "]");
            if (!seen.insert(name).second)
                fail(c, list[i], f, "column " + name + " is listed twice");
            out.push_back(name);
            m.spots[std::string(key) + ":" + name] = spotOf(list[i], f + "[" + name + "]");
        }
    };
    if (n["exclude"])
        names("exclude", m.exclude);
    if (n["include"]) {
        names("include", m.include);
        m.hasInclude = true;
        if (m.include.empty())
            fail(c, n["include"], field + ".include", "lists no column; a table needs at least its key");
    }
    if (const YAML::Node r = n["rename"]) {
        if (!r.IsMap())
            fail(c, r, field + ".rename",
                 "expected a map of source column to target name, e.g. { email: email_address }");
        for (auto it = r.begin(); it != r.end(); ++it) {
            auto from = it->first.as<std::string>();
            const std::string f = field + ".rename." + from;
            auto to = scalar(c, it->second, f);
            m.rename.emplace_back(from, to);
            m.spots["rename:" + from] = spotOf(it->first, f);
        }
    }
    if (const YAML::Node mk = n["mask"]) {
        if (!mk.IsMap())
            fail(c, mk, field + ".mask", "expected a map of column to mask, e.g. { phone: { keep_last: 4 } }");
        for (auto it = mk.begin(); it != mk.end(); ++it) {
            auto col = it->first.as<std::string>();
            const std::string f = field + ".mask." + col;
            const YAML::Node v = it->second;
            const char *shapes = "one of { null: true }, { truncate: N }, { keep_last: N }, "
                                 "{ hash: hmac-sha256, key: keychain | file:PATH }";
            if (!v.IsMap() || v.size() == 0)
                fail(c, v, f, std::string("expected ") + shapes);
            checkKeys(c, v, f, {"null", "truncate", "keep_last", "hash", "key"});
            ColumnMask mask;
            // By key text: `null` as a key is YAML's null, which v["null"] does not find.
            std::map<std::string, YAML::Node> e;
            for (auto kv = v.begin(); kv != v.end(); ++kv)
                e[kv->first.as<std::string>()] = kv->second;
            auto has = [&](const char *key) { return e.count(key) > 0; };
            auto count = [&](const char *key) {
                const auto text = scalar(c, e[key], f + "." + key);
                int k = 0;
                try {
                    size_t used = 0;
                    k = std::stoi(text, &used);
                    if (used != text.size())
                        k = -1;
                } catch (...) {
                    k = -1;
                }
                if (k < 0 || k > 1'000'000)
                    fail(c, e[key], f + "." + key, "'" + text + "': expected a whole number from 0 to 1000000");
                return k;
            };
            const int kinds =
                (has("null") ? 1 : 0) + (has("truncate") ? 1 : 0) + (has("keep_last") ? 1 : 0) + (has("hash") ? 1 : 0);
            if (kinds != 1)
                fail(c, v, f, std::string("expected exactly one mask: ") + shapes);
            if (has("null")) {
                if (scalar(c, e["null"], f + ".null") != "true")
                    fail(c, e["null"], f + ".null", "write { null: true } to send NULL, or remove the mask");
                mask.kind = ColumnMask::Kind::Null;
            } else if (has("truncate")) {
                mask.kind = ColumnMask::Kind::Truncate;
                mask.count = count("truncate");
            } else if (has("keep_last")) {
                mask.kind = ColumnMask::Kind::KeepLast;
                mask.count = count("keep_last");
            } else {
                const auto algo = scalar(c, e["hash"], f + ".hash");
                if (algo != "hmac-sha256")
                    fail(c, e["hash"], f + ".hash", "'" + algo + "': the one hash is hmac-sha256");
                mask.kind = ColumnMask::Kind::Hash;
                if (!has("key"))
                    fail(c, v, f + ".key",
                         "missing; where the HMAC key is: keychain, or file:PATH (the key itself never goes in the "
                         "file)");
                mask.key = scalar(c, e["key"], f + ".key");
                if (mask.key != "keychain" && (mask.key.rfind("file:", 0) != 0 || mask.key.size() == 5))
                    fail(c, e["key"], f + ".key",
                         "'" + mask.key + "': expected keychain or file:PATH (the key itself never goes in the file)");
                if (mask.key.rfind("file:", 0) == 0) {
                    fs::path p = mask.key.substr(5);
                    if (p.is_relative() && p.string().rfind("~/", 0) != 0)
                        p = (fs::path(c.baseDir) / p).lexically_normal();
                    mask.key = "file:" + p.string();
                }
            }
            if (mask.kind != ColumnMask::Kind::Hash && has("key"))
                fail(c, e["key"], f + ".key", "only a hash mask takes a key");
            m.mask.emplace_back(col, mask);
            m.spots["mask:" + col] = spotOf(it->first, f);
        }
    }
    return m;
}

/// `{ column: NAME | clock: commit_time, max_skew: DURATION }`, the clock of newer_wins.
NewerWins parseNewerWins(const Ctx &c, const YAML::Node &n, const std::string &field)
{
    const std::string expected = "expected { column: <a timestamp column> } or { clock: commit_time }, with an "
                                 "optional max_skew (default 5s)";
    if (!n.IsMap())
        fail(c, n, field, "newer_wins needs a clock: " + expected);
    checkKeys(c, n, field, {"column", "clock", "max_skew"});
    NewerWins w;
    if (n["column"] && n["clock"])
        fail(c, n["clock"], field + ".clock", "give column or clock, not both");
    if (n["column"]) {
        w.column = scalar(c, n["column"], field + ".column");
    } else if (n["clock"]) {
        const std::string v = scalar(c, n["clock"], field + ".clock");
        if (v != "commit_time")
            fail(c, n["clock"], field + ".clock",
                 "'" + v +
                     "': expected commit_time (the transactions' commit times; needs "
                     "track_commit_timestamp = on on both servers)");
        w.clock = NewerWins::Clock::CommitTime;
    } else {
        fail(c, n, field, "newer_wins needs a clock: " + expected);
    }
    if (n["max_skew"])
        w.maxSkewMs = duration(c, n["max_skew"], field + ".max_skew", Millis{0}).count();
    return w;
}

/// `conflicts:` (two-way): a policy name, `{ newer_wins: { column: C | clock: commit_time,
/// max_skew: D } }`, `{ policy: merge_columns, on_overlap: X }` or `{ merge_columns: {
/// on_overlap: X } }`, where X is a policy name or `{ newer_wins: {...} }`; returns
/// ConflictPolicy::text().
std::string parseConflicts(const Ctx &c, const YAML::Node &n, const std::string &field)
{
    const std::string expected = "expected source_wins, target_wins, merge_columns (the default), manual or "
                                 "{ newer_wins: { column: updated_at } }, or "
                                 "{ policy: merge_columns, on_overlap: source_wins | target_wins | manual | "
                                 "{ newer_wins: {...} } }";
    auto needsClock = [&](const YAML::Node &at, const std::string &f) {
        fail(c, at, f,
             "newer_wins needs a clock: write { newer_wins: { column: <a timestamp column> } } or "
             "{ newer_wins: { clock: commit_time } } (optional max_skew, default 5s)");
    };
    ConflictPolicy p;
    std::optional<YAML::Node> overlap;
    std::string overlapField;
    if (n.IsScalar()) {
        const std::string v = scalar(c, n, field);
        auto r = ConflictPolicy::ruleFrom(v);
        if (r == ConflictPolicy::Rule::NewerWins)
            needsClock(n, field);
        if (!r)
            fail(c, n, field, "'" + v + "': " + expected);
        p.rule = *r;
        return p.text();
    }
    if (!n.IsMap())
        fail(c, n, field, expected);
    if (n["newer_wins"]) {
        checkKeys(c, n, field, {"newer_wins"});
        p.rule = ConflictPolicy::Rule::NewerWins;
        p.newer = parseNewerWins(c, n["newer_wins"], field + ".newer_wins");
        return p.text();
    }
    if (n["merge_columns"]) {
        checkKeys(c, n, field, {"merge_columns"});
        const YAML::Node m = n["merge_columns"];
        if (!m.IsNull()) {
            if (!m.IsMap())
                fail(c, m, field + ".merge_columns",
                     "expected { on_overlap: source_wins | target_wins | manual | { newer_wins: {...} } }");
            checkKeys(c, m, field + ".merge_columns", {"on_overlap"});
            if (m["on_overlap"]) {
                overlap = m["on_overlap"];
                overlapField = field + ".merge_columns.on_overlap";
            }
        }
    } else {
        checkKeys(c, n, field, {"policy", "on_overlap"});
        if (!n["policy"])
            fail(c, n, field + ".policy", "missing; " + expected);
        const std::string v = scalar(c, n["policy"], field + ".policy");
        auto r = ConflictPolicy::ruleFrom(v);
        if (r == ConflictPolicy::Rule::NewerWins)
            needsClock(n["policy"], field + ".policy");
        if (!r)
            fail(c, n["policy"], field + ".policy", "'" + v + "': " + expected);
        p.rule = *r;
        if (n["on_overlap"]) {
            overlap = n["on_overlap"];
            overlapField = field + ".on_overlap";
            if (p.rule != ConflictPolicy::Rule::MergeColumns)
                fail(c, *overlap, field + ".on_overlap", "on_overlap goes with policy merge_columns only");
        }
    }
    if (overlap) {
        if (overlap->IsMap() && (*overlap)["newer_wins"]) {
            checkKeys(c, *overlap, overlapField, {"newer_wins"});
            p.onOverlap = ConflictPolicy::Rule::NewerWins;
            p.newer = parseNewerWins(c, (*overlap)["newer_wins"], overlapField + ".newer_wins");
            return p.text();
        }
        const std::string v = scalar(c, *overlap, field + ".on_overlap");
        auto r = ConflictPolicy::ruleFrom(v);
        if (r == ConflictPolicy::Rule::NewerWins)
            needsClock(*overlap, overlapField);
        if (!r || *r == ConflictPolicy::Rule::MergeColumns)
            fail(c, *overlap, field + ".on_overlap",
                 "'" + v + "': expected source_wins, target_wins, manual or { newer_wins: {...} }");
        p.onOverlap = *r;
    }
    return p.text();
}

/// The policies of one `schema_changes:` map; unset ones fall back to the pipeline's (a table's)
/// or the defaults (a pipeline's).
struct SchemaChangePolicies {
    std::optional<std::string> addColumn;
    std::optional<std::string> dropColumn;
    std::optional<std::string> typeChange;
    std::optional<std::string> renameColumn;
};

/// `schema_changes: { add_column: backfill|propagate|ignore|pause, drop_column: keep|drop|pause,
/// type_change: widen|pause, rename_column: rename|pause }` on a pipeline or a table.
SchemaChangePolicies parseSchemaChanges(const Ctx &c, const YAML::Node &n, const std::string &field,
                                        const Endpoint &source)
{
    if (!n.IsMap())
        fail(c, n, field, "expected a map, e.g. { add_column: backfill, drop_column: keep, type_change: widen }");
    checkKeys(c, n, field, {"add_column", "drop_column", "type_change", "rename_column"});
    auto policy = [&](const char *key, std::initializer_list<const char *> accepted,
                      const std::string &expected) -> std::optional<std::string> {
        if (!n[key])
            return std::nullopt;
        const std::string f = field + "." + key;
        const std::string v = scalar(c, n[key], f);
        for (const char *a : accepted)
            if (v == a)
                return v;
        fail(c, n[key], f, "'" + v + "': expected " + expected);
    };
    SchemaChangePolicies p;
    p.addColumn = policy("add_column", {"backfill", "propagate", "ignore", "pause"},
                         "backfill (the default), propagate, ignore or pause");
    p.dropColumn = policy("drop_column", {"keep", "drop", "pause"}, "keep (the default), drop or pause");
    p.typeChange = policy("type_change", {"widen", "pause"}, "widen (the default) or pause");
    p.renameColumn = policy("rename_column", {"rename", "pause"}, "rename (the default) or pause");
    if (source.kind != EndpointKind::Postgres) {
        if (p.renameColumn == "rename")
            fail(c, n["rename_column"], field + ".rename_column",
                 "a MariaDB/MySQL binlog does not tell a renamed column from a dropped one and an added one, so a "
                 "possible rename pauses the table; write rename_column: pause or remove it");
    }
    return p;
}

void parseTableKeys(const Ctx &c, const std::string &field, const YAML::Node &n, const Endpoint &source, TableSpec &t,
                    bool strategyKnown);

/// `key: [a, b]` (or `key: a`): the table's declared key, each column once.
std::vector<std::string> parseKeyColumns(const Ctx &c, const YAML::Node &n, const std::string &field)
{
    std::vector<std::string> cols;
    if (n.IsScalar())
        cols.push_back(scalar(c, n, field));
    else if (n.IsSequence())
        for (size_t i = 0; i < n.size(); ++i)
            cols.push_back(scalar(c, n[i], field + "[" + std::to_string(i) + "]"));
    if (cols.empty())
        fail(c, n, field, "expected the key's columns, e.g. key: [order_id, line_no]");
    std::set<std::string> seen;
    for (const auto &col : cols) {
        if (col.empty())
            fail(c, n, field, "a key column has no name");
        if (!seen.insert(col).second)
            fail(c, n, field, "column " + col + " is named twice in the key");
    }
    return cols;
}

TableSpec parseTable(const Ctx &c, const std::string &pfield, const YAML::Node &n, size_t index, const Endpoint &source)
{
    std::string field = pfield + ".tables[" + std::to_string(index) + "]";
    if (!n.IsMap())
        fail(c, n, field, "expected a map such as { table: public.plans, strategy: full_refresh }");
    checkKeys(c, n, field,
              {"table", "strategy", "cursor", "lookback", "page_size", "freshness_sla", "target_table", "every",
               "truncate", "fallback_cursor", "fallback_from", "columns", "where", "deletes", "conflicts",
               "schema_changes", "adopt", "key"});
    TableSpec t;
    if (!n["table"])
        fail(c, n, field + ".table", "missing; the source table as schema.name");
    auto tableText = scalar(c, n["table"], field + ".table");
    if (source.kind == EndpointKind::Mysql) {
        const std::string db = MysqlDsn::parse(source.dsn).database;
        auto ref = parseMysqlTable(tableText, db);
        if (!ref)
            fail(c, n["table"], field + ".table", "'" + tableText + "' is not a table name; write database.table");
        if (ref->schema.empty())
            fail(c, n["table"], field + ".table",
                 "'" + tableText + "' names no database and the source's dsn has none; write database.table");
        t.table = *ref;
    } else {
        try {
            t.table = TableRef::parse(tableText);
        } catch (const std::invalid_argument &e) {
            fail(c, n["table"], field + ".table", "'" + tableText + "': " + e.what());
        }
    }
    field = pfield + ".tables[" + t.table.display() + "]";
    if (!n["strategy"])
        fail(c, n, field + ".strategy", "missing; one of full_refresh, cursor, cdc");
    auto st = scalar(c, n["strategy"], field + ".strategy");
    auto strategy = strategyFromString(st);
    if (!strategy)
        fail(c, n["strategy"], field + ".strategy", "'" + st + "' is not a strategy; one of full_refresh, cursor, cdc");
    t.strategy = *strategy;
    parseTableKeys(c, field, n, source, t, true);
    if (n["key"])
        t.key = parseKeyColumns(c, n["key"], field + ".key");
    return t;
}

void parseTableKeys(const Ctx &c, const std::string &field, const YAML::Node &n, const Endpoint &source, TableSpec &t,
                    bool strategyKnown)
{
    if (n["cursor"])
        t.cursor = scalar(c, n["cursor"], field + ".cursor");
    if (n["lookback"]) {
        auto lb = scalar(c, n["lookback"], field + ".lookback");
        bool isCount = !lb.empty() && lb.find_first_not_of("0123456789") == std::string::npos;
        if (!isCount && !parseDuration(lb))
            fail(c, n["lookback"], field + ".lookback",
                 "'" + lb + "' is neither a duration (10m) nor a count (for numeric cursor columns)");
        t.lookback = lb;
    }
    if (n["page_size"]) {
        auto ps = scalar(c, n["page_size"], field + ".page_size");
        long long v = 0;
        try {
            size_t pos = 0;
            v = std::stoll(ps, &pos);
            if (pos != ps.size())
                v = -1;
        } catch (...) {
            v = -1;
        }
        if (v < 1 || v > 1'000'000)
            fail(c, n["page_size"], field + ".page_size", "expected a whole number from 1 to 1000000");
        t.pageSize = v;
    }
    if (n["freshness_sla"])
        t.freshnessSla = duration(c, n["freshness_sla"], field + ".freshness_sla", Millis(1000));
    if (n["every"])
        t.every = duration(c, n["every"], field + ".every", Millis(1000));
    if (n["target_table"])
        t.targetTable = scalar(c, n["target_table"], field + ".target_table");
    if (n["truncate"]) {
        auto v = scalar(c, n["truncate"], field + ".truncate");
        if (v != "apply" && v != "ignore")
            fail(c, n["truncate"], field + ".truncate", "'" + v + "': expected apply or ignore");
        t.truncate = v;
    }
    if (n["fallback_cursor"])
        t.fallbackCursor = scalar(c, n["fallback_cursor"], field + ".fallback_cursor");
    if (n["fallback_from"]) {
        auto v = scalar(c, n["fallback_from"], field + ".fallback_from");
        if (v != "cdc" || t.strategy != Strategy::Cursor)
            fail(c, n["fallback_from"], field + ".fallback_from",
                 "written by the slot guard on a table it switched from cdc to cursor; remove it (or run "
                 "driftless-cli promote to go back to cdc)");
        t.fallbackFrom = Strategy::Cdc;
    }
    if (n["columns"])
        t.columns = parseColumns(c, n["columns"], field + ".columns");
    if (n["where"]) {
        auto w = scalar(c, n["where"], field + ".where");
        if (w.find(';') != std::string::npos)
            fail(c, n["where"], field + ".where",
                 "a row filter is one SQL condition and must not contain ';'; write e.g. \"tenant_id = 42\"");
        t.where = w;
    }
    if (n["deletes"]) {
        auto v = scalar(c, n["deletes"], field + ".deletes");
        if (v != "hard" && v != "soft" && v != "ignore")
            fail(c, n["deletes"], field + ".deletes", "'" + v + "': expected hard, soft or ignore");
        if (v == "ignore" && strategyKnown && t.strategy == Strategy::FullRefresh)
            fail(c, n["deletes"], field + ".deletes",
                 "a full refresh replaces the whole table, so it cannot keep deleted rows unmarked; use deletes: soft "
                 "(they stay, marked in _driftless_deleted_at), strategy cursor or cdc, or deletes: hard");
        t.deletes = v;
    }
    if (n["conflicts"])
        t.conflicts = parseConflicts(c, n["conflicts"], field + ".conflicts");
    if (n["adopt"])
        t.adopt = adoptFlag(c, n["adopt"], field + ".adopt");
    if (n["schema_changes"]) {
        // Every strategy: CDC tables as the change streams in, cursor and full-refresh tables at
        // their next pass (docs/schema-changes.md).
        const auto sc = parseSchemaChanges(c, n["schema_changes"], field + ".schema_changes", source);
        t.addColumn = sc.addColumn;
        t.dropColumn = sc.dropColumn;
        t.typeChange = sc.typeChange;
        t.renameColumn = sc.renameColumn;
    }
}

/// `table_defaults: { ... }`: any per-table key but the table's name; no strategy: the recommended one.
PipelineSpec::TableDefaults parseTableDefaults(const Ctx &c, const YAML::Node &n, const std::string &field,
                                               const Endpoint &source)
{
    if (!n.IsMap())
        fail(c, n, field, "expected a map of per-table keys, e.g. { strategy: cdc, freshness_sla: 5m }");
    checkKeys(c, n, field,
              {"strategy", "cursor", "lookback", "page_size", "freshness_sla", "target_table", "every", "truncate",
               "fallback_cursor", "columns", "where", "deletes", "conflicts", "schema_changes", "adopt", "key"});
    if (n["key"])
        fail(c, n["key"], field + ".key",
             "a declared key names one table's columns; declare it on the table under tables: instead");
    if (n["target_table"])
        fail(c, n["target_table"], field + ".target_table",
             "every table a pattern picks up would get the same target table; name tables one by one under tables: "
             "to rename them");
    PipelineSpec::TableDefaults d;
    if (n["strategy"]) {
        auto st = scalar(c, n["strategy"], field + ".strategy");
        d.strategy = strategyFromString(st);
        if (!d.strategy)
            fail(c, n["strategy"], field + ".strategy",
                 "'" + st +
                     "' is not a strategy; one of full_refresh, cursor, cdc (or leave it out: each table gets "
                     "the recommended one)");
        d.keys.strategy = *d.strategy;
    }
    parseTableKeys(c, field, n, source, d.keys, d.strategy.has_value());
    return d;
}

/// `include_tables:` / `exclude_tables:`: a list of `schema.name` patterns.
std::vector<std::string> parsePatterns(const Ctx &c, const YAML::Node &n, const std::string &field)
{
    if (!n.IsSequence())
        fail(c, n, field, "expected a list of schema.name patterns, e.g. [\"public.*\", \"sales.order_*\"]");
    std::vector<std::string> out;
    for (size_t i = 0; i < n.size(); ++i) {
        const std::string at = field + "[" + std::to_string(i) + "]";
        const std::string v = scalar(c, n[i], at);
        if (!PipelineSpec::isTablePattern(v))
            fail(c, n[i], at,
                 "'" + v + "' is not a schema.name pattern; write e.g. public.* (* is any run of characters, ? one)");
        out.push_back(v);
    }
    return out;
}

/// `direction: both` (two-way) or `one_way` (the default).
void parseDirection(const Ctx &c, const YAML::Node &n, const std::string &field, PipelineSpec &p, const Endpoint &src,
                    const Endpoint &tgt)
{
    const std::string f = field + ".direction";
    const std::string d = scalar(c, n["direction"], f);
    if (d == "one_way")
        return;
    if (d != "both")
        fail(c, n["direction"], f, "'" + d + "': one of one_way (the default) or both");
    if (src.kind == EndpointKind::Sqlite || tgt.kind == EndpointKind::Sqlite)
        fail(c, n["direction"], f,
             "direction: both needs two writable Postgres or MariaDB/MySQL endpoints; remove it for a SQLite target");
    // A Postgres<->MariaDB pair: each direction marks what it writes as the side it writes does
    // (a replication origin, skip_replication) and reads as the side it reads does.
    if (p.name.size() + std::string(PipelineSpec::kReverseSuffix).size() > 53)
        fail(c, n["name"], field + ".name",
             "'" + p.name + "': a two-way pipeline's name is at most " +
                 std::to_string(53 - std::string(PipelineSpec::kReverseSuffix).size()) +
                 " characters (its reverse direction's slot adds " + PipelineSpec::kReverseSuffix + ")");
    for (size_t i = 0; i < p.tables.size(); ++i)
        if (p.tables[i].strategy != Strategy::Cdc)
            fail(c, n["tables"][i]["strategy"], field + ".tables[" + p.tables[i].table.display() + "].strategy",
                 "direction: both streams changes both ways, so every table's strategy must be cdc");
    // A marked row is still a row of the other direction's source table: it would travel back live.
    for (size_t i = 0; i < p.tables.size(); ++i)
        if (p.tables[i].deletes == std::optional<std::string>("soft"))
            fail(c, n["tables"][i]["deletes"], field + ".tables[" + p.tables[i].table.display() + "].deletes",
                 "direction: both reads each side's table back as a source, where a soft-deleted row would count "
                 "as live; use deletes: hard on a two-way pipeline");
    // Each direction writes what it reads back to the other side: a mapping (renames, masks, an
    // include or exclude list) has no inverse there, and a masked value would overwrite the
    // original it was made from. A row filter would delete on one side rows the other keeps.
    for (size_t i = 0; i < p.tables.size(); ++i) {
        const std::string at = field + ".tables[" + p.tables[i].table.display() + "]";
        if (p.tables[i].columns)
            fail(c, n["tables"][i]["columns"], at + ".columns",
                 "direction: both writes each side's rows back to the other as they are, and a column mapping "
                 "(include, exclude, rename, mask) cannot be undone on the way back: a masked value would "
                 "overwrite the original. Remove columns: from this table, or make the pipeline one-way");
        if (p.tables[i].where)
            fail(c, n["tables"][i]["where"], at + ".where",
                 "direction: both keeps every row of the table on both sides; a row filter would leave rows on one "
                 "side that the other never gets. Remove where: from this table, or make the pipeline one-way");
    }
    p.twoWay = true;
}

PipelineSpec parsePipeline(const Ctx &c, const YAML::Node &n, size_t index, const Workspace &ws)
{
    std::string field = "pipelines[" + std::to_string(index) + "]";
    if (!n.IsMap())
        fail(c, n, field, "expected a map with name, source, target and tables");
    checkKeys(c, n, field,
              {"name", "source", "target", "target_schema", "publication", "heartbeat", "recover", "reconcile",
               "direction", "schema_changes", "tables", "conflicts", "include_tables", "exclude_tables",
               "table_defaults", "discover_every", "adopt"});
    PipelineSpec p;
    if (!n["name"])
        fail(c, n, field + ".name", "missing");
    p.name = scalar(c, n["name"], field + ".name");
    if (!isValidPipelineName(p.name))
        fail(c, n["name"], field + ".name",
             "'" + p.name +
                 "': pipeline names are lower-case letters, digits and '_', starting with a letter, at "
                 "most 53 characters (they become part of replication slot names)");
    field = "pipelines[" + p.name + "]";
    for (const char *role : {"source", "target"}) {
        if (!n[role])
            fail(c, n, field + "." + role, "missing; the name of an endpoint");
        auto ep = scalar(c, n[role], field + "." + role);
        const Endpoint *e = ws.endpoint(ep);
        if (!e) {
            std::string known;
            for (auto &[k, v] : ws.endpoints)
                known += (known.empty() ? "" : ", ") + k;
            fail(c, n[role], field + "." + role,
                 "unknown endpoint '" + ep + "'" + (known.empty() ? "" : "; defined: " + known));
        }
        (std::string(role) == "source" ? p.source : p.target) = ep;
    }
    const Endpoint &src = *ws.endpoint(p.source);
    const Endpoint &tgt = *ws.endpoint(p.target);
    if (src.kind == EndpointKind::Sqlite)
        fail(c, n["source"], field + ".source", "SQLite endpoints can only be targets");
    if (p.source == p.target)
        fail(c, n["target"], field + ".target", "source and target are the same endpoint");
    if (n["target_schema"]) {
        if (tgt.kind == EndpointKind::Sqlite)
            fail(c, n["target_schema"], field + ".target_schema", "SQLite targets have no schemas; remove it");
        p.targetSchema = scalar(c, n["target_schema"], field + ".target_schema");
    }
    if (n["publication"]) {
        p.publication = scalar(c, n["publication"], field + ".publication");
        if (p.publication->empty() || p.publication->size() > 63 || !allOf(*p.publication, lowerWord))
            fail(c, n["publication"], field + ".publication",
                 "'" + *p.publication + "': publication names here are [a-z0-9_], at most 63 characters");
    }
    if (n["heartbeat"]) {
        if (src.kind != EndpointKind::Postgres)
            fail(c, n["heartbeat"], field + ".heartbeat", "heartbeats are for Postgres sources; remove it");
        p.heartbeat = duration(c, n["heartbeat"], field + ".heartbeat", Millis(1000));
    }
    if (n["recover"]) {
        const std::string v = scalar(c, n["recover"], field + ".recover");
        if (v != "auto" && v != "manual")
            fail(c, n["recover"], field + ".recover",
                 "'" + v +
                     "': auto (bring the tables back by diff when the source changes) or manual (stop and "
                     "say: driftless-cli recover " +
                     p.name + ")");
        p.recover = v;
    }
    if (n["adopt"])
        p.adopt = adoptFlag(c, n["adopt"], field + ".adopt");
    if (const auto r = n["reconcile"]) {
        const std::string rf = field + ".reconcile";
        if (!r.IsMap())
            fail(c, r, rf, "expected a map, e.g. { every: 24h, alert_above: 0.1% }");
        checkKeys(c, r, rf, {"every", "alert_above"});
        if (r["every"])
            p.reconcileEvery = duration(c, r["every"], rf + ".every", Millis(60'000));
        if (r["alert_above"]) {
            const std::string v = scalar(c, r["alert_above"], rf + ".alert_above");
            const auto d = parseShare(v);
            if (!d)
                fail(c, r["alert_above"], rf + ".alert_above",
                     "'" + v + "': a percentage of the table's rows (0.1%) or a fraction (0.001), from 0 to 100%");
            p.reconcileAlertAbove = *d;
        }
    }
    if (n["schema_changes"]) {
        const auto sc = parseSchemaChanges(c, n["schema_changes"], field + ".schema_changes", src);
        p.addColumn = sc.addColumn;
        p.dropColumn = sc.dropColumn;
        p.typeChange = sc.typeChange;
        p.renameColumn = sc.renameColumn;
    }
    if (n["include_tables"])
        p.includeTables = parsePatterns(c, n["include_tables"], field + ".include_tables");
    if (n["exclude_tables"]) {
        if (p.includeTables.empty())
            fail(c, n["exclude_tables"], field + ".exclude_tables",
                 "exclude_tables narrows include_tables, which this pipeline does not have; add include_tables or "
                 "remove it");
        p.excludeTables = parsePatterns(c, n["exclude_tables"], field + ".exclude_tables");
    }
    for (const char *key : {"table_defaults", "discover_every"})
        if (n[key] && p.includeTables.empty())
            fail(c, n[key], field + "." + key,
                 std::string("applies to tables picked up by include_tables, which this pipeline does not have; add "
                             "include_tables or remove ") +
                     key);
    if (n["table_defaults"])
        p.tableDefaults = parseTableDefaults(c, n["table_defaults"], field + ".table_defaults", src);
    if (n["discover_every"])
        p.discoverEvery = duration(c, n["discover_every"], field + ".discover_every", Millis(5'000));
    const bool listed = n["tables"] && n["tables"].IsSequence() && n["tables"].size() > 0;
    if (!listed && !(p.includeTables.size() && (!n["tables"] || n["tables"].IsSequence())))
        fail(c, n["tables"] ? n["tables"] : n, field + ".tables",
             "expected a list with at least one table (or include_tables: [\"schema.*\"] to pick tables by name)");
    std::set<TableRef> seen;
    for (size_t i = 0; listed && i < n["tables"].size(); ++i) {
        auto t = parseTable(c, field, n["tables"][i], i, src);
        if (!seen.insert(t.table).second)
            fail(c, n["tables"][i], field + ".tables[" + t.table.display() + "]", "table listed twice");
        p.tables.push_back(std::move(t));
    }
    if (n["direction"])
        parseDirection(c, n, field, p, src, tgt);
    if (p.twoWay && !p.includeTables.empty())
        fail(c, n["include_tables"], field + ".include_tables",
             "a two-way pipeline writes into both sides' tables, which must each be named; list them under tables: "
             "and remove include_tables");
    // Adopting needs both directions' first pass to compare, which a two-way pipeline does not do
    // yet: refused rather than half done (docs/adopt.md).
    const std::string twoWayAdopt =
        "a two-way pipeline cannot adopt existing tables (both sides would have to be compared first): adopt them one "
        "way first (remove direction: both), run until they stream, then set direction: both and remove adopt";
    if (p.twoWay && p.adopt.value_or(false))
        fail(c, n["adopt"], field + ".adopt", twoWayAdopt);
    for (size_t i = 0; p.twoWay && i < p.tables.size(); ++i)
        if (p.tables[i].adopt.value_or(false))
            fail(c, n["tables"][i]["adopt"], field + ".tables[" + p.tables[i].table.display() + "].adopt", twoWayAdopt);
    if (n["conflicts"]) {
        if (!p.twoWay)
            fail(c, n["conflicts"], field + ".conflicts",
                 "conflicts: applies to two-way pipelines only; add direction: both or remove it");
        const std::string dflt = parseConflicts(c, n["conflicts"], field + ".conflicts");
        for (auto &t : p.tables)
            if (!t.conflicts)
                t.conflicts = dflt;
    }
    for (size_t i = 0; i < p.tables.size(); ++i)
        if (p.tables[i].conflicts && !p.twoWay && n["tables"][i]["conflicts"])
            fail(c, n["tables"][i]["conflicts"], field + ".tables[" + p.tables[i].table.display() + "].conflicts",
                 "conflicts: applies to two-way pipelines only; add direction: both to the pipeline or remove it");
    // MariaDB keeps no commit time per row: newer_wins on MariaDB sides compares a column.
    if (p.twoWay && (src.kind == EndpointKind::Mysql || tgt.kind == EndpointKind::Mysql))
        for (size_t i = 0; i < p.tables.size(); ++i) {
            const auto policy = p.tables[i].conflicts ? ConflictPolicy::parse(*p.tables[i].conflicts) : std::nullopt;
            if (!policy || !policy->usesCommitTime())
                continue;
            const YAML::Node at = n["tables"][i]["conflicts"] ? n["tables"][i]["conflicts"] : n["conflicts"];
            fail(c, at, field + ".tables[" + p.tables[i].table.display() + "].conflicts",
                 "newer_wins with clock: commit_time needs Postgres sides (MariaDB keeps no commit time per row); "
                 "use newer_wins: { column: <a timestamp column> }");
        }
    return p;
}

void emitDuration(YAML::Emitter &out, const char *key, const std::optional<Millis> &d)
{
    if (d)
        out << YAML::Key << key << YAML::Value << formatDuration(*d);
}

void emitSchemaChanges(YAML::Emitter &out, const std::optional<std::string> &addColumn,
                       const std::optional<std::string> &dropColumn, const std::optional<std::string> &typeChange,
                       const std::optional<std::string> &renameColumn)
{
    if (!addColumn && !dropColumn && !typeChange && !renameColumn)
        return;
    out << YAML::Key << "schema_changes" << YAML::Value << YAML::Flow << YAML::BeginMap;
    if (addColumn)
        out << YAML::Key << "add_column" << YAML::Value << *addColumn;
    if (dropColumn)
        out << YAML::Key << "drop_column" << YAML::Value << *dropColumn;
    if (typeChange)
        out << YAML::Key << "type_change" << YAML::Value << *typeChange;
    if (renameColumn)
        out << YAML::Key << "rename_column" << YAML::Value << *renameColumn;
    out << YAML::EndMap;
}

void emitColumns(YAML::Emitter &out, const ColumnMapping &m)
{
    out << YAML::Key << "columns" << YAML::Value << YAML::Flow << YAML::BeginMap;
    auto names = [&](const char *key, const std::vector<std::string> &list) {
        out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto &n : list)
            out << YAML::DoubleQuoted << n;
        out << YAML::EndSeq;
    };
    if (!m.exclude.empty())
        names("exclude", m.exclude);
    if (m.hasInclude)
        names("include", m.include);
    if (!m.rename.empty()) {
        out << YAML::Key << "rename" << YAML::Value << YAML::Flow << YAML::BeginMap;
        for (const auto &[from, to] : m.rename)
            out << YAML::Key << YAML::DoubleQuoted << from << YAML::Value << YAML::DoubleQuoted << to;
        out << YAML::EndMap;
    }
    if (!m.mask.empty()) {
        out << YAML::Key << "mask" << YAML::Value << YAML::Flow << YAML::BeginMap;
        for (const auto &[col, k] : m.mask) {
            out << YAML::Key << YAML::DoubleQuoted << col << YAML::Value << YAML::Flow << YAML::BeginMap;
            switch (k.kind) {
            case ColumnMask::Kind::Null:
                out << YAML::Key << "null" << YAML::Value << true;
                break;
            case ColumnMask::Kind::Truncate:
                out << YAML::Key << "truncate" << YAML::Value << k.count;
                break;
            case ColumnMask::Kind::KeepLast:
                out << YAML::Key << "keep_last" << YAML::Value << k.count;
                break;
            case ColumnMask::Kind::Hash:
                out << YAML::Key << "hash" << YAML::Value << "hmac-sha256" << YAML::Key << "key" << YAML::Value
                    << YAML::DoubleQuoted << k.key;
                break;
            }
            out << YAML::EndMap;
        }
        out << YAML::EndMap;
    }
    out << YAML::EndMap;
}

} // namespace

Workspace WorkspaceFile::load(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        throw ConfigError("cannot read the file: " + std::string(std::strerror(errno)), path);
    std::stringstream ss;
    ss << in.rdbuf();
    auto base = fs::absolute(fs::path(path)).parent_path().string();
    return parse(ss.str(), path, base);
}

Workspace WorkspaceFile::parse(const std::string &yaml, const std::string &displayName, const std::string &baseDir)
{
    Ctx c{displayName, baseDir};
    YAML::Node root;
    try {
        root = YAML::Load(yaml);
    } catch (const YAML::ParserException &e) {
        throw ConfigError("malformed YAML: " + e.msg, displayName, e.mark.line + 1);
    }
    if (!root || root.IsNull())
        throw ConfigError("the file is empty; expected 'endpoints:' and 'pipelines:'", displayName, 1);
    if (!root.IsMap())
        fail(c, root, "", "expected a map with 'endpoints:' and 'pipelines:'");
    checkKeys(c, root, "", {"endpoints", "pipelines"});
    Workspace ws;
    if (auto eps = root["endpoints"]) {
        if (!eps.IsMap())
            fail(c, eps, "endpoints", "expected a map of endpoint names");
        for (auto it = eps.begin(); it != eps.end(); ++it) {
            auto name = it->first.as<std::string>();
            if (ws.endpoints.count(name))
                fail(c, it->first, "endpoints." + name, "defined twice");
            ws.endpoints[name] = parseEndpoint(c, name, it->second);
        }
    }
    if (auto ps = root["pipelines"]) {
        if (!ps.IsSequence())
            fail(c, ps, "pipelines", "expected a list of pipelines");
        std::set<std::string> names;
        for (size_t i = 0; i < ps.size(); ++i) {
            auto p = parsePipeline(c, ps[i], i, ws);
            if (!names.insert(p.name).second)
                fail(c, ps[i]["name"], "pipelines[" + p.name + "].name", "a pipeline with this name already exists");
            ws.pipelines.push_back(std::move(p));
        }
        // A two-way pipeline's reverse direction has slots, checkpoints and state of its own name.
        for (size_t i = 0; i < ws.pipelines.size(); ++i)
            if (ws.pipelines[i].twoWay && names.count(ws.pipelines[i].reverseName()))
                fail(c, ps[i]["name"], "pipelines[" + ws.pipelines[i].name + "].name",
                     "pipeline " + ws.pipelines[i].reverseName() +
                         " exists, and it is the name of this two-way "
                         "pipeline's reverse direction; rename one of them");
        // Clashes need the line of the second table, so check them here rather than in validate().
        std::map<std::pair<std::string, TargetName>, std::string> targets;
        for (size_t i = 0; i < ws.pipelines.size(); ++i) {
            const auto &p = ws.pipelines[i];
            auto kind = ws.endpoint(p.target)->kind;
            for (size_t j = 0; j < p.tables.size(); ++j) {
                auto tn = resolveTargetName(p, p.tables[j], kind);
                auto key = std::make_pair(p.target, tn);
                // SQLite matches table names without regard to ASCII case: "Orders" is "orders".
                if (kind == EndpointKind::Sqlite)
                    std::transform(key.second.name.begin(), key.second.name.end(), key.second.name.begin(),
                                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
                std::string who = p.name + "/" + p.tables[j].table.display();
                auto [it, inserted] = targets.emplace(key, who);
                if (!inserted)
                    fail(c, ps[i]["tables"][j], "pipelines[" + p.name + "].tables[" + p.tables[j].table.display() + "]",
                         "target table " + tn.display() + " on '" + p.target + "' is already written by " + it->second +
                             "; set target_table to tell them apart");
            }
        }
    }
    return ws;
}

void WorkspaceFile::validate(const Workspace &ws, const std::string &displayName)
{
    auto yaml = toYaml(ws);
    parse(yaml, displayName.empty() ? "(workspace)" : displayName, "/");
}

/// A table's keys after `table` and `strategy` (also `table_defaults`).
static void emitTableKeys(YAML::Emitter &out, const TableSpec &t)
{
    if (t.cursor)
        out << YAML::Key << "cursor" << YAML::Value << YAML::DoubleQuoted << *t.cursor;
    if (t.lookback)
        out << YAML::Key << "lookback" << YAML::Value << *t.lookback;
    if (t.pageSize)
        out << YAML::Key << "page_size" << YAML::Value << *t.pageSize;
    emitDuration(out, "freshness_sla", t.freshnessSla);
    emitDuration(out, "every", t.every);
    if (t.targetTable)
        out << YAML::Key << "target_table" << YAML::Value << YAML::DoubleQuoted << *t.targetTable;
    if (t.truncate)
        out << YAML::Key << "truncate" << YAML::Value << *t.truncate;
    if (t.fallbackCursor)
        out << YAML::Key << "fallback_cursor" << YAML::Value << YAML::DoubleQuoted << *t.fallbackCursor;
    if (t.fallbackFrom)
        out << YAML::Key << "fallback_from" << YAML::Value << std::string(toString(*t.fallbackFrom));
    if (t.columns)
        emitColumns(out, *t.columns);
    if (t.where)
        out << YAML::Key << "where" << YAML::Value << YAML::DoubleQuoted << *t.where;
    if (t.deletes)
        out << YAML::Key << "deletes" << YAML::Value << *t.deletes;
    if (t.conflicts)
        if (auto cp = ConflictPolicy::parse(*t.conflicts)) {
            out << YAML::Key << "conflicts" << YAML::Value;
            auto newer = [&] {
                out << YAML::Flow << YAML::BeginMap << YAML::Key << "newer_wins" << YAML::Value << YAML::BeginMap;
                if (cp->newer.clock == NewerWins::Clock::CommitTime)
                    out << YAML::Key << "clock" << YAML::Value << "commit_time";
                else
                    out << YAML::Key << "column" << YAML::Value << YAML::DoubleQuoted << cp->newer.column;
                out << YAML::Key << "max_skew" << YAML::Value << formatDuration(Millis{cp->newer.maxSkewMs})
                    << YAML::EndMap << YAML::EndMap;
            };
            if (cp->rule == ConflictPolicy::Rule::MergeColumns) {
                out << YAML::Flow << YAML::BeginMap << YAML::Key << "policy" << YAML::Value << "merge_columns"
                    << YAML::Key << "on_overlap" << YAML::Value;
                if (cp->onOverlap == ConflictPolicy::Rule::NewerWins)
                    newer();
                else
                    out << ConflictPolicy::name(cp->onOverlap);
                out << YAML::EndMap;
            } else if (cp->rule == ConflictPolicy::Rule::NewerWins) {
                newer();
            } else {
                out << ConflictPolicy::name(cp->rule);
            }
        }
    emitSchemaChanges(out, t.addColumn, t.dropColumn, t.typeChange, t.renameColumn);
    if (t.adopt)
        out << YAML::Key << "adopt" << YAML::Value << *t.adopt;
    if (t.key) {
        out << YAML::Key << "key" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto &k : *t.key)
            out << k;
        out << YAML::EndSeq;
    }
}

std::string WorkspaceFile::toYaml(const Workspace &ws)
{
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "endpoints" << YAML::Value << YAML::BeginMap;
    for (const auto &[name, e] : ws.endpoints) {
        out << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "kind" << YAML::Value << std::string(toString(e.kind));
        if (e.kind == EndpointKind::Sqlite)
            out << YAML::Key << "path" << YAML::Value << YAML::DoubleQuoted << e.path;
        else
            out << YAML::Key << "dsn" << YAML::Value << YAML::DoubleQuoted << e.dsn;
        if (e.slotGuard) {
            const auto &g = *e.slotGuard;
            out << YAML::Key << "slot_guard" << YAML::Value << YAML::Flow << YAML::BeginMap;
            out << YAML::Key << "max_retained" << YAML::Value << formatByteSize(g.maxRetained);
            out << YAML::Key << "action" << YAML::Value << std::string(toString(g.action));
            if (g.warnRetained)
                out << YAML::Key << "warn_retained" << YAML::Value << formatByteSize(*g.warnRetained);
            if (g.minSafeWal)
                out << YAML::Key << "min_safe_wal" << YAML::Value << formatByteSize(*g.minSafeWal);
            emitDuration(out, "inactive_alert", g.inactiveAlert);
            out << YAML::EndMap;
        }
        if (e.ssh) {
            const auto &t = *e.ssh;
            out << YAML::Key << "ssh" << YAML::Value << YAML::Flow << YAML::BeginMap;
            out << YAML::Key << "host" << YAML::Value << YAML::DoubleQuoted << t.host;
            out << YAML::Key << "port" << YAML::Value << t.port;
            out << YAML::Key << "user" << YAML::Value << YAML::DoubleQuoted << t.user;
            if (t.identityFile)
                out << YAML::Key << "identity_file" << YAML::Value << YAML::DoubleQuoted << *t.identityFile;
            if (t.jump)
                out << YAML::Key << "jump" << YAML::Value << YAML::DoubleQuoted << *t.jump;
            out << YAML::EndMap;
        }
        out << YAML::EndMap;
    }
    out << YAML::EndMap;
    out << YAML::Key << "pipelines" << YAML::Value << YAML::BeginSeq;
    for (const auto &p : ws.pipelines) {
        out << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << p.name;
        out << YAML::Key << "source" << YAML::Value << p.source;
        out << YAML::Key << "target" << YAML::Value << p.target;
        if (p.targetSchema)
            out << YAML::Key << "target_schema" << YAML::Value << YAML::DoubleQuoted << *p.targetSchema;
        if (p.publication)
            out << YAML::Key << "publication" << YAML::Value << *p.publication;
        emitDuration(out, "heartbeat", p.heartbeat);
        if (p.recover)
            out << YAML::Key << "recover" << YAML::Value << *p.recover;
        if (p.adopt)
            out << YAML::Key << "adopt" << YAML::Value << *p.adopt;
        if (p.twoWay)
            out << YAML::Key << "direction" << YAML::Value << "both";
        if (p.reconcileEvery || p.reconcileAlertAbove) {
            out << YAML::Key << "reconcile" << YAML::Value << YAML::Flow << YAML::BeginMap;
            emitDuration(out, "every", p.reconcileEvery);
            if (p.reconcileAlertAbove)
                out << YAML::Key << "alert_above" << YAML::Value << formatShare(*p.reconcileAlertAbove);
            out << YAML::EndMap;
        }
        emitSchemaChanges(out, p.addColumn, p.dropColumn, p.typeChange, p.renameColumn);
        if (!p.includeTables.empty()) {
            out << YAML::Key << "include_tables" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (const auto &pat : p.includeTables)
                out << YAML::DoubleQuoted << pat;
            out << YAML::EndSeq;
        }
        if (!p.excludeTables.empty()) {
            out << YAML::Key << "exclude_tables" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (const auto &pat : p.excludeTables)
                out << YAML::DoubleQuoted << pat;
            out << YAML::EndSeq;
        }
        if (p.tableDefaults) {
            out << YAML::Key << "table_defaults" << YAML::Value << YAML::Flow << YAML::BeginMap;
            if (p.tableDefaults->strategy)
                out << YAML::Key << "strategy" << YAML::Value << std::string(toString(*p.tableDefaults->strategy));
            emitTableKeys(out, p.tableDefaults->keys);
            out << YAML::EndMap;
        }
        emitDuration(out, "discover_every", p.discoverEvery);
        // Tables a pattern picked up stay out: the patterns pick them up again.
        const bool anyListed =
            std::any_of(p.tables.begin(), p.tables.end(), [](const auto &t) { return !t.discovered; });
        if (anyListed || p.includeTables.empty())
            out << YAML::Key << "tables" << YAML::Value << YAML::BeginSeq;
        for (const auto &t : p.tables) {
            if (t.discovered)
                continue;
            out << YAML::Flow << YAML::BeginMap;
            // Quote the name parts so case and special characters survive a reload.
            std::string tbl = t.table.display();
            out << YAML::Key << "table" << YAML::Value << YAML::DoubleQuoted << tbl;
            out << YAML::Key << "strategy" << YAML::Value << std::string(toString(t.strategy));
            emitTableKeys(out, t);
            out << YAML::EndMap;
        }
        if (anyListed || p.includeTables.empty())
            out << YAML::EndSeq;
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

} // namespace driftless::core
