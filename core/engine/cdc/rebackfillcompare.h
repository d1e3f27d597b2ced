#pragma once

#include "core/mergers/pgmerger.h"
#include "core/model/tableschema.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

namespace recon {
class Side;
}

class Merger;

/// A source row as a comparing copy reads it: its canonical key and 60-bit hash (rowhash.h),
/// and its COPY text.
struct HashedRow {
    std::vector<std::string> key;
    std::int64_t hash = 0;
    std::string line;
};

/// What comparing source rows with the target's rows of their key range stages.
struct RangeDiff {
    RowSet staged;         ///< the rows that differ or the target lacks, and deletes by key
    long long alike = 0;   ///< source rows the target held alike (not copied)
    long long copied = 0;  ///< source rows staged
    long long removed = 0; ///< target rows staged for deletion
};

/// Compares `rows` (every source row of a key range, in any order; one read past the range's
/// start is compared with nothing and copied) with the rows `target` holds from `lo` (inclusive,
/// or exclusive with `loExclusive`) to `hi` (exclusive), unbounded where nullopt, by hash. Stages
/// at `version` the rows that differ or that the target lacks, and deletes of the range's target
/// rows that `rows` lacks: a row of `columns` columns whose key columns (`keyColumns`, in key
/// order) hold the canonical key. The guarded merge of `staged` then repairs the range.
RangeDiff diffRange(const std::vector<HashedRow> &rows, recon::Side &target,
                    const std::optional<std::vector<std::string>> &lo,
                    const std::optional<std::vector<std::string>> &hi, bool loExclusive,
                    const std::vector<int> &keyColumns, size_t columns, std::int64_t version);
struct TableJob;

/// What one compared page of a re-backfill did.
struct RebackfillPage {
    long long rows = 0;            ///< the snapshot's rows in the page
    long long equalRows = 0;       ///< of them, in buckets the target already held alike (not copied)
    long long written = 0;         ///< target rows the merge changed
    long long removed = 0;         ///< target rows the source no longer has, deleted
    std::vector<std::string> last; ///< the page's last key (inclusive), a value a key column: the progress
    bool end = false;              ///< the page reached past the snapshot's largest key: the copy is done
};

/// A re-backfill that compares each page of the snapshot with the target before it copies: the
/// page's rows that differ are merged under the version guard at the snapshot's version, and the
/// target's rows there that the snapshot lacks are removed, in the caller's transaction.
class RebackfillComparer {
public:
    virtual ~RebackfillComparer() = default;
    /// Compares and repairs the page after `after` (empty: the first). Rows read are versioned
    /// `version`; target rows below `below` that the snapshot lacks go.
    virtual RebackfillPage step(const std::vector<std::string> &after, long long limit, std::int64_t version,
                                std::int64_t below) = 0;
};

/// A re-backfill of a Postgres table into a Postgres target that compares before it copies. The
/// key space is walked in pages of about `limit` rows; each page is checksummed on both sides at
/// once in buckets of about kBucketRows keys, and only the buckets that differ are read from the
/// snapshot, merged under the version guard, and cleared of the target rows the snapshot lacks.
/// A table the target already holds (most of one a DBA re-backfills on suspicion of drift, or
/// brings back after a source change) then costs a hashing scan of each side instead of copying
/// and comparing every row through staging, and nothing is left to delete at the end: each page
/// removes its own.
///
/// A one-column integer key is bucketed by value (one hashing range scan a side). Any other key
/// the engine syncs (composite, text, uuid, numeric, dates) is walked by keyset: the snapshot's
/// page of keys gives the bucket bounds (every kBucketRows-th key), and each side hashes its rows
/// between consecutive bounds by index range. A text key is compared so only where both servers
/// order it alike (the same collation, provider and version): else buckets could hold different
/// rows on each side, and the copy takes every row.
class RebackfillCompare final : public RebackfillComparer {
public:
    static constexpr long long kBucketRows = 64;

    /// Null when the table cannot be compared this way (another target, a key type without a
    /// shared order, a column mapping, a row filter, soft deletes, a two-way table, an empty
    /// snapshot): the re-backfill then copies every row. `loader` is in the snapshot.
    static std::unique_ptr<RebackfillCompare> open(const TableJob &job, const TableSchema &schema,
                                                   const std::vector<std::string> &streamColumns, Merger &merger,
                                                   PgConnection &loader);
    ~RebackfillCompare();

    /// Compares and repairs the page after `after` (empty: the first): the snapshot's half on the
    /// loader, the target's on the merger's connection in the caller's transaction, at once.
    /// Rows read are versioned `version`; target rows below `below` that the snapshot lacks go.
    RebackfillPage step(const std::vector<std::string> &after, long long limit, std::int64_t version,
                        std::int64_t below) override;

private:
    RebackfillCompare(const TableJob &job, const TableSchema &schema, PgMerger &merger, PgConnection &loader,
                      std::string hash, std::int64_t minKey, std::int64_t maxKey);
    RebackfillCompare(const TableJob &job, const TableSchema &schema, PgMerger &merger, PgConnection &loader,
                      std::string hash);
    RebackfillPage integerStep(const std::vector<std::string> &after, long long limit, std::int64_t version,
                               std::int64_t below);
    RebackfillPage keysetStep(const std::vector<std::string> &after, long long limit, std::int64_t version,
                              std::int64_t below);
    /// Merges the snapshot's rows of the buckets `scopes` select (alias s on the loader, t on
    /// the target) and removes the target rows there the snapshot lacks.
    void copyScopes(const std::string &rowsSql, const std::vector<std::pair<std::string, std::string>> &settings,
                    const std::vector<PgMerger::SnapshotScope> &scopes, std::int64_t version, std::int64_t below,
                    RebackfillPage &page);

    TableSchema m_schema;
    bool m_keyset = false;                           ///< walked by keyset (any key) rather than by integer value
    std::vector<std::string> m_keyNames, m_keyTypes; ///< the key's columns and their SQL types
    std::string m_keyName, m_key, m_keyType, m_targetSql;
    PgMerger &m_merger;
    PgConnection &m_loader;
    std::string m_hash;       ///< a row's hash over alias `s`, the same expression on both sides
    std::string m_columnsSql; ///< every column over alias `s`, as the copy reads them
    std::int64_t m_minKey = 0, m_maxKey = 0;
    std::int64_t m_typeMin = 0, m_typeMax = 0;
    double m_span = 0; ///< keys per page, adapted to the rows each page held
};

/// The same into a SQLite or MySQL/MariaDB target, for an integer key (one column or several):
/// each page of the snapshot is read with, beside every row, its canonical key and hash
/// (rowhash.h, in SQL on the snapshot), and the target hashes its rows of the page's key range
/// alike by index range (the reconciler's side of that target); only the rows whose hash differs
/// or that the target lacks are merged, and the target's rows in the range the snapshot lacks are
/// deleted. The range runs from past the last page's last key to the first key past this page,
/// so the pages leave no key of the target unseen and nothing is left for the end.
class RebackfillCompareRows final : public RebackfillComparer {
public:
    /// Null when the table cannot be compared this way (a Postgres target, which RebackfillCompare
    /// takes unless `intoPostgres`, for an adopted table whose alike rows must stay as they are; a
    /// key that is not integers; a column mapping, a row filter, soft deletes, two-way; a target
    /// that cannot be opened). `schema` is the table as the copy reads it.
    static std::unique_ptr<RebackfillCompareRows> open(const TableJob &job, const TableSchema &schema, Merger &merger,
                                                       PgConnection &loader, bool intoPostgres = false);
    ~RebackfillCompareRows() override;
    RebackfillPage step(const std::vector<std::string> &after, long long limit, std::int64_t version,
                        std::int64_t below) override;

private:
    struct Target;
    RebackfillCompareRows(const TableSchema &schema, Merger &merger, PgConnection &loader,
                          std::unique_ptr<Target> target);

    TableSchema m_schema;
    Merger &m_merger;
    PgConnection &m_loader;
    std::unique_ptr<Target> m_target;
    std::string m_select; ///< the page query up to its WHERE: canonical keys, hash, every column as text
    std::string m_keys;   ///< the key columns over alias `s`, in order
    std::vector<std::string> m_keyTypes;
};

} // namespace driftless::core
