#pragma once

#include "core/engine/commands/finding.h"
#include "core/model/tableref.h"

#include <string>
#include <vector>

namespace driftless::core {

class PgConnection;

/// The publication footgun: on Postgres 15 and later, a publication that publishes UPDATE or
/// DELETE for a table, with a column list or a row filter that does not cover the table's replica
/// identity, makes every UPDATE and DELETE on that table fail at the source ("cannot update
/// table ..."). Adds a warning for each such publication that includes `table`, whoever made
/// it, with the statements that make it safe. Driftless itself never creates a publication with a
/// column list or a row filter: row filters (`where:`) are applied by the engine.
void checkPublicationCoverage(PgConnection &src, const std::string &pipeline, const TableRef &table,
                              std::vector<Finding> &out);

} // namespace driftless::core
