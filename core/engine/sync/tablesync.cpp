#include "core/engine/sync/tablesync.h"

#include "core/base/clock.h"
#include "core/base/testhooks.h"
#include "core/db/pgcatalog.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/endpoints/connectionpool.h"
#include "core/engine/jobs/boundedqueue.h"
#include "core/engine/jobs/pipelined.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/rows/rowfilter.h"
#include "core/engine/schema/columnbackfillmysql.h"
#include "core/engine/schema/passschema.h"
#include "core/mergers/mysqlmerger.h"
#include "core/mergers/pgmerger.h"
#include "core/mergers/sqlitemerger.h"
#include "core/model/error.h"
#include "core/model/refreshposition.h"
#include "core/readers/mysqlreaders.h"
#include "core/readers/pgcursorreader.h"
#include "core/readers/pgfullrefreshreader.h"
#include "core/state/statestore.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

namespace driftless::core {

namespace {

/// The source side of one pass: a connection of the source's engine and the reader built on it.
struct Source {
    std::optional<PgConnection> pg;
    std::optional<MysqlConnection> my;
    TableSchema schema;
    std::optional<mysqlcatalog::MysqlTable> myTable;

    Source(const TableJob &job, ConnectionPool *pool) : m_job(job), m_pool(pool), m_app("driftless " + job.pipeline)
    {
        const std::string &app = m_app;
        switch (job.source.kind) {
        case EndpointKind::Postgres:
            pg.emplace(pool ? pool->take(job.source, app) : connectPostgres(job.source, app));
            schema = pgcatalog::describeTable(*pg, job.spec.table, job.spec.key);
            requireRowFilter(*pg, schema, job.spec);
            return;
        case EndpointKind::Mysql:
            my.emplace(connectMysql(job.source));
            myTable = mysqlcatalog::describeTable(*my, job.spec.table, job.spec.key);
            schema = myTable->schema;
            requireRowFilter(*my, job.spec);
            return;
        case EndpointKind::Sqlite:
            break;
        }
        throw Error(ErrorKind::Permanent, "endpoint '" + job.source.name + "': SQLite is a target only", {},
                    "use a Postgres or MySQL/MariaDB endpoint as the pipeline's source");
    }

    /// Leaves `columns` out of what the readers read (`add_column: ignore`).
    void leaveOut(const std::vector<std::string> &columns)
    {
        if (columns.empty())
            return;
        auto kept = [&](const std::string &name) {
            return std::find(columns.begin(), columns.end(), name) == columns.end();
        };
        const TableSchema all = schema;
        schema.columns.clear();
        std::vector<mysqlcatalog::MysqlColumn> myColumns;
        for (size_t i = 0; i < all.columns.size(); ++i) {
            if (!kept(all.columns[i].name))
                continue;
            schema.columns.push_back(all.columns[i]);
            if (myTable)
                myColumns.push_back(myTable->columns[i]);
        }
        schema.primaryKey.clear();
        for (int k : all.primaryKey)
            schema.primaryKey.push_back(schema.columnIndex(all.columns[static_cast<size_t>(k)].name));
        if (myTable) {
            myTable->schema = schema;
            myTable->columns = std::move(myColumns);
        }
    }
    /// The source's current version, as its readers stamp rows.
    std::int64_t version() { return pg ? pgcatalog::currentLsn(*pg) : mysqlcatalog::currentVersion(*my); }
    /// Which server answers ("pg:<system id>:<timeline>", "mysql:<server_id>"), or empty when the
    /// endpoint's user may not read it: a cursor's row versions are positions of that server.
    std::string identity()
    {
        try {
            if (pg) {
                // The timeline of the WAL being written (a primary), else of the last restartpoint.
                auto r = pg->exec("SELECT s.system_identifier::text, CASE WHEN pg_is_in_recovery() THEN "
                                  "(SELECT timeline_id FROM pg_control_checkpoint()) ELSE ('x' || "
                                  "substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END "
                                  "FROM pg_control_system() s");
                return "pg:" + r.text(0, 0) + ":" + r.text(0, 1);
            }
            return "mysql:" + my->scalar("SELECT @@server_id").value_or("");
        } catch (const Error &) {
            return {};
        }
    }
    /// Where an add-column backfill reads the source's values.
    std::unique_ptr<ColumnFillSource> fillSource(EndpointKind target)
    {
        if (pg)
            return std::make_unique<PgColumnFillSource>(*pg, schema, m_job.spec);
        return std::make_unique<MysqlColumnFillSource>(*my, *myTable, m_job.spec, target == EndpointKind::Postgres);
    }

    std::unique_ptr<FullRefreshReader> fullRefreshReader()
    {
        if (pg)
            return std::make_unique<PgFullRefreshReader>(*pg, schema, m_job.spec.where.value_or(""));
        return std::make_unique<MysqlFullRefreshReader>(*my, *myTable, m_job.spec.where.value_or(""));
    }
    std::unique_ptr<CursorReader> cursorReader(const TableSpec &spec)
    {
        if (pg)
            return std::make_unique<PgCursorReader>(*pg, schema, spec);
        return std::make_unique<MysqlCursorReader>(*my, *myTable, spec);
    }
    /// After a pass that ended well: the connection goes back to the pool. Not after a stop
    /// request, whose cancel may still be on its way to the server.
    void release(std::stop_token stop)
    {
        if (m_pool && pg && !stop.stop_requested())
            m_pool->give(m_job.source, m_app, std::move(*pg));
    }

    /// Stops a running read when `stop` is requested.
    std::unique_ptr<std::stop_callback<std::function<void()>>> cancelOn(std::stop_token stop)
    {
        std::function<void()> cancel;
        if (pg)
            cancel = [c = &*pg] { c->cancel(); };
        else
            cancel = [c = &*my] { c->killQuery(); };
        return std::make_unique<std::stop_callback<std::function<void()>>>(stop, std::move(cancel));
    }

private:
    const TableJob &m_job;
    ConnectionPool *m_pool;
    std::string m_app;
};

/// The target side of one pass: its merger, on a pooled connection for a Postgres target.
struct Target {
    std::shared_ptr<PgConnection> pg;
    std::shared_ptr<SqliteDb> lite;
    std::unique_ptr<Merger> merger;
    /// The merger of the target's own kind, behind any column mapping: its connection is the
    /// one the session's transactions run on.
    Merger *base = nullptr;

    Target(const TableJob &job, const MergeTarget &mt, ConnectionPool *pool)
        : m_job(job), m_pool(pool), m_app("driftless " + job.pipeline)
    {
        if (pool && job.target.kind == EndpointKind::Postgres) {
            pg = std::make_shared<PgConnection>(pool->take(job.target, m_app));
            merger = std::make_unique<PgMerger>(pg, mt);
        } else if (pool && job.target.kind == EndpointKind::Sqlite) {
            lite = pool->takeSqlite(job.target.path);
            merger = std::make_unique<SqliteMerger>(lite, mt);
        } else {
            merger = createMerger(job.target, mt);
        }
        base = merger.get();
        merger = withColumnMapping(std::move(merger), job.spec);
    }
    Merger *operator->() { return merger.get(); }

    /// Transactions on the merger's connection, for the work a pass does around its batches
    /// (column changes, an add-column backfill).
    TargetSession &session()
    {
        if (!m_session)
            m_session = std::make_unique<ConnectionSession>(*this);
        return *m_session;
    }

    /// As Source::release.
    void release(std::stop_token stop)
    {
        merger.reset();
        base = nullptr;
        if (m_pool && pg && pg.use_count() == 1 && !stop.stop_requested())
            m_pool->give(m_job.target, m_app, std::move(*pg));
        if (m_pool && lite)
            m_pool->giveSqlite(m_job.target.path, std::move(lite));
    }

private:
    /// Begin, commit and rollback on the connection of the merger this pass made.
    class ConnectionSession final : public TargetSession {
    public:
        explicit ConnectionSession(Target &t) : m_t(t) {}
        void begin() override
        {
            if (auto *p = dynamic_cast<PgMerger *>(m_t.base))
                p->connection().begin();
            else
                exec(beginSql());
        }
        void commit() override
        {
            if (auto *p = dynamic_cast<PgMerger *>(m_t.base))
                p->connection().commit();
            else
                exec("COMMIT");
        }
        void rollback() noexcept override
        {
            if (auto *p = dynamic_cast<PgMerger *>(m_t.base)) {
                p->connection().rollback();
                return;
            }
            try {
                exec("ROLLBACK");
            } catch (...) {
            }
        }
        std::unique_ptr<Merger> merger(const MergeTarget &) override
        {
            throw Error(ErrorKind::Permanent, "a pass's session makes no mergers");
        }
        std::string describe() const override { return m_t.merger->describeTarget(); }

    private:
        std::string beginSql() const
        {
            switch (m_t.m_job.target.kind) {
            case EndpointKind::Sqlite:
                return "BEGIN IMMEDIATE";
            case EndpointKind::Mysql:
                return "START TRANSACTION";
            case EndpointKind::Postgres:
                break;
            }
            return "BEGIN";
        }
        void exec(const std::string &sql)
        {
            if (auto *l = dynamic_cast<SqliteMerger *>(m_t.base))
                l->db().exec(sql);
            else if (auto *m = dynamic_cast<MysqlMerger *>(m_t.base))
                m->connection().exec(sql);
            else
                throw Error(ErrorKind::Permanent, "no transaction for " + m_t.merger->describeTarget());
        }
        Target &m_t;
    };

    const TableJob &m_job;
    ConnectionPool *m_pool;
    std::string m_app;
    std::unique_ptr<TargetSession> m_session;
};

} // namespace

namespace {

/// The table's checkpoint before the pass prepares anything: none when the target has no
/// table yet, or one Driftless did not make (prepare() says so).
std::optional<Checkpoint> checkpointBeforePrepare(Merger &merger)
{
    if (merger.targetColumns().empty())
        return std::nullopt;
    try {
        return merger.readCheckpoint();
    } catch (const Error &) {
        return std::nullopt;
    }
}

} // namespace

TableSync::TableSync(TableJob job, EngineObserver &observer, ConnectionPool *pool)
    : m_job(std::move(job)), m_observer(observer), m_pool(pool)
{
}

TableSync::Outcome TableSync::runOnce(std::stop_token stop)
{
    switch (m_job.spec.strategy) {
    case Strategy::FullRefresh:
        return fullRefresh(stop);
    case Strategy::Cursor:
        return cursorPass(stop);
    case Strategy::Cdc:
        throw Error(ErrorKind::Permanent, "CDC tables stream through their pipeline, not in passes", {},
                    "run them with the scheduler (driftless-cli run)");
    }
    return {};
}

TableSync::Outcome TableSync::fullRefresh(std::stop_token stop)
{
    const TableKey key = m_job.key();
    Outcome out;
    Source source(m_job, m_pool);
    auto cancelSrc = source.cancelOn(stop);
    MergeTarget mt{m_job.pipeline,        m_job.spec.table,        m_job.targetName,
                   Strategy::FullRefresh, softDeletes(m_job.spec), m_job.adopt};
    Target merger(m_job, mt, m_pool);
    // The source's columns against the target's, under the table's schema_changes policies.
    PassColumns memory;
    if (auto before = checkpointBeforePrepare(*merger.merger)) {
        try {
            const auto j = nlohmann::json::parse(before->position);
            if (j.is_object() && j.contains("columns"))
                memory = PassColumns::fromJson(j["columns"].dump());
        } catch (const nlohmann::json::exception &) {
        }
    }
    PassSchemaContext pcx{m_job,
                          m_observer,
                          *merger.merger,
                          merger.session(),
                          source.pg ? &*source.pg : nullptr,
                          [&] { return source.version(); },
                          {}};
    const PassSchemaResult policies = applyPassSchemaPolicies(pcx, source.schema, memory, Strategy::FullRefresh);
    if (!policies.paused.empty()) {
        out.paused = policies.paused;
        cancelSrc.reset();
        source.release(stop);
        merger.release(stop);
        return out;
    }
    source.leaveOut(policies.leftOut);

    m_observer.tableState(key, TableState::Running, "full refresh: copying", std::nullopt);
    const std::int64_t localStart = wallClockMs();
    auto readerPtr = source.fullRefreshReader();
    FullRefreshReader &reader = *readerPtr;
    auto snap = reader.begin();
    RefreshPosition refresh{snap.sourceNow, {}};
    // The transactions the snapshot saw, read inside it (the reader's connection, its open
    // transaction): reconciliation tells a row written after the snapshot (in flight until the
    // next pass) from drift by its xmin.
    if (source.pg)
        refresh.snapshotTxids = source.pg->exec("SELECT txid_current_snapshot()::text").text(0, 0);
    nlohmann::json position = nlohmann::json::object();
    if (const std::string remembered = memory.toJson(); !remembered.empty())
        position["columns"] = nlohmann::json::parse(remembered);
    Checkpoint cp{refresh.mergedInto(position.dump()), snap.version};

    BoundedQueue<std::string> queue(4);
    long long loaded = 0;
    std::atomic<bool> readAll{false};
    pipelined(
        queue, stop,
        [&](std::stop_token st) {
            out.rowsRead = reader.read([&](std::string_view chunk) {
                if (st.stop_requested())
                    throw Cancelled();
                if (!queue.push(std::string(chunk)))
                    throw Cancelled();
            });
            reader.finish();
            readAll = true;
        },
        [&] {
            loaded = merger->replaceAll(
                [&](const std::function<void(std::string_view)> &sink) {
                    while (auto chunk = queue.pop())
                        sink(*chunk);
                    // The queue also ends when the reader fails or is stopped: never swap in a
                    // partial table.
                    if (!readAll || stop.stop_requested())
                        throw Cancelled();
                },
                cp);
        });
    out.rowsWritten = loaded;
    out.batches = 1;
    crashPoint("batch.after_commit");
    m_observer.batchApplied(key, {loaded, loaded, true}, cp, localStart);
    readerPtr.reset();
    cancelSrc.reset(); // from here on no cancel can reach a connection given back
    source.release(stop);
    merger.release(stop);
    return out;
}

TableSync::Outcome TableSync::cursorPass(std::stop_token stop)
{
    const TableKey key = m_job.key();
    Outcome out;
    // No cancel-on-stop here: a stop ends the pass after the page in flight, which is small.
    Source source(m_job, m_pool);
    const TableSchema &schema = source.schema;
    // The reader checks the table can be read by cursor (key, cursor column) before the target
    // is touched.
    auto readerPtr = source.cursorReader(m_job.spec);
    MergeTarget mt{m_job.pipeline,   m_job.spec.table,        m_job.targetName,
                   Strategy::Cursor, softDeletes(m_job.spec), m_job.adopt};
    Target merger(m_job, mt, m_pool);

    // The source's columns against the target's, under the table's schema_changes policies; an
    // add-column backfill runs to its end before the pass reads.
    CursorState st;
    std::optional<Checkpoint> stored = checkpointBeforePrepare(*merger.merger);
    if (stored)
        st = CursorState::fromJson(stored->position);
    PassColumns memory = PassColumns::fromJson(st.columns);
    auto storeMemory = [&](const PassColumns &m, long long rows) {
        CursorState withMemory = st;
        withMemory.columns = m.toJson();
        merger->writeCheckpointInTransaction({withMemory.toJson(), stored ? stored->version : 0}, rows);
    };
    PassSchemaContext pcx{m_job,
                          m_observer,
                          *merger.merger,
                          merger.session(),
                          source.pg ? &*source.pg : nullptr,
                          [&] { return source.version(); },
                          storeMemory};
    const PassSchemaResult policies = applyPassSchemaPolicies(pcx, source.schema, memory, Strategy::Cursor);
    if (!policies.paused.empty()) {
        out.paused = policies.paused;
        source.release(stop);
        merger.release(stop);
        return out;
    }
    if (memory.fill) {
        auto fill = source.fillSource(m_job.target.kind);
        runPassColumnFill(pcx, *fill, source.schema, memory, [&] { return stop.stop_requested(); });
    }
    if (!policies.leftOut.empty()) {
        source.leaveOut(policies.leftOut);
        readerPtr = source.cursorReader(m_job.spec);
    }
    CursorReader &reader = *readerPtr;

    bool resumedPass = false;
    if (auto cp = merger->readCheckpoint()) {
        st = CursorState::fromJson(cp->position);
        resumedPass = st.inPass;
    } else if (!merger->targetEmpty()) {
        // Rows but no checkpoint (the target was filled by hand, or its checkpoint removed):
        // a direct load could collide, so re-read everything through the guarded merge.
        st.phase = CursorState::Phase::Incremental;
        m_observer.event(Level::Warn, key, "no_checkpoint",
                         "target " + merger->describeTarget() +
                             " has rows but no checkpoint: reading the whole table through the merge");
    }
    st.columns = memory.toJson(); // every checkpoint of the pass carries it
    // Another server behind the endpoint (a failover, a restore): its positions are not
    // comparable with the ones the target's rows carry, so its rows go in under a new epoch
    // (ARCHITECTURE.md P6). What the old server changed and this one never had is not in any
    // pass: reconcile finds it.
    if (const std::string identity = source.identity(); !identity.empty()) {
        if (!st.source.empty() && st.source != identity) {
            const int epoch = merger->epoch() + 1;
            if (epoch > rowversion::kMaxEpoch)
                throw Error(ErrorKind::Permanent,
                            merger->describeTarget() +
                                " has seen the most source changes its row versions can tell apart",
                            {}, "drop the target table; the next pass loads it again");
            merger->setEpoch(epoch);
            m_observer.event(Level::Warn, key, "source_changed",
                             "the source changed (" + st.source + " -> " + identity +
                                 "): its rows go in under row-version epoch " + std::to_string(epoch) +
                                 "; rows the old server changed that this one never had stay as they are until "
                                 "reconciled: driftless-cli reconcile " +
                                 m_job.pipeline + " " + m_job.spec.table.display());
        }
        st.source = identity;
    }
    const long long pageSize = m_job.spec.effectivePageSize();

    BoundedQueue<Batch> queue(2);
    pipelined(
        queue, stop,
        [&](std::stop_token stopReader) {
            std::int64_t lastVersion = 0;
            auto send = [&](Batch &&b) {
                if (!queue.push(std::move(b)))
                    throw Cancelled();
            };
            if (st.phase == CursorState::Phase::Load) {
                const std::int64_t loadLocalStart = wallClockMs();
                if (st.loadAfter.empty() && st.loadStartedAt.empty())
                    reader.beginLoad(st);
                for (;;) {
                    if (stopReader.stop_requested())
                        return;
                    Batch b;
                    if (!reader.loadChunk(st, b)) {
                        lastVersion = std::max(lastVersion, b.checkpoint.version);
                        break;
                    }
                    lastVersion = std::max(lastVersion, b.checkpoint.version);
                    b.checkpoint.position = st.toJson();
                    bool more = static_cast<long long>(b.rows.size()) >= pageSize;
                    send(std::move(b));
                    if (!more)
                        break;
                }
                reader.finishLoad(st);
                Batch fin;
                fin.checkpoint = {st.toJson(), lastVersion};
                // Rows changed during the load are picked up by the first pass (the cursor starts at
                // the load's start); freshness is claimed only once that pass is done.
                (void)loadLocalStart;
                send(std::move(fin));
            }
            const std::int64_t passLocalStart = wallClockMs();
            if (!st.inPass)
                reader.beginPass(st);
            for (;;) {
                if (stopReader.stop_requested())
                    return;
                Batch b;
                bool got = reader.passPage(st, b);
                lastVersion = std::max(lastVersion, b.checkpoint.version);
                if (!got)
                    break;
                b.checkpoint.position = st.toJson();
                bool more = static_cast<long long>(b.rows.size()) >= pageSize;
                send(std::move(b));
                if (!more)
                    break;
            }
            if (stopReader.stop_requested())
                return;
            reader.finishPass(st);
            Batch fin;
            fin.checkpoint = {st.toJson(), lastVersion};
            // A pass resumed after a crash started earlier than we know; claim freshness only for
            // passes run from start to end here.
            fin.freshAsOfMs = resumedPass ? 0 : passLocalStart;
            send(std::move(fin));
        },
        [&] {
            long long loadedRows = 0;
            while (auto b = queue.pop()) {
                if (b->directLoad)
                    m_observer.tableState(key, TableState::Backfilling, "initial load",
                                          Progress{loadedRows, schema.estimatedRows});
                // A cursor pass sees no source deletes; its deletes are rows outside the row filter
                // (which the target may hold from before they left it): kept under `ignore`.
                if (!b->directLoad && ignoresDeletes(m_job.spec))
                    dropDeletes(b->rows);
                ApplyResult r = merger->apply(*b);
                crashPoint("batch.after_commit");
                if (b->directLoad)
                    loadedRows += r.rowsInBatch;
                out.rowsRead += r.rowsInBatch;
                out.rowsWritten += r.rowsWritten;
                ++out.batches;
                std::optional<std::int64_t> fresh;
                if (b->freshAsOfMs)
                    fresh = b->freshAsOfMs;
                m_observer.batchApplied(key, r, b->checkpoint, fresh);
            }
        });
    readerPtr.reset();
    source.release(stop);
    merger.release(stop);
    return out;
}

} // namespace driftless::core
