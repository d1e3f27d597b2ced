#pragma once

#include "core/engine/slots/slots.h"
#include "core/model/staterecords.h"
#include "core/model/workspace.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

class StateStore;

/// The limits a replication slot is heading for, as its source's `slot_guard` and the server set
/// them.
struct SlotLimits {
    /// The slot guard's `max_retained` (bytes); unset without a guard or with no such limit.
    std::optional<std::int64_t> maxRetained;
    /// Where `safe_wal_size` may fall to before the slot is given up: the guard's `min_safe_wal`,
    /// else 0 (the server invalidates the slot). Applies only while the server has a limit
    /// (max_slot_wal_keep_size), i.e. while the samples carry a `safe_wal_size`.
    std::int64_t minSafeWal = 0;
};

/// The recent past the growth rate is fitted over: long enough to smooth a checkpoint's
/// sawtooth, short enough to follow a consumer that stopped.
inline constexpr std::int64_t kProjectionWindowMs = 15LL * 60 * 1000;
/// A fit needs at least this many samples, spanning at least kProjectionMinSpanMs.
inline constexpr std::size_t kProjectionMinSamples = 3;
inline constexpr std::int64_t kProjectionMinSpanMs = 30'000;

/// One point of a series: when (ms) and what.
struct SeriesPoint {
    std::int64_t tsMs = 0;
    double value = 0;
};

/// The least-squares slope of `points` in units per second, or nullopt with fewer than
/// kProjectionMinSamples points or when they span less than kProjectionMinSpanMs.
std::optional<double> fittedRatePerSecond(const std::vector<SeriesPoint> &points);

/// Seconds from `nowMs` until the slot reaches the first of `limits`, at the rate its retained
/// WAL (and, with a server limit, its safe_wal_size) moved over the kProjectionWindowMs before
/// its newest sample. `samples` are of one slot, in time order, the newest being the latest
/// reading. 0 when a limit is already reached; nullopt when nothing grows towards a limit, no
/// limit applies, or the samples are too few or too close together for a rate. Pure.
std::optional<double> secondsToLimit(const std::vector<SlotSample> &samples, const SlotLimits &limits,
                                     std::int64_t nowMs);

/// The limits the workspace sets for the slots of the endpoint `source` (none when it has no
/// slot guard).
SlotLimits slotLimitsFor(const Workspace &ws, const std::string &source);

/// Sets SlotReport::secondsToLimit on every slot of `sources` (read at `nowMs`) from the samples
/// `store` holds of the last kProjectionWindowMs plus that reading. Reading the store may fail
/// (throws Error); the slots then keep what they had.
void projectSlots(StateStore &store, const Workspace &ws, std::vector<SourceSlots> &sources, std::int64_t nowMs);

/// "3 h 10 min", "45 min", "40 s", "2 d 5 h": a time left as a DBA reads it, to two units.
std::string humanTimeLeft(double seconds);

} // namespace driftless::core
