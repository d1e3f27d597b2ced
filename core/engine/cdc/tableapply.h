#pragma once

// A CDC batch's target transaction, written once for both sources: one table's share applied in
// one documented order of steps, a table an error stops on its own (P4), and the commit with its
// crash points (design note ENGINE-WINGS, "the skeleton"). What truly differs per source comes in
// as the steps of TableApplySteps.

#include "core/engine/cdc/cdctable.h"
#include "core/engine/jobs/observer.h"
#include "core/mergers/merger.h"
#include "core/model/batch.h"
#include "core/model/error.h"
#include "core/model/vocabulary.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace driftless::core {

struct LoopCounters;

/// What a source does to one table's share of a batch where the sources differ; an empty step is
/// skipped. The order they run in is CdcBatchTransaction::apply's.
struct TableApplySteps {
    /// The batch shows the table in another layout or with other types (a Postgres Relation
    /// message): adapt the table and its target. False when the change paused the table (its
    /// share is left out, and the caller says why).
    std::function<bool()> adapt;
    /// Values the log left out of the stream's own layout (MariaDB: a generated column a MINIMAL
    /// image lacks), completed before folding, so no later image inherits an earlier one's value.
    std::function<void(RowSet &)> completeInLayout;
    /// Fold the rows by key here, on these key columns (MariaDB; Postgres's reader folds them).
    const std::vector<int> *foldKey = nullptr;
    /// Two-way conflict detection, for a streaming table only (while a table loads its target
    /// lacks rows the stream changes), in the stream's own layout, before anything reshapes the
    /// rows. Returns how many changes it set aside (queued, or lost to the other side).
    std::function<long long(RowSet &)> resolveConflicts;
    /// Values outside the stream's layout or unchanged in it (Postgres: generated columns, large
    /// values the WAL did not repeat), completed after conflict detection.
    std::function<void(RowSet &)> completeForTarget;
    /// The table's row filter (`where`), evaluated on the source.
    std::function<void(RowSet &)> filter;
    /// P4: stops only this table for `e`. The batch's transaction is rolled back already.
    std::function<void(const Error &)> stop;
};

/// Where one table's checkpoint moves at the end of a batch, and the merger that writes it.
struct BatchCheckpoint {
    CdcTable *table = nullptr;
    Merger *merger = nullptr;
    Checkpoint checkpoint;
    /// False: the batch completed no transaction, the checkpoint stays (it is only reported).
    bool write = true;
};

/// What the observer hears of a committed batch.
struct BatchReport {
    /// When the source committed the batch's last transaction, on the workstation's clock (ms).
    std::int64_t freshMs = 0;
    /// Two-way: the direction's counters, which count what the batch applied.
    LoopCounters *twoWay = nullptr;
    /// Which values the log did not carry, for a table with partial rows the target lacks.
    std::string partialWhat;
};

/// One target transaction of a CDC pipeline, holding one batch (or, for a source transaction too
/// big for one batch, its pieces until its end). Rolled back when destroyed open: a transaction
/// cut short by a stop or an error leaves nothing.
class CdcBatchTransaction {
public:
    CdcBatchTransaction(TargetSession &session, EndpointKind targetKind, EngineObserver &observer);
    ~CdcBatchTransaction();
    CdcBatchTransaction(const CdcBatchTransaction &) = delete;
    CdcBatchTransaction &operator=(const CdcBatchTransaction &) = delete;

    bool open() const { return m_open; }
    /// Opens the transaction unless it is open; a new one starts with no results.
    void begin();
    /// Applies table `t`'s share of the batch through `merger`, in this order:
    ///  1. `adapt` (a layout or type change), then the TRUNCATE the source ran, if `truncate`;
    ///  2. `completeInLayout`, then folding by `foldKey`;
    ///  3. two-way conflicts (`resolveConflicts`) on a streaming table;
    ///  4. `completeForTarget`;
    ///  5. the delete policy (`deletes: ignore` drops deletes, said as `delete_ignored`);
    ///  6. the row filter, then the delete policy again (rows outside the filter stay in the
    ///     target if it has them);
    ///  7. the merge, counted in the table's result (`changes`: the source changes it stands for).
    /// Returns false when `adapt` paused the table. An error that is only the table's
    /// (stopsOnlyTheTable) rolls the transaction back, calls `steps.stop` and throws CdcRestart,
    /// so the stream starts again without the table; any other error propagates.
    bool apply(CdcTable &t, Merger &merger, bool truncate, RowSet &rows, long long changes,
               const TableApplySteps &steps);
    /// The results of the transaction so far, per table; result() adds a table with none.
    const std::map<CdcTable *, ApplyResult> &results() const { return m_results; }
    ApplyResult &result(CdcTable &t) { return m_results[&t]; }
    /// Commits what the caller wrote in it (its changes and the streaming tables' checkpoints),
    /// between the crash points `merge.before_commit`, and `batch.after_commit` then
    /// `stream.after_commit`. A failed commit is rolled back and thrown. The results stay until
    /// the next begin().
    void commit();
    void rollback() noexcept;
    /// The end of a batch, written once for both sources: each checkpoint of `moved` written in
    /// the transaction with the rows its table wrote, the commit (commit(), with its crash
    /// points), then `durable` (the position is durable here: Postgres lets the slot hear of it,
    /// MariaDB moves its tables' positions), the two-way count, and the batch applied (`report`),
    /// with its partial rows said, for each table of `moved` whose checkpoint was written or that
    /// the batch changed. A failed write or commit is rolled back and thrown.
    void commitBatch(const std::vector<BatchCheckpoint> &moved, const BatchReport &report,
                     const std::function<void()> &durable);
    /// Two-way: counts what the transaction applied, less what conflict handling set aside.
    void countApplied(LoopCounters &counters) const;
    /// Says, for a table whose result has partial rows missing in the target, that they were
    /// not applied and to reconcile; `what` says which values the log did not carry.
    void sayPartialRows(const CdcTable &t, const ApplyResult &r, const std::string &what) const;

private:
    TargetSession &m_session;
    EndpointKind m_targetKind;
    EngineObserver &m_observer;
    bool m_open = false;
    std::map<CdcTable *, ApplyResult> m_results;
    /// Two-way: per table, the changes conflict handling set aside.
    std::map<CdcTable *, long long> m_setAside;
};

} // namespace driftless::core
