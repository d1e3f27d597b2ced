// The one switch on a resolution side's kind, so neither kind's conflict code includes the
// other's (conflicts.cpp: Postgres, conflictsmysql.cpp: MariaDB/MySQL).

#include "core/engine/twoway/conflicts.h"
#include "core/engine/twoway/conflictsmysql.h"

namespace driftless::core {

std::unique_ptr<ResolutionSide> openResolutionSide(const Endpoint &endpoint, const std::string &direction,
                                                   const TargetName &table, const std::string &keyJson,
                                                   const TableSchema *postgresColumns)
{
    if (endpoint.kind == EndpointKind::Mysql)
        return openMysqlResolutionSide(endpoint, table, keyJson, postgresColumns);
    return openPgResolutionSide(endpoint, direction, table, keyJson);
}

void writeResolution(const Endpoint &endpoint, const std::string &direction, const TargetName &table,
                     const std::string &keyJson, const std::string &rowJson, const TableSchema *postgresColumns)
{
    auto side = openResolutionSide(endpoint, direction, table, keyJson, postgresColumns);
    side->write(rowJson);
    side->commit();
}

} // namespace driftless::core
