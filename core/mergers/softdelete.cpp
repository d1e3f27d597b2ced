#include "core/mergers/softdelete.h"

#include "core/model/error.h"

#include <string>

namespace driftless::core {

namespace {
/// Rows per merged chunk: a staging batch of the size CDC and cursor batches have.
constexpr size_t kChunkRows = 20000;
} // namespace

void requireKeyForSoftDeletes(const MergeTarget &target, const TableSchema &source)
{
    if (target.softDeletes && !source.hasPrimaryKey())
        throw SchemaError("table " + target.source.display() +
                              " has no primary key, so deletes: soft cannot mark its deleted rows",
                          "add a primary key on the source, or use deletes: hard");
}

long long refreshKeepingDeleted(Merger &merger, const RefreshRows &rows, std::int64_t version)
{
    merger.clearSeenInTransaction();
    RowSet chunk;
    long long loaded = 0;
    auto flush = [&] {
        if (chunk.empty())
            return;
        merger.mergeSnapshotChunkInTransaction(chunk);
        chunk.clear();
    };
    forEachRefreshRow(rows, [&](std::string_view line, std::int64_t v) {
        chunk.append(line, ChangeOp::Insert, v);
        ++loaded;
        if (chunk.size() >= kChunkRows)
            flush();
    });
    flush();
    merger.deleteUnseenInTransaction(version);
    return loaded;
}

} // namespace driftless::core
