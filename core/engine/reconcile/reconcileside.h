#pragma once

#include "core/engine/reconcile/canonicalkey.h"
#include "core/engine/rows/rowhash.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

/// Internal to the reconciler: what one side of a comparison is asked, shared by the Postgres,
/// SQLite (reconciler.cpp) and MySQL/MariaDB (reconcilemysql.cpp) sides.
namespace driftless::core::recon {

/// A boundary key: the source's text of each key column, in the form Postgres reads for the
/// column's type (so every side can cast it back to its own type).
using RawKey = std::vector<std::string>;

/// Segments of one bisection level as a partition of the key space: interval i is
/// [edges[i-1], edges[i]) (unbounded below for i = 0, above for i = edges.size()), so a key's
/// interval is the number of edges at or below it (Postgres' width_bucket); labels[i] is the
/// segment it belongs to, or -1 for keys not being compared at this level.
struct Plan {
    std::vector<RawKey> edges;
    std::vector<int> labels{0};
};

/// A range of keys known to differ, with its rows on each side.
struct Range {
    std::optional<RawKey> lo, hi;
    long long rows[2] = {0, 0};
    long long size() const { return std::max(rows[0], rows[1]); }
};

struct RowData {
    CanonicalKey key;
    std::vector<std::optional<std::string>> values;
    std::int64_t hash = 0;
    /// The source row changed recently enough to be in flight (a cursor table's recent window, a
    /// full refresh table's rows written after its last pass's snapshot).
    bool recent = false;
    /// The target row's `_driftless_version` as stored (composed), when Side::readVersions.
    std::int64_t version = 0;
};

/// Builds the CASE expression that maps a key to its segment by binary search over the edges.
/// `lt(edge)` renders "key < edge" and registers the edge's parameters.
inline std::string caseTree(const Plan &p, size_t lo, size_t hi, const std::function<std::string(size_t)> &lt)
{
    bool same = true;
    for (size_t i = lo + 1; i <= hi && same; ++i)
        same = p.labels[i] == p.labels[lo];
    if (same)
        return p.labels[lo] < 0 ? "NULL" : std::to_string(p.labels[lo]);
    // Intervals lo..mid lie below edge `mid`.
    const size_t mid = (lo + hi) / 2;
    return "CASE WHEN " + lt(mid) + " THEN " + caseTree(p, lo, mid, lt) + " ELSE " + caseTree(p, mid + 1, hi, lt) +
           " END";
}

/// The condition `lo` <= key < `hi` (`lo` < key with `loExclusive`) over a key's columns
/// (`columns`, as the side names them), as a row comparison for a composite key; a bound's column
/// k is rendered by `value(bound, k)` (a placeholder it binds, or a literal). Empty when both
/// bounds are unbounded.
inline std::string keyRangeSql(const std::vector<std::string> &columns, const std::optional<RawKey> &lo,
                               const std::optional<RawKey> &hi,
                               const std::function<std::string(const RawKey &, size_t)> &value,
                               bool loExclusive = false)
{
    auto bound = [&](const RawKey &key, const char *op) {
        std::string lhs, rhs;
        for (size_t k = 0; k < columns.size(); ++k) {
            lhs += std::string(k ? ", " : "") + columns[k];
            rhs += std::string(k ? ", " : "") + value(key, k);
        }
        return columns.size() == 1 ? lhs + " " + op + " " + rhs : "(" + lhs + ") " + op + " (" + rhs + ")";
    };
    std::string where;
    if (lo)
        where = bound(*lo, loExclusive ? ">" : ">=");
    if (hi)
        where += (where.empty() ? "" : " AND ") + bound(*hi, "<");
    return where;
}

/// One side of a comparison: a table in one database, hashed in that database.
/// Thread affinity: one thread at a time (the comparer runs the two sides on two threads).
class Side {
public:
    virtual ~Side() = default;
    /// (count, hash sum) per segment that has rows.
    virtual std::map<int, rowhash::Checksum> checksums(const Plan &plan) = 0;
    /// Every `step`-th key of each segment, in key order, as (segment, key).
    virtual std::vector<std::pair<int, RawKey>> sample(const Plan &plan, long long step) = 0;
    /// Every row of the segments as (canonical key, hash).
    virtual void hashes(const Plan &plan, const std::function<void(CanonicalKey &&, std::int64_t)> &row) = 0;
    /// Every row with `lo` <= key < `hi` (`lo` < key with `loExclusive`; unbounded where nullopt)
    /// as (canonical key, hash), read by the key's order (an index range) rather than a scan of
    /// the table. Only for keys this side orders as the canonical comparison assumes
    /// (keysOrderable).
    virtual void rangeHashes(const std::optional<RawKey> &lo, const std::optional<RawKey> &hi,
                             const std::function<void(CanonicalKey &&, std::int64_t)> &row,
                             bool loExclusive = false) = 0;
    /// The rows with these keys, by record text of the key.
    virtual std::unordered_map<std::string, RowData> rows(const std::vector<CanonicalKey> &keys) = 0;
    /// A table without a primary key: every row whose hash is one of `hashes`, with its values
    /// (and `recent`, `version` as rows() reads them); the key is empty. One scan of the table.
    virtual std::vector<RowData> rowsByHash(const std::vector<std::int64_t> &hashes) = 0;
    virtual std::string describe() const = 0;
    /// Whether the key is one integer column this side can bucket by value (keyBounds and
    /// bucketChecksums below): the first pass then checksums small buckets in the one scan it
    /// makes anyway, instead of the whole table and then sampled segments.
    virtual bool bucketsByKey() const { return false; }
    /// The smallest and largest key; nullopt when the table has no rows.
    virtual std::optional<std::pair<std::int64_t, std::int64_t>> keyBounds() { return std::nullopt; }
    /// (count, hash sum) per non-empty bucket: a key k in [lo, hi] is in bucket (k - lo) / width,
    /// a key below lo (written since the bounds were read) in bucket -1, one above hi in bucket
    /// `last` (the bucket of hi). hi - lo fits in 63 bits.
    virtual std::map<int, rowhash::Checksum> bucketChecksums(std::int64_t, std::int64_t, std::int64_t, int)
    {
        return {};
    }
    /// Whether this side's storage orders the key as the canonical comparison assumes (bytes for
    /// text, numbers for numbers); a MySQL collation may not.
    virtual bool keysOrderable() const { return true; }

    /// rows() also reads each row's `_driftless_version` (a target side: which pass wrote it).
    bool readVersions = false;
    int queries = 0;
    long long fetched = 0;
};

} // namespace driftless::core::recon
