#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/mysql/mysqlcdctable.h"
#include "core/engine/cdc/mysql/mysqlloadcompare.h"
#include "core/engine/cdc/tableapply.h"
#include "core/engine/cdc/tableload.h"
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

/// A MariaDB/MySQL table's load chunks: each read in a consistent snapshot of its own whose
/// binlog position versions its rows, in primary-key order; compared with the target's rows of
/// its key range first when `compare` is set (MysqlLoadCompare).
class MysqlCdcPipeline::LoadSource final : public CdcLoadSource {
public:
    LoadSource(MysqlCdcPipeline &pipeline, Table &t, TargetSession &runSession,
               std::unique_ptr<MysqlLoadCompare> compare)
        : p(pipeline), m_t(t), m_runSession(runSession), m_loader(connectMysql(t.job.source)),
          m_compare(std::move(compare))
    {
        m_loader.exec("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        if (t.loading()) {
            m_streamFrom = t.position->streamFrom;
            m_newest = t.version;
            if (m_compare && !t.position->load.after.empty())
                m_compareFrom = t.position->load.compareFrom;
        }
        const auto &schema = t.source.schema;
        m_select = "SELECT ";
        for (size_t i = 0; i < t.source.columns.size(); ++i)
            m_select += (i ? ", " : "") + mysqlcatalog::selectExpr(t.source.columns[i]);
        if (m_compare)
            m_select += m_compare->selectExtra();
        m_select += " FROM " + mysqlIdent(schema.table.schema) + "." + mysqlIdent(schema.table.name);
        for (int k : schema.primaryKey)
            m_order += (m_order.empty() ? "" : ", ") + mysqlIdent(t.source.columns[static_cast<size_t>(k)].name);
    }
    LoadChunk read(const std::vector<std::string> &after, long long limit) override;
    Checkpoint chunkCheckpoint(const CdcLoad &load) override
    {
        m_pos = BinlogCdcPosition{};
        m_pos.phase = CdcPhase::Load;
        m_pos.load = load;
        m_pos.streamFrom = m_streamFrom;
        m_pos.serverId = p.m_serverId;
        m_newest = std::max(m_newest, m_chunkVersion);
        return {m_pos.toJson(), m_newest};
    }
    void chunkStored() override
    {
        m_t.position = m_pos;
        m_t.version = m_newest;
    }
    // Streaming starts where the first chunk's snapshot stood (what the later chunks saw is
    // replayed under the version guard, which keeps the newer rows).
    Checkpoint streamCheckpoint() override
    {
        m_pos = BinlogCdcPosition{};
        m_pos.at = *m_streamFrom;
        m_pos.serverId = p.m_serverId;
        m_pos.gtid = gtidStateAt(m_loader, *m_streamFrom); // where another server would continue from
        m_newest = std::max(m_newest, versionOf(*m_streamFrom));
        return {m_pos.toJson(), m_newest};
    }
    void streamStored() override
    {
        m_t.position = m_pos;
        m_t.version = m_newest;
    }
    std::int64_t mergedFrom() const override { return versionOf(*m_streamFrom); }
    std::string streamsFrom() const override { return m_streamFrom->file + ":" + std::to_string(m_streamFrom->offset); }
    long long estimatedRows() const override { return m_t.source.schema.estimatedRows; }
    void stop(const Error &e) override { p.stopLoad(m_t, e, m_runSession); }

private:
    MysqlCdcPipeline &p;
    Table &m_t;
    TargetSession &m_runSession;
    MysqlConnection m_loader;
    std::unique_ptr<MysqlLoadCompare> m_compare;
    std::optional<CanonicalKey> m_compareFrom; ///< the next chunk's range starts here; none: unbounded
    std::string m_select;
    std::string m_order;
    /// Where the first chunk's snapshot stood: the stream starts there.
    std::optional<binlog::Position> m_streamFrom;
    /// Each chunk reads at a snapshot of its own, so the chunks' versions grow while the source
    /// writes elsewhere; the checkpoint's version only moves forward (a replayed batch must not
    /// move it back), so the stream checkpoint written at the end carries the newest of them.
    std::int64_t m_newest = 0;
    std::int64_t m_chunkVersion = 0; ///< the last chunk's snapshot
    BinlogCdcPosition m_pos;
};

LoadChunk MysqlCdcPipeline::LoadSource::read(const std::vector<std::string> &after, long long limit)
{
    const auto &schema = m_t.source.schema;
    mysqlcatalog::bindKeyset(m_loader, after);
    m_loader.exec("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
    LoadChunk c;
    std::vector<MysqlLoadCompare::SourceRow> compared; // with compare: the chunk's rows
    std::optional<CanonicalKey> next;                  // with compare: the first key past them
    binlog::Position at;
    try {
        auto exact = mysqlcatalog::snapshotPosition(m_loader);
        if (!exact)
            throw Error(ErrorKind::Permanent,
                        "endpoint '" + m_t.job.source.name +
                            "': the server does not report the binlog position of a consistent snapshot "
                            "(MariaDB does; MySQL 8 is not supported for change data capture yet)",
                        {}, "use cursor sync for this source");
        at = *exact;
        const std::int64_t version = versionOf(at);
        std::string line;
        const std::string filter = m_t.job.spec.where ? "(" + *m_t.job.spec.where + ")" : std::string();
        std::string where =
            after.empty() ? std::string() : "(" + mysqlcatalog::keysetAfter(m_t.source, schema.primaryKey, 1) + ")";
        if (!filter.empty())
            where += (where.empty() ? "" : " AND ") + filter;
        // Comparing, one row more: its key ends the chunk's range.
        const unsigned width = static_cast<unsigned>(m_t.source.columns.size());
        m_loader.stream(m_select + (where.empty() ? "" : " WHERE " + where) + " ORDER BY " + m_order + " LIMIT " +
                            std::to_string(m_compare ? limit + 1 : limit),
                        [&](const MysqlRowView &row) {
                            if (m_compare && static_cast<long long>(compared.size()) == limit) {
                                next.emplace();
                                std::int64_t ignored = 0;
                                m_compare->take(row, width, *next, ignored);
                                return;
                            }
                            line.clear();
                            for (size_t i = 0; i < m_t.source.columns.size(); ++i) {
                                if (i)
                                    line += '\t';
                                mysqlcatalog::appendValue(m_t.source, i, row, static_cast<unsigned>(i), line);
                            }
                            if (m_compare) {
                                auto &r = compared.emplace_back();
                                m_compare->take(row, width, r.key, r.hash);
                                r.line = line;
                            } else {
                                c.rows.append(line, ChangeOp::Insert, version);
                            }
                            c.lastKey.clear();
                            for (int k : schema.primaryKey)
                                c.lastKey.push_back(mysqlcatalog::paramText(m_t.source.columns[static_cast<size_t>(k)],
                                                                            row, static_cast<unsigned>(k)));
                        });
        m_loader.exec("COMMIT");
    } catch (...) {
        try {
            m_loader.exec("ROLLBACK");
        } catch (const Error &) {
        }
        throw;
    }
    if (!m_streamFrom)
        m_streamFrom = at;
    m_chunkVersion = versionOf(at);
    c.read = static_cast<long long>(m_compare ? compared.size() : c.rows.size());
    if (m_compare) {
        // A compared chunk that found no source rows still has a range, up to the end, whose
        // target rows the source no longer has.
        RangeDiff diff = m_compare->compare(compared, m_compareFrom, next, m_chunkVersion);
        c.compared = true;
        c.rows = std::move(diff.staged);
        c.copied = diff.copied;
        c.removed = diff.removed;
        if (next)
            c.compareFrom = *next;
        m_compareFrom = next;
    }
    c.last = c.read < limit || (m_compare && !next);
    return c;
}

void MysqlCdcPipeline::load(Table &t, TargetSession &runSession, std::stop_token stop)
{
    CdcLoad from;
    if (t.loading())
        from = t.position->load;
    else
        from.merge = !t.merger->targetEmpty();
    // A recovery merging into rows the target holds, or the first load of a table just adopted
    // (docs/adopt.md), compares each chunk first where the table allows it (a load resumed goes on
    // as it began). A re-snapshot rewrites every row: it is the DBA's way to have no row of an
    // earlier epoch left.
    std::unique_ptr<MysqlLoadCompare> compare;
    const bool adopting = !t.loading() && t.merger->adoptedNow();
    if (from.merge && (t.loading() ? from.compare : m_recovery.has_value() || adopting)) {
        std::string why;
        compare = MysqlLoadCompare::open(t.job, t.source, why);
        if (!compare && t.loading())
            throw Error(ErrorKind::Permanent,
                        "the comparing load of " + t.job.spec.table.display() + " cannot go on: " + why, {},
                        "load it again: driftless-cli resnapshot " + m_pipeline + " " + t.job.spec.table.display());
        if (!compare)
            log(LogLevel::Info, m_pipeline + " " + t.job.spec.table.display() +
                                    ": the load merges every row, without comparing first (" + why + ")");
    }
    const bool comparing = compare != nullptr;
    auto session = createTargetSession(t.job.target, "driftless " + m_pipeline + " load");
    if (t.job.twoWay) // the loaded rows are not read back by the reverse direction
        markOwnWrites(*session, t.job.twoWay->applyOrigin);
    auto merger = withColumnMapping(session->merger({m_pipeline, t.source.schema.table, t.job.targetName, Strategy::Cdc,
                                                     softDeletes(t.job.spec), t.job.adopt}),
                                    t.job.spec);
    merger->prepare(t.source.schema);
    // A fresh load under a new epoch when the target holds anything, so every row it copies
    // outranks what is there, whatever server wrote it (ARCHITECTURE.md P6); a resumed one goes
    // on under the epoch its first chunk stored.
    if (!t.loading())
        startEpoch(*merger);
    t.merger->setEpoch(merger->epoch());
    if (adopting)
        m_observer.event(Level::Info, t.key, "adopted",
                         std::string("adopted the existing target table (its rows at version 0): ") +
                             (comparing ? "the load compares them with the source and copies only the rows that differ"
                                        : "the load merges every row of the source into it"));
    const std::string doing = m_recovery   ? std::string(kRecoveryMessage)
                              : comparing  ? std::string("initial load (comparing with the rows there)")
                              : from.merge ? std::string("initial load (merging into existing rows)")
                                           : std::string("initial load");
    LoadSource source(*this, t, runSession, std::move(compare));
    LoadFigures figures;
    if (loadCdcTable(t, *merger, *session, source, from, doing, m_observer, stop, &figures) != LoadEnd::Loaded)
        return;
    if (m_recovery) {
        m_recovery->compared += figures.read;
        m_recovery->copied += figures.copied + figures.removed;
        m_recovery->removed += figures.removed;
        m_recovery->reloaded += comparing ? 0 : 1;
    }
}

void MysqlCdcPipeline::stopLoad(Table &t, const Error &e, TargetSession &runSession)
{
    if (auto cp = t.merger->readCheckpoint()) { // the chunks it merged before the error
        t.position = BinlogCdcPosition::fromJson(cp->position);
        t.version = cp->version;
    }
    stopTable(t, e, *t.merger, runSession, false);
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
        t->source = mysqlcatalog::describeTable(src, j.spec.table, j.spec.key);
        dropOwnColumns(t->source, t->ignored); // not data, two-way or once two-way (as for Postgres)
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
                                                       softDeletes(t->job.spec), t->job.adopt}),
                                      t->job.spec);
        holdBackAddedColumns(*t);
        requireManagedTarget(t->job, *t->merger);
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
                load(*t, *session, stop);
            } catch (const Error &e) {
                if (!stopsOnlyTheTable(e, m_jobs.front().target.kind))
                    throw;
                stopLoad(*t, e, *session);
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
