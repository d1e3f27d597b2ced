#pragma once

#include "core/model/batch.h"
#include "core/model/tableref.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace driftless::core {

/// One table's share of a CDC batch.
struct CdcTableChanges {
    /// Column names the rows are encoded with (the Relation message's order).
    std::vector<std::string> columns;
    /// Each column's type OID and typmod, as the Relation message gives them: a column retyped
    /// under the same name shows only here.
    std::vector<std::pair<std::uint32_t, std::int32_t>> types;
    /// Changes in commit order, folded by key at the end of the batch.
    RowSet rows;
    /// A replicated TRUNCATE happened before these rows (a TRUNCATE always starts a batch).
    bool truncate = false;
    long long changes = 0; ///< changes before folding
};

/// Whole source transactions, in commit order, grouped per table: the unit the apply thread
/// commits in one target transaction together with every table's checkpoint. A transaction too
/// big for one batch arrives as several: all but the last have `final == false`, and the target
/// transaction stays open until the final one.
struct CdcBatch {
    std::map<TableRef, CdcTableChanges> tables;
    bool final = true;
    /// Where the last transaction this batch completes ends, as a version of the source's
    /// positions (Postgres: the end LSN; MariaDB: the binlog position's version): the position to
    /// store and, once committed, to acknowledge. 0 when the batch completes no transaction.
    std::int64_t endVersion = 0;
    /// That transaction's version, which its rows carry (Postgres: the commit LSN; MariaDB: the
    /// binlog position where the transaction starts).
    std::int64_t commitVersion = 0;
    /// Commit time of that transaction, source clock, microseconds since the Unix epoch.
    std::int64_t commitTimeUs = 0;
    int transactions = 0;
    /// Set on a heartbeat batch (no changes): the stream is idle and everything received was
    /// applied, up to this WAL position; the source clock at that moment (Unix µs).
    std::optional<std::int64_t> idleWalEnd;
    /// The server asked for a reply at that position (a walsender that is shutting down waits
    /// until the flush position reaches it): record it at once instead of every few seconds.
    bool idleUrgent = false;
    std::int64_t serverTimeUs = 0;
    /// Source clock minus workstation clock, estimated from the stream (µs).
    std::int64_t clockOffsetUs = 0;

    /// Nothing to hand over: no changes, no completed transaction (whose commit must reach the
    /// target even when it changed none of our tables, to close a transaction staged in
    /// pieces and move the checkpoint), no heartbeat.
    bool empty() const { return tables.empty() && !idleWalEnd && transactions == 0; }
};

} // namespace driftless::core
