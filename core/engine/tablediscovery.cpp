#include "core/engine/tablediscovery.h"

#include <algorithm>
#include <cmath>

namespace driftless::core {

namespace {

/// One row per user table: size, stats, key and candidate cursor columns (names joined by the
/// unit separator, which identifiers do not use in practice).
constexpr const char *kDiscoverSql = R"sql(
SELECT n.nspname, c.relname, c.reltuples::float8, pg_total_relation_size(c.oid),
       coalesce(s.n_tup_ins, 0), coalesce(s.n_tup_upd, 0), coalesce(s.n_tup_del, 0),
       has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT'),
       (SELECT string_agg(a.attname, chr(31) ORDER BY k.ord)
          FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
         WHERE i.indrelid = c.oid AND i.indisprimary),
       (SELECT string_agg(a.attname, chr(31) ORDER BY
                 a.attnotnull DESC,
                 EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indkey[0] = a.attnum) DESC,
                 (a.attname ~* '(updat|modif|chang)') DESC, a.attnum)
          FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
           AND a.atttypid IN ('timestamptz'::regtype, 'timestamp'::regtype, 'date'::regtype))
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
 WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
   AND n.nspname NOT IN ('information_schema', '_driftless') AND n.nspname NOT LIKE 'pg\_%'
 ORDER BY 1, 2
)sql";

std::vector<std::string> splitNames(const std::optional<std::string> &list)
{
    std::vector<std::string> out;
    if (!list || list->empty())
        return out;
    std::size_t start = 0;
    for (;;) {
        const auto comma = list->find('\x1f', start);
        out.push_back(list->substr(start, comma - start));
        if (comma == std::string::npos)
            return out;
        start = comma + 1;
    }
}

std::string rows(double n)
{
    return std::to_string(static_cast<long long>(std::llround(n)));
}

} // namespace

std::vector<DiscoveredTable> discoverTables(PgConnection &conn)
{
    auto r = conn.exec(kDiscoverSql);
    std::vector<DiscoveredTable> out;
    out.reserve(static_cast<std::size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) {
        DiscoveredTable t;
        t.table = TableRef{r.text(i, 0), r.text(i, 1)};
        const double tuples = std::strtod(r.text(i, 2).c_str(), nullptr);
        t.analyzed = tuples >= 0;
        t.estimatedRows = std::max(0.0, tuples);
        t.totalBytes = r.toInt(i, 3);
        t.inserts = r.toInt(i, 4);
        t.updates = r.toInt(i, 5);
        t.deletes = r.toInt(i, 6);
        t.readable = r.toBool(i, 7);
        t.primaryKey = splitNames(r.optText(i, 8));
        t.cursorCandidates = splitNames(r.optText(i, 9));
        out.push_back(std::move(t));
    }
    return out;
}

Recommendation recommendStrategy(const DiscoveredTable &t, const SourceAbilities &source)
{
    Recommendation rec;
    if (!t.cursorCandidates.empty())
        rec.cursor = t.cursorCandidates.front();
    if (t.primaryKey.empty()) {
        const std::string why = "no primary key: cursor sync and CDC merge rows by key";
        rec.refused[Strategy::Cursor] = why;
        rec.refused[Strategy::Cdc] = why;
    }
    if (t.cursorCandidates.empty() && !rec.refused.count(Strategy::Cursor))
        rec.refused[Strategy::Cursor] = "no timestamp or date column for a cursor to follow";
    if (!source.logicalWal && !rec.refused.count(Strategy::Cdc))
        rec.refused[Strategy::Cdc] = "the source's wal_level is not logical";
    else if (!source.canReplicate && !rec.refused.count(Strategy::Cdc))
        rec.refused[Strategy::Cdc] = "the source's user may not replicate";

    const bool cursorOk = !rec.refused.count(Strategy::Cursor);
    const bool cdcOk = !rec.refused.count(Strategy::Cdc);
    const std::int64_t churn = t.updates + t.deletes;
    const bool small = t.estimatedRows <= kSmallTableRows && t.totalBytes <= kSmallTableBytes;
    // "Rarely written": fewer changes since the stats reset than the table has rows.
    const bool quiet = static_cast<double>(t.inserts + churn) <= std::max(t.estimatedRows, 1000.0);
    // "Busy with deletes": deletes happen, and changes are at least a tenth of the table.
    const bool busyWithDeletes = t.deletes > 0 && static_cast<double>(churn) >= 0.1 * std::max(t.estimatedRows, 1.0);

    if (t.primaryKey.empty()) {
        rec.strategy = Strategy::FullRefresh;
        rec.reason = "no primary key: only a full refresh can copy it exactly";
    } else if (small && quiet) {
        rec.strategy = Strategy::FullRefresh;
        rec.reason = "small (about " + rows(t.estimatedRows) + " rows) and rarely written: a full copy costs "
                     "little and is always exact";
    } else if (busyWithDeletes && cdcOk) {
        rec.strategy = Strategy::Cdc;
        rec.reason = "busy (" + std::to_string(t.updates) + " updates, " + std::to_string(t.deletes) +
                     " deletes since the stats reset): CDC sees deletes, which cursor sync cannot";
    } else if (cursorOk && t.deletes == 0) {
        rec.strategy = Strategy::Cursor;
        rec.reason = "no deletes recorded: cursor sync along " + *rec.cursor + " reads only what changed";
    } else if (cdcOk) {
        rec.strategy = Strategy::Cdc;
        rec.reason = t.deletes > 0 ? "rows are deleted: CDC sees deletes, which cursor sync cannot"
                                   : "no cursor column: CDC reads only what changed";
    } else if (cursorOk) {
        rec.strategy = Strategy::Cursor;
        rec.reason = "CDC is unavailable (" + rec.refused[Strategy::Cdc] + "): cursor sync along " + *rec.cursor +
                     "; deletes are not seen until a reconciliation";
    } else {
        rec.strategy = Strategy::FullRefresh;
        rec.reason = "neither cursor sync (" + rec.refused[Strategy::Cursor] + ") nor CDC (" +
                     rec.refused[Strategy::Cdc] + ") can work: full refresh";
    }
    return rec;
}

} // namespace driftless::core
