#pragma once

// The MariaDB/MySQL CDC pipeline's per-table state, shared by its .cpp files (the cdc wing's
// inside, not the engine's API).

#include "core/db/mysqlcatalog.h"
#include "core/engine/cdc/cdctable.h"
#include "core/mergers/merger.h"
#include "core/model/cdcposition.h"
#include "core/readers/binlog/binlogdecoder.h"

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace driftless::core {

/// A table of a CDC pipeline from a MariaDB/MySQL source: what CdcTable holds, and what the
/// binlog's table maps and the catalog say of it.
struct MysqlCdcTable : CdcTable {
    mysqlcatalog::MysqlTable source;
    std::optional<BinlogCdcPosition> position; ///< stored checkpoint position, none when none
    /// The column names of the last TABLE_MAP seen, and where each schema column is in it.
    std::vector<std::string> mapNames;
    std::vector<int> layout;
    /// The columns of that TABLE_MAP, with their types (a retype shows there).
    std::vector<binlog::Column> mapColumns;
    /// Columns the source gained that the target does not take (`add_column: ignore`).
    std::set<std::string> ignored;
    /// Two-way with a Postgres target (a Postgres<->MariaDB pair): the target's columns' own types,
    /// as conflict detection reads them (conflictTarget is a MariaDB/MySQL target's).
    std::optional<TableSchema> conflictTargetPg;

    bool streaming() const override { return position && position->streaming(); }
    bool loading() const { return position && !position->streaming(); }
    binlog::Position streamPosition() const { return streaming() ? position->at : binlog::Position{}; }
};

/// What a table a DBA paused shows while the binlog stream goes on for the others.
inline constexpr const char *kBinlogPausedMessage =
    "paused: its binlog changes are not applied and its position stays; Resume reads them from there";

/// Two-way: `table` without the columns Driftless keeps in a table it merges into
/// (`_driftless_version`), which join `ignored` (the binlog's images carry them; they stay out).
void dropOwnColumns(mysqlcatalog::MysqlTable &table, std::set<std::string> &ignored);

} // namespace driftless::core
