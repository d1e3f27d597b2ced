#include "core/engine/status/freshness.h"

#include <algorithm>

namespace driftless::core {

std::optional<double> lagSeconds(std::optional<std::int64_t> freshAsOfMs, std::int64_t nowMs)
{
    if (!freshAsOfMs || *freshAsOfMs <= 0)
        return std::nullopt;
    return std::max<double>(0.0, static_cast<double>(nowMs - *freshAsOfMs) / 1000.0);
}

Freshness freshnessOf(std::optional<double> lag, Millis sla)
{
    if (!lag)
        return Freshness::Unknown;
    double slaS = static_cast<double>(sla.count()) / 1000.0;
    if (*lag > slaS)
        return Freshness::Breach;
    if (*lag > slaS / 2)
        return Freshness::Warn;
    return Freshness::Ok;
}

} // namespace driftless::core
