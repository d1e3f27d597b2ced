#pragma once

#include "core/db/pgconnection.h"
#include "core/model/tableschema.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core::pgcatalog {

/// Reads a table's columns and primary key from the catalog. Throws SchemaError when the table
/// does not exist (suggesting near names: other case, other schema) or is not readable.
TableSchema describeTable(PgConnection &conn, const TableRef &table);

/// describeTable, keyed by the table's declared `key` when it has one (TableSchema::declareKey).
TableSchema describeTable(PgConnection &conn, const TableRef &table,
                          const std::optional<std::vector<std::string>> &key);
/// Why `schema`'s key (a declared one) cannot key its rows on the source: NULLs in it, or values
/// shared by more than one row, with what to do; nullopt when it can. Reads the whole table.
std::optional<std::string> declaredKeyProblem(PgConnection &conn, const TableSchema &schema);

/// Like describeTable, but returns nullopt for a missing table.
std::optional<TableSchema> findTable(PgConnection &conn, const TableRef &table);

/// The source's current WAL position as a number: pg_current_wal_insert_lsn() on a primary
/// (with asynchronous commit a visible commit may not be written yet, so the insert position is
/// the one at or past every commit a snapshot can see),
/// pg_last_wal_replay_lsn() on a standby. Monotonic, so usable as a row version.
std::int64_t currentLsn(PgConnection &conn);

/// True when some index on the table has `column` as its first key column.
bool hasLeadingIndex(PgConnection &conn, const TableRef &table, const std::string &column);

/// Why change data capture cannot match the updates and deletes of `schema`'s table by its
/// primary key, with the fix; nullopt when it can. The old row in the stream carries the
/// replica identity: nothing under REPLICA IDENTITY NOTHING, only the index's columns under
/// USING INDEX, so that index must hold every primary-key column.
struct IdentityProblem {
    std::string message;
    std::string fix;
    /// The statement that applies `fix`, with the names quoted (the doctor's Fix button).
    std::string sql;
};
std::optional<IdentityProblem> replicaIdentityProblem(PgConnection &conn, const TableSchema &schema);

} // namespace driftless::core::pgcatalog
