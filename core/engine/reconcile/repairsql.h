#pragma once

#include "core/engine/jobs/tablejob.h"
#include "core/model/tableschema.h"

#include <string>

/// Internal to the reconciler: the SQL a repair runs, for its preview.
namespace driftless::core::recon {

/// The whole SQL of a repair's statements (RepairStatement::full) for `job`'s target, as its
/// merger runs them for rows of `schema` (a repair merges a full refresh table as a cursor pass
/// does, a CDC table as CDC): every column and the version guard spelt out, the staging and
/// tombstone tables by their names (a Postgres or MySQL target is connected to for them).
///
/// It mirrors the mergers' statements (core/mergers: PgMerger::buildStatements, MysqlMerger's
/// merge, SqliteMerger::buildStatements), which this wing cannot ask for; a change there needs
/// the same change here (tst_reconcile runs the Postgres ones on a repaired target with EXPLAIN).
struct RepairSql {
    std::string stage;  ///< loading the staged rows (SQLite binds each row to the others instead)
    std::string upsert; ///< the guarded merge of the rows
    std::string remove; ///< the guarded delete of the keys, and their tombstones
};
RepairSql repairFullSql(const TableJob &job, const TableSchema &schema);

} // namespace driftless::core::recon
