// The CDC pipeline's schema side: a source table whose columns change under the stream (added
// columns, generated columns, partial rows) and two-way conflicts.

#include "core/engine/cdc/pg/cdcpipeline.h"
#include "core/engine/cdc/pg/pgcdctable.h"

#include "core/base/clock.h"
#include "core/base/copytext.h"
#include "core/base/testhooks.h"
#include "core/db/pgcatalog.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/rows/generatedvalues.h"
#include "core/engine/schema/columnbackfill.h"
#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/conflictsmysql.h"
#include "core/engine/twoway/twoway.h"
#include "core/mergers/mysqlmerger.h"
#include "core/mergers/pgmerger.h"
#include "core/model/error.h"

#include <algorithm>

namespace driftless::core {

bool CdcPipeline::adaptToLayout(Table &t, const std::vector<std::string> &columns, PgConnection &src,
                                std::int64_t since)
{
    if (withoutOwnColumns(columns) == t.columns) {
        // The stream carries a version column of Driftless's (the other direction's merge keeps
        // it, two-way, or kept it once), which is not data; the layout leaves it out.
        t.layout = streamLayout(t.schema, columns, t.merger->generatedColumns());
        t.streamColumns = columns;
        return true;
    }
    if (!t.dropped.empty()) {
        // Changes made before a drop, read after it (the engine was stopped across it): the
        // stream still carries the dropped columns, which the rows leave out.
        std::vector<std::string> rest;
        for (const auto &c : columns)
            if (!t.dropped.count(c))
                rest.push_back(c);
        if (rest == t.columns) {
            t.streamColumns = columns;
            t.layout = streamLayout(t.schema, columns, t.merger->generatedColumns());
            return true;
        }
    }
    if (auto renames = renamedColumns(t, columns, src); !renames.empty())
        return renameColumns(t, renames, columns);
    if (!t.job.twoWay) {
        // Columns the stream no longer carries, the others as they were: dropped on the source.
        // Dropped and others added or moved at once (a rename looks so) pauses below.
        std::vector<std::string> dropped, rest;
        for (const auto &c : t.columns)
            (std::find(columns.begin(), columns.end(), c) == columns.end() ? dropped : rest).push_back(c);
        if (!dropped.empty() && rest == columns)
            return dropColumns(t, dropped, columns);
    }
    const auto &old = t.columns;
    bool added = columns.size() > old.size() && std::equal(old.begin(), old.end(), columns.begin());
    std::string why;
    if (added) {
        // New columns at the end: add them to the target (types from the source's catalog now)
        // and keep going.
        TableSchema now = pgcatalog::describeTable(src, t.job.spec.table, t.job.spec.key);
        TableSchema next = now;
        next.columns.clear();
        for (const auto &name : columns) {
            if (now.columnIndex(name) < 0) {
                added = false;
                why = "column " + displayIdent(name) + " appeared in the stream but is gone from the source again";
                break;
            }
        }
        // The stream's columns, and the generated ones it never carries.
        for (const auto &c : now.columns)
            if (std::find(columns.begin(), columns.end(), c.name) != columns.end() || c.generated)
                next.columns.push_back(c);
        const std::vector<std::string> newColumns(columns.begin() + static_cast<std::ptrdiff_t>(old.size()),
                                                  columns.end());
        const std::string names = displayNames(newColumns);
        const AddColumnPolicy policy = addColumnPolicy(t.job.spec, t.job.pipelineAddColumn);
        if (added && policy == AddColumnPolicy::Ignore) {
            // The target keeps its columns; the layout drops the new ones from the stream's rows.
            t.streamColumns = columns;
            t.layout = streamLayout(t.schema, columns, t.merger->generatedColumns());
            t.sayAddedColumnsIgnored(newColumns, m_observer);
            return true;
        }
        if (added && policy == AddColumnPolicy::Pause) {
            added = false;
            why = "source added column(s) " + names + " (schema_changes: add_column: pause)";
        }
        if (added) {
            next.primaryKey.clear();
            for (int k : now.primaryKey)
                next.primaryKey.push_back(next.columnIndex(now.columns[static_cast<size_t>(k)].name));
            t.merger->addMissingColumns(next);
            t.schema = next;
            t.columns = columns;
            t.layout = streamLayout(t.schema, t.columns, t.merger->generatedColumns());
            readAttnums(t, src); // the added columns', so a later rename of one is told apart too
            t.tookAddedColumns(*t.merger, newColumns, policy, since, formatLsn(since), m_pipeline, m_observer);
            return true;
        }
    }
    if (why.empty()) {
        std::string before, after;
        for (const auto &c : old)
            before += (before.empty() ? "" : ", ") + displayIdent(c);
        for (const auto &c : columns)
            after += (after.empty() ? "" : ", ") + displayIdent(c);
        why = "the source's columns changed from (" + before + ") to (" + after + ")";
    }
    std::string fix = "adapt the target table, then re-snapshot it: " + resnapshotCommand(t);
    if (why.find("add_column: pause") != std::string::npos)
        fix = CdcTable::addColumnPauseFix(resnapshotCommand(t));
    pauseForSchema(t, why, fix);
    return false;
}

void CdcPipeline::completePartialRows(Table &t, RowSet &rows, PgConnection &src)
{
    auto missing = t.merger->partialRowsWithoutTarget(rows);
    if (missing.empty())
        return;
    // An update whose large values were not sent (unchanged TOAST) for a key the target does not
    // have, typically a primary-key update of such a row: read the row from the source now. Its
    // values are at least as new as the change; any later change still arrives in the stream and
    // applies over it, so the target converges to the source without ever writing a NULL.
    // One query per 1000 such rows (not one per row): the keys travel as one text[] parameter
    // per key column, cast to the column's type on the source.
    const auto &pk = t.schema.primaryKey;
    std::string sql = "SELECT k.ord", arrays, names, on;
    for (const auto &c : t.schema.columns)
        sql += ", s." + quoteIdent(c.name);
    for (size_t i = 0; i < pk.size(); ++i) {
        const auto &k = t.schema.columns[static_cast<size_t>(pk[i])];
        const std::string n = "k" + std::to_string(i + 1);
        arrays += (i ? ", $" : "$") + std::to_string(i + 1) + "::text[]";
        names += n + ", ";
        on += (i ? " AND s." : "s.") + quoteIdent(k.name) + " = k." + n + "::" + k.typeSql;
    }
    sql += " FROM unnest(" + arrays + ") WITH ORDINALITY AS k(" + names + "ord) JOIN " + t.schema.fromSql() + " s ON " +
           on;
    constexpr size_t kKeysPerQuery = 1000;
    std::vector<bool> replace(rows.size(), false), found(rows.size(), false);
    std::vector<std::string> lines(rows.size());
    for (size_t from = 0; from < missing.size(); from += kKeysPerQuery) {
        const size_t to = std::min(missing.size(), from + kKeysPerQuery);
        for (size_t m = from; m < to; ++m)
            replace[missing[m]] = true;
        Params params;
        for (auto &a : pgKeyArrays(rows, missing, from, to, pk))
            params.emplace_back(std::move(a));
        auto res = src.execParams(sql, params);
        for (int i = 0; i < res.rows(); ++i) {
            const size_t r = missing[from + static_cast<size_t>(res.toInt(i, 0)) - 1];
            if (found[r])
                continue; // a key matched twice (an inheritance child has it too): keep one row
            found[r] = true;
            std::string &line = lines[r];
            for (int c = 1; c < res.columns(); ++c) {
                if (c > 1)
                    line += '\t';
                if (res.isNull(i, c))
                    line += copytext::kNull;
                else
                    copytext::escape(res.value(i, c), line);
            }
        }
    }
    long long gone = 0;
    for (size_t r : missing)
        gone += found[r] ? 0 : 1; // deleted at the source since: its delete follows in the stream
    RowSet out;
    out.reserve(rows.size(), rows.bytes());
    for (size_t r = 0; r < rows.size(); ++r) {
        if (!replace[r])
            out.append(rows.line(r), rows.row(r).op, rows.row(r).version, rows.unchangedMask(r));
        else if (found[r])
            out.append(lines[r], rows.row(r).op, rows.row(r).version);
    }
    rows = std::move(out);
    m_observer.event(Level::Info, t.key, "refetched",
                     std::to_string(missing.size() - static_cast<size_t>(gone)) +
                         " rows with unsent large values read from the source" +
                         (gone ? " (" + std::to_string(gone) + " already deleted there)" : std::string()));
}

void CdcPipeline::fillGeneratedValues(Table &t, RowSet &rows, PgConnection &src)
{
    // pgoutput sends no generated columns: a Postgres target computes them itself, any other
    // target gets the source's values, read by key (docs/cdc.md).
    if (t.layout.identity)
        return;
    toSchemaLayout(t.layout, rows);
    fetchByKey(src, t.schema, t.layout.fetch, rows);
}

std::vector<std::string> CdcPipeline::generatedColumnsLacking(Table &t)
{
    std::vector<std::string> out;
    if (std::none_of(t.schema.columns.begin(), t.schema.columns.end(), [](const ColumnInfo &c) { return c.generated; }))
        return out;
    const auto have = t.merger->targetColumns();
    if (have.empty())
        return out; // no table yet: the initial load fills every column
    for (const auto &c : t.schema.columns)
        if (c.generated && std::none_of(have.begin(), have.end(), [&](const auto &h) { return h.first == c.name; }))
            out.push_back(c.name);
    return out;
}

void CdcPipeline::fillAddedGeneratedColumns(Table &t, const std::vector<std::string> &added)
{
    // A target an older version made left the generated columns out; prepare() added them. The
    // target's own generated columns computed their values; plain ones are NULL in every row
    // there, until a copy of the table fills them.
    const auto computed = t.merger->generatedColumns();
    std::string names;
    for (const auto &n : added)
        if (std::find(computed.begin(), computed.end(), n) == computed.end())
            names += (names.empty() ? "" : ", ") + displayIdent(n);
    if (names.empty() || !t.position)
        return;
    if (t.streaming()) {
        if (!t.rebackfill)
            t.merger->setRequest("rebackfill");
        m_observer.event(Level::Info, t.key, "schema_change",
                         "generated column(s) " + names + " added to the target; a re-backfill fills them in");
        return;
    }
    t.merger->clearCheckpoint();
    t.position.reset();
    m_observer.event(Level::Info, t.key, "schema_change",
                     "generated column(s) " + names + " added to the target; the initial load starts again");
}

long long CdcPipeline::resolveTwoWayConflicts(Table &t, CdcTableChanges &ch)
{
    auto *pg = dynamic_cast<PgTargetSession *>(m_session.get());
    auto *my = dynamic_cast<MysqlTargetSession *>(m_session.get());
    if (!pg && !my)
        return 0;
    const TwoWayRole &tw = *t.job.twoWay;
    ConflictScope scope;
    scope.pipeline = tw.pipeline;
    // Both directions name the conflict by the pipeline's source table.
    scope.table =
        tw.reverse ? TableRef{t.job.targetName.schema, t.job.targetName.name}.display() : t.job.spec.table.display();
    const TableRef target = reverseTableOf(t.job); // the table this direction writes
    scope.targetSql = my ? mysqlIdent(target.schema) + "." + mysqlIdent(target.name)
                         : quoteIdent(t.job.targetName.schema) + "." + quoteIdent(t.job.targetName.name);
    if (my && !t.conflictTarget)
        t.conflictTarget = mysqlcatalog::describeTable(my->connection(), target);
    scope.columns = ch.columns;
    for (const auto &name : ch.columns) {
        const int c = t.schema.columnIndex(name);
        scope.columnTypes.push_back(c >= 0 ? t.schema.columns[static_cast<size_t>(c)].typeSql : std::string());
    }
    for (int k : t.schema.primaryKey) {
        const auto &col = t.schema.columns[static_cast<size_t>(k)];
        scope.keyColumns.push_back(col.name);
        scope.keyTypes.push_back(col.typeSql);
    }
    scope.incomingIsSource = !tw.reverse;
    ConflictPolicy policy;
    if (t.job.spec.conflicts)
        if (auto p = ConflictPolicy::parse(*t.job.spec.conflicts))
            policy = *p;
    // A MariaDB target compares the change's values converted as its merger converts them.
    scope.crossEngine = my != nullptr;
    const size_t before = ch.rows.size();
    ConflictOutcome o;
    if (my) {
        MysqlConflictTarget held(my->connection(), *t.conflictTarget, &t.schema);
        o = resolveConflicts(held, scope, policy, ch.rows);
    } else {
        o = resolveConflicts(pg->connection(), scope, policy, ch.rows);
    }
    // The changes it took out of the batch (a row folds a key's changes: counted as one).
    const auto setAside = static_cast<long long>(before - ch.rows.size());
    countConflicts(scope.pipeline, scope.table, "merged", o.merged);
    countConflicts(scope.pipeline, scope.table, "source_won", o.sourceWon);
    countConflicts(scope.pipeline, scope.table, "target_won", o.targetWon);
    countConflicts(scope.pipeline, scope.table, "queued", o.queued);
    for (const auto &rec : o.queue)
        m_observer.conflict(rec);
    if (const long long n = o.merged + o.sourceWon + o.targetWon + o.queued)
        m_observer.event(Level::Info, t.key, "conflict",
                         std::to_string(n) + " conflicting changes: " + std::to_string(o.merged) +
                             " merged by column, " + std::to_string(o.sourceWon) + " won by the source, " +
                             std::to_string(o.targetWon) + " by the target, " + std::to_string(o.queued) +
                             " queued (driftless-cli conflicts lists them)");
    return setAside;
}

std::vector<std::string> CdcPipeline::deferAddedColumns(Table &t)
{
    // Two-way, or a table to adopt: its columns are checked as they are, not held back.
    if (t.job.twoWay || (t.job.adopt && t.merger->unmanagedTarget()))
        return {};
    return holdBackAddedColumns(t.schema, t.columns, t.merger->targetColumnsAsSource(t.schema));
}

void CdcPipeline::addHeldBackColumns(Table &t, PgConnection &src)
{
    std::vector<std::string> columns = t.columns;
    for (const auto &c : t.heldBack)
        if (std::find(columns.begin(), columns.end(), c) == columns.end())
            columns.push_back(c);
    t.heldBack.clear();
    if (columns.size() == t.columns.size())
        return; // a change carried them
    try {
        if (adaptToLayout(t, columns, src, t.version) && t.addColumn)
            writeCheckpoint(t, false);
    } catch (const Error &e) {
        if (!stopsOnlyTheTable(e, m_jobs.front().target.kind))
            throw;
        stopTable(t, e);
    }
}

CdcPipeline::Table *CdcPipeline::columnFillDue() const
{
    for (const auto &t : m_tables)
        if (t->columnFillDue(m_drained))
            return t.get();
    return nullptr;
}

void CdcPipeline::addColumnStepOrStop(Table &t, PgConnection &src)
{
    try {
        addColumnStep(t, src);
    } catch (const Error &e) {
        if (!stopsOnlyTheTable(e, m_jobs.front().target.kind))
            throw;
        stopTable(t, e); // its chunk's transaction rolled back; the progress stays for a resume
    }
}

void CdcPipeline::addColumnStep(Table &t, PgConnection &src)
{
    PgColumnFillSource source(src, t.schema, t.job.spec);
    ColumnFillContext cx{source, t.schema, t.job.spec, *t.merger, *m_session, m_pipeline, t.version};
    const PgAddColumnProgress before = *t.addColumn;
    // While the stream goes on (in `run --once` too: it may not have applied yet what the source
    // had when the pass began), a difference is looked at again; once a pass has drained the
    // stream, the check is final.
    const auto step =
        columnFillStep(cx, *t.addColumn, !m_drained && t.fillChecks < CdcTable::kFillChecks, [&](long long rows) {
            t.merger->writeCheckpointInTransaction({positionOf(t), t.version}, rows);
        });
    if (step.outcome == ColumnFillStep::Chunk)
        crashPoint("addcolumn.after_chunk");
    if (t.columnFillGoesOn(step, m_observer))
        return;
    t.addColumn.reset();
    t.fillChecks = 0;
    try {
        writeCheckpoint(t, false);
    } catch (...) {
        t.addColumn = before;
        throw;
    }
    m_observer.event(step.level, t.key, "schema_change", step.message);
    m_observer.tableState(t.key, TableState::Streaming, "", std::nullopt);
}

} // namespace driftless::core
