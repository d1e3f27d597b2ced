// MysqlCdcPipeline's stream: the binlog read on a thread of its own (BinlogReader), its events
// gathered into batches of whole transactions and applied in one target transaction each
// (CdcBatchTransaction), with the steps the CDC skeleton names (design note ENGINE-WINGS, "the
// skeleton"): start reading, adapt a table to the layout an event shows, complete its rows, stage
// and commit a batch with every streaming table's checkpoint, and the work between transactions
// (a re-snapshotted table, a column backfill step, pauses and resumes).
#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/mysql/mysqlcdctable.h"
#include "core/engine/cdc/tableapply.h"
#include "core/engine/endpoints/binlogidentity.h"

#include "core/base/clock.h"
#include "core/db/mysqlcatalog.h"
#include "core/db/mysqlconnection.h"
#include "core/db/mysqlreplication.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/endpoints/mysqlpreflight.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/rows/generatedvalues.h"
#include "core/engine/rows/rowfilter.h"
#include "core/engine/twoway/twoway.h"
#include "core/model/error.h"
#include "core/model/rowversion.h"
#include "core/readers/binlog/binlogdecoder.h"
#include "core/readers/binlog/binlogrows.h"
#include "core/readers/binlog/gtidstate.h"
#include "core/readers/binlogreader.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <regex>
#include <set>

namespace driftless::core {

namespace {

constexpr auto kBinlogIdleSave = std::chrono::seconds(5);
/// Rows a batch gathers before it is applied (a bigger transaction is staged in pieces).
constexpr long long kBatchRows = 20'000;
/// How far the binlog is read ahead of the apply (BinlogReader): a few batches of rows.
constexpr size_t kBinlogReadAhead = 8u << 20;
/// How long a batch gathers transactions before it is applied.
constexpr auto kBatchAge = std::chrono::milliseconds(100);

std::int64_t binlogVersion(const binlog::Position &p)
{
    return binlog::positionVersion(p);
}

/// The table a DDL statement names, when it is one that changes or removes a table.
struct BinlogDdl {
    std::string verb; ///< TRUNCATE, ALTER, DROP, RENAME
    TableRef table;
};
std::optional<BinlogDdl> parseBinlogDdl(const std::string &sql, const std::string &defaultSchema)
{
    static const std::regex re(
        R"(^\s*(?:/\*.*?\*/\s*)*(TRUNCATE|ALTER|DROP|RENAME)\s+(?:TABLE\s+)?(?:IF\s+EXISTS\s+)?(?:`([^`]+)`|(\w+))(?:\.(?:`([^`]+)`|(\w+)))?)",
        std::regex::icase);
    std::smatch m;
    if (!std::regex_search(sql, m, re))
        return std::nullopt;
    BinlogDdl d;
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

bool sameColumnTypes(const std::vector<binlog::Column> &a, const std::vector<binlog::Column> &b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto &x, const auto &y) {
        return x.name == y.name && x.type == y.type && x.isUnsigned == y.isUnsigned && x.maxLength == y.maxLength &&
               x.precision == y.precision && x.scale == y.scale && x.collation == y.collation;
    });
}

} // namespace

/// One run of the stream, from its start to a stop, the end of a `run --once` pass, or a resume
/// (which returns: the pipeline runs again from the resumed table's position).
class MysqlCdcPipeline::Stream {
public:
    /// One batch in the making: whole transactions, per table, in binlog order.
    struct Batch {
        struct Pending {
            RowSet rows;
            long long changes = 0;
            bool truncate = false; ///< a TRUNCATE before the rows
        };
        std::map<MysqlCdcTable *, Pending> tables;
        long long rows = 0;
        int transactions = 0;
        binlog::Position end;     ///< end of the batch's last transaction
        std::string gtid;         ///< its GTID, when the stream has them
        std::int64_t version = 0; ///< its version
        std::int64_t commitSeconds = 0;
        std::chrono::steady_clock::time_point started;

        bool empty() const { return transactions == 0; }
    };

    Stream(MysqlCdcPipeline &pipeline, std::stop_token stop, const Options &options)
        : p(pipeline), m_stop(stop), m_options(options), m_src(pipeline.m_jobs.front().source),
          m_twoWay(pipeline.m_jobs.front().twoWay)
    {
    }
    void run();

private:
    /// The oldest position of a streaming table, where reading starts. Throws when every table
    /// is stopped or paused.
    binlog::Position startPosition();
    /// Connects as a replica and asks for the binlog from the start (a GTID state, on another
    /// server), with the errors that need a DBA translated.
    void startReading();
    /// A purged position is not ours to fix silently: says exactly how to start over.
    void withResnapshot(const Error &e) const;
    /// Another server than the checkpoints' cannot continue from the stored GTID state: a
    /// recovery when allowed (throws RecoverByLoading), else a stop naming both servers.
    [[noreturn]] void noResume(const Error &e);
    /// The source's GTID state where the stream starts, kept with every checkpoint.
    void readGtidState();
    /// The stream's target session and mergers (a new epoch each, when resumed on another server).
    void openTarget();

    /// Reads and applies events until the loop ends; false: a resume asked for a restart.
    bool loop();
    void onRows(const binlog::Rows &rows);
    void onQuery(const binlog::Query &query);
    void endTransaction(const BinlogEvent &item);
    /// A heartbeat between transactions: applies what is pending, says the tables are fresh, and
    /// saves an idle position now and then. False when a `run --once` pass is done.
    bool onIdle();
    /// Between transactions: a re-snapshotted table restarts the pipeline (throws CdcRestart), a
    /// column backfill steps, pauses and resumes are applied. False: a resume, run() returns.
    bool betweenTransactions();

    /// For each schema column of `t`, its index in the table map `m` (-1: not there); adapts the
    /// table and its target to a new layout (the add_column, drop_column and type_change
    /// policies). Null when that paused the table.
    const std::vector<int> *layoutFor(MysqlCdcTable &t, const binlog::TableMap &m);
    /// Images without a generated column's value (a MINIMAL one leaves VIRTUAL columns out) are
    /// completed from the source.
    void completeGenerated(MysqlCdcTable &t, RowSet &rows);
    MysqlConnection &lookup();
    /// Applies the staged rows of the batch in its target transaction (opened if need be).
    void stage();
    /// Stages what is pending and commits the batch with every streaming table's checkpoint.
    void flush();
    bool applies(MysqlCdcTable &t) const
    {
        return !t.paused && t.streaming() && m_txnVersion >= binlogVersion(t.streamPosition());
    }
    /// A value the target cannot hold (a zero date) stops only its table; what the table has
    /// staged of this transaction goes with it (it is loaded again anyway).
    bool valid(MysqlCdcTable &t, const binlog::Rows &r);
    /// `e`, met with `t`'s rows: stops `t` alone and returns true, or false (the pipeline's).
    bool stopAlone(MysqlCdcTable &t, const Error &e);
    void wireCascades();

    MysqlCdcPipeline &p;
    std::stop_token m_stop;
    const Options &m_options;
    const Endpoint &m_src;
    const std::optional<TwoWayRole> &m_twoWay;

    std::map<TableRef, MysqlCdcTable *> m_byRef;
    binlog::Position m_start;
    MysqlReplicationOptions m_ro;
    std::optional<MysqlReplicationConnection> m_repl;
    binlog::Decoder m_decoder;
    std::optional<binlog::Position> m_stopAt;
    std::optional<BinlogReader> m_reader;
    /// Where the stream stands: the end of the last event read.
    binlog::Position m_at;
    /// The source's GTID state where the stream stands (docs/failover.md).
    binlog::GtidState m_gtids;
    /// Resumed by GTID on another server: its positions are known from its first event on. Until
    /// a transaction of it is applied, nothing is stored (an idle save would record a place the
    /// server skipped to, not one it sent), and the tables' positions mean "from the start".
    bool m_rebasing = false;

    std::unique_ptr<TargetSession> m_session;
    std::map<MysqlCdcTable *, std::unique_ptr<Merger>> m_mergers;
    /// A target transaction stays open while a source transaction too big for one batch is
    /// staged in pieces; it commits with the transaction's end.
    std::optional<CdcBatchTransaction> m_txn;
    binlog::Position m_txnStart; ///< where the current source transaction starts, and its version
    std::int64_t m_txnVersion = 0;
    bool m_inTxn = false;
    Batch m_batch;
    binlog::RowImages m_images;
    std::vector<std::string> m_names; ///< the column names of the table map at hand

    std::optional<MysqlConnection> m_lookup; ///< the source, opened when first needed
    std::set<MysqlCdcTable *> m_toldRefetch; ///< said once per table and run
    CascadeContext m_cascades;

    std::chrono::steady_clock::time_point m_lastIdleSave = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point m_lastFresh = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    std::chrono::steady_clock::time_point m_lastPauseCheck = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point m_lastStopCheck = std::chrono::steady_clock::now();
    binlog::Position m_lastSaved;
};

void MysqlCdcPipeline::stream(std::stop_token stop, Options options)
{
    Stream(*this, stop, options).run();
}

binlog::Position MysqlCdcPipeline::Stream::startPosition()
{
    std::optional<binlog::Position> start;
    for (auto &t : p.m_tables) {
        m_byRef[t->job.spec.table] = t.get();
        if (t->paused || !t->streaming())
            continue;
        auto at = t->streamPosition();
        if (!start || binlogVersion(at) < binlogVersion(*start))
            start = at;
    }
    if (start)
        return *start;
    for (auto &t : p.m_tables)
        if (!t->stopped.empty())
            throw Error(ErrorKind::Permanent, "every table of pipeline " + p.m_pipeline + " is stopped or paused; " +
                                                  t->job.spec.table.display() + " was " + t->stopped);
    throw Error(ErrorKind::Permanent, "every table of pipeline " + p.m_pipeline + " is paused", {},
                "resume a table: driftless-cli resume " + p.m_pipeline + " TABLE");
}

void MysqlCdcPipeline::Stream::withResnapshot(const Error &e) const
{
    const std::string what = e.what();
    if (what.find("purged") == std::string::npos)
        return;
    throw Error(ErrorKind::Permanent, what, e.code(),
                "re-snapshot the pipeline: driftless-cli resnapshot " + p.m_pipeline +
                    "; and keep binlogs longer than the pipeline may be stopped (binlog_expire_logs_seconds)");
}

void MysqlCdcPipeline::Stream::noResume(const Error &e)
{
    const Resume &resume = *p.m_resume;
    if (p.recoveryAllowed()) {
        // Brought back by loading again, comparing first: run() loads the streaming tables from
        // the new server and streams from there.
        p.reloadForRecovery(resume.description + ". It cannot continue from GTID " + resume.gtid + " (" + e.what() +
                            ")");
        throw RecoverByLoading{};
    }
    throw SourceChangedError(
        resume.description + ". It cannot continue from GTID " + resume.gtid +
            ", where the target stands: " + e.what() +
            " (the target holds changes this server never had, which died with the old one, or the server is not a "
            "replica of it); nothing was read from it",
        e.code(),
        "point the endpoint back at server_id " + std::to_string(resume.was) +
            ", or bring the target back to it: driftless-cli recover " + p.m_pipeline +
            " (it compares every table with this server and copies what differs), or load it again: driftless-cli "
            "resnapshot " +
            p.m_pipeline);
}

void MysqlCdcPipeline::Stream::startReading()
{
    m_ro = binlogReaderOptions(m_src, binlogServerIdFor(p.m_pipeline));
    m_repl.emplace(m_ro);
    m_ro.password.clear();
    for (const auto &[id, cs] : m_repl->collationCharsets())
        m_decoder.setCollationCharset(id, cs);
    // The tables whose rows are decoded: ours that are not paused, and the parents whose deletes
    // cascade into ours. The filter runs on the reader thread, so it reads only this set, fixed
    // for the stream: a table paused while streaming is still decoded (and skipped when applied)
    // until the stream starts again, which leaves it out (a table whose rows cannot be decoded is
    // paused to let the others go on).
    std::set<TableRef> decoded;
    for (const auto &[ref, t] : m_byRef)
        if (!t->paused)
            decoded.insert(ref);
    for (const auto &[parent, cascades] : p.m_cascades)
        decoded.insert(parent);
    m_decoder.setTableFilter([decoded = std::move(decoded)](const binlog::TableMap &m) {
        return decoded.count(TableRef{m.schema, m.table}) > 0;
    });
    if (m_options.once)
        m_stopAt = m_repl->currentPosition();
    try {
        if (p.m_resume)
            m_repl->start({{}, p.m_resume->gtid});
        else
            m_repl->start({m_start, {}});
    } catch (const Error &e) {
        if (p.m_resume && !e.isTransient())
            noResume(e);
        withResnapshot(e);
        throw;
    }
}

void MysqlCdcPipeline::Stream::readGtidState()
{
    std::optional<binlog::GtidState> known;
    if (p.m_resume) {
        known = binlog::GtidState::parse(p.m_resume->gtid);
    } else {
        for (auto &t : p.m_tables)
            if (!t->paused && t->streaming() && t->streamPosition() == m_start && t->position->serverId)
                known = binlog::GtidState::parse(t->position->gtid);
        if (!known || known->empty()) { // recorded before the state was kept
            MysqlConnection c = connectMysql(m_src);
            known = binlog::GtidState::parse(gtidStateAt(c, m_start));
        }
    }
    if (known)
        m_gtids = *known;
}

void MysqlCdcPipeline::Stream::openTarget()
{
    m_session = createTargetSession(p.m_jobs.front().target, "driftless " + p.m_pipeline);
    if (m_twoWay)
        markOwnWrites(*m_session, m_twoWay->applyOrigin);
    for (auto &t : p.m_tables) {
        auto &merger = m_mergers[t.get()];
        merger = withColumnMapping(m_session->merger({p.m_pipeline, t->job.spec.table, t->job.targetName, Strategy::Cdc,
                                                      softDeletes(t->job.spec), t->job.adopt}),
                                   t->job.spec);
        merger->prepare(t->source.schema);
        if (p.m_resume && !t->paused && t->streaming()) {
            // Another server's positions: a new epoch, above every version the old one wrote.
            const int epoch = merger->epoch() + 1;
            if (epoch > rowversion::kMaxEpoch)
                throw Error(ErrorKind::Permanent,
                            p.m_resume->description + "; " + t->job.spec.table.display() +
                                " has seen the most source changes its row versions can tell apart",
                            {}, "drop the target table, then load it again: driftless-cli resnapshot " + p.m_pipeline);
            merger->setEpoch(epoch);
            p.m_observer.event(Level::Warn, t->key, "source_changed",
                               p.m_resume->description + ": resuming from GTID " + p.m_resume->gtid +
                                   ", which the new server holds; row versions start epoch " + std::to_string(epoch));
        }
        if (!t->paused)
            p.m_observer.tableState(t->key, TableState::Streaming, "", std::nullopt);
    }
    m_txn.emplace(*m_session, p.m_jobs.front().target.kind, p.m_observer);
}

void MysqlCdcPipeline::Stream::run()
{
    m_start = startPosition();
    startReading();
    std::stop_callback onStop(m_stop, [this] { m_repl->stop(); });
    m_at = m_decoder.position();
    // The server's next events travel and are decoded while these are merged (docs/cdc.md,
    // "MariaDB"). The decoder is the reader thread's from here on.
    m_reader.emplace(*m_repl, m_decoder, kBinlogReadAhead);
    readGtidState();
    m_rebasing = p.m_resume.has_value();
    openTarget();
    p.m_observer.event(
        Level::Info, p.m_tables.front()->key, "stream_started",
        "streaming the binlog from " +
            (p.m_resume ? "GTID " + p.m_resume->gtid : m_start.file + ":" + std::to_string(m_start.offset)) +
            " as server_id " + std::to_string(m_ro.serverId));
    m_lastSaved = m_start;
    wireCascades();
    if (!loop())
        return; // a resume: the pipeline runs again from the resumed table's position
    if (!m_inTxn)
        flush();
    // `run --once`: what it streamed is applied; the backfills it started finish too.
    if (m_options.once && !m_stop.stop_requested() && !m_txn->open())
        while (MysqlCdcTable *due = p.columnFillDue(true))
            p.addColumnStep(*due, lookup(), *m_mergers[due], *m_session, true);
    m_txn->rollback(); // a transaction cut short by a stop: nothing of it lands
}

bool MysqlCdcPipeline::Stream::loop()
{
    while (!m_stop.stop_requested()) {
        BinlogEvent *item = nullptr;
        try {
            item = m_reader->next();
        } catch (const Error &e) {
            if (m_rebasing && !e.isTransient())
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
        m_at = item->end;
        if (m_rebasing) {
            if (const auto *rotate = std::get_if<binlog::Rotate>(&ev.body)) {
                for (auto &t : p.m_tables)
                    if (!t->paused && t->streaming()) {
                        t->position->at = {rotate->next.file, 0};
                        t->position->serverId = p.m_serverId;
                        t->position->gtid = m_gtids.text();
                    }
                m_lastSaved = {rotate->next.file, 0};
            }
        }
        const auto *rows = std::get_if<binlog::Rows>(&ev.body);
        const auto *query = std::get_if<binlog::Query>(&ev.body);
        const bool begins = std::holds_alternative<binlog::Gtid>(ev.body) ||
                            std::holds_alternative<binlog::MysqlGtid>(ev.body) || (query && query->isBegin()) ||
                            std::holds_alternative<binlog::TableMap>(ev.body) || rows;
        if (m_twoWay && rows && !rows->skipped) {
            auto it = m_byRef.find(TableRef{rows->table->schema, rows->table->table});
            const auto n = static_cast<long long>(rows->rows.size());
            if (it != m_byRef.end() && ev.header.skipReplication() && !it->second->paused && it->second->streaming())
                m_twoWay->counters->droppedOwn += n;
            else if (it != m_byRef.end() && !ev.header.skipReplication() && applies(*it->second))
                m_twoWay->counters->captured += n; // its table map opened the transaction
        }
        // Two-way: what the other direction applied here carries skip_replication (every event
        // of its session: GTID, rows, COMMIT); the server sends it anyway. Dropped whole, not even
        // counted as a transaction, so the directions' own writes (checkpoints too) never bounce.
        // The position moves on with the next transaction of ours, or the idle save.
        if (m_twoWay && ev.header.skipReplication())
            continue;
        if (!m_inTxn && (begins || (query && !query->isCommit()))) {
            m_inTxn = true;
            m_txnStart = before;
            m_txnVersion = binlogVersion(m_txnStart);
            if (m_batch.empty() && m_batch.tables.empty())
                m_batch.started = std::chrono::steady_clock::now();
        }
        if (rows && !rows->skipped)
            onRows(*rows);
        if (query && !query->isBegin() && !query->isCommit() && !query->isRollback())
            onQuery(*query);
        if (ev.endsTransaction && m_inTxn)
            endTransaction(*item);
        if (std::holds_alternative<binlog::Heartbeat>(ev.body) && !m_inTxn && !onIdle())
            break;
        if (m_stopAt && !m_inTxn && !m_at.file.empty() && binlogVersion(m_at) >= binlogVersion(*m_stopAt)) {
            flush();
            break;
        }
        if (!m_inTxn && !betweenTransactions())
            return false;
    }
    return true;
}

void MysqlCdcPipeline::Stream::onRows(const binlog::Rows &rows)
{
    auto it = m_byRef.find(TableRef{rows.table->schema, rows.table->table});
    if (it != m_byRef.end() && applies(*it->second) && valid(*it->second, rows)) {
        MysqlCdcTable &t = *it->second;
        if (const std::vector<int> *layout = layoutFor(t, *rows.table)) {
            auto &pending = m_batch.tables[&t];
            const long long n = m_images.append(t.source.schema, *layout, rows, m_txnVersion,
                                                static_cast<bool>(m_twoWay), pending.rows);
            pending.changes += n;
            m_batch.rows += n;
            // A big transaction: stage what it has so far; memory stays bounded.
            if (m_batch.rows >= kBatchRows)
                stage();
        }
    }
    // What the parent's change did to child rows without a word in the binlog.
    const TableRef parent{rows.table->schema, rows.table->table};
    if (m_inTxn && p.cascadesFrom(parent))
        p.cascade(parent, p.parentChanges(rows), m_txnVersion, m_cascades, 0);
}

void MysqlCdcPipeline::Stream::onQuery(const binlog::Query &query)
{
    auto ddl = parseBinlogDdl(query.sql, query.schema);
    if (!ddl)
        return;
    auto it = m_byRef.find(ddl->table);
    if (it == m_byRef.end() || !applies(*it->second))
        return;
    MysqlCdcTable &t = *it->second;
    if (ddl->verb == "TRUNCATE") {
        // Rows staged before the TRUNCATE go first; the TRUNCATE starts a batch.
        if (!m_batch.tables.empty() && m_batch.transactions > 0)
            flush();
        m_batch.tables[&t].truncate = true;
        m_batch.tables[&t].rows.clear();
    } else if (ddl->verb == "DROP" || ddl->verb == "RENAME") {
        t.paused = true;
        const std::string msg = "the source ran `" + query.sql.substr(0, 200) +
                                "`; the table is paused; re-snapshot it once the source has it again: "
                                "driftless-cli resnapshot " +
                                p.m_pipeline + " " + t.job.spec.table.display();
        p.m_observer.tableState(t.key, TableState::Paused, msg, std::nullopt);
        p.m_observer.event(Level::Error, t.key, "schema_change", msg);
    } else if (ddl->verb == "ALTER") {
        // The next TABLE_MAP shows the new layout (an added column is added to the target then);
        // rows staged with the old one go first. The DDL is a group of its own, so the batch
        // holds only whole transactions here.
        flush();
        t.layout.clear();
    }
}

void MysqlCdcPipeline::Stream::endTransaction(const BinlogEvent &item)
{
    m_inTxn = false;
    ++m_batch.transactions;
    m_batch.end = m_at;
    if (item.committedGtid)
        m_gtids.apply(*item.committedGtid);
    m_batch.gtid = m_gtids.text();
    m_batch.version = m_txnVersion;
    m_batch.commitSeconds = item.event.header.timestamp;
    if (m_batch.rows >= kBatchRows || std::chrono::steady_clock::now() - m_batch.started >= kBatchAge) {
        flush();
        m_lastSaved = m_at;
    }
}

bool MysqlCdcPipeline::Stream::onIdle()
{
    // Idle: apply what is pending, then the target is as fresh as the source now.
    if (!m_batch.empty()) {
        flush();
        m_lastSaved = m_at;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - m_lastFresh >= std::chrono::seconds(1)) {
        m_lastFresh = now;
        for (auto &t : p.m_tables)
            if (!t->paused && t->streaming())
                p.m_observer.batchApplied(t->key, {}, {t->position->toJson(), t->version}, wallClockMs());
    }
    // Keep positions near the binlog's end while our tables see no writes, so a restart does not
    // start in a file the server has purged since.
    const binlog::Position here = m_at;
    if (!m_rebasing && now - m_lastIdleSave >= kBinlogIdleSave && !here.file.empty() &&
        binlogVersion(here) > binlogVersion(m_lastSaved)) {
        m_lastIdleSave = now;
        m_batch.end = here;
        m_batch.version = binlogVersion(here);
        m_batch.transactions = 1;
        m_batch.commitSeconds = wallClockMs() / 1000;
        flush();
        m_lastSaved = here;
    }
    return !(m_stopAt && binlogVersion(here) >= binlogVersion(*m_stopAt));
}

bool MysqlCdcPipeline::Stream::betweenTransactions()
{
    const auto now = std::chrono::steady_clock::now();
    if (now - m_lastStopCheck >= std::chrono::seconds(2)) {
        m_lastStopCheck = now;
        // A stopped table a DBA re-snapshotted has no checkpoint any more: start again to load it.
        for (auto &t : p.m_tables) {
            if (t->stopped.empty() || !t->position || m_mergers[t.get()]->readCheckpoint())
                continue;
            flush();
            throw CdcRestart{t->job.spec.table.display() + " was re-snapshotted: the pipeline starts again to load it"};
        }
    }
    // Column backfills run between two batches: the stream waits at most one chunk.
    if (!m_txn->open() && m_batch.empty() && m_batch.tables.empty())
        if (MysqlCdcTable *due = p.columnFillDue(false))
            p.addColumnStep(*due, lookup(), *m_mergers[due], *m_session, false);
    if (!m_options.pauses || now - m_lastPauseCheck < std::chrono::milliseconds(250))
        return true;
    m_lastPauseCheck = now;
    // A pause or resume asked for while streaming: a pause stops applying at once; a resume
    // restarts the pipeline so the stream reads from the table's position again.
    for (auto &t : p.m_tables) {
        const CdcTable::PauseTurn turn = t->pauseTurn(t->pauseWanted(m_options.pauses.get()));
        if (turn == CdcTable::PauseTurn::Pause) {
            flush();
            t->paused = t->userPaused = true;
            p.m_observer.tableState(t->key, TableState::Paused, kBinlogPausedMessage, std::nullopt);
        } else if (turn == CdcTable::PauseTurn::Resume && t->stopped.empty() && t->streaming()) {
            flush();
            // Returning restarts the pipeline (the scheduler runs it again at once).
            p.m_observer.event(Level::Info, t->key, "resumed",
                               "resumed: reading its binlog changes from " + t->streamPosition().file + ":" +
                                   std::to_string(t->streamPosition().offset));
            return false;
        }
    }
    return true;
}

const std::vector<int> *MysqlCdcPipeline::Stream::layoutFor(MysqlCdcTable &t, const binlog::TableMap &m)
{
    m_names.clear();
    for (const auto &col : m.columns)
        m_names.push_back(col.name);
    if (!t.layout.empty() && m_names == t.mapNames && sameColumnTypes(t.mapColumns, m.columns))
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
    Merger &merger = *m_mergers[&t];
    auto beginBatch = [this] { m_txn->begin(); };
    if (extra) {
        // A column the source has now and the target lacks: read the table again and add it.
        MysqlConnection c = connectMysql(t.job.source);
        auto fresh = mysqlcatalog::describeTable(c, t.job.spec.table, t.job.spec.key);
        auto again = indexIn(fresh);
        if (again.second) {
            std::string lost;
            for (const auto &col : m.columns)
                if (fresh.schema.columnIndex(col.name) < 0)
                    lost += (lost.empty() ? "" : ", ") + col.name;
            t.paused = true;
            const std::string msg = "the binlog has column(s) " + lost + " of " + t.job.spec.table.display() +
                                    " that the source table no longer has (dropped or renamed); the table is "
                                    "paused; adapt the target, then re-snapshot: driftless-cli resnapshot " +
                                    p.m_pipeline + " " + t.job.spec.table.display();
            p.m_observer.tableState(t.key, TableState::Paused, msg, std::nullopt);
            p.m_observer.event(Level::Error, t.key, "schema_change", msg);
            return nullptr;
        }
        // Pending rows were flushed at the ALTER (they have the old layout).
        if (!p.adaptToAddedColumns(t, std::move(fresh), m_names, merger, m_txnStart, m_txnVersion, beginBatch))
            return nullptr;
        map = indexIn(t.source).first;
    } else {
        // Columns the map lacks, or shows with another type than the last map did: dropped or
        // retyped on the source (or, lacking, added after this event was written).
        std::vector<std::string> gone, retyped;
        for (size_t i = 0; i < map.size(); ++i)
            if (map[i] < 0)
                gone.push_back(t.source.columns[i].name);
        for (const auto &now : m.columns)
            for (const auto &was : t.mapColumns)
                if (was.name == now.name && !sameColumnTypes({was}, {now}))
                    retyped.push_back(now.name);
        if (!gone.empty() || !retyped.empty()) {
            if (!p.adaptToChangedColumns(t, m.columns, gone, retyped, merger, beginBatch))
                return nullptr;
            map = indexIn(t.source).first;
        }
    }
    t.mapNames = m_names;
    t.mapColumns = m.columns;
    t.layout = std::move(map);
    return &t.layout;
}

MysqlConnection &MysqlCdcPipeline::Stream::lookup()
{
    if (!m_lookup)
        m_lookup.emplace(connectMysql(m_src));
    return *m_lookup;
}

void MysqlCdcPipeline::Stream::completeGenerated(MysqlCdcTable &t, RowSet &rows)
{
    if (!rows.hasUnchanged() ||
        std::none_of(t.source.columns.begin(), t.source.columns.end(), [](const auto &c) { return c.generated; }))
        return;
    auto [read, gone] = completeGeneratedFromMysql(lookup(), t.source, rows);
    if (read + gone > 0 && m_toldRefetch.insert(&t).second)
        p.m_observer.event(Level::Info, t.key, "refetched",
                           std::to_string(read) +
                               " rows whose binlog image lacked a generated column (binlog_row_image MINIMAL) read "
                               "from the source; said once per run" +
                               (gone ? " (" + std::to_string(gone) + " already deleted there)" : std::string()));
}

void MysqlCdcPipeline::Stream::stage()
{
    m_txn->begin();
    try {
        for (auto &[tp, pending] : m_batch.tables) {
            if (tp->paused)
                continue;
            MysqlCdcTable &t = *tp;
            Merger &m = *m_mergers[tp];
            TableApplySteps steps;
            steps.completeInLayout = [&](RowSet &rows) { completeGenerated(t, rows); };
            steps.foldKey = &t.source.schema.primaryKey;
            steps.resolveConflicts = [&](RowSet &rows) {
                const size_t before = rows.size();
                p.resolveTwoWayConflicts(t, *m_session, rows);
                return static_cast<long long>(before - rows.size());
            };
            steps.filter = [&](RowSet &rows) { applyRowFilter(lookup(), t.source, *t.job.spec.where, rows); };
            steps.stop = [&](const Error &e) { p.stopTable(t, e, m, *m_session, false); };
            m_txn->apply(t, m, pending.truncate, pending.rows, pending.changes, steps);
            pending = Batch::Pending{};
        }
    } catch (const CdcRestart &) {
        throw;
    } catch (...) {
        m_txn->rollback();
        throw;
    }
    m_batch.rows = 0;
}

void MysqlCdcPipeline::Stream::flush()
{
    if (m_batch.empty())
        return;
    stage();
    BinlogCdcPosition pos;
    pos.at = m_batch.end;
    pos.gtid = m_batch.gtid;
    pos.serverId = p.m_serverId;
    const std::int64_t end = binlogVersion(m_batch.end);
    // Every streaming table's checkpoint moves to the batch's end, changed or not: a restart
    // never re-reads what was applied (or skipped as not ours).
    std::vector<BatchCheckpoint> moved;
    for (auto &t : p.m_tables)
        if (!t->paused && t->streaming() && binlogVersion(t->streamPosition()) < end)
            moved.push_back(
                {t.get(), m_mergers[t.get()].get(), {positionWithProgress(*t, pos).toJson(), m_batch.version}});
    BatchReport report;
    report.freshMs = m_batch.commitSeconds * 1000;
    report.twoWay = m_twoWay ? m_twoWay->counters.get() : nullptr;
    report.partialWhat = "values the binlog did not carry";
    m_txn->commitBatch(moved, report, [&] {
        m_rebasing = false; // the new server's positions are stored from here on
        for (const BatchCheckpoint &m : moved) {
            auto &t = static_cast<MysqlCdcTable &>(*m.table);
            t.position = positionWithProgress(t, pos);
            t.version = m_batch.version;
        }
    });
    m_batch = Batch{};
}

bool MysqlCdcPipeline::Stream::stopAlone(MysqlCdcTable &t, const Error &e)
{
    if (!stopsOnlyTheTable(e, p.m_jobs.front().target.kind))
        return false;
    m_batch.tables.erase(&t);
    p.stopTable(t, e, *m_mergers[&t], *m_session, m_txn->open());
    return true;
}

bool MysqlCdcPipeline::Stream::valid(MysqlCdcTable &t, const binlog::Rows &r)
{
    try {
        r.throwIfInvalid();
        return true;
    } catch (const Error &e) {
        if (!stopAlone(t, e))
            throw;
        return false;
    }
}

void MysqlCdcPipeline::Stream::wireCascades()
{
    m_cascades.applies = [this](MysqlCdcTable &t) { return applies(t); };
    m_cascades.stagePending = [this] {
        if (std::any_of(m_batch.tables.begin(), m_batch.tables.end(),
                        [](const auto &e) { return !e.second.rows.empty() || e.second.truncate; }))
            stage();
    };
    m_cascades.mergerOf = [this](MysqlCdcTable &t) -> Merger & { return *m_mergers[&t]; };
    m_cascades.pending = [this](MysqlCdcTable &t) -> RowSet & { return m_batch.tables[&t].rows; };
    m_cascades.counted = [this](MysqlCdcTable &t, long long n) {
        m_batch.tables[&t].changes += n;
        m_batch.rows += n;
    };
    m_cascades.stopChild = [this](MysqlCdcTable &t, const Error &e) { return stopAlone(t, e); };
}

} // namespace driftless::core
