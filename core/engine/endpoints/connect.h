#pragma once

#include "core/db/mysqlconnection.h"
#include "core/db/pgconnection.h"
#include "core/mergers/merger.h"
#include "core/model/workspace.h"

#include <memory>

namespace driftless::core {

/// Opens a Postgres connection to an endpoint; errors name the endpoint. Its TLS is noted for
/// the status endpoint (recordEndpointTls); `warnTls` logs a connection that is not encrypted or
/// not verified off this machine (doctor, which reports it as a finding, says false).
PgConnection connectPostgres(const Endpoint &e, const std::string &applicationName = "driftless", bool warnTls = true);

/// Opens a MySQL/MariaDB connection to an endpoint; errors name the endpoint. TLS as above.
MysqlConnection connectMysql(const Endpoint &e, bool warnTls = true);

/// Creates the merger for a table's target endpoint. Throws Error for kinds this build cannot
/// write to.
std::unique_ptr<Merger> createMerger(const Endpoint &target, const MergeTarget &mt);

/// Opens one target connection for several mergers (CDC: one commit for many tables).
std::unique_ptr<TargetSession> createTargetSession(const Endpoint &target, const std::string &applicationName);

} // namespace driftless::core
