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
#include <regex>
#include <set>

namespace driftless::core {

namespace {

/// What a comparing load did to one table.
struct LoadFigures {
    long long compared = 0; ///< source rows read
    long long copied = 0;   ///< of them, staged because the target lacked them or held them otherwise
    long long removed = 0;  ///< target rows the source no longer has, deleted
};

constexpr auto kMysqlIdleSave = std::chrono::seconds(5);
constexpr const char *kPausedMessage =
    "paused: its binlog changes are not applied and its position stays; Resume reads them from there";
constexpr long long kBatchRows = 20'000;
/// How far the binlog is read ahead of the apply (BinlogReader): a few batches of rows.
constexpr size_t kReadAheadBytes = 8u << 20;
constexpr auto kBatchAge = std::chrono::milliseconds(100);

std::int64_t versionOf(const binlog::Position &p)
{
    return binlog::positionVersion(p);
}

/// The table a DDL statement names, when it is one that changes or removes a table.
struct Ddl {
    std::string verb; ///< TRUNCATE, ALTER, DROP, RENAME
    TableRef table;
};
std::optional<Ddl> parseDdl(const std::string &sql, const std::string &defaultSchema)
{
    static const std::regex re(
        R"(^\s*(?:/\*.*?\*/\s*)*(TRUNCATE|ALTER|DROP|RENAME)\s+(?:TABLE\s+)?(?:IF\s+EXISTS\s+)?(?:`([^`]+)`|(\w+))(?:\.(?:`([^`]+)`|(\w+)))?)",
        std::regex::icase);
    std::smatch m;
    if (!std::regex_search(sql, m, re))
        return std::nullopt;
    Ddl d;
    d.verb = m[1].str();
    for (auto &c : d.verb)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string first = m[2].matched ? m[2].str() : m[3].str();
    std::string second = m[4].matched ? m[4].str() : m[5].str();
    if (second.empty())
        d.table = {defaultSchema, first};
    else
        d.table = {first, second};
    return d;
}

} // namespace

/// One batch in the making: whole transactions, per table, in binlog order.
struct MysqlCdcPipeline::Stream {
    struct Pending {
        RowSet rows;
        long long changes = 0;
        bool truncate = false; ///< a TRUNCATE before the rows
    };
    std::map<Table *, Pending> tables;
    long long rows = 0;
    int transactions = 0;
    binlog::Position end;     ///< end of the batch's last transaction
    std::string gtid;         ///< its GTID, when the stream has them
    std::int64_t version = 0; ///< its version
    std::int64_t commitSeconds = 0;
    std::chrono::steady_clock::time_point started;

    bool empty() const { return transactions == 0; }
};

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
            m_observer.tableState(t->key, TableState::Paused, kPausedMessage, std::nullopt);
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

void MysqlCdcPipeline::stream(std::stop_token stop, Options options)
{
    const Endpoint &src = m_jobs.front().source;
    std::map<TableRef, Table *> byRef;
    std::optional<binlog::Position> start;
    for (auto &t : m_tables) {
        byRef[t->job.spec.table] = t.get();
        if (t->paused || !t->streaming())
            continue;
        auto p = t->streamPosition();
        if (!start || versionOf(p) < versionOf(*start))
            start = p;
    }
    if (!start) {
        for (auto &t : m_tables)
            if (!t->stopped.empty())
                throw Error(ErrorKind::Permanent, "every table of pipeline " + m_pipeline + " is stopped or paused; " +
                                                      t->job.spec.table.display() + " was " + t->stopped);
        throw Error(ErrorKind::Permanent, "every table of pipeline " + m_pipeline + " is paused", {},
                    "resume a table: driftless-cli resume " + m_pipeline + " TABLE");
    }

    MysqlReplicationOptions ro = binlogReaderOptions(src, binlogServerIdFor(m_pipeline));
    MysqlReplicationConnection repl(ro);
    ro.password.clear();
    binlog::Decoder decoder;
    for (const auto &[id, cs] : repl.collationCharsets())
        decoder.setCollationCharset(id, cs);
    // The tables whose rows are decoded: ours that are not paused, and the parents whose deletes
    // cascade into ours. The filter runs on the reader thread, so it reads only this set, fixed
    // for the stream: a table paused while streaming is still decoded (and skipped when applied)
    // until the stream starts again, which leaves it out (a table whose rows cannot be decoded is
    // paused to let the others go on).
    std::set<TableRef> decoded;
    for (const auto &[ref, t] : byRef)
        if (!t->paused)
            decoded.insert(ref);
    for (const auto &[parent, cascades] : m_cascades)
        decoded.insert(parent);
    decoder.setTableFilter([decoded = std::move(decoded)](const binlog::TableMap &m) {
        return decoded.count(TableRef{m.schema, m.table}) > 0;
    });
    std::optional<binlog::Position> stopAt;
    if (options.once)
        stopAt = repl.currentPosition();
    // A purged position is not ours to fix silently: say exactly how to start over.
    auto withResnapshot = [&](const Error &e) {
        const std::string what = e.what();
        if (what.find("purged") == std::string::npos)
            return;
        throw Error(ErrorKind::Permanent, what, e.code(),
                    "re-snapshot the pipeline: driftless-cli resnapshot " + m_pipeline +
                        "; and keep binlogs longer than the pipeline may be stopped (binlog_expire_logs_seconds)");
    };
    // Another server than the checkpoints' (checkSourceIdentity): what it cannot continue from
    // the stored GTID state is a stop that names both servers, never a read somewhere else.
    auto noResume = [&](const Error &e) {
        if (recoveryAllowed()) {
            // Brought back by loading again, comparing first: run() loads the streaming tables
            // from the new server and streams from there.
            reloadForRecovery(m_resume->description + ". It cannot continue from GTID " + m_resume->gtid + " (" +
                              e.what() + ")");
            throw RecoverByLoading{};
        }
        throw SourceChangedError(
            m_resume->description + ". It cannot continue from GTID " + m_resume->gtid +
                ", where the target stands: " + e.what() +
                " (the target holds changes this server never had, which died with the old one, or the "
                "server is not a replica of it); nothing was read from it",
            e.code(),
            "point the endpoint back at server_id " + std::to_string(m_resume->was) +
                ", or bring the target back to it: driftless-cli recover " + m_pipeline +
                " (it compares every table with this server and copies what differs), or load it again: driftless-cli "
                "resnapshot " +
                m_pipeline);
    };
    try {
        if (m_resume)
            repl.start({{}, m_resume->gtid});
        else
            repl.start({*start, {}});
    } catch (const Error &e) {
        if (m_resume && !e.isTransient())
            noResume(e);
        withResnapshot(e);
        throw;
    }
    std::stop_callback onStop(stop, [&repl] { repl.stop(); });
    // Where the stream stands: the end of the last event read.
    binlog::Position at = decoder.position();
    // The server's next events travel and are decoded while these are merged (docs/cdc.md,
    // "MariaDB"). The decoder is the reader thread's from here on.
    BinlogReader reader(repl, decoder, kReadAheadBytes);

    // The source's GTID state where the stream stands, kept with every checkpoint so another
    // server can be asked for what follows (docs/failover.md).
    binlog::GtidState gtids;
    {
        std::optional<binlog::GtidState> known;
        if (m_resume) {
            known = binlog::GtidState::parse(m_resume->gtid);
        } else {
            for (auto &t : m_tables)
                if (!t->paused && t->streaming() && t->streamPosition() == *start && t->position->serverId)
                    known = binlog::GtidState::parse(t->position->gtid);
            if (!known || known->empty()) { // recorded before the state was kept
                MysqlConnection c = connectMysql(src);
                known = binlog::GtidState::parse(gtidStateAt(c, *start));
            }
        }
        if (known)
            gtids = *known;
    }
    // Resumed by GTID on another server: its positions are known from its first event on. Until
    // a transaction of it is applied, nothing is stored (an idle save would record a place the
    // server skipped to, not one it sent), and the tables' positions mean "from the start".
    bool rebasing = m_resume.has_value();

    auto session = createTargetSession(m_jobs.front().target, "driftless " + m_pipeline);
    const auto &twoWay = m_jobs.front().twoWay;
    if (twoWay)
        markOwnWrites(*session, twoWay->applyOrigin);
    std::map<Table *, std::unique_ptr<Merger>> mergers;
    for (auto &t : m_tables) {
        mergers[t.get()] = withColumnMapping(session->merger({m_pipeline, t->job.spec.table, t->job.targetName,
                                                              Strategy::Cdc, softDeletes(t->job.spec)}),
                                             t->job.spec);
        mergers[t.get()]->prepare(t->source.schema);
        if (m_resume && !t->paused && t->streaming()) {
            // Another server's positions: a new epoch, above every version the old one wrote.
            const int epoch = mergers[t.get()]->epoch() + 1;
            if (epoch > rowversion::kMaxEpoch)
                throw Error(ErrorKind::Permanent,
                            m_resume->description + "; " + t->job.spec.table.display() +
                                " has seen the most source changes its row versions can tell apart",
                            {}, "drop the target table, then load it again: driftless-cli resnapshot " + m_pipeline);
            mergers[t.get()]->setEpoch(epoch);
            m_observer.event(Level::Warn, t->key, "source_changed",
                             m_resume->description + ": resuming from GTID " + m_resume->gtid +
                                 ", which the new server holds; row versions start epoch " + std::to_string(epoch));
        }
        if (!t->paused)
            m_observer.tableState(t->key, TableState::Streaming, "", std::nullopt);
    }
    m_observer.event(Level::Info, m_tables.front()->key, "stream_started",
                     "streaming the binlog from " +
                         (m_resume ? "GTID " + m_resume->gtid : start->file + ":" + std::to_string(start->offset)) +
                         " as server_id " + std::to_string(ro.serverId));

    // A target transaction stays open while a source transaction too big for one batch is staged
    // in pieces; it commits with the transaction's end.
    CdcBatchTransaction txn(*session, m_jobs.front().target.kind, m_observer);
    binlog::Position txnStart; // where the current source transaction starts, and its version
    std::int64_t txnVersion = 0;

    // Opens the batch's target transaction (a schema change alters the target in it).
    auto beginBatch = [&] { txn.begin(); };
    // Per table: for each schema column, its index in the current TABLE_MAP (-1: not there).
    std::vector<std::string> names;
    auto layoutFor = [&](Table &t, const binlog::TableMap &m) -> const std::vector<int> * {
        names.clear();
        for (const auto &col : m.columns)
            names.push_back(col.name);
        auto sameTypes = [](const std::vector<binlog::Column> &a, const std::vector<binlog::Column> &b) {
            return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto &x, const auto &y) {
                return x.name == y.name && x.type == y.type && x.isUnsigned == y.isUnsigned &&
                       x.maxLength == y.maxLength && x.precision == y.precision && x.scale == y.scale &&
                       x.collation == y.collation;
            });
        };
        if (!t.layout.empty() && names == t.mapNames && sameTypes(t.mapColumns, m.columns))
            return &t.layout;
        if (!m.hasNames)
            throw Error(ErrorKind::Permanent,
                        "the binlog's table maps carry no column names (binlog_row_metadata is not FULL)", {},
                        "SET GLOBAL binlog_row_metadata = 'FULL'; and in the server's config");
        auto indexIn = [&](const mysqlcatalog::MysqlTable &st) {
            std::vector<int> map(st.columns.size(), -1);
            bool extra = false;
            for (size_t e = 0; e < m.columns.size(); ++e) {
                int i = st.schema.columnIndex(m.columns[e].name);
                if (i < 0 && !t.ignored.count(m.columns[e].name) && !t.dropped.count(m.columns[e].name))
                    extra = true;
                else if (i >= 0)
                    map[static_cast<size_t>(i)] = static_cast<int>(e);
            }
            return std::make_pair(map, extra);
        };
        auto [map, extra] = indexIn(t.source);
        if (extra) {
            // A column the source has now and the target lacks: read the table again and add it.
            MysqlConnection c = connectMysql(t.job.source);
            auto fresh = mysqlcatalog::describeTable(c, t.job.spec.table);
            auto again = indexIn(fresh);
            if (again.second) {
                std::string names;
                for (const auto &col : m.columns)
                    if (fresh.schema.columnIndex(col.name) < 0)
                        names += (names.empty() ? "" : ", ") + col.name;
                t.paused = true;
                const std::string msg = "the binlog has column(s) " + names + " of " + t.job.spec.table.display() +
                                        " that the source table no longer has (dropped or renamed); the table is "
                                        "paused; adapt the target, then re-snapshot: driftless-cli resnapshot " +
                                        m_pipeline + " " + t.job.spec.table.display();
                m_observer.tableState(t.key, TableState::Paused, msg, std::nullopt);
                m_observer.event(Level::Error, t.key, "schema_change", msg);
                return nullptr;
            }
            // Pending rows were flushed at the ALTER (they have the old layout).
            if (!adaptToAddedColumns(t, std::move(fresh), names, *mergers[&t], txnStart, txnVersion, beginBatch))
                return nullptr;
            map = indexIn(t.source).first;
        } else {
            // Columns the map lacks, or shows with another type than the last map did: dropped
            // or retyped on the source (or, lacking, added after this event was written).
            std::vector<std::string> gone, retyped;
            for (size_t i = 0; i < map.size(); ++i)
                if (map[i] < 0)
                    gone.push_back(t.source.columns[i].name);
            for (const auto &now : m.columns)
                for (const auto &was : t.mapColumns)
                    if (was.name == now.name && !sameTypes({was}, {now}))
                        retyped.push_back(now.name);
            if (!gone.empty() || !retyped.empty()) {
                if (!adaptToChangedColumns(t, m.columns, gone, retyped, *mergers[&t], beginBatch))
                    return nullptr;
                map = indexIn(t.source).first;
            }
        }
        t.mapNames = names;
        t.mapColumns = m.columns;
        t.layout = std::move(map);
        return &t.layout;
    };

    Stream batch;
    binlog::RowImages images;

    // Images without a generated column's value (a MINIMAL one leaves VIRTUAL columns out) are
    // completed from the source, on a connection opened when first needed.
    std::optional<MysqlConnection> lookup;
    std::set<Table *> toldRefetch; // said once per table and run: a MINIMAL writer does it always
    auto completeGenerated = [&](Table &t, RowSet &rows) {
        if (!rows.hasUnchanged() ||
            std::none_of(t.source.columns.begin(), t.source.columns.end(), [](const auto &c) { return c.generated; }))
            return;
        if (!lookup)
            lookup.emplace(connectMysql(t.job.source));
        auto [read, gone] = completeGeneratedFromMysql(*lookup, t.source, rows);
        if (read + gone > 0 && toldRefetch.insert(&t).second)
            m_observer.event(Level::Info, t.key, "refetched",
                             std::to_string(read) +
                                 " rows whose binlog image lacked a generated column (binlog_row_image "
                                 "MINIMAL) read from the source; said once per run" +
                                 (gone ? " (" + std::to_string(gone) + " already deleted there)" : std::string()));
    };

    auto stage = [&] {
        txn.begin();
        try {
            for (auto &[tp, p] : batch.tables) {
                if (tp->paused)
                    continue;
                Table &t = *tp;
                Merger &m = *mergers[tp];
                TableApplySteps steps;
                steps.completeInLayout = [&](RowSet &rows) { completeGenerated(t, rows); };
                steps.foldKey = &t.source.schema.primaryKey;
                steps.resolveConflicts = [&](RowSet &rows) {
                    const size_t before = rows.size();
                    resolveTwoWayConflicts(t, *session, rows);
                    return static_cast<long long>(before - rows.size());
                };
                steps.filter = [&](RowSet &rows) {
                    if (!lookup)
                        lookup.emplace(connectMysql(t.job.source));
                    applyRowFilter(*lookup, t.source, *t.job.spec.where, rows);
                };
                steps.stop = [&](const Error &e) { stopTable(t, e, m, *session, false); };
                txn.apply(t, m, p.truncate, p.rows, p.changes, steps);
                p = Stream::Pending{};
            }
        } catch (const CdcRestart &) {
            throw;
        } catch (...) {
            txn.rollback();
            throw;
        }
        batch.rows = 0;
    };
    auto flush = [&] {
        if (batch.empty())
            return;
        stage();
        BinlogCdcPosition pos;
        pos.at = batch.end;
        pos.gtid = batch.gtid;
        pos.serverId = m_serverId;
        const std::string posJson = pos.toJson();
        try {
            // Every streaming table's checkpoint moves to the batch's end, changed or not: a
            // restart never re-reads what was applied (or skipped as not ours).
            for (auto &t : m_tables) {
                if (t->paused || !t->streaming() || versionOf(t->streamPosition()) >= versionOf(batch.end))
                    continue;
                auto done = txn.results().find(t.get());
                mergers[t.get()]->writeCheckpointInTransaction({positionWithProgress(*t, pos).toJson(), batch.version},
                                                               done == txn.results().end() ? 0
                                                                                           : done->second.rowsWritten);
            }
        } catch (...) {
            txn.rollback();
            throw;
        }
        txn.commit();
        rebasing = false; // the new server's positions are stored from here on
        if (twoWay)
            txn.countApplied(*twoWay->counters);
        const std::int64_t fresh = batch.commitSeconds * 1000;
        for (auto &t : m_tables) {
            if (t->paused || !t->streaming() || versionOf(t->streamPosition()) >= versionOf(batch.end))
                continue;
            t->position = positionWithProgress(*t, pos);
            t->version = batch.version;
            auto it = txn.results().find(t.get());
            m_observer.batchApplied(t->key, it == txn.results().end() ? ApplyResult{} : it->second,
                                    {posJson, batch.version}, fresh);
            if (it != txn.results().end())
                txn.sayPartialRows(*t, it->second, "values the binlog did not carry");
        }
        batch = Stream{};
    };

    bool inTxn = false;
    auto lastIdleSave = std::chrono::steady_clock::now();
    auto lastFresh = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    auto lastPauseCheck = std::chrono::steady_clock::now();
    auto lastStopCheck = std::chrono::steady_clock::now();
    binlog::Position lastSaved = *start;
    auto applies = [&](Table &t) { return !t.paused && t.streaming() && txnVersion >= versionOf(t.streamPosition()); };
    // A value the target cannot hold (a zero date) stops only its table; what the table has
    // staged of this transaction goes with it (it is loaded again anyway).
    auto valid = [&](Table &t, const binlog::Rows &r) {
        try {
            r.throwIfInvalid();
            return true;
        } catch (const Error &e) {
            if (!stopsOnlyTheTable(e, m_jobs.front().target.kind))
                throw;
            batch.tables.erase(&t);
            stopTable(t, e, *mergers[&t], *session, txn.open());
            return false;
        }
    };

    CascadeContext cascades;
    cascades.applies = [&](Table &t) { return applies(t); };
    cascades.stagePending = [&] {
        if (std::any_of(batch.tables.begin(), batch.tables.end(),
                        [](const auto &e) { return !e.second.rows.empty() || e.second.truncate; }))
            stage();
    };
    cascades.mergerOf = [&](Table &t) -> Merger & { return *mergers[&t]; };
    cascades.pending = [&](Table &t) -> RowSet & { return batch.tables[&t].rows; };
    cascades.counted = [&](Table &t, long long n) {
        batch.tables[&t].changes += n;
        batch.rows += n;
    };
    cascades.stopChild = [&](Table &t, const Error &e) {
        if (!stopsOnlyTheTable(e, m_jobs.front().target.kind))
            return false;
        batch.tables.erase(&t);
        stopTable(t, e, *mergers[&t], *session, txn.open());
        return true;
    };

    while (!stop.stop_requested()) {
        BinlogEvent *item = nullptr;
        try {
            item = reader.next();
        } catch (const Error &e) {
            if (rebasing && !e.isTransient())
                noResume(e);
            withResnapshot(e);
            throw;
        }
        if (!item)
            break;
        if (item->failure)
            std::rethrow_exception(item->failure); // an event the decoder refused: the server is not at fault
        binlog::Event &ev = item->event;
        const binlog::Position before = item->start;
        at = item->end;
        if (rebasing) {
            if (const auto *rotate = std::get_if<binlog::Rotate>(&ev.body)) {
                for (auto &t : m_tables)
                    if (!t->paused && t->streaming()) {
                        t->position->at = {rotate->next.file, 0};
                        t->position->serverId = m_serverId;
                        t->position->gtid = gtids.text();
                    }
                lastSaved = {rotate->next.file, 0};
            }
        }
        const auto *rows = std::get_if<binlog::Rows>(&ev.body);
        const auto *query = std::get_if<binlog::Query>(&ev.body);
        const bool begins = std::holds_alternative<binlog::Gtid>(ev.body) ||
                            std::holds_alternative<binlog::MysqlGtid>(ev.body) || (query && query->isBegin()) ||
                            std::holds_alternative<binlog::TableMap>(ev.body) || rows;
        if (twoWay && rows && !rows->skipped) {
            auto it = byRef.find(TableRef{rows->table->schema, rows->table->table});
            const auto n = static_cast<long long>(rows->rows.size());
            if (it != byRef.end() && ev.header.skipReplication() && !it->second->paused && it->second->streaming())
                twoWay->counters->droppedOwn += n;
            else if (it != byRef.end() && !ev.header.skipReplication() && applies(*it->second))
                twoWay->counters->captured += n; // its table map opened the transaction
        }
        // Two-way: what the other direction applied here carries skip_replication (every event
        // of its session: GTID, rows, COMMIT); the server sends it anyway. Dropped whole, not even
        // counted as a transaction, so the directions' own writes (checkpoints too) never bounce.
        // The position moves on with the next transaction of ours, or the idle save.
        if (twoWay && ev.header.skipReplication())
            continue;
        if (!inTxn && (begins || (query && !query->isCommit()))) {
            inTxn = true;
            txnStart = before;
            txnVersion = versionOf(txnStart);
            if (batch.empty() && batch.tables.empty())
                batch.started = std::chrono::steady_clock::now();
        }
        if (rows && !rows->skipped) {
            auto it = byRef.find(TableRef{rows->table->schema, rows->table->table});
            if (it != byRef.end() && applies(*it->second) && valid(*it->second, *rows)) {
                Table &t = *it->second;
                const std::vector<int> *layout = layoutFor(t, *rows->table);
                if (layout) {
                    auto &p = batch.tables[&t];
                    const long long n =
                        images.append(t.source.schema, *layout, *rows, txnVersion, static_cast<bool>(twoWay), p.rows);
                    p.changes += n;
                    batch.rows += n;
                    // A big transaction: stage what it has so far; memory stays bounded.
                    if (batch.rows >= kBatchRows)
                        stage();
                }
            }
        }
        // What the parent's change did to child rows without a word in the binlog.
        if (rows && !rows->skipped && rows->table && inTxn && cascadesFrom({rows->table->schema, rows->table->table}))
            cascade({rows->table->schema, rows->table->table}, parentChanges(*rows), txnVersion, cascades, 0);
        if (query && !query->isBegin() && !query->isCommit() && !query->isRollback()) {
            if (auto ddl = parseDdl(query->sql, query->schema)) {
                auto it = byRef.find(ddl->table);
                if (it != byRef.end() && applies(*it->second)) {
                    Table &t = *it->second;
                    if (ddl->verb == "TRUNCATE") {
                        // Rows staged before the TRUNCATE go first; the TRUNCATE starts a batch.
                        if (!batch.tables.empty() && batch.transactions > 0)
                            flush();
                        batch.tables[&t].truncate = true;
                        batch.tables[&t].rows.clear();
                    } else if (ddl->verb == "DROP" || ddl->verb == "RENAME") {
                        t.paused = true;
                        const std::string msg = "the source ran `" + query->sql.substr(0, 200) +
                                                "`; the table is paused; re-snapshot it once the source has it again: "
                                                "driftless-cli resnapshot " +
                                                m_pipeline + " " + t.job.spec.table.display();
                        m_observer.tableState(t.key, TableState::Paused, msg, std::nullopt);
                        m_observer.event(Level::Error, t.key, "schema_change", msg);
                    } else if (ddl->verb == "ALTER") {
                        // The next TABLE_MAP shows the new layout (an added column is added to
                        // the target then); rows staged with the old one go first. The DDL is a
                        // group of its own, so the batch holds only whole transactions here.
                        flush();
                        t.layout.clear();
                    }
                }
            }
        }
        if (ev.endsTransaction && inTxn) {
            inTxn = false;
            ++batch.transactions;
            batch.end = at;
            if (item->committedGtid)
                gtids.apply(*item->committedGtid);
            batch.gtid = gtids.text();
            batch.version = txnVersion;
            batch.commitSeconds = ev.header.timestamp;
            if (batch.rows >= kBatchRows || std::chrono::steady_clock::now() - batch.started >= kBatchAge) {
                flush();
                lastSaved = at;
            }
        }
        const bool heartbeat = std::holds_alternative<binlog::Heartbeat>(ev.body);
        if (heartbeat && !inTxn) {
            // Idle: apply what is pending, then the target is as fresh as the source now.
            if (!batch.empty()) {
                flush();
                lastSaved = at;
            }
            const auto now = std::chrono::steady_clock::now();
            if (now - lastFresh >= std::chrono::seconds(1)) {
                lastFresh = now;
                for (auto &t : m_tables)
                    if (!t->paused && t->streaming())
                        m_observer.batchApplied(t->key, {}, {t->position->toJson(), t->version}, wallClockMs());
            }
            // Keep positions near the binlog's end while our tables see no writes, so a restart
            // does not start in a file the server has purged since.
            const binlog::Position here = at;
            if (!rebasing && now - lastIdleSave >= kMysqlIdleSave && !here.file.empty() &&
                versionOf(here) > versionOf(lastSaved)) {
                lastIdleSave = now;
                batch.end = here;
                batch.version = versionOf(here);
                batch.transactions = 1;
                batch.commitSeconds = wallClockMs() / 1000;
                flush();
                lastSaved = here;
            }
            if (stopAt && versionOf(here) >= versionOf(*stopAt))
                break;
        }
        if (stopAt && !inTxn && !at.file.empty() && versionOf(at) >= versionOf(*stopAt)) {
            flush();
            break;
        }
        if (!inTxn && std::chrono::steady_clock::now() - lastStopCheck >= std::chrono::seconds(2)) {
            lastStopCheck = std::chrono::steady_clock::now();
            // A stopped table a DBA re-snapshotted has no checkpoint any more: start again to load it.
            for (auto &t : m_tables) {
                if (t->stopped.empty() || !t->position || mergers[t.get()]->readCheckpoint())
                    continue;
                flush();
                throw CdcRestart{t->job.spec.table.display() +
                                 " was re-snapshotted: the pipeline starts again to load it"};
            }
        }
        // Column backfills run between two batches: the stream waits at most one chunk.
        if (!inTxn && !txn.open() && batch.empty() && batch.tables.empty())
            if (Table *due = columnFillDue(false)) {
                if (!lookup)
                    lookup.emplace(connectMysql(src));
                addColumnStep(*due, *lookup, *mergers[due], *session, false);
            }
        if (options.pauses && !inTxn &&
            std::chrono::steady_clock::now() - lastPauseCheck >= std::chrono::milliseconds(250)) {
            lastPauseCheck = std::chrono::steady_clock::now();
            // A pause or resume asked for while streaming: a pause stops applying at once; a
            // resume restarts the pipeline so the stream reads from the table's position again.
            for (auto &t : m_tables) {
                const CdcTable::PauseTurn turn = t->pauseTurn(t->pauseWanted(options.pauses.get()));
                if (turn == CdcTable::PauseTurn::Pause) {
                    flush();
                    t->paused = t->userPaused = true;
                    m_observer.tableState(t->key, TableState::Paused, kPausedMessage, std::nullopt);
                } else if (turn == CdcTable::PauseTurn::Resume && t->stopped.empty() && t->streaming()) {
                    flush();
                    // Returning restarts the pipeline (the scheduler runs it again at once).
                    m_observer.event(Level::Info, t->key, "resumed",
                                     "resumed: reading its binlog changes from " + t->streamPosition().file + ":" +
                                         std::to_string(t->streamPosition().offset));
                    return;
                }
            }
        }
    }
    if (!inTxn)
        flush();
    // `run --once`: what it streamed is applied; the backfills it started finish too.
    if (options.once && !stop.stop_requested() && !txn.open())
        while (Table *due = columnFillDue(true)) {
            if (!lookup)
                lookup.emplace(connectMysql(src));
            addColumnStep(*due, *lookup, *mergers[due], *session, true);
        }
    txn.rollback(); // a transaction cut short by a stop: nothing of it lands
}

} // namespace driftless::core
