#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace driftless::core {

/// What happened to a row at the source.
enum class ChangeOp : char { Insert = 'i', Update = 'u', Delete = 'd' };

/// Rows in COPY text form (fields separated by TAB, no trailing newline), each with its change
/// operation and source version. Rows live in one contiguous buffer so a batch costs one
/// allocation per growth step, not one per row or per value.
///
/// For deletes only the key columns carry values; the rest are NULL.
///
/// A row may carry an "unchanged" mask (one '0'/'1' per column): '1' marks a column whose value
/// the source did not send because it did not change (pgoutput's unchanged TOAST 'u'); its field
/// holds NULL and the merge keeps the target's value.
class RowSet;

/// The keys (columns `keyColumns`) of rows[picked[from]] .. rows[picked[to - 1]] as one Postgres
/// text[] literal per key column (`{"1","2"}`): the parameters of an `unnest($1::text[], ...)
/// WITH ORDINALITY` lookup of a batch of keys in one round trip.
std::vector<std::string> pgKeyArrays(const RowSet &rows, const std::vector<size_t> &picked, size_t from, size_t to,
                                     const std::vector<int> &keyColumns);

class RowSet {
public:
    struct Row {
        std::uint32_t offset;
        std::uint32_t length;
        ChangeOp op;
        std::int64_t version;
        std::int32_t unchanged = -1; ///< index of the row's unchanged mask, or -1
        /// Two-way tables: index of the row's before-image (the base a conflict check compares the
        /// target's row with), kNoBase when the key had no row before (an insert), or -1 when
        /// the change carries none.
        std::int32_t before = -1;
    };
    static constexpr std::int32_t kNoBase = -2;

    /// Appends a row; a trailing newline on `line` is dropped.
    void append(std::string_view line, ChangeOp op, std::int64_t version, std::string_view unchangedMask = {});
    /// The row's unchanged mask, empty when every column was sent.
    std::string_view unchangedMask(size_t i) const
    {
        return m_rows[i].unchanged < 0 ? std::string_view()
                                       : std::string_view(m_masks[static_cast<size_t>(m_rows[i].unchanged)]);
    }
    bool hasUnchanged() const { return !m_masks.empty(); }
    /// Records row i's before-image (COPY text, every column): the row as it was at the source
    /// before this change. Only two-way tables keep them (REPLICA IDENTITY FULL).
    void setBefore(size_t i, std::string_view line);
    /// Marks row i as a change of a key that had no row before it (an insert).
    void setNoBase(size_t i) { m_rows[i].before = kNoBase; }
    std::int32_t beforeIndex(size_t i) const { return m_rows[i].before; }
    std::string_view before(size_t i) const
    {
        return m_rows[i].before < 0 ? std::string_view()
                                    : std::string_view(m_befores[static_cast<size_t>(m_rows[i].before)]);
    }
    /// Two-way tables: the commit time of row i's transaction at its source (microseconds since
    /// the Unix epoch, from pgoutput's Begin), which `newer_wins: { clock: commit_time }` compares.
    void setCommitTime(size_t i, std::int64_t unixMicros);
    /// 0 when unknown.
    std::int64_t commitTime(size_t i) const { return i < m_commitTimes.size() ? m_commitTimes[i] : 0; }
    size_t size() const { return m_rows.size(); }
    bool empty() const { return m_rows.empty(); }
    std::string_view line(size_t i) const { return {m_data.data() + m_rows[i].offset, m_rows[i].length}; }
    const Row &row(size_t i) const { return m_rows[i]; }
    size_t bytes() const { return m_data.size(); }
    void clear();
    void reserve(size_t rows, size_t bytes);

    /// Keeps only the last row of each key (key = the raw text of the fields at `keyColumns`),
    /// in the order those last rows appeared. Within one batch the engine stages at most one row
    /// per key, so the merge never has to pick among duplicates. A kept row with unchanged
    /// columns inherits their values from the key's earlier row in the batch (an insert and a
    /// later partial update become one full row); what no earlier row had stays unchanged.
    /// The kept row takes the before-image of the key's FIRST row in the batch: the base both
    /// sides started from, which conflict detection compares the target's row with.
    void foldByKey(const std::vector<int> &keyColumns);

private:
    std::string m_data;
    std::vector<Row> m_rows;
    std::vector<std::string> m_masks;
    std::vector<std::string> m_befores;
    std::vector<std::int64_t> m_commitTimes; ///< by row; empty unless set
};

/// Where a table's sync stands, as stored in the target's `_driftless.checkpoints` (the
/// authority) and mirrored in the workspace. `position` is strategy-specific JSON.
struct Checkpoint {
    std::string position;
    std::int64_t version = 0;
    bool operator==(const Checkpoint &) const = default;
};

/// One unit of apply work: rows plus the checkpoint to store in the same transaction.
struct Batch {
    std::uint64_t id = 0;
    RowSet rows;
    Checkpoint checkpoint;
    /// Workstation time (ms since epoch) the source data of this batch is known fresh as of.
    std::int64_t freshAsOfMs = 0;
    /// True when the rows may go straight into the target with COPY (initial load of disjoint
    /// key ranges into a table that had no rows in that range): no staging, no merge.
    bool directLoad = false;
};

} // namespace driftless::core
