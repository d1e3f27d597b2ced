#pragma once

#include <string>
#include <vector>

namespace driftless::core {

/// What a finished program printed and how it ended.
struct ProcessResult {
    int exitCode = -1; ///< -signal when killed; 127 when it could not be started
    std::string out;
    std::string err;
};

/// Runs `argv` (argv[0] looked up in PATH, no shell) with stdin from /dev/null and waits for it,
/// killing it past `timeoutSeconds`. Thread-safe.
ProcessResult runProcess(const std::vector<std::string> &argv, int timeoutSeconds = 30);

/// Starts `argv` in the background (PATH lookup, no shell), stdin and stdout on /dev/null and
/// stderr appended to `stderrFile`, with this process's environment plus `extraEnv` (`NAME=value`
/// entries, replacing variables of the same name). Returns the pid; throws std::runtime_error
/// when it cannot start.
int spawnBackground(const std::vector<std::string> &argv, const std::string &stderrFile,
                    const std::vector<std::string> &extraEnv = {});

/// True while `pid` (a child of this process) runs; reaps it once it has ended.
bool childRunning(int pid);

/// SIGTERM, then SIGKILL after `graceMs`, and reaps it.
void stopChild(int pid, int graceMs = 2000);

} // namespace driftless::core
