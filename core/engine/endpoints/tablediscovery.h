#pragma once

#include "core/model/strategy.h"
#include "core/model/tableref.h"
#include "core/model/tableschema.h"
#include "core/model/workspace.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

class MysqlConnection;
class PgConnection;
struct MysqlProbe;

/// One column of a discovered table, for the pipeline editor's column grid: enough to check a
/// column mapping as core::checkColumnMapping() does at `apply`.
struct DiscoveredColumn {
    std::string name;
    /// The type as the source prints it (Postgres format_type, MySQL COLUMN_TYPE).
    std::string type;
    /// The Postgres type category the engine gives it (S string, N numeric, D date/time, ...):
    /// what decides whether truncate and keep_last masks apply.
    char category = 'U';
    bool isArray = false;
    bool operator==(const DiscoveredColumn &) const = default;
};

/// One table of a source, as the pipeline editor shows it: size, key, the columns a cursor could
/// follow, and how much it is written (Postgres: pg_stat_user_tables, cumulative since the last
/// stats reset; MySQL: performance_schema's table I/O counters since the server started, when
/// the server keeps them).
struct DiscoveredTable {
    TableRef table;
    double estimatedRows = 0;    ///< pg_class.reltuples or TABLE_ROWS; 0 when unknown
    bool analyzed = false;       ///< estimatedRows is an estimate, not "unknown"
    std::int64_t totalBytes = 0; ///< pg_total_relation_size, or DATA_LENGTH + INDEX_LENGTH
    /// The key columns: the primary key's, or those of `keyIndex`.
    std::vector<std::string> primaryKey;
    /// Without a primary key: the unique index on NOT NULL columns that keys the table, else empty.
    std::string keyIndex;
    /// timestamp, timestamptz and date columns (MySQL: DATETIME, TIMESTAMP, DATE), the most
    /// likely cursor first: NOT NULL and indexed ones, then names such as updated_at / modified_at.
    std::vector<std::string> cursorCandidates;
    std::int64_t inserts = 0;
    std::int64_t updates = 0;
    std::int64_t deletes = 0;
    /// False when the server keeps no write counters (MySQL without performance_schema): the
    /// three counts above are 0 because nothing is known, not because nothing was written.
    bool writesKnown = true;
    bool readable = true; ///< SELECT on the table and USAGE on its schema
    /// Why this table cannot be streamed (a replica identity without its key), with the fix;
    /// nullopt when nothing of the table's own refuses CDC.
    std::optional<std::string> cdcRefused;
    /// Its columns in the source's order (empty from an agent that does not send them).
    std::vector<DiscoveredColumn> columns;
};

/// The table as a TableSchema of its columns and primary key, for core::checkColumnMapping().
TableSchema discoveredSchema(const DiscoveredTable &t);

/// What the source can do for CDC (from core::probePostgres or the same catalog facts).
struct SourceAbilities {
    bool logicalWal = true;
    bool canReplicate = true;
    /// Why the source cannot stream changes, in its own terms (MySQL: the binlog setting or the
    /// grant that is missing, with the fix); refuses CDC for every table. nullopt: nothing does.
    std::optional<std::string> cdcRefused;
};

/// What a MySQL/MariaDB source can do for CDC, from core::probeMysql: the binlog settings the
/// CDC pipeline refuses to start without (a short retention only warns) and REPLICATION SLAVE.
SourceAbilities mysqlAbilities(const MysqlProbe &probe);

/// A strategy for one table and why; strategies that cannot work carry the reason.
struct Recommendation {
    Strategy strategy = Strategy::FullRefresh;
    std::string reason;
    /// The cursor column to use when the recommendation is cursor sync (else the best candidate).
    std::optional<std::string> cursor;
    /// Strategies that cannot work for this table, with why.
    std::map<Strategy, std::string> refused;
};

/// Reads every user table of the connected database (system schemas and Driftless's own left
/// out), ordered by schema and name. Blocking; call it off the UI thread. Throws SqlError.
std::vector<DiscoveredTable> discoverTables(PgConnection &conn);

/// Reads the base tables of `database` on a MySQL/MariaDB server (an empty `database`: of every
/// database but the system ones) from information_schema, ordered by database and name. Tables
/// are `database.table` with their case kept. Rows and size are InnoDB's estimates
/// (TABLE_ROWS, DATA_LENGTH + INDEX_LENGTH); write counters come from performance_schema when
/// the server has it on and the user may read it, else writesKnown is false. Blocking; call it
/// off the UI thread. Throws SqlError.
std::vector<DiscoveredTable> discoverMysqlTables(MysqlConnection &conn, const std::string &database);

/// What the pipeline editor reads of a source endpoint.
struct SourceDiscovery {
    bool ok = false;
    /// Why the source could not be read, with what to do; empty when ok.
    std::string error;
    SourceAbilities abilities;
    std::vector<DiscoveredTable> tables;
};

/// Probes a Postgres or MySQL/MariaDB endpoint (the doctor's probe: reachable, logical WAL or
/// the binlog settings, replication rights) and reads its tables. Blocking; call it off the UI
/// thread. Never throws: a refusal lands in `error`.
SourceDiscovery discoverSource(const Endpoint &source);

/// Picks a strategy for `t`:
/// - no primary key: cursor and CDC are refused (both merge by key); full refresh;
/// - no timestamp or date column: cursor is refused;
/// - a small table that is rarely written (or whose writes are unknown): full refresh (a whole
///   copy costs little);
/// - a busy table with deletes, or a larger one whose writes are unknown (deletes cannot be
///   ruled out): CDC, which sees deletes (cursor sync does not), when the source allows it;
/// - otherwise cursor sync along the best candidate, else CDC, else full refresh.
/// Reasons never cite write activity that `t.writesKnown` says is unknown.
Recommendation recommendStrategy(const DiscoveredTable &t, const SourceAbilities &source);

/// Thresholds of recommendStrategy(), named so the reasons can quote them.
inline constexpr double kSmallTableRows = 100'000;
inline constexpr std::int64_t kSmallTableBytes = 64LL << 20;

} // namespace driftless::core
