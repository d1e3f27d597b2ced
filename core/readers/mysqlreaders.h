#pragma once

#include "core/db/mysqlcatalog.h"
#include "core/db/mysqlconnection.h"
#include "core/model/workspace.h"
#include "core/readers/sourcereader.h"

#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// Reads a whole MySQL/MariaDB table in one consistent snapshot (START TRANSACTION WITH
/// CONSISTENT SNAPSHOT), streaming the rows (never buffering the table) as COPY text in the
/// form of docs/type-mapping.md. The version is the snapshot's binlog position (MariaDB reports
/// it exactly), or the source clock without a binary log.
///
/// Thread affinity: the thread that owns `conn`; a stop is `conn.killQuery()` from any thread.
class MysqlFullRefreshReader : public FullRefreshReader {
public:
    /// `filter`: a row filter (`where:`) the rows must hold, or empty.
    MysqlFullRefreshReader(MysqlConnection &conn, mysqlcatalog::MysqlTable table, std::string filter = {});

    Snapshot begin() override;
    long long read(const std::function<void(std::string_view chunk)> &sink) override;
    void finish() override;

private:
    MysqlConnection &m_conn;
    mysqlcatalog::MysqlTable m_table;
    std::string m_filter;
    Snapshot m_snapshot;
};

/// Cursor sync from MySQL/MariaDB, with the guarantees of PgCursorReader: keyset pages on
/// (cursor, primary key), each in its own consistent snapshot; passes start `lookback` behind
/// the stored cursor; the cursor never moves past the source's clock at the start of the pass
/// (UTC for TIMESTAMP columns, the server's local time for DATETIME and DATE, which applications
/// usually fill with NOW()). Values travel as user variables set through a prepared statement
/// and read back with their column's type, never as SQL text.
class MysqlCursorReader : public CursorReader {
public:
    /// Throws SchemaError when the table has no primary key, or the cursor column is missing or
    /// not a date/time or integer/decimal column.
    MysqlCursorReader(MysqlConnection &conn, mysqlcatalog::MysqlTable table, TableSpec spec);

    void beginLoad(CursorState &st) override;
    bool loadChunk(CursorState &st, Batch &out) override;
    void finishLoad(CursorState &st) override;
    void beginPass(CursorState &st) override;
    bool passPage(CursorState &st, Batch &out) override;
    void finishPass(CursorState &st) override;
    const TableSchema &schema() const override { return m_table.schema; }

private:
    std::string m_filter;   ///< the row filter in parentheses, or empty
    std::string m_passList; ///< the select list of a pass: the filter's verdict last
    long long readPage(const std::string &sql, const std::vector<std::string> &values, Batch &out,
                       std::vector<std::string> &last, bool withCursor);
    /// `(k1 > @pN) OR (k1 = @pN AND k2 > @pN+1) ...` over `cols` starting at variable `first`.
    std::string after(const std::vector<int> &cols, int first) const;
    std::string nowExpr();

    MysqlConnection &m_conn;
    mysqlcatalog::MysqlTable m_table;
    TableSpec m_spec;
    int m_cursorIndex = -1;
    bool m_temporal = false;
    long long m_lookbackMicros = 0;
    std::string m_lookbackCount;
    std::string m_selectList, m_from, m_keyOrder, m_limit;
    std::vector<int> m_keyCols, m_cursorKeyCols;
};

} // namespace driftless::core
