#pragma once

#include "core/model/workspace.h"

#include <QString>

namespace driftless::ui {

/// A mask as a DBA reads it: its kind and count ("keep last 4", "hmac-sha256"). Never the key,
/// nor where the key is kept.
QString maskText(const core::ColumnMask &mask);

/// A table's `columns:` mapping in one or more lines: the columns left out (or the only ones
/// kept), the renames and the masks; "every column, as it is" without one.
QString mappingText(const core::TableSpec &spec);

/// `where:`: the filter, or "every row".
QString filterText(const core::TableSpec &spec);

/// `deletes:`: what a source delete does on the target.
QString deletesText(const core::TableSpec &spec);

} // namespace driftless::ui
