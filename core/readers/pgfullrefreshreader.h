#pragma once

#include "core/db/pgconnection.h"
#include "core/model/tableschema.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace driftless::core {

/// Reads a whole Postgres table for a full refresh: one COPY in one REPEATABLE READ snapshot,
/// passed on as COPY text chunks of whole rows (about 1 MiB each) with the snapshot's version
/// appended to every row as the last field. Values stay the bytes the server sent.
///
/// Thread affinity: the thread that owns `conn`.
class PgFullRefreshReader {
public:
    PgFullRefreshReader(PgConnection &conn, TableSchema schema);

    struct Snapshot {
        std::int64_t version = 0;  ///< WAL position when the snapshot was taken
        std::string sourceNow;     ///< the source's clock at that moment (timestamptz text)
    };

    /// Opens the snapshot transaction.
    Snapshot begin();
    /// Streams every row to `sink`; returns the number of rows.
    long long read(const std::function<void(std::string_view chunk)> &sink);
    /// Ends the snapshot transaction.
    void finish();

private:
    PgConnection &m_conn;
    TableSchema m_schema;
    Snapshot m_snapshot;
};

} // namespace driftless::core
