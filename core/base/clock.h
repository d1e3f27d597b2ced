#pragma once

#include <chrono>
#include <cstdint>

namespace driftless::core {

/// Milliseconds since the Unix epoch by the wall clock: the time stamps of events, samples and
/// reports in the state file.
inline std::int64_t wallClockMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace driftless::core
