#pragma once

// The CDC pipeline's per-table state, shared by its .cpp files (not part of the engine's API).

#include "core/db/mysqlcatalog.h"
#include "core/db/pgconnection.h"
#include "core/engine/cdc/cdctable.h"
#include "core/engine/cdc/pg/cdcpipeline.h"
#include "core/engine/rows/generatedvalues.h"
#include "core/mergers/merger.h"
#include "core/model/cdcposition.h"

#include "core/engine/cdc/rebackfillcompare.h"
#include <chrono>
#include <future>
#include <map>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace driftless::core {

struct CdcPipeline::Rebackfill {
    Table *table = nullptr;
    std::unique_ptr<PgConnection> loader; ///< holds the snapshot's transaction open
    std::int64_t version = 0;             ///< the snapshot's consistent point
    std::int64_t deleteBelow = 0;         ///< the first snapshot's, when resumed
    std::vector<std::string> after;
    long long copied = 0; ///< rows merged so far, counting those before a restart
    /// Set when pages are compared before they are copied (RebackfillCompare::open).
    std::unique_ptr<RebackfillComparer> compare;
    long long equal = 0;   ///< of `copied`, rows this run found equal and did not copy
    long long removed = 0; ///< compared pages: rows the source no longer has, deleted so far
    long long written = 0; ///< target rows this run changed (copied, or removed)
    /// The next chunk, read from the snapshot while this one is merged.
    std::future<RowSet> ahead;

    ~Rebackfill()
    {
        if (ahead.valid())
            ahead.wait(); // it uses `loader`
    }
};

struct CdcPipeline::Table : CdcTable {
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
