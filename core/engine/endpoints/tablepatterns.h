#pragma once

// Tables by pattern (docs/patterns.md): what a pipeline's include_tables pick up on its source
// that it does not sync yet, each with the strategy it gets, or why it is not taken.

#include "core/model/strategy.h"
#include "core/model/tableref.h"
#include "core/model/workspace.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace driftless::core {

/// One table the patterns picked up.
struct PatternPickup {
    TableRef table;
    Strategy strategy = Strategy::FullRefresh;
    std::optional<std::string> cursor; ///< cursor sync without a cursor in table_defaults: the best candidate
    /// Why it is not taken (it never syncs, and is not looked at again); empty: taken.
    std::string refused;
    /// What to do about a refusal.
    std::string fix;
    /// The sentence said when it is picked up: the pattern, the strategy and why.
    std::string message;
};

/// Reads `p`'s source (an endpoint of `ws`) and returns the tables its include_tables pick up
/// that are neither listed under `tables:` nor in `known` (picked up before). Blocking. Throws
/// Error when the source cannot be read.
std::vector<PatternPickup> lookForNewTables(const Workspace &ws, const PipelineSpec &p,
                                            const std::set<TableRef> &known);

} // namespace driftless::core
