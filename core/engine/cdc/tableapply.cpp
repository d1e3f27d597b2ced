#include "core/engine/cdc/tableapply.h"

#include "core/base/testhooks.h"
#include "core/engine/cdc/cdcoutcome.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/model/loopcounters.h"

#include <algorithm>

namespace driftless::core {

CdcBatchTransaction::CdcBatchTransaction(TargetSession &session, EndpointKind targetKind, EngineObserver &observer)
    : m_session(session), m_targetKind(targetKind), m_observer(observer)
{
}

CdcBatchTransaction::~CdcBatchTransaction()
{
    rollback();
}

void CdcBatchTransaction::begin()
{
    if (m_open)
        return;
    m_session.begin();
    m_open = true;
    m_results.clear();
    m_setAside.clear();
}

void CdcBatchTransaction::rollback() noexcept
{
    if (!m_open)
        return;
    m_session.rollback();
    m_open = false;
}

bool CdcBatchTransaction::apply(CdcTable &t, Merger &merger, bool truncate, RowSet &rows, long long changes,
                                const TableApplySteps &steps)
{
    begin();
    try {
        if (steps.adapt && !steps.adapt())
            return false;
        auto &res = m_results[&t];
        if (truncate) {
            const long long n = merger.truncateInTransaction();
            res.rowsWritten += n;
            m_observer.event(Level::Info, t.key, "truncate",
                             "TRUNCATE replicated: " + std::to_string(n) + " rows removed");
        }
        if (!rows.empty()) {
            if (steps.completeInLayout)
                steps.completeInLayout(rows);
            if (steps.foldKey)
                rows.foldByKey(*steps.foldKey);
            if (steps.resolveConflicts && t.job.twoWay && t.streaming())
                m_setAside[&t] += steps.resolveConflicts(rows);
            if (steps.completeForTarget)
                steps.completeForTarget(rows);
            const bool noDeletes = ignoresDeletes(t.job.spec);
            if (noDeletes)
                if (const long long n = dropDeletes(rows))
                    m_observer.event(Level::Info, t.key, "delete_ignored", ignoredDeletesMessage(n));
            if (steps.filter && t.job.spec.where) {
                steps.filter(rows);
                if (noDeletes)
                    dropDeletes(rows); // rows outside the filter: kept if the target has them
            }
            const ApplyResult r = merger.mergeInTransaction(rows);
            res.rowsWritten += r.rowsWritten;
            res.partialRowsMissing += r.partialRowsMissing;
        }
        res.rowsInBatch += changes;
        return true;
    } catch (const Error &e) {
        if (!stopsOnlyTheTable(e, m_targetKind))
            throw;
        // P4: only this table stops. Its error took the transaction with it; the stream starts
        // again from the positions recorded, and applies the others' changes again without it.
        rollback();
        if (steps.stop)
            steps.stop(e);
        throw CdcRestart{t.job.spec.table.display() + " was stopped by an error; the stream starts again without it"};
    }
}

void CdcBatchTransaction::commit()
{
    try {
        crashPoint("merge.before_commit");
        m_session.commit();
        m_open = false;
    } catch (...) {
        rollback();
        throw;
    }
    crashPoint("batch.after_commit");
    crashPoint("stream.after_commit");
}

void CdcBatchTransaction::commitBatch(const std::vector<BatchCheckpoint> &moved, const BatchReport &report,
                                      const std::function<void()> &durable)
{
    begin(); // a batch of no changes still moves the checkpoints
    try {
        for (const BatchCheckpoint &m : moved)
            if (m.write)
                m.merger->writeCheckpointInTransaction(m.checkpoint, result(*m.table).rowsWritten);
    } catch (...) {
        rollback();
        throw;
    }
    commit();
    if (durable)
        durable();
    if (report.twoWay)
        countApplied(*report.twoWay);
    for (const BatchCheckpoint &m : moved) {
        auto it = m_results.find(m.table);
        if (it == m_results.end())
            continue; // not written, not changed
        m_observer.batchApplied(m.table->key, it->second, m.checkpoint, report.freshMs);
        sayPartialRows(*m.table, it->second, report.partialWhat);
    }
}

void CdcBatchTransaction::countApplied(LoopCounters &counters) const
{
    for (const auto &[t, r] : m_results) {
        auto it = m_setAside.find(t);
        counters.applied += std::max(0LL, r.rowsInBatch - (it == m_setAside.end() ? 0 : it->second));
    }
}

void CdcBatchTransaction::sayPartialRows(const CdcTable &t, const ApplyResult &r, const std::string &what) const
{
    if (!r.partialRowsMissing)
        return;
    m_observer.event(Level::Warn, t.key, "partial_rows",
                     std::to_string(r.partialRowsMissing) + " updated rows with " + what +
                         " are missing in the target and were not applied; reconcile the table");
}

} // namespace driftless::core
