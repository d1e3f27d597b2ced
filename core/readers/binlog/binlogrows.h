#pragma once

// A binlog Rows event as changes to one table's rows: the images, mapped into the table's column
// order, as COPY text lines of a RowSet (the form both CDC sources hand to the apply side).

#include "core/model/batch.h"
#include "core/model/tableschema.h"
#include "core/readers/binlog/binlogdecoder.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace driftless::core::binlog {

/// Turns Rows events into changes of one table's rows. Holds only scratch space: one per stream.
///
/// Thread affinity: the thread that owns it.
class RowImages {
public:
    /// Appends the changes of `rows` to `out`, at `version`, in `schema`'s column order:
    /// `layout[i]` is schema column i's index in the event's TABLE_MAP (-1: the map lacks it,
    /// a column added after the event was written: an update keeps the target's value, an insert
    /// gets NULL). A value the image lacks (binlog_row_image MINIMAL or NOBLOB) is marked
    /// unchanged. An update that changes the primary key is a delete of the old key and an insert.
    /// `keepBefore` (two-way conflict detection): each change carries the row as it was, or
    /// none for a key that had no row. Returns how many source changes were appended.
    long long append(const TableSchema &schema, const std::vector<int> &layout, const Rows &rows, std::int64_t version,
                     bool keepBefore, RowSet &out);

private:
    /// `keyFrom`: the before image of an update, whose key stands in for one the after image
    /// lacks (a MINIMAL image logs only the changed columns there).
    void image(const TableSchema &schema, const std::vector<int> &layout, const Image &img, ChangeOp op,
               std::int64_t version, RowSet &out, const Image *keyFrom = nullptr);
    /// The key fields of a line, for comparing a row's key before and after an update.
    std::string keyOf(std::string_view line, const std::vector<int> &keys);

    std::string m_line, m_mask;
    std::vector<std::string_view> m_fields;
    RowSet m_probe;
};

} // namespace driftless::core::binlog
