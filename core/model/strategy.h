#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace driftless::core {

/// How one table is kept in sync. Chosen per table, not per source.
enum class Strategy {
    FullRefresh, ///< reload the whole table into a shadow and swap it in atomically
    Cursor,      ///< read rows past the last cursor value, with a lookback window, deduplicated by key
    Cdc          ///< the source's change log (pgoutput, binlog), in commit order
};

/// The YAML spelling: full_refresh, cursor, cdc.
std::string_view toString(Strategy s);
std::optional<Strategy> strategyFromString(std::string_view s);

} // namespace driftless::core
