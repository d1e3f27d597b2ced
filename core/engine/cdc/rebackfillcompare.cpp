#include "core/engine/cdc/rebackfillcompare.h"

#include "core/db/pgcatalog.h"
#include "core/db/pgconnection.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/rows/rowhash.h"
#include "core/engine/sync/tablesync.h"
#include "core/mergers/pgmerger.h"
#include "core/model/batch.h"
#include "core/model/error.h"

#include <algorithm>
#include <future>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace driftless::core {


std::unique_ptr<RebackfillCompare> RebackfillCompare::open(const TableJob &job, const TableSchema &schema,
                                                           const std::vector<std::string> &streamColumns,
                                                           Merger &merger, PgConnection &loader)
{
    auto *pg = dynamic_cast<PgMerger *>(&merger);
    if (!pg || job.source.kind != EndpointKind::Postgres || job.target.kind != EndpointKind::Postgres)
        return nullptr;
    // What the target holds is not the source's rows as they are: copy them all.
    if ((job.spec.columns && !job.spec.columns->empty()) || job.spec.where || softDeletes(job.spec) || job.twoWay)
        return nullptr;
    if (schema.primaryKey.size() != 1)
        return nullptr;
    const ColumnInfo &key = schema.columns[static_cast<size_t>(schema.primaryKey[0])];
    if (key.isArray || !key.isBuiltinType() ||
        (key.baseType != "int2" && key.baseType != "int4" && key.baseType != "int8"))
        return nullptr;
    std::vector<ColumnInfo> hashed;
    for (const auto &c : schema.columns)
        if (std::find(streamColumns.begin(), streamColumns.end(), c.name) != streamColumns.end())
            hashed.push_back(c);
    try {
        // Every compared column must be on the target (a column being added is not yet).
        auto have = pg->connection().execParams(
            "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped",
            {quoteIdent(job.targetName.schema) + "." + quoteIdent(job.targetName.name)});
        std::set<std::string> names;
        for (int i = 0; i < have.rows(); ++i)
            names.insert(have.text(i, 0));
        for (const auto &c : hashed)
            if (!names.count(c.name))
                return nullptr;
        // The cheapest hash both servers compute alike: by record (Postgres 14+), by text, or MD5.
        std::string hash;
        try {
            if (loader.exec(rowhash::pgRecordHashProbeSql()).text(0, 0) ==
                pg->connection().exec(rowhash::pgRecordHashProbeSql()).text(0, 0)) {
                const TableSchema there =
                    pgcatalog::describeTable(pg->connection(), {job.targetName.schema, job.targetName.name});
                hash = rowhash::pgRowHashRecord(hashed, rowhash::pgRecordHashMask(hashed, there.columns), "s");
            }
        } catch (const Error &) {
            // before Postgres 14 on one side
        }
        if (hash.empty()) {
            const char *probe = "SELECT hashtextextended('driftless probe', 0)";
            hash = loader.exec(probe).text(0, 0) == pg->connection().exec(probe).text(0, 0)
                       ? rowhash::pgRowHashNative(hashed, "s")
                       : rowhash::pgRowHash(hashed, "s");
        }
        // The snapshot's key bounds (two index probes): the walk's ends.
        const std::string k = "s." + quoteIdent(key.name);
        auto bounds = loader.exec("SELECT min(" + k + ")::int8, max(" + k + ")::int8 FROM " + schema.fromSql() + " s");
        if (bounds.isNull(0, 0))
            return nullptr; // nothing to compare: the copy deletes what the target has
        const std::int64_t lo = bounds.toInt(0, 0);
        const std::int64_t hi = bounds.toInt(0, 1);
        if (static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) >=
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return nullptr;
        return std::unique_ptr<RebackfillCompare>(
            new RebackfillCompare(job, schema, *pg, loader, std::move(hash), lo, hi));
    } catch (const Error &) {
        return nullptr; // copy every row, as before
    }
}

RebackfillCompare::RebackfillCompare(const TableJob &job, const TableSchema &schema, PgMerger &merger,
                                     PgConnection &loader, std::string hash, std::int64_t minKey, std::int64_t maxKey)
    : m_schema(schema), m_merger(merger), m_loader(loader), m_hash(std::move(hash)), m_minKey(minKey), m_maxKey(maxKey)
{
    // A page's buckets are hashed in memory (with 4 MB, they sort on disk). The loader is the
    // re-backfill's own connection.
    m_loader.exec("SET work_mem = '64MB'");
    const ColumnInfo &key = schema.columns[static_cast<size_t>(schema.primaryKey[0])];
    m_keyName = key.name;
    m_key = "s." + quoteIdent(key.name);
    m_keyType = key.baseType;
    m_targetSql = quoteIdent(job.targetName.schema) + "." + quoteIdent(job.targetName.name);
    if (m_keyType == "int2") {
        m_typeMin = std::numeric_limits<std::int16_t>::min();
        m_typeMax = std::numeric_limits<std::int16_t>::max();
    } else if (m_keyType == "int4") {
        m_typeMin = std::numeric_limits<std::int32_t>::min();
        m_typeMax = std::numeric_limits<std::int32_t>::max();
    } else {
        m_typeMin = std::numeric_limits<std::int64_t>::min();
        m_typeMax = std::numeric_limits<std::int64_t>::max();
    }
    // Keys per page for about a page of rows, from the planner's row estimate (unique keys: at
    // most one row a key); the walk adapts it to the rows it meets.
    const double keys = static_cast<double>(static_cast<std::uint64_t>(maxKey) - static_cast<std::uint64_t>(minKey)) + 1;
    const double density = schema.estimatedRows > 0 ? std::min(1.0, static_cast<double>(schema.estimatedRows) / keys) : 1.0;
    m_span = std::max(1.0, static_cast<double>(job.spec.effectivePageSize()) / density);
}

RebackfillCompare::~RebackfillCompare() = default;

RebackfillPage RebackfillCompare::step(const std::vector<std::string> &after, long long limit, std::int64_t version,
                                       std::int64_t below)
{
    const bool first = after.empty();
    const std::int64_t base = first ? m_minKey : std::stoll(after.at(0)) + 1;
    if (base > m_maxKey || (!first && std::stoll(after.at(0)) >= m_maxKey))
        return RebackfillPage{0, 0, 0, 0, std::to_string(m_maxKey), true};
    // The page [base, top]; the first also takes the keys below the snapshot's smallest, the
    // last those above its largest (the target's rows the source does not have).
    const auto span = static_cast<std::uint64_t>(std::min(m_span, 4.0e18));
    const std::uint64_t room = static_cast<std::uint64_t>(m_maxKey) - static_cast<std::uint64_t>(base);
    const std::int64_t top = room < span ? m_maxKey : base + static_cast<std::int64_t>(span) - 1;
    const bool end = top == m_maxKey;
    const std::int64_t keys = top - base + 1;
    const std::int64_t buckets = std::max<std::int64_t>(1, limit / kBucketRows);
    const std::int64_t width = std::max<std::int64_t>(1, keys / buckets + (keys % buckets ? 1 : 0));
    const std::int64_t lastBucket = (keys - 1) / width;
    const Params params{std::to_string(base),
                        std::to_string(top),
                        std::to_string(width),
                        std::to_string(lastBucket + 1),
                        std::to_string(first ? m_typeMin : base),
                        std::to_string(end ? m_typeMax : top)};
    auto sql = [&](const std::string &from) {
        // The subtraction runs only for keys in [base, top].
        return "SELECT CASE WHEN " + m_key + " < $1::int8 THEN -1 WHEN " + m_key + " > $2::int8 THEN $4::int8 ELSE (" +
               m_key + "::int8 - $1::int8) / $3::int8 END AS b, count(*), coalesce(sum(" + m_hash +
               "), 0)::text FROM " + from + " s WHERE " + m_key + " BETWEEN $5::int8 AND $6::int8 GROUP BY 1";
    };
    using Sums = std::map<std::int64_t, std::pair<long long, std::string>>;
    auto read = [](const PgResult &r) {
        Sums out;
        for (int i = 0; i < r.rows(); ++i)
            out[r.toInt(i, 0)] = {r.toInt(i, 1), r.text(i, 2)};
        return out;
    };
    // Both sides at once, each on its own connection and server.
    auto there = std::async(std::launch::async, [&] { return read(m_loader.execParams(sql(m_schema.fromSql()), params)); });
    Sums target;
    try {
        // A page's buckets are hashed in memory (with 4 MB, they sort on disk): for this
        // transaction only, the apply connection is shared.
        m_merger.connection().exec("SET LOCAL work_mem = '64MB'");
        target = read(m_merger.connection().execParams(sql(m_targetSql), params));
    } catch (...) {
        there.wait();
        throw;
    }
    const Sums source = there.get();

    RebackfillPage page;
    page.last = std::to_string(top);
    page.end = end;
    std::set<std::int64_t> ids;
    for (const auto &[b, v] : source)
        ids.insert(b);
    for (const auto &[b, v] : target)
        ids.insert(b);
    std::vector<std::string> lo, hi;
    for (std::int64_t b : ids) {
        const auto s = source.find(b);
        const auto t = target.find(b);
        const long long rows = s == source.end() ? 0 : s->second.first;
        page.rows += rows;
        if (s != source.end() && t != target.end() && s->second == t->second) {
            page.equalRows += rows;
            continue;
        }
        if (b < 0) {
            lo.push_back(std::to_string(m_typeMin));
            hi.push_back(std::to_string(base - 1));
        } else if (b > lastBucket) {
            lo.push_back(std::to_string(top + 1));
            hi.push_back(std::to_string(m_typeMax));
        } else {
            const std::int64_t from = base + b * width;
            lo.push_back(std::to_string(from));
            hi.push_back(std::to_string(b == lastBucket ? top : from + width - 1));
        }
    }
    // The next page's span aims at `limit` rows.
    const double factor = page.rows > 0 ? std::clamp(static_cast<double>(limit) / static_cast<double>(page.rows), 1.0 / 16, 16.0)
                                        : 16.0;
    m_span = std::clamp(m_span * factor, 1.0, 4.0e18);
    if (lo.empty())
        return page;
    // The differing buckets' rows from the snapshot. COPY takes no parameters: they travel as
    // transaction-local settings.
    m_loader.execParams("SELECT set_config('driftless.lo', $1, true), set_config('driftless.hi', $2, true)",
                        {pgTextArray(lo), pgTextArray(hi)});
    std::string cols;
    for (const auto &c : m_schema.columns)
        cols += (cols.empty() ? "" : ", ") + ("s." + quoteIdent(c.name));
    RowSet rows;
    m_loader.copyOut("COPY (SELECT x.* FROM unnest(current_setting('driftless.lo')::int8[], "
                     "current_setting('driftless.hi')::int8[]) AS r(lo, hi) CROSS JOIN LATERAL (SELECT " +
                         cols + " FROM " + m_schema.fromSql() + " s WHERE " + m_key + " BETWEEN r.lo AND r.hi ORDER BY " +
                         m_key + ") x) TO STDOUT",
                     [&](std::string_view row) { rows.append(row, ChangeOp::Insert, version); });
    auto [res, gone] = m_merger.mergeSnapshotRangesInTransaction(rows, m_keyName, lo, hi, below);
    page.written = res.rowsWritten;
    page.removed = gone;
    return page;
}

} // namespace driftless::core
