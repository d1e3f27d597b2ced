#pragma once

#include <string>

namespace driftless::core {

/// What protected one connection to a database server, as the client library reports it after
/// connecting (not what the DSN asked for): whether the session is encrypted, whether the
/// server's certificate was checked against a trusted CA, and whether its name was checked
/// against the host the DSN connects by.
struct TlsState {
    bool encrypted = false;
    bool verified = false;     ///< the certificate chains to a CA this machine trusts
    bool hostVerified = false; ///< ... and names the host asked for (verify-full, verify_identity)
    /// The mode in force: libpq's sslmode (disable ... verify-full, or `gss` for GSSAPI
    /// encryption) or MySQL's ssl-mode (disabled ... verify_identity).
    std::string mode;
    std::string protocol; ///< e.g. TLSv1.3; empty when not encrypted
    std::string cipher;   ///< e.g. TLS_AES_256_GCM_SHA384; empty when not encrypted

    /// One phrase for messages: "TLSv1.3, certificate and host name verified (verify-full)",
    /// "not encrypted (disable)".
    std::string describe() const;
};

} // namespace driftless::core
