#include "core/engine/cdc/tableload.h"

#include "core/base/testhooks.h"
#include "core/engine/cdc/cdcoutcome.h"
#include "core/engine/schema/columnbackfill.h"

namespace driftless::core {

namespace {

/// Writes one chunk and the load checkpoint `cp` in one target transaction.
ApplyResult writeLoadChunk(const CdcTable &t, Merger &merger, TargetSession &session, LoadChunk &chunk, bool merge,
                           const Checkpoint &cp)
{
    ApplyResult r{chunk.read, 0, !merge};
    session.inTransaction([&] {
        if (chunk.compared) {
            r = {};
            if (!chunk.rows.empty()) {
                r = merger.mergeInTransaction(chunk.rows);
                requireReseedWritten(t.job.spec.table.display(), t.job.pipeline,
                                     static_cast<long long>(chunk.rows.size()), r.rowsWritten);
            }
        } else if (merge) {
            r = merger.mergeInTransaction(chunk.rows);
            requireReseedWritten(t.job.spec.table.display(), t.job.pipeline, chunk.read, r.rowsWritten);
        } else {
            r.rowsWritten = merger.loadInTransaction(chunk.rows);
        }
        merger.writeCheckpointInTransaction(cp, r.rowsWritten);
    });
    return r;
}

} // namespace

LoadEnd loadCdcTable(CdcTable &t, Merger &merger, TargetSession &session, CdcLoadSource &source, const CdcLoad &from,
                     const std::string &doing, EngineObserver &observer, std::stop_token stop, LoadFigures *figures)
{
    LoadFigures own;
    LoadFigures &f = figures ? *figures : own;
    CdcLoad load = from;
    t.loaded = load.rows;
    const auto estimated = [&] { return Progress{t.loaded, source.estimatedRows()}; };
    observer.tableState(t.key, TableState::Backfilling, doing, estimated());
    const long long limit = t.job.spec.effectivePageSize();
    for (;;) {
        if (stop.stop_requested())
            throw Cancelled();
        if (source.pauseWanted())
            return LoadEnd::Paused;
        LoadChunk chunk = source.read(load.after, limit);
        if (chunk.read == 0 && !chunk.compared)
            break;
        if (chunk.read > 0)
            load.after = chunk.lastKey;
        load.rows = t.loaded + chunk.read;
        load.compare = chunk.compared;
        load.compareFrom = chunk.compareFrom;
        const Checkpoint cp = source.chunkCheckpoint(load);
        ApplyResult r;
        try {
            r = writeLoadChunk(t, merger, session, chunk, load.merge, cp);
        } catch (const Error &e) {
            if (!stopsOnlyTheTable(e, t.job.target.kind))
                throw;
            source.stop(e); // P4: the other tables load on
            return LoadEnd::Stopped;
        }
        crashPoint("batch.after_commit");
        source.chunkStored();
        t.loaded += chunk.read;
        f.read += chunk.read;
        f.copied += chunk.copied;
        f.removed += chunk.removed;
        f.compared = f.compared || chunk.compared;
        observer.batchApplied(t.key, r, cp, std::nullopt);
        observer.tableState(t.key, TableState::Backfilling, doing, estimated());
        if (chunk.last)
            break;
    }
    const Checkpoint cp = source.streamCheckpoint();
    session.inTransaction([&] {
        // A merge into existing rows (a re-snapshot): every row the source has now carries a
        // version from this load's snapshots; older ones are rows it no longer has. A compared
        // load removed them chunk by chunk (its alike rows keep their older versions).
        if (load.merge && !f.compared) {
            const long long gone = merger.deleteOlderInTransaction(source.mergedFrom());
            if (gone)
                observer.event(Level::Info, t.key, "resnapshot",
                               std::to_string(gone) + " rows the source no longer has were removed");
        }
        merger.writeCheckpointInTransaction(cp, 0);
    });
    source.streamStored();
    // The mirror holds the stream position before the table shows as streaming: a view never
    // shows "streaming" beside the last load chunk's key.
    observer.batchApplied(t.key, {}, cp, std::nullopt);
    if (f.compared)
        observer.event(Level::Info, t.key, "load_done",
                       "initial load done by comparing: " + withThousands(f.read) + " rows compared, " +
                           withThousands(f.copied) + " copied, " + withThousands(f.removed) +
                           " rows the source no longer has removed; streaming from " + source.streamsFrom());
    else
        observer.event(Level::Info, t.key, "load_done",
                       "initial load done: " + std::to_string(t.loaded) + " rows; streaming from " +
                           source.streamsFrom());
    observer.tableState(t.key, TableState::Streaming, "", std::nullopt);
    return LoadEnd::Loaded;
}

} // namespace driftless::core
