#pragma once

#include "core/model/tableschema.h"

#include <string>
#include <string_view>

namespace driftless::core {

class SqliteStmt;

/// How a Postgres column is stored in SQLite. The mapping (docs/type-mapping.md) never loses
/// precision: exact numbers stay TEXT where REAL would round.
enum class SqliteStorage {
    Integer,     ///< smallint, integer, bigint, oid: INTEGER
    Boolean,     ///< boolean: INTEGER 0/1
    Real,        ///< double precision: REAL (NaN, which SQLite cannot store, as TEXT 'NaN')
    Real4,       ///< real: REAL holding the exact float value (parsed as float, then widened)
    Blob,        ///< bytea: BLOB
    TimestampTz, ///< timestamptz: TEXT, ISO 8601 in UTC with a +00:00 offset
    Text         ///< everything else: TEXT in Postgres's own text form
};

SqliteStorage sqliteStorageFor(const ColumnInfo &c);
/// The declared column type: INTEGER, REAL, BLOB or TEXT.
std::string_view sqliteDeclaredType(SqliteStorage s);

/// Binds one raw COPY-text field (still escaped; `\N` for NULL) as parameter `index`, converted
/// for `storage`. `scratch` is reused between calls to avoid allocations.
/// Throws Error when a value does not fit its type (an integer that does not parse).
void bindCopyField(SqliteStmt &stmt, int index, std::string_view raw, SqliteStorage storage, std::string &scratch);
/// Binds a value given as Postgres prints it (unescaped, not NULL), converted for `storage`.
/// `stable`: the bytes outlive the statement's next step, so SQLite may use them in place.
void bindStoredValue(SqliteStmt &stmt, int index, std::string_view value, SqliteStorage storage, bool stable = false);
/// The SQL literal for a value given as Postgres prints it (unescaped, not NULL), stored as
/// bindStoredValue stores it: an integer, 1 or 0, a real with every digit, X'..' for bytes, text
/// quoted. For scripts a DBA runs (`repair --sql`). Throws Error as bindStoredValue does.
std::string sqliteLiteral(std::string_view value, SqliteStorage storage);

} // namespace driftless::core
