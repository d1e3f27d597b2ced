#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace driftless::core {

/// Where an agent (`driftless-cli serve`) keeps what proves it and what it asks for, beside
/// the workspace file it runs: `<state>.agent-token` (0600), `<state>.agent.crt` and
/// `<state>.agent.key` (0600), the self-signed certificate of `serve --tls`.
struct AgentFiles {
    std::string token;
    std::string certificate;
    std::string key;
    static AgentFiles beside(const std::string &statePath);
};

/// The agent's bearer token: read from `path`, or made (32 random bytes, hex) and written there
/// with mode 0600 when there is none. Throws Error when the file cannot be written, or when
/// others may read it (it says to `chmod 600`): a token others can read is no token.
std::string ensureAgentToken(const std::string &path);
/// A new token in `path` (0600): the old one stops working at the agent's next request.
std::string rotateAgentToken(const std::string &path);
/// The token in `path`; empty when there is none. Throws Error as ensureAgentToken.
std::string readAgentToken(const std::string &path);
/// `presented` is the token, compared in constant time (no timing tells how much matched).
bool agentTokenMatches(const std::string &token, const std::string &presented);

/// The agent's certificate and key, PEM.
struct AgentCertificate {
    std::string certificatePem;
    std::string keyPem;
    /// SHA-256 of the certificate (DER), as `openssl x509 -fingerprint -sha256` prints it:
    /// `AB:CD:...`, what the app pins.
    std::string fingerprint;
    bool created = false;
};
/// The self-signed certificate at `files`, made when there is none: an EC P-256 key (0600) and
/// a certificate for this host's name, localhost, 127.0.0.1 and ::1, valid ten years. Throws
/// Error when it cannot be read, made or written.
AgentCertificate ensureAgentCertificate(const AgentFiles &files);
/// A certificate (and key) a DBA provides, checked to be PEM that belongs together. Throws Error.
AgentCertificate loadAgentCertificate(const std::string &certificatePath, const std::string &keyPath);
/// The SHA-256 fingerprint of a PEM certificate (see AgentCertificate::fingerprint). Throws Error.
std::string certificateFingerprint(const std::string &certificatePem);

/// Turns away a client after repeated failed logins: `limit` failures within `window` lock its
/// address out for `window` (every request refused, token or not). Thread-safe.
class FailureLimiter {
public:
    using Clock = std::chrono::steady_clock;
    explicit FailureLimiter(int limit = 5, std::chrono::seconds window = std::chrono::seconds(60))
        : m_limit(limit), m_window(window)
    {
    }
    /// Seconds `address` is still locked out for; 0 when it may try.
    int lockedFor(const std::string &address, Clock::time_point now = Clock::now());
    /// Counts a failure; true when it locked the address out (just now).
    bool failed(const std::string &address, Clock::time_point now = Clock::now());
    /// A success forgets the address's failures.
    void succeeded(const std::string &address);

private:
    struct Entry {
        int failures = 0;
        Clock::time_point first;
        Clock::time_point lockedUntil;
    };
    int m_limit;
    std::chrono::seconds m_window;
    std::mutex m_mutex;
    std::map<std::string, Entry> m_entries;
};

} // namespace driftless::core
