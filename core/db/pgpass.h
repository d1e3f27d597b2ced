#pragma once

#include <map>
#include <optional>
#include <string>

namespace driftless::core {

/// Every option of `dsn` as libpq resolves it before connecting: the DSN, then the service file
/// entry, then the PG* variables, then libpq's defaults (no network: libpq stops before any
/// lookup). Empty when libpq cannot resolve it (a service that does not exist, a bad option).
std::map<std::string, std::string> resolvePgOptions(const std::string &dsn);

/// The password a `~/.pgpass` line gives the connection `dsn` describes, read the way libpq reads
/// it: the file is the DSN's `passfile`, else PGPASSFILE, else `~/.pgpass`; it is ignored when
/// group or others may read it; lines are `host:port:database:user:password` with `*` matching
/// anything and `\:` / `\\` escaped; the first line that matches wins; a host that is a Unix
/// socket folder (or none) is matched as `localhost`. Host, port, database and user are the
/// DSN's, completed by the service file, the PG* variables and libpq's defaults.
///
/// libpq does this by itself for the connections it makes; Driftless asks only for a connection
/// it rewrote (through an SSH tunnel, to a socket folder), so the line a DBA wrote for the
/// database's own host and port still applies. nullopt: no file, no matching line.
std::optional<std::string> pgpassPasswordFor(const std::string &dsn);

} // namespace driftless::core
