#pragma once

#include <nlohmann/json_fwd.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace driftless::core {

/// How one column's values are masked before they leave the source side (YAML
/// `columns.mask.<column>`).
struct ColumnMask {
    enum class Kind { Null, Truncate, KeepLast, Hash };
    Kind kind = Kind::Null;
    /// Truncate: characters kept from the start; KeepLast: characters kept at the end (the
    /// others become '*').
    int count = 0;
    /// Hash: where the HMAC key is: `keychain` or `file:PATH`. Never the key itself.
    std::string key;

    bool operator==(const ColumnMask &) const = default;
};

/// Where a mapping entry was written, for messages that point at the YAML (file, line, field).
struct MappingSpot {
    std::string file;
    int line = 0;
    std::string field;
};

/// A table's column mapping (YAML `columns:`): which source columns reach the target, under
/// which names, with which masks. Empty lists mean "every column, as it is".
struct ColumnMapping {
    std::vector<std::string> exclude;
    /// Set (`include: [...]`): only these columns reach the target. Never both with exclude.
    std::vector<std::string> include;
    bool hasInclude = false;
    /// Source name -> target name, in the order written.
    std::vector<std::pair<std::string, std::string>> rename;
    /// Source column -> mask, in the order written.
    std::vector<std::pair<std::string, ColumnMask>> mask;
    /// Per entry, keyed `exclude:<col>`, `include:<col>`, `rename:<col>`, `mask:<col>`: where
    /// it was written. Not part of the value (a reloaded file compares equal).
    std::map<std::string, MappingSpot> spots;

    bool empty() const { return exclude.empty() && !hasInclude && rename.empty() && mask.empty(); }
    /// The spot of an entry, or an empty one.
    MappingSpot spot(const std::string &entry) const;
    bool operator==(const ColumnMapping &o) const
    {
        return exclude == o.exclude && include == o.include && hasInclude == o.hasInclude && rename == o.rename &&
               mask == o.mask;
    }
};

/// The mapping as the state file keeps it (spots included, so a run can still point at the YAML).
nlohmann::json columnMappingJson(const ColumnMapping &m);
ColumnMapping columnMappingFromJson(const nlohmann::json &j);

} // namespace driftless::core
