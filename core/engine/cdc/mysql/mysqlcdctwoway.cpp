// MysqlCdcPipeline's part in a two-way pipeline between two MariaDB/MySQL endpoints
// (docs/two-way.md): where the reverse direction starts, and the version column it merges by.

#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/mysql/mysqlcdctable.h"

#include "core/db/mysqlconnection.h"
#include "core/db/pgcatalog.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/conflictsmysql.h"
#include "core/engine/twoway/twoway.h"
#include "core/mergers/mysqlmerger.h"
#include "core/mergers/pgmerger.h"
#include "core/model/cdcposition.h"
#include "core/model/dsn.h"
#include "core/model/error.h"
#include "core/readers/binlog/binlogdecoder.h"

#include <algorithm>

namespace driftless::core {

namespace {

bool tableExists(MysqlConnection &c, const std::string &schema, const std::string &name)
{
    return c.scalar("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                    {schema, name}) != std::optional<std::string>("0");
}

} // namespace

void dropOwnColumns(mysqlcatalog::MysqlTable &table, std::set<std::string> &ignored)
{
    auto own = [](const mysqlcatalog::MysqlColumn &c) { return withoutOwnColumns({c.name}).empty(); };
    // Also when the table has none yet: the forward direction adds it while its stream runs.
    ignored.insert("_driftless_version");
    if (std::none_of(table.columns.begin(), table.columns.end(), own))
        return;
    for (const auto &c : table.columns)
        if (own(c))
            ignored.insert(c.name);
    std::erase_if(table.columns, own);
    dropOwnColumns(table.schema);
}

void MysqlCdcPipeline::awaitForwardDirection()
{
    const TableJob &first = m_jobs.front();
    MysqlConnection src = connectMysql(first.source, false);
    for (const auto &j : m_jobs)
        if (!tableExists(src, j.spec.table.schema, j.spec.table.name))
            throw Error(ErrorKind::Transient, "waiting for two-way pipeline " + first.twoWay->pipeline + " to create " +
                                                  j.spec.table.display() +
                                                  " (its initial load creates the tables this direction reads)");
    if (first.target.kind == EndpointKind::Postgres) {
        std::vector<TableRef> tables;
        for (const auto &j : m_jobs)
            tables.push_back(j.spec.table);
        requireReverseStart(first.target, m_pipeline, tables, first.twoWay->pipeline);
        return;
    }
    MysqlConnection tgt = connectMysql(first.target, false);
    const std::string db = MysqlDsn::parse(first.target.dsn).database;
    const bool haveCheckpoints = tableExists(tgt, db, "_driftless_checkpoints");
    for (const auto &j : m_jobs)
        if (!haveCheckpoints || !tgt.scalar("SELECT 1 FROM `_driftless_checkpoints` WHERE pipeline = ? AND "
                                            "source_table = ?",
                                            {m_pipeline, j.spec.table.display()}))
            throw Error(ErrorKind::Transient, "waiting for two-way pipeline " + first.twoWay->pipeline +
                                                  " to record where " + j.spec.table.display() +
                                                  " is read from (its forward direction does, before it loads)");
}

void MysqlCdcPipeline::addReverseVersionColumns()
{
    // The reverse direction merges into the source's tables under the version guard, which keeps
    // a version per row. Added with INSTANT where the server can (a catalog-only change); as the
    // table's owner. Not marked as ours: replicas of the source must get the column too.
    MysqlConnection ddl = connectMysql(m_jobs.front().source, false);
    for (const auto &t : m_tables)
        if (ddl.scalar("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND "
                       "COLUMN_NAME = '_driftless_version'",
                       {t->job.spec.table.schema, t->job.spec.table.name}) == std::optional<std::string>("0"))
            ddl.exec("ALTER TABLE " + mysqlIdent(t->job.spec.table.schema) + "." + mysqlIdent(t->job.spec.table.name) +
                     " ADD COLUMN IF NOT EXISTS `_driftless_version` BIGINT NOT NULL DEFAULT 0");
}

void MysqlCdcPipeline::recordReverseStart()
{
    const TableJob &first = m_jobs.front();
    const std::string reverse = first.twoWay->pipeline + PipelineSpec::kReverseSuffix;
    if (first.target.kind == EndpointKind::Postgres) {
        // A Postgres target: the reverse direction reads it from a slot created now, before the
        // load, whose rows carry this direction's origin and are not read back.
        std::vector<TableRef> targets;
        for (const auto &t : m_tables)
            targets.push_back({t->job.targetName.schema, t->job.targetName.name});
        if (ensureReverseSlot(first.target, reverse, targets))
            m_observer.event(Level::Info, m_tables.front()->key, "slot_created",
                             "created replication slot " + first.twoWay->reverseSlot + " on " + first.target.name +
                                 " for the reverse direction");
        return;
    }
    std::optional<binlog::Position> end;
    auto session = createTargetSession(first.source, "driftless " + reverse);
    markOwnWrites(*session, first.twoWay->skipOrigin);
    for (const auto &t : m_tables) {
        auto merger = session->merger({reverse, reverseTableOf(t->job),
                                       TargetName{t->job.spec.table.schema, t->job.spec.table.name}, Strategy::Cdc,
                                       softDeletes(t->job.spec)});
        merger->prepare(t->source.schema);
        if (merger->readCheckpoint())
            continue;
        if (!end) {
            MysqlConnection tgt = connectMysql(first.target, false);
            auto r = tgt.query("SHOW MASTER STATUS");
            if (r.empty() || !r.at(0, 0) || !r.at(0, 1))
                throw Error(ErrorKind::Permanent,
                            "endpoint '" + first.target.name + "' reports no binlog position (SHOW MASTER STATUS)", {},
                            "a two-way pipeline reads both sides' binlogs: start the server with log_bin");
            end = binlog::Position{*r.at(0, 0), std::strtoull(r.at(0, 1)->c_str(), nullptr, 10)};
        }
        BinlogCdcPosition pos;
        pos.at = *end;
        session->inTransaction([&] {
            merger->writeCheckpointInTransaction({pos.toJson(), binlog::positionVersion(*end)}, 0);
        });
        m_observer.event(Level::Info, t->key, "two_way",
                         "the reverse direction " + reverse + " reads " + reverseTableOf(t->job).display() + " from " +
                             end->file + ":" + std::to_string(end->offset));
    }
}

void MysqlCdcPipeline::resolveTwoWayConflicts(Table &t, TargetSession &session, RowSet &rows)
{
    auto *my = dynamic_cast<MysqlTargetSession *>(&session);
    auto *pg = dynamic_cast<PgTargetSession *>(&session);
    if (!my && !pg)
        return;
    const TwoWayRole &tw = *t.job.twoWay;
    const TableRef target = pg ? TableRef{t.job.targetName.schema, t.job.targetName.name}
                               : TableRef{MysqlDsn::parse(t.job.target.dsn).database, t.job.targetName.name};
    if (my && !t.conflictTarget)
        t.conflictTarget = mysqlcatalog::describeTable(my->connection(), target);
    if (pg && !t.conflictTargetPg)
        t.conflictTargetPg = pgcatalog::describeTable(pg->connection(), target);
    ConflictScope scope;
    scope.pipeline = tw.pipeline;
    // Both directions name the conflict by the pipeline's source table.
    scope.table =
        tw.reverse ? TableRef{t.job.targetName.schema, t.job.targetName.name}.display() : t.job.spec.table.display();
    scope.targetSql = pg ? target.quoted() : mysqlIdent(target.schema) + "." + mysqlIdent(target.name);
    for (const auto &c : t.source.schema.columns) {
        scope.columns.push_back(c.name);
        // A Postgres target reads the change's values as its own columns' types.
        const int at = pg ? t.conflictTargetPg->columnIndex(c.name) : -1;
        scope.columnTypes.push_back(at >= 0 ? t.conflictTargetPg->columns[static_cast<size_t>(at)].typeSql : c.typeSql);
    }
    for (int k : t.source.schema.primaryKey) {
        const auto &col = t.source.schema.columns[static_cast<size_t>(k)];
        scope.keyColumns.push_back(col.name);
        scope.keyTypes.push_back(scope.columnTypes[static_cast<size_t>(k)]);
    }
    scope.incomingIsSource = !tw.reverse;
    scope.crossEngine = pg != nullptr;
    ConflictPolicy policy;
    if (t.job.spec.conflicts)
        if (auto p = ConflictPolicy::parse(*t.job.spec.conflicts))
            policy = *p;
    if (pg) {
        reportConflicts(m_observer, t.key, scope, resolveConflicts(pg->connection(), scope, policy, rows));
        return;
    }
    MysqlConflictTarget held(my->connection(), *t.conflictTarget);
    reportConflicts(m_observer, t.key, scope, resolveConflicts(held, scope, policy, rows));
}

} // namespace driftless::core
