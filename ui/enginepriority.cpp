#include "ui/enginepriority.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

namespace driftless::ui {

namespace {

std::string readFile(const char *path)
{
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

/// The process's cgroup v2 path ("0::/path"), or empty on a v1-only system.
std::string cgroupV2Path()
{
    std::istringstream lines(readFile("/proc/self/cgroup"));
    std::string line;
    while (std::getline(lines, line))
        if (line.rfind("0::", 0) == 0)
            return line.substr(3);
    return {};
}

/// True when the cpu controller governs the cgroup at `path` (it has a cpu.weight file).
bool cpuControlled(const std::string &path)
{
    std::error_code ec;
    return !path.empty() && path != "/" && std::filesystem::exists("/sys/fs/cgroup" + path + "/cpu.weight", ec);
}

} // namespace

bool hasOwnSchedulingGroup()
{
    const std::string path = cgroupV2Path();
    const std::string name = path.substr(path.find_last_of('/') + 1);
    const bool appScope =
        name.rfind("app-", 0) == 0 && name.size() > 6 && name.compare(name.size() - 6, 6, ".scope") == 0;
    if (cpuControlled(path))
        return appScope; // the cgroup is the group: the app's own only in an app scope
    // No cpu cgroup: the kernel's autogroup, one group per session, when enabled and the
    // session is this process's own.
    return readFile("/proc/sys/kernel/sched_autogroup_enabled").rfind('1', 0) == 0 && ::getsid(0) == ::getpid();
}

std::string claimOwnSchedulingGroup(bool always)
{
    if (::getsid(0) == ::getpid())
        return "the app leads its own session";
    if (!always) {
        const int tty = ::open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
        if (tty >= 0) {
            ::close(tty);
            return "the app stays in its terminal's session";
        }
    }
    if (::setsid() < 0)
        return std::string("the app could not start a session of its own: ") + std::strerror(errno);
    return "the app started a session of its own";
}

EnginePriority chooseEnginePriority()
{
    if (const char *v = std::getenv("DRIFTLESS_ENGINE_PRIORITY"))
        for (EnginePriority p : {EnginePriority::Idle, EnginePriority::Nice, EnginePriority::Normal})
            if (std::strcmp(v, toString(p)) == 0)
                return p;
    return hasOwnSchedulingGroup() ? EnginePriority::Idle : EnginePriority::Nice;
}

std::string applyEnginePriority(EnginePriority priority)
{
    const auto nice = [] { return ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kEngineNice) == 0; };
    const std::string atNice = "engine threads at nice +" + std::to_string(kEngineNice);
    switch (priority) {
    case EnginePriority::Idle: {
        sched_param param{};
        if (::sched_setscheduler(0, SCHED_IDLE, &param) == 0)
            return "engine threads at SCHED_IDLE (the app has a scheduling group of its own)";
        const std::string why = std::strerror(errno);
        // Falls back to nice rather than running at the window's priority.
        if (nice())
            return atNice + " (SCHED_IDLE refused: " + why + ")";
        return "engine threads at the window's priority (SCHED_IDLE and nice refused: " + why + ")";
    }
    case EnginePriority::Nice:
        if (nice())
            return atNice;
        return std::string("engine threads at the window's priority (nice refused: ") + std::strerror(errno) + ")";
    case EnginePriority::Normal:
        return "engine threads at the window's priority (DRIFTLESS_ENGINE_PRIORITY=normal)";
    }
    return {};
}

const char *toString(EnginePriority priority)
{
    switch (priority) {
    case EnginePriority::Idle:
        return "idle";
    case EnginePriority::Nice:
        return "nice";
    case EnginePriority::Normal:
        return "normal";
    }
    return "?";
}

} // namespace driftless::ui
