#pragma once

#include "core/model/workspace.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

/// How a connection reaches an endpoint's server: by the DSN's own host, or through the Unix
/// socket of the endpoint's SSH tunnel.
struct EndpointRoute {
    std::string socketPath; ///< empty: direct
    std::string socketDir;  ///< the folder holding socketPath (libpq's `host`)
    std::string via;        ///< `ssh tunnel via user@host:port`
    bool tunneled() const { return !socketPath.empty(); }
};

/// The one door every connection to an endpoint goes through. Direct for an endpoint without
/// `ssh:`; otherwise the endpoint's tunnel: one system `ssh -N` per endpoint per process, shared
/// by all its connections and kept for the life of the process, forwarding a Unix socket in a
/// 0700 runtime folder to the server's host and port as seen from the SSH host. Started here on
/// first use; when it has died, the next call restarts it, at most every 1 s, 2 s, 4 s ... 30 s
/// while it keeps failing.
///
/// Thread-safe; a call may wait up to 20 s for the tunnel to come up. Throws ConnectionError
/// naming the endpoint: permanent for an untrusted or changed host key and a refused login,
/// transient for an SSH server that cannot be reached (and while backing off).
EndpointRoute routeTo(const Endpoint &e);

/// `e`'s DSN as a connection should use it: routeTo(e), then pgDsnThrough or mysqlDsnThrough.
/// Every connection opened from an endpoint's DSN goes through here (or routeTo).
std::string reachableDsn(const Endpoint &e);

/// `e`'s DSN for libpq, through `route` when tunneled: host= the socket folder, the DSN's port,
/// no TLS options (libpq does no TLS on a Unix socket; the tunnel is the protection).
std::string pgDsnThrough(const Endpoint &e, const EndpointRoute &route);
/// `e`'s mysql:// DSN, through `route` when tunneled (socket=, ssl-mode=disabled).
std::string mysqlDsnThrough(const Endpoint &e, const EndpointRoute &route);

/// What the tunnel of an endpoint is doing. `up`, or `down` with the reason.
struct TunnelState {
    bool up = false;
    std::string reason;       ///< why it is down (the last failure), empty when up
    std::string via;          ///< user@host:port [via jump]
    std::int64_t sinceMs = 0; ///< wall clock of the last change
};
/// The state of `endpoint`'s tunnel in this process (checking whether its ssh still runs);
/// nullopt when none was started.
std::optional<TunnelState> tunnelState(const std::string &endpoint);
/// `{"state": "up"|"down", "reason", "via", "since"}`, or null when there is no tunnel.
nlohmann::json tunnelJsonValue(const Endpoint &e);

/// Stops every tunnel of this process (tests; exit does it too).
void stopAllTunnels();

/// Driftless's own known_hosts file: `trust-host` writes it; tunnels read it and the user's
/// ~/.ssh/known_hosts. Default: beside the default state file. The CLI and the app set it beside
/// the state file they use.
void setSshKnownHostsFile(const std::string &path);
std::string sshKnownHostsFile();

/// One host key as ssh shows it.
struct SshHostKey {
    std::string type;          ///< ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa ...
    std::string blob;          ///< base64
    std::string fingerprint;   ///< SHA256:...
    std::string label() const; ///< `SHA256:... (ED25519)`
};
/// The jump host of `t` as a server of its own (host, port, user), for trusting its key; nullopt
/// without one. Throws ConfigError for a jump list or an ssh:// URI (trust those with ssh itself).
std::optional<SshTunnelSpec> jumpHostOf(const SshTunnelSpec &t);
/// The known_hosts name of a tunnel's SSH server: `host`, or `[host]:port` off port 22.
std::string knownHostsName(const SshTunnelSpec &t);
/// The keys the SSH server offers now (ssh-keyscan). Throws ConnectionError when it does not answer.
std::vector<SshHostKey> scanHostKeys(const SshTunnelSpec &t);
/// The keys trusted for the SSH server, in Driftless's known_hosts and ~/.ssh/known_hosts.
std::vector<SshHostKey> trustedHostKeys(const SshTunnelSpec &t);
/// Appends `keys` for the server to Driftless's known_hosts (0600); with `replace`, removes the
/// server's keys from it first.
void trustHostKeys(const SshTunnelSpec &t, const std::vector<SshHostKey> &keys, bool replace);

} // namespace driftless::core
