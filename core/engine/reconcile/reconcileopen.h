#pragma once

#include "core/db/mysqlcatalog.h"
#include "core/engine/jobs/tablejob.h"
#include "core/engine/reconcile/reconcilemysql.h"
#include "core/engine/reconcile/reconcilepg.h"
#include "core/engine/reconcile/reconciler.h"
#include "core/model/batch.h"
#include "core/model/cdcposition.h"

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

/// Internal to the reconciler: one table of a pipeline opened as its two sides, shared by the
/// comparison (reconciler.cpp) and the repair (reconcilerepair.cpp).
namespace driftless::core::recon {

/// Everything needed to compare one table of a pipeline.
struct TableContext {
    TableJob job;
    TableSchema schema;
    std::vector<ColumnInfo> keys;
    std::unique_ptr<Side> source;
    std::unique_ptr<Side> target;
    PgSide *pgSource = nullptr;    ///< the source, when it is Postgres
    MysqlSide *mySource = nullptr; ///< the source, when it is MySQL/MariaDB
    /// A MySQL source's own description (repair reads rows as its readers do).
    std::optional<mysqlcatalog::MysqlTable> myTable;
    /// Why the table cannot be compared exactly, when it cannot.
    std::string skipped;
    /// A Postgres source's FROM item: the table, or for a mapped table a subquery giving the
    /// target's columns (renamed, masked), so both sides compare what the target should hold.
    std::string sourceFrom;
};

/// Throws the error a repair gives for a table without a primary key (ctx.keys empty).
void requireKey(const TableContext &ctx);

/// Opens both sides of `job`'s table: the source (Postgres or MySQL/MariaDB, through its row
/// filter and column mapping) and the target, hashing alike. Sets `skipped` when the table cannot
/// be compared exactly; throws Error when a side cannot be opened (no target table yet). A table
/// without a primary key opens with no key columns.
TableContext openTable(const TableJob &job, const ReconcileOptions &opt);

/// `compare --key`: throws ConfigError, with the counts, when `key` repeats or is NULL in some of
/// `table`'s rows (those `where` holds for) on `endpoint`: rows could not be matched by it.
void requireCompareKey(const Endpoint &endpoint, const TableRef &table, const std::vector<std::string> &key,
                       const std::optional<std::string> &where);

/// The jobs of `pipeline` to compare (all, or the named tables), two-way tables once.
/// Throws ConfigError for an unknown pipeline or table.
std::vector<TableJob> selectJobs(const Workspace &ws, const std::string &pipeline,
                                 const std::vector<std::string> &tables);
TableJob jobFor(const Workspace &ws, const std::string &pipeline, const std::string &table);

/// The applied source position a stored checkpoint records (CDC streaming), 0 when none.
inline std::int64_t appliedPosition(const std::optional<Checkpoint> &cp)
{
    if (!cp)
        return 0;
    const auto pos = parseCdcPosition(cp->position);
    return pos ? appliedVersion(*pos) : 0;
}

/// Runs both sides' parts of a step at once (each on its own connection).
template <typename A, typename B> auto both(A &&a, B &&b)
{
    auto fb = std::async(std::launch::async, std::forward<B>(b));
    auto ra = a();
    return std::make_pair(std::move(ra), fb.get());
}

} // namespace driftless::core::recon
