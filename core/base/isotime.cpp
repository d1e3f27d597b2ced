#include "core/base/isotime.h"

#include <cctype>
#include <cstdio>
#include <ctime>

namespace driftless::core {

std::string formatIso8601(std::int64_t ms)
{
    std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
    return buf;
}

std::optional<std::int64_t> parseIso8601(const std::string &text)
{
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, used = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) != 6)
        return std::nullopt;
    std::tm tm{};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    std::int64_t ms = static_cast<std::int64_t>(timegm(&tm)) * 1000;
    size_t i = static_cast<size_t>(used);
    if (i < text.size() && text[i] == '.') {
        int scale = 100;
        for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, scale /= 10)
            ms += (text[i] - '0') * scale;
    }
    if (i >= text.size() || text[i] != 'Z' || i + 1 != text.size())
        return std::nullopt;
    return ms;
}

} // namespace driftless::core
