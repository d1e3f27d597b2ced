#pragma once

#include "core/db/pgconnection.h"
#include "core/model/strategy.h"
#include "core/model/tableref.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// One table of a source, as the pipeline editor shows it: size, key, the columns a cursor could
/// follow, and how much it is written (pg_stat_user_tables, cumulative since the last stats reset).
struct DiscoveredTable {
    TableRef table;
    double estimatedRows = 0;      ///< pg_class.reltuples; 0 when never analyzed
    bool analyzed = false;         ///< reltuples is an estimate, not "unknown"
    std::int64_t totalBytes = 0;   ///< pg_total_relation_size: heap, indexes, TOAST
    std::vector<std::string> primaryKey;
    /// timestamp, timestamptz and date columns, the most likely cursor first: NOT NULL and
    /// indexed ones, then names such as updated_at / modified_at.
    std::vector<std::string> cursorCandidates;
    std::int64_t inserts = 0;
    std::int64_t updates = 0;
    std::int64_t deletes = 0;
    bool readable = true; ///< SELECT on the table and USAGE on its schema
};

/// What the source can do for CDC (from core::probePostgres or the same catalog facts).
struct SourceAbilities {
    bool logicalWal = true;
    bool canReplicate = true;
};

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

/// Picks a strategy for `t`:
/// - no primary key: cursor and CDC are refused (both merge by key); full refresh;
/// - no timestamp or date column: cursor is refused;
/// - a small table that is rarely written: full refresh (a whole copy costs little);
/// - a busy table with deletes: CDC, which sees deletes (cursor sync does not), when the source
///   allows it;
/// - otherwise cursor sync along the best candidate, else CDC, else full refresh.
Recommendation recommendStrategy(const DiscoveredTable &t, const SourceAbilities &source);

/// Thresholds of recommendStrategy(), named so the reasons can quote them.
inline constexpr double kSmallTableRows = 100'000;
inline constexpr std::int64_t kSmallTableBytes = 64LL << 20;

} // namespace driftless::core
