#include "core/engine/reconcile/reconciler.h"

#include "core/base/clock.h"
#include "core/base/copytext.h"
#include "core/db/mysqlcatalog.h"
#include "core/db/pgcatalog.h"
#include "core/db/sqlitedb.h"
#include "core/engine/rows/columnmapping.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/engine/reconcile/reconcilemysql.h"
#include "core/engine/reconcile/reconcilepg.h"
#include "core/engine/reconcile/reconcileside.h"
#include "core/engine/rows/rowfilter.h"
#include "core/engine/rows/rowhash.h"
#include "core/engine/jobs/tableargs.h"
#include "core/engine/jobs/tablejob.h"
#include "core/mergers/softdelete.h"
#include "core/mergers/sqlitetypes.h"
#include "core/model/cdcposition.h"
#include "core/model/duration.h"
#include "core/model/error.h"
#include "core/state/statestore.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <unordered_map>

namespace driftless::core {

using json = nlohmann::json;
using rowhash::Checksum;

namespace {

using recon::Plan;
using recon::Range;
using recon::RawKey;
using recon::RowData;
using recon::Side;
using recon::caseTree;
using recon::MysqlSide;
using recon::PgSide;
using recon::keyColumnArray;

/// Segments for ranges given in key order, each range's sub-ranges numbered from `ids`.
Plan planFor(const std::vector<Range> &ranges)
{
    Plan p;
    p.labels.clear();
    for (size_t i = 0; i < ranges.size(); ++i) {
        const auto &r = ranges[i];
        if (r.lo && (p.edges.empty() || p.edges.back() != *r.lo)) {
            p.edges.push_back(*r.lo);
            p.labels.push_back(-1); // the gap before this range
        }
        if (!r.hi) {
            p.labels.push_back(static_cast<int>(i));
            return p;
        }
        p.edges.push_back(*r.hi);
        p.labels.push_back(static_cast<int>(i));
    }
    p.labels.push_back(-1);
    return p;
}


class SqliteSide final : public Side {
public:
    SqliteSide(const std::string &path, std::string table, const TableSchema &schema, std::vector<ColumnInfo> keys)
        : m_db(path, SqliteDb::Mode::ReadOnly), m_table(quoteIdent(table)), m_columns(schema.columns),
          m_keys(std::move(keys)), m_path(path)
    {
        rowhash::registerSqliteFunctions(m_db.raw());
        m_spec = rowhash::canonSpec(m_columns);
        std::string cols;
        for (const auto &c : m_columns)
            cols += ", " + quoteIdent(c.name);
        // A SQLite function takes at most 127 arguments: a wider row is hashed in parts.
        constexpr size_t kPart = 100;
        if (m_columns.size() < kPart) {
            m_rowHash = "driftless_rowhash('" + m_spec + "'" + cols + ")";
        } else {
            m_rowHash = "driftless_rowhash_parts(";
            for (size_t from = 0; from < m_columns.size(); from += kPart) {
                const size_t to = std::min(m_columns.size(), from + kPart);
                m_rowHash += (from ? ", " : "") + ("driftless_record_part('" + m_spec.substr(from, to - from) + "'");
                for (size_t i = from; i < to; ++i)
                    m_rowHash += ", " + quoteIdent(m_columns[i].name);
                m_rowHash += ")";
            }
            m_rowHash += ")";
        }
    }

    std::map<int, Checksum> checksums(const Plan &plan) override
    {
        std::vector<std::pair<std::string, SqliteStorage>> binds;
        const std::string tree = treeSql(plan, binds);
        auto st = prepare("SELECT _dl_b, count(*), driftless_hashsum(" + m_rowHash +
                              ") FROM (SELECT " + tree + " AS _dl_b, * FROM " + m_table +
                              ") WHERE _dl_b IS NOT NULL GROUP BY 1",
                          binds);
        std::map<int, Checksum> out;
        while (st.step())
            out[static_cast<int>(st.int64(0))] = Checksum::fromDecimal(st.int64(1), st.text(2));
        return out;
    }

    std::vector<std::pair<int, RawKey>> sample(const Plan &, long long) override
    {
        throw Error(ErrorKind::Permanent, "internal: key ranges are sampled from the Postgres side");
    }

    void hashes(const Plan &plan, const std::function<void(CanonicalKey &&, std::int64_t)> &row) override
    {
        std::vector<std::pair<std::string, SqliteStorage>> binds;
        const std::string tree = treeSql(plan, binds);
        std::string sel;
        for (const auto &k : m_keys)
            sel += "driftless_canon('" + std::string(1, static_cast<char>(rowhash::canonFor(k))) + "', " +
                   quoteIdent(k.name) + "), ";
        auto st = prepare("SELECT " + sel + m_rowHash + " FROM (SELECT " + tree +
                              " AS _dl_b, * FROM " + m_table + ") WHERE _dl_b IS NOT NULL",
                          binds);
        const int n = static_cast<int>(m_keys.size());
        while (st.step()) {
            CanonicalKey k;
            for (int c = 0; c < n; ++c)
                k.push_back(st.text(c));
            row(std::move(k), st.int64(n));
            ++fetched;
        }
    }

    std::unordered_map<std::string, RowData> rows(const std::vector<CanonicalKey> &keys) override
    {
        std::string sel, where;
        for (size_t i = 0; i < m_keys.size(); ++i) {
            const auto &k = m_keys[i];
            const std::string code(1, static_cast<char>(rowhash::canonFor(k)));
            sel += "driftless_canon('" + code + "', " + quoteIdent(k.name) + "), ";
            const bool byCanon = k.category == 'N' ? rowhash::canonFor(k) != rowhash::Canon::Integer : false;
            where += std::string(i ? " AND " : "") +
                     (byCanon ? "driftless_canon('" + code + "', " + quoteIdent(k.name) + ")" : quoteIdent(k.name)) +
                     " = ?" + std::to_string(i + 1);
        }
        for (const auto &c : m_columns)
            sel += "driftless_canon('" + std::string(1, static_cast<char>(rowhash::canonFor(c))) + "', " +
                   quoteIdent(c.name) + "), ";
        ++queries;
        auto st = m_db.prepare("SELECT " + sel + m_rowHash + " FROM " + m_table +
                               " WHERE " + where);
        std::unordered_map<std::string, RowData> out;
        const int nk = static_cast<int>(m_keys.size());
        const int nc = static_cast<int>(m_columns.size());
        for (const auto &key : keys) {
            st.reset();
            st.clearBindings();
            for (size_t i = 0; i < m_keys.size(); ++i) {
                const auto &k = m_keys[i];
                const bool byCanon = k.category == 'N' && rowhash::canonFor(k) != rowhash::Canon::Integer;
                if (byCanon)
                    st.bindText(static_cast<int>(i + 1), key[i]);
                else
                    bindStoredValue(st, static_cast<int>(i + 1), key[i], sqliteStorageFor(k));
            }
            while (st.step()) {
                RowData d;
                for (int c = 0; c < nk; ++c)
                    d.key.push_back(st.text(c));
                for (int c = 0; c < nc; ++c)
                    d.values.push_back(st.optText(nk + c));
                d.hash = st.int64(nk + nc);
                out.emplace(rowhash::recordText({d.key.begin(), d.key.end()}), std::move(d));
                ++fetched;
            }
        }
        return out;
    }

    std::string describe() const override { return m_path + " " + m_table; }
    /// Compares only the rows that hold `filter` (an SQLite condition on the table's columns).
    void setRowFilter(const std::string &filter) { m_table = "(SELECT * FROM " + m_table + " WHERE " + filter + ")"; }

private:
    SqliteStmt prepare(const std::string &sql, const std::vector<std::pair<std::string, SqliteStorage>> &binds)
    {
        ++queries;
        auto st = m_db.prepare(sql);
        for (size_t i = 0; i < binds.size(); ++i)
            bindStoredValue(st, static_cast<int>(i + 1), binds[i].first, binds[i].second);
        return st;
    }

    std::string treeSql(const Plan &plan, std::vector<std::pair<std::string, SqliteStorage>> &binds)
    {
        return caseTree(plan, 0, plan.labels.size() - 1, [&](size_t e) {
            std::string lhs, rhs;
            for (size_t i = 0; i < m_keys.size(); ++i) {
                binds.emplace_back(plan.edges[e][i], sqliteStorageFor(m_keys[i]));
                lhs += std::string(i ? ", " : "") + quoteIdent(m_keys[i].name);
                rhs += std::string(i ? ", " : "") + "?" + std::to_string(binds.size());
            }
            return m_keys.size() == 1 ? lhs + " < " + rhs : "(" + lhs + ") < (" + rhs + ")";
        });
    }

    SqliteDb m_db;
    std::string m_table;
    std::vector<ColumnInfo> m_columns;
    std::vector<ColumnInfo> m_keys;
    std::string m_path;
    std::string m_spec;
    std::string m_rowHash; ///< the SQL hashing one row, as the source's row hash
};

/// Whether both sides order the key the same way, so ranges can be compared segment by segment.
/// Between two Postgres servers every built-in type does. SQLite and MySQL/MariaDB order numbers
/// as numbers, bytes as bytes and ISO dates and UTC timestamps as their text; text orders by
/// bytes in Postgres (COLLATE "C") and SQLite (BINARY), and a MySQL side further checks its
/// collation (Side::keysOrderable: case-insensitive and PAD SPACE collations do not).
bool orderable(const std::vector<ColumnInfo> &keys, EndpointKind source, EndpointKind target)
{
    const bool sqlite = source == EndpointKind::Sqlite || target == EndpointKind::Sqlite;
    const bool mysql = source == EndpointKind::Mysql || target == EndpointKind::Mysql;
    for (const auto &k : keys) {
        if (k.isArray || !k.isBuiltinType())
            return false;
        if (!sqlite && !mysql)
            continue;
        switch (rowhash::canonFor(k)) {
        case rowhash::Canon::Integer:
        case rowhash::Canon::Boolean:
        case rowhash::Canon::Bytes:
        case rowhash::Canon::TimestampTz:
            break;
        case rowhash::Canon::Float:
            // MySQL prints doubles in its own way: boundary keys would not read back exactly.
            if (mysql)
                return false;
            break;
        case rowhash::Canon::Text:
            // ISO dates and lower-case UUIDs order as their text does; char(n) pads differently
            // in MySQL.
            if (k.category != 'S' && k.baseType != "uuid" && k.baseType != "date" && k.baseType != "timestamp")
                return false;
            if (mysql && k.baseType == "bpchar")
                return false;
            break;
        case rowhash::Canon::Numeric:
            // SQLite holds numerics as text; MySQL DECIMAL orders as numbers.
            if (sqlite)
                return false;
            break;
        }
    }
    return true;
}

/// Runs both sides' parts of a step at once (each on its own connection).
template <typename A, typename B> auto both(A &&a, B &&b)
{
    auto fb = std::async(std::launch::async, std::forward<B>(b));
    auto ra = a();
    return std::make_pair(std::move(ra), fb.get());
}

struct Candidate {
    CanonicalKey key;
    std::optional<std::int64_t> hash[2];
};

/// Compares one table. Sides: 0 source, 1 target.
class Comparer {
public:
    Comparer(Side &source, Side &target, TableReconcile &out, const ReconcileOptions &opt, bool canBisect)
        : m_side{&source, &target}, m_out(out), m_opt(opt), m_bisect(canBisect)
    {
    }

    /// Finds the candidate differing keys (before any recheck). Returns false when equal.
    bool run(std::unordered_map<std::string, Candidate> &cands)
    {
        phase("checksum");
        std::vector<Range> ranges;
        if (auto buckets = m_bisect ? byBuckets() : std::nullopt) {
            if (buckets->empty())
                return false;
            ranges = std::move(*buckets);
        } else {
            Plan whole;
            auto [s, t] = both([&] { return m_side[0]->checksums(whole); }, [&] { return m_side[1]->checksums(whole); });
            const Checksum cs = s.count(0) ? s[0] : Checksum{};
            const Checksum ct = t.count(0) ? t[0] : Checksum{};
            m_out.sourceRows = cs.rows;
            m_out.targetRows = ct.rows;
            if (cs == ct)
                return false;
            ranges.resize(1);
            ranges[0].rows[0] = cs.rows;
            ranges[0].rows[1] = ct.rows;
        }
        for (int level = 0; level < 8; ++level) {
            long long total = 0;
            for (const auto &r : ranges)
                total += r.size();
            if (!m_bisect || total <= m_opt.fetchRows)
                break;
            checkStop();
            phase("bisect");
            auto next = split(ranges, total);
            if (next.empty())
                return false; // the differences were rows moving under us; nothing differs now
            long long narrowed = 0;
            for (const auto &r : next)
                narrowed += r.size();
            ranges = std::move(next);
            if (narrowed >= total)
                break; // nothing left to split (ranges of one key, or rows only in the target)
        }
        checkStop();
        phase("fetch");
        const Plan plan = planFor(ranges);
        auto collect = [&](int side) {
            std::vector<std::pair<CanonicalKey, std::int64_t>> rows;
            m_side[side]->hashes(plan, [&](CanonicalKey &&k, std::int64_t h) { rows.emplace_back(std::move(k), h); });
            return rows;
        };
        auto [rs, rt] = both([&] { return collect(0); }, [&] { return collect(1); });
        std::unordered_map<std::string, Candidate> all;
        all.reserve(rs.size() + rt.size());
        for (int side = 0; side < 2; ++side)
            for (auto &[k, h] : side == 0 ? rs : rt) {
                auto &c = all[rowhash::recordText({k.begin(), k.end()})];
                if (c.key.empty())
                    c.key = std::move(k);
                c.hash[side] = h;
            }
        for (auto &[rec, c] : all)
            if (c.hash[0] != c.hash[1])
                cands.emplace(rec, std::move(c));
        return !cands.empty();
    }

private:
    void phase(std::string_view p)
    {
        if (m_opt.onPhase)
            m_opt.onPhase(m_out.table, p);
    }

    void checkStop()
    {
        if (m_opt.stop.stop_requested())
            throw Error(ErrorKind::Transient, "reconciliation stopped");
    }

    /// The first pass over a one-column integer key: both sides' rows checksummed per bucket of
    /// about bucketKeys keys in the one scan a whole-table checksum costs. Returns the
    /// differing buckets as ranges (empty: equal), and fills the row counts; nullopt when a side
    /// cannot bucket (then the whole-table checksum and sampled segments run instead).
    std::optional<std::vector<Range>> byBuckets()
    {
        const std::int64_t perBucket = std::max<long long>(1, m_opt.bucketKeys);
        const std::int64_t maxBuckets = std::clamp<long long>(m_opt.maxBuckets, 1, 1 << 20);
        if (!m_side[0]->bucketsByKey() || !m_side[1]->bucketsByKey())
            return std::nullopt;
        auto [bs, bt] = both([&] { return m_side[0]->keyBounds(); }, [&] { return m_side[1]->keyBounds(); });
        if (!bs && !bt) {
            m_out.sourceRows = m_out.targetRows = 0;
            return std::vector<Range>{};
        }
        const std::int64_t lo = std::min(bs ? bs->first : bt->first, bt ? bt->first : bs->first);
        const std::int64_t hi = std::max(bs ? bs->second : bt->second, bt ? bt->second : bs->second);
        // hi - lo in unsigned arithmetic is exact (hi >= lo).
        const std::uint64_t spread = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
        if (spread >= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return std::nullopt; // keys spread over more than 63 bits: sampled segments
        const std::int64_t keys = static_cast<std::int64_t>(spread) + 1;
        const std::int64_t n = std::clamp<std::int64_t>((keys + perBucket - 1) / perBucket, 1, maxBuckets);
        const std::int64_t width = (keys + n - 1) / n;
        const int last = static_cast<int>((keys - 1) / width);
        auto [s, t] = both([&] { return m_side[0]->bucketChecksums(lo, hi, width, last); },
                           [&] { return m_side[1]->bucketChecksums(lo, hi, width, last); });
        m_out.sourceRows = m_out.targetRows = 0;
        for (const auto &[b, c] : s)
            m_out.sourceRows += c.rows;
        for (const auto &[b, c] : t)
            m_out.targetRows += c.rows;
        std::set<int> ids;
        for (const auto *m : {&s, &t})
            for (const auto &[b, c] : *m)
                ids.insert(b);
        std::vector<Range> out;
        for (int b : ids) {
            const Checksum a = s.count(b) ? s[b] : Checksum{};
            const Checksum z = t.count(b) ? t[b] : Checksum{};
            if (a == z)
                continue;
            Range r;
            // Bucket b holds [lo + b * width, lo + (b + 1) * width); -1 is open below, `last` above
            // (every bound is a key between lo and hi, so it casts back to the key's type).
            if (b >= 0)
                r.lo = RawKey{std::to_string(lo + static_cast<std::int64_t>(b) * width)};
            if (b < last)
                r.hi = RawKey{std::to_string(b < 0 ? lo : lo + static_cast<std::int64_t>(b + 1) * width)};
            r.rows[0] = a.rows;
            r.rows[1] = z.rows;
            out.push_back(std::move(r));
        }
        return out;
    }

    /// Splits every range into segments sampled from the side with more rows there (the source
    /// unless only the target has rows), checksums them on both sides and keeps the differing.
    std::vector<Range> split(const std::vector<Range> &ranges, long long total)
    {
        const long long step =
            std::max(m_opt.minSegmentRows, (total + m_opt.maxSegments - 1) / std::max(1, m_opt.maxSegments));
        const Plan parents = planFor(ranges);
        auto samples = m_side[0]->sample(parents, step);
        std::vector<Range> segs;
        size_t si = 0;
        for (size_t r = 0; r < ranges.size(); ++r) {
            std::optional<RawKey> lo = ranges[r].lo;
            for (; si < samples.size() && samples[si].first == static_cast<int>(r); ++si) {
                if (lo && samples[si].second == *lo)
                    continue; // would start an empty segment
                Range s;
                s.lo = lo;
                s.hi = samples[si].second;
                lo = s.hi;
                segs.push_back(std::move(s));
            }
            Range last;
            last.lo = lo;
            last.hi = ranges[r].hi;
            segs.push_back(std::move(last));
        }
        const Plan plan = planFor(segs);
        auto [s, t] = both([&] { return m_side[0]->checksums(plan); }, [&] { return m_side[1]->checksums(plan); });
        std::vector<Range> out;
        for (size_t i = 0; i < segs.size(); ++i) {
            const int id = static_cast<int>(i);
            const Checksum a = s.count(id) ? s[id] : Checksum{};
            const Checksum b = t.count(id) ? t[id] : Checksum{};
            if (a == b)
                continue;
            segs[i].rows[0] = a.rows;
            segs[i].rows[1] = b.rows;
            out.push_back(std::move(segs[i]));
        }
        (void)total;
        return out;
    }

    Side *m_side[2];
    TableReconcile &m_out;
    const ReconcileOptions &m_opt;
    bool m_bisect;
};

/// Everything needed to compare one table of a pipeline.
struct TableContext {
    TableJob job;
    TableSchema schema;
    std::vector<ColumnInfo> keys;
    std::unique_ptr<Side> source;
    std::unique_ptr<Side> target;
    PgSide *pgSource = nullptr;    ///< the source, when it is Postgres
    MysqlSide *mySource = nullptr; ///< the source, when it is MySQL/MariaDB
    /// A MySQL source's own description (repair reads rows as its readers do).
    std::optional<mysqlcatalog::MysqlTable> myTable;
    /// Why the table cannot be compared exactly, when it cannot.
    std::string skipped;
    /// A Postgres source's FROM item: the table, or for a mapped table a subquery giving the
    /// target's columns (renamed, masked), so both sides compare what the target should hold.
    std::string sourceFrom;
};

std::string targetSql(const TargetName &t) { return quoteIdent(t.schema) + "." + quoteIdent(t.name); }

/// The target table's column names; empty when it has none (openTable then says so).
std::vector<std::string> targetColumnNames(const TableJob &job)
{
    std::vector<std::string> out;
    if (job.target.kind == EndpointKind::Postgres) {
        PgConnection tgt = connectPostgres(job.target, "driftless reconcile");
        auto r = tgt.execParams("SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND "
                                "NOT attisdropped",
                                {targetSql(job.targetName)});
        for (int i = 0; i < r.rows(); ++i)
            out.push_back(r.text(i, 0));
    } else if (job.target.kind == EndpointKind::Sqlite) {
        if (!std::filesystem::exists(job.target.path))
            return out;
        SqliteDb db(job.target.path, SqliteDb::Mode::ReadOnly);
        auto st = db.prepare("SELECT name FROM pragma_table_info(?1)");
        st.bindText(1, job.targetName.name);
        while (st.step())
            out.push_back(st.text(0));
    } else {
        MysqlConnection tgt = connectMysql(job.target);
        auto r = tgt.query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
                           "TABLE_NAME = ?",
                           {job.targetName.name});
        for (size_t i = 0; i < r.size(); ++i)
            out.push_back(r.text(i, 0));
    }
    return out;
}

/// Leaves out the generated columns a target lacks: a CDC target an older version made had
/// none, and they are compared once the sync has added them.
void keepSyncedGenerated(TableSchema &schema, const TableJob &job)
{
    if (std::none_of(schema.columns.begin(), schema.columns.end(), [](const ColumnInfo &c) { return c.generated; }))
        return;
    const auto have = targetColumnNames(job);
    if (have.empty())
        return;
    std::vector<std::string> keyNames;
    for (int k : schema.primaryKey)
        keyNames.push_back(schema.columns[static_cast<size_t>(k)].name);
    std::erase_if(schema.columns, [&](const ColumnInfo &c) {
        return c.generated && std::find(have.begin(), have.end(), c.name) == have.end();
    });
    schema.primaryKey.clear();
    for (const auto &n : keyNames)
        schema.primaryKey.push_back(schema.columnIndex(n));
}

/// Two-way tables: the columns Driftless keeps for itself on each side (`_driftless_version`)
/// belong to that side and are never synced, so they are not compared either. Erased from
/// `schema` (its key remapped) and at the same positions from `parallel`, when given.
void leaveOutOwnColumns(const TableJob &job, TableSchema &schema,
                        std::vector<mysqlcatalog::MysqlColumn> *parallel = nullptr)
{
    if (!job.twoWay)
        return;
    auto own = [](const ColumnInfo &c) { return c.name.rfind("_driftless_", 0) == 0; };
    if (std::none_of(schema.columns.begin(), schema.columns.end(), own))
        return;
    std::vector<std::string> keyNames;
    for (int k : schema.primaryKey)
        keyNames.push_back(schema.columns[static_cast<size_t>(k)].name);
    if (parallel)
        for (size_t i = schema.columns.size(); i-- > 0;)
            if (own(schema.columns[i]) && i < parallel->size())
                parallel->erase(parallel->begin() + static_cast<std::ptrdiff_t>(i));
    std::erase_if(schema.columns, own);
    schema.primaryKey.clear();
    for (const auto &n : keyNames)
        schema.primaryKey.push_back(schema.columnIndex(n));
}

/// How recent a cursor table's differing row must be to count as in flight.
std::chrono::milliseconds recentWindow(const TableJob &job, const ReconcileOptions &opt)
{
    std::chrono::milliseconds window{10 * 60 * 1000};
    if (opt.recentWindow)
        window = *opt.recentWindow;
    else if (job.spec.lookback)
        if (auto d = parseDuration(*job.spec.lookback))
            window = *d;
    return window;
}

/// The source expression telling whether a row's cursor is within the recent window.
std::string recentExpr(const TableJob &job, const TableSchema &schema, const PgConnection &conn,
                       const ReconcileOptions &opt)
{
    if (job.spec.strategy != Strategy::Cursor)
        return {};
    const std::string cursor = job.spec.cursor.value_or(TableSpec::kDefaultCursor);
    const int idx = schema.columnIndex(cursor);
    if (idx < 0)
        return {};
    const std::chrono::milliseconds window = recentWindow(job, opt);
    const auto &c = schema.columns[static_cast<size_t>(idx)];
    const std::string col = "s." + quoteIdent(c.name);
    const std::string interval = "interval '" + std::to_string(window.count()) + " milliseconds'";
    if (c.baseType == "timestamptz")
        return col + " >= now() - " + interval;
    if (c.baseType == "timestamp")
        return col + " >= (now() AT TIME ZONE " + pgLiteral(conn.serverTimeZone()) + ") - " + interval;
    if (c.baseType == "date")
        return col + " >= ((now() AT TIME ZONE " + pgLiteral(conn.serverTimeZone()) + ") - " + interval + ")::date";
    return {};
}

/// Between two Postgres servers that hash alike: which compared columns hash by their type's own
/// function (the same built-in type on both sides, one pgHashesNatively takes); nullopt when the
/// record hash is not available on both (before Postgres 14) or they disagree on its probe. A
/// mapped source (its projection's types are not the table's) keeps the text hash.
std::optional<std::vector<bool>> recordHashColumns(PgSide &source, PgSide &target, const TableSchema &schema,
                                                   const TableJob &job)
{
    try {
        if (source.recordHashProbe() != target.recordHashProbe())
            return std::nullopt;
        const TableSchema there = pgcatalog::describeTable(target.connection(), {job.targetName.schema, job.targetName.name});
        return rowhash::pgRecordHashMask(schema.columns, there.columns);
    } catch (const Error &) {
        return std::nullopt;
    }
}

TableContext openTable(const TableJob &job, const ReconcileOptions &opt)
{
    TableContext ctx;
    ctx.job = job;
    // A MySQL side's canonical text: as Postgres prints the value when the other side is
    // Postgres; as the MySQL readers deliver it when a MySQL source's rows are stored as that text
    // (SQLite, or MySQL/MariaDB on both sides). See reconcilemysql.h.
    const bool pgText = job.source.kind == EndpointKind::Postgres || job.target.kind == EndpointKind::Postgres;
    // Rows are matched by the source's primary key.
    auto takeKeys = [&] {
        if (!ctx.schema.hasPrimaryKey())
            throw Error(ErrorKind::Permanent,
                        job.spec.table.display() + " has no primary key: rows cannot be matched between source and target",
                        {}, "add a primary key to the source table");
        for (int k : ctx.schema.primaryKey)
            ctx.keys.push_back(ctx.schema.columns[static_cast<size_t>(k)]);
    };
    if (job.source.kind == EndpointKind::Postgres) {
        PgConnection src = connectPostgres(job.source, "driftless reconcile");
        // Generated columns compare too: every target holds their values (a Postgres target
        // computes them, the others store what the sync read).
        ctx.schema = pgcatalog::describeTable(src, job.spec.table);
        ctx.sourceFrom = rowFilterFromSql(ctx.schema, job.spec); // only the rows of its filter
        TableJob recentJob = job;
        if (job.spec.columns && !job.spec.columns->empty()) {
            // The transformed projection against the target: the mapped names and values.
            const TableSchema source = ctx.schema;
            auto mapped = pgMappedSource(job.spec, source);
            if (!mapped.why.empty()) {
                ctx.skipped = mapped.why;
                return ctx;
            }
            ctx.schema = mapped.target;
            ctx.sourceFrom = mapped.from;
            if (job.spec.strategy == Strategy::Cursor) {
                // The cursor under its target name (never masked, maybe renamed).
                const ColumnProjection p(job.spec, source);
                const auto &from = p.sourceColumns();
                const auto at = std::find(from.begin(), from.end(), source.columnIndex(job.spec.cursorColumn()));
                if (at != from.end())
                    recentJob.spec.cursor = p.target().columns[static_cast<size_t>(at - from.begin())].name;
            }
        } else {
            keepSyncedGenerated(ctx.schema, job);
        }
        leaveOutOwnColumns(job, ctx.schema);
        takeKeys();
        const std::string recent = recentExpr(recentJob, ctx.schema, src, opt);
        auto side = std::make_unique<PgSide>(std::move(src), ctx.sourceFrom, ctx.schema, ctx.keys, recent);
        ctx.pgSource = side.get();
        ctx.source = std::move(side);
    } else if (job.source.kind == EndpointKind::Mysql) {
        MysqlConnection src = connectMysql(job.source);
        if (job.spec.columns && !job.spec.columns->empty()) {
            ctx.skipped = "a column mapping on a MySQL/MariaDB source is not reconciled yet; re-backfill the table to "
                          "correct it";
            return ctx;
        }
        ctx.myTable = mysqlcatalog::describeTable(src, job.spec.table);
        leaveOutOwnColumns(job, ctx.myTable->schema, &ctx.myTable->columns);
        // The sync carries generated columns as plain ones (their values), so they compare too.
        ctx.schema = ctx.myTable->schema;
        takeKeys();
        std::optional<MysqlSide::Recent> recent;
        if (job.spec.strategy == Strategy::Cursor) {
            const int idx = ctx.schema.columnIndex(job.spec.cursor.value_or(TableSpec::kDefaultCursor));
            if (idx >= 0)
                recent = MysqlSide::Recent{static_cast<size_t>(idx), recentWindow(job, opt)};
        }
        auto side = std::make_unique<MysqlSide>(std::move(src), job.spec.table, ctx.schema, ctx.myTable->columns,
                                                pgText, recent);
        if (job.spec.where)
            side->setRowFilter(*job.spec.where);
        ctx.mySource = side.get();
        ctx.source = std::move(side);
    } else {
        throw Error(ErrorKind::Permanent, "endpoint '" + job.source.name + "': SQLite is a target only", {},
                    "use a Postgres or MySQL/MariaDB endpoint as the pipeline's source");
    }
    // `deletes: soft`: a marked row is one the source deleted, so it counts as absent. (A target
    // the sync has not run on since soft deletes were turned on has no marks, and no column yet.)
    std::optional<std::string> liveOnly;
    if (softDeletes(job.spec)) {
        const auto have = targetColumnNames(job);
        if (std::find(have.begin(), have.end(), kDeletedAtColumn) != have.end())
            liveOnly = std::string(kDeletedAtColumn) + " IS NULL"; // a plain name on every target
    }
    const auto missingTarget = [&] {
        return Error(ErrorKind::Permanent, "target table " + job.targetName.display() + " does not exist yet", {},
                     "run the pipeline once to create and load it");
    };
    if (job.target.kind == EndpointKind::Postgres) {
        PgConnection tgt = connectPostgres(job.target, "driftless reconcile");
        auto exists = tgt.execParams("SELECT to_regclass($1) IS NOT NULL", {targetSql(job.targetName)});
        if (!exists.toBool(0, 0))
            throw missingTarget();
        const std::string from = liveOnly ? "(SELECT * FROM " + targetSql(job.targetName) + " WHERE " + *liveOnly + ")"
                                          : targetSql(job.targetName);
        auto side = std::make_unique<PgSide>(std::move(tgt), from, ctx.schema, ctx.keys);
        // Two Postgres servers that hash a probe alike hash every row alike: use their native
        // text hash, several times cheaper than MD5.
        if (ctx.pgSource) {
            bool native = false;
            try {
                native = side->nativeHashProbe() == ctx.pgSource->nativeHashProbe();
            } catch (const Error &) {
                native = false; // before Postgres 11
            }
            side->useNativeHash(native);
            ctx.pgSource->useNativeHash(native);
            if (native && !(job.spec.columns && !job.spec.columns->empty()))
                if (auto mask = recordHashColumns(*ctx.pgSource, *side, ctx.schema, job)) {
                    side->useRecordHash(*mask);
                    ctx.pgSource->useRecordHash(*mask);
                }
        }
        ctx.target = std::move(side);
    } else if (job.target.kind == EndpointKind::Sqlite) {
        {
            SqliteDb probe(job.target.path, SqliteDb::Mode::ReadOnly);
            if (!probe.tableExists(job.targetName.name))
                throw missingTarget();
        }
        auto side = std::make_unique<SqliteSide>(job.target.path, job.targetName.name, ctx.schema, ctx.keys);
        if (liveOnly)
            side->setRowFilter(*liveOnly);
        ctx.target = std::move(side);
    } else {
        MysqlConnection tgt = connectMysql(job.target);
        const TableRef table{tgt.dsn().database, job.targetName.name};
        if (!tgt.scalar("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                        {table.schema, table.name}))
            throw missingTarget();
        auto physical = MysqlSide::targetColumns(tgt, table, ctx.schema);
        for (const auto &m : physical)
            if (m.dataType == "json" && job.source.kind == EndpointKind::Postgres)
                ctx.skipped = "column " + m.name +
                              " is a MySQL JSON column, which normalises the text Postgres sent (key order, "
                              "spacing, numbers), so it cannot be compared exactly; leave the column out of the "
                              "comparison with a view on both sides, or compare it by hand";
        auto side = std::make_unique<MysqlSide>(std::move(tgt), table, ctx.schema, std::move(physical), pgText);
        if (liveOnly)
            side->setRowFilter(*liveOnly);
        ctx.target = std::move(side);
    }
    return ctx;
}

/// The applied source position a stored checkpoint records (CDC streaming), 0 when none.
std::int64_t appliedPosition(const std::optional<Checkpoint> &cp)
{
    if (!cp)
        return 0;
    const auto pos = parseCdcPosition(cp->position);
    return pos ? appliedVersion(*pos) : 0;
}

std::vector<ColumnDiff> columnDiffs(const TableSchema &schema, const RowData &s, const RowData &t)
{
    std::vector<ColumnDiff> out;
    for (size_t c = 0; c < schema.columns.size(); ++c)
        if (s.values[c] != t.values[c])
            out.push_back({schema.columns[c].name, s.values[c], t.values[c]});
    return out;
}

/// What one reconcile run learnt about its pipeline's sync while waiting for it.
struct SettleMemo {
    /// A wait ran out without the sync applying anything: it is not running (or not applying),
    /// so the pipeline's next tables do not wait for it again.
    bool stalled = false;
};

/// Rechecks the candidates after letting the sync catch up, and fills the report's counts.
void settleAndClassify(TableContext &ctx, std::unordered_map<std::string, Candidate> &cands, TableReconcile &out,
                       const ReconcileOptions &opt, SettleMemo &memo)
{
    const bool cdc = ctx.job.spec.strategy == Strategy::Cdc;
    constexpr size_t kRecheckLimit = 200'000;
    if (cands.size() > kRecheckLimit) {
        // Too many to look at twice: count them as found, list the first ones.
        for (auto &[rec, c] : cands) {
            if (c.hash[0] && !c.hash[1])
                ++out.missing;
            else if (!c.hash[0] && c.hash[1])
                ++out.extra;
            else
                ++out.different;
            auto &list = c.hash[0] && !c.hash[1] ? out.missingKeys : out.extraKeys;
            if (c.hash[0] && c.hash[1]) {
                if (out.differentRows.size() < static_cast<size_t>(opt.maxKeys))
                    out.differentRows.push_back({c.key, {}});
            } else if (list.size() < static_cast<size_t>(opt.maxKeys)) {
                list.push_back(c.key);
            }
        }
        out.note = "more than " + std::to_string(kRecheckLimit) +
                   " rows differ: not rechecked for changes in flight, and differing columns not listed";
        return;
    }
    if (cdc) {
        // The source position now: Postgres' WAL position, or a MySQL source's binlog position
        // as a version (the same numbers the MySQL CDC checkpoint records). A MySQL source whose
        // binlog position cannot be read (no BINLOG MONITOR / REPLICATION CLIENT) gives its
        // clock instead, which any binlog version exceeds: the wait then ends at once and rows
        // still in flight count as drift (the note of reconcile docs).
        const std::int64_t sourceNow = ctx.pgSource ? pgcatalog::currentLsn(ctx.pgSource->connection())
                                                    : mysqlcatalog::currentVersion(ctx.mySource->connection());
        const auto position = [&](std::int64_t v) {
            if (ctx.pgSource)
                return formatLsn(v);
            const auto u = static_cast<std::uint64_t>(v);
            if (u < (std::uint64_t(1) << 52))
                return std::string("none");
            return "binlog file no. " + std::to_string((u - (std::uint64_t(1) << 52)) >> 32) + " offset " +
                   std::to_string(u & 0xffffffffu);
        };
        if (opt.onPhase)
            opt.onPhase(out.table, "settle");
        const auto deadline = std::chrono::steady_clock::now() + opt.settle;
        // One connection to the target's checkpoint for the whole wait.
        const auto &job = ctx.job;
        auto checkpoints = createMerger(job.target, {job.pipeline, job.spec.table, job.targetName, job.spec.strategy});
        const auto stored = checkpoints->readCheckpoint();
        const auto marks = stored ? parseCdcPosition(stored->position) : std::nullopt;
        const bool stoppedMark = marks && stoppedBy(*marks);
        const bool halted = stoppedMark || (marks && markedPaused(*marks));
        std::int64_t applied = appliedPosition(stored);
        const std::int64_t before = applied;
        // A table stopped or paused takes no changes, and a sync found not applying will not
        // start to for the next table either: no wait then.
        while (!halted && !memo.stalled && applied < sourceNow && std::chrono::steady_clock::now() < deadline &&
               !opt.stop.stop_requested()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
            applied = appliedPosition(checkpoints->readCheckpoint());
        }
        if (!halted && applied < sourceNow && applied == before)
            memo.stalled = true;
        if (halted)
            out.note = std::string("the table is ") + (stoppedMark ? "stopped by an error" : "paused") +
                       ": rows changed at the source since then count as drift until it is copied again";
        else if (applied < sourceNow)
            out.note = "the target had applied the source up to " + position(applied) + ", not " + position(sourceNow) +
                       " (is the sync running?): rows changed since then count as drift until it applies them";
    }
    if (opt.onPhase)
        opt.onPhase(out.table, "recheck");
    std::vector<CanonicalKey> keys;
    keys.reserve(cands.size());
    for (auto &[rec, c] : cands)
        keys.push_back(c.key);
    auto [rs, rt] = both([&] { return ctx.source->rows(keys); }, [&] { return ctx.target->rows(keys); });
    std::vector<std::string> order;
    for (auto &[rec, c] : cands)
        order.push_back(rec);
    std::sort(order.begin(), order.end());
    const bool cursor = ctx.job.spec.strategy == Strategy::Cursor;
    for (const auto &rec : order) {
        const auto &c = cands[rec];
        auto si = rs.find(rec);
        auto ti = rt.find(rec);
        std::optional<std::int64_t> now[2];
        if (si != rs.end())
            now[0] = si->second.hash;
        if (ti != rt.end())
            now[1] = ti->second.hash;
        if (now[0] == now[1] || now[0] != c.hash[0] || now[1] != c.hash[1]) {
            ++out.inFlight; // converged, or changed while we looked: the sync is on it
            continue;
        }
        if (cursor && si != rs.end() && si->second.recent) {
            ++out.inFlight; // the next cursor pass re-reads it
            continue;
        }
        if (now[0] && !now[1]) {
            ++out.missing;
            if (out.missingKeys.size() < static_cast<size_t>(opt.maxKeys))
                out.missingKeys.push_back(c.key);
        } else if (!now[0] && now[1]) {
            ++out.extra;
            if (out.extraKeys.size() < static_cast<size_t>(opt.maxKeys))
                out.extraKeys.push_back(c.key);
        } else {
            ++out.different;
            if (out.differentRows.size() < static_cast<size_t>(opt.maxKeys))
                out.differentRows.push_back({c.key, columnDiffs(ctx.schema, si->second, ti->second)});
        }
    }
}

/// Leaves a table's comparison early when it is skipped.
struct Skip {};

TableReconcile reconcileTable(const TableJob &job, const ReconcileOptions &opt, SettleMemo &memo)
{
    TableReconcile out;
    out.pipeline = job.pipeline;
    out.table = job.spec.table.display();
    out.target = job.targetName.display();
    if (job.twoWay)
        out.direction = job.twoWay->reverse ? "reverse" : "forward";
    out.strategy = std::string(toString(job.spec.strategy));
    const auto started = std::chrono::steady_clock::now();
    try {
        TableContext ctx = openTable(job, opt);
        for (const auto &k : ctx.keys) {
            out.keyColumns.push_back(k.name);
            out.keyIsInteger.push_back(rowhash::canonFor(k) == rowhash::Canon::Integer);
        }
        if (!ctx.skipped.empty()) {
            out.skipped = ctx.skipped;
            throw Skip{};
        }
        const bool bisect = orderable(ctx.keys, job.source.kind, job.target.kind) && ctx.source->keysOrderable() &&
                            ctx.target->keysOrderable();
        std::unordered_map<std::string, Candidate> cands;
        Comparer cmp(*ctx.source, *ctx.target, out, opt, bisect);
        if (cmp.run(cands))
            settleAndClassify(ctx, cands, out, opt, memo);
        if (!bisect && out.note.empty())
            out.note = "the key's type orders differently on the two sides, so differing tables are compared row by row";
        out.sourceQueries = ctx.source->queries;
        out.targetQueries = ctx.target->queries;
        out.sourceRowsFetched = ctx.source->fetched;
        out.targetRowsFetched = ctx.target->fetched;
    } catch (const Skip &) {
        // Not compared: `skipped` says why.
    } catch (const Error &e) {
        out.error = e.what();
        if (!e.hint().empty())
            out.error += " (" + e.hint() + ")";
    }
    out.driftRatio = out.sourceRows > 0 ? static_cast<double>(out.drift()) / static_cast<double>(out.sourceRows)
                                        : (out.drift() > 0 ? 1.0 : 0.0);
    out.elapsedMs =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    if (opt.onPhase)
        opt.onPhase(out.table, "done");
    return out;
}

std::vector<TableJob> selectJobs(const Workspace &ws, const std::string &pipeline, const std::vector<std::string> &tables)
{
    if (!ws.pipeline(pipeline))
        throw ConfigError("no pipeline named '" + pipeline + "'");
    auto jobs = jobsFor(ws, pipeline);
    // A two-way table is compared once, from the pipeline's source side: comparing the two sides
    // is symmetric (missing: rows only the source side holds; extra: rows only the target side
    // holds), so the reverse direction's comparison would find the same rows at twice the cost,
    // and across engines it would have to read the other side's values in the reverse mapping's
    // types (a MariaDB TINYINT(1) against the Postgres boolean it came from).
    std::erase_if(jobs, [](const TableJob &j) { return j.twoWay && j.twoWay->reverse; });
    if (tables.empty())
        return jobs;
    std::vector<TableJob> out;
    for (const auto &name : tables) {
        const TableRef ref = resolveTableArgument(ws, *ws.pipeline(pipeline), name);
        auto it = std::find_if(jobs.begin(), jobs.end(), [&](const TableJob &j) { return j.spec.table == ref; });
        if (it == jobs.end())
            throw ConfigError("pipeline '" + pipeline + "' has no table " + ref.display());
        out.push_back(*it);
    }
    return out;
}

} // namespace

long long ReconcileReport::drift() const
{
    long long n = 0;
    for (const auto &t : tables)
        n += t.drift();
    return n;
}

ReconcileReport reconcile(const Workspace &ws, const std::string &pipeline, const std::vector<std::string> &tables,
                          const ReconcileOptions &options)
{
    ReconcileReport report;
    report.pipeline = pipeline;
    report.startedAtMs = wallClockMs();
    SettleMemo memo;
    for (const auto &job : selectJobs(ws, pipeline, tables)) {
        if (options.stop.stop_requested())
            break;
        report.tables.push_back(reconcileTable(job, options, memo));
    }
    report.finishedAtMs = wallClockMs();
    return report;
}

// ---------------------------------------------------------------------------------------------
// Repair

namespace {

/// COPY text of one row from canonical values (the merger reads COPY text).
std::string copyLine(const std::vector<std::optional<std::string>> &values)
{
    std::string line;
    for (size_t i = 0; i < values.size(); ++i) {
        if (i)
            line += '\t';
        if (values[i])
            copytext::escape(*values[i], line);
        else
            line += copytext::kNull;
    }
    return line;
}

} // namespace

namespace {

/// An identifier quoted as the target quotes it.
std::string quoteFor(EndpointKind kind, const std::string &name)
{
    if (kind != EndpointKind::Mysql)
        return quoteIdent(name);
    std::string q = "`";
    for (char c : name)
        q += c == '`' ? std::string("``") : std::string(1, c);
    return q + "`";
}

/// The statements a repair of `plan`'s keys runs through the target's merger (a staging load,
/// then the guarded merge, which upserts the rows it stages and deletes the keys it stages as
/// deletes), with the rows each takes.
std::vector<RepairStatement> repairStatements(const TableJob &job, const std::vector<std::string> &keyColumns,
                                              long long upserts, long long deletes)
{
    const EndpointKind kind = job.target.kind;
    const std::string target =
        (job.targetName.schema.empty() ? "" : quoteFor(kind, job.targetName.schema) + ".") +
        quoteFor(kind, job.targetName.name);
    std::string key;
    for (size_t i = 0; i < keyColumns.size(); ++i)
        key += (i ? ", " : "") + quoteFor(kind, keyColumns[i]);
    std::vector<RepairStatement> out;
    if (upserts + deletes == 0)
        return out;
    out.push_back({"stage",
                   kind == EndpointKind::Postgres ? "COPY the rows into the staging table of " + target + " FROM STDIN"
                                                  : "INSERT the rows into the staging table of " + target,
                   upserts + deletes});
    if (upserts)
        out.push_back({"upsert",
                       "INSERT INTO " + target + " SELECT ... FROM staging " +
                           (kind == EndpointKind::Mysql ? "ON DUPLICATE KEY UPDATE ..."
                                                        : "ON CONFLICT (" + key + ") DO UPDATE SET ...") +
                           " WHERE the staged version is not older",
                       upserts});
    if (deletes && softDeletes(job.spec))
        out.push_back({"delete",
                       "UPDATE " + target + " SET " + kDeletedAtColumn + " = now WHERE (" + key +
                           ") IN (staged deletes) AND the staged version is not older (deletes: soft); tombstones kept",
                       deletes});
    else if (deletes)
        out.push_back({"delete",
                       "DELETE FROM " + target + " WHERE (" + key +
                           ") IN (staged deletes) AND the staged version is not older; tombstones kept",
                       deletes});
    return out;
}

TableJob jobFor(const Workspace &ws, const std::string &pipeline, const std::string &table)
{
    return selectJobs(ws, pipeline, {table}).front();
}

/// Runs one table's plan: reads the planned rows from the source, stages them (and the planned
/// deletes) at versions that win over the rows they correct, merges, and compares the keys again.
RepairOutcome executeTable(const Workspace &ws, const TableRepairPlan &plan)
{
    RepairOutcome out;
    out.pipeline = plan.pipeline;
    out.table = plan.table;
    out.keys = static_cast<long long>(plan.upsertKeys.size() + plan.deleteKeys.size());
    if (!plan.error.empty()) {
        out.error = plan.error;
        return out;
    }
    if (out.keys == 0)
        return out;
    const TableJob job = jobFor(ws, plan.pipeline, plan.table);
    std::vector<CanonicalKey> keys = plan.upsertKeys;
    keys.insert(keys.end(), plan.deleteKeys.begin(), plan.deleteKeys.end());
    const size_t upserts = plan.upsertKeys.size();
    ReconcileOptions opt;
    TableContext ctx = openTable(job, opt);
    if (!ctx.skipped.empty())
        throw Error(ErrorKind::Permanent, out.table + " cannot be compared exactly: " + ctx.skipped);
    for (const auto &k : ctx.keys)
        if (rowhash::canonFor(k) == rowhash::Canon::Float)
            throw Error(ErrorKind::Permanent, out.table + " is keyed by a floating-point column: repair it with a "
                                                          "re-backfill (driftless-cli backfill) or a full refresh");
    // First what the target holds: the applied position and each key's own version. Everything
    // they reflect committed before the source is read below, so the row read there is at least
    // as new; a change the sync has yet to apply is newer than both and still wins.
    auto session = createTargetSession(job.target, "driftless repair");
    // A full refresh table has no staging of its own (it reloads whole); repairing it stages
    // like a cursor table does.
    const Strategy mergeAs = job.spec.strategy == Strategy::FullRefresh ? Strategy::Cursor : job.spec.strategy;
    auto merger = session->merger({job.pipeline, job.spec.table, job.targetName, mergeAs, softDeletes(job.spec)});
    merger->prepare(ctx.schema);
    const auto cp = merger->readCheckpoint();
    const std::int64_t floor = std::max(cp ? cp->version : 0, appliedPosition(cp));
    RowSet keyRows;
    for (const auto &k : keys) {
        std::vector<std::optional<std::string>> values(ctx.schema.columns.size());
        for (size_t i = 0; i < ctx.keys.size(); ++i)
            values[static_cast<size_t>(ctx.schema.primaryKey[i])] = k[i];
        keyRows.append(copyLine(values), ChangeOp::Delete, 0);
    }
    const auto current = merger->guardVersions(keyRows);

    // Then the source rows as they are now, as COPY lines by the record text of their key.
    std::unordered_map<std::string, std::string> sourceRows;
    if (ctx.mySource) {
        // As the MySQL readers read them: exactly what the sync itself applies.
        sourceRows = ctx.mySource->copyLines(keys, *ctx.myTable);
    } else {
        // Values are read as Postgres prints them, not in canonical form, so they go back in
        // exactly.
        std::string cols, on, unnest, names;
        for (size_t i = 0; i < ctx.schema.columns.size(); ++i) {
            const auto &c = ctx.schema.columns[i];
            const std::string q = "s." + quoteIdent(c.name);
            cols += std::string(i ? ", " : "") +
                    (!c.isArray && c.baseType == "bpchar" ? pgOutputText(q) : q + "::text");
        }
        for (size_t i = 0; i < ctx.keys.size(); ++i) {
            const auto &k = ctx.keys[i];
            on += std::string(i ? " AND " : "") + "s." + quoteIdent(k.name) + " = _dl_k.c" + std::to_string(i) +
                  "::" + k.typeSql;
            unnest += std::string(i ? ", " : "") + "$" + std::to_string(i + 1) + "::text[]";
            names += std::string(i ? ", " : "") + "c" + std::to_string(i);
        }
        auto &src = ctx.pgSource->connection();
        Params params;
        for (size_t c = 0; c < ctx.keys.size(); ++c)
            params.emplace_back(keyColumnArray(keys, c, 0, keys.size()));
        std::string keyCanon;
        for (const auto &k : ctx.keys)
            keyCanon += rowhash::pgCanonicalText(k, "s." + quoteIdent(k.name)) + ", ";
        auto r = src.execParams("SELECT " + keyCanon + cols + " FROM " + ctx.sourceFrom + " s JOIN unnest(" +
                                    unnest + ") AS _dl_k(" + names + ") ON " + on,
                                params);
        const int nk = static_cast<int>(ctx.keys.size());
        for (int i = 0; i < r.rows(); ++i) {
            std::vector<std::optional<std::string>> key, values;
            for (int c = 0; c < nk; ++c)
                key.push_back(r.text(i, c));
            for (int c = 0; c < static_cast<int>(ctx.schema.columns.size()); ++c)
                values.push_back(r.optText(i, nk + c));
            sourceRows.emplace(rowhash::recordText(key), copyLine(values));
        }
    }
    // Exactly the plan: a planned write stages the source row, a planned delete the key; a key
    // the source no longer agrees with (its row gone, or back) is left for the sync.
    RowSet versioned;
    long long stagedUpserts = 0, stagedDeletes = 0;
    for (size_t n = 0; n < keys.size(); ++n) {
        const auto &k = keys[n];
        const std::int64_t version = std::max(floor, current[n]);
        auto it = sourceRows.find(rowhash::recordText({k.begin(), k.end()}));
        if (n < upserts && it != sourceRows.end()) {
            versioned.append(it->second, ChangeOp::Update, version);
            ++stagedUpserts;
        } else if (n >= upserts && it == sourceRows.end()) {
            versioned.append(keyRows.line(n), ChangeOp::Delete, version);
            ++stagedDeletes;
        } else {
            ++out.skipped;
        }
    }
    std::vector<std::string> keyColumns;
    for (const auto &k : ctx.keys)
        keyColumns.push_back(k.name);
    out.statements = repairStatements(job, keyColumns, stagedUpserts, stagedDeletes);
    if (!versioned.empty()) {
        session->inTransaction([&] {
            auto res = merger->mergeInTransaction(versioned);
            out.deleted = std::min(stagedDeletes, res.rowsWritten);
            out.written = res.rowsWritten - out.deleted;
        });
    }
    // Verify.
    auto [rs, rt] = both([&] { return ctx.source->rows(keys); }, [&] { return ctx.target->rows(keys); });
    for (const auto &k : keys) {
        const std::string rec = rowhash::recordText({k.begin(), k.end()});
        auto si = rs.find(rec);
        auto ti = rt.find(rec);
        const bool equal = (si == rs.end() && ti == rt.end()) ||
                           (si != rs.end() && ti != rt.end() && si->second.hash == ti->second.hash);
        (equal ? out.verified : out.stillDifferent) += 1;
    }
    return out;
}

/// A table's plan from its differing keys by class.
TableRepairPlan tablePlan(const Workspace &ws, const std::string &pipeline, const TableReconcile &t)
{
    TableRepairPlan plan;
    plan.pipeline = pipeline;
    plan.table = t.table;
    plan.target = t.target;
    plan.keyIsInteger = t.keyIsInteger;
    plan.upsertKeys = t.missingKeys;
    for (const auto &d : t.differentRows)
        plan.upsertKeys.push_back(d.key);
    plan.deleteKeys = t.extraKeys;
    plan.inserts = static_cast<long long>(t.missingKeys.size());
    plan.updates = static_cast<long long>(t.differentRows.size());
    const TableJob job = jobFor(ws, pipeline, t.table);
    plan.target = job.targetName.display();
    plan.statements = repairStatements(job, t.keyColumns, static_cast<long long>(plan.upsertKeys.size()),
                                       static_cast<long long>(plan.deleteKeys.size()));
    return plan;
}

} // namespace

TableRepairPlan planKeys(const Workspace &ws, const std::string &pipeline, const std::string &table,
                         const std::vector<CanonicalKey> &keys)
{
    // Keys without a class: the source decides (a row it has is written, one it lacks deleted).
    const TableJob job = jobFor(ws, pipeline, table);
    TableRepairPlan plan;
    plan.pipeline = pipeline;
    plan.table = job.spec.table.display();
    plan.target = job.targetName.display();
    if (keys.empty())
        return plan;
    ReconcileOptions opt;
    TableContext ctx = openTable(job, opt);
    if (!ctx.skipped.empty())
        throw Error(ErrorKind::Permanent, plan.table + " cannot be compared exactly: " + ctx.skipped);
    std::vector<std::string> keyColumns;
    for (const auto &k : ctx.keys) {
        keyColumns.push_back(k.name);
        plan.keyIsInteger.push_back(rowhash::canonFor(k) == rowhash::Canon::Integer);
    }
    const auto source = ctx.source->rows(keys);
    const auto target = ctx.target->rows(keys);
    for (const auto &k : keys) {
        const std::string rec = rowhash::recordText({k.begin(), k.end()});
        if (source.count(rec)) {
            plan.upsertKeys.push_back(k);
            (target.count(rec) ? plan.updates : plan.inserts) += 1;
        } else {
            plan.deleteKeys.push_back(k);
        }
    }
    plan.statements = repairStatements(job, keyColumns, static_cast<long long>(plan.upsertKeys.size()),
                                       static_cast<long long>(plan.deleteKeys.size()));
    return plan;
}

RepairOutcome repairKeys(const Workspace &ws, const std::string &pipeline, const std::string &table,
                         const std::vector<CanonicalKey> &keys)
{
    return executeTable(ws, planKeys(ws, pipeline, table, keys));
}

RepairPlan planRepair(const Workspace &ws, const ReconcileReport &report, const std::optional<std::string> &table)
{
    RepairPlan plan;
    plan.reportId = report.id;
    plan.pipeline = report.pipeline;
    bool matched = !table;
    for (const auto &t : report.tables) {
        if (table) {
            const PipelineSpec *p = ws.pipeline(report.pipeline);
            if (!p)
                throw ConfigError("report " + std::to_string(report.id) + " is of pipeline '" + report.pipeline +
                                  "', which the workspace no longer has");
            const TableRef want = resolveTableArgument(ws, *p, *table);
            if (want.display() != t.table)
                continue;
            matched = true;
        }
        if (t.drift() == 0)
            continue;
        try {
            const bool complete = static_cast<long long>(t.missingKeys.size()) == t.missing &&
                                  static_cast<long long>(t.extraKeys.size()) == t.extra &&
                                  static_cast<long long>(t.differentRows.size()) == t.different;
            if (complete) {
                plan.tables.push_back(tablePlan(ws, report.pipeline, t));
            } else {
                // The report kept only the first keys: find them all again.
                ReconcileOptions opt;
                opt.maxKeys = std::numeric_limits<int>::max();
                opt.settle = std::chrono::milliseconds(0);
                auto again = reconcile(ws, report.pipeline, {t.table}, opt);
                const auto &nt = again.tables.front();
                if (!nt.error.empty())
                    throw Error(ErrorKind::Permanent, nt.error);
                plan.tables.push_back(tablePlan(ws, report.pipeline, nt));
            }
        } catch (const Error &e) {
            TableRepairPlan failed;
            failed.pipeline = report.pipeline;
            failed.table = t.table;
            failed.target = t.target;
            failed.error = e.what();
            plan.tables.push_back(std::move(failed));
        }
    }
    if (!matched)
        throw ConfigError("report " + std::to_string(report.id) + " has no table " + *table);
    return plan;
}

std::vector<RepairOutcome> executeRepair(const Workspace &ws, const RepairPlan &plan)
{
    std::vector<RepairOutcome> outcomes;
    for (const auto &t : plan.tables) {
        RepairOutcome o;
        o.pipeline = t.pipeline;
        o.table = t.table;
        try {
            o = executeTable(ws, t);
        } catch (const Error &e) {
            o.error = e.what();
        }
        outcomes.push_back(std::move(o));
    }
    return outcomes;
}

std::vector<RepairOutcome> repairReport(const Workspace &ws, const ReconcileReport &report,
                                        const std::optional<std::string> &table)
{
    return executeRepair(ws, planRepair(ws, report, table));
}

} // namespace driftless::core
