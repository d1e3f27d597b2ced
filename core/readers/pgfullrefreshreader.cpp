#include "core/readers/pgfullrefreshreader.h"

#include "core/db/pgcatalog.h"

namespace driftless::core {

PgFullRefreshReader::PgFullRefreshReader(PgConnection &conn, TableSchema schema, std::string filter)
    : m_conn(conn), m_schema(std::move(schema)), m_filter(std::move(filter))
{
}

PgFullRefreshReader::Snapshot PgFullRefreshReader::begin()
{
    m_conn.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY");
    // The first query takes the snapshot; the WAL position read with it is at or past every
    // commit the snapshot sees, so it orders this copy after them.
    auto r = m_conn.exec("SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
                         "ELSE pg_current_wal_insert_lsn() END - '0/0'::pg_lsn)::bigint, now()::text");
    m_snapshot.version = r.toInt(0, 0);
    m_snapshot.sourceNow = r.text(0, 1);
    return m_snapshot;
}

long long PgFullRefreshReader::read(const std::function<void(std::string_view chunk)> &sink)
{
    std::string cols;
    for (const auto &c : m_schema.columns)
        cols += quoteIdent(c.name) + ", ";
    std::string sql = "COPY (SELECT " + cols + std::to_string(m_snapshot.version) + "::bigint FROM " +
                      m_schema.fromSql() + (m_filter.empty() ? "" : " WHERE (" + m_filter + ")") + ") TO STDOUT";
    constexpr size_t kChunk = 1 << 20;
    std::string buf;
    buf.reserve(kChunk + 65536);
    long long n = m_conn.copyOut(sql, [&](std::string_view row) {
        buf.append(row);
        if (buf.size() >= kChunk) {
            sink(buf);
            buf.clear();
        }
    });
    if (!buf.empty())
        sink(buf);
    return n;
}

void PgFullRefreshReader::finish()
{
    m_conn.commit();
}

} // namespace driftless::core
