#include "core/readers/mysqlreaders.h"

#include "core/model/duration.h"
#include "core/model/error.h"
#include "core/readers/pgcursorreader.h"

#include <cstdlib>

namespace driftless::core {

using namespace mysqlcatalog;

namespace {

constexpr size_t kChunkBytes = 1 << 20;
const char *kFormat = "'%Y-%m-%d %H:%i:%s.%f'";

std::string selectList(const MysqlTable &t)
{
    std::string s;
    for (const auto &c : t.columns)
        s += (s.empty() ? "" : ", ") + selectExpr(c);
    return s;
}

std::string fromClause(const TableRef &t)
{
    return " FROM " + mysqlIdent(t.schema) + "." + mysqlIdent(t.name);
}

/// Appends the row's columns as COPY text.
void appendRow(const MysqlTable &t, const MysqlRowView &row, std::string &line)
{
    for (size_t i = 0; i < t.columns.size(); ++i) {
        if (i)
            line += '\t';
        appendValue(t, i, row, static_cast<unsigned>(i), line);
    }
}

std::string trimDecimal(std::string v)
{
    if (v.find('.') == std::string::npos)
        return v;
    while (!v.empty() && v.back() == '0')
        v.pop_back();
    if (!v.empty() && v.back() == '.')
        v.pop_back();
    return v;
}

} // namespace

MysqlFullRefreshReader::MysqlFullRefreshReader(MysqlConnection &conn, MysqlTable table, std::string filter)
    : m_conn(conn), m_table(std::move(table)), m_filter(std::move(filter))
{
}

FullRefreshReader::Snapshot MysqlFullRefreshReader::begin()
{
    m_conn.exec("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    m_conn.exec("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
    m_snapshot = {};
    // MariaDB reports the binlog position the snapshot corresponds to exactly.
    if (auto p = snapshotPosition(m_conn))
        m_snapshot.version = binlog::positionVersion(*p);
    else
        m_snapshot.version = currentVersion(m_conn);
    m_snapshot.sourceNow = sourceNowUtc(m_conn) + "+00";
    return m_snapshot;
}

long long MysqlFullRefreshReader::read(const std::function<void(std::string_view chunk)> &sink)
{
    const std::string version = std::to_string(m_snapshot.version);
    std::string chunk;
    chunk.reserve(kChunkBytes + 4096);
    long long rows = m_conn.stream("SELECT " + selectList(m_table) + fromClause(m_table.schema.table) +
                                       (m_filter.empty() ? "" : " WHERE (" + m_filter + ")"),
                                   [&](const MysqlRowView &row) {
                                       appendRow(m_table, row, chunk);
                                       chunk += '\t';
                                       chunk += version;
                                       chunk += '\n';
                                       if (chunk.size() >= kChunkBytes) {
                                           sink(chunk);
                                           chunk.clear();
                                       }
                                   });
    if (!chunk.empty())
        sink(chunk);
    return rows;
}

void MysqlFullRefreshReader::finish()
{
    m_conn.exec("COMMIT");
}

MysqlCursorReader::MysqlCursorReader(MysqlConnection &conn, MysqlTable table, TableSpec spec)
    : m_conn(conn), m_table(std::move(table)), m_spec(std::move(spec))
{
    const TableSchema &s = m_table.schema;
    if (!s.hasPrimaryKey())
        throw SchemaError("table " + s.table.display() +
                              " has no primary key; cursor sync deduplicates by key and cannot run without one",
                          "add a primary key on the source, or use strategy full_refresh");
    const std::string cursorName = m_spec.cursorColumn();
    m_cursorIndex = s.columnIndex(cursorName);
    if (m_cursorIndex < 0)
        throw SchemaError("cursor column " + cursorName + " does not exist in " + s.table.display(),
                          "set 'cursor:' to a timestamp or increasing number column of the table");
    const MysqlColumn &cc = m_table.columns[static_cast<size_t>(m_cursorIndex)];
    m_temporal = isTemporal(cc);
    if (!m_temporal && !isNumeric(cc))
        throw SchemaError("cursor column " + cursorName + " has type " + cc.columnType +
                              "; a cursor must be a DATETIME, TIMESTAMP, DATE or integer/decimal column",
                          "choose another cursor column");
    std::string lb = m_spec.lookback.value_or(m_temporal ? TableSpec::kDefaultLookback : "0");
    const bool isCount = lb.find_first_not_of("0123456789") == std::string::npos;
    if (m_temporal) {
        auto d = parseDuration(lb);
        if (!d)
            throw SchemaError("lookback '" + lb + "' is not a duration", "write e.g. lookback: 10m");
        m_lookbackMicros = d->count() * 1000;
    } else {
        if (!isCount)
            throw SchemaError("lookback '" + lb + "' is a duration, but cursor column " + cursorName + " is a number",
                              "write the lookback as a count of values, e.g. lookback: 1000");
        m_lookbackCount = lb;
    }
    m_selectList = selectList(m_table);
    m_from = fromClause(s.table);
    // A row filter: the initial load reads the rows it holds for; a pass reads every changed
    // row with the filter's verdict as a last column, and a row outside it becomes a delete.
    if (m_spec.where)
        m_filter = "(" + *m_spec.where + ")";
    m_passList = m_selectList + (m_filter.empty() ? "" : ", (" + m_filter + ") IS TRUE");
    m_keyCols = s.primaryKey;
    m_cursorKeyCols.push_back(m_cursorIndex);
    m_cursorKeyCols.insert(m_cursorKeyCols.end(), m_keyCols.begin(), m_keyCols.end());
    for (int k : m_keyCols)
        m_keyOrder += (m_keyOrder.empty() ? "" : ", ") + mysqlIdent(m_table.columns[static_cast<size_t>(k)].name);
    m_limit = " LIMIT " + std::to_string(m_spec.effectivePageSize());
    m_conn.exec("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
}

std::string MysqlCursorReader::after(const std::vector<int> &cols, int first) const
{
    return keysetAfter(m_table, cols, first);
}

std::string MysqlCursorReader::nowExpr()
{
    const MysqlColumn &cc = m_table.columns[static_cast<size_t>(m_cursorIndex)];
    if (cc.dataType == "timestamp")
        return m_conn.scalar("SELECT DATE_FORMAT(NOW(6), " + std::string(kFormat) + ")").value_or("");
    // DATETIME and DATE columns are usually written in the server's local time.
    m_conn.exec("SET time_zone = DEFAULT");
    std::optional<std::string> now;
    try {
        now = m_conn.scalar("SELECT DATE_FORMAT(NOW(6), " + std::string(kFormat) + ")");
    } catch (...) {
        m_conn.exec("SET time_zone = '+00:00'");
        throw;
    }
    m_conn.exec("SET time_zone = '+00:00'");
    return now.value_or("");
}

long long MysqlCursorReader::readPage(const std::string &sql, const std::vector<std::string> &values, Batch &out,
                                      std::vector<std::string> &last, bool withCursor)
{
    out.rows.clear();
    bindKeyset(m_conn, values);
    m_conn.exec("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
    try {
        // The snapshot's own binlog position (MariaDB), else one read after the snapshot was
        // taken: at or past every commit it sees.
        const auto exact = snapshotPosition(m_conn);
        const std::int64_t version = exact ? binlog::positionVersion(*exact) : currentVersion(m_conn);
        std::string line;
        const auto &cols = withCursor ? m_cursorKeyCols : m_keyCols;
        m_conn.stream(sql, [&](const MysqlRowView &row) {
            line.clear();
            appendRow(m_table, row, line);
            const bool outside =
                withCursor && !m_filter.empty() && row.text(static_cast<unsigned>(m_table.columns.size())) != "1";
            out.rows.append(line, outside ? ChangeOp::Delete : ChangeOp::Update, version);
            last.clear();
            for (int c : cols)
                last.push_back(paramText(m_table.columns[static_cast<size_t>(c)], row, static_cast<unsigned>(c)));
        });
        m_conn.exec("COMMIT");
        out.checkpoint.version = version;
    } catch (...) {
        try {
            m_conn.exec("ROLLBACK");
        } catch (const Error &) {
        }
        throw;
    }
    return static_cast<long long>(out.rows.size());
}

void MysqlCursorReader::beginLoad(CursorState &st)
{
    std::string columns = std::move(st.columns); // the engine's memory of the columns stays
    st = CursorState{};
    st.columns = std::move(columns);
    st.phase = CursorState::Phase::Load;
    if (m_temporal) {
        st.loadStartedAt = nowExpr();
    } else {
        const MysqlColumn &cc = m_table.columns[static_cast<size_t>(m_cursorIndex)];
        st.loadStartedAt = m_conn.scalar("SELECT MAX(" + mysqlIdent(cc.name) + ")" + m_from).value_or("");
    }
}

bool MysqlCursorReader::loadChunk(CursorState &st, Batch &out)
{
    std::vector<std::string> last;
    long long n = st.loadAfter.empty()
                      ? readPage("SELECT " + m_selectList + m_from + (m_filter.empty() ? "" : " WHERE " + m_filter) +
                                     " ORDER BY " + m_keyOrder + m_limit,
                                 {}, out, last, false)
                      : readPage("SELECT " + m_selectList + m_from + " WHERE (" + after(m_keyCols, 1) + ")" +
                                     (m_filter.empty() ? "" : " AND " + m_filter) + " ORDER BY " + m_keyOrder + m_limit,
                                 st.loadAfter, out, last, false);
    out.directLoad = true;
    if (n == 0)
        return false;
    st.loadAfter = last;
    return true;
}

void MysqlCursorReader::finishLoad(CursorState &st)
{
    std::string started = st.loadStartedAt;
    std::string columns = std::move(st.columns); // the engine's memory of the columns stays
    st = CursorState{};
    st.columns = std::move(columns);
    st.phase = CursorState::Phase::Incremental;
    if (!started.empty())
        st.cursor = started;
}

void MysqlCursorReader::beginPass(CursorState &st)
{
    st.phase = CursorState::Phase::Incremental;
    st.inPass = true;
    st.passAfter.clear();
    st.passRows = 0;
    st.passNow.reset();
    if (m_temporal)
        st.passNow = nowExpr();
    st.passFrom.reset();
    if (st.cursor) {
        if (m_temporal)
            st.passFrom = m_conn.scalar("SELECT DATE_FORMAT(CAST(? AS DATETIME(6)) - INTERVAL CAST(? AS SIGNED) "
                                        "MICROSECOND, " +
                                            std::string(kFormat) + ")",
                                        {*st.cursor, std::to_string(m_lookbackMicros)});
        else
            st.passFrom = trimDecimal(m_conn
                                          .scalar("SELECT CAST(? AS DECIMAL(65,30)) - CAST(? AS DECIMAL(65,30))",
                                                  {*st.cursor, m_lookbackCount})
                                          .value_or(*st.cursor));
    }
}

bool MysqlCursorReader::passPage(CursorState &st, Batch &out)
{
    const MysqlColumn &cc = m_table.columns[static_cast<size_t>(m_cursorIndex)];
    const std::string cur = mysqlIdent(cc.name);
    const std::string order = " ORDER BY " + cur + ", " + m_keyOrder;
    std::vector<std::string> last;
    long long n;
    if (!st.passAfter.empty())
        n = readPage("SELECT " + m_passList + m_from + " WHERE " + after(m_cursorKeyCols, 1) + order + m_limit,
                     st.passAfter, out, last, true);
    else if (st.passFrom)
        n = readPage("SELECT " + m_passList + m_from + " WHERE " + cur + " >= " + paramExpr(cc, "@p1") + order +
                         m_limit,
                     {*st.passFrom}, out, last, true);
    else
        n = readPage("SELECT " + m_passList + m_from + " WHERE " + cur + " IS NOT NULL" + order + m_limit, {}, out,
                     last, true);
    out.directLoad = false;
    if (n == 0)
        return false;
    st.passAfter = last;
    st.passRows += n;
    return true;
}

void MysqlCursorReader::finishPass(CursorState &st)
{
    std::optional<std::string> last;
    if (!st.passAfter.empty())
        last = st.passAfter[0];
    std::optional<std::string> next;
    if (m_temporal) {
        // The greatest value read, but never past the source's clock at the start of the pass.
        std::optional<std::string> capped = last;
        if (st.passNow)
            capped = m_conn.scalar("SELECT DATE_FORMAT(LEAST(CAST(? AS DATETIME(6)), CAST(? AS DATETIME(6))), " +
                                       std::string(kFormat) + ")",
                                   {last.value_or(*st.passNow), *st.passNow});
        if (st.cursor && capped)
            next = m_conn.scalar("SELECT DATE_FORMAT(GREATEST(CAST(? AS DATETIME(6)), CAST(? AS DATETIME(6))), " +
                                     std::string(kFormat) + ")",
                                 {*st.cursor, *capped});
        else
            next = st.cursor ? st.cursor : capped;
    } else if (st.cursor && last) {
        next = trimDecimal(
            m_conn.scalar("SELECT GREATEST(CAST(? AS DECIMAL(65,30)), CAST(? AS DECIMAL(65,30)))", {*st.cursor, *last})
                .value_or(*st.cursor));
    } else {
        next = st.cursor ? st.cursor : last;
    }
    st.cursor = next;
    st.inPass = false;
    st.passAfter.clear();
    st.passFrom.reset();
    st.passNow.reset();
    st.passRows = 0;
}

} // namespace driftless::core
