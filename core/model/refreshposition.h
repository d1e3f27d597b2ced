#pragma once

#include <string>

namespace driftless::core {

/// What a full refresh checkpoint's position says of the pass that wrote it: the snapshot the
/// target now holds. Stored as JSON beside the pass's remembered columns (`columns`); this reads
/// and writes only its own keys, so earlier and later versions read each other's positions.
struct RefreshPosition {
    /// `snapshot_at`: the source's clock when the snapshot was taken (timestamptz text).
    std::string snapshotAt;
    /// `snapshot_txids`: a Postgres source's txid_current_snapshot() inside the snapshot
    /// ("xmin:xmax:xip,..."), which tells the transactions the snapshot saw from later ones; empty
    /// for other sources and for positions written before it was recorded.
    std::string snapshotTxids;

    /// Reads the keys from a stored position; missing keys, or text that is not a JSON object,
    /// leave them empty.
    static RefreshPosition fromJson(const std::string &position);
    /// The position's JSON text with these keys set (others of `position` kept).
    std::string mergedInto(const std::string &position) const;
};

} // namespace driftless::core
