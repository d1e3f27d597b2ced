#pragma once

#include "core/engine/slots/slots.h"
#include "core/model/staterecords.h"
#include "core/model/workspace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace driftless::core {

/// One file of SHOW BINARY LOGS.
struct BinlogFile {
    std::string name;
    std::int64_t size = 0;
};

/// Completes `r` (its neededFile, neededOffset, retentionSeconds and neededClosedMs set) from
/// the server's binlog files at `nowMs`: oldest and newest file, bytes behind, whether the needed
/// file is gone, its expiry horizon and the seconds left until it. `files` in the server's order
/// (oldest first). Pure.
void projectBinlog(BinlogRetention &r, const std::vector<BinlogFile> &files, std::int64_t nowMs);

/// The file after `file` in `files`, or empty when it is the newest or not there.
std::string nextBinlogFile(const std::vector<BinlogFile> &files, const std::string &file);

/// Below this many seconds to expiry a pipeline's binlog is alerted on: the lesser of 6 h and
/// half the retention, so a short retention still leaves time to act.
double binlogExpiryWarnSeconds(std::int64_t retentionSeconds);

/// The retention that keeps the needed file of `r` for three more days, or for one more retention
/// when that is longer: its age at `nowMs` plus that, in whole hours, as the statement to run
/// (`SET GLOBAL binlog_expire_logs_seconds = N;`).
std::string binlogRetentionFix(const BinlogRetention &r, std::int64_t nowMs);

/// Appends one SourceSlots (binlog = true) per MariaDB/MySQL endpoint that is the source of a
/// pipeline with CDC tables, with one BinlogRetention per such pipeline: the position from the
/// checkpoints in `statuses` (as the state store mirrors them), the server's files and retention
/// read now. Blocking (a connection per source, and a binlog dump of a few events to learn when a
/// needed file was closed, kept once known). A source that cannot be read gives items with
/// their error, never a throw.
void addBinlogs(std::vector<SourceSlots> &sources, const Workspace &ws, const std::vector<TableStatus> &statuses,
                std::int64_t nowMs);

} // namespace driftless::core
