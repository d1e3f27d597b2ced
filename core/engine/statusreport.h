#pragma once

#include "core/state/statestore.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// One table's status as the CLI, the status endpoint and the app show it.
struct TableReport {
    std::string pipeline;
    std::string table;
    std::string target;
    std::string strategy;
    std::string state;
    std::string message;
    std::int64_t rowsApplied = 0;
    std::optional<std::int64_t> lastSyncAtMs;
    std::string checkpoint; ///< JSON position, as stored
    std::int64_t version = 0;
    std::optional<double> lagSeconds;
    std::string freshness;
    double slaSeconds = 0;
    std::optional<double> progress;
};

/// Joins the workspace's tables with their mirrored status (tables never run show `idle`).
std::vector<TableReport> buildStatus(const Workspace &ws, const std::vector<StateStore::TableStatus> &statuses,
                                     std::int64_t nowMs);

/// `{"generated_at": ..., "tables": [ {pipeline, table, strategy, state, rows_applied,
/// last_sync_at, checkpoint, lag_seconds, freshness, ...} ]}`.
std::string statusJson(const std::vector<TableReport> &tables, std::int64_t nowMs);

/// `2026-11-29T10:00:00.123Z`.
std::string formatIso8601(std::int64_t ms);

} // namespace driftless::core
