#pragma once

#include <atomic>

namespace driftless::core {

/// What one direction of a two-way pipeline did since the engine started: changes its reader
/// captured, changes its merger applied, and changes its reader dropped because Driftless itself
/// had applied them (the other direction's writes; loop prevention, docs/two-way.md).
///
/// Thread affinity: any; the reader and the apply thread count, /metrics and /sync/status read.
struct LoopCounters {
    std::atomic<long long> captured{0};
    std::atomic<long long> applied{0};
    std::atomic<long long> droppedOwn{0};
};

} // namespace driftless::core
