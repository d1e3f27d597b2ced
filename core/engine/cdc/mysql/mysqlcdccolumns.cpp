// MysqlCdcPipeline's side of columns a MariaDB/MySQL source drops or retypes under the stream
// (`schema_changes: { drop_column: keep|drop|pause, type_change: widen|pause }`,
// docs/schema-changes.md). The binlog has no DDL of its own for the engine to read: a TABLE_MAP
// (binlog_row_metadata=FULL) that lacks a column, or shows one with another type, makes the
// engine describe the table again and compare.

#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/mysql/mysqlcdctable.h"

#include "core/engine/endpoints/connect.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/schema/columnbackfill.h"
#include "core/engine/schema/schemapolicy.h"
#include "core/model/error.h"

#include <algorithm>
#include <set>

namespace driftless::core {
namespace {

/// A TABLE_MAP column's type in Postgres terms (as pgColumnFor names it), for the types a
/// widening can start from; its MySQL name otherwise. `now` is the column as the source has it
/// now, `nowBytes` its TABLE_MAP length: a VARCHAR's length in characters is read with the same
/// bytes per character.
std::string pgTypeOfMapColumn(const binlog::Column &c, const ColumnInfo &now, std::uint32_t nowBytes)
{
    namespace ct = binlog::coltype;
    switch (c.type) {
    case ct::Tiny:
        return "smallint";
    case ct::Short:
        return c.isUnsigned ? "integer" : "smallint";
    case ct::Int24:
        return "integer";
    case ct::Long:
        return c.isUnsigned ? "bigint" : "integer";
    case ct::LongLong:
        return c.isUnsigned ? "numeric(20,0)" : "bigint";
    case ct::NewDecimal:
        return "numeric(" + std::to_string(c.precision) + "," + std::to_string(c.scale) + ")";
    case ct::VarChar:
    case ct::VarString:
        if (now.baseType == "varchar" && nowBytes > 0) {
            const long chars = std::stol(now.typeSql.substr(now.typeSql.find('(') + 1));
            return "character varying(" + std::to_string(static_cast<long>(c.maxLength) * chars / nowBytes) + ")";
        }
        break;
    case ct::Blob:
    case ct::TinyBlob:
    case ct::MediumBlob:
    case ct::LongBlob:
        if (c.collation != 63) // binary: a BLOB, not TEXT
            return "text";
        break;
    default:
        break;
    }
    return c.typeName();
}

/// `table` without the columns `gone`, its key positions moved to match.
mysqlcatalog::MysqlTable without(const mysqlcatalog::MysqlTable &table, const std::set<std::string> &gone)
{
    mysqlcatalog::MysqlTable next = table;
    next.schema = table.schema.without({gone.begin(), gone.end()});
    std::erase_if(next.columns, [&](const auto &c) { return gone.count(c.name) > 0; });
    return next;
}

/// A type a widening starts from or ends in (the types compared at start: other types' names
/// may differ between the description and the target without any change).
bool widenable(const std::string &type)
{
    for (const char *prefix : {"smallint", "integer", "bigint", "character varying", "text", "numeric"})
        if (type.rfind(prefix, 0) == 0)
            return true;
    return false;
}

} // namespace

std::string MysqlCdcPipeline::notHandledFor(const Table &t, const Merger &merger) const
{
    if (t.job.twoWay)
        return "a two-way pipeline";
    if (!merger.changesColumns())
        return merger.describeTarget();
    return {};
}

std::string MysqlCdcPipeline::alterFor(const Table &t, const std::string &column, const std::string &type) const
{
    const auto &target = m_jobs.front().target;
    const std::string col = displayIdent(column);
    if (target.kind == EndpointKind::Postgres)
        return "run on the target: ALTER TABLE " + displayIdent(t.job.targetName.schema) + "." +
               displayIdent(t.job.targetName.name) + " ALTER COLUMN " + col + " TYPE " + type + " USING " + col +
               "::" + type;
    return "change the type of column " + col + " on the target to hold " + type + " values";
}

bool MysqlCdcPipeline::adaptToChangedColumns(Table &t, const std::vector<binlog::Column> &map,
                                             const std::vector<std::string> &gone,
                                             const std::vector<std::string> &retyped, Merger &merger,
                                             const std::function<void()> &beginBatch)
{
    MysqlConnection c = connectMysql(t.job.source);
    const mysqlcatalog::MysqlTable fresh = mysqlcatalog::describeTable(c, t.job.spec.table, t.job.spec.key);
    // Gone from the map and from the source: dropped. (Gone from the map only: an event written
    // before the column was added, read after a restart; its rows leave the column as it is.)
    std::set<std::string> dropped;
    for (const auto &name : gone)
        if (fresh.schema.columnIndex(name) < 0)
            dropped.insert(name);
    const std::string resnapshot = resnapshotCommand(t);
    const std::string notHere = notHandledFor(t, merger);
    if (!dropped.empty()) {
        const std::vector<std::string> list(dropped.begin(), dropped.end());
        const std::string names = displayNames(list);
        const DropColumnPolicy policy = dropColumnPolicy(t.job.spec, t.job.pipelineDropColumn);
        if (policy == DropColumnPolicy::Pause) {
            pauseForSchema(t, "column(s) " + names + " dropped on the source (schema_changes: drop_column: pause)",
                           CdcTable::dropColumnPauseFix(resnapshot));
            return false;
        }
        if (!notHere.empty()) {
            pauseForSchema(t,
                           "column(s) " + names + " dropped on the source; a dropped column is not handled for " +
                               notHere + " yet",
                           "adapt the target table, then re-snapshot it: " + resnapshot);
            return false;
        }
    }
    // Retyped: the column's type before (as described, or as the old TABLE_MAP shows it when the
    // engine started after the change) and now, in Postgres terms.
    struct Retype {
        std::string name, from, to;
    };
    std::vector<Retype> widen;
    const TypeChangePolicy typePolicy = typeChangePolicy(t.job.spec, t.job.pipelineTypeChange);
    for (const auto &name : retyped) {
        const int i = t.source.schema.columnIndex(name);
        const int n = fresh.schema.columnIndex(name);
        if (i < 0 || n < 0)
            continue;
        const ColumnInfo &was = t.source.schema.columns[static_cast<size_t>(i)];
        const ColumnInfo &is = fresh.schema.columns[static_cast<size_t>(n)];
        std::string from = was.typeSql;
        if (from == is.typeSql) {
            // Retyped while the engine was stopped: a Postgres target was compared (and
            // widened, or the table paused) at start; any other one is told now, with the type
            // the old table map shows.
            if (m_jobs.front().target.kind == EndpointKind::Postgres)
                continue;
            const auto old = std::find_if(t.mapColumns.begin(), t.mapColumns.end(),
                                          [&](const binlog::Column &m) { return m.name == name; });
            const auto now =
                std::find_if(map.begin(), map.end(), [&](const binlog::Column &m) { return m.name == name; });
            if (old == t.mapColumns.end() || now == map.end())
                continue;
            from = pgTypeOfMapColumn(*old, is, now->maxLength);
        }
        if (from == is.typeSql)
            continue; // the same in Postgres terms (a TINYINT made SMALLINT, a character set): nothing to do
        const std::string what =
            "column " + displayIdent(name) + " changed type from " + from + " to " + is.typeSql + " on the source";
        const std::string fix = alterFor(t, name, is.typeSql) + ", then re-snapshot the table: " + resnapshot;
        if (typePolicy == TypeChangePolicy::Pause) {
            pauseForSchema(t, what + " (schema_changes: type_change: pause)", fix);
            return false;
        }
        if (!widens(from, is.typeSql)) {
            pauseForSchema(t, what + ", which is not a widening the engine applies by itself", fix);
            return false;
        }
        if (!notHere.empty()) {
            pauseForSchema(t, what + "; a retyped column is not handled for " + notHere + " yet", fix);
            return false;
        }
        widen.push_back({name, from, is.typeSql});
    }
    // The columns the table keeps, as the source has them now (ignored ones stay out).
    std::set<std::string> out = dropped;
    for (const auto &col : fresh.columns)
        if (t.source.schema.columnIndex(col.name) < 0)
            out.insert(col.name); // added since this event: met with the map that carries it
    const mysqlcatalog::MysqlTable next = without(fresh, out);
    if (dropped.empty() && widen.empty()) {
        t.source = next; // the same in Postgres terms: the target takes its values as they are
        return true;
    }
    beginBatch();
    TableSchema schema = t.source.schema;
    for (const auto &name : dropped) {
        schema = schema.without({name});
        const DropColumnPolicy policy = dropColumnPolicy(t.job.spec, t.job.pipelineDropColumn);
        std::string done = merger.dropColumn(schema, name, policy == DropColumnPolicy::Drop);
        if (done.empty())
            done = "kept on the target, no longer written";
        m_observer.event(Level::Info, t.key, "schema_change",
                         "column " + displayIdent(name) + " dropped on the source; " + done +
                             " (schema_changes: drop_column: " + std::string(policyName(policy)) + ")");
        t.dropped.insert(name);
    }
    // A mapping entry naming a dropped column is gone with it (the merger's projection too).
    t.job.spec = withoutMappingOf(t.job.spec, std::vector<std::string>(dropped.begin(), dropped.end()));
    for (const auto &r : widen) {
        const int i = schema.columnIndex(r.name);
        schema.columns[static_cast<size_t>(i)] =
            next.schema.columns[static_cast<size_t>(next.schema.columnIndex(r.name))];
        const std::string done = merger.widenColumn(schema, r.name);
        m_observer.event(Level::Info, t.key, "schema_change",
                         "column " + displayIdent(r.name) + " widened from " + r.from + " to " + r.to + " " + done);
    }
    t.source = next;
    return true;
}

void MysqlCdcPipeline::applyColumnPoliciesAtStart(Table &t, TargetSession &session)
{
    if (t.paused || t.job.spec.columns || t.job.twoWay || !t.merger->changesColumns())
        return;
    const bool pgTarget = m_jobs.front().target.kind == EndpointKind::Postgres;
    const TypeChangePolicy typePolicy = typeChangePolicy(t.job.spec, t.job.pipelineTypeChange);
    const std::string resnapshot = resnapshotCommand(t);
    std::vector<std::string> gone;
    std::vector<std::pair<std::string, std::string>> widened; // name, the target's type
    for (const auto &[name, type] : t.merger->targetColumns()) {
        const int i = t.source.schema.columnIndex(name);
        if (i < 0) {
            gone.push_back(name);
            continue;
        }
        // A Postgres target names its types as the source's description does: one that differs
        // was retyped while the engine was stopped. (Other targets name them their own way.)
        const auto &c = t.source.schema.columns[static_cast<size_t>(i)];
        if (!pgTarget || c.typeSql == type || !widenable(type) || !widenable(c.typeSql))
            continue;
        const std::string what = "column " + displayIdent(name) + " is " + type + " on the target but " + c.typeSql +
                                 " on the source (retyped while the engine was stopped)";
        const std::string fix = alterFor(t, name, c.typeSql) + ", then re-snapshot the table: " + resnapshot;
        if (typePolicy == TypeChangePolicy::Pause) {
            pauseForSchema(t, what + " (schema_changes: type_change: pause)", fix);
            return;
        }
        if (!widens(type, c.typeSql)) {
            pauseForSchema(t, what + ", which is not a widening the engine applies by itself", fix);
            return;
        }
        widened.emplace_back(name, type);
    }
    const DropColumnPolicy policy = dropColumnPolicy(t.job.spec, t.job.pipelineDropColumn);
    if (!gone.empty() && policy == DropColumnPolicy::Pause) {
        pauseForSchema(t,
                       "column(s) " + displayNames(gone) +
                           " dropped on the source while the engine was stopped (schema_changes: drop_column: pause)",
                       CdcTable::dropColumnPauseFix(resnapshot));
        return;
    }
    if (gone.empty() && widened.empty())
        return;
    // The binlog may still hold changes made before the drop: their rows leave the column out.
    try {
        session.inTransaction([&] {
            t.dropAndWidenColumns(t.source.schema, gone, widened, policy, m_jobs.front().target.kind, m_observer);
        });
    } catch (const SchemaError &e) {
        pauseForSchema(t, e.what(),
                       e.hint().empty() ? "adapt the target, then re-snapshot it: " + resnapshot : e.hint());
    }
}

} // namespace driftless::core
