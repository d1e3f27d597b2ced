#pragma once

#include "core/db/mysqlconnection.h"
#include "core/model/cdcposition.h"
#include "core/model/tableschema.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core::mysqlcatalog {

/// How a column's value is read and turned into the text of docs/type-mapping.md.
enum class ValueForm {
    Text,      ///< the server's text as is (integers, decimal, char/text, enum/set, datetime, json)
    Float,     ///< FLOAT: read as double, printed as the shortest text of the 32-bit float
    Double,    ///< DOUBLE: printed as the shortest text of the double
    Bytes,     ///< binary/blob/geometry: bytea hex
    Date,      ///< DATE: zero dates refused
    Datetime,  ///< DATETIME: zero dates refused
    Timestamp, ///< TIMESTAMP: UTC text plus `+00`; zero refused
    Bit,       ///< BIT(n): binary digits (the SELECT pads them to n)
};

/// A source column as MySQL/MariaDB describes it.
struct MysqlColumn {
    std::string name;
    std::string dataType;   ///< information_schema DATA_TYPE, lower case: `int`, `varchar`, `datetime`
    std::string columnType; ///< COLUMN_TYPE: `int(10) unsigned`, `enum('a','b')`, `decimal(12,2)`
    bool isUnsigned = false;
    int precision = 0;      ///< decimal precision / bit width
    int scale = 0;          ///< decimal scale
    int fsp = 0;            ///< fractional seconds digits of time types
    long long maxChars = 0; ///< character maximum length (char/varchar) or bytes (binary/varbinary)
    std::string charset;
    std::string collation;
    bool isJson = false; ///< MariaDB's JSON alias (longtext with CHECK json_valid)
    bool generated = false;
    ValueForm form = ValueForm::Text;
};

struct MysqlTable {
    /// In Postgres terms (docs/type-mapping.md): what targets are created from.
    TableSchema schema;
    /// Parallel to schema.columns.
    std::vector<MysqlColumn> columns;
};

/// Reads a table's columns, primary key and estimated rows. Throws SchemaError when the table
/// does not exist or has a column type Driftless cannot carry.
MysqlTable describeTable(MysqlConnection &conn, const TableRef &table);
/// describeTable, keyed by the table's declared `key` when it has one (TableSchema::declareKey).
MysqlTable describeTable(MysqlConnection &conn, const TableRef &table,
                         const std::optional<std::vector<std::string>> &key);
/// Why `t`'s key (a declared one) cannot key its rows on the source: NULLs in it, or values
/// shared by more than one row, with what to do; nullopt when it can. Reads the whole table.
std::optional<std::string> declaredKeyProblem(MysqlConnection &conn, const MysqlTable &t);

/// The Postgres column a MySQL column becomes.
ColumnInfo pgColumnFor(const MysqlColumn &c);

/// The SELECT expression that reads `c` (quoted, converted where the server must help).
std::string selectExpr(const MysqlColumn &c);

/// Appends the column's value of `row` (result column `index`) as COPY text (escaped, `\N` for
/// NULL). Throws SchemaError for values the target cannot hold (zero dates), naming the table,
/// the column and the row's key.
void appendValue(const MysqlTable &t, size_t column, const MysqlRowView &row, unsigned index, std::string &line);

/// The source's current version: its binlog position when the binary log is on and readable,
/// else its clock in microseconds since the epoch (see docs/type-mapping.md).
std::int64_t currentVersion(MysqlConnection &conn);

/// Inside a transaction started WITH CONSISTENT SNAPSHOT: the binlog file and offset the
/// snapshot corresponds to exactly (MariaDB's binlog_snapshot_file/position), or nullopt when the
/// server does not report it (MySQL, or no binary log).
std::optional<binlog::Position> snapshotPosition(MysqlConnection &conn);

/// `(k1 > v1) OR (k1 = v1 AND k2 > v2) ...` over the columns `cols` of `t`, the values read from
/// the user variables @p<first>, @p<first+1>, ... with paramExpr(): a keyset "after this key"
/// condition that uses the index and compares in each column's own type and collation.
std::string keysetAfter(const MysqlTable &t, const std::vector<int> &cols, int first);
/// Sets the user variables @p1, @p2, ... on `conn` to `values` (COPY text), the key a
/// keysetAfter(..., 1) condition reads next; nothing when `values` is empty.
void bindKeyset(MysqlConnection &conn, const std::vector<std::string> &values);

/// A foreign key, as information_schema describes it. InnoDB performs its ON DELETE / ON UPDATE
/// actions inside the storage engine, and the binary log carries only the parent's change.
struct ForeignKey {
    std::string name;
    TableRef child;
    TableRef parent;
    std::vector<std::string> childColumns;  ///< in the key's order
    std::vector<std::string> parentColumns; ///< the referenced columns, same order
    std::string onDelete;                   ///< CASCADE, SET NULL, SET DEFAULT, RESTRICT, NO ACTION
    std::string onUpdate;
    /// True when a parent's delete or update changes child rows (CASCADE or SET NULL).
    bool acts() const;
};
/// The foreign keys whose child or parent is one of `tables` (their schemas are searched).
std::vector<ForeignKey> foreignKeys(MysqlConnection &conn, const std::vector<TableRef> &tables);

/// The source clock now, as `YYYY-MM-DD HH:MM:SS.ffffff` in UTC.
std::string sourceNowUtc(MysqlConnection &conn);

/// A typed SQL expression for a value of `c` held as text in the user variable `var` (`@p1`):
/// cast to the column's type, or converted to its collation, so comparisons with the column are
/// exact and use its index. Key values travel this way, never as SQL text.
std::string paramExpr(const MysqlColumn &c, const std::string &var);

/// The text a key or cursor value of `row` (result column `index`) is remembered as, the form
/// paramExpr() reads back (hex for binary columns).
std::string paramText(const MysqlColumn &c, const MysqlRowView &row, unsigned index);

/// True when `c` can be a cursor column: a date/time or integer/decimal column.
bool isTemporal(const MysqlColumn &c);
bool isNumeric(const MysqlColumn &c);

} // namespace driftless::core::mysqlcatalog
