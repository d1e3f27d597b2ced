#include "core/engine/cdc/rebackfillcompare.h"

#include "core/base/copytext.h"
#include "core/db/pgcatalog.h"
#include "core/db/pgconnection.h"
#include "core/engine/reconcile/reconcileopen.h"
#include "core/engine/reconcile/reconcilepg.h"
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

namespace {

bool isIntegerKey(const ColumnInfo &c)
{
    return !c.isArray && c.isBuiltinType() && (c.baseType == "int2" || c.baseType == "int4" || c.baseType == "int8");
}

/// A key column whose values both servers order alike and whose text reads back as the same
/// value on the other (floats, intervals and user types are left to the full copy).
bool hasSharedOrder(const ColumnInfo &c)
{
    static const std::set<std::string> types{"int2", "int4", "int8",      "numeric",     "text",  "varchar", "bpchar",
                                             "uuid", "date", "timestamp", "timestamptz", "bytea", "bool",    "oid"};
    return !c.isArray && c.isBuiltinType() && types.count(c.baseType) > 0;
}

/// What orders a column's text on its server: its collation, or the database's (provider,
/// locale and version where the server records them).
std::string collationOf(PgConnection &conn, const std::string &schema, const std::string &table,
                        const std::string &column)
{
    auto r = conn.execParams(
        "SELECT CASE WHEN c.collname = 'default' THEN concat_ws('|', 'database', d.datcollate, "
        "to_jsonb(d)->>'datlocprovider', to_jsonb(d)->>'daticulocale', to_jsonb(d)->>'datcollversion') "
        "ELSE concat_ws('|', c.collname, c.collprovider, to_jsonb(c)->>'colliculocale', c.collcollate, "
        "to_jsonb(c)->>'collversion') END FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation "
        "CROSS JOIN pg_database d WHERE d.datname = current_database() AND a.attrelid = to_regclass($1) "
        "AND a.attname = $2",
        {quoteIdent(schema) + "." + quoteIdent(table), column});
    return r.rows() == 1 ? r.text(0, 0) : std::string("unknown");
}

/// `s.c1, s.c2, ...`: every column of the table, as the copy reads them.
std::string selectList(const TableSchema &schema)
{
    std::string out;
    for (const auto &c : schema.columns)
        out += (out.empty() ? "" : ", ") + ("s." + quoteIdent(c.name));
    return out;
}

/// One bucket of a keyset page: the keys in (lo, hi]; an absent bound is open.
struct KeyBucket {
    std::optional<std::vector<std::string>> lo, hi;
};

/// Builds the SQL of a set of buckets for one side: binds a value where it is needed (a query
/// parameter, or a transaction setting for COPY, which takes none).
class BucketSql {
public:
    BucketSql(const std::vector<std::string> &keys, const std::vector<std::string> &types, bool settings)
        : m_keys(keys), m_types(types), m_settings(settings)
    {
    }

    /// `(alias.k1, alias.k2)`
    std::string keyRow(const std::string &alias) const
    {
        std::string out;
        for (const auto &k : m_keys)
            out += (out.empty() ? "" : ", ") + alias + "." + quoteIdent(k);
        return "(" + out + ")";
    }
    /// The scopes of `buckets`: one for the closed ones (an unnest of their bounds, aliased r,
    /// with the bucket's index as r.i), one each for an open head and tail.
    std::vector<PgMerger::SnapshotScope> scopes(const std::vector<KeyBucket> &buckets, const std::vector<size_t> &which,
                                                const std::string &alias)
    {
        std::vector<PgMerger::SnapshotScope> out;
        const size_t n = m_keys.size();
        std::vector<std::string> ids;
        std::vector<std::vector<std::string>> lo(n), hi(n);
        for (size_t b : which) {
            const KeyBucket &k = buckets[b];
            if (k.lo && k.hi) {
                ids.push_back(std::to_string(b));
                for (size_t j = 0; j < n; ++j) {
                    lo[j].push_back((*k.lo)[j]);
                    hi[j].push_back((*k.hi)[j]);
                }
                continue;
            }
            PgMerger::SnapshotScope open;
            m_params.clear();
            std::string where;
            if (k.lo)
                where = keyRow(alias) + " > " + boundRow(*k.lo);
            if (k.hi)
                where += (where.empty() ? "" : " AND ") + keyRow(alias) + " <= " + boundRow(*k.hi);
            open.usingSql = "(SELECT " + std::to_string(b) + "::int8 AS i) r";
            open.whereSql = where.empty() ? "true" : where;
            open.params = m_params;
            out.push_back(std::move(open));
        }
        if (!ids.empty()) {
            m_params.clear();
            std::string arrays = bind(pgTextArray(ids)) + "::int8[]", names = "i", low, high;
            for (size_t j = 0; j < n; ++j) {
                arrays += ", " + bind(pgTextArray(lo[j])) + "::text[]";
                names += ", l" + std::to_string(j);
                low += (low.empty() ? "" : ", ") + ("r.l" + std::to_string(j) + "::" + m_types[j]);
            }
            for (size_t j = 0; j < n; ++j) {
                arrays += ", " + bind(pgTextArray(hi[j])) + "::text[]";
                names += ", h" + std::to_string(j);
                high += (high.empty() ? "" : ", ") + ("r.h" + std::to_string(j) + "::" + m_types[j]);
            }
            out.insert(out.begin(), PgMerger::SnapshotScope{"unnest(" + arrays + ") AS r(" + names + ")",
                                                            keyRow(alias) + " > (" + low + ") AND " + keyRow(alias) +
                                                                " <= (" + high + ")",
                                                            m_params});
        }
        return out;
    }
    /// `keyRow(alias) > (values)`, its values bound as the next parameters (params()).
    std::string above(const std::string &alias, const std::vector<std::string> &values)
    {
        return keyRow(alias) + " > " + boundRow(values);
    }
    const Params &params() const { return m_params; }
    /// The transaction settings bound so far (for COPY), in order.
    const std::vector<std::pair<std::string, std::string>> &settings() const { return m_set; }

private:
    std::string boundRow(const std::vector<std::string> &values)
    {
        std::string out;
        for (size_t j = 0; j < values.size(); ++j)
            out += (out.empty() ? "" : ", ") + bind(values[j]) + "::" + m_types[j];
        return "(" + out + ")";
    }
    std::string bind(const std::string &value)
    {
        if (!m_settings) {
            m_params.push_back(value);
            return "$" + std::to_string(m_params.size()) + "::text";
        }
        const std::string name = "driftless.b" + std::to_string(m_set.size());
        m_set.emplace_back(name, value);
        return "current_setting('" + name + "')";
    }

    std::vector<std::string> m_keys, m_types;
    bool m_settings;
    Params m_params;
    std::vector<std::pair<std::string, std::string>> m_set;
};

} // namespace

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
    if (schema.primaryKey.empty())
        return nullptr;
    const ColumnInfo &key = schema.columns[static_cast<size_t>(schema.primaryKey[0])];
    const bool integer = schema.primaryKey.size() == 1 && isIntegerKey(key);
    if (!integer)
        for (int k : schema.primaryKey)
            if (!hasSharedOrder(schema.columns[static_cast<size_t>(k)]))
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
        if (!integer) {
            // A collatable key is bucketed alike on both sides only where both order it alike.
            for (int k : schema.primaryKey) {
                const ColumnInfo &c = schema.columns[static_cast<size_t>(k)];
                if (c.category == 'S' &&
                    collationOf(loader, schema.table.schema, schema.table.name, c.name) !=
                        collationOf(pg->connection(), job.targetName.schema, job.targetName.name, c.name))
                    return nullptr;
            }
            if (loader.exec("SELECT 1 FROM " + schema.fromSql() + " s LIMIT 1").rows() == 0)
                return nullptr; // nothing to compare: the copy deletes what the target has
            return std::unique_ptr<RebackfillCompare>(new RebackfillCompare(job, schema, *pg, loader, std::move(hash)));
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
    : m_schema(schema), m_merger(merger), m_loader(loader), m_hash(std::move(hash)), m_columnsSql(selectList(schema)),
      m_minKey(minKey), m_maxKey(maxKey)
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
    const double keys =
        static_cast<double>(static_cast<std::uint64_t>(maxKey) - static_cast<std::uint64_t>(minKey)) + 1;
    const double density =
        schema.estimatedRows > 0 ? std::min(1.0, static_cast<double>(schema.estimatedRows) / keys) : 1.0;
    m_span = std::max(1.0, static_cast<double>(job.spec.effectivePageSize()) / density);
}

RebackfillCompare::RebackfillCompare(const TableJob &job, const TableSchema &schema, PgMerger &merger,
                                     PgConnection &loader, std::string hash)
    : m_schema(schema), m_keyset(true), m_merger(merger), m_loader(loader), m_hash(std::move(hash)),
      m_columnsSql(selectList(schema))
{
    m_loader.exec("SET work_mem = '64MB'");
    for (int k : schema.primaryKey) {
        const ColumnInfo &c = schema.columns[static_cast<size_t>(k)];
        m_keyNames.push_back(c.name);
        m_keyTypes.push_back(c.typeSql);
    }
    m_targetSql = quoteIdent(job.targetName.schema) + "." + quoteIdent(job.targetName.name);
}

RebackfillCompare::~RebackfillCompare() = default;

RebackfillPage RebackfillCompare::step(const std::vector<std::string> &after, long long limit, std::int64_t version,
                                       std::int64_t below)
{
    return m_keyset ? keysetStep(after, limit, version, below) : integerStep(after, limit, version, below);
}

void RebackfillCompare::copyScopes(const std::string &rowsSql,
                                   const std::vector<std::pair<std::string, std::string>> &settings,
                                   const std::vector<PgMerger::SnapshotScope> &scopes, std::int64_t version,
                                   std::int64_t below, RebackfillPage &page)
{
    // COPY takes no parameters: they travel as transaction-local settings.
    for (const auto &[name, value] : settings)
        m_loader.execParams("SELECT set_config($1, $2, true)", {name, value});
    RowSet rows;
    m_loader.copyOut("COPY (" + rowsSql + ") TO STDOUT",
                     [&](std::string_view row) { rows.append(row, ChangeOp::Insert, version); });
    auto [res, gone] = m_merger.mergeSnapshotScopesInTransaction(rows, scopes, below);
    page.written = res.rowsWritten;
    page.removed = gone;
}

RebackfillPage RebackfillCompare::keysetStep(const std::vector<std::string> &after, long long limit,
                                             std::int64_t version, std::int64_t below)
{
    const bool first = after.empty();
    std::string keyCols, innerCols, outerCols, order;
    for (size_t j = 0; j < m_keyNames.size(); ++j) {
        const std::string k = "k" + std::to_string(j);
        innerCols += (j ? ", " : "") + ("s." + quoteIdent(m_keyNames[j]) + " AS " + k);
        outerCols += ", q." + k + "::text";
        order += (j ? ", " : "") + ("s." + quoteIdent(m_keyNames[j]));
        keyCols += (j ? ", " : "") + ("p." + k);
    }
    // The snapshot's next `limit` keys, of which every kBucketRows-th and the last bound the
    // page's buckets (one index scan of keys).
    BucketSql bounds(m_keyNames, m_keyTypes, false);
    const std::string from = first ? std::string() : " WHERE " + bounds.above("s", after);
    auto keys = m_loader.execParams("SELECT q.n" + outerCols + " FROM (SELECT p.*, row_number() OVER (ORDER BY " +
                                        keyCols + ") AS rn, count(*) OVER () AS n FROM (SELECT " + innerCols +
                                        " FROM " + m_schema.fromSql() + " s" + from + " ORDER BY " + order + " LIMIT " +
                                        std::to_string(limit) + ") p) q WHERE q.rn % " + std::to_string(kBucketRows) +
                                        " = 0 OR q.rn = q.n ORDER BY q.rn",
                                    bounds.params());
    const long long n = keys.rows() > 0 ? keys.toInt(0, 0) : 0;
    RebackfillPage page;
    page.end = n < limit;
    std::vector<KeyBucket> buckets;
    std::optional<std::vector<std::string>> prev;
    if (!first)
        prev = after;
    for (int i = 0; i < keys.rows(); ++i) {
        std::vector<std::string> bound;
        for (size_t j = 0; j < m_keyNames.size(); ++j)
            bound.push_back(keys.text(i, static_cast<int>(j) + 1));
        buckets.push_back({prev, bound});
        prev = std::move(bound);
    }
    // The last page also takes the keys past the snapshot's largest (the target's rows the
    // source does not have).
    if (page.end)
        buckets.push_back({prev, std::nullopt});
    page.last = prev ? *prev : after;
    std::vector<size_t> all(buckets.size());
    for (size_t b = 0; b < all.size(); ++b)
        all[b] = b;

    using Sums = std::map<std::int64_t, std::pair<long long, std::string>>;
    auto sums = [&](PgConnection &conn, const std::string &table) {
        BucketSql side(m_keyNames, m_keyTypes, false);
        Sums out;
        for (const auto &scope : side.scopes(buckets, all, "s")) {
            auto r = conn.execParams("SELECT r.i, x.n, x.h FROM " + scope.usingSql +
                                         " CROSS JOIN LATERAL (SELECT count(*) AS n, coalesce(sum(" + m_hash +
                                         "), 0)::text AS h FROM " + table + " s WHERE " + scope.whereSql + ") x",
                                     scope.params);
            for (int i = 0; i < r.rows(); ++i)
                out[r.toInt(i, 0)] = {r.toInt(i, 1), r.text(i, 2)};
        }
        return out;
    };
    // Both sides at once, each on its own connection and server.
    auto there = std::async(std::launch::async, [&] { return sums(m_loader, m_schema.fromSql()); });
    Sums target;
    try {
        m_merger.connection().exec("SET LOCAL work_mem = '64MB'");
        target = sums(m_merger.connection(), m_targetSql);
    } catch (...) {
        there.wait();
        throw;
    }
    const Sums source = there.get();
    std::vector<size_t> differing;
    for (size_t b = 0; b < buckets.size(); ++b) {
        const auto s = source.find(static_cast<std::int64_t>(b));
        const auto t = target.find(static_cast<std::int64_t>(b));
        const long long rows = s == source.end() ? 0 : s->second.first;
        page.rows += rows;
        const bool equal = s != source.end() && t != target.end() && s->second == t->second;
        if (equal)
            page.equalRows += rows;
        else if (rows > 0 || (t != target.end() && t->second.first > 0))
            differing.push_back(b);
    }
    if (differing.empty())
        return page;
    BucketSql read(m_keyNames, m_keyTypes, true);
    std::string rowsSql;
    for (const auto &scope : read.scopes(buckets, differing, "s"))
        rowsSql += (rowsSql.empty() ? "" : " UNION ALL ") +
                   ("SELECT x.* FROM " + scope.usingSql + " CROSS JOIN LATERAL (SELECT " + m_columnsSql + " FROM " +
                    m_schema.fromSql() + " s WHERE " + scope.whereSql + ") x");
    BucketSql remove(m_keyNames, m_keyTypes, false);
    copyScopes(rowsSql, read.settings(), remove.scopes(buckets, differing, "t"), version, below, page);
    return page;
}

RebackfillPage RebackfillCompare::integerStep(const std::vector<std::string> &after, long long limit,
                                              std::int64_t version, std::int64_t below)
{
    const bool first = after.empty();
    const std::int64_t base = first ? m_minKey : std::stoll(after.at(0)) + 1;
    if (base > m_maxKey || (!first && std::stoll(after.at(0)) >= m_maxKey))
        return RebackfillPage{0, 0, 0, 0, {std::to_string(m_maxKey)}, true};
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
    auto there =
        std::async(std::launch::async, [&] { return read(m_loader.execParams(sql(m_schema.fromSql()), params)); });
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
    page.last = {std::to_string(top)};
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
    const double factor =
        page.rows > 0 ? std::clamp(static_cast<double>(limit) / static_cast<double>(page.rows), 1.0 / 16, 16.0) : 16.0;
    m_span = std::clamp(m_span * factor, 1.0, 4.0e18);
    if (lo.empty())
        return page;
    // The differing buckets' rows from the snapshot.
    copyScopes(
        "SELECT x.* FROM unnest(current_setting('driftless.lo')::int8[], current_setting('driftless.hi')::int8[]) "
        "AS r(lo, hi) CROSS JOIN LATERAL (SELECT " +
            m_columnsSql + " FROM " + m_schema.fromSql() + " s WHERE " + m_key + " BETWEEN r.lo AND r.hi ORDER BY " +
            m_key + ") x",
        {{"driftless.lo", pgTextArray(lo)}, {"driftless.hi", pgTextArray(hi)}},
        {{"unnest($1::int8[], $2::int8[]) AS r(lo, hi)",
          "t." + quoteIdent(m_keyName) + " BETWEEN r.lo AND r.hi",
          {pgTextArray(lo), pgTextArray(hi)}}},
        version, below, page);
    return page;
}

// ---------------------------------------------------------------------------------------------
// Into another target: row by row, by the canonical hash

RangeDiff diffRange(const std::vector<HashedRow> &rows, recon::Side &target,
                    const std::optional<std::vector<std::string>> &lo,
                    const std::optional<std::vector<std::string>> &hi, bool loExclusive,
                    const std::vector<int> &keyColumns, size_t columns, std::int64_t version)
{
    std::unordered_map<std::string, std::pair<CanonicalKey, std::int64_t>> there;
    target.rangeHashes(
        lo, hi,
        [&](CanonicalKey &&key, std::int64_t hash) {
            std::string record = rowhash::recordText({key.begin(), key.end()});
            there.emplace(std::move(record), std::make_pair(std::move(key), hash));
        },
        loExclusive);
    RangeDiff out;
    for (const auto &r : rows) {
        auto it = there.find(rowhash::recordText({r.key.begin(), r.key.end()}));
        if (it != there.end()) {
            const bool alike = it->second.second == r.hash;
            there.erase(it);
            if (alike) {
                ++out.alike;
                continue;
            }
        }
        out.staged.append(r.line, ChangeOp::Insert, version);
        ++out.copied;
    }
    // What is left, the source does not have: deleted by key.
    for (const auto &[record, keyed] : there) {
        std::vector<std::optional<std::string>> values(columns);
        for (size_t k = 0; k < keyColumns.size(); ++k)
            values[static_cast<size_t>(keyColumns[k])] = keyed.first[k];
        out.staged.append(copytext::line(values), ChangeOp::Delete, version);
        ++out.removed;
    }
    return out;
}

struct RebackfillCompareRows::Target {
    recon::TableContext ctx;
};

RebackfillCompareRows::RebackfillCompareRows(const TableSchema &schema, Merger &merger, PgConnection &loader,
                                             std::unique_ptr<Target> target)
    : m_schema(schema), m_merger(merger), m_loader(loader), m_target(std::move(target))
{
}

RebackfillCompareRows::~RebackfillCompareRows() = default;

std::unique_ptr<RebackfillCompareRows> RebackfillCompareRows::open(const TableJob &job, const TableSchema &schema,
                                                                   Merger &merger, PgConnection &loader,
                                                                   bool intoPostgres)
{
    if (job.source.kind != EndpointKind::Postgres || (job.target.kind == EndpointKind::Postgres && !intoPostgres))
        return nullptr;
    if ((job.spec.columns && !job.spec.columns->empty()) || job.spec.where || softDeletes(job.spec) || job.twoWay)
        return nullptr;
    if (schema.primaryKey.empty())
        return nullptr;
    // Integers order alike everywhere, and their text is their canonical text: the page's last
    // key bounds the target's range as it is.
    for (int k : schema.primaryKey)
        if (rowhash::canonFor(schema.columns[static_cast<size_t>(k)]) != rowhash::Canon::Integer)
            return nullptr;
    auto target = std::make_unique<Target>();
    try {
        target->ctx = recon::openTable(job, ReconcileOptions{});
    } catch (const Error &) {
        return nullptr; // no target table yet, or a column it lacks: copy every row
    }
    const auto &ctx = target->ctx;
    if (!ctx.skipped.empty() || ctx.keys.size() != schema.primaryKey.size() || !ctx.target->keysOrderable())
        return nullptr;
    std::unique_ptr<RebackfillCompareRows> out(new RebackfillCompareRows(schema, merger, loader, std::move(target)));
    std::string select = "SELECT ";
    for (const auto &k : ctx.keys)
        select += rowhash::pgCanonicalText(k, "s." + quoteIdent(k.name)) + ", ";
    // The hash the target side compares with: the canonical one, or (into Postgres) the native
    // hash both servers share.
    select += ctx.pgSource ? ctx.pgSource->rowHashSql("s") : rowhash::pgRowHash(ctx.schema.columns, "s");
    for (const auto &c : schema.columns) {
        const std::string q = "s." + quoteIdent(c.name);
        select += ", " + (!c.isArray && c.baseType == "bpchar" ? pgOutputText(q) : q + "::text");
    }
    out->m_select = select + " FROM " + schema.fromSql() + " s";
    for (size_t i = 0; i < schema.primaryKey.size(); ++i) {
        const auto &k = schema.columns[static_cast<size_t>(schema.primaryKey[i])];
        out->m_keys += (i ? ", " : "") + std::string("s.") + quoteIdent(k.name);
        out->m_keyTypes.push_back(k.typeSql);
    }
    return out;
}

RebackfillPage RebackfillCompareRows::step(const std::vector<std::string> &after, long long limit, std::int64_t version,
                                           std::int64_t)
{
    // The page, and one row more: its key ends the page's range on the target.
    std::string where;
    Params params;
    if (!after.empty()) {
        std::string bound;
        for (size_t i = 0; i < after.size(); ++i) {
            params.emplace_back(after[i]);
            bound += (i ? ", " : "") + std::string("$") + std::to_string(i + 1) + "::" + m_keyTypes[i];
        }
        where = " WHERE (" + m_keys + ") > (" + bound + ")";
    }
    auto r =
        m_loader.execParams(m_select + where + " ORDER BY " + m_keys + " LIMIT " + std::to_string(limit + 1), params);
    const int nk = static_cast<int>(m_keyTypes.size());
    const int rows = std::min<int>(r.rows(), static_cast<int>(limit));
    RebackfillPage page;
    page.rows = rows;
    std::optional<recon::RawKey> next;
    if (r.rows() > rows) {
        next.emplace();
        for (int c = 0; c < nk; ++c)
            next->push_back(r.text(rows, c));
    }
    page.end = !next;
    std::vector<HashedRow> read(static_cast<size_t>(rows));
    const int columns = static_cast<int>(m_schema.columns.size());
    for (int i = 0; i < rows; ++i) {
        for (int c = 0; c < nk; ++c)
            read[static_cast<size_t>(i)].key.push_back(r.text(i, c));
        read[static_cast<size_t>(i)].hash = r.toInt(i, nk);
        std::vector<std::optional<std::string>> values;
        for (int c = 0; c < columns; ++c)
            values.push_back(r.optText(i, nk + 1 + c));
        read[static_cast<size_t>(i)].line = copytext::line(values);
    }
    const auto lo = after.empty() ? std::nullopt : std::make_optional(after);
    RangeDiff diff =
        diffRange(read, *m_target->ctx.target, lo, next, true, m_schema.primaryKey, m_schema.columns.size(), version);
    page.equalRows = diff.alike;
    if (!diff.staged.empty()) {
        const ApplyResult applied = m_merger.mergeInTransaction(diff.staged);
        page.removed = std::min(diff.removed, applied.rowsWritten);
        page.written = applied.rowsWritten - page.removed;
    }
    if (rows > 0) {
        for (int c = 0; c < nk; ++c)
            page.last.push_back(r.text(rows - 1, nk + 1 + m_schema.primaryKey[static_cast<size_t>(c)]));
    } else {
        page.last = after;
    }
    return page;
}

} // namespace driftless::core
