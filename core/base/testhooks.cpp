#include "core/base/testhooks.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

namespace driftless::core {

namespace {
struct Spec {
    std::string name;
    long count = 1;
    bool active = false;
};

const Spec &spec()
{
    static const Spec s = [] {
        Spec s;
        const char *v = std::getenv("DRIFTLESS_CRASH_AT");
        if (!v || !*v)
            return s;
        std::string t(v);
        auto colon = t.find(':');
        s.name = t.substr(0, colon);
        if (colon != std::string::npos)
            s.count = std::strtol(t.c_str() + colon + 1, nullptr, 10);
        s.active = true;
        return s;
    }();
    return s;
}

std::atomic<long> g_hits{0};
} // namespace

void crashPoint(const char *name)
{
    const Spec &s = spec();
    if (!s.active || s.name != name)
        return;
    if (g_hits.fetch_add(1) + 1 >= s.count)
        std::raise(SIGKILL);
}

} // namespace driftless::core
