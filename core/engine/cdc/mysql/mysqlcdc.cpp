#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/mysql/mysqlcdctable.h"
#include "core/engine/cdc/mysql/mysqlloadcompare.h"
#include "core/engine/cdc/tableapply.h"
#include "core/engine/endpoints/binlogidentity.h"

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/testhooks.h"
#include "core/db/mysqlcatalog.h"
#include "core/db/mysqlconnection.h"
#include "core/db/mysqlreplication.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/endpoints/mysqlpreflight.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/rows/generatedvalues.h"
#include "core/engine/rows/rowfilter.h"
#include "core/engine/schema/columnbackfill.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"
#include "core/readers/binlog/binlogdecoder.h"
#include "core/readers/binlog/binlogrows.h"
#include "core/readers/binlog/gtidstate.h"
#include "core/readers/binlogreader.h"
#include "core/state/statestore.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

namespace driftless::core {

namespace {

/// What a comparing load did to one table.
struct LoadFigures {
    long long compared = 0; ///< source rows read
    long long copied = 0;   ///< of them, staged because the target lacked them or held them otherwise
    long long removed = 0;  ///< target rows the source no longer has, deleted
};

std::int64_t versionOf(const binlog::Position &p)
{
    return binlog::positionVersion(p);
}

} // namespace

MysqlCdcPipeline::MysqlCdcPipeline(std::vector<TableJob> jobs, EngineObserver &observer)
    : m_jobs(std::move(jobs)), m_observer(observer), m_pipeline(m_jobs.empty() ? "" : m_jobs.front().pipeline)
{
}

MysqlCdcPipeline::~MysqlCdcPipeline() = default;

void MysqlCdcPipeline::load(Table &t, std::stop_token stop)
{
    MysqlConnection loader = connectMysql(t.job.source);
    loader.exec("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    const auto &schema = t.source.schema;
    std::vector<std::string> after;
    std::optional<binlog::Position> streamFrom;
    bool merge = false;
    // Each chunk reads at a snapshot of its own, so the chunks' versions grow while the source
    // writes elsewhere; the checkpoint's version only moves forward (a replayed batch must not
    // move it back), so the stream checkpoint written at the end carries the newest of them.
    std::int64_t newest = 0;
    if (t.loading()) {
        after = t.position->load.after;
        streamFrom = t.position->streamFrom;
        merge = t.position->load.merge;
        t.loaded = t.position->load.rows;
        newest = t.version;
    } else {
        merge = !t.merger->targetEmpty();
    }
    // A recovery merging into rows the target holds compares each chunk first where the table
    // allows it (a load resumed goes on as it began). A re-snapshot rewrites every row: it is the
    // DBA's way to have no row of an earlier epoch left.
    std::unique_ptr<MysqlLoadCompare> compare;
    std::optional<CanonicalKey> compareFrom; // the next chunk's range starts here; none: unbounded
    LoadFigures figures;
    if (merge && (t.loading() ? t.position->load.compare : m_recovery.has_value())) {
        std::string why;
        compare = MysqlLoadCompare::open(t.job, t.source, why);
        if (!compare && t.loading())
            throw Error(ErrorKind::Permanent,
                        "the comparing load of " + t.job.spec.table.display() + " cannot go on: " + why, {},
                        "load it again: driftless-cli resnapshot " + m_pipeline + " " + t.job.spec.table.display());
        if (!compare)
            log(LogLevel::Info, m_pipeline + " " + t.job.spec.table.display() +
                                    ": the load merges every row, without comparing first (" + why + ")");
        if (t.loading() && !t.position->load.after.empty())
            compareFrom = t.position->load.compareFrom;
    }
    std::string select = "SELECT ";
    for (size_t i = 0; i < t.source.columns.size(); ++i)
        select += (i ? ", " : "") + mysqlcatalog::selectExpr(t.source.columns[i]);
    if (compare)
        select += compare->selectExtra();
    select += " FROM " + mysqlIdent(schema.table.schema) + "." + mysqlIdent(schema.table.name);
    std::string order;
    for (int k : schema.primaryKey)
        order += (order.empty() ? "" : ", ") + mysqlIdent(t.source.columns[static_cast<size_t>(k)].name);
    const long long chunk = t.job.spec.effectivePageSize();
    auto session = createTargetSession(t.job.target, "driftless " + m_pipeline + " load");
    if (t.job.twoWay) // the loaded rows are not read back by the reverse direction
        markOwnWrites(*session, t.job.twoWay->applyOrigin);
    auto merger = withColumnMapping(
        session->merger({m_pipeline, schema.table, t.job.targetName, Strategy::Cdc, softDeletes(t.job.spec)}),
        t.job.spec);
    merger->prepare(schema);
    // A fresh load under a new epoch when the target holds anything, so every row it copies
    // outranks what is there, whatever server wrote it (ARCHITECTURE.md P6); a resumed one goes
    // on under the epoch its first chunk stored.
    if (!t.loading())
        startEpoch(*merger);
    t.merger->setEpoch(merger->epoch());
    const std::string doing = m_recovery ? std::string(kRecoveryMessage)
                              : compare  ? std::string("initial load (comparing with the rows there)")
                              : merge    ? std::string("initial load (merging into existing rows)")
                                         : std::string("initial load");
    m_observer.tableState(t.key, TableState::Backfilling, doing, Progress{t.loaded, schema.estimatedRows});
    for (;;) {
        if (stop.stop_requested())
            throw Cancelled();
        if (!after.empty()) {
            std::string set = "SET ";
            std::vector<std::optional<std::string>> params;
            for (size_t i = 0; i < after.size(); ++i) {
                set += (i ? ", @p" : "@p") + std::to_string(i + 1) + " = ?";
                params.emplace_back(after[i]);
            }
            loader.execParams(set, params);
        }
        loader.exec("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
        RowSet rows;
        std::vector<MysqlLoadCompare::SourceRow> compared; // with compare: the chunk's rows
        std::optional<CanonicalKey> next;                  // with compare: the first key past them
        std::vector<std::string> last;
        binlog::Position at;
        try {
            auto exact = mysqlcatalog::snapshotPosition(loader);
            if (!exact)
                throw Error(ErrorKind::Permanent,
                            "endpoint '" + t.job.source.name +
                                "': the server does not report the binlog position of a consistent snapshot "
                                "(MariaDB does; MySQL 8 is not supported for change data capture yet)",
                            {}, "use cursor sync for this source");
            at = *exact;
            const std::int64_t version = versionOf(at);
            std::string line;
            const std::string filter = t.job.spec.where ? "(" + *t.job.spec.where + ")" : std::string();
            std::string where =
                after.empty() ? std::string() : "(" + mysqlcatalog::keysetAfter(t.source, schema.primaryKey, 1) + ")";
            if (!filter.empty())
                where += (where.empty() ? "" : " AND ") + filter;
            // Comparing, one row more: its key ends the chunk's range.
            const unsigned width = static_cast<unsigned>(t.source.columns.size());
            loader.stream(select + (where.empty() ? "" : " WHERE " + where) + " ORDER BY " + order + " LIMIT " +
                              std::to_string(compare ? chunk + 1 : chunk),
                          [&](const MysqlRowView &row) {
                              if (compare && static_cast<long long>(compared.size()) == chunk) {
                                  next.emplace();
                                  std::int64_t ignored = 0;
                                  compare->take(row, width, *next, ignored);
                                  return;
                              }
                              line.clear();
                              for (size_t i = 0; i < t.source.columns.size(); ++i) {
                                  if (i)
                                      line += '\t';
                                  mysqlcatalog::appendValue(t.source, i, row, static_cast<unsigned>(i), line);
                              }
                              if (compare) {
                                  auto &r = compared.emplace_back();
                                  compare->take(row, width, r.key, r.hash);
                                  r.line = line;
                              } else {
                                  rows.append(line, ChangeOp::Insert, version);
                              }
                              last.clear();
                              for (int k : schema.primaryKey)
                                  last.push_back(mysqlcatalog::paramText(t.source.columns[static_cast<size_t>(k)], row,
                                                                         static_cast<unsigned>(k)));
                          });
            loader.exec("COMMIT");
        } catch (...) {
            try {
                loader.exec("ROLLBACK");
            } catch (const Error &) {
            }
            throw;
        }
        if (!streamFrom)
            streamFrom = at;
        const long long n = static_cast<long long>(compare ? compared.size() : rows.size());
        // A compared chunk that found no source rows still has a range, up to the end, whose
        // target rows the source no longer has.
        if (n > 0 || compare) {
            if (n > 0)
                after = last;
            BinlogCdcPosition pos;
            pos.phase = CdcPhase::Load;
            pos.load = {after, merge, t.loaded + n, false, {}};
            std::optional<MysqlLoadCompare::Outcome> diff;
            if (compare) {
                diff = compare->compare(compared, compareFrom, next, versionOf(at));
                pos.load.compare = true;
                if (next)
                    pos.load.compareFrom = *next;
            }
            pos.streamFrom = streamFrom;
            pos.serverId = m_serverId;
            newest = std::max(newest, versionOf(at));
            Checkpoint cp{pos.toJson(), newest};
            ApplyResult r{n, 0, !merge};
            session->inTransaction([&] {
                if (diff) {
                    r = {};
                    if (!diff->staged.empty()) {
                        r = merger->mergeInTransaction(diff->staged);
                        requireReseedWritten(t.job.spec.table.display(), m_pipeline,
                                             static_cast<long long>(diff->staged.size()), r.rowsWritten);
                    }
                } else if (merge) {
                    r = merger->mergeInTransaction(rows);
                    requireReseedWritten(t.job.spec.table.display(), m_pipeline, n, r.rowsWritten);
                } else {
                    r.rowsWritten = merger->loadInTransaction(rows);
                }
                merger->writeCheckpointInTransaction(cp, r.rowsWritten);
            });
            crashPoint("batch.after_commit");
            t.position = pos;
            t.version = newest;
            t.loaded += n;
            figures.compared += n;
            if (diff) {
                figures.copied += diff->copied;
                figures.removed += diff->removed;
                compareFrom = next;
            }
            m_observer.batchApplied(t.key, r, cp, std::nullopt);
            m_observer.tableState(t.key, TableState::Backfilling, doing, Progress{t.loaded, schema.estimatedRows});
        }
        if (n < chunk || (compare && !next))
            break;
    }
    // Streaming starts where the first chunk's snapshot stood (what the later chunks saw is
    // replayed under the version guard, which keeps the newer rows).
    BinlogCdcPosition pos;
    pos.at = *streamFrom;
    pos.serverId = m_serverId;
    pos.gtid = gtidStateAt(loader, *streamFrom); // where another server would continue from
    Checkpoint cp{pos.toJson(), std::max(newest, versionOf(*streamFrom))};
    session->inTransaction([&] {
        // A load merged into existing rows (a re-snapshot): every row the source has now carries
        // a version from this load's snapshots; older ones are rows the source no longer has.
        // A compared load removed them chunk by chunk (its alike rows keep their older versions).
        if (merge && !compare) {
            const long long removed = merger->deleteOlderInTransaction(versionOf(*streamFrom));
            if (removed)
                m_observer.event(Level::Info, t.key, "resnapshot",
                                 std::to_string(removed) + " rows the source no longer has were removed");
        }
        merger->writeCheckpointInTransaction(cp, 0);
    });
    t.position = pos;
    t.version = cp.version;
    // The mirror holds the stream position before the table shows as streaming.
    m_observer.batchApplied(t.key, {}, cp, std::nullopt);
    if (compare) {
        m_observer.event(Level::Info, t.key, "load_done",
                         "initial load done by comparing: " + withThousands(figures.compared) + " rows compared, " +
                             withThousands(figures.copied) + " copied, " + withThousands(figures.removed) +
                             " rows the source no longer has removed; streaming from " + streamFrom->file + ":" +
                             std::to_string(streamFrom->offset));
    } else {
        m_observer.event(Level::Info, t.key, "load_done",
                         "initial load done: " + std::to_string(t.loaded) + " rows; streaming from " +
                             streamFrom->file + ":" + std::to_string(streamFrom->offset));
    }
    if (m_recovery) {
        m_recovery->compared += figures.compared;
        m_recovery->copied += figures.copied + figures.removed;
        m_recovery->removed += figures.removed;
        m_recovery->reloaded += compare ? 0 : 1;
    }
}

void MysqlCdcPipeline::prepareTables()
{
    m_tables.clear();
    MysqlConnection src = connectMysql(m_jobs.front().source);
    std::string retention;
    auto problems = binlogProblems(src, &retention);
    for (const auto &p : problems) {
        if (p.setting.find("expire") != std::string::npos)
            continue; // a short retention is a warning (the doctor says it), not a stop
        throw Error(ErrorKind::Permanent,
                    "endpoint '" + m_jobs.front().source.name + "': " + p.setting + " is " + p.found +
                        "; change data capture needs it changed",
                    {}, p.fix);
    }
    for (const auto &j : m_jobs) {
        auto t = std::make_unique<Table>();
        t->job = j;
        t->key = j.key();
        t->source = mysqlcatalog::describeTable(src, j.spec.table);
        if (j.twoWay)
            dropOwnColumns(t->source, t->ignored);
        requireRowFilter(src, j.spec);
        if (!t->source.schema.hasPrimaryKey())
            throw SchemaError("table " + j.spec.table.display() +
                                  " has no primary key and no unique index on NOT NULL columns; change data capture "
                                  "merges by key and cannot run without one",
                              "add a primary key (or a UNIQUE index on NOT NULL columns) on the source, or use "
                              "strategy full_refresh");
        m_tables.push_back(std::move(t));
    }
    readForeignKeys(src);
}

void MysqlCdcPipeline::run(std::stop_token stop, Options options)
{
    if (m_jobs.empty())
        return;
    const auto &twoWay = m_jobs.front().twoWay;
    if (twoWay && twoWay->reverse)
        awaitForwardDirection();
    prepareTables();
    // Before the target's tables are created: the reverse direction starts once they exist, and
    // then merges into the source's tables, which must have their version column by then.
    if (twoWay && !twoWay->reverse)
        addReverseVersionColumns();
    auto session = createTargetSession(m_jobs.front().target, "driftless " + m_pipeline);
    // A Postgres target's origin is held by one session at a time: the load's, then the
    // stream's; this one writes only checkpoints and schema there, which are not published.
    if (twoWay && m_jobs.front().target.kind != EndpointKind::Postgres)
        markOwnWrites(*session, twoWay->applyOrigin);
    for (auto &t : m_tables) {
        t->merger = withColumnMapping(session->merger({m_pipeline, t->job.spec.table, t->job.targetName, Strategy::Cdc,
                                                       softDeletes(t->job.spec)}),
                                      t->job.spec);
        holdBackAddedColumns(*t);
        t->merger->prepare(t->source.schema);
        if (auto cp = t->merger->readCheckpoint()) {
            t->position = BinlogCdcPosition::fromJson(cp->position);
            t->version = cp->version;
            if (t->position)
                t->addColumn = t->position->addColumn;
        }
        const bool schemaPaused = t->paused; // by holdBackAddedColumns
        t->paused = t->userPaused = t->pauseWanted(options.pauses.get());
        if (schemaPaused) {
            t->paused = true;
        } else if (t->position && t->position->stopped) {
            // Stopped by an error in an earlier run: stays stopped until a re-snapshot, which
            // removes the checkpoint and with it the mark.
            t->paused = true;
            t->stopped = *t->position->stopped;
            m_observer.tableState(t->key, stoppedState(t->position->stopKind), t->stopped, std::nullopt);
        } else if (t->paused) {
            m_observer.tableState(t->key, TableState::Paused, kBinlogPausedMessage, std::nullopt);
        }
        if (t->streaming())
            applyColumnPoliciesAtStart(*t, *session);
    }
    {
        MysqlConnection src = connectMysql(m_jobs.front().source);
        checkSourceIdentity(src, *session);
    }
    if (twoWay && !twoWay->reverse)
        recordReverseStart();
    auto loadAll = [&] {
        for (auto &t : m_tables) {
            if (t->paused || t->streaming())
                continue;
            if (twoWay && twoWay->reverse)
                throw Error(ErrorKind::Permanent,
                            "the reverse direction of two-way pipeline " + twoWay->pipeline + " has no position for " +
                                t->job.spec.table.display() +
                                " (it never loads: its forward direction records where it "
                                "starts)",
                            {}, "re-snapshot the pipeline: driftless-cli resnapshot " + twoWay->pipeline);
            try {
                load(*t, stop);
            } catch (const Error &e) {
                if (!stopsOnlyTheTable(e, m_jobs.front().target.kind))
                    throw;
                if (auto cp = t->merger->readCheckpoint()) { // the chunks it merged before the error
                    t->position = BinlogCdcPosition::fromJson(cp->position);
                    t->version = cp->version;
                }
                stopTable(*t, e, *t->merger, *session, false);
            }
        }
        if (m_recovery) {
            const long long secs = std::max<long long>(0, (wallClockMs() - m_recovery->startedMs + 500) / 1000);
            std::string how = "recovered by diff, " + withThousands(m_recovery->copied) + " rows copied of " +
                              withThousands(m_recovery->compared) + " compared";
            if (m_recovery->removed)
                how +=
                    " (" + withThousands(m_recovery->removed) + " of them removed: rows the new server does not have)";
            if (m_recovery->reloaded)
                how += "; " + std::to_string(m_recovery->reloaded) +
                       " table(s) could not be compared and were merged row by row (see the log)";
            m_observer.event(Level::Info, m_tables.front()->key, "source_changed",
                             m_recovery->what + ": " + how + ", in " + std::to_string(secs) + " s");
            m_recovery.reset();
        }
    };
    for (;;) {
        loadAll();
        try {
            stream(stop, options);
            return;
        } catch (const RecoverByLoading &) {
            // reloadForRecovery: the streaming tables load again from the new server.
        }
    }
}

std::vector<StoppedTable> MysqlCdcPipeline::stoppedTables() const
{
    return stoppedTablesOf(m_tables);
}

void MysqlCdcPipeline::stopTable(Table &t, const Error &e, Merger &merger, TargetSession &session, bool inTransaction)
{
    const StopKind kind = t.stopFor(e, "load it again: driftless-cli resnapshot " + m_pipeline + " " +
                                           t.job.spec.table.display() + " (a running sync takes it within seconds)");
    if (t.position) {
        // Its position stays where the error was; the mark keeps a restart from failing there
        // again, and the stream from starting there for it.
        BinlogCdcPosition marked = *t.position;
        marked.stopped = t.stopped;
        marked.stopKind = kind;
        if (!inTransaction)
            session.begin();
        try {
            merger.writeCheckpointInTransaction({marked.toJson(), t.version}, 0);
            if (!inTransaction)
                session.commit();
        } catch (...) {
            if (!inTransaction)
                session.rollback();
            throw;
        }
        t.position = std::move(marked);
    }
    t.sayStopped(kind, m_pipeline, m_observer);
}

} // namespace driftless::core
