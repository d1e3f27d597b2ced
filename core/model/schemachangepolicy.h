#pragma once

// The `schema_changes:` policies as the engine compares them (docs/schema-changes.md). The
// workspace keeps the file's spelling (PipelineSpec, TableSpec); the engine resolves a table's
// policies into these once (core/engine/schema/schemapolicy.h) and names them back with
// policyName() in what it says.

#include <optional>
#include <string>
#include <string_view>

namespace driftless::core {

/// `add_column`: a column the source gained is added and its rows filled (backfill), added for
/// new rows only (propagate), left out (ignore), or the table pauses.
enum class AddColumnPolicy { Backfill, Propagate, Ignore, Pause };
/// `drop_column`: a column the source dropped stays on the target (NULL from then on), is
/// dropped there too, or the table pauses.
enum class DropColumnPolicy { Keep, Drop, Pause };
/// `type_change`: a retyped column is widened on the target, or the table pauses.
enum class TypeChangePolicy { Widen, Pause };
/// `rename_column`: a renamed column is renamed on the target, or the table pauses.
enum class RenameColumnPolicy { Rename, Pause };

/// The file's spelling: `backfill`, `keep`, `widen`, `rename`, `pause`...
std::string_view policyName(AddColumnPolicy p);
std::string_view policyName(DropColumnPolicy p);
std::string_view policyName(TypeChangePolicy p);
std::string_view policyName(RenameColumnPolicy p);

/// The policy a spelling names, nullopt for another word (the workspace file refuses those).
std::optional<AddColumnPolicy> parseAddColumnPolicy(std::string_view name);
std::optional<DropColumnPolicy> parseDropColumnPolicy(std::string_view name);
std::optional<TypeChangePolicy> parseTypeChangePolicy(std::string_view name);
std::optional<RenameColumnPolicy> parseRenameColumnPolicy(std::string_view name);

} // namespace driftless::core
