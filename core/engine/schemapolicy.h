#pragma once

// The `schema_changes:` policies for a dropped or retyped source column (docs/schema-changes.md).

#include "core/model/workspace.h"

#include <optional>
#include <string>

namespace driftless::core {

/// The policy for a column the source dropped: the table's `schema_changes.drop_column`, else
/// the pipeline's, else `keep`.
std::string dropColumnPolicy(const TableSpec &spec, const std::optional<std::string> &pipelineDefault);

/// The policy for a column the source retyped: the table's `schema_changes.type_change`, else
/// the pipeline's, else `widen`.
std::string typeChangePolicy(const TableSpec &spec, const std::optional<std::string> &pipelineDefault);

/// The policy for a column the source renamed: the table's `schema_changes.rename_column`, else
/// the pipeline's, else `rename`.
std::string renameColumnPolicy(const TableSpec &spec, const std::optional<std::string> &pipelineDefault);

/// True when a Postgres column of type `from` (format_type text) holds every value of `to` after
/// the change, so `ALTER ... TYPE to` on the target loses nothing: smallint -> integer -> bigint,
/// varchar(n) -> varchar(m > n), varchar or text, numeric(p,s) -> numeric(q > p, s) or numeric.
bool widens(const std::string &from, const std::string &to);

} // namespace driftless::core
