#pragma once

namespace driftless::core {

/// Crash points for fault tests. When the environment variable DRIFTLESS_CRASH_AT names this
/// point (`name` or `name:N` for the N-th time it is reached), the process kills itself with
/// SIGKILL right there, as a power cut or `kill -9` would. Costs one relaxed load when unset.
void crashPoint(const char *name);

} // namespace driftless::core
