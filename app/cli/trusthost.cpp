#include "app/cli/trusthost.h"

#include "core/engine/sshtunnel.h"
#include "core/model/error.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

namespace driftless::cli {

using namespace driftless::core;

namespace {

constexpr int kOk = 0;
constexpr int kSyncFailed = 1;
constexpr int kUsage = 2;

void printKeys(const char *title, const std::vector<SshHostKey> &keys)
{
    std::printf("%s\n", title);
    for (const auto &k : keys)
        std::printf("  %s\n", k.label().c_str());
}

bool anyShared(const std::vector<SshHostKey> &a, const std::vector<SshHostKey> &b)
{
    return std::any_of(a.begin(), a.end(), [&](const SshHostKey &x) {
        return std::any_of(b.begin(), b.end(), [&](const SshHostKey &y) { return x.blob == y.blob; });
    });
}

} // namespace

int trustHost(const Endpoint &e, const TrustHostOptions &options)
{
    const SshTunnelSpec &t = *e.ssh;
    const std::string server = t.host + ":" + std::to_string(t.port);
    if (t.jump) {
        // ssh-keyscan cannot hop through a bastion: read the keys on it instead.
        std::fprintf(stderr,
                     "driftless-cli: trust-host cannot reach %s through the jump host %s yet; nothing changed.\n"
                     "Read the keys on the jump host, compare the fingerprints with the SSH server's "
                     "administrator, then add them:\n"
                     "  ssh %s ssh-keyscan -p %d %s > keys && ssh-keygen -lf keys\n"
                     "  cat keys >> %s\n",
                     server.c_str(), t.jump->c_str(), t.jump->c_str(), t.port, t.host.c_str(),
                     sshKnownHostsFile().c_str());
        return kUsage;
    }
    const auto offered = scanHostKeys(t);
    const auto trusted = trustedHostKeys(t);
    std::printf("endpoint %s: the SSH server %s offers\n", e.name.c_str(), server.c_str());
    for (const auto &k : offered)
        std::printf("  %s\n", k.label().c_str());
    const bool changed = !trusted.empty() && !anyShared(offered, trusted);
    if (!trusted.empty() && !changed) {
        std::printf("already trusted (%s)\n", sshKnownHostsFile().c_str());
        return kOk;
    }
    if (changed) {
        printKeys("WARNING: the SSH host key CHANGED. Trusted until now:", trusted);
        printKeys("offered now:", offered);
        if (!options.replace) {
            std::fprintf(stderr,
                         "driftless-cli: refused: the key differs from the trusted one (someone may be intercepting "
                         "the connection). Nothing changed. If the server's administrator confirms the new "
                         "fingerprint, run: driftless-cli trust-host %s --replace\n",
                         e.name.c_str());
            return kSyncFailed;
        }
    }
    if (!options.yes) {
        if (!::isatty(STDIN_FILENO)) {
            std::fprintf(stderr,
                         "driftless-cli: nothing changed: compare the fingerprint with the SSH server's administrator, "
                         "then run: driftless-cli trust-host %s --yes%s\n",
                         e.name.c_str(), changed ? " --replace" : "");
            return kUsage;
        }
        std::printf("Is this the key of %s (checked with its administrator)? Trust it [y/N] ", server.c_str());
        std::fflush(stdout);
        std::string answer;
        std::getline(std::cin, answer);
        if (answer != "y" && answer != "Y" && answer != "yes") {
            std::printf("nothing changed\n");
            return kSyncFailed;
        }
    }
    trustHostKeys(t, offered, changed);
    std::printf("trusted: %s added to %s\n", knownHostsName(t).c_str(), sshKnownHostsFile().c_str());
    return kOk;
}

} // namespace driftless::cli
