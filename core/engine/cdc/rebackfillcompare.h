#pragma once

#include "core/model/tableschema.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace driftless::core {

class Merger;
class PgConnection;
class PgMerger;
struct TableJob;

/// What one compared page of a re-backfill did.
struct RebackfillPage {
    long long rows = 0;      ///< the snapshot's rows in the page
    long long equalRows = 0; ///< of them, in buckets the target already held alike (not copied)
    long long written = 0;   ///< target rows the merge changed
    long long removed = 0;   ///< target rows the source no longer has, deleted
    std::string last;        ///< the page's last key value (inclusive): the progress
    bool end = false;        ///< the page reached past the snapshot's largest key: the copy is done
};

/// A re-backfill of a Postgres table into a Postgres target with a one-column integer key, that
/// compares before it copies. The key space is walked in pages of about `limit` rows by key
/// value; each page is checksummed on both sides at once in buckets of about kBucketRows keys
/// (one hashing range scan a side), and only the buckets that differ are read from the snapshot,
/// merged under the version guard, and cleared of the target rows the snapshot lacks. A table the
/// target already holds (most of one a DBA re-backfills on suspicion of drift) then costs a
/// hashing scan of each side instead of copying and comparing every row through staging, and
/// nothing is left to delete at the end: each page removes its own.
class RebackfillCompare {
public:
    static constexpr long long kBucketRows = 64;

    /// Null when the table cannot be compared this way (another target or key, a column mapping,
    /// a row filter, soft deletes, a two-way table, keys spread over more than 63 bits, an empty
    /// snapshot): the re-backfill then copies every row. `loader` is in the snapshot.
    static std::unique_ptr<RebackfillCompare> open(const TableJob &job, const TableSchema &schema,
                                                   const std::vector<std::string> &streamColumns, Merger &merger,
                                                   PgConnection &loader);
    ~RebackfillCompare();

    /// Compares and repairs the page after `after` (empty: the first): the snapshot's half on the
    /// loader, the target's on the merger's connection in the caller's transaction, at once.
    /// Rows read are versioned `version`; target rows below `below` that the snapshot lacks go.
    RebackfillPage step(const std::vector<std::string> &after, long long limit, std::int64_t version,
                        std::int64_t below);

private:
    RebackfillCompare(const TableJob &job, const TableSchema &schema, PgMerger &merger, PgConnection &loader,
                      std::string hash, std::int64_t minKey, std::int64_t maxKey);

    TableSchema m_schema;
    std::string m_keyName, m_key, m_keyType, m_targetSql;
    PgMerger &m_merger;
    PgConnection &m_loader;
    std::string m_hash; ///< a row's hash over alias `s`, the same expression on both sides
    std::int64_t m_minKey = 0, m_maxKey = 0;
    std::int64_t m_typeMin = 0, m_typeMax = 0;
    double m_span = 0; ///< keys per page, adapted to the rows each page held
};

} // namespace driftless::core
