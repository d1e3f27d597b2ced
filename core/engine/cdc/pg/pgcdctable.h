#pragma once

// The Postgres CDC pipeline's per-table state, shared by its .cpp files (the cdc wing's inside,
// not the engine's API).

#include "core/db/mysqlcatalog.h"
#include "core/db/pgconnection.h"
#include "core/engine/cdc/cdctable.h"
#include "core/engine/rows/generatedvalues.h"
#include "core/mergers/merger.h"
#include "core/model/cdcposition.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace driftless::core {

/// A table of a CDC pipeline from a Postgres source: what CdcTable holds, and what pgoutput's
/// stream and the catalog say of it.
struct PgCdcTable : CdcTable {
    TableSchema schema;               ///< every column, generated ones too
    std::vector<std::string> columns; ///< the columns the stream carries (no generated ones)
    StreamLayout layout;              ///< where the schema's columns are in the stream's rows
    /// Two-way: the stream's columns, with the other direction's version column, once seen.
    std::vector<std::string> streamColumns;
    /// Each column's type (OID, typmod) in the last Relation message: a retype shows as a change.
    std::map<std::string, std::pair<std::uint32_t, std::int32_t>> relationTypes;
    /// Each source column's attribute number (pg_attribute.attnum), which a rename keeps and a
    /// drop and an add do not: read at start, renamed with the column.
    std::map<std::string, int> attnums;
    std::optional<PgCdcPosition> position; ///< stored checkpoint position, none when none
    /// Resumed, waiting for another table's re-backfill to end before its own starts.
    bool resumeWaiting = false;
    /// Why a schema change paused it (the last one), or empty.
    std::string schemaPause;
    std::optional<PgRebackfillProgress> rebackfill; ///< progress of a re-backfill in flight
    /// Columns the source had at start and the target lacked, held back until a change carries
    /// them (deferAddedColumns), in the source's order; a drained `run --once` adds the rest.
    std::vector<std::string> heldBack;

    bool streaming() const override { return position && position->streaming(); }
    bool loading() const { return position && !position->streaming(); }
    std::int64_t streamLsn() const { return streaming() ? position->lsn : 0; }
};

} // namespace driftless::core
