#pragma once

#include "core/model/batch.h"
#include "core/model/tableschema.h"
#include "core/model/workspace.h"

#include <string>
#include <vector>

namespace driftless::core {

class PgConnection;
class MysqlConnection;

/// Row filters (`where:` on a table): a condition in the source's own SQL that every row must
/// hold to reach the target. Readers add it to their queries; the CDC pipelines evaluate it on
/// the source, for a whole micro-batch in one query, so the answer is the source's (collations,
/// casts, NULLs), never a re-implementation of its expression language. A filter is never put
/// into a Postgres publication: on Postgres 15 a publication whose row filter misses the replica
/// identity makes every UPDATE and DELETE on the source table fail.

/// ` AND (filter)` for a query that has a WHERE already, or empty when the table has no filter.
std::string rowFilterAnd(const TableSpec &spec);
/// ` WHERE (filter)`, or empty.
std::string rowFilterWhere(const TableSpec &spec);

/// The table as a FROM item (to be followed by an alias) holding only the rows of its filter:
/// reconciliation and repair compare and copy what the sync would.
std::string rowFilterFromSql(const TableSchema &schema, const TableSpec &spec);

/// Runs `SELECT 1 FROM table WHERE (filter) LIMIT 0` on the source; returns the server's message
/// when it refuses the filter (unknown column, syntax, type), else empty. Connection errors are
/// thrown as Error.
std::string rowFilterProblem(PgConnection &src, const TableSchema &schema, const std::string &filter);
std::string rowFilterProblem(MysqlConnection &src, const TableRef &table, const std::string &filter);

/// At the start of a run: throws a permanent Error naming the table's `where:` when the source
/// refuses its filter (a column dropped or renamed since apply), instead of a bare server error
/// from the first read. Nothing for a table without a filter.
void requireRowFilter(PgConnection &src, const TableSchema &schema, const TableSpec &spec);
void requireRowFilter(MysqlConnection &src, const TableSpec &spec);

/// A table whose filter the source refused: pipeline and table index in the workspace.
struct RowFilterRefusal {
    size_t pipeline = 0;
    size_t table = 0;
    std::string message;
};
/// Checks every table's filter against its live source (one connection per source endpoint).
/// A source that cannot be reached, or a table it lacks, is skipped: the doctor reports those.
std::vector<RowFilterRefusal> checkRowFilters(const Workspace &ws);

/// CDC, Postgres source: `rows` (folded by key, in `schema`'s column order) keep the inserts and
/// updates whose new row holds `filter`; every other insert or update becomes a delete of its
/// key (the row left the filter, or never entered it: a delete of a key the target does not hold
/// writes nothing). Deletes stay. One query per thousand rows, on `src`. Returns how many rows
/// became deletes.
long long applyRowFilter(PgConnection &src, const TableSchema &schema, const std::string &filter, RowSet &rows);

namespace mysqlcatalog {
struct MysqlTable;
}
/// The same on a MySQL/MariaDB source: the rows travel as one `SELECT ... UNION ALL SELECT ...`
/// of typed parameters (CAST to the column's number or time type) under the columns' names.
/// A row whose image lacks columns (binlog_row_image MINIMAL) is judged on the source's current
/// row of its key.
long long applyRowFilter(MysqlConnection &src, const mysqlcatalog::MysqlTable &table, const std::string &filter,
                         RowSet &rows);

} // namespace driftless::core
