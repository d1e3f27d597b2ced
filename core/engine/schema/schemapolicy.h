#pragma once

// The `schema_changes:` policies for a dropped or retyped source column (docs/schema-changes.md).

#include "core/model/schemachangepolicy.h"
#include "core/model/workspace.h"

#include "core/model/tableschema.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace driftless::core {

/// The policy for a column the source dropped: the table's `schema_changes.drop_column`, else
/// the pipeline's, else `keep`.
DropColumnPolicy dropColumnPolicy(const TableSpec &spec, const std::optional<std::string> &pipelineDefault);

/// The policy for a column the source retyped: the table's `schema_changes.type_change`, else
/// the pipeline's, else `widen`.
TypeChangePolicy typeChangePolicy(const TableSpec &spec, const std::optional<std::string> &pipelineDefault);

/// The policy for a column the source renamed: the table's `schema_changes.rename_column`, else
/// the pipeline's, else `rename`.
RenameColumnPolicy renameColumnPolicy(const TableSpec &spec, const std::optional<std::string> &pipelineDefault);

/// True when a Postgres column of type `from` (format_type text) holds every value of `to` after
/// the change, so `ALTER ... TYPE to` on the target loses nothing: smallint -> integer -> bigint,
/// varchar(n) -> varchar(m > n), varchar or text, numeric(p,s) -> numeric(q > p, s) or numeric.
bool widens(const std::string &from, const std::string &to);

/// How a target table's columns differ from the source's now: what CDC checks at start and a
/// cursor or full-refresh table at the start of every pass (docs/schema-changes.md).
struct ColumnLayoutDiff {
    /// Source columns the target lacks, in the source's order (generated ones left out: prepare()
    /// adds those as it always did).
    std::vector<std::string> added;
    /// Target columns the source lacks: dropped (or renamed) at the source.
    std::vector<std::string> gone;
    /// Columns whose type differs (only with `compareTypes`, for built-in, non-enum types):
    /// name and the target's type; the source's is in its schema.
    std::vector<std::pair<std::string, std::string>> retyped;
    bool empty() const { return added.empty() && gone.empty() && retyped.empty(); }
};

/// `target` as Merger::targetColumns() gives it. `compareTypes`: the target's type names are
/// Postgres's (a Postgres target), so they compare with the source's.
ColumnLayoutDiff diffColumns(const TableSchema &source, const std::vector<std::pair<std::string, std::string>> &target,
                             bool compareTypes);

/// Why the `type_change` policy `policy` does not let the engine apply a retype from `from` to
/// `to` by itself (appended to "column c changed type from ... to ..."), or empty when it widens
/// the target's column. `builtin`: both types are Postgres's own.
std::string retypeRefusal(TypeChangePolicy policy, const std::string &from, const std::string &to, bool builtin);

} // namespace driftless::core
