#include "core/model/tlsstate.h"

namespace driftless::core {

std::string TlsState::describe() const
{
    const std::string how = mode.empty() ? std::string() : " (" + (mode == "gss" ? std::string("GSSAPI") : mode) + ")";
    if (!encrypted)
        return "not encrypted" + how;
    std::string s = protocol.empty() ? std::string("encrypted") : protocol;
    if (hostVerified)
        s += ", certificate and host name verified";
    else if (verified)
        s += ", certificate verified (not its host name)";
    else
        s += ", certificate not verified";
    return s + how;
}

} // namespace driftless::core
