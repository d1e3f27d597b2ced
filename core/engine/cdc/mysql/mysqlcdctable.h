#pragma once

// MysqlCdcPipeline's per-table state, shared by its .cpp files (not part of the engine's API).

#include "core/db/mysqlcatalog.h"
#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/mergers/merger.h"
#include "core/model/cdcposition.h"

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace driftless::core {

struct MysqlCdcPipeline::Table {
    TableJob job;
    TableKey key;
    mysqlcatalog::MysqlTable source;
    std::unique_ptr<Merger> merger;
    std::optional<BinlogCdcPosition> position; ///< stored checkpoint position, none when none
    std::int64_t version = 0;
    long long loaded = 0;
    bool paused = false;
    /// Paused by a DBA (`paused` alone: by a schema change or an error, which Resume does not lift).
    bool userPaused = false;
    /// Why an error stopped it (`paused` too, until a re-snapshot), or empty.
    std::string stopped;
    /// The column names of the last TABLE_MAP seen, and where each schema column is in it.
    std::vector<std::string> mapNames;
    std::vector<int> layout;
    /// The columns of that TABLE_MAP, with their types (a retype shows there).
    std::vector<binlog::Column> mapColumns;
    /// Columns the source dropped: events written before the drop still carry them, and their
    /// rows leave them out.
    std::set<std::string> dropped;
    /// Columns the source gained that the target does not take (`add_column: ignore`).
    std::set<std::string> ignored;
    /// A column backfill in flight (`add_column: backfill`), stored in the checkpoint position.
    std::optional<PgAddColumnProgress> addColumn;
    /// Its final comparison: how often it differed, and when to look again.
    int fillChecks = 0;
    std::chrono::steady_clock::time_point nextFillCheck;

    /// Two-way: the target's table as conflict detection reads it (described once).
    std::optional<mysqlcatalog::MysqlTable> conflictTarget;
    /// The same for a Postgres target (a Postgres<->MariaDB pair): its columns' own types.
    std::optional<TableSchema> conflictTargetPg;

    bool streaming() const { return position && position->streaming(); }
    bool loading() const { return position && !position->streaming(); }
    binlog::Position streamPosition() const { return streaming() ? position->at : binlog::Position{}; }
};

/// Two-way: `table` without the columns Driftless keeps in a table it merges into
/// (`_driftless_version`), which join `ignored` (the binlog's images carry them; they stay out).
void dropOwnColumns(mysqlcatalog::MysqlTable &table, std::set<std::string> &ignored);

} // namespace driftless::core
