#include "core/readers/pgcursorreader.h"

#include "core/base/copytext.h"
#include "core/db/pgcatalog.h"
#include "core/model/duration.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

namespace driftless::core {

using json = nlohmann::json;

std::string CursorState::toJson() const
{
    json j;
    j["phase"] = phase == Phase::Load ? "load" : "incremental";
    if (phase == Phase::Load) {
        j["load"] = {{"after", loadAfter}, {"started_at", loadStartedAt}};
    } else {
        j["cursor"] = cursor ? json(*cursor) : json(nullptr);
        if (inPass)
            j["pass"] = {{"from", passFrom ? json(*passFrom) : json(nullptr)},
                         {"now", passNow ? json(*passNow) : json(nullptr)},
                         {"after", passAfter},
                         {"rows", passRows}};
    }
    if (!columns.empty())
        j["columns"] = json::parse(columns);
    if (!source.empty())
        j["source"] = source;
    return j.dump();
}

CursorState CursorState::fromJson(const std::string &text)
{
    CursorState st;
    try {
        auto j = json::parse(text);
        auto opt = [](const json &v) -> std::optional<std::string> {
            if (v.is_null())
                return std::nullopt;
            return v.get<std::string>();
        };
        if (j.at("phase") == "load") {
            st.phase = Phase::Load;
            st.loadAfter = j.at("load").at("after").get<std::vector<std::string>>();
            st.loadStartedAt = j.at("load").at("started_at").get<std::string>();
        } else {
            st.phase = Phase::Incremental;
            st.cursor = opt(j.at("cursor"));
            if (j.contains("pass")) {
                const auto &p = j["pass"];
                st.inPass = true;
                st.passFrom = opt(p.at("from"));
                st.passNow = opt(p.at("now"));
                st.passAfter = p.at("after").get<std::vector<std::string>>();
                st.passRows = p.value("rows", 0LL);
            }
        }
        if (j.contains("columns") && j["columns"].is_object())
            st.columns = j["columns"].dump();
        if (j.contains("source") && j["source"].is_string())
            st.source = j["source"].get<std::string>();
    } catch (const json::exception &e) {
        throw Error(ErrorKind::Permanent, std::string("stored cursor position does not parse: ") + e.what(), {},
                    "reset the table's checkpoint to start it over");
    }
    return st;
}

namespace {
std::string setting(size_t i)
{
    return "current_setting('driftless.p" + std::to_string(i + 1) + "')";
}
} // namespace

PgCursorReader::PgCursorReader(PgConnection &conn, TableSchema schema, TableSpec spec)
    : m_conn(conn), m_schema(std::move(schema)), m_spec(std::move(spec))
{
    if (!m_schema.hasPrimaryKey())
        throw SchemaError("table " + m_schema.table.display() +
                              " has no primary key; cursor sync deduplicates by key and cannot run without one",
                          "add a primary key on the source, or use strategy full_refresh");
    const std::string cursorName = m_spec.cursorColumn();
    m_cursorIndex = m_schema.columnIndex(cursorName);
    if (m_cursorIndex < 0)
        throw SchemaError("cursor column " + displayIdent(cursorName) + " does not exist in " +
                              m_schema.table.display(),
                          "set 'cursor:' to a timestamp or increasing number column of the table");
    const auto &cc = m_schema.columns[static_cast<size_t>(m_cursorIndex)];
    const std::string &bt = cc.baseType;
    m_temporal = bt == "timestamptz" || bt == "timestamp" || bt == "date";
    bool numeric = bt == "int2" || bt == "int4" || bt == "int8" || bt == "numeric";
    if (cc.isArray || (!m_temporal && !numeric))
        throw SchemaError("cursor column " + displayIdent(cursorName) + " has type " + cc.typeSql +
                              "; a cursor must be a timestamp, date or integer/numeric column",
                          "choose another cursor column");
    m_cursorType = cc.typeSql;
    std::string lb = m_spec.lookback.value_or(m_temporal ? TableSpec::kDefaultLookback : "0");
    bool isCount = lb.find_first_not_of("0123456789") == std::string::npos;
    if (m_temporal) {
        auto d = parseDuration(lb);
        if (!d)
            throw SchemaError("lookback '" + lb + "' is not a duration", "write e.g. lookback: 10m");
        m_lookback = std::to_string(d->count()) + " milliseconds";
    } else {
        if (!isCount)
            throw SchemaError("lookback '" + lb + "' is a duration, but cursor column " + displayIdent(cursorName) +
                                  " is a number",
                              "write the lookback as a count of values, e.g. lookback: 1000");
        m_lookback = lb;
    }

    for (const auto &c : m_schema.columns)
        m_selectList += (m_selectList.empty() ? "" : ", ") + quoteIdent(c.name);
    std::string keys, keyParams;
    for (size_t i = 0; i < m_schema.primaryKey.size(); ++i) {
        const auto &k = m_schema.columns[static_cast<size_t>(m_schema.primaryKey[i])];
        keys += (i ? ", " : "") + quoteIdent(k.name);
        keyParams += (i ? ", " : "") + setting(i) + "::" + k.typeSql;
    }
    const std::string from = " FROM " + m_schema.fromSql();
    const std::string limit = " LIMIT " + std::to_string(m_spec.effectivePageSize());
    const std::string cur = quoteIdent(cursorName);
    m_keyOrder = keys;
    // A row filter (`where:`): the initial load reads only the rows it holds for; a pass reads
    // every changed row with the filter's verdict as a last column, so a row updated out of the
    // filter reaches the merge as a delete of its key.
    const std::string filter = m_spec.where ? "(" + *m_spec.where + ")" : std::string();
    const std::string passList = m_selectList + (filter.empty() ? "" : ", (" + filter + ") IS TRUE");
    m_loadFirstSql = "COPY (SELECT " + m_selectList + from + (filter.empty() ? "" : " WHERE " + filter) + " ORDER BY " +
                     keys + limit + ") TO STDOUT";
    m_loadNextSql = "COPY (SELECT " + m_selectList + from + " WHERE (" + keys + ") > (" + keyParams + ")" +
                    (filter.empty() ? "" : " AND " + filter) + " ORDER BY " + keys + limit + ") TO STDOUT";
    const std::string order = " ORDER BY " + cur + ", " + keys;
    m_passAllSql = "COPY (SELECT " + passList + from + " WHERE " + cur + " IS NOT NULL" + order + limit + ") TO STDOUT";
    m_passFromSql = "COPY (SELECT " + passList + from + " WHERE " + cur + " >= " + setting(0) + "::" + m_cursorType +
                    order + limit + ") TO STDOUT";
    std::string nextParams = setting(0) + "::" + m_cursorType;
    for (size_t i = 0; i < m_schema.primaryKey.size(); ++i) {
        const auto &k = m_schema.columns[static_cast<size_t>(m_schema.primaryKey[i])];
        nextParams += ", " + setting(i + 1) + "::" + k.typeSql;
    }
    m_passNextSql = "COPY (SELECT " + passList + from + " WHERE (" + cur + ", " + keys + ") > (" + nextParams + ")" +
                    order + limit + ") TO STDOUT";
}

std::string PgCursorReader::nowExpr() const
{
    const auto &bt = m_schema.columns[static_cast<size_t>(m_cursorIndex)].baseType;
    if (bt == "timestamptz")
        return "now()";
    // `timestamp` and `date` columns are usually written in the server's local time.
    if (bt == "timestamp")
        return "(now() AT TIME ZONE " + pgLiteral(m_conn.serverTimeZone()) + ")";
    if (bt == "date")
        return "(now() AT TIME ZONE " + pgLiteral(m_conn.serverTimeZone()) + ")::date";
    return "NULL";
}

long long PgCursorReader::readPage(const std::string &sql, const std::vector<std::string> &settings, Batch &out,
                                   bool verdict)
{
    out.rows.clear();
    m_conn.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY");
    try {
        if (!settings.empty()) {
            std::string q = "SELECT ";
            Params params;
            for (size_t i = 0; i < settings.size(); ++i) {
                q += (i ? ", " : "") + std::string("set_config('driftless.p") + std::to_string(i + 1) + "', $" +
                     std::to_string(i + 1) + ", true)";
                params.emplace_back(settings[i]);
            }
            m_conn.execParams(q, params);
        } else {
            m_conn.exec("SELECT 1");
        }
        // Read after the snapshot is taken: the position is at or past every commit it sees.
        const std::int64_t version = pgcatalog::currentLsn(m_conn);
        if (!verdict) {
            m_conn.copyOut(sql, [&](std::string_view row) { out.rows.append(row, ChangeOp::Update, version); });
        } else {
            // The last field is the row filter's verdict (t/f): a row outside it is a delete.
            m_conn.copyOut(sql, [&](std::string_view row) {
                if (!row.empty() && row.back() == '\n')
                    row.remove_suffix(1);
                const size_t tab = row.rfind('\t');
                const bool in = row.substr(tab + 1) == "t";
                out.rows.append(row.substr(0, tab), in ? ChangeOp::Update : ChangeOp::Delete, version);
            });
        }
        m_conn.commit();
        out.checkpoint.version = version;
    } catch (...) {
        m_conn.rollback();
        throw;
    }
    return static_cast<long long>(out.rows.size());
}

std::vector<std::string> PgCursorReader::lastRowValues(const Batch &out, bool withCursor) const
{
    std::vector<std::string_view> fields;
    copytext::split(out.rows.line(out.rows.size() - 1), fields);
    std::vector<std::string> values;
    auto take = [&](int idx) {
        std::string v;
        copytext::unescape(fields.at(static_cast<size_t>(idx)), v);
        values.push_back(std::move(v));
    };
    if (withCursor)
        take(m_cursorIndex);
    for (int k : m_schema.primaryKey)
        take(k);
    return values;
}

void PgCursorReader::beginLoad(CursorState &st)
{
    std::string columns = std::move(st.columns); // the engine's memory of the columns stays
    st = CursorState{};
    st.columns = std::move(columns);
    st.phase = CursorState::Phase::Load;
    std::string q = m_temporal
                        ? "SELECT (" + nowExpr() + ")::text"
                        : "SELECT max(" + quoteIdent(m_spec.cursorColumn()) + ")::text FROM " + m_schema.fromSql();
    auto r = m_conn.exec(q);
    st.loadStartedAt = r.isNull(0, 0) ? "" : r.text(0, 0);
}

bool PgCursorReader::loadChunk(CursorState &st, Batch &out)
{
    long long n = st.loadAfter.empty() ? readPage(m_loadFirstSql, {}, out) : readPage(m_loadNextSql, st.loadAfter, out);
    out.directLoad = true;
    if (n == 0)
        return false;
    st.loadAfter = lastRowValues(out, false);
    return true;
}

void PgCursorReader::finishLoad(CursorState &st)
{
    std::string started = st.loadStartedAt;
    std::string columns = std::move(st.columns); // the engine's memory of the columns stays
    st = CursorState{};
    st.columns = std::move(columns);
    st.phase = CursorState::Phase::Incremental;
    if (!started.empty())
        st.cursor = started;
}

void PgCursorReader::beginPass(CursorState &st)
{
    st.phase = CursorState::Phase::Incremental;
    st.inPass = true;
    st.passAfter.clear();
    st.passRows = 0;
    st.passFrom.reset();
    if (!st.cursor) {
        st.passNow = m_conn.exec("SELECT (" + nowExpr() + ")::text").optText(0, 0);
        return;
    }
    // The source's clock and where the lookback starts, in one round trip.
    std::string q = "SELECT (" + nowExpr() + ")::text, " +
                    (m_temporal ? "($1::" + m_cursorType + " - $2::interval)::" + m_cursorType + "::text"
                                : "($1::" + m_cursorType + " - $2::" + m_cursorType + ")::text");
    auto r = m_conn.execParams(q, {*st.cursor, m_lookback});
    st.passNow = r.optText(0, 0);
    st.passFrom = r.text(0, 1);
}

bool PgCursorReader::passPage(CursorState &st, Batch &out)
{
    long long n;
    if (!st.passAfter.empty())
        n = readPage(m_passNextSql, st.passAfter, out, m_spec.where.has_value());
    else if (st.passFrom)
        n = readPage(m_passFromSql, {*st.passFrom}, out, m_spec.where.has_value());
    else
        n = readPage(m_passAllSql, {}, out, m_spec.where.has_value());
    out.directLoad = false;
    if (n == 0)
        return false;
    st.passAfter = lastRowValues(out, true);
    st.passRows += n;
    return true;
}

void PgCursorReader::finishPass(CursorState &st)
{
    std::optional<std::string> last;
    if (!st.passAfter.empty())
        last = st.passAfter[0];
    const std::string t = "::" + m_cursorType;
    auto r =
        m_conn.execParams("SELECT GREATEST($1" + t + ", LEAST(COALESCE($2" + t + ", $3" + t + "), $3" + t + "))::text",
                          {st.cursor, last, st.passNow});
    st.cursor = r.optText(0, 0);
    st.inPass = false;
    st.passAfter.clear();
    st.passFrom.reset();
    st.passNow.reset();
    st.passRows = 0;
}

} // namespace driftless::core
