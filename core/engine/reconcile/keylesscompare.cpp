#include "core/engine/reconcile/keylesscompare.h"

#include "core/engine/reconcile/refreshdating.h"
#include "core/engine/rows/rowhash.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>

namespace driftless::core::recon {

namespace {

/// Rows rechecked at most: the differing rows are read back with their values.
constexpr size_t kRecheckLimit = 200'000;

/// The rows of one hash on one side, as read back.
struct Copies {
    long long rows = 0;
    long long marked = 0; ///< source copies written after the last pass
    const RowData *first = nullptr;
};

} // namespace

void compareKeyless(TableContext &ctx, TableReconcile &out, const ReconcileOptions &opt)
{
    auto phase = [&](std::string_view p) {
        if (opt.onPhase)
            opt.onPhase(out.table, p);
    };
    out.note = "no primary key: compared as whole rows (a changed row is one missing and one extra)";
    phase("checksum");
    const Plan whole;
    auto [s, t] = both([&] { return ctx.source->checksums(whole); }, [&] { return ctx.target->checksums(whole); });
    const rowhash::Checksum cs = s.count(0) ? s[0] : rowhash::Checksum{};
    const rowhash::Checksum ct = t.count(0) ? t[0] : rowhash::Checksum{};
    out.sourceRows = cs.rows;
    out.targetRows = ct.rows;
    if (cs == ct)
        return;
    if (std::max(cs.rows, ct.rows) > opt.fetchRows) {
        // The least the checksums prove: the larger side has the difference in rows more; equal
        // counts with other sums mean at least one row of each side the other lacks.
        out.missing = std::max(0LL, cs.rows - ct.rows);
        out.extra = std::max(0LL, ct.rows - cs.rows);
        if (cs.rows == ct.rows)
            out.missing = out.extra = 1;
        out.note = "no primary key, and more than " + std::to_string(opt.fetchRows) +
                   " rows: compared by row counts and a checksum of every row only; the rows differ, at least by "
                   "the counts shown, and are not listed";
        return;
    }
    phase("fetch");
    auto collect = [&](Side &side) {
        std::unordered_map<std::int64_t, long long> counts;
        side.hashes(whole, [&](CanonicalKey &&, std::int64_t h) { ++counts[h]; });
        return counts;
    };
    auto [hs, ht] = both([&] { return collect(*ctx.source); }, [&] { return collect(*ctx.target); });
    std::vector<std::int64_t> differing;
    for (const auto *m : {&hs, &ht})
        for (const auto &[h, n] : *m) {
            const long long a = hs.count(h) ? hs[h] : 0, b = ht.count(h) ? ht[h] : 0;
            if (a != b && (m == &hs || a == 0))
                differing.push_back(h);
        }
    if (differing.empty())
        return; // the rows moved under us; the same multiset now
    if (differing.size() > kRecheckLimit) {
        for (const auto h : differing) {
            const long long a = hs.count(h) ? hs[h] : 0, b = ht.count(h) ? ht[h] : 0;
            (a > b ? out.missing : out.extra) += std::abs(a - b);
        }
        out.note = "no primary key: more than " + std::to_string(kRecheckLimit) +
                   " distinct rows differ, counted as found and not listed";
        return;
    }
    std::optional<RefreshDating> refresh;
    if (ctx.job.spec.strategy == Strategy::FullRefresh)
        refresh = dateRefresh(ctx);
    phase("recheck");
    std::sort(differing.begin(), differing.end());
    auto [rs, rt] =
        both([&] { return ctx.source->rowsByHash(differing); }, [&] { return ctx.target->rowsByHash(differing); });
    std::map<std::int64_t, Copies> now[2];
    for (const auto &r : rs) {
        auto &c = now[0][r.hash];
        ++c.rows;
        c.marked += r.recent ? 1 : 0;
        if (!c.first)
            c.first = &r;
    }
    // The target's copies are not marked: an UPDATE by hand keeps the version the pass wrote, and
    // without a key nothing pairs the changed row with the source's row it replaced.
    for (const auto &r : rt) {
        auto &c = now[1][r.hash];
        ++c.rows;
        if (!c.first)
            c.first = &r;
    }
    long long undated = 0;
    for (const auto h : differing) {
        const Copies a = now[0].count(h) ? now[0][h] : Copies{};
        const Copies b = now[1].count(h) ? now[1][h] : Copies{};
        const long long before = std::abs((hs.count(h) ? hs[h] : 0) - (ht.count(h) ? ht[h] : 0));
        if (a.rows == b.rows) {
            out.inFlight += before; // equal again: the sync applied it meanwhile
            continue;
        }
        const bool more = a.rows > b.rows;
        const Copies &side = more ? a : b;
        const long long n = std::abs(a.rows - b.rows);
        // Copies the source wrote after the last pass are the next pass's to copy.
        const long long flying = refresh && more ? std::min(side.marked, n) : 0;
        out.inFlight += flying;
        const long long drift = n - flying;
        if (drift == 0)
            continue;
        if (more && refresh && !refresh->sourceDated)
            undated += drift;
        (more ? out.missing : out.extra) += drift;
        auto &list = more ? out.missingRows : out.extraRows;
        if (list.size() < static_cast<size_t>(opt.maxKeys))
            list.push_back({{}, side.first->values, drift});
    }
    if (refresh && out.extra > 0)
        out.note += "; a row the source deleted since the last pass counts as extra until the next pass (without a "
                    "key it cannot be told from a row changed in the target)";
    if (undated)
        out.note += "; " + std::to_string(undated) +
                    " rows of the source cannot be dated against the last pass's "
                    "snapshot: " +
                    refresh->why +
                    ", so changes made since count as drift until the next pass "
                    "copies them";
}

} // namespace driftless::core::recon
