#pragma once

// What every CDC table carries, whichever source it streams from: the first piece of the one CDC
// skeleton (design note ENGINE-WINGS, "the skeleton"). Each source's pipeline adds its own fields
// (PgCdcTable for Postgres, MysqlCdcTable for MariaDB/MySQL) and says where its table stands
// (`streaming`); what both do alike with these fields is written once below: the pause a DBA asks
// for, the stop an error makes (P4), the column changes a schema policy applies.

#include "core/db/mysqlcatalog.h"
#include "core/engine/cdc/cdcoutcome.h"
#include "core/engine/jobs/observer.h"
#include "core/engine/jobs/pauses.h"
#include "core/engine/jobs/tablejob.h"
#include "core/engine/schema/columnbackfill.h"
#include "core/mergers/merger.h"
#include "core/model/cdcposition.h"
#include "core/model/schemachangepolicy.h"
#include "core/model/vocabulary.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

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

    /// What a DBA's pause or resume asks of it now; what follows is the source's (a resume: a
    /// re-backfill from a fresh snapshot on Postgres, a stream from its position on MariaDB).
    enum class PauseTurn { None, Pause, Resume };
    /// The one decision both sources make, between target transactions: `wanted` is whether the
    /// DBA's pauses hold it (pauseWanted). A table a schema change or an error paused is left
    /// alone: only a copy lifts that.
    PauseTurn pauseTurn(bool wanted) const
    {
        if (paused && !userPaused)
            return PauseTurn::None;
        if (wanted && !paused)
            return PauseTurn::Pause;
        if (!wanted && userPaused)
            return PauseTurn::Resume;
        return PauseTurn::None;
    }
    /// Whether `pauses` (none: nothing is paused) holds it.
    bool pauseWanted(const PauseSet *pauses) const { return pauses && pauses->contains(job.pipeline, job.spec.table); }

    /// P4, written once: marks it stopped by `e` (paused, not by a DBA, `stopped` the reason and
    /// what happens now), naming `wayBack`, what copies it again, unless the error is a change of
    /// source, whose ways back (recover, resnapshot) its hint names. Returns the kind of stop; the
    /// source records it in the table's checkpoint, then calls sayStopped.
    StopKind stopFor(const Error &e, const std::string &wayBack);

    /// Says that an error of kind `kind` stopped it (`stopped` holds the message): the log, its
    /// state, and a `sync_failed` event (P4: the pipeline's other tables go on).
    void sayStopped(StopKind kind, const std::string &pipeline, EngineObserver &observer) const;

    /// In an open target transaction: drops the target columns the source dropped (`gone`, by
    /// `policy`: kept columns stay, left out of the rows) and widens the ones it retyped (`widened`:
    /// name, the target's type before), as `schema`, the source's columns, says; each said as a
    /// `schema_change` event. `target` is the target's kind (SQLite cannot tell a kept column).
    /// Throws SchemaError when the target cannot.
    void dropAndWidenColumns(const TableSchema &schema, const std::vector<std::string> &gone,
                             const std::vector<std::pair<std::string, std::string>> &widened, DropColumnPolicy policy,
                             EndpointKind target, EngineObserver &observer);

    /// The source added `added` (in the stream from version `since` on, which `where` says in the
    /// source's words) and the target took them through `merger` (the one that added them: the
    /// stream's) by `add_column: propagate` or `backfill`: says
    /// which a column mapping leaves out, then starts the backfill of the others, or says why
    /// they keep NULL. Called in the target transaction that carries the change.
    void tookAddedColumns(const Merger &merger, const std::vector<std::string> &added, AddColumnPolicy policy,
                          std::int64_t since, const std::string &where, const std::string &pipeline,
                          EngineObserver &observer);
    /// The source added `added`, which `add_column: ignore` leaves out of the target: said.
    void sayAddedColumnsIgnored(const std::vector<std::string> &added, EngineObserver &observer) const;
    /// What to do about a table `add_column: pause` paused, re-snapshotting with `resnapshot`.
    static std::string addColumnPauseFix(const std::string &resnapshot);
    /// What to do about a table `drop_column: pause` paused, re-snapshotting with `resnapshot`.
    static std::string dropColumnPauseFix(const std::string &resnapshot);

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

/// The tables an error stopped (P4), with their messages, of a pipeline's `tables`.
template <class Tables> std::vector<StoppedTable> stoppedTablesOf(const Tables &tables)
{
    std::vector<StoppedTable> out;
    for (const auto &t : tables)
        if (!t->stopped.empty())
            out.push_back({t->job.spec.table, t->stopped});
    return out;
}

} // namespace driftless::core
