#pragma once

#include "core/model/workspace.h"

namespace driftless::cli {

struct TrustHostOptions {
    bool yes = false;     ///< trust without asking
    bool replace = false; ///< the key changed: drop the old one
    bool jump = false;    ///< the jump host's key, not the SSH server's
};

/// `driftless-cli trust-host ENDPOINT`: shows the host keys the endpoint's SSH server offers
/// (ssh-keyscan) with their SHA256 fingerprints, asks on a terminal, and adds them to
/// Driftless's known_hosts. A key that differs from the trusted one is shown beside it and
/// refused unless `replace`. Returns the exit code.
int trustHost(const core::Endpoint &e, const TrustHostOptions &options);

} // namespace driftless::cli
