#include "core/model/duration.h"

#include <cctype>
#include <cstdio>
#include <string>

namespace driftless::core {

std::optional<Millis> parseDuration(std::string_view t)
{
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front())))
        t.remove_prefix(1);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back())))
        t.remove_suffix(1);
    if (t.empty())
        return std::nullopt;
    std::int64_t total = 0;
    size_t i = 0;
    bool any = false;
    while (i < t.size()) {
        if (!std::isdigit(static_cast<unsigned char>(t[i])))
            return std::nullopt;
        std::int64_t n = 0;
        while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
            n = n * 10 + (t[i] - '0');
            if (n > 1'000'000'000'000LL)
                return std::nullopt;
            ++i;
        }
        std::string_view unit;
        size_t u = i;
        while (i < t.size() && std::isalpha(static_cast<unsigned char>(t[i])))
            ++i;
        unit = t.substr(u, i - u);
        std::int64_t mult;
        if (unit.empty()) {
            if (any || i != t.size())
                return std::nullopt;
            mult = 1000;
        } else if (unit == "ms")
            mult = 1;
        else if (unit == "s")
            mult = 1000;
        else if (unit == "m" || unit == "min")
            mult = 60'000;
        else if (unit == "h")
            mult = 3'600'000;
        else if (unit == "d")
            mult = 86'400'000;
        else
            return std::nullopt;
        total += n * mult;
        any = true;
    }
    return Millis(total);
}

std::string formatDuration(Millis d)
{
    auto ms = d.count();
    if (ms == 0)
        return "0s";
    if (ms % 86'400'000 == 0)
        return std::to_string(ms / 86'400'000) + "d";
    if (ms % 3'600'000 == 0)
        return std::to_string(ms / 3'600'000) + "h";
    if (ms % 60'000 == 0)
        return std::to_string(ms / 60'000) + "m";
    if (ms % 1000 == 0)
        return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

std::optional<std::int64_t> parseByteSize(std::string_view t)
{
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front())))
        t.remove_prefix(1);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back())))
        t.remove_suffix(1);
    size_t i = 0;
    std::int64_t n = 0;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
        n = n * 10 + (t[i] - '0');
        if (n > (1LL << 50))
            return std::nullopt;
        ++i;
    }
    if (i == 0)
        return std::nullopt;
    auto unit = t.substr(i);
    while (!unit.empty() && unit.front() == ' ')
        unit.remove_prefix(1);
    std::int64_t mult;
    if (unit.empty() || unit == "B")
        mult = 1;
    else if (unit == "kB" || unit == "KB" || unit == "KiB")
        mult = 1LL << 10;
    else if (unit == "MB" || unit == "MiB")
        mult = 1LL << 20;
    else if (unit == "GB" || unit == "GiB")
        mult = 1LL << 30;
    else if (unit == "TB" || unit == "TiB")
        mult = 1LL << 40;
    else
        return std::nullopt;
    return n * mult;
}

std::optional<double> parseShare(std::string_view text)
{
    std::string num(text);
    const bool pct = !num.empty() && num.back() == '%';
    if (pct)
        num.pop_back();
    double d = -1;
    try {
        size_t used = 0;
        d = std::stod(num, &used);
        if (used != num.size())
            d = -1;
    } catch (...) {
        d = -1;
    }
    if (pct)
        d /= 100.0;
    if (!(d >= 0 && d <= 1))
        return std::nullopt;
    return d;
}

std::string formatShare(double fraction)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g%%", fraction * 100.0);
    return buf;
}

std::string humanBytes(std::int64_t b)
{
    const char *units[] = {"B", "kB", "MB", "GB", "TB"};
    double v = static_cast<double>(b < 0 ? -b : b);
    int u = 0;
    while (u < 4 && v >= 1024) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    if (u == 0 || v >= 10)
        std::snprintf(buf, sizeof buf, "%s%.0f %s", b < 0 ? "-" : "", v, units[u]);
    else
        std::snprintf(buf, sizeof buf, "%s%.1f %s", b < 0 ? "-" : "", v, units[u]);
    return buf;
}

std::string formatByteSize(std::int64_t b)
{
    const char *units[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (u < 4 && b != 0 && b % 1024 == 0) {
        b /= 1024;
        ++u;
    }
    return std::to_string(b) + units[u];
}

} // namespace driftless::core
