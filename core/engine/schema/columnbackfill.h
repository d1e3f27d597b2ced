#pragma once

#include "core/engine/jobs/observer.h"
#include "core/mergers/merger.h"
#include "core/model/cdcposition.h"
#include "core/model/schemachangepolicy.h"
#include "core/model/tableschema.h"
#include "core/model/workspace.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

class PgConnection;

/// Add-column backfill (`schema_changes: { add_column: backfill }`): a column the source gained
/// is added to the target, then its values for the rows the target already had are read from the
/// source in primary-key chunks, that column only, and written through Merger::
/// fillColumnsInTransaction, which skips rows the stream wrote since the column appeared. The
/// values read are the source's current ones: at least as new as any change the stream applied
/// before, and any change after the read arrives in the stream with a newer version, so the
/// target converges without stopping the stream (docs/schema-changes.md).

/// The policy for a column the source gained: the table's `schema_changes.add_column`, else the
/// pipeline's, else `backfill`.
AddColumnPolicy addColumnPolicy(const TableSpec &spec, const std::optional<std::string> &pipelineDefault);

/// Reads up to `limit` rows of (key, `columns`) after key `after` (empty: from the start), in key
/// order, inside the table's row filter. Thread affinity: the connection's. Throws Error.
ColumnFill readColumnChunk(PgConnection &src, const TableSchema &schema, const TableSpec &spec,
                           const std::vector<std::string> &columns, const std::vector<std::string> &after,
                           long long limit);

/// The key of the chunk's last row, where the next chunk starts.
std::vector<std::string> lastKeyOf(const ColumnFill &chunk);

/// The source's side of the column-scoped comparison (pgColumnChecksumSql over the filtered table).
std::string sourceColumnChecksum(PgConnection &src, const TableSchema &schema, const TableSpec &spec,
                                 const std::vector<std::string> &columns);

/// The key columns' names, in key order.
std::vector<std::string> keyColumnNames(const TableSchema &schema);

/// `d, "Due Date"`: column names as a DBA reads them.
std::string displayNames(const std::vector<std::string> &columns);

/// Before a CDC table starts: the source columns at the end of `streamColumns` that an existing
/// target (`targetColumns`, empty when there is none) lacks are taken out of `schema` and
/// `streamColumns`, so they are met, and their policy applied, when the first change carrying
/// them arrives (whose commit LSN the backfill needs). Returns them (empty: nothing changed).
std::vector<std::string> holdBackAddedColumns(TableSchema &schema, std::vector<std::string> &streamColumns,
                                              const std::vector<std::pair<std::string, std::string>> &targetColumns);

/// The progress of a backfill of `columns` the stream carried from `since`, folding in one under
/// way (`current`): both are filled again from the first key, below the later version.
PgAddColumnProgress widenedColumnFill(const std::optional<PgAddColumnProgress> &current,
                                      const std::vector<std::string> &columns, std::int64_t since, std::int64_t nowMs);

/// Where a backfill reads the source's values: one per source kind, the chunk loop shared.
/// Thread affinity: the apply thread's (it reads on that thread's source connection).
class ColumnFillSource {
public:
    virtual ~ColumnFillSource() = default;
    /// Up to `limit` rows of (key, `columns`) after key `after` (empty: from the start), in key
    /// order, inside the table's row filter, as Postgres text. Throws Error.
    virtual ColumnFill readChunk(const std::vector<std::string> &columns, const std::vector<std::string> &after,
                                 long long limit) = 0;
    /// The source's side of the column-scoped comparison ("count:md5" as the target's
    /// Merger::columnChecksum computes it), or empty when these columns cannot be compared in SQL.
    virtual std::string checksum(const std::vector<std::string> &columns) = 0;
};

/// A Postgres source (readColumnChunk, sourceColumnChecksum).
class PgColumnFillSource final : public ColumnFillSource {
public:
    PgColumnFillSource(PgConnection &src, const TableSchema &schema, const TableSpec &spec)
        : m_src(src), m_schema(schema), m_spec(spec)
    {
    }
    ColumnFill readChunk(const std::vector<std::string> &columns, const std::vector<std::string> &after,
                         long long limit) override
    {
        return readColumnChunk(m_src, m_schema, m_spec, columns, after, limit);
    }
    std::string checksum(const std::vector<std::string> &columns) override
    {
        return sourceColumnChecksum(m_src, m_schema, m_spec, columns);
    }

private:
    PgConnection &m_src;
    const TableSchema &m_schema;
    const TableSpec &m_spec;
};

/// What one backfill step works with: the apply thread's source reader and target session.
struct ColumnFillContext {
    ColumnFillSource &source;
    const TableSchema &schema;
    const TableSpec &spec;
    Merger &merger;
    TargetSession &session;
    const std::string &pipeline;
    /// Change data capture: every change up to this version is applied (the table's checkpoint,
    /// read between two batches). Every row at or below it takes the source's value, read after
    /// those changes committed, so at least as new as the row: rows the stream wrote without the
    /// column's value (a change in the transaction that added it, before the ALTER; an unchanged
    /// out-of-line value) are filled too, and a change still to come applies over it. A pass-based
    /// strategy has none: rows at or below the version of the first change with the column.
    std::optional<std::int64_t> appliedThrough = std::nullopt;
};

struct ColumnFillStep {
    enum Outcome {
        Chunk,     ///< a chunk was filled and committed with the progress
        LookAgain, ///< every key read, but the comparison differs: look again later
        Done       ///< every key read and compared; `message` reports it (at `level`)
    };
    Outcome outcome = Chunk;
    std::string message;
    Level level = Level::Info;
};

/// Rows a column backfill reads and writes per chunk (one target transaction each), small
/// enough that the stream's batches wait little between two chunks.
constexpr long long kColumnFillChunk = 5000;

/// One step of a backfill: reads the next chunk and fills it in one target transaction, in
/// which `writeCheckpoint(rowsWritten)` stores the table's checkpoint (with `progress`, advanced
/// here). Past the last key it compares the columns on both sides; with `mayLookAgain` a
/// difference gives LookAgain rather than Done. Throws Error (the transaction rolled back and
/// `progress` as it was).
ColumnFillStep columnFillStep(ColumnFillContext &cx, PgAddColumnProgress &progress, bool mayLookAgain,
                              const std::function<void(long long)> &writeCheckpoint);

/// "12,400": a count with thousands separators, as events show them.
std::string withThousands(long long n);

} // namespace driftless::core
