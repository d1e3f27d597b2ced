#pragma once

#include "core/model/tableschema.h"

#include <string>
#include <string_view>

namespace driftless::core {

/// How a column (described in Postgres terms) is stored in MySQL/MariaDB, and how its COPY-text
/// values are converted. The mapping (docs/type-mapping.md, "Postgres → MySQL/MariaDB") is
/// lossless where MySQL can hold the value; a value it cannot hold (NaN, a timestamp outside
/// DATETIME's range, a BC date) is an Error naming the column, never a silent truncation.
enum class MysqlStorage {
    Integer,     ///< int2/int4/int8/oid: sent as the digits (the server refuses junk in strict mode)
    Boolean,     ///< boolean: TINYINT(1) 0/1
    Float,       ///< float4/float8: FLOAT/DOUBLE; NaN and ±Infinity are refused
    Decimal,     ///< numeric(p,s) with p <= 65, s <= 30: DECIMAL(p,s); NaN/Infinity refused
    Blob,        ///< bytea: LONGBLOB (VARBINARY(3072) as a key), from Postgres's \x hex form
    Date,        ///< date: DATE (0001-01-01..9999-12-31; BC and infinity refused)
    DateTime,    ///< timestamp: DATETIME(6)
    DateTimeUtc, ///< timestamptz: DATETIME(6) holding UTC (the offset is applied)
    Json,        ///< json/jsonb: JSON (on MariaDB an alias of LONGTEXT with a json_valid check)
    Text         ///< everything else: the Postgres text form in a utf8mb4 text column
};

struct MysqlColumnType {
    MysqlStorage storage = MysqlStorage::Text;
    /// The declared type, e.g. `DECIMAL(12,2)`, `DATETIME(6)`, `LONGTEXT`.
    std::string declared;
};

/// The MySQL type for a source column. `key`: the column is part of the primary key, so it must
/// be indexable (text becomes VARCHAR(768), bytea VARBINARY(3072): InnoDB's 3072-byte key limit).
MysqlColumnType mysqlColumnFor(const ColumnInfo &c, bool key);

/// Appends one raw COPY-text field (still escaped; `\N` for NULL) to `sql` as a MySQL literal
/// converted for `type`. `scratch` is reused between calls.
/// Throws Error naming `column` when the value cannot be held by the column's MySQL type.
void appendMysqlValue(std::string &sql, std::string_view raw, const MysqlColumnType &type, std::string_view column,
                      std::string &scratch);

/// Appends the same value as one field of a LOAD DATA file (`\N` for NULL; backslash, TAB,
/// newline, CR and NUL escaped; a Blob as hex digits, for UNHEX in the statement's SET clause).
void appendMysqlLoadField(std::string &out, std::string_view raw, const MysqlColumnType &type, std::string_view column,
                          std::string &scratch);

/// A timestamp as Postgres prints it (`2024-05-01 12:00:00.5+02`, with or without an offset) as
/// `YYYY-MM-DD HH:MM:SS[.ffffff]` in UTC (the offset applied). Throws Error when it is outside
/// 0001-01-01..9999-12-31 23:59:59.999999, BC, or ±infinity.
std::string mysqlDateTimeUtc(std::string_view pgText, std::string_view column);

} // namespace driftless::core
