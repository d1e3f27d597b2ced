#include "core/mergers/softdelete.h"

#include "core/model/error.h"

#include <charconv>
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
    std::string carry;
    long long loaded = 0;
    auto flush = [&] {
        if (chunk.empty())
            return;
        merger.mergeSnapshotChunkInTransaction(chunk);
        chunk.clear();
    };
    auto handleLine = [&](std::string_view line) {
        // The row's version is its last field.
        const auto tab = line.rfind('\t');
        std::int64_t v = 0;
        std::from_chars(line.data() + tab + 1, line.data() + line.size(), v);
        chunk.append(line.substr(0, tab), ChangeOp::Insert, v);
        ++loaded;
        if (chunk.size() >= kChunkRows)
            flush();
    };
    rows([&](std::string_view data) {
        size_t start = 0;
        while (start < data.size()) {
            const auto nl = data.find('\n', start);
            if (nl == std::string_view::npos) {
                carry.append(data.substr(start));
                return;
            }
            if (carry.empty()) {
                handleLine(data.substr(start, nl - start));
            } else {
                carry.append(data.substr(start, nl - start));
                handleLine(carry);
                carry.clear();
            }
            start = nl + 1;
        }
    });
    if (!carry.empty())
        handleLine(carry);
    flush();
    merger.deleteUnseenInTransaction(version);
    return loaded;
}

} // namespace driftless::core
