#pragma once

// The fault suites' kill-nine rounds, one for both sources (faults F1): the engine killed at
// random moments under a writer, the target's row versions checked after each kill.

#include "tests/support/testsupport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <exception>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>

namespace driftless::test {

/// Starts `driftless-cli --state STATE run` `rounds` times (its output appended to `log`), each
/// time killing it with SIGKILL 0.4-2 s after it started (drawn from `seed`). After each kill no
/// key's row version in the target may have gone back: `versions` reads them (key -> version; a
/// throw means the target table is not there yet, a run killed before it made it). Returns how
/// many kills found the engine running.
inline int killNineRounds(const std::string &state, const std::string &log, unsigned seed, int rounds,
                          const std::function<std::map<long long, long long>()> &versions)
{
    std::mt19937 rng(seed);
    int kills = 0;
    std::map<long long, long long> last;
    for (int i = 0; i < rounds; ++i) {
        int pid = spawnCli({"--state", state, "run"}, {}, log);
        std::this_thread::sleep_for(std::chrono::milliseconds(400 + rng() % 1600));
        ::kill(pid, SIGKILL);
        if (waitPid(pid, 30) == -SIGKILL)
            ++kills;
        std::map<long long, long long> now;
        try {
            now = versions();
        } catch (const std::exception &) {
            continue; // killed before the target table was created (a loaded machine is slow to start)
        }
        for (const auto &[k, v] : now) {
            if (auto it = last.find(k); it != last.end()) {
                EXPECT_GE(v, it->second) << "key " << k << " went back in version (seed " << seed << ")";
            }
        }
        last = std::move(now);
    }
    return kills;
}

} // namespace driftless::test
