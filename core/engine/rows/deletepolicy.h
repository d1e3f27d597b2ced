#pragma once

#include "core/model/batch.h"
#include "core/model/workspace.h"

namespace driftless::core {

/// `deletes: ignore` on a table: the target keeps every row it was given; a source delete (or a
/// row leaving the row filter) is logged as an event instead of applied.
bool ignoresDeletes(const TableSpec &spec);

/// `deletes: soft` on a table: the target keeps a deleted row, marked in `_driftless_deleted_at`
/// (the mergers do it, see MergeTarget::softDeletes); reconciliation counts marked rows as absent.
bool softDeletes(const TableSpec &spec);

/// Removes the deletes from `rows`; returns how many there were.
long long dropDeletes(RowSet &rows);

/// The event text for `n` deletes kept out of the target.
std::string ignoredDeletesMessage(long long n);

} // namespace driftless::core
