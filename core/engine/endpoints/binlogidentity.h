#pragma once

#include "core/db/mysqlreplication.h"
#include "core/model/workspace.h"

#include <cstdint>
#include <string>

namespace driftless::core {

/// How a binlog reader reaches the MariaDB/MySQL endpoint `source` (host, credentials, TLS as its
/// DSN says) registering as `serverId`. Carries the password: clear it once connected.
MysqlReplicationOptions binlogReaderOptions(const Endpoint &source, std::uint32_t serverId);

/// The server_id a pipeline's binlog reader registers with: derived from the pipeline's name, in
/// a range real servers rarely use (0x44000000 + 24 bits). Other readers of the same pipeline
/// (the retention check, a Debezium export) take neighbours of it.
std::uint32_t binlogServerIdFor(const std::string &pipeline);

} // namespace driftless::core
