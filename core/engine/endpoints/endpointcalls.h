#pragma once

#include "core/engine/endpoints/endpointprobe.h"
#include "core/engine/endpoints/mysqlpreflight.h"
#include "core/engine/endpoints/tablediscovery.h"
#include "core/model/workspace.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>

namespace driftless::core {

/// What "Test connection" found on an endpoint of any kind: the probe of its kind is filled.
struct EndpointProbe {
    EndpointKind kind = EndpointKind::Postgres;
    PgProbe postgres;
    MysqlProbe mysql;
    SqliteProbe sqlite;

    /// Reached, and nothing failed on the way (what each probe calls a success).
    bool ok() const;
};

/// Probes `e` where this process runs (the app's own machine, or the agent's): the server's
/// version, settings and rights, or the file's state. `password`, when given, is for this
/// connection only. Blocking (up to `timeoutSeconds` to connect); never throws for a refusal.
EndpointProbe probeEndpoint(const Endpoint &e, const std::optional<std::string> &password = std::nullopt,
                            int timeoutSeconds = 10);

/// The values of the control API's probe and discover calls (docs/agent-api.md), written and
/// read back. The readers take what the writers write and ignore keys they do not know; they
/// throw core::Error when the document is not an object of that shape.
nlohmann::json endpointJsonValue(const Endpoint &e); ///< name, kind, dsn, path (no slot guard)
/// An endpoint as a request names it; throws ConfigError when the kind is unknown or the
/// workspace loader would refuse it (a DSN holding a password, an unparseable one).
Endpoint endpointFromJson(const nlohmann::json &j);
nlohmann::json probeJsonValue(const EndpointProbe &p);
EndpointProbe probeFromJson(const nlohmann::json &j);
nlohmann::json discoveryJsonValue(const SourceDiscovery &d);
SourceDiscovery discoveryFromJson(const nlohmann::json &j);

} // namespace driftless::core
