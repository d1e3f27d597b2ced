#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <thread>

namespace driftless::test {

/// The limit of a wait that names none: generous, for a loaded 2-core machine.
inline constexpr std::chrono::seconds kWaitLimit{60};
/// How often a condition is asked again unless the caller says otherwise.
inline constexpr std::chrono::milliseconds kWaitPoll{100};

/// Asks `done` every `poll` until it holds or `limit` has passed, and once more at the limit (a
/// slow last poll still counts); true when it held. Tests wait on conditions with this, never on
/// a fixed sleep. An exception from `done` propagates; see waitForIgnoringErrors.
inline bool waitFor(const std::function<bool()> &done, std::chrono::milliseconds limit = kWaitLimit,
                    std::chrono::milliseconds poll = kWaitPoll)
{
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
        if (done())
            return true;
        std::this_thread::sleep_for(poll);
    }
    return done();
}

/// The same with the limit in seconds, as most call sites write it.
inline bool waitFor(const std::function<bool()> &done, int seconds, std::chrono::milliseconds poll = kWaitPoll)
{
    return waitFor(done, std::chrono::seconds(seconds), poll);
}

/// waitFor for a condition that reads something the engine may not have made yet (a target
/// table, a state row): a std::exception thrown by `done` counts as "not yet", also at the limit.
inline bool waitForIgnoringErrors(const std::function<bool()> &done, int seconds = static_cast<int>(kWaitLimit.count()),
                                  std::chrono::milliseconds poll = kWaitPoll)
{
    return waitFor(
        [&] {
            try {
                return done();
            } catch (const std::exception &) {
                return false;
            }
        },
        seconds, poll);
}

} // namespace driftless::test
