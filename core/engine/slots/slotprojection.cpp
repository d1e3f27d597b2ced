#include "core/engine/slots/slotprojection.h"

#include "core/state/statestore.h"

#include <algorithm>
#include <cmath>

namespace driftless::core {

std::optional<double> fittedRatePerSecond(const std::vector<SeriesPoint> &points)
{
    if (points.size() < kProjectionMinSamples)
        return std::nullopt;
    auto [first, last] = std::minmax_element(
        points.begin(), points.end(), [](const SeriesPoint &a, const SeriesPoint &b) { return a.tsMs < b.tsMs; });
    if (last->tsMs - first->tsMs < kProjectionMinSpanMs)
        return std::nullopt;
    // Seconds from the first point keep the sums small enough for doubles to stay exact.
    const std::int64_t origin = first->tsMs;
    double meanT = 0, meanV = 0;
    for (const auto &p : points) {
        meanT += static_cast<double>(p.tsMs - origin) / 1000.0;
        meanV += p.value;
    }
    const double n = static_cast<double>(points.size());
    meanT /= n;
    meanV /= n;
    double sxy = 0, sxx = 0;
    for (const auto &p : points) {
        const double dt = static_cast<double>(p.tsMs - origin) / 1000.0 - meanT;
        sxy += dt * (p.value - meanV);
        sxx += dt * dt;
    }
    if (sxx <= 0)
        return std::nullopt;
    return sxy / sxx;
}

std::optional<double> secondsToLimit(const std::vector<SlotSample> &samples, const SlotLimits &limits,
                                     std::int64_t nowMs)
{
    if (samples.empty())
        return std::nullopt;
    const SlotSample &latest = *std::max_element(
        samples.begin(), samples.end(), [](const SlotSample &a, const SlotSample &b) { return a.tsMs < b.tsMs; });
    const std::int64_t from = latest.tsMs - kProjectionWindowMs;
    // The reading is latest.tsMs old already: that much of the time left has passed.
    const double elapsed = static_cast<double>(std::max<std::int64_t>(0, nowMs - latest.tsMs)) / 1000.0;
    auto series = [&](auto value) {
        std::vector<SeriesPoint> points;
        for (const auto &s : samples)
            if (s.tsMs >= from && s.tsMs <= latest.tsMs)
                if (const std::optional<std::int64_t> v = value(s))
                    points.push_back({s.tsMs, static_cast<double>(*v)});
        return points;
    };

    std::optional<double> best;
    auto consider = [&](double seconds) {
        seconds = std::max(0.0, seconds);
        best = best ? std::min(*best, seconds) : seconds;
    };
    if (limits.maxRetained && latest.retainedBytes) {
        if (*latest.retainedBytes >= *limits.maxRetained)
            consider(0);
        else if (auto rate = fittedRatePerSecond(series([](const SlotSample &s) { return s.retainedBytes; }));
                 rate && *rate > 0)
            consider(static_cast<double>(*limits.maxRetained - *latest.retainedBytes) / *rate - elapsed);
    }
    if (latest.safeWalSize) {
        if (*latest.safeWalSize <= limits.minSafeWal)
            consider(0);
        else if (auto rate = fittedRatePerSecond(series([](const SlotSample &s) { return s.safeWalSize; }));
                 rate && *rate < 0)
            consider(static_cast<double>(*latest.safeWalSize - limits.minSafeWal) / -*rate - elapsed);
    }
    return best;
}

SlotLimits slotLimitsFor(const Workspace &ws, const std::string &source)
{
    SlotLimits limits;
    const Endpoint *e = ws.endpoint(source);
    if (!e || !e->slotGuard)
        return limits;
    if (e->slotGuard->maxRetained > 0)
        limits.maxRetained = e->slotGuard->maxRetained;
    limits.minSafeWal = std::max<std::int64_t>(0, e->slotGuard->minSafeWal.value_or(0));
    return limits;
}

void projectSlots(StateStore &store, const Workspace &ws, std::vector<SourceSlots> &sources, std::int64_t nowMs)
{
    for (auto &ss : sources) {
        const SlotLimits limits = slotLimitsFor(ws, ss.source);
        for (auto &s : ss.replicationSlots) {
            if (!limits.maxRetained && !s.safeWalSize)
                continue; // no limit to head for: spare the store a query
            auto samples = store.slotSamples(ss.source, s.slot, nowMs - kProjectionWindowMs);
            if (samples.empty() || samples.back().tsMs < nowMs) // this reading, unless just stored
                samples.push_back({ss.source, s.slot, nowMs, s.retainedBytes, s.unconfirmedBytes, s.safeWalSize});
            s.secondsToLimit = secondsToLimit(samples, limits, nowMs);
        }
    }
}

std::string humanTimeLeft(double seconds)
{
    const auto total = static_cast<std::int64_t>(std::floor(std::max(0.0, seconds)));
    auto two = [](std::int64_t big, const char *bigUnit, std::int64_t small, const char *smallUnit) {
        std::string s = std::to_string(big) + " " + bigUnit;
        if (small > 0)
            s += " " + std::to_string(small) + " " + smallUnit;
        return s;
    };
    if (total >= 86'400)
        return two(total / 86'400, "d", total % 86'400 / 3600, "h");
    if (total >= 3600)
        return two(total / 3600, "h", total % 3600 / 60, "min");
    if (total >= 60)
        return std::to_string(total / 60) + " min";
    return std::to_string(total) + " s";
}

} // namespace driftless::core
