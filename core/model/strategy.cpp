#include "core/model/strategy.h"

namespace driftless::core {

std::string_view toString(Strategy s)
{
    switch (s) {
    case Strategy::FullRefresh:
        return "full_refresh";
    case Strategy::Cursor:
        return "cursor";
    case Strategy::Cdc:
        return "cdc";
    }
    return "unknown";
}

std::optional<Strategy> strategyFromString(std::string_view s)
{
    if (s == "full_refresh")
        return Strategy::FullRefresh;
    if (s == "cursor")
        return Strategy::Cursor;
    if (s == "cdc")
        return Strategy::Cdc;
    return std::nullopt;
}

} // namespace driftless::core
