#pragma once

#include "core/db/pgreplication.h"
#include "core/model/cdcbatch.h"
#include "core/model/loopcounters.h"
#include "core/readers/pgoutput.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

namespace driftless::core {

/// What the reader needs to know about one CDC table.
struct CdcTableInfo {
    TableRef table;
    /// Primary-key column names: the merge key (the Relation's key flags mark every column under
    /// REPLICA IDENTITY FULL, so they cannot say which columns the key is).
    std::vector<std::string> keyColumns;
    /// The columns the engine expects in the stream, in order: where a renamed key column is
    /// found when the first Relation message already has the new name.
    std::vector<std::string> columns;
    /// Changes of transactions that committed before this LSN are already in the target.
    std::int64_t resumeLsn = 0;
    bool applyTruncate = true;
};

/// Reads a pgoutput stream (protocol 1) and turns it into CdcBatches of whole transactions, in
/// commit order, each change versioned with its transaction's commit LSN.
///
/// - Unchanged TOAST values ('u') are never turned into NULL: they are filled from the old row
///   (REPLICA IDENTITY FULL) or marked unchanged so the merge keeps the target's value.
/// - An update that changes the primary key becomes a delete of the old key and an upsert.
/// - Transactions already applied (commit LSN before a table's resume LSN) are skipped: the
///   server resends everything after the slot's confirmed position.
/// - Status updates report as flushed only what `acked()` says the target committed (P1); they go
///   out every `statusInterval` and whenever the server asks, also while the apply side is busy.
///   When nothing received is in flight, a batch with `idleWalEnd` hands over the keepalive's
///   WAL end, for the apply side to record and then acknowledge.
///
/// Thread affinity: run() owns the replication connection on the calling thread.
class PgLogicalReader {
public:
    struct Options {
        std::string slot;
        std::string publication;
        std::int64_t startLsn = 0;
        size_t maxRows = 50'000;
        size_t maxBytes = 64u << 20;
        std::chrono::milliseconds maxDelay{200};
        /// Whether the apply side would take a batch now. A batch that is only old (maxDelay)
        /// is handed over when it would; until then the reader keeps reading and the batch
        /// keeps growing up to maxRows or maxBytes, so the walsender never waits on an apply
        /// that is busy with the previous batches (unset: always).
        std::function<bool()> applyReady;
        std::chrono::milliseconds statusInterval{5'000};
        /// Stop once everything up to this LSN is applied (0: stream until stopped).
        std::int64_t stopAtLsn = 0;
        /// Two-way pipelines: transactions whose Origin message names this replication origin
        /// were applied by Driftless (the other direction) and are dropped, never read back.
        std::string skipOrigin;
        /// Two-way pipelines: also dropped (the origins `driftless-cli resolve` writes under).
        std::vector<std::string> skipOriginsAlso;
        /// Two-way pipelines whose side may not use replication origins: a transaction whose
        /// first message, before any change, is a transactional logical message with this prefix
        /// and skipOrigin or one of skipOriginsAlso as its content is dropped the same way.
        std::string ownMessagePrefix;
        /// Two-way pipelines: keep each UPDATE's and DELETE's before-image (the old row that
        /// REPLICA IDENTITY FULL logs) with the change, for conflict detection; a change without
        /// one stops the table with the ALTER to run.
        bool keepBeforeImages = false;
        /// Two-way pipelines: changes captured and dropped as our own are counted here.
        std::shared_ptr<LoopCounters> counters;
    };

    PgLogicalReader(PgReplicationConnection &conn, std::map<TableRef, CdcTableInfo> tables, Options options);

    /// Hands batches to `emit`, which returns false when it takes no more (the apply side
    /// stopped); may block while the apply side is busy (it is called with a timeout loop).
    using Emit = std::function<bool(CdcBatch &batch, std::chrono::milliseconds timeout, bool &accepted)>;
    void run(std::stop_token stop, const Emit &emit, const std::function<std::int64_t()> &acked);

    /// Highest WAL position received (for monitoring).
    std::int64_t received() const { return m_received.load(); }
    /// Rows in the batch being gathered, not yet handed over (the reader's thread only: what
    /// Options::applyReady may look at).
    std::size_t gatheredRows() const { return m_batchRows; }

private:
    struct RelationState {
        TableRef table;
        bool mapped = false;
        std::vector<std::string> columns;
        std::vector<std::pair<std::uint32_t, std::int32_t>> types; ///< per column: type OID, typmod
        std::vector<int> keyIndexes;                               ///< PK column positions in `columns`
        char replicaIdentity = 'd';
    };

    void handle(const std::string &frame);
    void onMessage(std::string_view payload, std::int64_t walStart);
    void addChange(RelationState &rel, ChangeOp op, const pgoutput::Tuple &tuple, const pgoutput::Tuple *old,
                   const pgoutput::Tuple *before = nullptr, bool noBase = false);
    void keepBefore(const RelationState &rel, RowSet &rows, ChangeOp op, const pgoutput::Tuple &tuple,
                    const pgoutput::Tuple *before);
    CdcTableChanges &tableIn(RelationState &rel);
    bool flush(bool final);
    bool applyReady() const;
    void sendStatus(bool requestReply);
    std::string keyOf(const RelationState &rel, const pgoutput::Tuple &t, bool &complete) const;

    PgReplicationConnection &m_conn;
    std::map<TableRef, CdcTableInfo> m_tables;
    Options m_opt;
    std::map<std::uint32_t, RelationState> m_relations;

    const Emit *m_emit = nullptr;
    const std::function<std::int64_t()> *m_acked = nullptr;
    std::stop_token m_stop;

    CdcBatch m_batch;
    size_t m_batchRows = 0;
    size_t m_batchBytes = 0;
    std::chrono::steady_clock::time_point m_batchStarted;
    bool m_inTxn = false;
    /// The transaction under way carries our own origin (Options::skipOrigin): its changes are
    /// dropped.
    bool m_ownTxn = false;
    /// The transaction under way sent a change or a logical message already: a marker after
    /// that is not first in it and marks nothing.
    bool m_txnStarted = false;
    /// Pieces of a transaction went out (non-final batches) and its final batch has not.
    bool m_piecesOut = false;
    std::int64_t m_txnCommitLsn = 0;
    std::int64_t m_txnCommitTime = 0;
    std::int64_t m_lastEmittedEnd = 0;
    std::int64_t m_lastIdleEnd = 0;
    std::int64_t m_lastSentFlush = -1;
    std::chrono::steady_clock::time_point m_lastStatus;
    std::chrono::steady_clock::time_point m_lastHeartbeat;
    std::int64_t m_walEnd = 0;
    std::int64_t m_serverTimeUs = 0;
    std::int64_t m_clockOffsetUs = 0;
    bool m_haveOffset = false;
    std::atomic<std::int64_t> m_received{0};
    bool m_done = false;
    std::string m_line;
    std::string m_before;
    std::string m_mask;
};

} // namespace driftless::core
