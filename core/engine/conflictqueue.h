#pragma once

#include "core/model/conflictpolicy.h"
#include "core/model/error.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace driftless::core {

class WorkspaceState;

/// The side of a two-way pipeline whose version of a conflicting row both sides keep.
enum class ConflictSide { Source, Target };
const char *toString(ConflictSide side);
/// `source` or `target`; nullopt otherwise.
std::optional<ConflictSide> conflictSideFrom(std::string_view text);

/// A conflict id the workspace's queue does not hold (the agent API answers 404).
class UnknownConflict : public ConfigError {
public:
    using ConfigError::ConfigError;
};

/// A conflict that was resolved before (the agent API answers 409).
class ConflictAlreadyResolved : public ConfigError {
public:
    using ConfigError::ConfigError;
};

/// One conflict as `driftless-cli conflicts --json` and `GET /api/v1/conflicts` write it: id,
/// pipeline, table, key, columns, source, target, base (the JSON the queue holds, parsed),
/// detected_at (ISO 8601) and status.
nlohmann::json conflictJson(const QueuedConflict &c);
/// What conflictJson() wrote, read back (a face showing an agent's queue). Fields it lacks stay
/// empty; detectedAtMs is 0 when detected_at cannot be read.
QueuedConflict conflictFromJson(const nlohmann::json &j);

/// The open conflicts of `pipeline` (every pipeline when empty), oldest first. Throws
/// ConfigError when the workspace has no such pipeline.
std::vector<QueuedConflict> openConflicts(WorkspaceState &state, const std::string &pipeline);

/// What resolveConflict() did.
struct ConflictResolution {
    QueuedConflict conflict; ///< as it was before, still open
    ConflictSide take = ConflictSide::Source;
    /// `conflict ID resolved: both sides hold the target's version of TABLE KEY`.
    std::string message;
};

/// `driftless-cli resolve ID --take SIDE` and `POST /api/v1/conflicts/ID/resolve`: writes the
/// chosen side's version of the row over the other side's (writeResolution: one transaction
/// under the resolve origin, never read back), marks the conflict resolved, counts it and
/// records a `conflict_resolved` event.
///
/// Blocking: connects to the endpoint written. Throws UnknownConflict, ConflictAlreadyResolved,
/// ConfigError (the pipeline or table left the workspace) and the database's Error when the write
/// fails (the conflict then stays open).
ConflictResolution resolveConflict(WorkspaceState &state, std::int64_t id, ConflictSide take);

} // namespace driftless::core
