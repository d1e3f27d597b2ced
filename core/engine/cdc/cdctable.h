#pragma once

// What every CDC table carries, whichever source it streams from: the first piece of the one CDC
// skeleton (design note ENGINE-WINGS, "the skeleton"). Each source's pipeline adds its own fields
// (CdcPipeline::Table for Postgres, MysqlCdcPipeline::Table for MariaDB/MySQL) and says where its
// table stands (`streaming`); what both do alike with these fields is written once below.

#include "core/db/mysqlcatalog.h"
#include "core/engine/jobs/observer.h"
#include "core/engine/jobs/tablejob.h"
#include "core/engine/schema/columnbackfill.h"
#include "core/mergers/merger.h"
#include "core/model/cdcposition.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace driftless::core {

struct CdcTable {
    virtual ~CdcTable() = default;

    TableJob job;
    TableKey key;
    std::unique_ptr<Merger> merger;
    std::int64_t version = 0; ///< the version of the stored checkpoint
    long long loaded = 0;     ///< rows its initial load copied
    bool paused = false;
    /// Paused by a DBA (`paused` alone: by a schema change or an error, which Resume does not lift).
    bool userPaused = false;
    /// Why an error stopped it (`paused` too, until it is copied again), or empty.
    std::string stopped;
    /// Columns the source dropped that the stream may still carry (changes made before the drop,
    /// read after it): left out of the rows.
    std::set<std::string> dropped;
    /// A backfill of columns the source gained (`add_column: backfill`), stored in the position.
    std::optional<PgAddColumnProgress> addColumn;
    /// Its final comparison: how often it differed, and when to look again.
    int fillChecks = 0;
    std::chrono::steady_clock::time_point nextFillCheck;
    /// Two-way with a MariaDB/MySQL target: its table as conflict detection reads it (once).
    std::optional<mysqlcatalog::MysqlTable> conflictTarget;

    /// Its checkpoint says it follows the stream (its initial load is done).
    virtual bool streaming() const = 0;

    /// Says that an error of kind `kind` stopped it (`stopped` holds the message): the log, its
    /// state, and a `sync_failed` event (P4: the pipeline's other tables go on).
    void sayStopped(StopKind kind, const std::string &pipeline, EngineObserver &observer) const;

    /// A column backfill step is due: one is in flight on a streaming table that is not paused,
    /// and it has not compared yet, or `now` (a drained `run --once`, which compares for the
    /// last time) or its next look is due.
    bool columnFillDue(bool now) const
    {
        return addColumn && !paused && streaming() &&
               (fillChecks == 0 || now || std::chrono::steady_clock::now() >= nextFillCheck);
    }
    /// How many times a column backfill's final comparison may differ (rows the stream changes
    /// meanwhile) before it settles for what it has, while the stream goes on.
    static constexpr int kFillChecks = 10;

    /// What a column backfill step that did not finish leaves: a chunk copied (said as the
    /// table's state), or a comparison that differed (looked at again in a second). Returns
    /// false when the step finished (the caller stores the end and says it).
    bool columnFillGoesOn(const ColumnFillStep &step, EngineObserver &observer)
    {
        switch (step.outcome) {
        case ColumnFillStep::Chunk:
            observer.tableState(key, TableState::Streaming, step.message, std::nullopt);
            return true;
        case ColumnFillStep::LookAgain:
            ++fillChecks;
            nextFillCheck = std::chrono::steady_clock::now() + std::chrono::seconds(1);
            return true;
        case ColumnFillStep::Done:
            break;
        }
        return false;
    }
};

} // namespace driftless::core
