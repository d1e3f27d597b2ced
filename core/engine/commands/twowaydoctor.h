#pragma once

#include "core/engine/commands/finding.h"
#include "core/model/workspace.h"

#include <vector>

namespace driftless::core {

/// What a two-way pipeline (`direction: both`) needs of both sides, beyond a one-way one's:
/// each side is a CDC source too (wal_level logical and REPLICATION on Postgres; binlog_format
/// ROW on MariaDB/MySQL), each side's merger applies under a replication origin (Postgres:
/// superuser or EXECUTE on the origin functions), and the tables log full before-images, which
/// conflict detection needs (REPLICA IDENTITY FULL; binlog_row_image FULL). Each finding that
/// SQL fixes carries the statements. Never changes anything; an endpoint that cannot be reached
/// is left to the general checks.
std::vector<Finding> twoWayFindings(const Workspace &ws, const PipelineSpec &p);

} // namespace driftless::core
