// The CDC pipeline's side of source columns that are dropped or retyped under the stream
// (`schema_changes: { drop_column: ..., type_change: ... }`, docs/schema-changes.md).

#include "core/engine/cdc/pg/cdcpipeline.h"
#include "core/engine/cdc/pg/pgcdctable.h"

#include "core/db/pgcatalog.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/schema/columnbackfill.h"
#include "core/engine/schema/schemapolicy.h"
#include "core/model/error.h"

#include <algorithm>

namespace driftless::core {

void CdcPipeline::pauseForSchema(Table &t, const std::string &why, const std::string &fix)
{
    t.paused = true;
    const std::string msg = why + "; the table is paused (its changes are not applied); " + fix;
    t.schemaPause = msg;
    m_observer.tableState(t.key, TableState::Paused, msg, std::nullopt);
    m_observer.event(Level::Error, t.key, "schema_change", msg);
}

void CdcPipeline::markSchemaPause(Table &t)
{
    // The stream goes on past the change for the other tables, and the slot with it: the mark
    // keeps a restart from taking this table's older checkpoint for a slot moved behind our back,
    // and keeps the table stopped, with the reason, until it is copied again.
    if (!t.position || t.schemaPause.empty())
        return;
    t.position->stopped = t.schemaPause;
    t.position->stopKind = StopKind::Error;
    t.merger->writeCheckpointInTransaction({positionOf(t), t.version}, 0);
}

std::string CdcPipeline::resnapshotCommand(const Table &t) const
{
    return "driftless-cli resnapshot " + m_pipeline + " " + t.job.spec.table.display();
}

std::string CdcPipeline::alterFor(const Table &t, const std::string &column, const std::string &type) const
{
    if (m_jobs.front().target.kind != EndpointKind::Postgres)
        return "change the type of column " + displayIdent(column) + " on the target to match " + type;
    // Quoted only where needed, so the statement reads as a DBA would write it.
    const std::string col = displayIdent(column);
    return "run on the target: ALTER TABLE " + displayIdent(t.job.targetName.schema) + "." +
           displayIdent(t.job.targetName.name) + " ALTER COLUMN " + col + " TYPE " + type + " USING " + col +
           "::" + type;
}

bool CdcPipeline::dropColumns(Table &t, const std::vector<std::string> &dropped,
                              const std::vector<std::string> &columns)
{
    const std::string names = displayNames(dropped);
    const DropColumnPolicy policy = dropColumnPolicy(t.job.spec, t.job.pipelineDropColumn);
    const std::string resnapshot = resnapshotCommand(t);
    if (policy == DropColumnPolicy::Pause) {
        pauseForSchema(t, "column(s) " + names + " dropped on the source (schema_changes: drop_column: pause)",
                       CdcTable::dropColumnPauseFix(resnapshot));
        return false;
    }
    if (!t.merger->changesColumns() || t.job.twoWay) {
        pauseForSchema(t,
                       "column(s) " + names + " dropped on the source; a dropped column is not handled for " +
                           (t.job.twoWay ? std::string("a two-way pipeline") : t.merger->describeTarget()) + " yet",
                       "adapt the target table, then re-snapshot it: " + resnapshot);
        return false;
    }
    TableSchema next = t.schema.without(dropped);
    for (const auto &name : dropped) {
        std::string done = t.merger->dropColumn(next, name, policy == DropColumnPolicy::Drop);
        if (done.empty())
            done = "kept on the target, no longer written";
        m_observer.event(Level::Info, t.key, "schema_change",
                         "column " + displayIdent(name) + " dropped on the source; " + done +
                             " (schema_changes: drop_column: " + std::string(policyName(policy)) + ")");
        t.dropped.insert(name);
        t.relationTypes.erase(name);
        t.attnums.erase(name);
    }
    // A mapping entry naming a dropped column is gone with it (the merger's projection too).
    t.job.spec = withoutMappingOf(t.job.spec, dropped);
    t.schema = std::move(next);
    t.columns = columns;
    t.streamColumns.clear();
    t.layout = streamLayout(t.schema, t.columns, t.merger->generatedColumns());
    return true;
}

bool CdcPipeline::adaptToTypes(Table &t, const CdcTableChanges &ch, PgConnection &src)
{
    if (ch.types.size() != ch.columns.size())
        return true;
    std::vector<std::pair<std::string, std::pair<std::uint32_t, std::int32_t>>> changed; // name, old type
    for (size_t i = 0; i < ch.columns.size(); ++i) {
        auto it = t.relationTypes.find(ch.columns[i]);
        if (it != t.relationTypes.end() && it->second != ch.types[i])
            changed.emplace_back(ch.columns[i], it->second);
        t.relationTypes[ch.columns[i]] = ch.types[i];
    }
    if (changed.empty())
        return true;
    // The Relation message names types by OID; the catalog says what they are now.
    const TableSchema now = pgcatalog::describeTable(src, t.job.spec.table, t.job.spec.key);
    const TypeChangePolicy policy = typeChangePolicy(t.job.spec, t.job.pipelineTypeChange);
    const std::string resnapshot = resnapshotCommand(t);
    const bool pgTarget = m_jobs.front().target.kind == EndpointKind::Postgres;
    for (const auto &[name, oldType] : changed) {
        const int i = t.schema.columnIndex(name);
        const int n = now.columnIndex(name);
        if (i < 0 || n < 0)
            continue; // a column the target does not take (add_column: ignore), or gone again
        const ColumnInfo &was = t.schema.columns[static_cast<size_t>(i)];
        const ColumnInfo &is = now.columns[static_cast<size_t>(n)];
        std::string from = was.typeSql;
        if (was.typeSql == is.typeSql) {
            // Retyped while the engine was stopped: the schema read at start has the new type
            // already. A Postgres target was compared (and widened) then; any other one is told
            // now, with the type the stream had.
            if (pgTarget)
                continue;
            from = src.execParams("SELECT format_type($1::oid, $2::int)",
                                  {std::to_string(oldType.first), std::to_string(oldType.second)})
                       .text(0, 0);
            if (from == is.typeSql)
                continue;
        }
        const std::string what =
            "column " + displayIdent(name) + " changed type from " + from + " to " + is.typeSql + " on the source";
        const std::string fix = alterFor(t, name, is.typeSql) + ", then re-snapshot the table: " + resnapshot;
        if (const std::string refusal =
                retypeRefusal(policy, from, is.typeSql, was.isBuiltinType() && is.isBuiltinType());
            !refusal.empty()) {
            pauseForSchema(t, what + refusal, fix);
            return false;
        }
        if (!t.merger->changesColumns() || t.job.twoWay) {
            pauseForSchema(t,
                           what + "; a retyped column is not handled for " +
                               (t.job.twoWay ? std::string("a two-way pipeline") : t.merger->describeTarget()) + " yet",
                           fix);
            return false;
        }
        t.schema.columns[static_cast<size_t>(i)] = is;
        const std::string done = t.merger->widenColumn(t.schema, name);
        m_observer.event(Level::Info, t.key, "schema_change",
                         "column " + displayIdent(name) + " widened from " + from + " to " + is.typeSql + " " + done);
    }
    return true;
}

void CdcPipeline::readAttnums(Table &t, PgConnection &src)
{
    // Only names not known yet: a known column keeps the number it had when it was seen.
    auto an = src.execParams("SELECT attname, attnum FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 "
                             "AND NOT attisdropped",
                             {t.job.spec.table.quoted()});
    for (int r = 0; r < an.rows(); ++r)
        t.attnums.emplace(an.text(r, 0), static_cast<int>(an.toInt(r, 1)));
}

void CdcPipeline::restoreStreamNames(Table &t)
{
    if (t.merger->targetColumns().empty())
        return; // no target table yet: nothing was streamed
    std::optional<PgCdcPosition> stored;
    try {
        if (auto cp = t.merger->readCheckpoint())
            stored = PgCdcPosition::fromJson(cp->position);
    } catch (const Error &) {
        // A target table made by hand, without our bookkeeping yet: nothing was streamed into it.
        // (Any other failure to read recurs, and is reported, where the checkpoint is read next.)
        return;
    }
    if (!stored || !stored->streaming() || stored->rebackfill || stored->addColumn || stored->stopped)
        return;
    std::map<int, std::string> nowByNumber;
    for (const auto &[name, n] : t.attnums)
        nowByNumber[n] = name;
    std::vector<std::pair<std::string, std::string>> back; // (name now, the stream's name)
    for (const auto &[was, n] : stored->attnums) {
        const auto it = nowByNumber.find(n);
        // Gone (dropped: the stream tells), unchanged, or its old name taken by another column
        // (renames that swap names, or a new column under the old name): left as the catalog has it.
        if (it == nowByNumber.end() || it->second == was || t.attnums.count(was))
            continue;
        back.emplace_back(it->second, was);
    }
    for (const auto &[now, was] : back) {
        if (const int i = t.schema.columnIndex(now); i >= 0)
            t.schema.columns[static_cast<size_t>(i)].name = was;
        std::replace(t.columns.begin(), t.columns.end(), now, was);
        t.attnums[was] = t.attnums.at(now);
        t.attnums.erase(now);
    }
}

std::vector<std::pair<std::string, std::string>>
CdcPipeline::renamedColumns(const Table &t, const std::vector<std::string> &columns, PgConnection &src) const
{
    // The Relation message lists the columns in attribute order, so a rename keeps the column's
    // place: same count, and where the names differ the old one is gone and the new one is new.
    // A drop of the last column and an add look the same; the attribute number tells them
    // apart (an added column gets a new one, a renamed column keeps its own).
    std::vector<std::pair<std::string, std::string>> renames;
    if (columns.size() != t.columns.size())
        return {};
    for (size_t i = 0; i < columns.size(); ++i) {
        if (columns[i] == t.columns[i])
            continue;
        if (std::find(columns.begin(), columns.end(), t.columns[i]) != columns.end() ||
            std::find(t.columns.begin(), t.columns.end(), columns[i]) != t.columns.end() ||
            !t.attnums.count(t.columns[i]))
            return {};
        renames.emplace_back(t.columns[i], columns[i]);
    }
    if (renames.empty())
        return {};
    // Now: the old attribute must still be there (under any name, if renamed again since), and
    // the new name, if the source still has it, must be that attribute.
    auto now = src.execParams("SELECT attname, attnum FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 "
                              "AND NOT attisdropped",
                              {t.job.spec.table.quoted()});
    std::map<int, std::string> byNumber;
    std::map<std::string, int> byName;
    for (int r = 0; r < now.rows(); ++r) {
        byNumber[static_cast<int>(now.toInt(r, 1))] = now.text(r, 0);
        byName[now.text(r, 0)] = static_cast<int>(now.toInt(r, 1));
    }
    for (const auto &[from, to] : renames) {
        const int n = t.attnums.at(from);
        if (!byNumber.count(n))
            return {}; // dropped (perhaps after a rename): not told apart, the layout change decides
        if (auto it = byName.find(to); it != byName.end() && it->second != n)
            return {}; // the new name is another column: a drop and an add
    }
    return renames;
}

bool CdcPipeline::renameColumns(Table &t, const std::vector<std::pair<std::string, std::string>> &renames,
                                const std::vector<std::string> &columns)
{
    std::string what;
    for (const auto &[from, to] : renames)
        what += (what.empty() ? "column " : ", column ") + displayIdent(from) + " renamed to " + displayIdent(to);
    what += " on the source";
    const RenameColumnPolicy policy = renameColumnPolicy(t.job.spec, t.job.pipelineRenameColumn);
    const std::string resnapshot = resnapshotCommand(t);
    const auto &target = t.job.targetName; // a SQLite target has no schema
    std::string alter;
    for (const auto &[from, to] : renames)
        alter += (alter.empty() ? "" : "; ") + std::string("ALTER TABLE ") +
                 (target.schema.empty() ? "" : displayIdent(target.schema) + ".") + displayIdent(target.name) +
                 " RENAME COLUMN " + displayIdent(from) + " TO " + displayIdent(to);
    const std::string byHand = "rename it on the target (" + alter + "), then re-snapshot the table: " + resnapshot;
    if (policy == RenameColumnPolicy::Pause) {
        pauseForSchema(t, what + " (schema_changes: rename_column: pause)",
                       "to rename it on the target too, set schema_changes: { rename_column: rename } on the table, "
                       "apply, then re-snapshot the table: " +
                           resnapshot + "; or " + byHand);
        return false;
    }
    std::string notHere;
    for (const auto &[from, to] : renames)
        if (mappingNames(t.job.spec, from) || mappingNames(t.job.spec, to))
            notHere = "a table whose columns: mapping names the column (change the entry to the new name)";
    if (notHere.empty() && t.job.twoWay)
        notHere = "a two-way pipeline";
    else if (notHere.empty() && !t.merger->changesColumns())
        notHere = t.merger->describeTarget();
    if (notHere.empty() && t.job.spec.where)
        for (const auto &[from, to] : renames)
            if (t.job.spec.where->find(from) != std::string::npos)
                notHere = "a table whose where: filter names the column (change the filter to the new name)";
    if (notHere.empty() && t.addColumn)
        notHere = "a table whose added columns are being filled";
    if (notHere.empty()) {
        // A target column already holding the new name (one kept after a drop) is not
        // overwritten.
        for (const auto &[name, type] : t.merger->targetColumns())
            for (const auto &[from, to] : renames)
                if (name == to)
                    notHere = "a target that has a column " + displayIdent(to) + " already";
    }
    if (!notHere.empty()) {
        pauseForSchema(t, what + "; a renamed column is not handled for " + notHere + " yet", byHand);
        return false;
    }
    TableSchema next = t.schema;
    for (const auto &[from, to] : renames) {
        t.attnums[to] = t.attnums.at(from);
        t.attnums.erase(from);
        if (auto it = t.relationTypes.find(from); it != t.relationTypes.end()) {
            t.relationTypes[to] = it->second;
            t.relationTypes.erase(it);
        }
        const int i = next.columnIndex(from);
        if (i < 0)
            continue; // a column the target does not take (add_column: ignore)
        next.columns[static_cast<size_t>(i)].name = to;
        const std::string done = t.merger->renameColumn(next, from, to);
        m_observer.event(Level::Info, t.key, "schema_change",
                         "column " + displayIdent(from) + " renamed to " + displayIdent(to) + " on the source; " +
                             done + " (schema_changes: rename_column: rename)");
    }
    t.schema = std::move(next);
    t.columns = columns;
    t.streamColumns.clear();
    t.layout = streamLayout(t.schema, t.columns, t.merger->generatedColumns());
    return true;
}

std::vector<std::pair<std::string, std::string>> CdcPipeline::applyColumnPoliciesAtStart(Table &t)
{
    auto have = t.merger->targetColumns();
    if (have.empty() || !t.merger->changesColumns() || t.job.spec.columns || t.job.twoWay)
        return have;
    const DropColumnPolicy dropPolicy = dropColumnPolicy(t.job.spec, t.job.pipelineDropColumn);
    const TypeChangePolicy typePolicy = typeChangePolicy(t.job.spec, t.job.pipelineTypeChange);
    const bool pgTarget = m_jobs.front().target.kind == EndpointKind::Postgres;
    const std::string resnapshot = resnapshotCommand(t);
    const ColumnLayoutDiff diff = diffColumns(t.schema, have, pgTarget);
    const std::vector<std::string> &gone = diff.gone;
    std::vector<std::pair<std::string, std::string>> widened; // name, the target's type
    for (const auto &[name, type] : diff.retyped) {
        const auto &c = t.schema.columns[static_cast<size_t>(t.schema.columnIndex(name))];
        const std::string what = "column " + displayIdent(name) + " is " + type + " on the target but " + c.typeSql +
                                 " on the source (retyped while the engine was stopped)";
        const std::string fix = alterFor(t, name, c.typeSql) + ", then re-snapshot the table: " + resnapshot;
        if (const std::string refusal = retypeRefusal(typePolicy, type, c.typeSql, true); !refusal.empty()) {
            pauseForSchema(t, what + refusal, fix);
            return {};
        }
        widened.emplace_back(name, type);
    }
    if (!gone.empty() && dropPolicy == DropColumnPolicy::Pause) {
        pauseForSchema(t,
                       "column(s) " + displayNames(gone) +
                           " dropped on the source while the engine was stopped (schema_changes: drop_column: pause)",
                       CdcTable::dropColumnPauseFix(resnapshot));
        return {};
    }
    if (gone.empty() && widened.empty())
        return have;
    // Dropped or retyped while the engine was stopped: the stream may still bring changes made
    // before, which leave the kept column out and fit the widened one.
    m_session->inTransaction(
        [&] { t.dropAndWidenColumns(t.schema, gone, widened, dropPolicy, m_jobs.front().target.kind, m_observer); });
    have = t.merger->targetColumns();
    std::erase_if(have, [&](const auto &h) { return t.dropped.count(h.first) > 0; });
    return have;
}

} // namespace driftless::core
