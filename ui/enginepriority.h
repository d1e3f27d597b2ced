#pragma once

#include <string>

namespace driftless::ui {

/// How the desktop app's engine threads give way to its window (Linux).
///
/// The window's thread and the engine's threads share the workstation's cores with everything
/// else, databases included. The kernel schedules groups first (the app's own session
/// "autogroup", or its cgroup) and threads within a group second. Within the app's group an
/// engine thread at SCHED_IDLE yields at once to the window and weighs almost nothing in the
/// group's share of a core, so the window gets the group's whole share when it wakes, while
/// the engine still has every cycle the window leaves. A nice value alone does not do that:
/// the engine's busy threads carry the group's weight to the cores they run on, and a window
/// waking elsewhere waits behind other processes for tens of milliseconds (B12).
///
/// SCHED_IDLE is only safe where the app has a group of its own: without one, an idle engine
/// would compete with every other busy process on the machine and could starve. There the
/// engine runs at nice +10 instead.
enum class EnginePriority {
    Idle,   ///< SCHED_IDLE: the app has a scheduling group of its own
    Nice,   ///< nice +10
    Normal, ///< unchanged (DRIFTLESS_ENGINE_PRIORITY=normal)
};

/// DRIFTLESS_ENGINE_PRIORITY (idle, nice or normal) when set to one of those; otherwise Idle
/// when hasOwnSchedulingGroup(), else Nice.
EnginePriority chooseEnginePriority();

/// True when the kernel groups this process apart from unrelated busy ones: a per-app cgroup
/// scope (app-*.scope, as desktops launch applications) with the cpu controller, or, while no
/// cpu cgroup overrides it, the kernel's session autogroup of a session this process leads.
/// (A desktop session's autogroup holds every application launched in it, so sharing one is
/// not having one's own.)
bool hasOwnSchedulingGroup();

/// Gives the app a session, and so an autogroup, of its own (setsid) when it has no controlling
/// terminal and does not lead its session already, as when a desktop launches it. Launched from
/// a terminal it stays in the terminal's session, so Ctrl+C still reaches it, unless `always`.
/// Call before any thread starts. Returns what was done, for the log.
std::string claimOwnSchedulingGroup(bool always = false);

/// Applies `priority` to the calling thread; threads it starts inherit it. Returns what was done
/// (for the log), or why it could not be.
std::string applyEnginePriority(EnginePriority priority);

/// The nice value EnginePriority::Nice applies.
inline constexpr int kEngineNice = 10;

const char *toString(EnginePriority priority);

} // namespace driftless::ui
