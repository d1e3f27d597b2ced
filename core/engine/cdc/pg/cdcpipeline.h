#pragma once

#include "core/engine/cdc/cdcoutcome.h"
#include "core/engine/jobs/observer.h"
#include "core/engine/jobs/pauses.h"
#include "core/engine/sync/tablesync.h"
#include "core/mergers/merger.h"
#include "core/model/cdcbatch.h"
#include "core/model/cdcposition.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <vector>

namespace driftless::core {

struct SlotWaitReport;

class PgConnection;
class PgReplicationConnection;
class PgResult;
struct PgCdcTable;

/// Change data capture for the CDC tables of one pipeline from a Postgres source: one
/// publication and one replication slot (`driftless_<pipeline>`), an initial load from the
/// slot's exported snapshot, then the pgoutput stream applied in micro-batches.
///
/// The promises, and how they are kept:
/// - P1 no loss: a batch's changes to every table and every table's checkpoint commit in one
///   target transaction; only then is its end LSN acknowledged to the slot.
/// - P2/P3: changes carry their commit LSN as version; batches hold whole transactions in
///   commit order; the guarded merge makes replays harmless; a restart skips transactions
///   already applied.
/// - P4 fail closed: a missing or invalidated slot, a different cluster, a table without a
///   primary key or replica identity, an incompatible schema change: the pipeline (or table)
///   stops with the reason and what to do. Nothing is skipped silently.
///
/// Initial load: tables are copied in primary-key chunks straight into the empty target, each
/// chunk committed with its checkpoint, inside the snapshot the slot exported, so rows carry the
/// slot's consistent point as version and the stream takes over exactly where the snapshot ends.
/// A load interrupted by a crash continues at its next chunk in the snapshot of a temporary slot,
/// whose consistent point versions those rows just as exactly (docs/cdc.md explains why this is
/// correct under concurrent writes).
///
/// Pause (Options::pauses, checked between target transactions about once a second): the
/// table's changes are skipped while the other tables stream, its checkpoint is marked paused
/// and stops moving, and a re-backfill of it under way is dropped. Resume unpauses it in the
/// same step (on the apply thread, between transactions) as a re-backfill of it starts from a
/// fresh snapshot: every change made during the pause is in that snapshot, every later one
/// arrives in the stream, and the guarded merge orders the two (docs/pause.md).
class CdcPipeline {
public:
    /// `jobs` are the pipeline's CDC tables (same source and target).
    CdcPipeline(std::vector<TableJob> jobs, std::optional<std::string> publication, EngineObserver &observer);
    ~CdcPipeline();

    using Options = CdcRunOptions;
    /// Runs until stopped (or caught up, with `once`). Throws Error.
    void run(std::stop_token stop, Options options);
    /// The tables an error stopped (P4), this run or before it, while the others streamed on.
    std::vector<StoppedTable> stoppedTables() const;

private:
    using Table = PgCdcTable;
    struct Rebackfill;
    void preflight(PgConnection &src);
    /// The target session (two-way: marked as this direction's own writes, with what the
    /// conflict clock needs on both sides, and the reverse direction's version columns).
    void openTarget(PgConnection &src);
    /// At start, per table: its merger, its stored checkpoint, the schema changes made while the
    /// engine was stopped, a re-backfill or column backfill to go on with, a stop or pause to keep.
    void prepareTable(Table &t, PgConnection &src);
    /// The pipeline's slot as pg_replication_slots shows it (no row: none).
    PgResult readSlot(PgConnection &src) const;
    /// Waits (a bounded time) for a slot another process holds to be let go, reading `slot`
    /// again. False when stopped meanwhile.
    bool waitForSlot(PgConnection &src, PgResult &slot, std::stop_token stop);
    /// The slot is gone while tables streamed from it: throws what happened and what to do.
    [[noreturn]] void slotGone();
    /// Forward direction of a two-way pipeline, at every start: the reverse direction's start on
    /// the target (its slot and publication, or the target's binlog end) where it has none yet.
    void startReverseDirection();
    /// First start: creates the slot and loads every table from its exported snapshot (two-way:
    /// the reverse direction's start is recorded before).
    void startWithNewSlot(PgReplicationConnection &repl, std::stop_token stop);
    /// The slot exists: checks it is ours and has not moved past a checkpoint, then loads the
    /// tables in `needLoad` (added since, or a load a crash interrupted) from a temporary slot's
    /// snapshot.
    void continueFromSlot(const PgResult &slot, const std::vector<Table *> &needLoad, std::stop_token stop);
    /// Before the slot is read (cdcpipelineidentity.cpp): the cluster behind the endpoint must
    /// be the one the checkpoints were read from (its system identifier), on their timeline or
    /// on one that left it past every stored position (a promoted standby that had everything
    /// the target has). Else throws Error naming both and the re-snapshot (ARCHITECTURE.md P6).
    /// Sets m_systemId, m_timeline and, for a continuing timeline, m_sourceChange.
    void checkSourceIdentity(PgReplicationConnection &repl);
    /// True when the pipeline says `recover: auto` or a table's checkpoint holds the `recover`
    /// request `driftless-cli recover` leaves.
    bool recoveryAllowed() const;
    /// The source changed in a way the stream cannot read on from (`what`, `why`): a recovery
    /// (m_recovery) when allowed, else throws SourceChangedError naming `driftless-cli recover`
    /// and resnapshot.
    void sourceChanged(const std::string &what, const std::string &why);
    /// With m_recovery set, after the identity check: drops a slot of the pipeline's name the
    /// server has (`slotThere`), creates the slot the stream takes over from, and moves every
    /// streaming table there under a new epoch with a re-backfill requested, which compares it
    /// page by page with the new server and copies what differs. Returns the slot's consistent
    /// point.
    std::int64_t startRecovery(PgReplicationConnection &repl, PgConnection &src, bool slotThere);
    /// A re-backfill of `t` finished (`compared` rows read, `written` rows changed): the event with
    /// the figures once the recovery's last table is done.
    void recoveredTable(Table &t, long long compared, long long written);
    void ensurePublication(PgConnection &src);
    /// Where the stream stands at `lsn`, on the pipeline's slot, cluster and timeline.
    PgCdcPosition positionAt(std::int64_t lsn) const;
    /// What a Postgres table's initial load reads (tableload.h does the rest).
    class LoadSource;
    /// `t`'s target table was adopted (Merger::adoptedNow) and holds rows: instead of a load, it
    /// streams from `version` (the snapshot's consistent point) at once, and a re-backfill compares
    /// it with the source page by page and copies only what differs (docs/adopt.md).
    void adoptByComparing(Table &t, std::int64_t version);
    void load(std::vector<Table *> tables, const std::string &snapshot, std::int64_t version, std::stop_token stop);
    void stream(std::stop_token stop, Options options, PgReplicationConnection &repl, PgConnection &src);
    struct ApplySide;
    /// The apply thread between target transactions: requests from other processes, a
    /// heartbeat, one chunk of a re-backfill or of a column backfill.
    void betweenTransactions(ApplySide &side, std::stop_token stop);
    /// A heartbeat batch: the target is fresh as of the source's clock, and the idle position is
    /// recorded now and then (before the slot hears of it).
    void applyIdle(ApplySide &side, const CdcBatch &b);
    /// One batch: each table's share through tableapply, then (with the transaction's end)
    /// every table's checkpoint, the commit, the slot's acknowledgement and the figures.
    void applyBatch(ApplySide &side, CdcBatch &b);
    /// The stream's rows for `t` came with other `columns`, the first of them in a transaction
    /// that committed at `since`: applies the add_column policy, or pauses the table.
    bool adaptToLayout(Table &t, const std::vector<std::string> &columns, PgConnection &src, std::int64_t since);
    /// The source dropped `dropped` (the stream now carries `columns`): applies the
    /// drop_column policy (keep, drop) or pauses the table.
    bool dropColumns(Table &t, const std::vector<std::string> &dropped, const std::vector<std::string> &columns);
    /// The stream's Relation for `t` shows columns retyped under the same name: applies the
    /// type_change policy (widen) or pauses the table with the ALTER a DBA should run.
    bool adaptToTypes(Table &t, const CdcTableChanges &ch, PgConnection &src);
    /// The renames the stream's new `columns` show for `t`: (old, new) pairs, told apart from a
    /// drop and an add by the column's attribute number on the source, which a rename keeps.
    /// Empty when the change is not (only) renames.
    std::vector<std::pair<std::string, std::string>>
    renamedColumns(const Table &t, const std::vector<std::string> &columns, PgConnection &src) const;
    /// Adds to `t.attnums` the source's columns it does not know yet.
    void readAttnums(Table &t, PgConnection &src);
    /// At start, before prepare(): columns the source renamed while the engine was stopped get
    /// back the names the stream last gave them (the stored checkpoint's attribute numbers), so
    /// the changes made before the rename apply as they are and the rename itself arrives with
    /// the stream, as when the engine runs. Not for a table loading, filling or stopped.
    void restoreStreamNames(Table &t);
    /// Applies the rename_column policy (rename on the target) or pauses the table.
    bool renameColumns(Table &t, const std::vector<std::pair<std::string, std::string>> &renames,
                       const std::vector<std::string> &columns);
    /// At start, after prepare(): target columns the source dropped, and target columns narrower
    /// than the source's, while the engine was stopped, get their policy before the drift check.
    /// Returns the target's columns the drift check should compare (the kept ones left out).
    std::vector<std::pair<std::string, std::string>> applyColumnPoliciesAtStart(Table &t);
    /// Pauses `t` for a schema change: state, event, and what to do.
    void pauseForSchema(Table &t, const std::string &why, const std::string &fix);
    /// In the stream's open transaction, after pauseForSchema: marks the table's checkpoint
    /// stopped with the reason, so a restart keeps it stopped (until it is copied again) while
    /// the slot moves on with the other tables.
    void markSchemaPause(Table &t);
    /// `ALTER TABLE <target> ALTER COLUMN <column> TYPE <type> ...` for the DBA to run, or how to
    /// adapt a target that has no such statement.
    std::string alterFor(const Table &t, const std::string &column, const std::string &type) const;
    /// The command that re-snapshots `t`, for the fixes a pause names.
    std::string resnapshotCommand(const Table &t) const;
    /// Before prepare(): leaves out of `t`'s schema the source columns an existing target lacks,
    /// so they are met (and their policy applied) when the first change carrying them arrives,
    /// the version of which the backfill needs. Returns them.
    std::vector<std::string> deferAddedColumns(Table &t);
    /// After a drained `run --once`: the columns `t` held back at start that no change carried
    /// are added (their add_column policy applied) at the table's applied version.
    void addHeldBackColumns(Table &t, PgConnection &src);
    /// A table with a column backfill to advance, or null.
    Table *columnFillDue() const;
    /// One chunk of `t`'s column backfill in its own target transaction (with its progress); the
    /// last one checks the columns against the source and reports. An error of the table's own
    /// (P4) stops only that table.
    void addColumnStepOrStop(Table &t, PgConnection &src);
    void addColumnStep(Table &t, PgConnection &src);
    void completePartialRows(Table &t, RowSet &rows, PgConnection &src);
    /// Two-way: compares the batch's before-images with the target's rows and applies the
    /// table's conflict policy (core/engine/conflicts.h) before the merge.
    /// Returns the changes it set aside (queued, or lost to the other side): not written.
    long long resolveTwoWayConflicts(Table &t, CdcTableChanges &ch);
    /// Puts the stream's rows into the table's layout, with the values of the generated columns
    /// the stream lacks and the target does not compute read from the source.
    void fillGeneratedValues(Table &t, RowSet &rows, PgConnection &src);
    /// The source's generated columns an existing target table lacks (an older version's).
    std::vector<std::string> generatedColumnsLacking(Table &t);
    /// After prepare() added `added`: has what it could not compute filled by a copy.
    void fillAddedGeneratedColumns(Table &t, const std::vector<std::string> &added);
    std::string positionOf(const Table &t) const;
    /// Stores `t`'s position (with its re-backfill's progress) in a transaction of its own,
    /// forgetting the keys a re-backfill saw first when `clearSeen`.
    void writeCheckpoint(Table &t, bool clearSeen);
    void pollRequests();
    bool wantPaused(const Table &t) const;
    /// Applies pauses and resumes asked for since the last call (between target transactions).
    void applyPauses();
    /// Records in the target that the stream skips `t`'s changes from here on (`paused` in its
    /// position), with the keys seen by the re-backfill it dropped, if `droppedCopy`, forgotten.
    void recordSkipped(Table &t, bool droppedCopy);
    void pauseTable(Table &t);
    void resumeTable(Table &t);
    /// `e`, met applying `t`'s changes, is the table's alone: stops it (recorded in its
    /// checkpoint, outside any open transaction) and shows it red; the others go on.
    void stopTable(Table &t, const Error &e);
    /// Idle with everything applied: records `walEnd` as every streaming table's position, so
    /// it can be acknowledged.
    void saveIdlePosition(std::int64_t walEnd);
    /// Writes one heartbeat; returns false (reporting it once) when it cannot.
    bool writeHeartbeat(PgConnection &src, bool failedBefore);
    /// Starts (or, with `progress`, resumes) a copy of `t` under the stream; `rowByRow`: comparing
    /// row by row (an adopted table: only the rows that differ are written).
    void startRebackfill(Table &t, const std::optional<PgRebackfillProgress> &progress, bool rowByRow = false);
    void cancelRebackfill(Table &t);
    /// With `once`, after the drain: runs the re-backfills under way or waiting to their end.
    void finishRebackfills(std::stop_token stop);
    void rebackfillStep();
    /// rebackfillStep(); an error of the table's own (P4) stops only that table.
    void rebackfillStepOrStop();
    static PgRebackfillProgress rebackfillPosition(const Rebackfill &rb);
    std::vector<Table *> tablePointers() const;
    /// Shows `tables` what a slot creation waits for (their state message; an event the first time).
    std::function<void(const SlotWaitReport &)> slotWaitReporter(std::vector<Table *> tables);

    std::vector<TableJob> m_jobs;
    std::optional<std::string> m_publication;
    EngineObserver &m_observer;
    std::string m_pipeline;
    std::string m_slot;
    std::string m_systemId;
    int m_timeline = 0;
    /// The source moved to another timeline that continues the target's history: what changed,
    /// for the messages that follow (a promoted standby has none of the old primary's slots).
    std::string m_sourceChange;
    /// A recovery by diff under way (docs/failover.md): what changed, when it began, the tables
    /// still being compared, and the figures so far.
    struct Recovery {
        std::string what;
        std::int64_t startedMs = 0;
        std::set<Table *> pending;
        long long compared = 0;
        long long written = 0;
    };
    std::optional<Recovery> m_recovery;
    /// The `backfilling` message of a table's copy under the stream: a recovery's, an adoption's
    /// (a copy comparing row by row), or a re-backfill's.
    const char *copyMessage(const Table &t) const;
    std::vector<std::unique_ptr<Table>> m_tables;
    std::unique_ptr<TargetSession> m_session;
    std::unique_ptr<Rebackfill> m_rebackfill;
    std::shared_ptr<const PauseSet> m_pauses;
    /// Everything of the streaming tables is applied up to here (what the slot is told).
    std::atomic<std::int64_t> m_acked{0};
    /// The slot's confirmed_flush_lsn when the run started (where a stream of only paused tables
    /// starts).
    std::int64_t m_slotConfirmed = 0;
    /// A `run --once` pass (`Options::once`) has applied what the source had when it began:
    /// column checks are final.
    bool m_drained = false;
    /// The running run()'s stop token.
    std::stop_token m_stop;
};

} // namespace driftless::core
