#include "core/base/log.h"

#include <cstdio>
#include <mutex>

namespace driftless::core {

namespace {
std::mutex g_mutex;
std::function<void(LogLevel, const std::string &)> g_sink;
} // namespace

void setLogSink(std::function<void(LogLevel, const std::string &)> sink)
{
    std::lock_guard lock(g_mutex);
    g_sink = std::move(sink);
}

void log(LogLevel level, const std::string &message)
{
    std::lock_guard lock(g_mutex);
    if (g_sink) {
        g_sink(level, message);
        return;
    }
    if (level >= LogLevel::Warn)
        std::fprintf(stderr, "driftless: %s\n", message.c_str());
}

} // namespace driftless::core
