#include "core/engine/endpoints/connect.h"

#include "core/engine/endpoints/endpointtls.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/mergers/mysqlmerger.h"
#include "core/mergers/pgmerger.h"
#include "core/mergers/sqlitemerger.h"
#include "core/model/error.h"

#include <filesystem>

namespace driftless::core {

namespace {

MysqlConnection noted(const Endpoint &e, MysqlConnection conn, bool warnTls = true)
{
    recordEndpointTls(e, endpointTlsOf(conn), warnTls);
    return conn;
}

} // namespace

PgConnection connectPostgres(const Endpoint &e, const std::string &applicationName, bool warnTls)
{
    PgConnectOptions opts;
    opts.applicationName = applicationName;
    const std::string dsn = reachableDsn(e); // its errors name the endpoint already
    try {
        PgConnection conn(dsn, opts);
        recordEndpointTls(e, endpointTlsOf(conn), warnTls);
        return conn;
    } catch (const ConnectionError &err) {
        throw ConnectionError(err.kind(), "endpoint '" + e.name + "': " + err.what(), err.code(), err.hint());
    }
}

MysqlConnection connectMysql(const Endpoint &e, bool warnTls)
{
    if (e.kind != EndpointKind::Mysql)
        throw Error(ErrorKind::Permanent, "endpoint '" + e.name + "' is not a MySQL/MariaDB endpoint");
    return noted(e, MysqlConnection(reachableDsn(e), e.name), warnTls);
}

std::unique_ptr<Merger> createMerger(const Endpoint &target, const MergeTarget &mt)
{
    switch (target.kind) {
    case EndpointKind::Postgres:
        return std::make_unique<PgMerger>(connectPostgres(target, "driftless " + mt.pipeline), mt);
    case EndpointKind::Sqlite: {
        auto parent = std::filesystem::path(target.path).parent_path();
        if (!parent.empty() && !std::filesystem::exists(parent))
            throw Error(ErrorKind::Permanent,
                        "endpoint '" + target.name + "': folder " + parent.string() + " does not exist", {},
                        "create the folder or fix the endpoint's path");
        return std::make_unique<SqliteMerger>(target.path, mt);
    }
    case EndpointKind::Mysql:
        // LOCAL INFILE for the bulk load (the merger falls back to INSERTs where it is refused).
        return std::make_unique<MysqlMerger>(noted(target, MysqlConnection(reachableDsn(target), target.name, true)),
                                             mt);
    }
    throw Error(ErrorKind::Permanent, "unknown endpoint kind");
}

std::unique_ptr<TargetSession> createTargetSession(const Endpoint &target, const std::string &applicationName)
{
    switch (target.kind) {
    case EndpointKind::Postgres:
        return std::make_unique<PgTargetSession>(connectPostgres(target, applicationName));
    case EndpointKind::Sqlite:
        return std::make_unique<SqliteTargetSession>(target.path);
    case EndpointKind::Mysql:
        return std::make_unique<MysqlTargetSession>(
            noted(target, MysqlConnection(reachableDsn(target), target.name, true)));
    }
    throw Error(ErrorKind::Permanent, "unknown endpoint kind");
}

} // namespace driftless::core
