#pragma once

#include <iosfwd>
#include <optional>
#include <string_view>

namespace driftless::core {

/// The engine's words for what it is doing and how well, typed. Strings exist only at the edges
/// (the state file, JSON, the CLI, the UI), spelled by toString and read back by the *From parsers;
/// the spellings are part of `/sync/status` and `status --json` and do not change.

/// What the engine is doing with one table.
enum class TableState {
    Idle,        ///< never run, or stopped cleanly
    Running,     ///< a full refresh or cursor pass is copying
    Backfilling, ///< an initial load or a re-backfill while streaming (see TableReport::rebackfill)
    Streaming,   ///< CDC is applying changes
    Ok,          ///< the last pass succeeded; the next one is scheduled
    Error,       ///< stopped on an error a DBA must fix
    Retrying,    ///< failed on something transient; the scheduler tries again
    Paused,      ///< a DBA (or a guard that needs one) paused it
    /// Stopped because another server, or another history, answers behind the source's address
    /// (docs/failover.md): an error of its own kind, fixed by `recover` or `resnapshot`.
    SourceChanged
};
std::string_view toString(TableState s);
std::optional<TableState> tableStateFrom(std::string_view s);
/// The table is stopped until a DBA acts: on an error, or on a change of source.
inline bool isStopped(TableState s)
{
    return s == TableState::Error || s == TableState::SourceChanged;
}
/// The table is stopped or retrying an error (the red and amber rows).
inline bool isFailing(TableState s)
{
    return isStopped(s) || s == TableState::Retrying;
}

/// ok: lag within half the SLA; warn: past half; breach: past the SLA; unknown: never synced.
enum class Freshness { Ok, Warn, Breach, Unknown };
std::string_view toString(Freshness f);
std::optional<Freshness> freshnessFrom(std::string_view s);

/// How much an event or an alert matters: info (events only), warn, error.
enum class Level { Info, Warn, Error };
std::string_view toString(Level l);
std::optional<Level> levelFrom(std::string_view s);

/// For test failure messages.
std::ostream &operator<<(std::ostream &os, TableState s);
std::ostream &operator<<(std::ostream &os, Freshness f);
std::ostream &operator<<(std::ostream &os, Level l);

} // namespace driftless::core
