#include "core/engine/cdc/pg/cdcpipeline.h"
#include "core/engine/cdc/pg/pgcdctable.h"
#include "core/engine/cdc/rebackfillcompare.h"
#include "core/engine/cdc/tableapply.h"
#include "core/engine/cdc/tableload.h"

#include "core/base/clock.h"
#include "core/base/copytext.h"
#include "core/base/log.h"
#include "core/base/testhooks.h"
#include "core/db/pgcatalog.h"
#include "core/db/pgreplication.h"
#include "core/engine/cdc/pg/slotcreation.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/engine/jobs/boundedqueue.h"
#include "core/engine/jobs/pipelined.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/rows/generatedvalues.h"
#include "core/engine/rows/rowfilter.h"
#include "core/engine/schema/columnbackfill.h"
#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/newerwins.h"
#include "core/engine/twoway/twoway.h"
#include "core/mergers/pgmerger.h"
#include "core/model/error.h"
#include "core/readers/pglogicalreader.h"
#include "core/state/statestore.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <limits>
#include <set>
#include <thread>
#include <unistd.h>

namespace driftless::core {

struct CdcPipeline::Rebackfill {
    Table *table = nullptr;
    std::unique_ptr<PgConnection> loader; ///< holds the snapshot's transaction open
    std::int64_t version = 0;             ///< the snapshot's consistent point
    std::int64_t deleteBelow = 0;         ///< the first snapshot's, when resumed
    std::vector<std::string> after;
    long long copied = 0; ///< rows merged so far, counting those before a restart
    /// Set when pages are compared before they are copied (RebackfillCompare::open).
    std::unique_ptr<RebackfillComparer> compare;
    bool rowByRow = false; ///< `compare` goes row by row (RebackfillCompareRows), for an adopted table
    long long equal = 0;   ///< of `copied`, rows this run found equal and did not copy
    long long removed = 0; ///< compared pages: rows the source no longer has, deleted so far
    long long written = 0; ///< target rows this run changed (copied, or removed)
    /// The next chunk, read from the snapshot while this one is merged.
    std::future<RowSet> ahead;

    ~Rebackfill()
    {
        if (ahead.valid())
            ahead.wait(); // it uses `loader`
    }
};

/// What the apply side of one stream keeps between batches (CdcPipeline::stream).
struct CdcPipeline::ApplySide {
    ApplySide(TargetSession &session, EndpointKind target, EngineObserver &observer, PgConnection &source,
              const std::map<TableRef, Table *> &tables, bool drain)
        : txn(session, target, observer), src(source), byRef(tables), once(drain)
    {
    }
    CdcBatchTransaction txn;
    PgConnection &src;
    const std::map<TableRef, Table *> &byRef;
    bool once = false;
    std::chrono::steady_clock::time_point lastPoll = std::chrono::steady_clock::now() - std::chrono::seconds(10);
    std::chrono::steady_clock::time_point lastBeat = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point lastIdleSave = std::chrono::steady_clock::now() - std::chrono::seconds(60);
    bool heartbeatOn = false;
    Millis heartbeatEvery{0};
    bool beatFailed = false; ///< the last heartbeat failed (said once)
};
namespace {
/// How long a start waits for a replication slot another process holds.
constexpr int kSlotBusyWaitSeconds = 60;
} // namespace

namespace {

/// The request an adopted table leaves for itself: a re-backfill that compares row by row.
constexpr const char *kAdoptRequest = "adopt";
/// How often an idle stream records (and then acknowledges) the source's WAL end.
constexpr auto kIdleSave = std::chrono::seconds(5);
/// How often a stream looks for requests (re-backfill, its cancel) and pauses between batches:
/// one query for all the pipeline's tables, so a DBA's click takes effect within a quarter second.
constexpr auto kRequestPoll = std::chrono::milliseconds(250);

constexpr const char *kSourceChecks = R"sql(
SELECT current_setting('wal_level'),
       (SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user),
       current_setting('server_version_num')::int
)sql";

std::int64_t localMsFromSourceMicros(std::int64_t sourceUnixMicros, std::int64_t offsetUs)
{
    return (sourceUnixMicros - offsetUs) / 1000;
}

/// Reads one primary-key chunk inside the caller's (snapshot) transaction.
long long readChunk(PgConnection &conn, const TableSchema &schema, const TableSpec &spec,
                    const std::vector<std::string> &after, long long limit, std::int64_t version, RowSet &out)
{
    std::string cols, keys, keyParams;
    for (const auto &c : schema.columns)
        cols += (cols.empty() ? "" : ", ") + quoteIdent(c.name);
    for (size_t i = 0; i < schema.primaryKey.size(); ++i) {
        const auto &k = schema.columns[static_cast<size_t>(schema.primaryKey[i])];
        keys += (i ? ", " : "") + quoteIdent(k.name);
        keyParams +=
            (i ? ", " : "") + std::string("current_setting('driftless.p") + std::to_string(i + 1) + "')::" + k.typeSql;
    }
    std::string where;
    if (!after.empty()) {
        std::string q = "SELECT ";
        Params params;
        for (size_t i = 0; i < after.size(); ++i) {
            q += (i ? ", " : "") + std::string("set_config('driftless.p") + std::to_string(i + 1) + "', $" +
                 std::to_string(i + 1) + ", true)";
            params.emplace_back(after[i]);
        }
        conn.execParams(q, params);
        where = " WHERE (" + keys + ") > (" + keyParams + ")" + rowFilterAnd(spec);
    } else {
        where = rowFilterWhere(spec);
    }
    out.clear();
    conn.copyOut("COPY (SELECT " + cols + " FROM " + schema.fromSql() + where + " ORDER BY " + keys + " LIMIT " +
                     std::to_string(limit) + ") TO STDOUT",
                 [&](std::string_view row) { out.append(row, ChangeOp::Insert, version); });
    return static_cast<long long>(out.size());
}

/// The commit LSN of the earliest change in `rows` (the stream's rows of one table), or `otherwise`.
std::int64_t firstVersion(const RowSet &rows, std::int64_t otherwise)
{
    std::int64_t v = std::numeric_limits<std::int64_t>::max();
    for (size_t r = 0; r < rows.size(); ++r)
        v = std::min(v, rows.row(r).version);
    return rows.size() ? v : otherwise;
}

std::vector<std::string> lastKey(const TableSchema &schema, const RowSet &rows)
{
    std::vector<std::string_view> fields;
    copytext::split(rows.line(rows.size() - 1), fields);
    std::vector<std::string> key;
    for (int k : schema.primaryKey) {
        std::string v;
        copytext::unescape(fields.at(static_cast<size_t>(k)), v);
        key.push_back(std::move(v));
    }
    return key;
}

} // namespace

CdcPipeline::CdcPipeline(std::vector<TableJob> jobs, std::optional<std::string> publication, EngineObserver &observer)
    : m_jobs(std::move(jobs)), m_publication(std::move(publication)), m_observer(observer)
{
    if (!m_jobs.empty()) {
        m_pipeline = m_jobs.front().pipeline;
        m_slot = "driftless_" + m_pipeline;
    }
}

CdcPipeline::~CdcPipeline() = default;

void CdcPipeline::preflight(PgConnection &src)
{
    auto r = src.exec(kSourceChecks);
    if (r.text(0, 0) != "logical")
        throw Error(ErrorKind::Permanent,
                    "the source's wal_level is '" + r.text(0, 0) + "'; change data capture needs 'logical'", {},
                    "set wal_level = logical in postgresql.conf (or ALTER SYSTEM) and restart the source");
    if (!r.toBool(0, 1))
        throw Error(ErrorKind::Permanent, "the source user may not open replication connections", {},
                    "ALTER ROLE <the endpoint's user> REPLICATION (and GRANT SELECT on the tables)");
    for (auto &t : m_tables) {
        const auto &ref = t->job.spec.table;
        TableSchema full = pgcatalog::describeTable(src, ref, t->job.spec.key);
        requireRowFilter(src, full, t->job.spec);
        if (!full.hasPrimaryKey())
            throw SchemaError(
                "table " + ref.display() +
                    " has no primary key and no unique index on NOT NULL columns; change data capture merges by key",
                "ALTER TABLE " + ref.display() +
                    " ADD PRIMARY KEY (...) (or a UNIQUE index on NOT NULL columns), or use strategy full_refresh for "
                    "it");
        if (auto problem = pgcatalog::replicaIdentityProblem(src, full))
            throw SchemaError("table " + ref.display() + " has " + problem->message, problem->fix);
        t->schema = full;
        // The version column a two-way direction's merge keeps stays on its side; so does one a
        // source kept from a time it was two-way, or from an attempt at it (not data, and the
        // target's own column of that name is its bookkeeping).
        dropOwnColumns(t->schema);
        t->attnums.clear();
        readAttnums(*t, src);
        t->columns.clear();
        for (const auto &c : t->schema.columns)
            if (!c.generated)
                t->columns.push_back(c.name);
    }
}

void CdcPipeline::ensurePublication(PgConnection &src)
{
    const std::string pub = m_publication.value_or(m_slot);
    auto have = src.execParams("SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1", {pub});
    std::set<TableRef> published;
    for (int r = 0; r < have.rows(); ++r)
        published.insert({have.text(r, 0), have.text(r, 1)});
    auto exists = src.execParams("SELECT 1 FROM pg_publication WHERE pubname = $1", {pub}).rows() > 0;
    std::vector<TableRef> missing;
    for (auto &t : m_tables)
        if (!published.count(t->job.spec.table))
            missing.push_back(t->job.spec.table);
    if (m_publication) {
        // The DBA's own publication: we read it, we never change it.
        if (!exists)
            throw Error(ErrorKind::Permanent, "publication " + pub + " does not exist on the source", {},
                        "CREATE PUBLICATION " + pub +
                            " FOR TABLE ..., or remove 'publication:' to let Driftless "
                            "create driftless_" +
                            m_pipeline);
        if (!missing.empty()) {
            // Without publish_via_partition_root a partitioned table is published as its
            // partitions, whose changes would reach us under their own names and be skipped.
            auto viaLeaves =
                src.execParams("SELECT NOT p.pubviaroot AND c.relkind = 'p' FROM pg_publication p, pg_class c "
                               "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE p.pubname = $1 AND n.nspname = $2 "
                               "AND c.relname = $3",
                               {pub, missing.front().schema, missing.front().name});
            if (viaLeaves.rows() && viaLeaves.toBool(0, 0))
                throw Error(ErrorKind::Permanent,
                            "publication " + pub + " publishes partitioned table " + missing.front().display() +
                                " as its partitions (publish_via_partition_root is off), so its changes would not "
                                "reach it",
                            {}, "ALTER PUBLICATION " + pub + " SET (publish_via_partition_root = true)");
            throw Error(ErrorKind::Permanent, "publication " + pub + " does not include " + missing.front().display(),
                        {}, "ALTER PUBLICATION " + pub + " ADD TABLE " + missing.front().display());
        }
        return;
    }
    // ONLY for plain tables: without it a publication takes in their inheritance children too.
    std::string list;
    for (auto &t : m_tables)
        list += (list.empty() ? "" : ", ") + t->schema.fromSql();
    if (!exists) {
        src.exec("CREATE PUBLICATION " + quoteIdent(pub) + " FOR TABLE " + list +
                 " WITH (publish_via_partition_root = true)");
        m_observer.event(Level::Info, m_tables.front()->key, "publication_created", "created publication " + pub);
    } else if (!missing.empty() || published.size() != m_tables.size()) {
        src.exec("ALTER PUBLICATION " + quoteIdent(pub) + " SET TABLE " + list);
        m_observer.event(Level::Info, m_tables.front()->key, "publication_changed",
                         "publication " + pub + " now has " + std::to_string(m_tables.size()) + " tables");
    }
}

/// A Postgres table's load chunks, read in primary-key order in the snapshot `loader` holds
/// (an exported one, whose consistent point `version` versions every row).
class CdcPipeline::LoadSource final : public CdcLoadSource {
public:
    LoadSource(CdcPipeline &pipeline, Table &t, PgConnection &loader, std::int64_t version, std::int64_t streamFrom)
        : p(pipeline), m_t(t), m_loader(loader), m_version(version), m_streamFrom(streamFrom)
    {
    }
    LoadChunk read(const std::vector<std::string> &after, long long limit) override
    {
        LoadChunk c;
        c.read = readChunk(m_loader, m_t.schema, m_t.job.spec, after, limit, m_version, c.rows);
        if (c.read > 0)
            c.lastKey = lastKey(m_t.schema, c.rows);
        c.last = c.read < limit;
        return c;
    }
    Checkpoint chunkCheckpoint(const CdcLoad &load) override
    {
        m_pos = p.positionAt(0);
        m_pos.phase = CdcPhase::Load;
        m_pos.load = load;
        m_pos.snapshotLsn = m_version;
        m_pos.streamFrom = m_streamFrom;
        return {m_pos.toJson(), m_version};
    }
    void chunkStored() override { m_t.position = m_pos; }
    Checkpoint streamCheckpoint() override
    {
        m_pos = p.positionAt(m_streamFrom);
        return {m_pos.toJson(), m_version};
    }
    void streamStored() override
    {
        m_t.position = m_pos;
        m_t.version = m_version;
    }
    /// A load resumed after a crash reads in a later snapshot than its first chunks did; the rows
    /// those merged carry the first one's version and are the source's own, not rows to remove.
    std::int64_t mergedFrom() const override { return m_streamFrom; }
    std::string streamsFrom() const override { return formatLsn(m_streamFrom); }
    long long estimatedRows() const override { return m_t.schema.estimatedRows; }
    bool pauseWanted() const override { return p.wantPaused(m_t); }
    void stop(const Error &e) override { p.stopTable(m_t, e); }

private:
    CdcPipeline &p;
    Table &m_t;
    PgConnection &m_loader;
    std::int64_t m_version;
    std::int64_t m_streamFrom;
    PgCdcPosition m_pos;
};

void CdcPipeline::adoptByComparing(Table &t, std::int64_t version)
{
    startEpoch(*t.merger);
    t.position = positionAt(version);
    t.version = version;
    m_session->inTransaction([&] { t.merger->writeCheckpointInTransaction({positionOf(t), t.version}, 0); });
    t.merger->setRequest(kAdoptRequest); // a re-backfill comparing row by row
    m_observer.batchApplied(t.key, {}, {positionOf(t), t.version}, std::nullopt);
    m_observer.event(Level::Info, t.key, "adopted",
                     "adopted the existing target table (its rows at version 0): they are compared with the source "
                     "and only the rows that differ are copied, while the stream goes on from " +
                         formatLsn(version));
    m_observer.tableState(t.key, TableState::Backfilling, kAdoptMessage, std::nullopt);
}

const char *CdcPipeline::copyMessage(const Table &t) const
{
    if (m_recovery && m_recovery->pending.contains(const_cast<Table *>(&t)))
        return kRecoveryMessage;
    if (m_rebackfill && m_rebackfill->table == &t && m_rebackfill->rowByRow)
        return kAdoptMessage;
    return kRebackfillMessage;
}

PgCdcPosition CdcPipeline::positionAt(std::int64_t lsn) const
{
    PgCdcPosition pos;
    pos.lsn = lsn;
    pos.slot = m_slot;
    pos.systemId = m_systemId;
    pos.timeline = m_timeline;
    return pos;
}

void CdcPipeline::load(std::vector<Table *> tables, const std::string &snapshot, std::int64_t version,
                       std::stop_token stop)
{
    if (tables.empty())
        return;
    PgConnection loader = connectPostgres(m_jobs.front().source, "driftless " + m_pipeline + " load");
    loader.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY");
    loader.exec("SET TRANSACTION SNAPSHOT " + pgLiteral(snapshot));
    for (Table *t : tables) {
        if (!t->loading() && t->merger->adoptedNow() && !t->merger->targetEmpty()) {
            adoptByComparing(*t, version);
            continue;
        }
        CdcLoad from;
        // Where the stream must start for this table once loaded: the snapshot of its first
        // chunk. Rows copied in an earlier run (before a crash) are as of that older snapshot,
        // and the changes since then reach them only through the stream.
        std::int64_t streamFrom = version;
        if (t->loading()) {
            from = t->position->load;
            auto first = t->position->streamFrom ? t->position->streamFrom : t->position->snapshotLsn;
            if (first && !from.after.empty())
                streamFrom = std::min(streamFrom, *first);
        } else {
            // No checkpoint but rows (a re-snapshot): merge, then drop what the source lacks.
            // Under a new epoch, so every row copied outranks what the target holds, whatever
            // server or timeline wrote it (ARCHITECTURE.md P6).
            from.merge = !t->merger->targetEmpty();
            startEpoch(*t->merger);
        }
        LoadSource source(*this, *t, loader, version, streamFrom);
        const std::string doing = std::string("initial load") + (from.merge ? " (merging into existing rows)" : "");
        // Paused: its chunks so far stay; Resume loads it again from a new snapshot.
        if (loadCdcTable(*t, *t->merger, *m_session, source, from, doing, m_observer, stop) == LoadEnd::Paused)
            pauseTable(*t);
    }
    loader.commit();
}

void CdcPipeline::run(std::stop_token stop, Options options)
{
    m_stop = stop;
    m_drained = false;
    if (m_jobs.empty())
        return;
    m_pauses = options.pauses;
    const TableJob &first = m_jobs.front();
    if (first.source.kind != EndpointKind::Postgres)
        throw Error(ErrorKind::Permanent, "endpoint '" + first.source.name +
                                              "': change data capture from this kind of source is not supported yet");
    if (!isValidSlotName(m_slot))
        throw ConfigError("pipeline name '" + m_pipeline + "' does not make a valid slot name");
    m_tables.clear();
    for (const auto &j : m_jobs) {
        auto t = std::make_unique<Table>();
        t->job = j;
        t->key = j.key();
        m_tables.push_back(std::move(t));
    }

    PgConnection src = connectPostgres(first.source, "driftless " + m_pipeline);
    if (first.twoWay && first.twoWay->reverse) {
        std::vector<TableRef> tables;
        for (const auto &j : m_jobs)
            tables.push_back(j.spec.table);
        requireForwardTables(src, tables, first.twoWay->pipeline);
    }
    preflight(src);

    openTarget(src);
    for (auto &t : m_tables)
        prepareTable(*t, src);
    ensurePublication(src);

    PgReplicationConnection repl(reachableDsn(first.source), "driftless " + m_pipeline);
    checkSourceIdentity(repl);

    auto slot = readSlot(src);
    if (!waitForSlot(src, slot, stop))
        return;
    // A promoted standby has none of the old primary's slots: with the timeline continuing the
    // target's history, the changes since the checkpoint are only lost to the stream, and a
    // recovery by diff brings them back when asked for.
    const bool streamedBefore =
        std::any_of(m_tables.begin(), m_tables.end(), [](const auto &t) { return t->position.has_value(); });
    if (!m_recovery && slot.rows() == 0 && streamedBefore && !m_sourceChange.empty() && recoveryAllowed())
        m_recovery = Recovery{m_sourceChange, wallClockMs(), {}, 0, 0};
    if (m_recovery) {
        startRecovery(repl, src, slot.rows() > 0);
        slot = readSlot(src);
    }
    std::vector<Table *> needLoad;
    bool anyStreamed = false;
    for (auto &t : m_tables) {
        if (!t->streaming() && !t->paused)
            needLoad.push_back(t.get());
        if (t->position)
            anyStreamed = true;
    }
    if (slot.rows() == 0 && anyStreamed)
        slotGone();
    if (slot.rows() == 0)
        startWithNewSlot(repl, stop);
    else
        continueFromSlot(slot, needLoad, stop);
    for (auto &t : m_tables)
        if (t->userPaused && wantPaused(*t))
            pauseTable(*t);
    stream(stop, options, repl, src);
}

void CdcPipeline::openTarget(PgConnection &src)
{
    const TableJob &first = m_jobs.front();
    m_session = createTargetSession(first.target, "driftless " + m_pipeline);
    if (first.twoWay) {
        // What this direction applies is never read back by the other one.
        markOwnWrites(*m_session, first.twoWay->applyOrigin);
        if (std::any_of(m_jobs.begin(), m_jobs.end(),
                        [](const TableJob &j) { return usesCommitTimeClock(j.spec.conflicts); }))
            if (auto *pg = dynamic_cast<PgTargetSession *>(m_session.get())) {
                requireCommitTimestamps(src, first.source.name);
                requireCommitTimestamps(pg->connection(), first.target.name);
            }
        if (first.twoWay->reverse && first.target.kind == EndpointKind::Postgres) {
            std::vector<TableRef> own;
            for (const auto &j : m_jobs)
                own.push_back({j.targetName.schema, j.targetName.name});
            PgConnection tgt = connectPostgres(first.target, "driftless " + m_pipeline);
            addVersionColumns(tgt, own);
        }
    }
}

void CdcPipeline::prepareTable(Table &t, PgConnection &src)
{
    const TableJob &first = m_jobs.front();
    t.merger = withColumnMapping(m_session->merger({m_pipeline, t.job.spec.table, t.job.targetName, Strategy::Cdc,
                                                    softDeletes(t.job.spec), t.job.adopt}),
                                 t.job.spec);
    restoreStreamNames(t);
    const auto lacking = generatedColumnsLacking(t);
    const TableSchema full = t.schema;
    const auto fullColumns = t.columns;
    const auto deferred = deferAddedColumns(t);
    t.heldBack = deferred;
    requireManagedTarget(t.job, *t.merger);
    t.merger->prepare(t.schema);
    t.layout = streamLayout(t.schema, t.columns, t.merger->generatedColumns());
    if (auto cp = t.merger->readCheckpoint()) {
        t.position = PgCdcPosition::fromJson(cp->position);
        t.version = cp->version;
    }
    // A change made while the engine was stopped shows only in the catalog: check it here.
    // Not for a table stopped before (by an error or a schema change) that nobody asked to
    // copy again: it waits for that copy as it is, and says why below.
    const bool staysStopped = t.position && t.position->stopped && t.merger->pendingRequest() != "rebackfill";
    std::string drift = staysStopped ? std::string()
                                     : schemaDrift(t.schema, applyColumnPoliciesAtStart(t),
                                                   first.target.kind == EndpointKind::Postgres);
    if (!drift.empty()) {
        t.paused = true;
        std::string fix = "adapt the target table, then re-snapshot it: driftless-cli resnapshot " + m_pipeline + " " +
                          t.job.spec.table.display();
        m_observer.tableState(t.key, TableState::Paused, drift + "; the table is paused; " + fix, std::nullopt);
        m_observer.event(Level::Error, t.key, "schema_change", drift + "; the table is paused; " + fix);
    }
    if (t.position && t.position->rebackfill) {
        t.rebackfill = std::move(t.position->rebackfill);
        t.position->rebackfill.reset();
    }
    if (t.position && t.position->addColumn) {
        t.addColumn = std::move(t.position->addColumn);
        t.position->addColumn.reset();
    }
    const AddColumnPolicy addColumn = addColumnPolicy(t.job.spec, t.job.pipelineAddColumn);
    if (!deferred.empty() && !t.streaming() && addColumn != AddColumnPolicy::Ignore) {
        // Loading (or loading again): the copy reads every column, so the target needs them now.
        t.schema = full;
        t.columns = fullColumns;
        t.merger->addMissingColumns(full);
        t.layout = streamLayout(t.schema, t.columns, t.merger->generatedColumns());
    } else if (!deferred.empty() && !t.paused && addColumn == AddColumnPolicy::Pause) {
        adaptToLayout(t, fullColumns, src, 0); // paused by it before: it stays paused
    }
    fillAddedGeneratedColumns(t, lacking);
    // Paused by a DBA, or marked paused in the target: the stream skipped its changes. One
    // resumed while nothing ran is resumed by the stream (a re-backfill); one resumed half
    // loaded starts its load over, since the rows copied before missed the changes since.
    const bool marked = t.position && t.position->paused;
    if (t.position && t.position->stopped) {
        // Stopped by an error in an earlier run: it stays stopped (and red) until a DBA asks
        // for the copy that ends the stop; one asked for while nothing ran starts now, the
        // way a Resume does.
        t.stopped = *t.position->stopped;
        t.paused = true;
        if (t.streaming() && t.merger->pendingRequest() == "rebackfill") {
            t.stopped.clear();
            t.position->stopped.reset();
            t.position->stopKind = StopKind::Error;
            t.userPaused = true;
        } else {
            m_observer.tableState(t.key, stoppedState(t.position->stopKind), t.stopped, std::nullopt);
        }
    } else if (!t.paused && (wantPaused(t) || marked)) {
        if (!wantPaused(t) && !t.streaming()) {
            t.merger->clearCheckpoint();
            t.position.reset();
            m_observer.event(Level::Info, t.key, "resumed",
                             "resumed during its initial load: it is loaded again from a new snapshot");
        } else {
            t.paused = t.userPaused = true;
        }
    }
}

PgResult CdcPipeline::readSlot(PgConnection &src) const
{
    return src.execParams("SELECT plugin, wal_status, database = current_database(), confirmed_flush_lsn, "
                          "active_pid FROM pg_replication_slots WHERE slot_name = $1",
                          {m_slot});
}

bool CdcPipeline::waitForSlot(PgConnection &src, PgResult &slot, std::stop_token stop)
{
    // A slot another process holds is not ours to judge yet. After a crash it is the old run's
    // walsender, which has not noticed its client died: one killed while it created the slot
    // holds a slot that is only ephemeral (listed, yet dropped when that walsender ends), and
    // taking it for the pipeline's slot loses it under the stream. Or another engine runs this
    // pipeline. Wait for it to be let go, then read it again.
    if (slot.rows() && !slot.isNull(0, 4)) {
        const std::string holder = slot.text(0, 4);
        m_observer.event(Level::Warn, m_tables.front()->key, "slot_busy",
                         "waiting for replication slot " + m_slot + ": process " + holder +
                             " still holds it (the connection of a run that ended, or another engine)");
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kSlotBusyWaitSeconds);
        while (slot.rows() && !slot.isNull(0, 4)) {
            if (stop.stop_requested())
                return false;
            if (std::chrono::steady_clock::now() > deadline)
                throw Error(ErrorKind::Transient,
                            "replication slot " + m_slot + " is still in use by process " + slot.text(0, 4) +
                                " after " + std::to_string(kSlotBusyWaitSeconds) + " s",
                            {},
                            "if another Driftless runs pipeline " + m_pipeline +
                                ", stop it; otherwise end that process: SELECT pg_terminate_backend(" +
                                slot.text(0, 4) + ")");
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
            slot = readSlot(src);
        }
        m_observer.event(Level::Info, m_tables.front()->key, "slot_busy",
                         slot.rows() ? "replication slot " + m_slot + " is free again"
                                     : "replication slot " + m_slot + " went away with the process that held it " +
                                           "(it was never finished); it is created again");
    }
    return true;
}

void CdcPipeline::slotGone()
{
    std::string since;
    for (auto &t : m_tables)
        if (t->streamLsn())
            since = formatLsn(t->streamLsn());
    for (auto &t : m_tables)
        m_observer.tableState(t->key, TableState::Error, "replication slot " + m_slot + " is gone", std::nullopt);
    if (!m_sourceChange.empty())
        throw Error(ErrorKind::Permanent,
                    m_sourceChange + "; replication slot " + m_slot +
                        " is not on it (a promoted standby has "
                        "none of the old primary's slots; Postgres 17's failover slots would carry it), so changes "
                        "after " +
                        (since.empty() ? std::string("the last checkpoint") : since) + " cannot be read from it",
                    {},
                    "bring the target back to this server by diff: driftless-cli recover " + m_pipeline +
                        " (or set recover: auto on the pipeline), or load it again: driftless-cli "
                        "resnapshot " +
                        m_pipeline);
    throw Error(ErrorKind::Permanent,
                "replication slot " + m_slot +
                    " no longer exists on the source (dropped, or the server was "
                    "replaced); changes after " +
                    (since.empty() ? std::string("the last checkpoint") : since) + " cannot be read any more",
                {}, "re-snapshot the pipeline: driftless-cli resnapshot " + m_pipeline);
}

void CdcPipeline::startReverseDirection()
{
    const TableJob &first = m_jobs.front();
    if (!first.twoWay || first.twoWay->reverse)
        return;
    // Every start, not only the first: a pipeline made two-way after it streamed one way (the way
    // to adopt existing tables, requireManagedTarget) gets its reverse direction's start now, and
    // the reverse direction reads the target's changes from here on.
    if (first.target.kind == EndpointKind::Mysql) {
        // Two-way to MariaDB: the reverse direction reads the target's binlog from here on;
        // the load's rows carry skip_replication and are not read back.
        std::vector<ReverseTable> back;
        for (const auto &t : m_tables)
            back.push_back({reverseTableOf(t->job), t->job.spec, t->schema});
        startReverseFromBinlog(first.source, first.target, m_pipeline + PipelineSpec::kReverseSuffix, back, m_observer,
                               m_tables.front()->key);
    }
    if (first.target.kind == EndpointKind::Postgres) {
        // Two-way: the reverse direction reads the target from before the load on; the
        // load's rows carry our origin and are not read back.
        std::vector<TableRef> targets;
        for (const auto &j : m_jobs)
            targets.push_back({j.targetName.schema, j.targetName.name});
        if (ensureReverseSlot(first.target, m_pipeline + PipelineSpec::kReverseSuffix, targets))
            m_observer.event(Level::Info, m_tables.front()->key, "slot_created",
                             "created replication slot " + first.twoWay->reverseSlot + " on " + first.target.name +
                                 " for the reverse direction");
    }
}

void CdcPipeline::startWithNewSlot(PgReplicationConnection &repl, std::stop_token stop)
{
    const TableJob &first = m_jobs.front();
    if (first.twoWay && first.twoWay->reverse)
        throw Error(ErrorKind::Transient, "waiting for two-way pipeline " + first.twoWay->pipeline +
                                              " to create replication slot " + m_slot + " on " + first.source.name +
                                              " as its initial load begins");
    startReverseDirection();
    // First start: the slot's exported snapshot is the initial load's, so the stream takes
    // over exactly where the copy ends.
    auto created = createSlotWatched(repl, m_slot, false, first.source, stop, slotWaitReporter(tablePointers()));
    m_slotConfirmed = created.consistentPoint;
    m_observer.event(Level::Info, m_tables.front()->key, "slot_created",
                     "created replication slot " + m_slot + " at " + formatLsn(created.consistentPoint));
    for (auto &t : m_tables)
        t->position.reset();
    std::vector<Table *> all;
    for (auto &t : m_tables)
        if (!t->paused)
            all.push_back(t.get());
    load(all, created.snapshotName, created.consistentPoint, stop);
}

void CdcPipeline::continueFromSlot(const PgResult &slot, const std::vector<Table *> &needLoad, std::stop_token stop)
{
    const TableJob &first = m_jobs.front();
    if (slot.text(0, 0) != "pgoutput" || !slot.toBool(0, 2))
        throw Error(ErrorKind::Permanent,
                    "replication slot " + m_slot + " exists but is not a pgoutput slot of this database", {},
                    "drop it (SELECT pg_drop_replication_slot('" + m_slot + "')) if it is not in use");
    if (slot.text(0, 1) == "lost")
        throw Error(ErrorKind::Permanent,
                    "replication slot " + m_slot +
                        " was invalidated (wal_status lost): the source removed WAL it "
                        "still needed, so changes were lost",
                    {}, "re-snapshot the pipeline: driftless-cli resnapshot " + m_pipeline);
    // The slot is only ever acknowledged at positions the target recorded first, so a slot
    // ahead of a table's checkpoint was dropped and recreated, or advanced, by someone else:
    // the changes in between will never be sent (faults F4).
    const auto confirmed = parseLsn(slot.text(0, 3)).value_or(0);
    m_slotConfirmed = confirmed;
    for (auto &t : m_tables) {
        if (t->paused || !t->streaming() || t->streamLsn() >= confirmed)
            continue;
        const std::string gap = formatLsn(t->streamLsn()) + " and " + formatLsn(confirmed);
        for (auto &u : m_tables)
            m_observer.tableState(u->key, TableState::Error,
                                  "replication slot " + m_slot + " was moved past our checkpoint (" + gap + ")",
                                  std::nullopt);
        throw Error(ErrorKind::Permanent,
                    "replication slot " + m_slot + " starts at " + formatLsn(confirmed) + " but " +
                        t->job.spec.table.display() + " was synced only up to " + formatLsn(t->streamLsn()) +
                        ": the slot was recreated or advanced behind Driftless's back, and the changes between " + gap +
                        " cannot be read any more",
                    {}, "re-snapshot the pipeline: driftless-cli resnapshot " + m_pipeline);
    }
    startReverseDirection();
    if (!needLoad.empty() && first.twoWay && first.twoWay->reverse) {
        // Two-way, reverse direction: the forward direction loads the tables; this one reads
        // the target's changes from its slot's creation on, which came before that load.
        for (Table *t : needLoad) {
            const PgCdcPosition pos = positionAt(confirmed);
            Checkpoint cp{pos.toJson(), confirmed};
            m_session->inTransaction([&] { t->merger->writeCheckpointInTransaction(cp, 0); });
            t->position = pos;
            t->version = confirmed;
            m_observer.batchApplied(t->key, {}, cp, std::nullopt);
            m_observer.event(Level::Info, t->key, "stream_from",
                             "reverse direction of a two-way pipeline: no load; streaming from " +
                                 formatLsn(confirmed));
        }
    } else if (!needLoad.empty()) {
        // Tables added since, or a load a crash interrupted: copy them in the snapshot of a
        // temporary slot, whose consistent point versions the rows exactly.
        PgReplicationConnection tmp(reachableDsn(first.source), "driftless " + m_pipeline + " snapshot");
        std::string name =
            "driftless_tmp_" + std::to_string(::getpid()) + "_" + std::to_string(wallClockMs() % 1000000);
        auto created = createSlotWatched(tmp, name, true, first.source, stop, slotWaitReporter(needLoad));
        load(needLoad, created.snapshotName, created.consistentPoint, stop);
    }
}

void CdcPipeline::stream(std::stop_token stop, Options options, PgReplicationConnection &repl, PgConnection &src)
{
    std::map<TableRef, CdcTableInfo> infos;
    std::map<TableRef, Table *> byRef;
    std::int64_t start = std::numeric_limits<std::int64_t>::max();
    bool anyUserPaused = false;
    for (auto &t : m_tables) {
        std::int64_t lsn = t->streamLsn();
        if (!t->paused)
            start = std::min(start, lsn);
        anyUserPaused = anyUserPaused || t->userPaused;
        CdcTableInfo info;
        info.table = t->job.spec.table;
        for (int k : t->schema.primaryKey)
            info.keyColumns.push_back(t->schema.columns[static_cast<size_t>(k)].name);
        info.columns = t->streamColumns.empty() ? t->columns : t->streamColumns;
        info.resumeLsn = lsn;
        info.applyTruncate = t->job.spec.truncate.value_or("apply") != "ignore";
        infos[info.table] = info;
        byRef[info.table] = t.get();
    }
    // Only tables a DBA paused: stream on from the slot's position, so the slot keeps moving and
    // holds no WAL for them (Resume re-copies them).
    if (start == std::numeric_limits<std::int64_t>::max() && anyUserPaused)
        start = m_slotConfirmed;
    if (start == std::numeric_limits<std::int64_t>::max()) {
        for (auto &t : m_tables)
            if (!t->stopped.empty())
                throw Error(ErrorKind::Permanent, "every table of pipeline " + m_pipeline + " is stopped or paused; " +
                                                      t->job.spec.table.display() + " was " + t->stopped);
        throw Error(ErrorKind::Permanent, "every table of pipeline " + m_pipeline + " is paused", {},
                    "adapt the target tables, then re-snapshot them: driftless-cli resnapshot " + m_pipeline);
    }
    PgLogicalReader::Options ro;
    ro.slot = m_slot;
    ro.publication = m_publication.value_or(m_slot);
    ro.startLsn = start;
    if (const auto &tw = m_jobs.front().twoWay) {
        ro.skipOrigin = tw->skipOrigin;
        // What resolve wrote on this direction's side; the reverse direction also drops the
        // pipeline's own name, which resolve used for both sides before each side had its own.
        ro.skipOriginsAlso = {
            resolveOriginName(tw->reverse ? tw->pipeline + PipelineSpec::kReverseSuffix : tw->pipeline)};
        if (tw->reverse)
            ro.skipOriginsAlso.push_back(resolveOriginName(tw->pipeline));
        ro.ownMessagePrefix = kOwnWriteMessagePrefix;
        ro.counters = tw->counters;
        ro.keepBeforeImages = true; // conflict detection on either kind of target
    }
    if (options.once) {
        ro.stopAtLsn = pgcatalog::currentLsn(src);
        ro.statusInterval = std::chrono::milliseconds(300);
    }
    m_acked = start;
    if (std::getenv("DRIFTLESS_DEBUG_CDC"))
        log(LogLevel::Warn, "stream start " + std::to_string(start) + " stopAt " + std::to_string(ro.stopAtLsn));
    // Two batches in hand are enough to overlap decoding with applying (the apply side is the
    // slower one); each more would cost up to a batch of memory (50,000 rows or 64 MiB). While
    // both wait, the reader gathers the next one instead of stalling the walsender.
    BoundedQueue<CdcBatch> queue(2);
    ro.applyReady = [&queue] { return queue.hasRoom(); };
    PgLogicalReader reader(repl, infos, ro);
    for (auto &t : m_tables)
        if (!t->paused)
            m_observer.tableState(t->key, TableState::Streaming, "", std::nullopt);
    m_observer.event(Level::Info, m_tables.front()->key, "stream_started",
                     "streaming from slot " + m_slot + " at " + formatLsn(start));

    pollRequests(); // a cancel left while nothing ran applies before an interrupted copy resumes
    for (auto &t : m_tables)
        if (!t->paused && t->rebackfill && !m_rebackfill)
            startRebackfill(*t, t->rebackfill);
    ApplySide side(*m_session, m_jobs.front().target.kind, m_observer, src, byRef, options.once);
    side.heartbeatOn = !options.once && m_jobs.front().heartbeat.has_value();
    side.heartbeatEvery = side.heartbeatOn ? *m_jobs.front().heartbeat : Millis(0);
    pipelined(
        queue, stop,
        [&](std::stop_token st) {
            reader.run(
                st,
                [&](CdcBatch &b, std::chrono::milliseconds timeout, bool &accepted) {
                    auto r = queue.pushFor(b, timeout);
                    accepted = r == BoundedQueue<CdcBatch>::PushResult::Pushed;
                    return r != BoundedQueue<CdcBatch>::PushResult::Closed;
                },
                [&] { return m_acked.load(); });
        },
        [&] {
            try {
                for (;;) {
                    if (!side.txn.open())
                        betweenTransactions(side, stop);
                    auto b = queue.popFor((m_rebackfill || columnFillDue()) && !side.txn.open()
                                              ? std::chrono::milliseconds(0)
                                              : std::chrono::milliseconds(200));
                    if (!b) {
                        if (queue.closed())
                            break;
                        continue;
                    }
                    if (b->idleWalEnd)
                        applyIdle(side, *b);
                    else
                        applyBatch(side, *b);
                }
            } catch (...) {
                side.txn.rollback();
                throw;
            }
            side.txn.rollback(); // a transaction cut short by a stop: nothing of it lands
        });
    // The apply side may have recorded (and so may acknowledge) a position after the reader sent
    // its last status: an idle position handed over just before it stopped.
    try {
        repl.sendStatus(m_acked.load(), m_acked.load(), false);
    } catch (const Error &) {
    }
    if (options.once) {
        finishRebackfills(stop);
        // Everything the source had when the pass began is applied: column checks are final now.
        m_drained = true;
        // Columns the source added before the pass began that no change carried: the stream is
        // past the ALTER, so they are added now, as if the last change applied had carried them.
        for (auto &t : m_tables)
            if (!t->heldBack.empty() && !t->paused && t->streaming())
                addHeldBackColumns(*t, src);
        while (Table *f = columnFillDue()) {
            if (stop.stop_requested())
                break;
            addColumnStepOrStop(*f, src);
        }
    }
}

void CdcPipeline::betweenTransactions(ApplySide &side, std::stop_token stop)
{
    // Between target transactions: requests from other processes, a heartbeat, and one chunk of a
    // re-backfill, so it advances while the stream keeps being applied.
    auto now = std::chrono::steady_clock::now();
    if (now - side.lastPoll >= kRequestPoll) {
        side.lastPoll = now;
        pollRequests();
    }
    if (side.heartbeatOn && now - side.lastBeat >= side.heartbeatEvery) {
        side.lastBeat = now;
        side.beatFailed = !writeHeartbeat(side.src, side.beatFailed);
    }
    if (m_rebackfill && !stop.stop_requested())
        rebackfillStepOrStop();
    else if (Table *f = columnFillDue(); f && !stop.stop_requested())
        addColumnStepOrStop(*f, side.src);
}

void CdcPipeline::applyIdle(ApplySide &side, const CdcBatch &b)
{
    if (side.txn.open())
        return;
    // Idle and everything applied: the target is fresh as of now.
    std::int64_t fresh = localMsFromSourceMicros(b.serverTimeUs, b.clockOffsetUs);
    // Record the idle position in the target before the slot hears of it, every few seconds (at
    // once when draining or when the server asks): the slot never gets ahead of the checkpoint,
    // which is how a slot moved behind our back shows.
    auto now = std::chrono::steady_clock::now();
    // Only when every table streams: one still loading (or re-loading) keeps no stream position
    // the idle one could be recorded in, and the slot must not pass the changes it has yet to read.
    bool allStream = true;
    for (auto &t : m_tables)
        allStream = allStream && (t->paused || t->streaming());
    if (allStream && *b.idleWalEnd > m_acked.load() &&
        (side.once || b.idleUrgent || now - side.lastIdleSave >= kIdleSave)) {
        side.lastIdleSave = now;
        saveIdlePosition(*b.idleWalEnd);
        m_acked = std::max(m_acked.load(), *b.idleWalEnd);
    }
    for (auto &t : m_tables)
        if (!t->paused)
            m_observer.batchApplied(t->key, {}, Checkpoint{positionOf(*t), t->version}, fresh);
}

void CdcPipeline::applyBatch(ApplySide &side, CdcBatch &b)
{
    CdcBatchTransaction &txn = side.txn;
    PgConnection &src = side.src;
    txn.begin();
    for (auto &[ref, ch] : b.tables) {
        auto it = side.byRef.find(ref);
        if (it == side.byRef.end() || it->second->paused)
            continue;
        Table &t = *it->second;
        TableApplySteps steps;
        steps.adapt = [&] {
            if (!t.dropped.empty() && ch.columns == t.columns && !t.streamColumns.empty()) {
                // Past the changes that still carried a dropped column.
                t.streamColumns.clear();
                t.layout = streamLayout(t.schema, t.columns, t.merger->generatedColumns());
            }
            if ((ch.columns != t.columns && ch.columns != t.streamColumns &&
                 !adaptToLayout(t, ch.columns, src, firstVersion(ch.rows, b.commitVersion))) ||
                !adaptToTypes(t, ch, src)) {
                markSchemaPause(t);
                return false;
            }
            return true;
        };
        steps.resolveConflicts = [&](RowSet &) { return resolveTwoWayConflicts(t, ch); };
        steps.completeForTarget = [&](RowSet &rows) {
            fillGeneratedValues(t, rows, src);
            completePartialRows(t, rows, src);
        };
        steps.filter = [&](RowSet &rows) { applyRowFilter(src, t.schema, *t.job.spec.where, rows); };
        steps.stop = [&](const Error &e) { stopTable(t, e); };
        txn.apply(t, *t.merger, ch.truncate, ch.rows, ch.changes, steps);
    }
    if (!b.final)
        return;
    std::vector<BatchCheckpoint> moved;
    for (auto &t : m_tables) {
        if (t->paused)
            continue;
        if (b.endVersion) {
            // Positions and versions only move forward. A table loaded again after a crash
            // streams from its first chunk's snapshot but holds the version of its last one:
            // written with this transaction's (older) commit LSN, the guarded upsert kept the old
            // position while the slot heard of the new one, and the next start found the slot
            // past the checkpoint.
            if (t->streaming() && b.endVersion > t->streamLsn())
                t->position->lsn = b.endVersion;
            t->version = std::max(t->version, b.commitVersion);
        }
        moved.push_back({t.get(), t->merger.get(), {positionOf(*t), t->version}, b.endVersion != 0});
    }
    BatchReport report;
    report.freshMs = localMsFromSourceMicros(b.commitTimeUs, b.clockOffsetUs);
    report.twoWay = m_jobs.front().twoWay ? m_jobs.front().twoWay->counters.get() : nullptr;
    report.partialWhat = "unchanged large values";
    // P1: the source hears of this position only once it is durable here.
    txn.commitBatch(moved, report, [&] {
        if (b.endVersion)
            m_acked = std::max(m_acked.load(), b.endVersion);
    });
}

void CdcPipeline::finishRebackfills(std::stop_token stop)
{
    // One pass (`run --once`) is not done while a table is still being copied again: the copy
    // (and any waiting its turn) runs to its end here. The stream's changes up to the drain
    // position are applied; later ones reach the table in the next pass, ordered against the
    // copy by the guarded merge as while streaming.
    for (;;) {
        if (stop.stop_requested())
            return;
        if (!m_rebackfill) {
            pollRequests();
            if (!m_rebackfill)
                return;
        }
        rebackfillStepOrStop();
    }
}

void CdcPipeline::rebackfillStepOrStop()
{
    try {
        rebackfillStep();
    } catch (const Error &e) {
        if (!stopsOnlyTheTable(e, m_jobs.front().target.kind))
            throw;
        stopTable(*m_rebackfill->table, e); // its chunk's transaction rolled back
    }
}

void CdcPipeline::saveIdlePosition(std::int64_t walEnd)
{
    m_session->inTransaction([&] {
        for (auto &t : m_tables) {
            if (t->paused || !t->streaming() || t->streamLsn() >= walEnd)
                continue;
            t->position->lsn = walEnd;
            t->merger->writeCheckpointInTransaction({positionOf(*t), t->version}, 0);
        }
    });
}

bool CdcPipeline::writeHeartbeat(PgConnection &src, bool failedBefore)
{
    // Transactional, so that it arrives as a transaction of its own whose end the slot is then
    // acknowledged at (a non-transactional message may not move the slot's required LSN on an
    // otherwise idle server).
    try {
        src.execParams("SELECT pg_logical_emit_message(true, 'driftless_heartbeat', $1)", {m_pipeline});
        if (failedBefore)
            m_observer.event(Level::Info, m_tables.front()->key, "heartbeat", "heartbeats are written again");
        return true;
    } catch (const Error &e) {
        if (!failedBefore)
            m_observer.event(Level::Warn, m_tables.front()->key, "heartbeat",
                             "cannot write a heartbeat into the source (" + e.describe() +
                                 "); the slot still advances from keepalives while the stream is idle");
        return false;
    }
}

std::string CdcPipeline::positionOf(const Table &t) const
{
    if (!t.position)
        return "null"; // no position: nothing a restart could resume from
    PgCdcPosition pos = *t.position;
    if (!m_systemId.empty()) { // where it is now (the identity check let it go on here)
        pos.systemId = m_systemId;
        pos.timeline = m_timeline;
    }
    pos.rebackfill = t.rebackfill;
    pos.addColumn = t.addColumn;
    pos.attnums = t.attnums;
    return pos.toJson();
}

void CdcPipeline::pollRequests()
{
    applyPauses();
    // One query for the pipeline's tables (they share the target's checkpoint table), so the
    // poll can be frequent whatever their number.
    const std::map<std::string, std::string> pending = m_tables.front()->merger->pendingRequests();
    auto requestOf = [&](const Table &t) {
        auto it = pending.find(t.job.spec.table.display());
        return it == pending.end() ? std::string() : it->second;
    };
    for (auto &t : m_tables) {
        if (!t->stopped.empty() && t->streaming()) {
            // A stopped table ends its stop with a copy: `backfill` asks for it like for any other.
            std::string req = requestOf(*t);
            if (req == "cancel_rebackfill")
                t->merger->setRequest("");
            if (req != "rebackfill")
                continue;
            t->stopped.clear();
            t->position->stopped.reset();
            t->position->stopKind = StopKind::Error;
            t->userPaused = true;
            if (!wantPaused(*t))
                resumeTable(*t); // also takes the request
            continue;
        }
        if (t->paused || !t->streaming())
            continue;
        std::string req = requestOf(*t);
        if (req.empty())
            continue;
        if (req == "cancel_rebackfill") {
            t->merger->setRequest("");
            cancelRebackfill(*t);
            continue;
        }
        if (req == "recover") {
            // Asked for while the source is the one the target follows: nothing to bring back.
            t->merger->setRequest("");
            m_observer.event(Level::Info, t->key, "request",
                             "recover: the source is the server the target follows, on its timeline; nothing to "
                             "recover (driftless-cli backfill compares one table with it)");
            continue;
        }
        if (req != "rebackfill" && req != kAdoptRequest) {
            t->merger->setRequest("");
            m_observer.event(Level::Warn, t->key, "request", "unknown request '" + req + "' ignored");
            continue;
        }
        if (m_rebackfill)
            continue; // one at a time; this one waits its turn
        t->merger->setRequest("");
        startRebackfill(*t, std::nullopt, req == kAdoptRequest);
    }
    // Copies interrupted by a restart resume one after the other.
    for (auto &t : m_tables)
        if (!m_rebackfill && !t->paused && t->rebackfill)
            startRebackfill(*t, t->rebackfill);
}

std::vector<StoppedTable> CdcPipeline::stoppedTables() const
{
    return stoppedTablesOf(m_tables);
}

void CdcPipeline::stopTable(Table &t, const Error &e)
{
    if (m_rebackfill && m_rebackfill->table == &t)
        m_rebackfill.reset(); // waits for a chunk being read, ends the snapshot's transaction
    const bool hadCopy = t.rebackfill.has_value();
    t.rebackfill.reset();
    t.resumeWaiting = false;
    const std::string name = t.job.spec.table.display();
    const StopKind kind =
        t.stopFor(e, t.streaming() ? "copy the table again while the others stream: driftless-cli backfill " +
                                         m_pipeline + " " + name
                                   : "load it again: driftless-cli resnapshot " + m_pipeline + " " + name +
                                         " (with the sync stopped), and run");
    if (t.position) {
        // The mark tells a restart the stream skipped its changes from here on.
        t.position->stopped = t.stopped;
        t.position->stopKind = kind;
        recordSkipped(t, hadCopy);
    }
    t.sayStopped(kind, m_pipeline, m_observer);
}

bool CdcPipeline::wantPaused(const Table &t) const
{
    return t.pauseWanted(m_pauses.get());
}

void CdcPipeline::applyPauses()
{
    for (auto &t : m_tables) {
        const bool want = wantPaused(*t);
        switch (t->pauseTurn(want)) {
        case CdcTable::PauseTurn::Pause:
            pauseTable(*t);
            break;
        case CdcTable::PauseTurn::Resume:
            resumeTable(*t);
            break;
        case CdcTable::PauseTurn::None:
            if (want && t->resumeWaiting)
                t->resumeWaiting = false; // paused again before its turn came
            break;
        }
    }
}

void CdcPipeline::recordSkipped(Table &t, bool droppedCopy)
{
    t.position->paused = true;
    writeCheckpoint(t, droppedCopy);
}

void CdcPipeline::writeCheckpoint(Table &t, bool clearSeen)
{
    m_session->inTransaction([&] {
        if (clearSeen)
            t.merger->clearSeenInTransaction();
        t.merger->writeCheckpointInTransaction({positionOf(t), t.version}, 0);
    });
}

void CdcPipeline::pauseTable(Table &t)
{
    if (m_rebackfill && m_rebackfill->table == &t)
        m_rebackfill.reset(); // waits for a chunk being read, ends the snapshot's transaction
    const bool hadCopy = t.rebackfill.has_value();
    t.rebackfill.reset();
    t.paused = t.userPaused = true;
    t.resumeWaiting = false;
    // The mark in the target says the stream skipped its changes from here on: a restart, even
    // with the pause lifted meanwhile, then knows the table must be copied again, and that its
    // checkpoint behind the slot is no sign of a slot moved behind our back.
    const bool mark = t.position && (!t.position->paused || hadCopy);
    if (mark) {
        recordSkipped(t, hadCopy);
        const std::string since = t.streaming() ? "after " + formatLsn(t.streamLsn()) : "of its initial load";
        m_observer.event(
            Level::Info, t.key, "paused",
            "paused: changes " + since + " are not applied until it is resumed" +
                (hadCopy ? "; the re-backfill under way was dropped (Resume copies the table again)" : std::string()));
    }
    m_observer.tableState(t.key, TableState::Paused, pausedMessage(Strategy::Cdc), std::nullopt);
}

void CdcPipeline::resumeTable(Table &t)
{
    if (!t.streaming())
        throw CdcRestart{t.key.table.display() +
                         " was resumed before its initial load finished: the pipeline starts again to load it"};
    if (m_rebackfill) {
        // One copy at a time: it stays paused until the one under way ends, then copies.
        if (!t.resumeWaiting) {
            t.resumeWaiting = true;
            m_observer.tableState(t.key, TableState::Paused,
                                  "resumed; waits for the re-backfill of " + m_rebackfill->table->key.table.display() +
                                      " to end, then is re-copied",
                                  std::nullopt);
        }
        return;
    }
    if (!t.merger->pendingRequest().empty())
        t.merger->setRequest(""); // a re-backfill asked for (or its cancel): the one below supersedes it
    // Unpaused in the same step as its copy's snapshot is taken, on this (the apply) thread: no
    // batch lands in between. Changes made while it was paused are in the snapshot; later ones
    // come through the stream from here on; the guarded merge orders the two.
    t.paused = t.userPaused = t.resumeWaiting = false;
    t.position->paused = false;
    if (m_acked.load() > t.streamLsn())
        t.position->lsn = m_acked.load();
    startRebackfill(t, std::nullopt);
    writeCheckpoint(t, false);
    m_observer.event(Level::Info, t.key, "resumed",
                     "resumed: re-copied through the guarded merge while the stream goes on; the changes made while "
                     "it was paused arrive with the copy");
}

void CdcPipeline::cancelRebackfill(Table &t)
{
    const bool running = m_rebackfill && m_rebackfill->table == &t;
    if (!running && !t.rebackfill) {
        m_observer.event(Level::Info, t.key, "rebackfill", "no re-backfill of " + t.key.table.display() + " to cancel");
        return;
    }
    long long copied = running ? m_rebackfill->copied : t.rebackfill->rows;
    if (running)
        m_rebackfill.reset(); // waits for a chunk being read, ends the snapshot's transaction
    t.rebackfill.reset();
    writeCheckpoint(t, true);
    m_observer.event(Level::Info, t.key, "rebackfill",
                     "re-backfill cancelled after " + std::to_string(copied) +
                         " rows: the rows merged so far stay (each is the source's row as of the snapshot or newer); "
                         "rows the source no longer has were not looked for");
    m_observer.tableState(t.key, TableState::Streaming, "", std::nullopt);
}

void CdcPipeline::startRebackfill(Table &t, const std::optional<PgRebackfillProgress> &progress, bool rowByRow)
{
    // The rows are read in the snapshot of a temporary slot: its consistent point versions them
    // exactly, so the guarded merge orders them against the stream without locks (docs/cdc.md).
    const Endpoint &src = m_jobs.front().source;
    auto rb = std::make_unique<Rebackfill>();
    rb->table = &t;
    {
        // The loader's session opens while the slot is made: two logins in the time of one.
        auto loader = std::async(std::launch::async, [&] {
            return std::make_unique<PgConnection>(connectPostgres(src, "driftless " + m_pipeline + " rebackfill"));
        });
        PgReplicationConnection tmp(reachableDsn(src), "driftless " + m_pipeline + " snapshot");
        auto slot = createSlotWatched(
            tmp, "driftless_tmp_" + std::to_string(::getpid()) + "_" + std::to_string(wallClockMs() % 1000000), true,
            src, m_stop, slotWaitReporter({&t}));
        rb->loader = loader.get();
        rb->loader->begin("ISOLATION LEVEL REPEATABLE READ READ ONLY");
        rb->loader->exec("SET TRANSACTION SNAPSHOT " + pgLiteral(slot.snapshotName));
        rb->version = slot.consistentPoint;
    }
    // An adopted table's rows are the DBA's: only those that differ are written, not whole buckets.
    if (rowByRow || (progress && progress->rowByRow)) {
        rb->compare = RebackfillCompareRows::open(t.job, t.schema, *t.merger, *rb->loader, true);
        rb->rowByRow = rb->compare != nullptr;
    }
    if (!rb->compare)
        rb->compare = RebackfillCompare::open(t.job, t.schema, t.columns, *t.merger, *rb->loader);
    if (!rb->compare)
        rb->compare = RebackfillCompareRows::open(t.job, t.schema, *t.merger, *rb->loader);
    rb->deleteBelow = rb->version;
    if (progress) {
        rb->after = progress->after;
        if (progress->deleteBelow > 0)
            rb->deleteBelow = std::min(rb->deleteBelow, progress->deleteBelow);
    }
    bool fresh = !progress;
    if (!fresh && progress->compared != static_cast<bool>(rb->compare)) {
        // A copy begun the other way cannot go on this way: one leaves the removed rows for the
        // end (by the keys it saw), the other removes them page by page.
        m_observer.event(Level::Warn, t.key, "rebackfill",
                         "the re-backfill was begun " +
                             std::string(progress->compared ? "comparing pages by checksum" : "copying every row") +
                             " and cannot go on the other way; the re-backfill starts over");
        rb->after.clear();
        rb->deleteBelow = rb->version;
        fresh = true;
    }
    if (!fresh) {
        rb->copied = progress->rows;
        if (!rb->compare && t.merger->seenCount() < rb->copied) {
            // The keys of the chunks merged so far are gone (the target server crashed): without
            // them the end of the copy cannot tell removed rows from merged ones. Start over.
            m_observer.event(Level::Warn, t.key, "rebackfill",
                             "the keys merged before the target server restarted were lost; the re-backfill starts "
                             "over");
            rb->copied = 0;
            rb->after.clear();
            rb->deleteBelow = rb->version;
            fresh = true;
        }
    }
    if (fresh) {
        // A fresh copy: keys seen by an abandoned one say nothing about this snapshot.
        m_session->inTransaction([&] { t.merger->clearSeenInTransaction(); });
    }
    t.rebackfill = rebackfillPosition(*rb);
    m_observer.event(Level::Info, t.key, "rebackfill",
                     std::string(progress ? "resuming" : "starting") +
                         " a re-backfill while the stream goes on (snapshot at " + formatLsn(rb->version) + ", " +
                         (rb->rowByRow  ? "comparing row by row"
                          : rb->compare ? "comparing pages by checksum"
                                        : "copying every row") +
                         ")");
    const long long copied = rb->copied;
    m_rebackfill = std::move(rb);
    m_observer.tableState(t.key, TableState::Backfilling, copyMessage(t), Progress{copied, t.schema.estimatedRows});
}

std::vector<CdcPipeline::Table *> CdcPipeline::tablePointers() const
{
    std::vector<Table *> out;
    for (const auto &t : m_tables)
        out.push_back(t.get());
    return out;
}

std::function<void(const SlotWaitReport &)> CdcPipeline::slotWaitReporter(std::vector<Table *> tables)
{
    return [this, tables = std::move(tables)](const SlotWaitReport &report) {
        for (Table *t : tables) {
            m_observer.tableState(t->key, TableState::Running, report.message, std::nullopt);
            if (report.first)
                m_observer.event(Level::Warn, t->key, "slot_wait", report.message);
        }
    };
}

PgRebackfillProgress CdcPipeline::rebackfillPosition(const Rebackfill &rb)
{
    return {rb.after, rb.deleteBelow, rb.copied, rb.compare != nullptr, rb.rowByRow};
}

void CdcPipeline::rebackfillStep()
{
    Rebackfill &rb = *m_rebackfill;
    Table &t = *rb.table;
    const long long page = t.job.spec.effectivePageSize();
    if (rb.compare) {
        // One page compared by checksum; only its differing buckets are copied, and the rows the
        // source no longer has there are removed with it.
        RebackfillPage done;
        m_session->begin();
        try {
            done = rb.compare->step(rb.after, page, rb.version, rb.deleteBelow);
            rb.after = done.last;
            if (!done.end) {
                if (!t.rebackfill)
                    t.rebackfill = rebackfillPosition(rb);
                t.rebackfill->after = rb.after;
                t.rebackfill->rows = rb.copied + done.rows;
            } else {
                t.rebackfill.reset();
            }
            t.merger->writeCheckpointInTransaction({positionOf(t), t.version}, done.written + done.removed);
            m_session->commit();
        } catch (...) {
            m_session->rollback();
            t.rebackfill = rebackfillPosition(rb);
            throw;
        }
        rb.copied += done.rows;
        rb.equal += done.equalRows;
        rb.removed += done.removed;
        rb.written += done.written + done.removed;
        crashPoint("rebackfill.after_chunk");
        m_observer.batchApplied(t.key, ApplyResult{done.rows, done.written + done.removed, false},
                                {positionOf(t), t.version}, std::nullopt);
        if (!done.end) {
            m_observer.tableState(t.key, TableState::Backfilling, copyMessage(t),
                                  Progress{rb.copied, t.schema.estimatedRows});
            return;
        }
        rb.loader->commit();
        m_observer.event(Level::Info, t.key, "rebackfill",
                         "re-backfill done: " + std::to_string(rb.copied) + " rows merged, " +
                             std::to_string(rb.removed) + " rows the source no longer has removed; " +
                             std::to_string(rb.equal) + " of the rows were found equal by checksum and not copied");
        m_observer.tableState(t.key, TableState::Streaming, "", std::nullopt);
        recoveredTable(t, rb.copied, rb.written);
        m_rebackfill.reset();
        return;
    }
    RowSet rows;
    if (rb.ahead.valid())
        rows = rb.ahead.get();
    else
        readChunk(*rb.loader, t.schema, t.job.spec, rb.after, page, rb.version, rows);
    const long long n = static_cast<long long>(rows.size());
    if (n > 0) {
        // Read the next chunk on the side while this one is merged.
        rb.ahead = std::async(std::launch::async, [&rb, &t, page, from = lastKey(t.schema, rows)] {
            RowSet next;
            readChunk(*rb.loader, t.schema, t.job.spec, from, page, rb.version, next);
            return next;
        });
    }
    ApplyResult r{n, 0, false};
    long long gone = 0;
    m_session->begin();
    try {
        if (n > 0) {
            r = t.merger->mergeSnapshotChunkInTransaction(rows);
            rb.after = lastKey(t.schema, rows);
            if (!t.rebackfill)
                t.rebackfill = rebackfillPosition(rb);
            t.rebackfill->after = rb.after;
            t.rebackfill->rows = rb.copied + n;
        } else {
            // Every key the snapshot has was seen; the rows with other keys that are older than
            // the snapshot are the ones the source no longer has.
            gone = t.merger->deleteUnseenInTransaction(rb.deleteBelow);
            t.rebackfill.reset();
        }
        t.merger->writeCheckpointInTransaction({positionOf(t), t.version}, r.rowsWritten + gone);
        m_session->commit();
    } catch (...) {
        m_session->rollback();
        t.rebackfill = rebackfillPosition(rb);
        throw;
    }
    rb.copied += n;
    rb.written += r.rowsWritten + gone;
    if (n > 0)
        crashPoint("rebackfill.after_chunk");
    m_observer.batchApplied(t.key, r, {positionOf(t), t.version}, std::nullopt);
    if (n > 0) {
        m_observer.tableState(t.key, TableState::Backfilling, copyMessage(t),
                              Progress{rb.copied, t.schema.estimatedRows});
        return;
    }
    rb.loader->commit();
    m_observer.event(Level::Info, t.key, "rebackfill",
                     "re-backfill done: " + std::to_string(rb.copied) + " rows merged, " + std::to_string(gone) +
                         " rows the source no longer has removed");
    m_observer.tableState(t.key, TableState::Streaming, "", std::nullopt);
    recoveredTable(t, rb.copied, rb.written);
    m_rebackfill.reset();
}

} // namespace driftless::core
