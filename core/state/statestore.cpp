#include "core/state/statestore.h"

#include "core/base/clock.h"
#include "core/model/columnmapping.h"

#include "core/model/error.h"
#include "core/state/migrations.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace driftless::core {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string prepareFile(const std::string &path)
{
    fs::path p(path);
    if (p.has_parent_path() && !fs::exists(p.parent_path())) {
        std::error_code ec;
        fs::create_directories(p.parent_path(), ec);
        if (ec)
            throw Error(ErrorKind::Permanent, "cannot create folder " + p.parent_path().string() + ": " + ec.message());
        fs::permissions(p.parent_path(), fs::perms::owner_all, ec);
    }
    // Create it 0600 ourselves: SQLite would use the umask, and its -wal/-shm files copy the
    // main file's mode.
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        throw Error(ErrorKind::Permanent, "cannot open the workspace file " + path + ": " + std::strerror(errno),
                    std::to_string(errno), "check the path and its folder's permissions");
    ::close(fd);
    return path;
}

std::string tableSpecJson(const TableSpec &t)
{
    json j = json::object();
    if (t.cursor)
        j["cursor"] = *t.cursor;
    if (t.lookback)
        j["lookback"] = *t.lookback;
    if (t.pageSize)
        j["page_size"] = *t.pageSize;
    if (t.freshnessSla)
        j["freshness_sla_ms"] = t.freshnessSla->count();
    if (t.targetTable)
        j["target_table"] = *t.targetTable;
    if (t.every)
        j["every_ms"] = t.every->count();
    if (t.truncate)
        j["truncate"] = *t.truncate;
    if (t.fallbackCursor)
        j["fallback_cursor"] = *t.fallbackCursor;
    if (t.fallbackFrom)
        j["fallback_from"] = std::string(toString(*t.fallbackFrom));
    if (t.columns)
        j["columns"] = columnMappingJson(*t.columns);
    if (t.where)
        j["where"] = *t.where;
    if (t.deletes)
        j["deletes"] = *t.deletes;
    if (t.conflicts)
        j["conflicts"] = *t.conflicts;
    if (t.addColumn)
        j["add_column"] = *t.addColumn;
    if (t.dropColumn)
        j["drop_column"] = *t.dropColumn;
    if (t.typeChange)
        j["type_change"] = *t.typeChange;
    if (t.renameColumn)
        j["rename_column"] = *t.renameColumn;
    if (t.adopt)
        j["adopt"] = *t.adopt;
    if (t.key)
        j["key"] = *t.key;
    return j.dump();
}

void readTableSpecJson(TableSpec &t, const std::string &text)
{
    auto j = json::parse(text);
    if (j.contains("cursor"))
        t.cursor = j["cursor"].get<std::string>();
    if (j.contains("lookback"))
        t.lookback = j["lookback"].get<std::string>();
    if (j.contains("page_size"))
        t.pageSize = j["page_size"].get<long long>();
    if (j.contains("freshness_sla_ms"))
        t.freshnessSla = Millis(j["freshness_sla_ms"].get<long long>());
    if (j.contains("target_table"))
        t.targetTable = j["target_table"].get<std::string>();
    if (j.contains("every_ms"))
        t.every = Millis(j["every_ms"].get<long long>());
    if (j.contains("truncate"))
        t.truncate = j["truncate"].get<std::string>();
    if (j.contains("fallback_cursor"))
        t.fallbackCursor = j["fallback_cursor"].get<std::string>();
    if (j.contains("fallback_from"))
        t.fallbackFrom = Strategy::Cdc;
    if (j.contains("columns"))
        t.columns = columnMappingFromJson(j["columns"]);
    if (j.contains("where"))
        t.where = j["where"].get<std::string>();
    if (j.contains("deletes"))
        t.deletes = j["deletes"].get<std::string>();
    if (j.contains("conflicts"))
        t.conflicts = j["conflicts"].get<std::string>();
    if (j.contains("add_column"))
        t.addColumn = j["add_column"].get<std::string>();
    if (j.contains("drop_column"))
        t.dropColumn = j["drop_column"].get<std::string>();
    if (j.contains("type_change"))
        t.typeChange = j["type_change"].get<std::string>();
    if (j.contains("rename_column"))
        t.renameColumn = j["rename_column"].get<std::string>();
    if (j.contains("adopt"))
        t.adopt = j["adopt"].get<bool>();
    if (j.contains("key"))
        t.key = j["key"].get<std::vector<std::string>>();
}

} // namespace

std::int64_t StateStore::nowMs()
{
    return wallClockMs();
}

std::string StateStore::defaultPath()
{
    const char *xdg = std::getenv("XDG_DATA_HOME");
    fs::path base;
    if (xdg && *xdg && fs::path(xdg).is_absolute()) {
        base = xdg;
    } else {
        const char *home = std::getenv("HOME");
        base = fs::path(home && *home ? home : ".") / ".local" / "share";
    }
    return (base / "driftless" / "workspace.db").string();
}

StateStore::StateStore(const std::string &path) : m_path(path), m_db(prepareFile(path))
{
    m_db.exec("PRAGMA journal_mode = WAL");
    m_db.exec("PRAGMA synchronous = NORMAL");
    m_db.exec("PRAGMA foreign_keys = ON");
    migrate();
}

void StateStore::migrate()
{
    std::lock_guard lock(m_mutex);
    auto migrations = stateMigrations();
    auto version = m_db.scalarInt("PRAGMA user_version");
    if (version > static_cast<std::int64_t>(migrations.size()))
        throw Error(ErrorKind::Permanent,
                    "the workspace file " + m_path + " has schema version " + std::to_string(version) +
                        ", newer than this Driftless understands (" + std::to_string(migrations.size()) + ")",
                    {}, "upgrade Driftless, or point --state at another file");
    while (version < static_cast<std::int64_t>(migrations.size())) {
        SqliteTransaction tx(m_db);
        // Re-read inside the write lock: another process may have migrated meanwhile.
        version = m_db.scalarInt("PRAGMA user_version");
        if (version >= static_cast<std::int64_t>(migrations.size()))
            break;
        m_db.exec(migrations[static_cast<size_t>(version)]);
        m_db.exec("PRAGMA user_version = " + std::to_string(version + 1));
        tx.commit();
        ++version;
    }
}

Workspace StateStore::loadWorkspace()
{
    std::lock_guard lock(m_mutex);
    Workspace ws;
    {
        auto st = m_db.prepare("SELECT name, kind, dsn, path, options FROM endpoints ORDER BY name");
        while (st.step()) {
            Endpoint e;
            e.name = st.text(0);
            e.kind = endpointKindFromString(st.text(1)).value_or(EndpointKind::Postgres);
            e.dsn = st.text(2);
            e.path = st.text(3);
            auto opts = json::parse(st.text(4), nullptr, false);
            if (opts.is_object() && opts.contains("slot_guard")) {
                const auto &g = opts["slot_guard"];
                SlotGuard sg;
                sg.maxRetained = g.value("max_retained", std::int64_t{0});
                sg.action =
                    g.value("action", "alert") == "fallback" ? SlotGuard::Action::Fallback : SlotGuard::Action::Alert;
                if (g.contains("warn_retained"))
                    sg.warnRetained = g["warn_retained"].get<std::int64_t>();
                if (g.contains("min_safe_wal"))
                    sg.minSafeWal = g["min_safe_wal"].get<std::int64_t>();
                if (g.contains("inactive_alert_ms"))
                    sg.inactiveAlert = Millis(g["inactive_alert_ms"].get<std::int64_t>());
                e.slotGuard = sg;
            }
            if (opts.is_object() && opts.contains("ssh") && opts["ssh"].is_object()) {
                const auto &j = opts["ssh"];
                SshTunnelSpec t;
                t.host = j.value("host", "");
                t.port = j.value("port", 22);
                t.user = j.value("user", "");
                if (j.contains("identity_file"))
                    t.identityFile = j["identity_file"].get<std::string>();
                if (j.contains("jump"))
                    t.jump = j["jump"].get<std::string>();
                e.ssh = t;
            }
            ws.endpoints[e.name] = e;
        }
    }
    {
        auto st = m_db.prepare("SELECT name, source, target, target_schema, options FROM pipelines ORDER BY position");
        while (st.step()) {
            PipelineSpec p;
            p.name = st.text(0);
            p.source = st.text(1);
            p.target = st.text(2);
            p.targetSchema = st.optText(3);
            auto opts = json::parse(st.text(4));
            if (opts.contains("publication"))
                p.publication = opts["publication"].get<std::string>();
            if (opts.contains("heartbeat_ms"))
                p.heartbeat = Millis(opts["heartbeat_ms"].get<std::int64_t>());
            if (opts.contains("recover"))
                p.recover = opts["recover"].get<std::string>();
            if (opts.contains("adopt"))
                p.adopt = opts["adopt"].get<bool>();
            if (opts.contains("reconcile_every_ms"))
                p.reconcileEvery = Millis(opts["reconcile_every_ms"].get<std::int64_t>());
            if (opts.contains("reconcile_alert_above"))
                p.reconcileAlertAbove = opts["reconcile_alert_above"].get<double>();
            p.twoWay = opts.value("direction", std::string()) == "both";
            if (opts.contains("add_column"))
                p.addColumn = opts["add_column"].get<std::string>();
            if (opts.contains("drop_column"))
                p.dropColumn = opts["drop_column"].get<std::string>();
            if (opts.contains("type_change"))
                p.typeChange = opts["type_change"].get<std::string>();
            if (opts.contains("rename_column"))
                p.renameColumn = opts["rename_column"].get<std::string>();
            if (opts.contains("include_tables"))
                p.includeTables = opts["include_tables"].get<std::vector<std::string>>();
            if (opts.contains("exclude_tables"))
                p.excludeTables = opts["exclude_tables"].get<std::vector<std::string>>();
            if (opts.contains("table_defaults")) {
                PipelineSpec::TableDefaults d;
                const auto &j = opts["table_defaults"];
                if (j.contains("strategy"))
                    d.strategy = strategyFromString(j["strategy"].get<std::string>());
                if (d.strategy)
                    d.keys.strategy = *d.strategy;
                readTableSpecJson(d.keys, j.value("keys", std::string("{}")));
                p.tableDefaults = std::move(d);
            }
            if (opts.contains("discover_every_ms"))
                p.discoverEvery = Millis(opts["discover_every_ms"].get<std::int64_t>());
            ws.pipelines.push_back(std::move(p));
        }
    }
    auto st = m_db.prepare("SELECT source_schema, source_table, strategy, spec FROM table_specs WHERE pipeline = ?1 "
                           "ORDER BY position");
    for (auto &p : ws.pipelines) {
        st.reset();
        st.bindText(1, p.name);
        while (st.step()) {
            TableSpec t;
            t.table = {st.text(0), st.text(1)};
            t.strategy = strategyFromString(st.text(2)).value_or(Strategy::FullRefresh);
            readTableSpecJson(t, st.text(3));
            p.tables.push_back(std::move(t));
        }
    }
    // Tables the patterns picked up, after the listed ones (a listed one wins), while the
    // patterns still pick them up.
    auto dst =
        m_db.prepare("SELECT source_schema, source_table, strategy, cursor, fallback_from FROM discovered_tables "
                     "WHERE pipeline = ?1 AND refused = '' ORDER BY source_schema, source_table");
    for (auto &p : ws.pipelines) {
        if (p.includeTables.empty())
            continue;
        dst.reset();
        dst.bindText(1, p.name);
        while (dst.step()) {
            const TableRef ref{dst.text(0), dst.text(1)};
            if (!p.picksUp(ref) ||
                std::any_of(p.tables.begin(), p.tables.end(), [&](const TableSpec &t) { return t.table == ref; }))
                continue;
            const auto fallback = dst.optText(4);
            p.tables.push_back(p.pickedUp(ref, strategyFromString(dst.text(2)).value_or(Strategy::FullRefresh),
                                          dst.optText(3), fallback ? strategyFromString(*fallback) : std::nullopt));
        }
    }
    return ws;
}

std::vector<StateStore::DiscoveredTable> StateStore::discoveredTables(const std::string &pipeline)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare("SELECT pipeline, source_schema, source_table, strategy, cursor, refused, found_at_ms FROM "
                           "discovered_tables WHERE ?1 = '' OR pipeline = ?1 ORDER BY pipeline, source_schema, "
                           "source_table");
    st.bindText(1, pipeline);
    std::vector<DiscoveredTable> out;
    while (st.step()) {
        DiscoveredTable d;
        d.pipeline = st.text(0);
        d.table = {st.text(1), st.text(2)};
        d.strategy = strategyFromString(st.text(3)).value_or(Strategy::FullRefresh);
        d.cursor = st.optText(4);
        d.refused = st.text(5);
        d.foundAtMs = st.int64(6);
        out.push_back(std::move(d));
    }
    return out;
}

bool StateStore::addDiscoveredTable(const DiscoveredTable &t)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare("INSERT INTO discovered_tables (pipeline, source_schema, source_table, strategy, cursor, "
                           "refused, found_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING");
    st.bindText(1, t.pipeline)
        .bindText(2, t.table.schema)
        .bindText(3, t.table.name)
        .bindText(4, toString(t.strategy))
        .bind(5, t.cursor)
        .bindText(6, t.refused)
        .bind(7, t.foundAtMs ? t.foundAtMs : wallClockMs());
    st.run();
    return m_db.changes() > 0;
}

StateStore::ApplySummary StateStore::applyWorkspace(const Workspace &ws)
{
    ApplySummary sum;
    Workspace old = loadWorkspace();
    // The tables the patterns picked up are not a file's: a workspace read from one carries none
    // and is compared without them (they stay picked up). One that carries them (the slot guard
    // moving one to cursor sync) writes what changed of them.
    auto carries = [](const Workspace &w) {
        return std::any_of(w.pipelines.begin(), w.pipelines.end(), [](const PipelineSpec &p) {
            return std::any_of(p.tables.begin(), p.tables.end(), [](const TableSpec &t) { return t.discovered; });
        });
    };
    if (!carries(ws))
        for (auto &p : old.pipelines)
            std::erase_if(p.tables, [](const TableSpec &t) { return t.discovered; });
    if (old == ws)
        return sum;
    sum.changed = true;
    for (auto &[name, e] : ws.endpoints) {
        auto *o = old.endpoint(name);
        if (!o)
            sum.lines.push_back("+ endpoint " + name);
        else if (!(*o == e))
            sum.lines.push_back("~ endpoint " + name);
    }
    for (auto &[name, e] : old.endpoints)
        if (!ws.endpoint(name))
            sum.lines.push_back("- endpoint " + name);
    for (auto &p : ws.pipelines) {
        auto *o = old.pipeline(p.name);
        if (!o) {
            sum.lines.push_back("+ pipeline " + p.name + " (" + std::to_string(p.tables.size()) + " tables)");
            continue;
        }
        for (auto &t : p.tables) {
            const TableSpec *ot = nullptr;
            for (auto &x : o->tables)
                if (x.table == t.table)
                    ot = &x;
            if (!ot)
                sum.lines.push_back("+ table " + p.name + "/" + t.table.display());
            else if (!(*ot == t))
                sum.lines.push_back("~ table " + p.name + "/" + t.table.display());
        }
        for (auto &x : o->tables) {
            bool found = false;
            for (auto &t : p.tables)
                found = found || t.table == x.table;
            if (!found)
                sum.lines.push_back("- table " + p.name + "/" + x.table.display());
        }
        if (o->source != p.source || o->target != p.target || o->targetSchema != p.targetSchema ||
            o->publication != p.publication || o->heartbeat != p.heartbeat || o->recover != p.recover ||
            o->reconcileEvery != p.reconcileEvery || o->reconcileAlertAbove != p.reconcileAlertAbove ||
            o->twoWay != p.twoWay || o->addColumn != p.addColumn || o->dropColumn != p.dropColumn ||
            o->typeChange != p.typeChange || o->renameColumn != p.renameColumn || o->adopt != p.adopt)
            sum.lines.push_back("~ pipeline " + p.name);
    }
    for (auto &p : old.pipelines)
        if (!ws.pipeline(p.name))
            sum.lines.push_back("- pipeline " + p.name);

    std::lock_guard lock(m_mutex);
    SqliteTransaction tx(m_db);
    m_db.exec("DELETE FROM table_specs; DELETE FROM pipelines; DELETE FROM endpoints;");
    {
        auto st = m_db.prepare("INSERT INTO endpoints (name, kind, dsn, path, options) VALUES (?1, ?2, ?3, ?4, ?5)");
        for (auto &[name, e] : ws.endpoints) {
            st.reset();
            st.bindText(1, name).bindText(2, toString(e.kind)).bindText(3, e.dsn).bindText(4, e.path);
            json opts = json::object();
            if (e.slotGuard) {
                const auto &g = *e.slotGuard;
                json j = {{"max_retained", g.maxRetained}, {"action", std::string(toString(g.action))}};
                if (g.warnRetained)
                    j["warn_retained"] = *g.warnRetained;
                if (g.minSafeWal)
                    j["min_safe_wal"] = *g.minSafeWal;
                if (g.inactiveAlert)
                    j["inactive_alert_ms"] = g.inactiveAlert->count();
                opts["slot_guard"] = std::move(j);
            }
            if (e.ssh) {
                json j = {{"host", e.ssh->host}, {"port", e.ssh->port}, {"user", e.ssh->user}};
                if (e.ssh->identityFile)
                    j["identity_file"] = *e.ssh->identityFile;
                if (e.ssh->jump)
                    j["jump"] = *e.ssh->jump;
                opts["ssh"] = std::move(j);
            }
            st.bindText(5, opts.dump());
            st.run();
        }
    }
    auto pst = m_db.prepare("INSERT INTO pipelines (name, position, source, target, target_schema, options) "
                            "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    auto tst = m_db.prepare("INSERT INTO table_specs (pipeline, source_schema, source_table, position, strategy, spec) "
                            "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    auto dup =
        m_db.prepare("UPDATE discovered_tables SET strategy = ?4, cursor = ?5, fallback_from = ?6 WHERE pipeline = "
                     "?1 AND source_schema = ?2 AND source_table = ?3");
    std::int64_t pos = 0;
    for (auto &p : ws.pipelines) {
        pst.reset();
        json opts = json::object();
        if (p.publication)
            opts["publication"] = *p.publication;
        if (p.heartbeat)
            opts["heartbeat_ms"] = p.heartbeat->count();
        if (p.recover)
            opts["recover"] = *p.recover;
        if (p.adopt)
            opts["adopt"] = *p.adopt;
        if (p.reconcileEvery)
            opts["reconcile_every_ms"] = p.reconcileEvery->count();
        if (p.reconcileAlertAbove)
            opts["reconcile_alert_above"] = *p.reconcileAlertAbove;
        if (p.twoWay)
            opts["direction"] = "both";
        if (p.addColumn)
            opts["add_column"] = *p.addColumn;
        if (p.dropColumn)
            opts["drop_column"] = *p.dropColumn;
        if (p.typeChange)
            opts["type_change"] = *p.typeChange;
        if (p.renameColumn)
            opts["rename_column"] = *p.renameColumn;
        if (!p.includeTables.empty())
            opts["include_tables"] = p.includeTables;
        if (!p.excludeTables.empty())
            opts["exclude_tables"] = p.excludeTables;
        if (p.tableDefaults) {
            json d = {{"keys", tableSpecJson(p.tableDefaults->keys)}};
            if (p.tableDefaults->strategy)
                d["strategy"] = std::string(toString(*p.tableDefaults->strategy));
            opts["table_defaults"] = std::move(d);
        }
        if (p.discoverEvery)
            opts["discover_every_ms"] = p.discoverEvery->count();
        pst.bindText(1, p.name).bind(2, pos++).bindText(3, p.source).bindText(4, p.target).bind(5, p.targetSchema);
        pst.bindText(6, opts.dump());
        pst.run();
        std::int64_t tpos = 0;
        for (auto &t : p.tables) {
            if (t.discovered) {
                // Only the slot guard's move to cursor sync (and back) is theirs to change.
                dup.reset();
                dup.bindText(1, p.name)
                    .bindText(2, t.table.schema)
                    .bindText(3, t.table.name)
                    .bindText(4, toString(t.strategy))
                    .bind(5, t.cursor)
                    .bind(6, t.fallbackFrom ? std::optional<std::string>(toString(*t.fallbackFrom)) : std::nullopt);
                dup.run();
                continue;
            }
            tst.reset();
            tst.bindText(1, p.name)
                .bindText(2, t.table.schema)
                .bindText(3, t.table.name)
                .bind(4, tpos++)
                .bindText(5, toString(t.strategy))
                .bindText(6, tableSpecJson(t));
            tst.run();
        }
    }
    tx.commit();
    return sum;
}

namespace {
constexpr const char *kStatusCols = "pipeline, source_schema, source_table, strategy, state, message, checkpoint, "
                                    "version, rows_applied, last_sync_at_ms, fresh_as_of_ms, progress, updated_at_ms, "
                                    "backfill_rows, backfill_total, backfill_eta_seconds";

StateStore::TableStatus readStatus(SqliteStmt &st)
{
    StateStore::TableStatus s;
    s.pipeline = st.text(0);
    s.table = {st.text(1), st.text(2)};
    s.strategy = strategyFromString(st.text(3)).value_or(Strategy::FullRefresh);
    s.state = tableStateFrom(st.text(4)).value_or(TableState::Idle);
    s.message = st.text(5);
    s.checkpoint = st.text(6);
    s.version = st.int64(7);
    s.rowsApplied = st.int64(8);
    if (!st.isNull(9))
        s.lastSyncAtMs = st.int64(9);
    if (!st.isNull(10))
        s.freshAsOfMs = st.int64(10);
    if (!st.isNull(11))
        s.progress = st.real(11);
    s.updatedAtMs = st.int64(12);
    if (!st.isNull(13))
        s.backfillRows = st.int64(13);
    if (!st.isNull(14))
        s.backfillTotal = st.int64(14);
    if (!st.isNull(15))
        s.backfillEtaSeconds = st.real(15);
    return s;
}
} // namespace

void StateStore::upsertTableStatus(const TableStatus &s)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare(std::string("INSERT OR REPLACE INTO table_status (") + kStatusCols +
                           ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
    st.bindText(1, s.pipeline).bindText(2, s.table.schema).bindText(3, s.table.name);
    st.bindText(4, toString(s.strategy))
        .bindText(5, toString(s.state))
        .bindText(6, s.message)
        .bindText(7, s.checkpoint);
    st.bind(8, s.version).bind(9, s.rowsApplied);
    s.lastSyncAtMs ? st.bind(10, *s.lastSyncAtMs) : st.bindNull(10);
    s.freshAsOfMs ? st.bind(11, *s.freshAsOfMs) : st.bindNull(11);
    s.progress ? st.bind(12, *s.progress) : st.bindNull(12);
    st.bind(13, s.updatedAtMs ? s.updatedAtMs : nowMs());
    s.backfillRows ? st.bind(14, *s.backfillRows) : st.bindNull(14);
    s.backfillTotal ? st.bind(15, *s.backfillTotal) : st.bindNull(15);
    s.backfillEtaSeconds ? st.bind(16, *s.backfillEtaSeconds) : st.bindNull(16);
    st.run();
}

void StateStore::setTableState(const std::string &pipeline, const TableRef &table, Strategy strategy, TableState state,
                               const std::string &message, std::optional<double> progress)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare(
        "INSERT INTO table_status (pipeline, source_schema, source_table, strategy, state, message, progress, "
        "updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
        "ON CONFLICT (pipeline, source_schema, source_table) DO UPDATE SET strategy = excluded.strategy, "
        "state = excluded.state, message = excluded.message, progress = excluded.progress, "
        "backfill_rows = NULL, backfill_total = NULL, backfill_eta_seconds = NULL, "
        "updated_at_ms = excluded.updated_at_ms");
    st.bindText(1, pipeline).bindText(2, table.schema).bindText(3, table.name).bindText(4, toString(strategy));
    st.bindText(5, toString(state)).bindText(6, message);
    progress ? st.bind(7, *progress) : st.bindNull(7);
    st.bind(8, nowMs());
    st.run();
}

std::optional<StateStore::TableStatus> StateStore::tableStatus(const std::string &pipeline, const TableRef &table)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare(std::string("SELECT ") + kStatusCols +
                           " FROM table_status WHERE pipeline = ?1 AND source_schema = ?2 AND source_table = ?3");
    st.bindText(1, pipeline).bindText(2, table.schema).bindText(3, table.name);
    if (!st.step())
        return std::nullopt;
    return readStatus(st);
}

std::vector<StateStore::TableStatus> StateStore::tableStatuses()
{
    std::lock_guard lock(m_mutex);
    std::vector<TableStatus> out;
    auto st = m_db.prepare(std::string("SELECT ") + kStatusCols + " FROM table_status");
    while (st.step())
        out.push_back(readStatus(st));
    return out;
}

std::int64_t StateStore::startRun(const std::string &pipeline, const TableRef &table, Strategy strategy)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare("INSERT INTO runs (pipeline, source_schema, source_table, strategy, started_at_ms) "
                           "VALUES (?1, ?2, ?3, ?4, ?5)");
    st.bindText(1, pipeline).bindText(2, table.schema).bindText(3, table.name).bindText(4, toString(strategy));
    st.bind(5, nowMs());
    st.run();
    return m_db.lastInsertRowid();
}

void StateStore::finishRun(std::int64_t runId, const std::string &status, std::int64_t rows, const std::string &error)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare("UPDATE runs SET finished_at_ms = ?1, status = ?2, rows = ?3, error = ?4 WHERE id = ?5");
    st.bind(1, nowMs()).bindText(2, status).bind(3, rows).bindText(4, error).bind(5, runId);
    st.run();
}

void StateStore::addEvent(Level level, const std::string &pipeline, const std::string &table, const std::string &kind,
                          const std::string &message)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare("INSERT INTO events (ts_ms, level, pipeline, table_name, kind, message) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    st.bind(1, nowMs()).bindText(2, toString(level)).bindText(3, pipeline).bindText(4, table).bindText(5, kind);
    st.bindText(6, message);
    st.run();
}

std::vector<StateStore::Event> StateStore::events(int limit, const std::string &pipeline, const std::string &table)
{
    std::lock_guard lock(m_mutex);
    std::vector<Event> out;
    auto st = m_db.prepare("SELECT id, ts_ms, level, pipeline, table_name, kind, message FROM events "
                           "WHERE (?1 = '' OR pipeline = ?1) AND (?3 = '' OR table_name = ?3) ORDER BY id DESC "
                           "LIMIT ?2");
    st.bindText(1, pipeline).bind(2, static_cast<std::int64_t>(limit)).bindText(3, table);
    while (st.step())
        out.push_back({st.int64(0), st.int64(1), levelFrom(st.text(2)).value_or(Level::Info), st.text(3), st.text(4),
                       st.text(5), st.text(6)});
    return out;
}

bool StateStore::setPaused(const std::string &pipeline, const TableRef &table, bool paused)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare(paused ? "INSERT OR IGNORE INTO paused_tables (pipeline, source_schema, source_table, "
                                    "paused_at_ms) VALUES (?1, ?2, ?3, ?4)"
                                  : "DELETE FROM paused_tables WHERE pipeline = ?1 AND source_schema = ?2 AND "
                                    "source_table = ?3");
    st.bindText(1, pipeline).bindText(2, table.schema).bindText(3, table.name);
    if (paused)
        st.bind(4, nowMs());
    st.run();
    return m_db.changes() > 0;
}

std::vector<StateStore::PausedTable> StateStore::pausedTables()
{
    std::lock_guard lock(m_mutex);
    std::vector<PausedTable> out;
    auto st = m_db.prepare("SELECT pipeline, source_schema, source_table, paused_at_ms FROM paused_tables ORDER BY "
                           "pipeline, source_schema, source_table");
    while (st.step())
        out.push_back({st.text(0), {st.text(1), st.text(2)}, st.int64(3)});
    return out;
}

void StateStore::addLagSample(const LagSample &s)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare("INSERT INTO lag_samples (pipeline, table_name, ts_ms, lag_seconds, rows_per_second) "
                           "VALUES (?1, ?2, ?3, ?4, ?5)");
    st.bindText(1, s.pipeline).bindText(2, s.table).bind(3, s.tsMs).bind(4, s.lagSeconds).bind(5, s.rowsPerSecond);
    st.run();
}

std::vector<StateStore::LagSample> StateStore::lagSamples(const std::string &pipeline, const std::string &table,
                                                          std::int64_t sinceMs)
{
    std::lock_guard lock(m_mutex);
    std::vector<LagSample> out;
    auto st = m_db.prepare("SELECT ts_ms, lag_seconds, rows_per_second FROM lag_samples WHERE pipeline = ?1 AND "
                           "table_name = ?2 AND ts_ms >= ?3 ORDER BY ts_ms");
    st.bindText(1, pipeline).bindText(2, table).bind(3, sinceMs);
    while (st.step())
        out.push_back({pipeline, table, st.int64(0), st.real(1), st.real(2)});
    return out;
}

void StateStore::pruneLagSamples(std::int64_t now, std::int64_t keepMs)
{
    // Older than an hour: keep the worst (highest lag) sample of each minute.
    pruneSamples("lag_samples", "pipeline, table_name", "lag_seconds", now, keepMs);
}

void StateStore::pruneSamples(const char *table, const char *series, const char *worst, std::int64_t now,
                              std::int64_t keepMs)
{
    std::lock_guard lock(m_mutex);
    SqliteTransaction tx(m_db);
    auto del = m_db.prepare(std::string("DELETE FROM ") + table + " WHERE ts_ms < ?1");
    del.bind(1, now - keepMs);
    del.run();
    auto thin = m_db.prepare(std::string("DELETE FROM ") + table + " WHERE ts_ms < ?1 AND rowid NOT IN (" +
                             " SELECT rowid FROM (SELECT rowid, ROW_NUMBER() OVER (PARTITION BY " + series +
                             ", ts_ms / 60000 ORDER BY " + worst + " DESC) AS rn FROM " + table +
                             " WHERE ts_ms < ?1) WHERE rn = 1)");
    thin.bind(1, now - 3'600'000);
    thin.run();
    tx.commit();
}

void StateStore::addSlotSamples(const std::vector<SlotSample> &samples)
{
    if (samples.empty())
        return;
    std::lock_guard lock(m_mutex);
    SqliteTransaction tx(m_db);
    auto st = m_db.prepare("INSERT INTO slot_samples (source, slot, ts_ms, retained_bytes, unconfirmed_bytes, "
                           "safe_wal_size) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    for (const auto &s : samples) {
        st.reset();
        st.bindText(1, s.source).bindText(2, s.slot).bind(3, s.tsMs);
        s.retainedBytes ? st.bind(4, *s.retainedBytes) : st.bindNull(4);
        s.unconfirmedBytes ? st.bind(5, *s.unconfirmedBytes) : st.bindNull(5);
        s.safeWalSize ? st.bind(6, *s.safeWalSize) : st.bindNull(6);
        st.run();
    }
    tx.commit();
}

std::vector<StateStore::SlotSample> StateStore::slotSamples(const std::string &source, const std::string &slot,
                                                            std::int64_t sinceMs)
{
    std::lock_guard lock(m_mutex);
    std::vector<SlotSample> out;
    auto st = m_db.prepare("SELECT ts_ms, retained_bytes, unconfirmed_bytes, safe_wal_size FROM slot_samples WHERE "
                           "source = ?1 AND slot = ?2 AND ts_ms >= ?3 ORDER BY ts_ms");
    st.bindText(1, source).bindText(2, slot).bind(3, sinceMs);
    auto opt = [&](int col) { return st.isNull(col) ? std::nullopt : std::optional<std::int64_t>(st.int64(col)); };
    while (st.step())
        out.push_back({source, slot, st.int64(0), opt(1), opt(2), opt(3)});
    return out;
}

void StateStore::pruneSlotSamples(std::int64_t now, std::int64_t keepMs)
{
    pruneSamples("slot_samples", "source, slot", "retained_bytes", now, keepMs);
}

} // namespace driftless::core

namespace driftless::core {

std::int64_t StateStore::addReconcileReport(const std::string &pipeline, std::int64_t startedMs,
                                            std::int64_t finishedMs, std::int64_t drift, const std::string &reportJson,
                                            const std::vector<ReconcileSummary> &tables)
{
    std::lock_guard lock(m_mutex);
    SqliteTransaction tx(m_db);
    auto st = m_db.prepare("INSERT INTO reconcile_reports (pipeline, started_ms, finished_ms, drift, report) VALUES "
                           "(?1, ?2, ?3, ?4, ?5)");
    st.bindText(1, pipeline).bind(2, startedMs).bind(3, finishedMs).bind(4, drift).bindText(5, reportJson);
    st.run();
    const std::int64_t id = m_db.lastInsertRowid();
    auto row = m_db.prepare("INSERT OR REPLACE INTO reconcile_tables (report_id, pipeline, table_name, finished_ms, "
                            "source_rows, target_rows, missing, extra, different, in_flight, drift_ratio, error) "
                            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
    for (const auto &t : tables) {
        row.reset();
        row.bind(1, id).bindText(2, pipeline).bindText(3, t.table).bind(4, finishedMs).bind(5, t.sourceRows);
        row.bind(6, t.targetRows).bind(7, t.missing).bind(8, t.extra).bind(9, t.different).bind(10, t.inFlight);
        row.bind(11, t.driftRatio).bindText(12, t.error);
        row.run();
    }
    tx.commit();
    return id;
}

void StateStore::updateReconcileReport(std::int64_t id, const std::string &reportJson)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare("UPDATE reconcile_reports SET report = ?2 WHERE id = ?1");
    st.bind(1, id).bindText(2, reportJson);
    st.run();
}

std::optional<std::string> StateStore::reconcileReport(std::int64_t id)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare("SELECT report FROM reconcile_reports WHERE id = ?1");
    st.bind(1, id);
    if (!st.step())
        return std::nullopt;
    return st.text(0);
}

namespace {
constexpr const char *kSummaryColumns = "report_id, pipeline, table_name, finished_ms, source_rows, target_rows, "
                                        "missing, extra, different, in_flight, drift_ratio, error";

StateStore::ReconcileSummary summaryFrom(SqliteStmt &st)
{
    StateStore::ReconcileSummary s;
    s.reportId = st.int64(0);
    s.pipeline = st.text(1);
    s.table = st.text(2);
    s.finishedMs = st.int64(3);
    s.sourceRows = st.int64(4);
    s.targetRows = st.int64(5);
    s.missing = st.int64(6);
    s.extra = st.int64(7);
    s.different = st.int64(8);
    s.inFlight = st.int64(9);
    s.driftRatio = st.real(10);
    s.error = st.text(11);
    return s;
}
} // namespace

std::vector<StateStore::ReconcileSummary> StateStore::reconcileSummaries(int limit, const std::string &pipeline)
{
    std::lock_guard lock(m_mutex);
    // With the history's marks: whether a repair of the table (one without an error) was recorded
    // in the report (recordRepair), and the next report of the same table.
    auto st = m_db.prepare(
        std::string("SELECT ") + kSummaryColumns +
        ", EXISTS (SELECT 1 FROM reconcile_reports rr, json_each(CASE WHEN json_valid(rr.report) THEN rr.report "
        "ELSE '{}' END, '$.repairs') rp, json_each(rp.value, '$.tables') rt WHERE rr.id = r.report_id AND "
        "json_extract(rt.value, '$.table') = r.table_name AND json_extract(rt.value, '$.error') IS NULL), "
        "(SELECT min(x.report_id) FROM reconcile_tables x WHERE x.pipeline = r.pipeline AND x.table_name = "
        "r.table_name AND x.report_id > r.report_id) FROM reconcile_tables r WHERE (?1 = '' OR pipeline = ?1) ORDER "
        "BY report_id DESC, table_name LIMIT ?2");
    st.bindText(1, pipeline).bind(2, static_cast<std::int64_t>(limit));
    std::vector<ReconcileSummary> out;
    while (st.step()) {
        out.push_back(summaryFrom(st));
        out.back().repaired = st.int64(12) != 0;
        out.back().supersededBy = st.isNull(13) ? 0 : st.int64(13);
    }
    return out;
}

std::vector<StateStore::ReconcileSummary> StateStore::latestReconciles()
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare(std::string("SELECT ") + kSummaryColumns +
                           " FROM reconcile_tables r WHERE report_id = (SELECT max(report_id) FROM reconcile_tables x "
                           "WHERE x.pipeline = r.pipeline AND x.table_name = r.table_name) ORDER BY pipeline, "
                           "table_name");
    std::vector<ReconcileSummary> out;
    while (st.step())
        out.push_back(summaryFrom(st));
    return out;
}

} // namespace driftless::core

namespace driftless::core {

void StateStore::addPendingReconcile(const PendingReconcile &p)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare("INSERT OR REPLACE INTO pending_reconciles (pipeline, table_name, reason, since_ms, repair) "
                           "VALUES (?1, ?2, ?3, ?4, ?5)");
    st.bindText(1, p.pipeline).bindText(2, p.table).bindText(3, p.reason).bind(4, p.sinceMs);
    st.bind(5, static_cast<std::int64_t>(p.repair ? 1 : 0));
    st.run();
}

std::vector<StateStore::PendingReconcile> StateStore::pendingReconciles()
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare("SELECT pipeline, table_name, reason, since_ms, repair FROM pending_reconciles ORDER BY "
                           "since_ms");
    std::vector<PendingReconcile> out;
    while (st.step())
        out.push_back({st.text(0), st.text(1), st.text(2), st.int64(3), st.int64(4) != 0});
    return out;
}

void StateStore::clearPendingReconcile(const std::string &pipeline, const std::string &table)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare("DELETE FROM pending_reconciles WHERE pipeline = ?1 AND table_name = ?2");
    st.bindText(1, pipeline).bindText(2, table);
    st.run();
}

std::int64_t StateStore::addConflict(const ConflictRecord &c)
{
    std::lock_guard lock(m_mutex);
    auto find = m_db.prepare("SELECT id FROM conflicts WHERE pipeline = ?1 AND table_name = ?2 AND row_key = ?3 AND "
                             "status = 'open'");
    find.bindText(1, c.pipeline).bindText(2, c.table).bindText(3, c.key);
    if (find.step()) {
        const std::int64_t id = find.int64(0);
        auto up = m_db.prepare("UPDATE conflicts SET columns = ?2, source_version = ?3, target_version = ?4, base = ?5 "
                               "WHERE id = ?1");
        up.bind(1, id).bindText(2, c.columns).bindText(3, c.source).bindText(4, c.target).bindText(5, c.base);
        up.run();
        return id;
    }
    auto st =
        m_db.prepare("INSERT INTO conflicts (pipeline, table_name, row_key, columns, source_version, "
                     "target_version, base, detected_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id");
    st.bindText(1, c.pipeline).bindText(2, c.table).bindText(3, c.key).bindText(4, c.columns).bindText(5, c.source);
    st.bindText(6, c.target).bindText(7, c.base).bind(8, nowMs());
    st.step();
    return st.int64(0);
}

namespace {
constexpr const char *kConflictColumns = "id, pipeline, table_name, row_key, columns, source_version, target_version, "
                                         "base, detected_at_ms, status, coalesce(resolution, '')";
} // namespace

std::vector<StateStore::Conflict> StateStore::conflicts(const std::string &pipeline, bool includeResolved)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare(std::string("SELECT ") + kConflictColumns +
                           " FROM conflicts WHERE (?1 = '' OR pipeline = ?1) AND (?2 OR status = 'open') ORDER BY id");
    st.bindText(1, pipeline).bind(2, static_cast<std::int64_t>(includeResolved ? 1 : 0));
    std::vector<Conflict> out;
    while (st.step())
        out.push_back({st.int64(0),
                       {st.text(1), st.text(2), st.text(3), st.text(4), st.text(5), st.text(6), st.text(7)},
                       st.int64(8),
                       st.text(9),
                       st.text(10)});
    return out;
}

std::optional<StateStore::Conflict> StateStore::conflict(std::int64_t id)
{
    std::lock_guard lock(m_mutex);
    auto st = m_db.prepare(std::string("SELECT ") + kConflictColumns + " FROM conflicts WHERE id = ?1");
    st.bind(1, id);
    if (!st.step())
        return std::nullopt;
    return Conflict{st.int64(0),
                    {st.text(1), st.text(2), st.text(3), st.text(4), st.text(5), st.text(6), st.text(7)},
                    st.int64(8),
                    st.text(9),
                    st.text(10)};
}

void StateStore::markConflictResolved(std::int64_t id, const std::string &resolution)
{
    std::lock_guard lock(m_mutex);
    auto st =
        m_db.prepare("UPDATE conflicts SET status = 'resolved', resolved_at_ms = ?2, resolution = ?3 WHERE id = ?1");
    st.bind(1, id).bind(2, nowMs()).bindText(3, resolution);
    st.run();
}

} // namespace driftless::core
