#pragma once

#include "core/model/dsn.h"

#include <optional>
#include <string>

namespace driftless::core {

/// A MySQL/MariaDB connection failure caused by TLS, restated with what to do; nullopt for other
/// failures. MariaDB Connector/C (under Connector/C++ and the binlog connection alike) reports
/// every TLS failure as error 2026 and tells the cases apart only by its text: OpenSSL's reason
/// when the certificate chain does not verify ("self-signed certificate in certificate chain",
/// "unable to get local issuer certificate", "certificate has expired"), "Validation of SSL
/// server certificate failed" when the chain verifies but the certificate does not name the host
/// (libmysqlclient: "SSL certificate validation failure"), the system's error for a CA file it
/// cannot read, and "SSL is required" for a server without TLS. Told apart here: a certificate
/// whose CA the ssl-ca file does not hold (or no ssl-ca at all), a certificate for another host
/// name, an expired certificate, an unreadable CA file, and a server without TLS.
struct MysqlTlsFailure {
    std::string message;
    std::string hint;
};
std::optional<MysqlTlsFailure> explainMysqlTlsFailure(const std::string &clientMessage, const MysqlDsn &dsn);

} // namespace driftless::core
