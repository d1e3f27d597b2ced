#pragma once

#include "core/engine/reconcile/reconcileopen.h"

/// Internal to the reconciler: a table without a primary key, compared as a multiset of whole
/// rows.
namespace driftless::core::recon {

/// Compares a table that has no primary key (ctx.keys empty). Its rows cannot be matched one to
/// one, so the table is a multiset of whole rows: row counts and the checksum of every row on
/// each side say whether they hold the same rows. When they do not and each side has at most
/// opt.fetchRows rows, every row's hash is read, and the rows one side holds more copies of are
/// read again with their values: missing (more in the source) and extra (more in the target); a
/// changed row is one of each. A full refresh table's source rows written since its last pass are
/// in flight (refreshdating.h); a row the source deleted since counts as extra (nothing tells it
/// from a row changed in the target). Larger tables get the counts and a note with the least
/// drift the two checksums prove.
void compareKeyless(TableContext &ctx, TableReconcile &out, const ReconcileOptions &opt);

} // namespace driftless::core::recon
