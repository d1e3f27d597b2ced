// MysqlCdcPipeline's schema side: columns a MariaDB/MySQL source table gains under the stream
// (`schema_changes: { add_column: ... }`) and their backfill (docs/schema-changes.md).

#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/mysql/mysqlcdctable.h"

#include "core/base/clock.h"
#include "core/base/testhooks.h"
#include "core/db/mysqlconnection.h"
#include "core/engine/cdc/cdcoutcome.h"
#include "core/engine/schema/columnbackfill.h"
#include "core/engine/schema/columnbackfillmysql.h"
#include "core/model/error.h"

#include <algorithm>

namespace driftless::core {

void MysqlCdcPipeline::pauseForSchema(Table &t, const std::string &why, const std::string &fix)
{
    t.paused = true;
    const std::string msg = why + "; the table is paused (its changes are not applied); " + fix;
    m_observer.tableState(t.key, TableState::Paused, msg, std::nullopt);
    m_observer.event(Level::Error, t.key, "schema_change", msg);
}

std::string MysqlCdcPipeline::resnapshotCommand(const Table &t) const
{
    return "driftless-cli resnapshot " + m_pipeline + " " + t.job.spec.table.display();
}

void MysqlCdcPipeline::holdBackAddedColumns(Table &t)
{
    // Two-way, or a table to adopt: its columns are checked as they are, not held back.
    if (t.job.twoWay || (t.job.adopt && t.merger->unmanagedTarget()))
        return;
    std::vector<std::string> names;
    for (const auto &c : t.source.columns)
        names.push_back(c.name);
    const auto target = t.merger->targetColumnsAsSource(t.source.schema);
    std::vector<std::string> gone, come;
    for (const auto &[name, type] : target)
        if (t.source.schema.columnIndex(name) < 0)
            gone.push_back(name);
    for (const auto &c : t.source.columns)
        if (!c.generated && !target.empty() &&
            std::none_of(target.begin(), target.end(), [&](const auto &h) { return h.first == c.name; }))
            come.push_back(c.name);
    if (!gone.empty() && !come.empty()) {
        // Changed while the engine was stopped: as in the stream, a possible rename is not guessed.
        pauseForSchema(t,
                       "column(s) " + displayNames(gone) + " are gone from the source and " + displayNames(come) +
                           " appeared at once; MariaDB's binlog does not say whether that is a rename (renames have "
                           "no signal there), so it is not guessed",
                       "rename or add the column on the target to match the source, then re-snapshot the table: " +
                           resnapshotCommand(t));
        return;
    }
    TableSchema schema = t.source.schema;
    if (core::holdBackAddedColumns(schema, names, target).empty())
        return;
    std::vector<mysqlcatalog::MysqlColumn> kept;
    for (const auto &c : t.source.columns)
        if (schema.columnIndex(c.name) >= 0)
            kept.push_back(c);
    t.source.schema = std::move(schema);
    t.source.columns = std::move(kept);
}

bool MysqlCdcPipeline::adaptToAddedColumns(Table &t, mysqlcatalog::MysqlTable fresh,
                                           const std::vector<std::string> &mapNames, Merger &merger,
                                           const binlog::Position &at, std::int64_t since,
                                           const std::function<void()> &beginBatch)
{
    std::vector<std::string> added, gone;
    for (const auto &c : fresh.columns)
        if (t.source.schema.columnIndex(c.name) < 0 && !t.ignored.count(c.name))
            added.push_back(c.name);
    for (const auto &c : t.source.columns)
        if (std::find(mapNames.begin(), mapNames.end(), c.name) == mapNames.end())
            gone.push_back(c.name);
    const std::string names = displayNames(added);
    if (!gone.empty()) {
        // The binlog says nothing of renames: a column gone and one come in one step may be one.
        pauseForSchema(t,
                       "column(s) " + displayNames(gone) + " are gone from the source and " + names +
                           " appeared at once; MariaDB's binlog does not say whether that is a rename (renames have "
                           "no signal there), so it is not guessed",
                       "rename or add the column on the target to match the source, then re-snapshot the table: " +
                           resnapshotCommand(t));
        return false;
    }
    const AddColumnPolicy policy = addColumnPolicy(t.job.spec, t.job.pipelineAddColumn);
    if (policy == AddColumnPolicy::Ignore) {
        t.ignored.insert(added.begin(), added.end());
        t.sayAddedColumnsIgnored(added, m_observer);
        return true;
    }
    if (policy == AddColumnPolicy::Pause) {
        pauseForSchema(t, "source added column(s) " + names + " (schema_changes: add_column: pause)",
                       CdcTable::addColumnPauseFix(resnapshotCommand(t)));
        return false;
    }
    // Columns ignored before stay out of the target.
    if (!t.ignored.empty()) {
        mysqlcatalog::MysqlTable kept = fresh;
        kept.columns.clear();
        kept.schema.columns.clear();
        for (size_t i = 0; i < fresh.columns.size(); ++i)
            if (!t.ignored.count(fresh.columns[i].name)) {
                kept.columns.push_back(fresh.columns[i]);
                kept.schema.columns.push_back(fresh.schema.columns[i]);
            }
        kept.schema.primaryKey.clear();
        for (int k : fresh.schema.primaryKey)
            kept.schema.primaryKey.push_back(
                kept.schema.columnIndex(fresh.schema.columns[static_cast<size_t>(k)].name));
        fresh = std::move(kept);
    }
    // With the batch that carried it where the target's DDL is transactional (a MariaDB/MySQL
    // target commits a DDL at once: there it is added before the batch).
    if (m_jobs.front().target.kind != EndpointKind::Mysql)
        beginBatch();
    merger.addMissingColumns(fresh.schema);
    t.source = std::move(fresh);
    t.tookAddedColumns(merger, added, policy, since, at.file + ":" + std::to_string(at.offset), m_pipeline, m_observer);
    return true;
}

BinlogCdcPosition MysqlCdcPipeline::positionWithProgress(const Table &t, BinlogCdcPosition at)
{
    at.addColumn = t.addColumn;
    return at;
}

MysqlCdcPipeline::Table *MysqlCdcPipeline::columnFillDue(bool once) const
{
    for (const auto &t : m_tables)
        if (t->columnFillDue(once))
            return t.get();
    return nullptr;
}

void MysqlCdcPipeline::addColumnStep(Table &t, MysqlConnection &src, Merger &merger, TargetSession &session, bool once)
{
    const PgAddColumnProgress before = *t.addColumn;
    try {
        MysqlColumnFillSource source(src, t.source, t.job.spec, m_jobs.front().target.kind == EndpointKind::Postgres);
        ColumnFillContext cx{source, t.source.schema, t.job.spec, merger, session, m_pipeline, t.version};
        const auto step =
            columnFillStep(cx, *t.addColumn, !once && t.fillChecks < CdcTable::kFillChecks, [&](long long rows) {
                merger.writeCheckpointInTransaction({positionWithProgress(t, *t.position).toJson(), t.version}, rows);
            });
        if (step.outcome == ColumnFillStep::Chunk) {
            t.position = positionWithProgress(t, *t.position);
            crashPoint("addcolumn.after_chunk");
        }
        if (t.columnFillGoesOn(step, m_observer))
            return;
        t.addColumn.reset();
        t.fillChecks = 0;
        try {
            session.inTransaction([&] {
                merger.writeCheckpointInTransaction({positionWithProgress(t, *t.position).toJson(), t.version}, 0);
            });
        } catch (...) {
            t.addColumn = before;
            throw;
        }
        t.position = positionWithProgress(t, *t.position);
        m_observer.event(step.level, t.key, "schema_change", step.message);
        m_observer.tableState(t.key, TableState::Streaming, "", std::nullopt);
    } catch (const Error &e) {
        if (!stopsOnlyTheTable(e, m_jobs.front().target.kind))
            throw;
        stopTable(t, e, merger, session, false); // the chunk rolled back; the progress stays for a resume
    }
}

} // namespace driftless::core
