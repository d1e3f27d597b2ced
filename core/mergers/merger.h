#pragma once

#include "core/model/batch.h"
#include "core/model/tableschema.h"
#include "core/model/workspace.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace driftless::core {

/// Identifies one synced table on the target side.
struct MergeTarget {
    std::string pipeline;
    TableRef source;
    TargetName target;
    Strategy strategy = Strategy::FullRefresh;
};

struct ApplyResult {
    long long rowsInBatch = 0;
    /// Rows the target actually changed (inserted, updated or deleted); replays write 0.
    long long rowsWritten = 0;
    /// True when the batch went straight in with COPY/INSERT (initial load), false when merged.
    bool direct = false;
};

/// Lands batches in one target table: staging + guarded merge + checkpoint, one transaction.
///
/// The guard: a row is written only when its version is newer than the target row's, for
/// updates AND deletes; a delete that wins leaves a tombstone (key, version) so an older insert
/// replayed later cannot resurrect the row. Replaying any batch any number of times leaves the
/// target the same (P2).
///
/// Thread affinity: one thread (it owns a target connection). Failure: Error from the target;
/// the transaction is rolled back, so nothing of the batch is visible and the checkpoint is
/// unchanged.
class Merger {
public:
    virtual ~Merger() = default;

    /// Creates the target table (and bookkeeping: staging, tombstones, checkpoints) when missing;
    /// adds columns the source gained. Throws SchemaError when the existing table cannot take the
    /// source's rows.
    virtual void prepare(const TableSchema &source) = 0;

    /// The checkpoint stored in the target for this table, the authority for where to resume.
    virtual std::optional<Checkpoint> readCheckpoint() = 0;
    /// Removes the stored checkpoint (used before a fresh initial load).
    virtual void clearCheckpoint() = 0;
    /// True when the target table holds no rows.
    virtual bool targetEmpty() = 0;

    /// Applies a batch and stores its checkpoint in one transaction. With `batch.directLoad`
    /// the rows are copied straight in; should a key already exist, the batch is merged instead.
    virtual ApplyResult apply(const Batch &batch) = 0;

    /// Full refresh: load every row into a shadow, then swap it in with the checkpoint in one
    /// transaction. `rows` is called with a sink that takes COPY text (rows ending in newline,
    /// the source columns followed by the row version); readers of the target see the old table
    /// until the swap commits. Returns the number of rows loaded.
    virtual long long replaceAll(const std::function<void(const std::function<void(std::string_view)> &sink)> &rows,
                                 const Checkpoint &checkpoint) = 0;

    virtual std::string describeTarget() const = 0;
};

} // namespace driftless::core
