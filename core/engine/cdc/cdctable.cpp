#include "core/engine/cdc/cdctable.h"

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/engine/cdc/cdcoutcome.h"

namespace driftless::core {

StopKind CdcTable::stopFor(const Error &e, const std::string &wayBack)
{
    paused = true;
    userPaused = false;
    const StopKind kind = stopKindOf(e);
    const std::string goesOn = "the pipeline's other tables stream on, this one's changes are not applied";
    stopped = kind == StopKind::SourceChanged ? stopMessage(e, goesOn)
                                              : stopMessage(e, goesOn + ". Fix the cause, then " + wayBack);
    return kind;
}

void CdcTable::dropAndWidenColumns(const TableSchema &schema, const std::vector<std::string> &gone,
                                   const std::vector<std::pair<std::string, std::string>> &widened,
                                   DropColumnPolicy policy, EndpointKind target, EngineObserver &observer)
{
    for (const auto &name : gone) {
        const std::string done = merger->dropColumn(schema, name, policy == DropColumnPolicy::Drop);
        // A kept column was reported when it was first kept (SQLite cannot tell: it says nothing
        // here, the drop was reported when it was kept).
        if (!done.empty() && (policy == DropColumnPolicy::Drop || target != EndpointKind::Sqlite))
            observer.event(Level::Info, key, "schema_change",
                           "column " + displayIdent(name) + " dropped on the source; " + done +
                               " (schema_changes: drop_column: " + std::string(policyName(policy)) + ")");
        dropped.insert(name);
    }
    for (const auto &[name, from] : widened) {
        const std::string done = merger->widenColumn(schema, name);
        observer.event(Level::Info, key, "schema_change",
                       "column " + displayIdent(name) + " widened from " + from + " to " +
                           schema.columns[static_cast<size_t>(schema.columnIndex(name))].typeSql + " " + done);
    }
}

void CdcTable::tookAddedColumns(const Merger &merger, const std::vector<std::string> &added, AddColumnPolicy policy,
                                std::int64_t since, const std::string &where, const std::string &pipeline,
                                EngineObserver &observer)
{
    // A column mapping may leave a new column out (an include list does not name it).
    std::vector<std::string> written, leftOut;
    for (const auto &c : added)
        (merger.writesColumn(c) ? written : leftOut).push_back(c);
    if (!leftOut.empty())
        observer.event(Level::Info, key, "schema_change",
                       "source added column(s) " + displayNames(leftOut) +
                           "; not added to the target: the table's columns: mapping leaves them out");
    if (written.empty())
        return;
    const std::string names = displayNames(written);
    if (policy == AddColumnPolicy::Backfill && merger.fillsColumns()) {
        // Recorded with the batch that carried the column (its checkpoint holds the progress), so
        // a restart resumes the backfill.
        addColumn = widenedColumnFill(addColumn, written, since, wallClockMs());
        fillChecks = 0;
        observer.event(Level::Info, key, "schema_change",
                       "source added column(s) " + names +
                           "; added to the target, existing rows are being filled from the source while the stream "
                           "goes on (rows changed since " +
                           where + " keep the stream's values)");
    } else if (policy == AddColumnPolicy::Backfill) {
        observer.event(Level::Warn, key, "schema_change",
                       "source added column(s) " + names +
                           "; added to the target, but filling the existing rows is not available for " +
                           merger.describeTarget() +
                           " yet: they keep NULL until the table is copied again (driftless-cli backfill " + pipeline +
                           " " + job.spec.table.display() + ")");
    } else {
        observer.event(Level::Info, key, "schema_change",
                       "source added column(s) " + names +
                           "; added to the target and applied (existing rows keep NULL: schema_changes: "
                           "add_column: propagate)");
    }
}

void CdcTable::sayAddedColumnsIgnored(const std::vector<std::string> &added, EngineObserver &observer) const
{
    observer.event(Level::Info, key, "schema_change",
                   "source added column(s) " + displayNames(added) +
                       "; not added to the target (schema_changes: add_column: ignore), the other columns sync on");
}

std::string CdcTable::addColumnPauseFix(const std::string &resnapshot)
{
    return "to take the column, set schema_changes: { add_column: backfill } on the table, apply, then re-snapshot "
           "it: " +
           resnapshot + "; to sync without it, set add_column: ignore, apply, and re-snapshot it the same way";
}

std::string CdcTable::dropColumnPauseFix(const std::string &resnapshot)
{
    return "to keep the column on the target, set schema_changes: { drop_column: keep } on the table; to drop it "
           "there too, set drop_column: drop; apply, then re-snapshot the table: " +
           resnapshot;
}

void CdcTable::sayStopped(StopKind kind, const std::string &pipeline, EngineObserver &observer) const
{
    log(LogLevel::Warn, pipeline + " " + job.spec.table.display() + ": " + stopped);
    observer.tableState(key, stoppedState(kind), stopped, std::nullopt);
    observer.event(Level::Error, key, "sync_failed", stopped);
}

} // namespace driftless::core
