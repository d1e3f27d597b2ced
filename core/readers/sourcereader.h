#pragma once

#include "core/model/batch.h"
#include "core/model/tableschema.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace driftless::core {

struct CursorState;

/// Reads a whole source table for a full refresh, in one consistent snapshot, as COPY text
/// chunks of whole rows with the snapshot's version appended to every row as the last field.
/// Implemented per source engine (PgFullRefreshReader, MysqlFullRefreshReader).
class FullRefreshReader {
public:
    virtual ~FullRefreshReader() = default;

    struct Snapshot {
        std::int64_t version = 0; ///< the source's position when the snapshot was taken
        std::string sourceNow;    ///< the source's clock at that moment (timestamptz text)
    };

    /// Opens the snapshot transaction.
    virtual Snapshot begin() = 0;
    /// Streams every row to `sink`; returns the number of rows.
    virtual long long read(const std::function<void(std::string_view chunk)> &sink) = 0;
    /// Ends the snapshot transaction.
    virtual void finish() = 0;
};

/// Reads a table by keyset on (cursor column, primary key) for cursor sync: an initial load in
/// primary-key chunks, then passes that start `lookback` behind the stored cursor. Implemented
/// per source engine (PgCursorReader, MysqlCursorReader); the state (CursorState) is the same.
class CursorReader {
public:
    virtual ~CursorReader() = default;

    virtual void beginLoad(CursorState &st) = 0;
    /// Reads the next primary-key chunk into `out` (marked for direct load) and advances the
    /// state; returns false when the table is exhausted.
    virtual bool loadChunk(CursorState &st, Batch &out) = 0;
    virtual void finishLoad(CursorState &st) = 0;

    virtual void beginPass(CursorState &st) = 0;
    /// Reads the next page of this pass into `out` and advances the state; returns false when
    /// the pass has read everything.
    virtual bool passPage(CursorState &st, Batch &out) = 0;
    /// Moves the cursor to the greatest value read, capped at the pass's start time.
    virtual void finishPass(CursorState &st) = 0;

    virtual const TableSchema &schema() const = 0;
};

} // namespace driftless::core
