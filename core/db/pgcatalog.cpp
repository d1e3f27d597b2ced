#include "core/db/pgcatalog.h"

#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace driftless::core::pgcatalog {

namespace {

constexpr const char *kFindRelation = R"sql(
SELECT c.oid, c.relkind, c.reltuples::bigint, c.relreplident
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
)sql";

// One row per live column. The "base" type looks through arrays and domains, for mapping;
// format_type of a domain's base keeps the target free of the source's domains.
constexpr const char *kColumns = R"sql(
SELECT a.attname,
       CASE WHEN et.typtype = 'd'
            THEN format_type(et.typbasetype, CASE WHEN t.oid = et.oid THEN et.typtypmod ELSE a.atttypmod END)
                 || CASE WHEN t.oid <> et.oid THEN '[]' ELSE '' END
            ELSE format_type(a.atttypid, a.atttypmod) END AS type_sql,
       bt.typname AS base_type,
       bt.typcategory AS category,
       t.oid <> et.oid AS is_array,
       a.attnotnull,
       bt.typtype = 'e' AS is_enum,
       bn.nspname AS base_schema,
       CASE WHEN bt.typtype = 'e'
            THEN (SELECT array_to_json(array_agg(e.enumlabel ORDER BY e.enumsortorder))::text
                  FROM pg_enum e WHERE e.enumtypid = bt.oid) END AS enum_labels,
       a.attgenerated <> '' AS generated,
       (SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
        WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.attgenerated = 's') AS generation_expr
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_type et ON et.oid = CASE WHEN t.typcategory = 'A' AND t.typelem <> 0 THEN t.typelem ELSE t.oid END
JOIN pg_type bt ON bt.oid = CASE WHEN et.typtype = 'd' THEN et.typbasetype ELSE et.oid END
JOIN pg_namespace bn ON bn.oid = bt.typnamespace
WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
)sql";

// The key is the first indnkeyatts columns of indkey: the rest are INCLUDE columns, stored in
// the index but no part of the key (PRIMARY KEY (id) INCLUDE (a) is unique on id alone).
constexpr const char *kPrimaryKey = R"sql(
SELECT a.attname
FROM pg_index i
CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE i.indrelid = $1::oid AND i.indisprimary AND k.ord <= i.indnkeyatts
ORDER BY k.ord
)sql";

/// A table without a primary key: its unique index on NOT NULL columns (no predicate, no
/// expression, not deferrable), the one with the fewest columns, then the first by name.
constexpr const char *kUniqueKey = R"sql(
WITH cols AS (
  SELECT i.indexrelid, ic.relname AS index_name, i.indnkeyatts AS n, a.attname, a.attnotnull, k.ord
  FROM pg_index i
  JOIN pg_class ic ON ic.oid = i.indexrelid
  CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
  WHERE i.indrelid = $1::oid AND i.indisunique AND i.indisvalid AND i.indimmediate
    AND i.indpred IS NULL AND i.indexprs IS NULL AND k.ord <= i.indnkeyatts
), best AS (
  SELECT indexrelid, index_name, n FROM cols GROUP BY indexrelid, index_name, n
  HAVING bool_and(attnotnull) ORDER BY n, index_name LIMIT 1
)
SELECT best.index_name, cols.attname FROM best JOIN cols USING (indexrelid) ORDER BY cols.ord
)sql";

constexpr const char *kNearNames = R"sql(
SELECT n.nspname, c.relname
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND lower(c.relname) = lower($1)
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
ORDER BY (n.nspname = $2) DESC, n.nspname, c.relname
LIMIT 5
)sql";

} // namespace

std::optional<TableSchema> findTable(PgConnection &conn, const TableRef &table)
{
    auto rel = conn.execParams(kFindRelation, {table.schema, table.name});
    if (rel.rows() == 0)
        return std::nullopt;
    std::string oid = rel.text(0, 0);
    TableSchema s;
    s.table = table;
    s.estimatedRows = rel.toInt(0, 2);
    s.replicaIdentity = rel.value(0, 3).empty() ? 'd' : rel.value(0, 3)[0];
    s.relkind = rel.value(0, 1).empty() ? 0 : rel.value(0, 1)[0];
    auto cols = conn.execParams(kColumns, {oid});
    for (int r = 0; r < cols.rows(); ++r) {
        ColumnInfo c;
        c.name = cols.text(r, 0);
        c.typeSql = cols.text(r, 1);
        c.baseType = cols.text(r, 2);
        c.category = cols.value(r, 3).empty() ? 'U' : cols.value(r, 3)[0];
        c.isArray = cols.toBool(r, 4);
        c.notNull = cols.toBool(r, 5);
        c.isEnum = cols.toBool(r, 6);
        c.typeSchema = cols.text(r, 7);
        c.generated = cols.toBool(r, 9);
        if (!cols.isNull(r, 10))
            c.generationExpr = cols.text(r, 10);
        if (c.isEnum) {
            c.enumLabels = nlohmann::json::parse(cols.text(r, 8)).get<std::vector<std::string>>();
        }
        s.columns.push_back(std::move(c));
    }
    auto pk = conn.execParams(kPrimaryKey, {oid});
    for (int r = 0; r < pk.rows(); ++r)
        s.primaryKey.push_back(s.columnIndex(pk.text(r, 0)));
    if (s.primaryKey.empty()) {
        auto uk = conn.execParams(kUniqueKey, {oid});
        for (int r = 0; r < uk.rows(); ++r) {
            s.keyIndex = uk.text(r, 0);
            s.primaryKey.push_back(s.columnIndex(uk.text(r, 1)));
        }
    }
    return s;
}

TableSchema describeTable(PgConnection &conn, const TableRef &table, const std::optional<std::vector<std::string>> &key)
{
    TableSchema s = describeTable(conn, table);
    if (key)
        s.declareKey(*key);
    return s;
}

std::optional<std::string> declaredKeyProblem(PgConnection &conn, const TableSchema &schema)
{
    std::string cols, nulls;
    for (int k : schema.primaryKey) {
        const std::string q = quoteIdent(schema.columns[static_cast<size_t>(k)].name);
        cols += (cols.empty() ? "" : ", ") + q;
        nulls += (nulls.empty() ? "" : " OR ") + q + " IS NULL";
    }
    const std::string from = schema.fromSql();
    auto r =
        conn.exec("SELECT (SELECT count(*) FROM " + from + " WHERE " + nulls +
                  "), (SELECT count(*) FROM (SELECT 1 FROM " + from + " GROUP BY " + cols + " HAVING count(*) > 1) d)");
    return keyProblemText(schema, std::atoll(r.text(0, 0).c_str()), std::atoll(r.text(0, 1).c_str()));
}

TableSchema describeTable(PgConnection &conn, const TableRef &table)
{
    if (auto s = findTable(conn, table))
        return *s;
    auto near = conn.execParams(kNearNames, {table.name, table.schema});
    std::string hint;
    for (int r = 0; r < near.rows(); ++r)
        hint += (hint.empty() ? "did you mean " : " or ") + TableRef{near.text(r, 0), near.text(r, 1)}.display();
    if (!hint.empty())
        hint += "? (names are case-sensitive when quoted: write \"Name\" in YAML as '\"Name\"')";
    else
        hint = "check the name, or grant USAGE on the schema to the endpoint's user";
    throw SchemaError("table " + table.display() + " does not exist on " + conn.describe(), hint);
}

std::int64_t currentLsn(PgConnection &conn)
{
    auto r = conn.exec("SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
                       "ELSE pg_current_wal_insert_lsn() END - '0/0'::pg_lsn)::bigint");
    return r.toInt(0, 0);
}

bool hasLeadingIndex(PgConnection &conn, const TableRef &table, const std::string &column)
{
    auto r = conn.execParams(R"sql(
SELECT 1 FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
WHERE n.nspname = $1 AND c.relname = $2 AND a.attname = $3 AND i.indisvalid
LIMIT 1)sql",
                             {table.schema, table.name, column});
    return r.rows() > 0;
}

std::optional<IdentityProblem> replicaIdentityProblem(PgConnection &conn, const TableSchema &schema)
{
    const std::string table = schema.table.display();
    const std::string alter = "ALTER TABLE " + schema.table.quoted() + " REPLICA IDENTITY ";
    if (schema.replicaIdentity == 'n')
        return IdentityProblem{"REPLICA IDENTITY NOTHING: its updates and deletes carry no old row, so they cannot be "
                               "matched to target rows",
                               "ALTER TABLE " + table + " REPLICA IDENTITY DEFAULT", alter + "DEFAULT;"};
    if (schema.keyDeclared && schema.replicaIdentity == 'd')
        return IdentityProblem{"a " + schema.keyDescription() +
                                   ", which REPLICA IDENTITY DEFAULT does not send with its updates and deletes (only "
                                   "the primary key, if any)",
                               "ALTER TABLE " + table + " REPLICA IDENTITY FULL", alter + "FULL;"};
    if (schema.replicaIdentity == 'd' && !schema.keyIndex.empty())
        return IdentityProblem{"no primary key, so REPLICA IDENTITY DEFAULT sends no old key with its updates and "
                               "deletes (and the source refuses them once the table is published)",
                               "ALTER TABLE " + table + " REPLICA IDENTITY USING INDEX " +
                                   displayIdent(schema.keyIndex),
                               alter + "USING INDEX " + quoteIdent(schema.keyIndex) + ";"};
    if (schema.replicaIdentity != 'i' || !schema.hasPrimaryKey())
        return std::nullopt;
    auto r = conn.execParams(R"sql(
SELECT i.indexrelid::regclass::text, a.attname
FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE n.nspname = $1 AND c.relname = $2 AND i.indisreplident AND k.ord <= i.indnkeyatts)sql",
                             {schema.table.schema, schema.table.name});
    std::string index;
    std::vector<std::string> cols;
    for (int i = 0; i < r.rows(); ++i) {
        index = r.text(i, 0);
        cols.push_back(r.text(i, 1));
    }
    for (int k : schema.primaryKey) {
        const std::string &name = schema.columns[static_cast<size_t>(k)].name;
        if (std::find(cols.begin(), cols.end(), name) == cols.end())
            return IdentityProblem{
                "REPLICA IDENTITY USING INDEX " + (index.empty() ? std::string("(dropped)") : index) +
                    " leaves out primary-key column " + displayIdent(name) +
                    ": a delete or a key change could not be matched to its target row",
                "ALTER TABLE " + table +
                    " REPLICA IDENTITY DEFAULT (or FULL), or USING INDEX "
                    "on a unique index holding the primary key",
                alter + (schema.keyDeclared        ? "FULL;"
                         : schema.keyIndex.empty() ? "DEFAULT;"
                                                   : "USING INDEX " + quoteIdent(schema.keyIndex) + ";")};
    }
    return std::nullopt;
}

} // namespace driftless::core::pgcatalog
