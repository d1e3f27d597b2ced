#include "core/engine/reconcile/reconciler.h"

#include "core/base/clock.h"
#include "core/db/mysqlcatalog.h"
#include "core/db/pgcatalog.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/reconcile/keylesscompare.h"
#include "core/engine/reconcile/reconcileopen.h"
#include "core/engine/reconcile/reconcileside.h"
#include "core/engine/reconcile/refreshdating.h"
#include "core/engine/rows/rowhash.h"
#include "core/model/cdcposition.h"
#include "core/model/dsn.h"
#include "core/model/error.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace driftless::core {

using rowhash::Checksum;

namespace {

using recon::appliedPosition;
using recon::both;
using recon::dateRefresh;
using recon::openTable;
using recon::Plan;
using recon::Range;
using recon::RawKey;
using recon::RefreshDating;
using recon::requireCompareKey;
using recon::RowData;
using recon::selectJobs;
using recon::Side;
using recon::TableContext;

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
            auto [s, t] =
                both([&] { return m_side[0]->checksums(whole); }, [&] { return m_side[1]->checksums(whole); });
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
    if (cdc && !opt.asTheyAre) {
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
    std::optional<RefreshDating> refresh;
    if (ctx.job.spec.strategy == Strategy::FullRefresh && !opt.asTheyAre)
        refresh = dateRefresh(ctx);
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
    const bool cursor = ctx.job.spec.strategy == Strategy::Cursor && !opt.asTheyAre;
    long long undated = 0; // of a full refresh table, differences the source's rows could not date
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
        if (refresh && si != rs.end() && si->second.recent) {
            ++out.inFlight; // written after the last pass's snapshot: the next pass copies it
            continue;
        }
        if (refresh && si == rs.end() && refresh->loadedByPass(ti->second.version)) {
            ++out.inFlight; // the last pass loaded it, so the source deleted it since
            continue;
        }
        if (refresh && !refresh->sourceDated && si != rs.end())
            ++undated;
        if (now[0] && !now[1]) {
            ++out.missing;
            if (out.missingKeys.size() < static_cast<size_t>(opt.maxKeys)) {
                out.missingKeys.push_back(c.key);
                out.missingRows.push_back({c.key, si->second.values, 1});
            }
        } else if (!now[0] && now[1]) {
            ++out.extra;
            if (out.extraKeys.size() < static_cast<size_t>(opt.maxKeys)) {
                out.extraKeys.push_back(c.key);
                out.extraRows.push_back({c.key, ti->second.values, 1});
            }
        } else {
            ++out.different;
            if (out.differentRows.size() < static_cast<size_t>(opt.maxKeys))
                out.differentRows.push_back({c.key, columnDiffs(ctx.schema, si->second, ti->second)});
        }
    }
    if (undated)
        out.note = std::to_string(undated) +
                   " differing rows of the source cannot be dated against the last pass's "
                   "snapshot" +
                   (refresh->snapshotAt.empty() ? "" : " (" + refresh->snapshotAt + ")") + ": " + refresh->why +
                   "; changes made since count as drift until the next pass copies them";
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
        for (const auto &c : ctx.schema.columns)
            out.columns.push_back(c.name);
        if (ctx.keys.empty()) {
            recon::compareKeyless(ctx, out, opt);
        } else {
            const bool bisect = orderable(ctx.keys, job.source.kind, job.target.kind) && ctx.source->keysOrderable() &&
                                ctx.target->keysOrderable();
            std::unordered_map<std::string, Candidate> cands;
            Comparer cmp(*ctx.source, *ctx.target, out, opt, bisect);
            if (cmp.run(cands))
                settleAndClassify(ctx, cands, out, opt, memo);
            if (!bisect)
                out.note = (out.note.empty() ? "" : out.note + "; ") +
                           "the key's type orders differently on the two sides, so differing tables are compared row "
                           "by row";
        }
        out.sourceQueries = ctx.source->queries;
        out.targetQueries = ctx.target->queries;
        out.sourceRowsFetched = ctx.source->fetched;
        out.targetRowsFetched = ctx.target->fetched;
    } catch (const Skip &) {
        // Not compared: `skipped` says why.
    } catch (const Error &e) {
        // `compare` asked for a column the tables lack: a mistake to fix, not a report to store.
        if (opt.asTheyAre && dynamic_cast<const ConfigError *>(&e))
            throw;
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

TableJob compareJob(const Workspace &ws, const std::string &left, const std::string &right)
{
    struct Named {
        const Endpoint *endpoint = nullptr;
        std::string table;
    };
    const auto named = [&](const std::string &arg, const char *which) {
        const auto colon = arg.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == arg.size())
            throw ConfigError(std::string(which) + " '" + arg +
                              "' is not ENDPOINT:TABLE (e.g. prod:public.orders; driftless-cli endpoints lists "
                              "the endpoints)");
        Named n{ws.endpoint(arg.substr(0, colon)), arg.substr(colon + 1)};
        if (!n.endpoint)
            throw ConfigError("no endpoint named '" + arg.substr(0, colon) +
                              "' in this workspace (driftless-cli endpoints lists them)");
        return n;
    };
    const Named l = named(left, "the first table"), r = named(right, "the second table");
    if (l.endpoint->kind == EndpointKind::Sqlite)
        throw ConfigError("the first table of a comparison is read as its source, and endpoint '" + l.endpoint->name +
                          "' is SQLite: put it second (driftless-cli compare " + right + " " + left +
                          "; missing and extra then swap)");
    // A table as its endpoint names it: Postgres folds unquoted names (schema public by
    // default), MySQL keeps their case (the DSN's database by default), SQLite has no schema.
    const auto table = [](const Named &n) {
        std::optional<TableRef> t;
        try {
            if (n.endpoint->kind == EndpointKind::Mysql)
                t = parseMysqlTable(n.table, MysqlDsn::parse(n.endpoint->dsn).database);
            else
                t = TableRef::parse(n.table, n.endpoint->kind == EndpointKind::Postgres ? "public" : "");
        } catch (const std::invalid_argument &e) {
            throw ConfigError("'" + n.table + "' is not a table name: " + e.what());
        }
        if (!t)
            throw ConfigError("'" + n.table + "' is not a table name; write schema.table");
        return *t;
    };
    TableJob job;
    job.pipeline = kComparePipeline;
    job.source = *l.endpoint;
    job.target = *r.endpoint;
    job.spec.table = table(l);
    job.spec.strategy = Strategy::FullRefresh;
    const TableRef there = table(r);
    job.targetName = {there.schema, there.name};
    return job;
}

ReconcileReport compareTables(const Workspace &ws, const std::string &left, const std::string &right,
                              ReconcileOptions options)
{
    TableJob job = compareJob(ws, left, right);
    const TableRef there{job.targetName.schema, job.targetName.name};
    job.spec.where = options.compareWhere; // the first side's row filter; openTable filters the second alike
    options.asTheyAre = true;
    requireCompareKey(job.source, job.spec.table, options.compareKey, options.compareWhere);
    requireCompareKey(job.target, there, options.compareKey, options.compareWhere);
    ReconcileReport report;
    report.pipeline = kComparePipeline;
    report.startedAtMs = wallClockMs();
    SettleMemo memo;
    report.tables.push_back(reconcileTable(job, options, memo));
    report.tables.back().table = left;
    report.tables.back().target = right;
    report.tables.back().where = options.compareWhere.value_or("");
    report.finishedAtMs = wallClockMs();
    return report;
}

} // namespace driftless::core
