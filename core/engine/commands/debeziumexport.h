#pragma once

#include "core/model/workspace.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace driftless::core {

/// A pipeline as the Debezium source connector that would capture the same tables, for a DBA
/// who moves it to an existing Kafka Connect cluster.
struct DebeziumExport {
    /// Kafka Connect's REST form (`POST /connectors`): `{"name": ..., "config": {...}}`, every
    /// value a string.
    nlohmann::json connector;
    /// What the pipeline does that the connector cannot say, one line each with what to do.
    std::vector<std::string> notExpressed;
};

struct DebeziumOptions {
    /// `schema.history.internal.kafka.bootstrap.servers` of a MySQL/MariaDB connector; left
    /// empty (and listed as not expressed) when not given.
    std::string bootstrapServers;
};

/// The connector for pipeline `pipeline` of `ws`. Its slot (`debezium_<pipeline>`) and, for
/// MySQL, its server id differ from the engine's, so both can run during a hand-over; the
/// publication is the pipeline's. No secret is exported: the password is for the DBA to add.
/// Throws ConfigError for an unknown pipeline.
DebeziumExport exportDebezium(const Workspace &ws, const std::string &pipeline, const DebeziumOptions &options = {});

} // namespace driftless::core
