#pragma once

#include "core/db/mysqlcatalog.h"
#include "core/db/mysqlreplication.h"
#include "core/engine/cdc/cdcoutcome.h"
#include "core/engine/jobs/observer.h"
#include "core/engine/sync/tablesync.h"
#include "core/mergers/merger.h"
#include "core/readers/binlog/binlogdecoder.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <vector>

namespace driftless::core {

struct MysqlCdcTable;

/// Change data capture for the CDC tables of one pipeline from a MariaDB (or MySQL) source: an
/// initial load in primary-key chunks, then the binlog, read over a replication connection
/// (MysqlReplicationConnection) and decoded by our own decoder (binlog::Decoder), applied in
/// micro-batches of whole transactions.
///
/// The promises, and how they are kept:
/// - P1 no loss: a batch's changes to every table and every table's checkpoint (binlog file,
///   offset and GTID at the end of the batch's last transaction) commit in one target
///   transaction. The binlog is not acknowledged to the server (a replica holds nothing there):
///   retention is the server's, and the doctor warns when it is short.
/// - P2/P3: a change's version is the binlog position where its transaction starts (2^52 + file
///   sequence × 2^32 + offset, docs/type-mapping.md), so later transactions always win; batches
///   hold whole transactions in binlog (= commit) order; a restart skips transactions a table
///   already has; the guarded merge makes any replay harmless.
/// - P4 fail closed: purged binlog (re-snapshot offered), a second reader with the same
///   server_id, binlog settings that would lose data (not ROW, not FULL row image or metadata):
///   the pipeline stops with the reason and what to do. A column added on the source is added to
///   the target; a dropped or renamed column, or a table dropped or renamed, pauses the table
///   with the reason.
///
/// Initial load: each chunk is read in its own consistent snapshot whose exact binlog position
/// MariaDB reports; the rows carry that position as version and the stream starts at the first
/// chunk's position. A change replayed from before a chunk's snapshot is older than the rows the
/// chunk copied and the guard refuses it; a later one wins. A load interrupted by a crash goes
/// on at its next chunk.
///
/// Pause: a paused table's changes are not applied and its position stops; the stream goes on
/// for the others. On Resume run() returns; run again, it reads from the paused table's
/// position (the binlog must still hold it, else the purge is reported and a re-snapshot
/// offered), skipping for the other tables what they already have.
class MysqlCdcPipeline {
public:
    /// `jobs` are the pipeline's CDC tables (same source and target).
    MysqlCdcPipeline(std::vector<TableJob> jobs, EngineObserver &observer);
    ~MysqlCdcPipeline();

    using Options = CdcRunOptions;
    /// Runs until stopped (or caught up, with `once`), or returns early when a paused table was
    /// resumed (run it again: the stream then starts from that table's position). Throws Error.
    void run(std::stop_token stop, Options options);
    /// The tables an error stopped (P4), this run or before it, while the others streamed on.
    std::vector<StoppedTable> stoppedTables() const;

    /// What a foreign key's ON DELETE / ON UPDATE rule does to the child's rows.
    enum class CascadeAction { None, Cascade, SetNull };

private:
    using Table = MysqlCdcTable;
    /// One run of the binlog stream (mysqlcdcstream.cpp).
    class Stream;
    void prepareTables();
    /// What a table's initial load reads (tableload.h does the rest).
    class LoadSource;
    /// Loads `t` (stopped alone, through `runSession`, by an error of its own met writing it).
    void load(Table &t, TargetSession &runSession, std::stop_token stop);
    /// `e`, met loading `t`, is the table's alone: its position goes back to its last stored
    /// chunk, and it stops there (stopTable, through `runSession`).
    void stopLoad(Table &t, const Error &e, TargetSession &runSession);
    void stream(std::stop_token stop, Options options);
    /// `e`, met loading or applying `t`, is the table's alone: stops it and records the stop in
    /// its checkpoint through `merger` (in the transaction `session` has open when `inTransaction`,
    /// else in one of its own); the others go on.
    void stopTable(Table &t, const Error &e, Merger &merger, TargetSession &session, bool inTransaction);

    // Schema changes (mysqlcdcschema.cpp, docs/schema-changes.md).
    /// Pauses `t` for a schema change: `why`, then what to do (`fix`), as state and event.
    void pauseForSchema(Table &t, const std::string &why, const std::string &fix);
    std::string resnapshotCommand(const Table &t) const;
    /// Before a streaming table starts: source columns at the end that the target lacks are
    /// taken out of its description, so the first binlog event carrying them applies their
    /// `add_column` policy (and gives the backfill its version).
    void holdBackAddedColumns(Table &t);
    /// A TABLE_MAP of `t` has columns its description lacks; `fresh` is the source's description
    /// now. Applies the `add_column` policy (or pauses a possible rename: a column gone and one
    /// come at once). `at`/`since`: where the event's transaction starts, and its version.
    /// `beginBatch` opens the batch's target transaction (the column is added in it where the
    /// target's DDL is transactional). Returns false when the table was paused.
    bool adaptToAddedColumns(Table &t, mysqlcatalog::MysqlTable fresh, const std::vector<std::string> &mapNames,
                             Merger &merger, const binlog::Position &at, std::int64_t since,
                             const std::function<void()> &beginBatch);
    /// A TABLE_MAP of `t` (its columns `map`) lacks columns its description has (`gone`) or shows
    /// columns with another type than the last one (`retyped`): describes the source again and
    /// applies the `drop_column` and `type_change` policies (mysqlcdccolumns.cpp). `beginBatch`
    /// opens the batch's target transaction, in which the target is altered. Returns false when
    /// the table was paused.
    bool adaptToChangedColumns(Table &t, const std::vector<binlog::Column> &map, const std::vector<std::string> &gone,
                               const std::vector<std::string> &retyped, Merger &merger,
                               const std::function<void()> &beginBatch);
    /// At start: target columns the source no longer has (dropped while the engine was stopped)
    /// get the `drop_column` policy; on a Postgres target, columns whose type differs from the
    /// source's (retyped meanwhile) the `type_change` policy.
    void applyColumnPoliciesAtStart(Table &t, TargetSession &session);
    /// Why `merger` cannot drop or widen `t`'s columns (a column mapping, two-way), or empty.
    std::string notHandledFor(const Table &t, const Merger &merger) const;
    /// What to run on the target for a retype the engine does not apply by itself.
    std::string alterFor(const Table &t, const std::string &column, const std::string &type) const;
    /// The table's checkpoint position as stored: its stream position and backfill progress.
    static BinlogCdcPosition positionWithProgress(const Table &t, BinlogCdcPosition at);
    /// The table whose column backfill has a step due, or none.
    Table *columnFillDue(bool once) const;
    /// One step of `t`'s column backfill between two batches (stops only `t` on its error).
    void addColumnStep(Table &t, MysqlConnection &src, Merger &merger, TargetSession &session, bool once);

    // Two-way pipelines (mysqlcdctwoway.cpp, docs/two-way.md).
    /// Reverse direction: throws a transient Error until the forward direction has created the
    /// tables this direction reads and recorded where it starts reading them.
    void awaitForwardDirection();
    /// Forward direction, before the target's tables are made (the reverse direction waits for
    /// them): gives the source's tables the version column the reverse direction's guarded merge
    /// keeps (`_driftless_version`).
    void addReverseVersionColumns();
    /// Forward direction, before any load: records, for each table without one, the reverse
    /// direction's start (a Postgres target: its slot; else the target's binlog end now), so every
    /// later change of the target is read back and the load's own rows (marked) are not.
    void recordReverseStart();
    /// Detects and resolves the conflicts of `t`'s folded `rows` against the target's rows, by
    /// the table's `conflicts:` policy (the rules of core/engine/conflicts.h, shared with
    /// Postgres), inside the open transaction of `session`; counts them and hands queued ones to
    /// the observer. Losing and queued changes leave `rows`.
    void resolveTwoWayConflicts(Table &t, TargetSession &session, RowSet &rows);

    // Foreign-key actions the binlog does not carry (mysqlcdccascades.cpp, ARCHITECTURE.md P7).
    /// A foreign key of a synced child table whose rule changes its rows.
    struct Cascade {
        std::string name;
        Table *child = nullptr;
        std::vector<std::string> childColumns;
        std::vector<std::string> parentColumns;
        CascadeAction onDelete = CascadeAction::None;
        CascadeAction onUpdate = CascadeAction::None;
    };
    /// One change of a parent row, by column name (COPY text fields): before it, and after it for
    /// an update (none for a delete).
    struct ParentChange {
        std::map<std::string, std::string> before;
        std::optional<std::map<std::string, std::string>> after;
    };
    /// What the cascade needs of the stream it runs in.
    struct CascadeContext {
        std::function<bool(Table &)> applies;      ///< the table takes the current transaction
        std::function<void()> stagePending;        ///< merges what is staged, in the open transaction
        std::function<Merger &(Table &)> mergerOf; ///< the stream's merger of the table
        std::function<RowSet &(Table &)> pending;  ///< the table's staged changes
        std::function<void(Table &, long long)> counted;
        /// `e` is the child's alone: stops it and returns true; else false (the pipeline's).
        std::function<bool(Table &, const Error &)> stopChild;
    };
    /// At start: the source's foreign keys whose child is synced and whose rules change rows, by
    /// parent (synced or not: its changes are read for them). Says once what is applied.
    void readForeignKeys(MysqlConnection &src);
    bool cascadesFrom(const TableRef &parent) const;
    std::vector<ParentChange> parentChanges(const binlog::Rows &rows) const;
    /// Stages, at `version`, the child changes `changes` of `parent` make through its foreign
    /// keys, and theirs in turn: what the target holds of each child is read after the child's
    /// staged changes are merged, so the actions apply in binlog order.
    void cascade(const TableRef &parent, const std::vector<ParentChange> &changes, std::int64_t version,
                 CascadeContext &cx, int depth);
    void cascadeInto(const Cascade &c, const std::vector<std::vector<std::string>> &deleted,
                     const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> &updated,
                     std::int64_t version, CascadeContext &cx, int depth);
    std::map<TableRef, std::vector<Cascade>> m_cascades;

    // The source's identity (mysqlcdcidentity.cpp, docs/failover.md).
    /// Before any load or stream: compares the server behind the endpoint and the binlog it has
    /// with what the stored checkpoints were read from (ARCHITECTURE.md P6). Same server and the
    /// positions where they were: nothing to do. Another server, or a position its binlog does
    /// not hold as recorded: a load in flight starts over on it, a paused table stops (through
    /// `session`), and the streaming tables resume from their GTID state (m_resume) when they
    /// agree on one; else throws Error naming both servers and the re-snapshot. Nothing is read
    /// by file and offset from a server other than the one that wrote them.
    void checkSourceIdentity(MysqlConnection &src, TargetSession &session);
    /// True when the pipeline says `recover: auto` or a table's checkpoint holds the `recover`
    /// request `driftless-cli recover` leaves.
    bool recoveryAllowed() const;
    /// A source change the stream cannot go on from, with recovery allowed: every streaming table
    /// loads again from the new server under a new epoch, comparing before it copies (only the
    /// differing rows are written); `what` goes in the events.
    void reloadForRecovery(const std::string &what);
    /// BINLOG_GTID_POS(at) on `src`: the GTID state at that position of its binlog.
    static std::string gtidStateAt(MysqlConnection &src, const binlog::Position &at);
    /// "endpoint 'shop' (127.0.0.1:3306)", for messages.
    std::string sourceAddress() const;

    /// A recovery under way (reloadForRecovery): what changed, and the loads' figures so far.
    struct Recovery {
        std::string what;
        long long startedMs = 0;
        long long compared = 0; ///< source rows the loads read
        long long copied = 0;   ///< target rows they wrote or removed
        long long removed = 0;  ///< of them, removed
        int reloaded = 0;       ///< tables merged row by row (they could not be compared)
    };
    std::optional<Recovery> m_recovery;
    /// Thrown out of the stream when it found it cannot go on and reloadForRecovery ran: run()
    /// loads again and streams.
    struct RecoverByLoading {};

    /// A stream that must start from a GTID state on another server than the checkpoints'.
    struct Resume {
        std::string gtid;        ///< the state the streaming tables stored
        std::uint32_t was = 0;   ///< the server they were read from
        std::string description; ///< what changed, for the event
    };
    std::optional<Resume> m_resume;
    /// @@server_id of the server behind the endpoint, as this run found it.
    std::uint32_t m_serverId = 0;

    std::vector<TableJob> m_jobs;
    EngineObserver &m_observer;
    std::string m_pipeline;
    std::vector<std::unique_ptr<Table>> m_tables;
};

} // namespace driftless::core
