#include "core/engine/endpoints/binlogidentity.h"

#include "core/engine/endpoints/connect.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/model/dsn.h"

namespace driftless::core {

MysqlReplicationOptions binlogReaderOptions(const Endpoint &source, std::uint32_t serverId)
{
    const MysqlDsn dsn = MysqlDsn::parse(source.dsn);
    MysqlReplicationOptions ro;
    ro.host = dsn.host;
    ro.port = static_cast<unsigned>(dsn.port);
    ro.user = dsn.user;
    ro.password = mysqlPasswordFor(source.dsn, dsn).value_or("");
    ro.unixSocket = dsn.socket;
    ro.tls = dsn.sslMode != "disabled" && dsn.sslMode != "preferred";
    if (const auto route = routeTo(source); route.tunneled()) {
        ro.unixSocket = route.socketPath; // no TLS on the tunnel's socket: SSH protects the way
        ro.tls = false;
    }
    ro.tlsCa = dsn.sslCa;
    ro.serverId = serverId;
    ro.heartbeat = std::chrono::milliseconds(250);
    return ro;
}

std::uint32_t binlogServerIdFor(const std::string &pipeline)
{
    std::uint32_t h = 2166136261u;
    for (unsigned char c : pipeline) {
        h ^= c;
        h *= 16777619u;
    }
    return 0x44000000u | (h & 0x00FFFFFFu);
}

} // namespace driftless::core
