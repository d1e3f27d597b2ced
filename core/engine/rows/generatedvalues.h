#pragma once

#include "core/db/mysqlcatalog.h"
#include "core/db/pgconnection.h"
#include "core/model/batch.h"
#include "core/model/tableschema.h"

#include <string>
#include <vector>

namespace driftless::core {

/// Where each column of a CDC table's schema is in the rows its change stream delivers, and
/// what must be read from the source because the stream does not carry it: pgoutput (Postgres
/// 15) sends no generated columns, so an insert or update arrives without their values.
struct StreamLayout {
    /// Per schema column: its field in the stream's rows, or -1 when the stream lacks it.
    std::vector<int> fromStream;
    /// Schema columns to read from the source by key for every insert and update: the stream
    /// lacks them and the target does not compute them itself.
    std::vector<int> fetch;
    /// The stream's rows are the schema's as they come.
    bool identity = true;
};

/// The layout of a stream carrying `streamColumns` for `schema`; `generatedByTarget` are the
/// target's own generated columns (Merger::generatedColumns()), which need no values.
StreamLayout streamLayout(const TableSchema &schema, const std::vector<std::string> &streamColumns,
                          const std::vector<std::string> &generatedByTarget);

/// Rewrites `rows` from the stream's layout into the schema's. A column the stream lacks is NULL
/// and not marked unchanged: its value is fetched next, or the target computes it.
void toSchemaLayout(const StreamLayout &layout, RowSet &rows);

/// Fills the fields `columns` of every insert and update of `rows` (in `schema`'s layout) with
/// the source's current values, read by primary key, a thousand keys a query. They are at least
/// as new as the change, and any later change arrives in the stream and applies over them, so
/// the target converges to the source. A row the source no longer has is dropped (its delete
/// follows in the stream). Returns how many were dropped. Throws Error from the source.
long long fetchByKey(PgConnection &src, const TableSchema &schema, const std::vector<int> &columns, RowSet &rows);

/// MySQL/MariaDB: inserts and updates of `rows` whose binlog image lacked a generated column (a
/// session with binlog_row_image MINIMAL logs STORED columns but leaves VIRTUAL ones out, inserts
/// included) are replaced by the source's current row, read by primary key, so neither a stale
/// value is kept nor a row left unapplied. A row the source no longer has is dropped (its delete
/// follows in the binlog). Returns {rows read, rows dropped}.
std::pair<long long, long long> completeGeneratedFromMysql(MysqlConnection &src, const mysqlcatalog::MysqlTable &table,
                                                           RowSet &rows);

} // namespace driftless::core
