#include "core/engine/endpoints/tablediscovery.h"

#include "core/db/mysqlcatalog.h"
#include "core/db/mysqlconnection.h"
#include "core/db/pgconnection.h"
#include "core/engine/endpoints/endpointprobe.h"
#include "core/engine/endpoints/mysqlpreflight.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/model/duration.h"
#include "core/model/error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <tuple>

namespace driftless::core {

namespace {

/// One row per user table: size, stats, key, candidate cursor columns and the columns (names
/// joined by the unit separator, a column's name, type, category and array flag by the record
/// separator: identifiers do not use either in practice).
constexpr const char *kDiscoverSql = R"sql(
SELECT n.nspname, c.relname, c.reltuples::float8, pg_total_relation_size(c.oid),
       coalesce(s.n_tup_ins, 0), coalesce(s.n_tup_upd, 0), coalesce(s.n_tup_del, 0),
       has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT'),
       (SELECT string_agg(a.attname, chr(31) ORDER BY k.ord)
          FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
         WHERE i.indrelid = c.oid AND i.indisprimary AND k.ord <= i.indnkeyatts),
       (SELECT string_agg(a.attname, chr(31) ORDER BY
                 a.attnotnull DESC,
                 EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indkey[0] = a.attnum) DESC,
                 (a.attname ~* '(updat|modif|chang)') DESC, a.attnum)
          FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
           AND a.atttypid IN ('timestamptz'::regtype, 'timestamp'::regtype, 'date'::regtype)),
       c.relreplident,
       (SELECT string_agg(a.attname, chr(31) ORDER BY k.ord)
          FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
         WHERE i.indrelid = c.oid AND i.indisreplident AND k.ord <= i.indnkeyatts),
       (SELECT string_agg(a.attname || chr(30) || format_type(a.atttypid, a.atttypmod) || chr(30) ||
                          bt.typcategory::text || chr(30) || (t.oid <> et.oid)::text, chr(31) ORDER BY a.attnum)
          FROM pg_attribute a
          JOIN pg_type t ON t.oid = a.atttypid
          JOIN pg_type et ON et.oid = CASE WHEN t.typcategory = 'A' AND t.typelem <> 0 THEN t.typelem ELSE t.oid END
          JOIN pg_type bt ON bt.oid = CASE WHEN et.typtype = 'd' THEN et.typbasetype ELSE et.oid END
         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
       (SELECT ic.relname || chr(30) || string_agg(a.attname, chr(31) ORDER BY k.ord)
          FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
          CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
         WHERE i.indrelid = c.oid AND i.indisunique AND i.indisvalid AND i.indimmediate AND i.indpred IS NULL
           AND i.indexprs IS NULL AND k.ord <= i.indnkeyatts
         GROUP BY ic.relname, i.indnkeyatts HAVING bool_and(a.attnotnull)
         ORDER BY i.indnkeyatts, ic.relname LIMIT 1)
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
 WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
   AND n.nspname NOT IN ('information_schema', '_driftless') AND n.nspname NOT LIKE 'pg\_%'
 ORDER BY 1, 2
)sql";

std::vector<std::string> splitNames(const std::optional<std::string> &list)
{
    std::vector<std::string> out;
    if (!list || list->empty())
        return out;
    std::size_t start = 0;
    for (;;) {
        const auto comma = list->find('\x1f', start);
        out.push_back(list->substr(start, comma - start));
        if (comma == std::string::npos)
            return out;
        start = comma + 1;
    }
}

std::string rows(double n)
{
    return std::to_string(static_cast<long long>(std::llround(n)));
}

/// How big a small table is, in what is known: its row estimate, or only its size on disk when
/// it was never analyzed (an estimate of 0 rows would say something untrue).
std::string smallSize(const DiscoveredTable &t)
{
    return t.analyzed ? "about " + rows(t.estimatedRows) + " rows" : humanBytes(t.totalBytes) + ", never analyzed";
}

// MySQL: information_schema in three reads (tables, index columns, temporal columns) rather than
// one join, which MariaDB plans poorly over information_schema. `%s` is the database filter.
constexpr const char *kMysqlTablesSql =
    "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS, COALESCE(DATA_LENGTH, 0) + COALESCE(INDEX_LENGTH, 0) "
    "FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND ";
constexpr const char *kMysqlIndexesSql =
    "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, NULLABLE, SUB_PART "
    "FROM information_schema.STATISTICS WHERE ";
constexpr const char *kMysqlColumnsSql =
    "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, NUMERIC_PRECISION, NUMERIC_SCALE, "
    "DATETIME_PRECISION, CHARACTER_MAXIMUM_LENGTH FROM information_schema.COLUMNS WHERE ";
constexpr const char *kMysqlTemporalSql =
    "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, IS_NULLABLE, ORDINAL_POSITION "
    "FROM information_schema.COLUMNS WHERE DATA_TYPE IN ('datetime', 'timestamp', 'date') AND ";
/// Row operations per table since the server started (or the summary was truncated).
constexpr const char *kMysqlWritesSql =
    "SELECT OBJECT_SCHEMA, OBJECT_NAME, COUNT_INSERT, COUNT_UPDATE, COUNT_DELETE "
    "FROM performance_schema.table_io_waits_summary_by_table WHERE OBJECT_TYPE = 'TABLE' AND ";

/// Names like updated_at, modified, last_changed: the usual cursor columns.
bool looksLikeChangeTime(std::string name)
{
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const char *part : {"updat", "modif", "chang"})
        if (name.find(part) != std::string::npos)
            return true;
    return false;
}

long long toInt(const std::optional<std::string> &v)
{
    return v ? std::atoll(v->c_str()) : 0;
}

} // namespace

std::vector<DiscoveredTable> discoverMysqlTables(MysqlConnection &conn, const std::string &database)
{
    // information_schema compares names without case: the exact match is made here.
    auto filter = [&](const char *column) {
        return database.empty()
                   ? std::string(column) + " NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')"
                   : std::string(column) + " = ?";
    };
    std::vector<std::optional<std::string>> params;
    if (!database.empty())
        params.emplace_back(database);
    auto wanted = [&](const std::optional<std::string> &schema) { return database.empty() || schema == database; };

    std::vector<DiscoveredTable> out;
    std::map<TableRef, std::size_t> at;
    const auto tables = conn.query(kMysqlTablesSql + filter("TABLE_SCHEMA"), params);
    for (const auto &r : tables.rows) {
        if (!wanted(r[0]))
            continue;
        DiscoveredTable t;
        t.table = TableRef{r[0].value_or(""), r[1].value_or("")};
        t.analyzed = r[2].has_value();
        t.estimatedRows = static_cast<double>(std::max(0LL, toInt(r[2])));
        t.totalBytes = toInt(r[3]);
        t.writesKnown = false;
        out.push_back(std::move(t));
    }
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.table < b.table; });
    for (std::size_t i = 0; i < out.size(); ++i)
        at[out[i].table] = i;
    auto table = [&](const std::vector<std::optional<std::string>> &r) -> DiscoveredTable * {
        const auto it = at.find(TableRef{r[0].value_or(""), r[1].value_or("")});
        return it == at.end() ? nullptr : &out[it->second];
    };

    // Primary keys in key order; the columns that lead an index (a cursor there reads by range).
    std::set<std::tuple<std::string, std::string, std::string>> leading;
    std::map<TableRef, std::map<long long, std::string>> keys;
    // Without a primary key: unique indexes, with whether each can key the table (every column
    // NOT NULL and whole, as mysqlcatalog::describeTable picks).
    struct Unique {
        std::map<long long, std::string> columns;
        bool usable = true;
    };
    std::map<TableRef, std::map<std::string, Unique>> uniques;
    for (const auto &r : conn.query(kMysqlIndexesSql + filter("TABLE_SCHEMA"), params).rows) {
        DiscoveredTable *t = table(r);
        if (!t)
            continue;
        const std::string column = r[4].value_or("");
        if (r[2] == "PRIMARY")
            keys[t->table][toInt(r[3])] = column;
        else if (toInt(r[5]) == 0) {
            Unique &u = uniques[t->table][r[2].value_or("")];
            u.columns[toInt(r[3])] = column;
            u.usable = u.usable && r[4] && r[6].value_or("") != "YES" && !r[7];
        }
        if (toInt(r[3]) == 1)
            leading.emplace(t->table.schema, t->table.name, column);
    }
    for (auto &[ref, columns] : keys)
        for (const auto &[seq, column] : columns)
            out[at[ref]].primaryKey.push_back(column);
    for (auto &[ref, indexes] : uniques) {
        DiscoveredTable &t = out[at[ref]];
        if (!t.primaryKey.empty())
            continue;
        const std::pair<const std::string, Unique> *best = nullptr;
        for (const auto &entry : indexes)
            if (entry.second.usable && (!best || entry.second.columns.size() < best->second.columns.size()))
                best = &entry;
        if (!best)
            continue;
        t.keyIndex = best->first;
        for (const auto &[seq, column] : best->second.columns)
            t.primaryKey.push_back(column);
    }

    // Ranked as for Postgres: NOT NULL, then indexed, then named like a change time, then order.
    struct Candidate {
        bool notNull, indexed, named;
        long long position;
        std::string name;
    };
    std::map<TableRef, std::vector<Candidate>> candidates;
    for (const auto &r : conn.query(kMysqlTemporalSql + filter("TABLE_SCHEMA"), params).rows) {
        DiscoveredTable *t = table(r);
        if (!t)
            continue;
        const std::string column = r[2].value_or("");
        candidates[t->table].push_back({r[3] == "NO", leading.count({t->table.schema, t->table.name, column}) > 0,
                                        looksLikeChangeTime(column), toInt(r[4]), column});
    }
    for (auto &[ref, list] : candidates) {
        std::sort(list.begin(), list.end(), [](const Candidate &a, const Candidate &b) {
            return std::tie(b.notNull, b.indexed, b.named, a.position) <
                   std::tie(a.notNull, a.indexed, a.named, b.position);
        });
        for (const auto &c : list)
            out[at[ref]].cursorCandidates.push_back(c.name);
    }

    // Every column with the category the engine gives its type (mysqlcatalog::pgColumnFor).
    for (const auto &r : conn.query(kMysqlColumnsSql + filter("TABLE_SCHEMA") +
                                        " ORDER BY TABLE_SCHEMA, TABLE_NAME, "
                                        "ORDINAL_POSITION",
                                    params)
                             .rows) {
        DiscoveredTable *t = table(r);
        if (!t)
            continue;
        mysqlcatalog::MysqlColumn c;
        c.name = r[2].value_or("");
        c.dataType = r[3].value_or("");
        std::transform(c.dataType.begin(), c.dataType.end(), c.dataType.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        c.columnType = r[4].value_or("");
        c.isUnsigned = c.columnType.find("unsigned") != std::string::npos;
        c.precision = static_cast<int>(toInt(r[5]));
        c.scale = static_cast<int>(toInt(r[6]));
        c.fsp = static_cast<int>(toInt(r[7]));
        c.maxChars = toInt(r[8]);
        DiscoveredColumn d{c.name, c.columnType, 'U', false};
        try {
            d.category = mysqlcatalog::pgColumnFor(c).category;
        } catch (const Error &) {
            // A type Driftless cannot carry: listed all the same; apply says what to do.
        }
        t->columns.push_back(std::move(d));
    }

    // Write counters only where the server keeps them (performance_schema is off by default on
    // MariaDB, on in MySQL 8) and the user may read them; otherwise they stay unknown.
    if (conn.scalar("SELECT @@performance_schema").value_or("0") == "1") {
        try {
            for (const auto &r : conn.query(kMysqlWritesSql + filter("OBJECT_SCHEMA"), params).rows) {
                if (DiscoveredTable *t = table(r)) {
                    t->inserts = toInt(r[2]);
                    t->updates = toInt(r[3]);
                    t->deletes = toInt(r[4]);
                    t->writesKnown = true;
                }
            }
        } catch (const SqlError &) {
            // No SELECT on performance_schema: the counts stay unknown.
        }
    }
    return out;
}

std::vector<DiscoveredTable> discoverTables(PgConnection &conn)
{
    auto r = conn.exec(kDiscoverSql);
    std::vector<DiscoveredTable> out;
    out.reserve(static_cast<std::size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) {
        DiscoveredTable t;
        t.table = TableRef{r.text(i, 0), r.text(i, 1)};
        const double tuples = std::strtod(r.text(i, 2).c_str(), nullptr);
        t.analyzed = tuples >= 0;
        t.estimatedRows = std::max(0.0, tuples);
        t.totalBytes = r.toInt(i, 3);
        t.inserts = r.toInt(i, 4);
        t.updates = r.toInt(i, 5);
        t.deletes = r.toInt(i, 6);
        t.readable = r.toBool(i, 7);
        t.primaryKey = splitNames(r.optText(i, 8));
        if (t.primaryKey.empty() && !r.isNull(i, 13)) {
            // No primary key: its unique index on NOT NULL columns keys it (pgcatalog::findTable).
            const std::string uk = r.text(i, 13);
            const auto sep = uk.find('\x1e');
            t.keyIndex = uk.substr(0, sep);
            t.primaryKey = splitNames(uk.substr(sep + 1));
        }
        t.cursorCandidates = splitNames(r.optText(i, 9));
        // As pgcatalog::replicaIdentityProblem: the old row of an update or delete must carry
        // the key, or CDC cannot match it to its target row.
        const std::string identity = r.text(i, 10);
        const auto identityColumns = splitNames(r.optText(i, 11));
        if (!t.keyIndex.empty() && identity == "d") {
            t.cdcRefused = "no primary key, and REPLICA IDENTITY DEFAULT sends no old key with updates and deletes "
                           "(the source would refuse them once the table is published); ALTER TABLE " +
                           t.table.display() + " REPLICA IDENTITY USING INDEX " + displayIdent(t.keyIndex);
        } else if (identity == "n") {
            t.cdcRefused = "REPLICA IDENTITY NOTHING: updates and deletes carry no old row; ALTER TABLE " +
                           t.table.display() + " REPLICA IDENTITY DEFAULT";
        } else if (identity == "i") {
            for (const auto &k : t.primaryKey)
                if (std::find(identityColumns.begin(), identityColumns.end(), k) == identityColumns.end()) {
                    t.cdcRefused = "its REPLICA IDENTITY index leaves out primary-key column " + displayIdent(k) +
                                   ", so deletes cannot be matched; ALTER TABLE " + t.table.display() +
                                   " REPLICA IDENTITY DEFAULT";
                    break;
                }
        }
        for (const auto &col : splitNames(r.optText(i, 12))) {
            std::vector<std::string> f;
            std::size_t start = 0;
            for (;;) {
                const auto sep = col.find('\x1e', start);
                f.push_back(col.substr(start, sep - start));
                if (sep == std::string::npos)
                    break;
                start = sep + 1;
            }
            if (f.size() == 4)
                t.columns.push_back({f[0], f[1], f[2].empty() ? 'U' : f[2][0], f[3] == "true"});
        }
        out.push_back(std::move(t));
    }
    return out;
}

TableSchema discoveredSchema(const DiscoveredTable &t)
{
    TableSchema s;
    s.table = t.table;
    for (const auto &c : t.columns) {
        ColumnInfo info;
        info.name = c.name;
        info.typeSql = c.type;
        info.category = c.category;
        info.isArray = c.isArray;
        s.columns.push_back(std::move(info));
    }
    for (const auto &k : t.primaryKey)
        if (int i = s.columnIndex(k); i >= 0)
            s.primaryKey.push_back(i);
    s.keyIndex = t.keyIndex;
    return s;
}

SourceAbilities mysqlAbilities(const MysqlProbe &probe)
{
    SourceAbilities a;
    for (const auto &b : probe.binlog) {
        // As MysqlCdcPipeline: a short retention is a warning, not a stop.
        if (b.setting.find("expire") != std::string::npos)
            continue;
        a.cdcRefused = "the source's " + b.setting + " is " + b.found + "; " + b.fix;
        return a;
    }
    if (!probe.canReplicate) {
        // CURRENT_USER() is name@host; the GRANT wants 'name'@'host'.
        const auto at = probe.user.rfind('@');
        const std::string grantee = at == std::string::npos ? mysqlLiteral(probe.user)
                                                            : mysqlLiteral(probe.user.substr(0, at)) + "@" +
                                                                  mysqlLiteral(probe.user.substr(at + 1));
        a.cdcRefused = "the source's user may not read the binlog: GRANT REPLICATION SLAVE ON *.* TO " + grantee;
    }
    return a;
}

Recommendation recommendStrategy(const DiscoveredTable &t, const SourceAbilities &source)
{
    Recommendation rec;
    if (!t.cursorCandidates.empty())
        rec.cursor = t.cursorCandidates.front();
    if (t.primaryKey.empty()) {
        const std::string why = "no primary key: cursor sync and CDC merge rows by key";
        rec.refused[Strategy::Cursor] = why;
        rec.refused[Strategy::Cdc] = why;
    }
    if (t.cursorCandidates.empty() && !rec.refused.count(Strategy::Cursor))
        rec.refused[Strategy::Cursor] = "no timestamp or date column for a cursor to follow";
    if (t.cdcRefused && !rec.refused.count(Strategy::Cdc))
        rec.refused[Strategy::Cdc] = *t.cdcRefused;
    if (source.cdcRefused && !rec.refused.count(Strategy::Cdc))
        rec.refused[Strategy::Cdc] = *source.cdcRefused;
    else if (!source.logicalWal && !rec.refused.count(Strategy::Cdc))
        rec.refused[Strategy::Cdc] = "the source's wal_level is not logical";
    else if (!source.canReplicate && !rec.refused.count(Strategy::Cdc))
        rec.refused[Strategy::Cdc] = "the source's user may not replicate";

    const bool cursorOk = !rec.refused.count(Strategy::Cursor);
    const bool cdcOk = !rec.refused.count(Strategy::Cdc);
    const std::int64_t churn = t.updates + t.deletes;
    const bool small = t.estimatedRows <= kSmallTableRows && t.totalBytes <= kSmallTableBytes;
    // "Rarely written": fewer changes since the stats reset than the table has rows.
    const bool quiet = static_cast<double>(t.inserts + churn) <= std::max(t.estimatedRows, 1000.0);
    // "Busy with deletes": deletes happen, and changes are at least a tenth of the table.
    const bool busyWithDeletes =
        t.writesKnown && t.deletes > 0 && static_cast<double>(churn) >= 0.1 * std::max(t.estimatedRows, 1.0);

    if (t.primaryKey.empty()) {
        rec.strategy = Strategy::FullRefresh;
        rec.reason = "no primary key: only a full refresh can copy it exactly";
    } else if (small && !t.writesKnown) {
        rec.strategy = Strategy::FullRefresh;
        rec.reason = "small (" + smallSize(t) + "): a full copy costs little and is always exact";
    } else if (small && quiet) {
        rec.strategy = Strategy::FullRefresh;
        rec.reason = "small (" + smallSize(t) +
                     ") and rarely written: a full copy costs "
                     "little and is always exact";
    } else if (busyWithDeletes && cdcOk) {
        rec.strategy = Strategy::Cdc;
        rec.reason = "busy (" + std::to_string(t.updates) + " updates, " + std::to_string(t.deletes) +
                     " deletes since the stats reset): CDC sees deletes, which cursor sync cannot";
    } else if (!t.writesKnown && cdcOk) {
        rec.strategy = Strategy::Cdc;
        rec.reason = "with no write counters to read, deletes cannot be ruled out: CDC sees them, which cursor "
                     "sync cannot";
    } else if (!t.writesKnown && cursorOk) {
        rec.strategy = Strategy::Cursor;
        rec.reason = "CDC is unavailable (" + rec.refused[Strategy::Cdc] + "): cursor sync along " + *rec.cursor +
                     "; with no write counters to read, whether rows are deleted (which cursor sync does not "
                     "see) is unknown";
    } else if (cursorOk && t.deletes == 0) {
        rec.strategy = Strategy::Cursor;
        rec.reason = "no deletes recorded: cursor sync along " + *rec.cursor + " reads only what changed";
    } else if (cdcOk) {
        rec.strategy = Strategy::Cdc;
        rec.reason = t.deletes > 0 ? "rows are deleted: CDC sees deletes, which cursor sync cannot"
                                   : "no cursor column: CDC reads only what changed";
    } else if (cursorOk) {
        rec.strategy = Strategy::Cursor;
        rec.reason = "CDC is unavailable (" + rec.refused[Strategy::Cdc] + "): cursor sync along " + *rec.cursor +
                     "; deletes are not seen until a reconciliation";
    } else {
        rec.strategy = Strategy::FullRefresh;
        rec.reason = "neither cursor sync (" + rec.refused[Strategy::Cursor] + ") nor CDC (" +
                     rec.refused[Strategy::Cdc] + ") can work: full refresh";
    }
    if (!t.keyIndex.empty() && rec.strategy != Strategy::FullRefresh)
        rec.reason += "; no primary key: rows are keyed by unique index " + t.keyIndex + " (NOT NULL columns)";
    return rec;
}

SourceDiscovery discoverSource(const Endpoint &source)
{
    SourceDiscovery d;
    auto refused = [&](const std::string &error, const std::string &hint) {
        d.error = error + (hint.empty() ? std::string() : "; " + hint);
        return d;
    };
    try {
        if (source.kind == EndpointKind::Mysql) {
            const std::string dsn = reachableDsn(source);
            const auto probe = probeMysql(dsn);
            if (!probe.connected)
                return refused(probe.error, probe.hint);
            d.abilities = mysqlAbilities(probe);
            MysqlConnection conn(dsn, source.name);
            d.tables = discoverMysqlTables(conn, conn.dsn().database);
        } else if (source.kind == EndpointKind::Postgres) {
            const std::string dsn = reachableDsn(source);
            const auto probe = probePostgres(dsn);
            if (!probe.connected)
                return refused(probe.error, probe.hint);
            d.abilities = {probe.logicalWal(), probe.canReplicate(), std::nullopt};
            PgConnection conn(dsn);
            d.tables = discoverTables(conn);
        } else {
            return refused("endpoint '" + source.name +
                               "' is a SQLite file, which Driftless writes to but does not read from",
                           {});
        }
        d.ok = true;
    } catch (const std::exception &e) {
        d.error = describe(e);
    }
    return d;
}

} // namespace driftless::core
