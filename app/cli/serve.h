#pragma once

#include "core/engine/run/workspacestate.h"
#include "core/model/duration.h"

#include <stop_token>
#include <string>

namespace driftless::cli {

struct ServeOptions {
    std::string listen = "127.0.0.1:8765";
    /// Binding an address other than loopback must be asked for explicitly.
    bool allowRemote = false;
    std::string pipeline; ///< only this pipeline; empty: all
    /// How often slots are read and alerts computed.
    core::Millis monitorEvery{5000};
    /// How often the slots read are stored as slot samples (at most once a monitor round).
    core::Millis slotSampleEvery{15000};
    /// HTTPS: with the certificate and key given, else with the agent's self-signed one
    /// (made beside the workspace file on first use; core::AgentFiles).
    bool tls = false;
    std::string certificate;
    std::string key;
};

/// Splits `HOST:PORT` (`[::1]:8765` for IPv6). Throws std::invalid_argument with what is wrong,
/// also for an address other than loopback unless `allowRemote`.
std::pair<std::string, int> parseListen(const std::string &text, bool allowRemote);

/// Runs the pipelines as `run` does (starting again in place when the workspace changes) and
/// serves GET /sync/status (JSON), GET /metrics (Prometheus text) and the authenticated control
/// API under /api/v1/ (core::AgentApi) until `stop`. Over plain HTTP the control API answers only
/// loopback clients. Returns the number of tables in error at the end, or throws.
int serve(core::WorkspaceState &state, const ServeOptions &options, std::stop_source stop);

} // namespace driftless::cli
