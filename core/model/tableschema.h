#pragma once

#include "core/model/tableref.h"

#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// What the engine knows about one source column.
struct ColumnInfo {
    std::string name;
    /// The type as the target should declare it (format_type output, e.g. `numeric(12,2)`,
    /// `timestamp with time zone`, `"public"."mood"[]`).
    std::string typeSql;
    /// The base type's name without modifiers or array brackets (`numeric`, `int4`, `mood`), for
    /// mapping to other engines.
    std::string baseType;
    /// Postgres typcategory of the base type: N numeric, S string, B boolean, D date/time,
    /// U user/bytea..., E enum, A array (when isArray), etc.
    char category = 'U';
    bool isArray = false;
    bool notNull = false;
    bool isEnum = false;
    /// A generated column (Postgres STORED, MySQL/MariaDB STORED or VIRTUAL). pgoutput (PG15)
    /// does not send its values; the binlog does with a FULL row image.
    bool generated = false;
    /// A Postgres source's generation expression (`pg_get_expr` of pg_attrdef), from which a
    /// Postgres target creates the same generated column; empty otherwise (a MySQL expression is
    /// no Postgres SQL, so such a column is a plain one holding the values).
    std::string generationExpr;
    /// Schema of the base type: `pg_catalog` for built-in types.
    std::string typeSchema;
    /// Set when the type is an enum defined on the source: its labels in sort order, so the
    /// target can create the same type.
    std::vector<std::string> enumLabels;

    bool isBuiltinType() const { return typeSchema == "pg_catalog"; }

    bool operator==(const ColumnInfo &) const = default;
};

/// A source table's columns and primary key, in attribute order.
struct TableSchema {
    TableRef table;
    std::vector<ColumnInfo> columns;
    /// Indexes into `columns` of the key columns, in key order: the primary key's, or, for a
    /// table without one, those of its unique index on NOT NULL columns (`keyIndex`).
    std::vector<int> primaryKey;
    /// Set when the table has no primary key and its key is this unique index, whose columns
    /// are all NOT NULL (the one with the fewest columns, then the first by name): rows are
    /// merged, compared and paged by it as by a primary key.
    std::string keyIndex;
    /// Set when the key is the table's declared `key:` (TableSpec::key), not one of its own.
    bool keyDeclared = false;
    /// Estimated rows (pg_class.reltuples), -1 when unknown.
    long long estimatedRows = -1;

    /// Source REPLICA IDENTITY: d default (primary key), f full, i index, n nothing.
    char replicaIdentity = 'd';
    /// Postgres pg_class.relkind ('r' table, 'p' partitioned table, ...); 0 for other engines.
    char relkind = 0;

    bool hasPrimaryKey() const { return !primaryKey.empty(); }
    /// "primary key (id)" or "unique index orders_code_key (code), no primary key": what rows are keyed by.
    std::string keyDescription() const;
    /// Keys the table by `columns` (a table's `key:`), in their order. Throws SchemaError naming
    /// the columns the table lacks.
    void declareKey(const std::vector<std::string> &columns);
    /// This table without `columns`, its key positions moved to match.
    TableSchema without(const std::vector<std::string> &columns) const;
    /// The table as a Postgres FROM item for reading its rows: `ONLY` for a plain table, whose
    /// inheritance children are tables of their own (a publication, COPY and the merge key all
    /// see the parent's own rows alone), the name as it is for a partitioned table, whose rows
    /// are its partitions'.
    std::string fromSql() const { return (relkind == 'r' ? "ONLY " : "") + table.quoted(); }
    int columnIndex(const std::string &name) const;
    bool operator==(const TableSchema &) const = default;
};

/// What keeps `schema`'s key from keying its rows: `nullRows` rows with NULL in it, `sharedKeys`
/// key values held by more than one row; nullopt when neither. Said for a declared key.
std::optional<std::string> keyProblemText(const TableSchema &schema, long long nullRows, long long sharedKeys);

} // namespace driftless::core
