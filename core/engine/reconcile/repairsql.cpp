#include "core/engine/reconcile/repairsql.h"

#include "core/engine/endpoints/connect.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/mergers/mysqlmerger.h"
#include "core/mergers/pgmerger.h"
#include "core/mergers/softdelete.h"
#include "core/model/strategy.h"

#include <set>

namespace driftless::core::recon {

namespace {

bool isKey(const TableSchema &schema, size_t i)
{
    for (int k : schema.primaryKey)
        if (static_cast<size_t>(k) == i)
            return true;
    return false;
}

/// A repair merges a full refresh table as a cursor pass would (it has no staging of its own).
Strategy mergeStrategy(const TableJob &job)
{
    return job.spec.strategy == Strategy::FullRefresh ? Strategy::Cursor : job.spec.strategy;
}

MergeTarget mergeTarget(const TableJob &job)
{
    return {job.pipeline, job.spec.table, job.targetName, mergeStrategy(job), softDeletes(job.spec)};
}

std::string postgresSql(const TableJob &job, const TableSchema &schema, const std::string &kind, const std::string &stg,
                        const std::string &tomb)
{
    const MergeTarget mt = mergeTarget(job);
    const std::string target = quoteIdent(job.targetName.schema) + "." + quoteIdent(job.targetName.name);
    // The target computes the columns the source generates; they are never written.
    std::string cols, set, ins, vals, on, tombOn, keys, tcols, scols;
    const bool cdc = mt.strategy == Strategy::Cdc;
    static const std::set<std::string> exact{"int2",      "int4",        "int8", "text",  "varchar", "bool", "date",
                                             "timestamp", "timestamptz", "uuid", "bytea", "oid",     "time"};
    for (size_t i = 0; i < schema.columns.size(); ++i) {
        const auto &c = schema.columns[i];
        const std::string q = quoteIdent(c.name);
        if (isKey(schema, i)) {
            on += (on.empty() ? "" : " AND ") + ("t." + q + " = s." + q);
            tombOn += (tombOn.empty() ? "" : " AND ") + ("tb." + q + " = st." + q);
            keys += (keys.empty() ? "" : ", ") + q;
        }
        if (c.generated)
            continue;
        cols += (cols.empty() ? "" : ", ") + q;
        set += cdc ? q + " = CASE WHEN substr(s._driftless_unchanged, " + std::to_string(i + 1) + ", 1) = '1' THEN t." +
                         q + " ELSE s." + q + " END, "
                   : q + " = s." + q + ", ";
        ins += q + ", ";
        vals += "s." + q + ", ";
        const bool native = c.isBuiltinType() && !c.isArray && exact.count(c.baseType);
        const bool string = c.baseType == "text" || c.baseType == "varchar";
        const std::string cast = !native ? "::text" : string ? " COLLATE \"C\"" : "";
        tcols += (tcols.empty() ? "" : ", ") + ("t." + q + cast);
        scols += (scols.empty() ? "" : ", ") + ("s." + q + cast);
    }
    if (kind == "stage")
        return "COPY " + stg + " (" + cols + ", _driftless_version, _driftless_op, _driftless_unchanged) FROM STDIN";
    const bool soft = mt.softDeletes;
    const std::string differs = "ROW(" + tcols + ") IS DISTINCT FROM ROW(" + scols + ")";
    const std::string rewrite = soft ? "(" + differs + " OR t._driftless_deleted_at IS NOT NULL)" : differs;
    const std::string changed =
        cdc ? " AND (s._driftless_version > t._driftless_version OR " + rewrite + ")" : " AND " + rewrite;
    if (soft)
        set += std::string(kDeletedAtColumn) + " = NULL, ";
    const std::string onDelete =
        soft ? " AND (t._driftless_deleted_at IS NULL OR s._driftless_version > t._driftless_version) THEN UPDATE SET "
               "_driftless_deleted_at = coalesce(t._driftless_deleted_at, now()), _driftless_version = "
               "s._driftless_version"
             : " THEN DELETE";
    const std::string merge =
        "MERGE INTO " + target + " AS t\nUSING (SELECT st.*, tb._driftless_version AS _driftless_tomb FROM " + stg +
        " st LEFT JOIN " + tomb + " tb ON " + tombOn + ") AS s ON " + on +
        "\nWHEN MATCHED AND s._driftless_version >= t._driftless_version AND s._driftless_op = 'd'" + onDelete +
        "\nWHEN MATCHED AND s._driftless_version >= t._driftless_version AND s._driftless_op <> 'd'" + changed +
        "\n  THEN UPDATE SET " + set + "_driftless_version = s._driftless_version" +
        "\nWHEN NOT MATCHED AND s._driftless_op <> 'd' AND s._driftless_unchanged IS NULL AND (s._driftless_tomb IS "
        "NULL OR s._driftless_version >= s._driftless_tomb)\n  THEN INSERT (" +
        ins + "_driftless_version) VALUES (" + vals + "s._driftless_version)";
    if (kind == "upsert")
        return merge;
    if (kind == "delete")
        return "-- the MERGE deletes them (its first WHEN), then keeps a tombstone per key:\nINSERT INTO " + tomb +
               " AS tb (" + keys + ", _driftless_version) SELECT " + keys + ", _driftless_version FROM " + stg +
               " WHERE _driftless_op = 'd'\nON CONFLICT (" + keys +
               ") DO UPDATE SET _driftless_version = GREATEST(tb._driftless_version, EXCLUDED._driftless_version), "
               "_driftless_deleted_at = now()";
    return {};
}

std::string mysqlSql(const TableJob &job, const TableSchema &schema, const std::string &kind, const std::string &s,
                     const std::string &tb)
{
    const MergeTarget mt = mergeTarget(job);
    const std::string t = mysqlIdent(job.targetName.name);
    const std::string version = "`_driftless_version`", deletedAt = "`_driftless_deleted_at`";
    std::string cols, on, tbOn, set, sel, keys, keyCols, same;
    std::string firstKey;
    for (size_t i = 0; i < schema.columns.size(); ++i) {
        const std::string q = mysqlIdent(schema.columns[i].name);
        cols += q + ", ";
        sel += s + "." + q + ", ";
        same += (same.empty() ? "" : " AND ") + t + "." + q + " <=> " + s + "." + q;
        if (isKey(schema, i)) {
            on += (on.empty() ? "" : " AND ") + t + "." + q + " = " + s + "." + q;
            tbOn += (tbOn.empty() ? "" : " AND ") + tb + "." + q + " = " + s + "." + q;
            keys += (keys.empty() ? "" : ", ") + s + "." + q;
            keyCols += q + ", ";
            if (firstKey.empty())
                firstKey = q;
            continue;
        }
        set += t + "." + q + " = " + s + "." + q + ", ";
    }
    const bool soft = mt.softDeletes;
    if (soft) {
        same += " AND " + t + "." + deletedAt + " IS NULL";
        set += t + "." + deletedAt + " = NULL, ";
    }
    if (kind == "stage")
        return "INSERT INTO " + s + " (" + cols + version +
               ", `_driftless_op`, `_driftless_mask`) VALUES\n  -- a "
               "tuple per staged row: its values, its version, op 'u' or 'd', no mask";
    const std::string differs = mt.strategy == Strategy::Cursor ? " AND NOT (" + same + ")" : "";
    if (kind == "upsert")
        return "UPDATE " + t + " JOIN " + s + " ON " + on + "\n  SET " + set + t + "." + version + " = " + s + "." +
               version + "\n  WHERE " + s + ".`_driftless_mask` IS NULL AND " + s + ".`_driftless_op` <> 'd' AND " + s +
               "." + version + " >= " + t + "." + version + differs + ";\nINSERT INTO " + t + " (" + cols + version +
               ") SELECT " + sel + s + "." + version + " FROM " + s + " LEFT JOIN " + t + " ON " + on + " LEFT JOIN " +
               tb + " ON " + tbOn + "\n  WHERE " + s + ".`_driftless_mask` IS NULL AND " + s +
               ".`_driftless_op` <> 'd' AND " + t + "." + firstKey + " IS NULL AND (" + tb + "." + version +
               " IS NULL OR " + tb + "." + version + " <= " + s + "." + version + ")";
    if (kind == "delete")
        return (soft ? "UPDATE " + t + " JOIN " + s + " ON " + on + " SET " + t + "." + deletedAt + " = COALESCE(" + t +
                           "." + deletedAt + ", UTC_TIMESTAMP(6)), " + t + "." + version + " = " + s + "." + version +
                           "\n  WHERE " + s + ".`_driftless_op` = 'd' AND " + t + "." + version + " <= " + s + "." +
                           version + " AND (" + t + "." + deletedAt + " IS NULL OR " + t + "." + version + " < " + s +
                           "." + version + ")"
                     : "DELETE " + t + " FROM " + t + " JOIN " + s + " ON " + on + "\n  WHERE " + s +
                           ".`_driftless_op` = 'd' AND " + t + "." + version + " <= " + s + "." + version) +
               ";\nINSERT INTO " + tb + " (" + keyCols + version + ") SELECT " + keys + ", " + s + "." + version +
               " FROM " + s + " WHERE " + s + ".`_driftless_op` = 'd'\n  ON DUPLICATE KEY UPDATE " + tb + "." +
               version + " = GREATEST(" + tb + "." + version + ", VALUES(" + version + "))";
    return {};
}

std::string sqliteSql(const TableJob &job, const TableSchema &schema, const std::string &kind)
{
    const MergeTarget mt = mergeTarget(job);
    const std::string table = quoteIdent(job.targetName.name);
    const std::string tomb = quoteIdent("_driftless_tomb_" + job.targetName.name);
    const size_t n = schema.columns.size();
    const std::string v = "?" + std::to_string(n + 1);
    std::string cols, params, keyMatch, keyCols, keyParams, set, changed;
    for (size_t i = 0; i < n; ++i) {
        const std::string q = quoteIdent(schema.columns[i].name);
        cols += q + ", ";
        params += "?" + std::to_string(i + 1) + ", ";
        set += q + " = excluded." + q + ", ";
        changed += (changed.empty() ? "" : " OR ") + table + "." + q + " IS NOT excluded." + q;
        if (isKey(schema, i)) {
            const std::string p = "?" + std::to_string(i + 1);
            keyMatch += (keyMatch.empty() ? "" : " AND ") + q + " = " + p;
            keyCols += (keyCols.empty() ? "" : ", ") + q;
            keyParams += (keyParams.empty() ? "" : ", ") + p;
        }
    }
    const bool soft = mt.softDeletes;
    const std::string deletedAt = quoteIdent(kDeletedAtColumn);
    if (soft) {
        changed += " OR " + table + "." + deletedAt + " IS NOT NULL";
        set += deletedAt + " = NULL, ";
    }
    if (kind == "stage")
        return "-- SQLite has no staging table: each row is bound to the statements below, one at a time";
    if (kind == "upsert")
        return "INSERT INTO " + table + " (" + cols + "\"_driftless_version\") SELECT " + params + v +
               " WHERE NOT EXISTS (SELECT 1 FROM " + tomb + " WHERE " + keyMatch + " AND \"_driftless_version\" > " +
               v + ")\nON CONFLICT (" + keyCols + ") DO UPDATE SET " + set +
               "\"_driftless_version\" = excluded.\"_driftless_version\"\n  WHERE excluded.\"_driftless_version\" >= " +
               table + ".\"_driftless_version\"" + (mt.strategy == Strategy::Cursor ? " AND (" + changed + ")" : "");
    if (kind == "delete")
        return (soft ? "UPDATE " + table + " SET " + deletedAt + " = coalesce(" + deletedAt +
                           ", strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), \"_driftless_version\" = " + v + " WHERE " +
                           keyMatch + " AND \"_driftless_version\" <= " + v + " AND (" + deletedAt +
                           " IS NULL OR \"_driftless_version\" < " + v + ")"
                     : "DELETE FROM " + table + " WHERE " + keyMatch + " AND \"_driftless_version\" <= " + v) +
               ";\nINSERT INTO " + tomb + " AS tb (" + keyCols + ", \"_driftless_version\") VALUES (" + keyParams +
               ", " + v + ")\n  ON CONFLICT (" + keyCols +
               ") DO UPDATE SET \"_driftless_version\" = max(tb.\"_driftless_version\", "
               "excluded.\"_driftless_version\")";
    return {};
}

} // namespace

RepairSql repairFullSql(const TableJob &job, const TableSchema &schema)
{
    RepairSql out;
    std::string staging, tombstones;
    if (job.target.kind != EndpointKind::Sqlite) {
        // The merger names its bookkeeping tables (it connects, and writes nothing here).
        const auto merger = createMerger(job.target, mergeTarget(job));
        if (const auto *pg = dynamic_cast<const PgMerger *>(merger.get())) {
            staging = pg->stagingTable();
            tombstones = pg->tombstoneTable();
        } else if (const auto *my = dynamic_cast<const MysqlMerger *>(merger.get())) {
            staging = my->stagingTable();
            tombstones = my->tombstoneTable();
        }
    }
    auto render = [&](const std::string &kind) {
        switch (job.target.kind) {
        case EndpointKind::Postgres:
            return postgresSql(job, schema, kind, staging, tombstones);
        case EndpointKind::Mysql:
            return mysqlSql(job, schema, kind, staging, tombstones);
        case EndpointKind::Sqlite:
            return sqliteSql(job, schema, kind);
        }
        return std::string();
    };
    out.stage = render("stage");
    out.upsert = render("upsert");
    out.remove = render("delete");
    return out;
}

} // namespace driftless::core::recon
