#pragma once

// A CDC table's initial load, written once for both sources (design note ENGINE-WINGS, "the
// skeleton": the load chunk is a source's, the rest the skeleton's): chunks in key order, each
// committed with the table's checkpoint in one target transaction (a crash resumes at the next
// chunk), a re-seed's guard, the end that hands the table to the stream, and what the DBA sees
// meanwhile. What truly differs per source (how a chunk is read and at which snapshot, how its
// position is written) comes in through a CdcLoadSource.

#include "core/engine/cdc/cdctable.h"
#include "core/engine/jobs/observer.h"
#include "core/mergers/merger.h"
#include "core/model/batch.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"

#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

namespace driftless::core {

/// One chunk of a load as the source read it.
struct LoadChunk {
    /// What the chunk writes: every row read (copied into an empty target, or merged into rows it
    /// holds), or, when `compared`, only the rows that differ and deletes of the rows the source
    /// lacks in the chunk's key range.
    RowSet rows;
    long long read = 0;               ///< source rows the chunk read
    std::vector<std::string> lastKey; ///< the last row's key (text values); empty when it read none
    /// Compared with the target's rows of its key range (CdcLoad::compare): `compareFrom` is where
    /// the next range starts (empty: unbounded above), `copied` and `removed` what the comparison
    /// staged. A compared chunk is written even when it read no row (its range may hold rows the
    /// source no longer has).
    bool compared = false;
    std::vector<std::string> compareFrom;
    long long copied = 0;
    long long removed = 0;
    bool last = false; ///< no chunk follows
};

/// What a source does in a CDC table's initial load; loadCdcTable does the rest.
class CdcLoadSource {
public:
    virtual ~CdcLoadSource() = default;
    /// Reads the chunk after `after` (empty: from the start) of at most `limit` rows, in the
    /// snapshot the source loads from.
    virtual LoadChunk read(const std::vector<std::string> &after, long long limit) = 0;
    /// The table's checkpoint once `load` (every chunk up to the one just read) is committed;
    /// the source keeps the typed position until chunkStored().
    virtual Checkpoint chunkCheckpoint(const CdcLoad &load) = 0;
    /// The checkpoint chunkCheckpoint() returned last is committed: the table holds it now.
    virtual void chunkStored() = 0;
    /// The checkpoint the load ends with: the stream's position, where it takes the table over.
    virtual Checkpoint streamCheckpoint() = 0;
    /// The checkpoint streamCheckpoint() returned is committed: the table holds it now.
    virtual void streamStored() = 0;
    /// A merge that did not compare: every row the source has now carries a version at or above
    /// this one; older target rows are rows the source no longer has.
    virtual std::int64_t mergedFrom() const = 0;
    /// Where the stream starts, in the source's words (an LSN, a binlog file and offset).
    virtual std::string streamsFrom() const = 0;
    /// The source's estimate of the table's rows, for the progress shown (-1: unknown).
    virtual long long estimatedRows() const = 0;
    /// Between chunks: a DBA paused the table (its chunks so far stay).
    virtual bool pauseWanted() const { return false; }
    /// An error of the table's own (stopsOnlyTheTable) met writing a chunk: stops the table (P4).
    /// The chunk's transaction is rolled back already.
    virtual void stop(const Error &e) = 0;
};

/// What a load did, for a recovery's figures.
struct LoadFigures {
    long long read = 0;    ///< source rows read
    long long copied = 0;  ///< compared: rows staged because the target lacked them or held them otherwise
    long long removed = 0; ///< compared: target rows the source no longer has, deleted
    bool compared = false; ///< the load compared before it copied
};

/// How a load ended: loaded (the table streams), paused by a DBA between chunks, or stopped by
/// an error of its own (CdcLoadSource::stop was called).
enum class LoadEnd { Loaded, Paused, Stopped };

/// Loads `t` through `merger` (of `session`) from `source`, going on from `from` (a load a crash
/// interrupted: its chunks so far; else where a fresh one starts, `merge` set when the target
/// holds rows). `doing` is the table's state message meanwhile. Per chunk, in one target
/// transaction: a copy, a merge (every row read must be written, requireReseedWritten) or a
/// compared chunk's differences, and the load checkpoint; then the crash point
/// `batch.after_commit`. At the end, in one transaction: the stream checkpoint, and for a merge
/// that did not compare the rows the source no longer has deleted (said as `resnapshot`); then
/// `load_done` with the figures, and the table shows as streaming. Throws Cancelled when `stop`
/// is requested, and any error reading a chunk or not the table's own.
LoadEnd loadCdcTable(CdcTable &t, Merger &merger, TargetSession &session, CdcLoadSource &source, const CdcLoad &from,
                     const std::string &doing, EngineObserver &observer, std::stop_token stop,
                     LoadFigures *figures = nullptr);

} // namespace driftless::core
