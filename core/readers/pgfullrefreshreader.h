#pragma once

#include "core/db/pgconnection.h"
#include "core/model/tableschema.h"
#include "core/readers/sourcereader.h"

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
class PgFullRefreshReader : public FullRefreshReader {
public:
    /// `filter`: a row filter (`where:`) the rows must hold, or empty.
    PgFullRefreshReader(PgConnection &conn, TableSchema schema, std::string filter = {});

    /// Opens the snapshot transaction; the version is the WAL position of the snapshot.
    Snapshot begin() override;
    long long read(const std::function<void(std::string_view chunk)> &sink) override;
    void finish() override;

private:
    PgConnection &m_conn;
    TableSchema m_schema;
    std::string m_filter;
    Snapshot m_snapshot;
};

} // namespace driftless::core
