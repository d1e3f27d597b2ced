#pragma once

#include "core/mergers/merger.h"
#include "core/mergers/refreshrows.h"

#include <cstdint>
#include <functional>
#include <string_view>

namespace driftless::core {

/// `deletes: soft`: the bookkeeping column of a target table whose deletes are kept as marks.
/// NULL on a live row; the time the delete was applied (UTC) on a deleted one. Like
/// `_driftless_version` it is Driftless's own: never compared, reported as drift or sent back.
inline constexpr const char *kDeletedAtColumn = "_driftless_deleted_at";

/// Throws SchemaError when `target` keeps soft deletes but `source` has no primary key: a mark
/// needs a key to find the row again.
void requireKeyForSoftDeletes(const MergeTarget &target, const TableSchema &source);

/// A full refresh of a soft-delete table, inside the caller's open transaction: every row of the
/// snapshot is merged through the guard, writing only rows that differ or were marked deleted
/// (which revives them), and the rows older than `version` that the snapshot lacks are marked
/// deleted; rows marked before keep their first time. A swap would drop exactly the rows a soft
/// delete promises to keep. Returns the rows the snapshot had.
long long refreshKeepingDeleted(Merger &merger, const RefreshRows &rows, std::int64_t version);

} // namespace driftless::core
