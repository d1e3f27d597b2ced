#include "app/cli/trusthost.h"

#include "core/engine/endpoints/sshtunnel.h"
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
    std::optional<SshTunnelSpec> jumpHost;
    if (options.jump) {
        jumpHost = jumpHostOf(*e.ssh);
        if (!jumpHost) {
            std::fprintf(stderr, "driftless-cli: endpoint %s has no ssh.jump; nothing changed\n", e.name.c_str());
            return kUsage;
        }
    }
    // The jump host is reached directly (it is the one host of the tunnel this machine talks to).
    const SshTunnelSpec &t = jumpHost ? *jumpHost : *e.ssh;
    const char *what = jumpHost ? "the jump host" : "the SSH server";
    const std::string server = t.host + ":" + std::to_string(t.port);
    const auto offered = scanHostKeys(t);
    const auto trusted = trustedHostKeys(t);
    std::printf("endpoint %s: %s %s offers\n", e.name.c_str(), what, server.c_str());
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
                         "fingerprint, run: driftless-cli trust-host %s%s --replace\n",
                         e.name.c_str(), options.jump ? " --jump" : "");
            return kSyncFailed;
        }
    }
    if (!options.yes) {
        if (!::isatty(STDIN_FILENO)) {
            std::fprintf(stderr,
                         "driftless-cli: nothing changed: compare the fingerprint with the SSH server's administrator, "
                         "then run: driftless-cli trust-host %s%s --yes%s\n",
                         e.name.c_str(), options.jump ? " --jump" : "", changed ? " --replace" : "");
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
