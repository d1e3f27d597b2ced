// Opening one table of a pipeline for a comparison or a repair: its source and target sides,
// hashing alike.

#include "core/engine/reconcile/reconcileopen.h"

#include "core/db/pgcatalog.h"
#include "core/db/sqlitedb.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/jobs/tableargs.h"
#include "core/engine/reconcile/reconcilesqlite.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/rows/rowfilter.h"
#include "core/engine/rows/rowhash.h"
#include "core/mergers/softdelete.h"
#include "core/model/duration.h"
#include "core/model/error.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace driftless::core::recon {

namespace {

std::string targetSql(const TargetName &t)
{
    return quoteIdent(t.schema) + "." + quoteIdent(t.name);
}

/// The target table's column names; empty when it has none (openTable then says so).
std::vector<std::string> targetColumnNames(const TableJob &job)
{
    std::vector<std::string> out;
    if (job.target.kind == EndpointKind::Postgres) {
        PgConnection tgt = connectPostgres(job.target, "driftless reconcile");
        auto r = tgt.execParams("SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND "
                                "NOT attisdropped",
                                {targetSql(job.targetName)});
        for (int i = 0; i < r.rows(); ++i)
            out.push_back(r.text(i, 0));
    } else if (job.target.kind == EndpointKind::Sqlite) {
        if (!std::filesystem::exists(job.target.path))
            return out;
        SqliteDb db(job.target.path, SqliteDb::Mode::ReadOnly);
        auto st = db.prepare("SELECT name FROM pragma_table_info(?1)");
        st.bindText(1, job.targetName.name);
        while (st.step())
            out.push_back(st.text(0));
    } else {
        MysqlConnection tgt = connectMysql(job.target);
        auto r = tgt.query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
                           "TABLE_NAME = ?",
                           {job.targetName.name});
        for (size_t i = 0; i < r.size(); ++i)
            out.push_back(r.text(i, 0));
    }
    return out;
}

/// Leaves out the generated columns a target lacks: a CDC target an older version made had
/// none, and they are compared once the sync has added them.
void keepSyncedGenerated(TableSchema &schema, const TableJob &job)
{
    if (std::none_of(schema.columns.begin(), schema.columns.end(), [](const ColumnInfo &c) { return c.generated; }))
        return;
    const auto have = targetColumnNames(job);
    if (have.empty())
        return;
    std::vector<std::string> keyNames;
    for (int k : schema.primaryKey)
        keyNames.push_back(schema.columns[static_cast<size_t>(k)].name);
    std::erase_if(schema.columns, [&](const ColumnInfo &c) {
        return c.generated && std::find(have.begin(), have.end(), c.name) == have.end();
    });
    schema.primaryKey.clear();
    for (const auto &n : keyNames)
        schema.primaryKey.push_back(schema.columnIndex(n));
}

/// The columns Driftless keeps for itself on a side (`_driftless_version`: a two-way table's, or
/// one a source kept from a time it was two-way) belong to that side and are never synced, so
/// they are not compared either. Erased from `schema` (its key remapped) and at the same positions
/// from `parallel`, when given.
void leaveOutOwnColumns(TableSchema &schema, std::vector<mysqlcatalog::MysqlColumn> *parallel = nullptr)
{
    auto own = [](const ColumnInfo &c) { return c.name.rfind("_driftless_", 0) == 0; };
    if (std::none_of(schema.columns.begin(), schema.columns.end(), own))
        return;
    std::vector<std::string> keyNames;
    for (int k : schema.primaryKey)
        keyNames.push_back(schema.columns[static_cast<size_t>(k)].name);
    if (parallel)
        for (size_t i = schema.columns.size(); i-- > 0;)
            if (own(schema.columns[i]) && i < parallel->size())
                parallel->erase(parallel->begin() + static_cast<std::ptrdiff_t>(i));
    std::erase_if(schema.columns, own);
    schema.primaryKey.clear();
    for (const auto &n : keyNames)
        schema.primaryKey.push_back(schema.columnIndex(n));
}

/// `compare --key` and `--columns`: rows matched by the declared key instead of the primary key,
/// and only the named columns (and the key) compared. `parallel` is a MySQL table's own column
/// list, narrowed alike. Throws ConfigError naming a column the table lacks.
void narrowForCompare(const TableJob &job, TableSchema &schema, const ReconcileOptions &opt,
                      std::vector<mysqlcatalog::MysqlColumn> *parallel = nullptr)
{
    if (opt.compareKey.empty() && opt.compareColumns.empty())
        return;
    const auto indexOf = [&](const std::string &name, const char *flag) {
        const int i = schema.columnIndex(name);
        if (i < 0) {
            std::string have;
            for (const auto &c : schema.columns)
                have += (have.empty() ? "" : ", ") + c.name;
            throw ConfigError(std::string(flag) + ": " + job.spec.table.display() + " has no column '" + name +
                              "' (its columns: " + have + ")");
        }
        return i;
    };
    std::vector<std::string> keyNames;
    if (!opt.compareKey.empty()) {
        for (const auto &k : opt.compareKey)
            keyNames.push_back(schema.columns[static_cast<size_t>(indexOf(k, "--key"))].name);
    } else {
        for (int k : schema.primaryKey)
            keyNames.push_back(schema.columns[static_cast<size_t>(k)].name);
    }
    if (!opt.compareColumns.empty()) {
        std::set<std::string> keep(keyNames.begin(), keyNames.end());
        for (const auto &c : opt.compareColumns)
            keep.insert(schema.columns[static_cast<size_t>(indexOf(c, "--columns"))].name);
        for (size_t i = schema.columns.size(); i-- > 0;) {
            if (keep.count(schema.columns[i].name))
                continue;
            if (parallel && i < parallel->size())
                parallel->erase(parallel->begin() + static_cast<std::ptrdiff_t>(i));
            schema.columns.erase(schema.columns.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    schema.primaryKey.clear();
    for (const auto &n : keyNames)
        schema.primaryKey.push_back(schema.columnIndex(n));
}

/// `compare --where`: the condition on the target side too (the source side takes it as a row
/// filter), with `liveOnly` when both hold.
std::optional<std::string> compareTargetFilter(const TableJob &job, const ReconcileOptions &opt,
                                               const std::optional<std::string> &liveOnly)
{
    if (!opt.asTheyAre || !job.spec.where)
        return liveOnly;
    if (!liveOnly)
        return "(" + *job.spec.where + ")";
    return "(" + *job.spec.where + ") AND " + *liveOnly;
}

/// How recent a cursor table's differing row must be to count as in flight.
std::chrono::milliseconds recentWindow(const TableJob &job, const ReconcileOptions &opt)
{
    std::chrono::milliseconds window{10 * 60 * 1000};
    if (opt.recentWindow)
        window = *opt.recentWindow;
    else if (job.spec.lookback)
        if (auto d = parseDuration(*job.spec.lookback))
            window = *d;
    return window;
}

/// The source expression telling whether a row's cursor is within the recent window.
std::string recentExpr(const TableJob &job, const TableSchema &schema, const PgConnection &conn,
                       const ReconcileOptions &opt)
{
    if (job.spec.strategy != Strategy::Cursor)
        return {};
    const std::string cursor = job.spec.cursor.value_or(TableSpec::kDefaultCursor);
    const int idx = schema.columnIndex(cursor);
    if (idx < 0)
        return {};
    const std::chrono::milliseconds window = recentWindow(job, opt);
    const auto &c = schema.columns[static_cast<size_t>(idx)];
    const std::string col = "s." + quoteIdent(c.name);
    const std::string interval = "interval '" + std::to_string(window.count()) + " milliseconds'";
    if (c.baseType == "timestamptz")
        return col + " >= now() - " + interval;
    if (c.baseType == "timestamp")
        return col + " >= (now() AT TIME ZONE " + pgLiteral(conn.serverTimeZone()) + ") - " + interval;
    if (c.baseType == "date")
        return col + " >= ((now() AT TIME ZONE " + pgLiteral(conn.serverTimeZone()) + ") - " + interval + ")::date";
    return {};
}

/// Between two Postgres servers that hash alike: which compared columns hash by their type's own
/// function (the same built-in type on both sides, one pgHashesNatively takes); nullopt when the
/// record hash is not available on both (before Postgres 14) or they disagree on its probe. A
/// mapped source (its projection's types are not the table's) keeps the text hash.
std::optional<std::vector<bool>> recordHashColumns(PgSide &source, PgSide &target, const TableSchema &schema,
                                                   const TableJob &job)
{
    try {
        if (source.recordHashProbe() != target.recordHashProbe())
            return std::nullopt;
        const TableSchema there =
            pgcatalog::describeTable(target.connection(), {job.targetName.schema, job.targetName.name});
        return rowhash::pgRecordHashMask(schema.columns, there.columns);
    } catch (const Error &) {
        return std::nullopt;
    }
}

} // namespace

TableContext openTable(const TableJob &job, const ReconcileOptions &opt)
{
    TableContext ctx;
    ctx.job = job;
    // A MySQL side's canonical text: as Postgres prints the value when the other side is
    // Postgres; as the MySQL readers deliver it when a MySQL source's rows are stored as that text
    // (SQLite, or MySQL/MariaDB on both sides). See reconcilemysql.h.
    const bool pgText = job.source.kind == EndpointKind::Postgres || job.target.kind == EndpointKind::Postgres;
    // Rows are matched by the source's primary key; a table without one is compared as whole rows.
    auto takeKeys = [&] {
        for (int k : ctx.schema.primaryKey)
            ctx.keys.push_back(ctx.schema.columns[static_cast<size_t>(k)]);
    };
    if (job.source.kind == EndpointKind::Postgres) {
        PgConnection src = connectPostgres(job.source, "driftless reconcile");
        // Generated columns compare too: every target holds their values (a Postgres target
        // computes them, the others store what the sync read).
        ctx.schema = pgcatalog::describeTable(src, job.spec.table, job.spec.key);
        ctx.sourceFrom = rowFilterFromSql(ctx.schema, job.spec); // only the rows of its filter
        TableJob recentJob = job;
        if (job.spec.columns && !job.spec.columns->empty()) {
            // The transformed projection against the target: the mapped names and values.
            const TableSchema source = ctx.schema;
            auto mapped = pgMappedSource(job.spec, source);
            if (!mapped.why.empty()) {
                ctx.skipped = mapped.why;
                return ctx;
            }
            ctx.schema = mapped.target;
            ctx.sourceFrom = mapped.from;
            if (job.spec.strategy == Strategy::Cursor) {
                // The cursor under its target name (never masked, maybe renamed).
                const ColumnProjection p(job.spec, source);
                const auto &from = p.sourceColumns();
                const auto at = std::find(from.begin(), from.end(), source.columnIndex(job.spec.cursorColumn()));
                if (at != from.end())
                    recentJob.spec.cursor = p.target().columns[static_cast<size_t>(at - from.begin())].name;
            }
        } else {
            keepSyncedGenerated(ctx.schema, job);
        }
        leaveOutOwnColumns(ctx.schema);
        narrowForCompare(job, ctx.schema, opt);
        takeKeys();
        const std::string recent = recentExpr(recentJob, ctx.schema, src, opt);
        auto side = std::make_unique<PgSide>(std::move(src), ctx.sourceFrom, ctx.schema, ctx.keys, recent);
        ctx.pgSource = side.get();
        ctx.source = std::move(side);
    } else if (job.source.kind == EndpointKind::Mysql) {
        MysqlConnection src = connectMysql(job.source);
        if (job.spec.columns && !job.spec.columns->empty()) {
            ctx.skipped = "a column mapping on a MySQL/MariaDB source is not reconciled yet; re-backfill the table to "
                          "correct it";
            return ctx;
        }
        ctx.myTable = mysqlcatalog::describeTable(src, job.spec.table, job.spec.key);
        leaveOutOwnColumns(ctx.myTable->schema, &ctx.myTable->columns);
        narrowForCompare(job, ctx.myTable->schema, opt, &ctx.myTable->columns);
        // The sync carries generated columns as plain ones (their values), so they compare too.
        ctx.schema = ctx.myTable->schema;
        takeKeys();
        std::optional<MysqlSide::Recent> recent;
        if (job.spec.strategy == Strategy::Cursor) {
            const int idx = ctx.schema.columnIndex(job.spec.cursor.value_or(TableSpec::kDefaultCursor));
            if (idx >= 0)
                recent = MysqlSide::Recent{static_cast<size_t>(idx), recentWindow(job, opt), std::nullopt};
        }
        auto side = std::make_unique<MysqlSide>(std::move(src), job.spec.table, ctx.schema, ctx.myTable->columns,
                                                pgText, recent);
        if (job.spec.where)
            side->setRowFilter(*job.spec.where);
        ctx.mySource = side.get();
        ctx.source = std::move(side);
    } else {
        throw Error(ErrorKind::Permanent, "endpoint '" + job.source.name + "': SQLite is a target only", {},
                    "use a Postgres or MySQL/MariaDB endpoint as the pipeline's source");
    }
    // `deletes: soft`: a marked row is one the source deleted, so it counts as absent. (A target
    // the sync has not run on since soft deletes were turned on has no marks, and no column yet.)
    std::optional<std::string> liveOnly;
    if (softDeletes(job.spec)) {
        const auto have = targetColumnNames(job);
        if (std::find(have.begin(), have.end(), kDeletedAtColumn) != have.end())
            liveOnly = std::string(kDeletedAtColumn) + " IS NULL"; // a plain name on every target
    }
    const std::optional<std::string> targetWhere = compareTargetFilter(job, opt, liveOnly);
    const auto missingTarget = [&] {
        // Two tables compared as they are: no pipeline creates the second, its name is wrong.
        if (opt.asTheyAre)
            return Error(ErrorKind::Permanent,
                         "the second table, " + job.targetName.display() + ", does not exist on endpoint '" +
                             job.target.name + "'",
                         {}, "check its name: schema.table, as the endpoint spells it");
        return Error(ErrorKind::Permanent, "target table " + job.targetName.display() + " does not exist yet", {},
                     "run the pipeline once to create and load it");
    };
    if (job.target.kind == EndpointKind::Postgres) {
        PgConnection tgt = connectPostgres(job.target, "driftless reconcile");
        auto exists = tgt.execParams("SELECT to_regclass($1) IS NOT NULL", {targetSql(job.targetName)});
        if (!exists.toBool(0, 0))
            throw missingTarget();
        const std::string from = targetWhere
                                     ? "(SELECT * FROM " + targetSql(job.targetName) + " WHERE " + *targetWhere + ")"
                                     : targetSql(job.targetName);
        auto side = std::make_unique<PgSide>(std::move(tgt), from, ctx.schema, ctx.keys);
        // Two Postgres servers that hash a probe alike hash every row alike: use their native
        // text hash, several times cheaper than MD5.
        if (ctx.pgSource) {
            bool native = false;
            try {
                native = side->nativeHashProbe() == ctx.pgSource->nativeHashProbe();
            } catch (const Error &) {
                native = false; // before Postgres 11
            }
            side->useNativeHash(native);
            ctx.pgSource->useNativeHash(native);
            if (native && !(job.spec.columns && !job.spec.columns->empty()) && opt.compareColumns.empty())
                if (auto mask = recordHashColumns(*ctx.pgSource, *side, ctx.schema, job)) {
                    side->useRecordHash(*mask);
                    ctx.pgSource->useRecordHash(*mask);
                }
        }
        ctx.target = std::move(side);
    } else if (job.target.kind == EndpointKind::Sqlite) {
        {
            SqliteDb probe(job.target.path, SqliteDb::Mode::ReadOnly);
            if (!probe.tableExists(job.targetName.name))
                throw missingTarget();
        }
        auto side = std::make_unique<SqliteSide>(job.target.path, job.targetName.name, ctx.schema, ctx.keys);
        if (targetWhere)
            side->setRowFilter(*targetWhere);
        ctx.target = std::move(side);
    } else {
        MysqlConnection tgt = connectMysql(job.target);
        const TableRef table{tgt.dsn().database, job.targetName.name};
        if (!tgt.scalar("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                        {table.schema, table.name}))
            throw missingTarget();
        auto physical = MysqlSide::targetColumns(tgt, table, ctx.schema);
        for (const auto &m : physical)
            if (m.dataType == "json" && job.source.kind == EndpointKind::Postgres)
                ctx.skipped = "column " + m.name +
                              " is a MySQL JSON column, which normalises the text Postgres sent (key order, "
                              "spacing, numbers), so it cannot be compared exactly; leave the column out of the "
                              "comparison with a view on both sides, or compare it by hand";
        auto side = std::make_unique<MysqlSide>(std::move(tgt), table, ctx.schema, std::move(physical), pgText);
        if (targetWhere)
            side->setRowFilter(*targetWhere);
        ctx.target = std::move(side);
    }
    return ctx;
}

void requireCompareKey(const Endpoint &endpoint, const TableRef &table, const std::vector<std::string> &key,
                       const std::optional<std::string> &where)
{
    if (key.empty())
        return;
    const auto q = [&](const std::string &name) {
        return endpoint.kind == EndpointKind::Mysql ? mysqlIdent(name) : quoteIdent(name);
    };
    std::string cols, nulls;
    for (const auto &k : key) {
        cols += (cols.empty() ? "" : ", ") + q(k);
        nulls += (nulls.empty() ? "" : " OR ") + q(k) + " IS NULL";
    }
    const std::string from = endpoint.kind == EndpointKind::Mysql
                                 ? mysqlIdent(table.schema) + "." + mysqlIdent(table.name)
                             : endpoint.kind == EndpointKind::Sqlite ? quoteIdent(table.name)
                                                                     : table.quoted();
    const std::string rows = where ? " WHERE (" + *where + ")" : "";
    const std::string sql = "SELECT (SELECT count(*) FROM (SELECT 1 FROM " + from + rows + " GROUP BY " + cols +
                            " HAVING count(*) > 1) d), (SELECT count(*) FROM " + from + " WHERE (" + nulls + ")" +
                            (where ? " AND (" + *where + ")" : "") + ")";
    long long repeated = 0, null = 0;
    if (endpoint.kind == EndpointKind::Postgres) {
        PgConnection c = connectPostgres(endpoint, "driftless compare");
        auto r = c.exec(sql);
        repeated = r.toInt(0, 0);
        null = r.toInt(0, 1);
    } else if (endpoint.kind == EndpointKind::Mysql) {
        MysqlConnection c = connectMysql(endpoint);
        auto r = c.query(sql);
        repeated = std::stoll(r.at(0, 0).value_or("0"));
        null = std::stoll(r.at(0, 1).value_or("0"));
    } else {
        SqliteDb db(endpoint.path, SqliteDb::Mode::ReadOnly);
        auto st = db.prepare(sql);
        st.step();
        repeated = st.int64(0);
        null = st.int64(1);
    }
    if (repeated || null) {
        std::string names;
        for (const auto &k : key)
            names += (names.empty() ? "" : ",") + k;
        throw ConfigError(
            "--key " + names + " does not tell the rows of " + endpoint.name + ":" + table.display() +
            " apart: " + (repeated ? std::to_string(repeated) + " key values appear more than once" : std::string()) +
            (repeated && null ? ", and " : "") +
            (null ? std::to_string(null) + " rows have a NULL in it" : std::string()) +
            "; name columns that are unique and never NULL on both sides, or leave --key out to compare "
            "by the primary key (or as whole rows when there is none)");
    }
}

std::vector<TableJob> selectJobs(const Workspace &ws, const std::string &pipeline,
                                 const std::vector<std::string> &tables)
{
    if (!ws.pipeline(pipeline))
        throw ConfigError("no pipeline named '" + pipeline + "'");
    auto jobs = jobsFor(ws, pipeline);
    // A two-way table is compared once, from the pipeline's source side: comparing the two sides
    // is symmetric (missing: rows only the source side holds; extra: rows only the target side
    // holds), so the reverse direction's comparison would find the same rows at twice the cost,
    // and across engines it would have to read the other side's values in the reverse mapping's
    // types (a MariaDB TINYINT(1) against the Postgres boolean it came from).
    std::erase_if(jobs, [](const TableJob &j) { return j.twoWay && j.twoWay->reverse; });
    if (tables.empty())
        return jobs;
    std::vector<TableJob> out;
    for (const auto &name : tables) {
        const TableRef ref = resolveTableArgument(ws, *ws.pipeline(pipeline), name);
        auto it = std::find_if(jobs.begin(), jobs.end(), [&](const TableJob &j) { return j.spec.table == ref; });
        if (it == jobs.end())
            throw ConfigError("pipeline '" + pipeline + "' has no table " + ref.display());
        out.push_back(*it);
    }
    return out;
}

void requireKey(const TableContext &ctx)
{
    if (ctx.keys.empty())
        throw Error(ErrorKind::Permanent,
                    ctx.job.spec.table.display() + " has no primary key: its rows cannot be repaired one by one", {},
                    "run a pass of the table (its full refresh reloads it whole), or add a primary key to the source "
                    "table");
}

TableJob jobFor(const Workspace &ws, const std::string &pipeline, const std::string &table)
{
    return selectJobs(ws, pipeline, {table}).front();
}

} // namespace driftless::core::recon
