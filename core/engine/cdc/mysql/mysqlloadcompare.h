#pragma once

// MysqlCdcPipeline's comparing load (not part of the engine's API).

#include "core/db/mysqlcatalog.h"
#include "core/db/mysqlconnection.h"
#include "core/engine/cdc/rebackfillcompare.h"
#include "core/engine/jobs/tablejob.h"
#include "core/engine/reconcile/canonicalkey.h"
#include "core/model/batch.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

namespace recon {
struct TableContext;
}

/// An initial load of a MariaDB/MySQL table into a target that already holds rows (a re-snapshot,
/// or a recovery after a change of source) that compares before it copies. Each chunk the load
/// reads in its snapshot selects, beside every row, the row's canonical key and 60-bit hash
/// (rowhash.h, computed in SQL by the reconciler's MySQL side); the target hashes its rows of the
/// chunk's key range the same way, by index range; only the rows whose hash differs or that the
/// target lacks are merged, and the target's rows in the range that the source lacks are deleted,
/// all under the version guard at the chunk's snapshot version.
///
/// The ranges tile the key space: the first chunk's starts unbounded below, each next one where
/// the one before ended (the first key past its rows, read in its snapshot with them), and the
/// last one is unbounded above; so every target row is compared in exactly one chunk, against the
/// source as that chunk's snapshot saw it, and nothing is left to delete at the end. Rows the
/// target holds alike keep their versions (of an earlier epoch): any change the stream reads
/// afterwards outranks them.
///
/// Only where both sides order the key alike (integers, dates, decimals, binary-collated text)
/// and the target holds the source's columns as they are: no column mapping, soft deletes or
/// two-way; else `open` says why and the load merges every row.
class MysqlLoadCompare {
public:
    /// Null, with `why` set, when the table cannot be compared this way. `source` is the table
    /// as the load reads it.
    static std::unique_ptr<MysqlLoadCompare> open(const TableJob &job, const mysqlcatalog::MysqlTable &source,
                                                  std::string &why);
    ~MysqlLoadCompare();

    /// What the load selects after the row's own columns: each key column's canonical text, then
    /// the row's hash.
    const std::string &selectExtra() const { return m_extra; }
    /// Reads the canonical key and hash a row carries from column `first` on.
    void take(const MysqlRowView &row, unsigned first, CanonicalKey &key, std::int64_t &hash) const;

    /// One chunk as read: its rows (COPY lines) with their canonical keys and hashes.
    using SourceRow = HashedRow;
    using Outcome = RangeDiff;
    /// Compares the chunk's `rows` with the target's rows in [lo, hi) (nullopt: unbounded).
    Outcome compare(const std::vector<SourceRow> &rows, const std::optional<CanonicalKey> &lo,
                    const std::optional<CanonicalKey> &hi, std::int64_t version);

private:
    explicit MysqlLoadCompare(std::unique_ptr<recon::TableContext> ctx);

    std::unique_ptr<recon::TableContext> m_ctx;
    std::string m_extra;
    std::vector<int> m_keyColumns; ///< where each key column is in the row
    size_t m_columns = 0;
};

} // namespace driftless::core
