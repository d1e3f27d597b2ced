#pragma once

#include "core/model/conflictpolicy.h"
#include "core/model/error.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
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

/// What `resolve --take` keeps: one side's whole row, or the three-way merge from the base (a
/// column changed on one side only takes that side's value).
enum class ConflictTake { Source, Target, Merged };
const char *toString(ConflictTake take);
/// `source`, `target` or `merged`; nullopt otherwise.
std::optional<ConflictTake> conflictTakeFrom(std::string_view text);

/// How a person resolves a conflict: `take` for every column, except the columns `columns`
/// names, which take the side given (`--column COL=SIDE`, the API's `"columns"`).
struct ConflictChoice {
    ConflictTake take = ConflictTake::Merged;
    std::map<std::string, ConflictSide> columns;
};

/// A choice that names a column the conflict's row does not have, or a per-column choice on a
/// conflict where a side has no row (the agent API answers 400).
class BadConflictChoice : public ConfigError {
public:
    using ConfigError::ConfigError;
};

/// `merged` cannot decide: both sides changed `columns()` to different values, or a side deleted
/// the row (columns() empty). The message names them and says to choose (the API answers 422).
class ConflictNotMergeable : public ConfigError {
public:
    ConflictNotMergeable(std::string message, std::vector<std::string> columns)
        : ConfigError(std::move(message)), m_columns(std::move(columns))
    {
    }
    const std::vector<std::string> &columns() const noexcept { return m_columns; }

private:
    std::vector<std::string> m_columns;
};

/// The row both sides keep after `choice`: a JSON object of column -> text value (or `null`: no
/// row), from the conflict's stored versions and base. Pure; throws BadConflictChoice and
/// ConflictNotMergeable.
std::string chosenRow(const QueuedConflict &c, const ConflictChoice &choice);
/// How the queue records a resolution: `source`, `target` or `merged`, then the per-column
/// choices, e.g. `source; email=target`.
std::string resolutionText(const ConflictChoice &choice);

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

/// A side's row changed since the conflict was queued (the engine merged a later change into it,
/// or wrote it otherwise): nothing was written, and the queue's entry now holds both rows as they
/// are, to be reviewed and resolved again (the agent API answers 409).
class ConflictChanged : public ConfigError {
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
    /// The whole side taken; for a merged or per-column choice, the side its `take` names
    /// (Source for merged).
    ConflictSide take = ConflictSide::Source;
    std::string resolution; ///< resolutionText(), as the queue stores it
    std::string row;        ///< the row both sides hold now (JSON, as chosenRow())
    /// `conflict ID resolved: both sides hold the target's version of TABLE KEY`.
    std::string message;
};

/// `driftless-cli resolve ID --take SIDE` and `POST /api/v1/conflicts/ID/resolve`: writes the
/// chosen side's version of the row over the other side's (writeResolution: one transaction
/// under the resolve origin, never read back), marks the conflict resolved, counts it and
/// records a `conflict_resolved` event.
///
/// The choice is made on the rows as both sides hold them now, read first: when either differs
/// from the version the queue stored (a later change was merged into it), nothing is written,
/// the entry is refreshed with the rows as they are, and ConflictChanged says to review them and
/// resolve again; writing the stored version would undo that later change on one side only and
/// leave the two sides different. When both sides already hold the same row, the conflict is
/// marked resolved and nothing is written.
///
/// Blocking: connects to both endpoints. Throws UnknownConflict, ConflictAlreadyResolved,
/// ConflictChanged, ConfigError (the pipeline or table left the workspace) and the database's
/// Error when a read or the write fails (the conflict then stays open).
ConflictResolution resolveConflict(WorkspaceState &state, std::int64_t id, ConflictSide take);

/// `resolve ID --take merged` and `--column COL=SIDE`: builds chosenRow() and writes it, through
/// the same writeResolution as above, over each side whose row differs from it (a whole side
/// taken writes the other side only, as above; a merged row may write both). The two writes are
/// two transactions on two servers: when the second fails the conflict stays open, and resolving
/// it again writes the same row. Throws what the overload above throws, and BadConflictChoice and
/// ConflictNotMergeable before anything is written.
ConflictResolution resolveConflict(WorkspaceState &state, std::int64_t id, const ConflictChoice &choice);

} // namespace driftless::core
