#include "core/db/mysqltls.h"

#include <initializer_list>

namespace driftless::core {

namespace {

bool containsAny(const std::string &text, std::initializer_list<const char *> needles)
{
    for (const char *n : needles)
        if (text.find(n) != std::string::npos)
            return true;
    return false;
}

} // namespace

std::optional<MysqlTlsFailure> explainMysqlTlsFailure(const std::string &msg, const MysqlDsn &d)
{
    const std::string where = d.host + ":" + std::to_string(d.port);
    const std::string noVerify = "; ssl-mode=required in the dsn would encrypt without checking who answers, which "
                                 "is not recommended off this machine";
    // The chain verified, the name did not: Connector/C checks the host only after OpenSSL
    // accepted the chain, so this text never hides an unknown CA.
    if (containsAny(msg, {"Validation of SSL server certificate failed", "SSL certificate validation failure"})) {
        return MysqlTlsFailure{"the server's TLS certificate is signed by a trusted CA but does not name \"" + d.host +
                                   "\", the host the dsn connects by (" + msg + ")",
                               "connect by a name the certificate holds (openssl s_client -starttls mysql -connect " +
                                   where + " | openssl x509 -noout -ext subjectAltName lists them), or add \"" +
                                   d.host + "\" to the certificate's subjectAltName"};
    }
    if (containsAny(msg, {"certificate has expired", "certificate is not yet valid"})) {
        return MysqlTlsFailure{"the server's TLS certificate is outside its validity period (" + msg + ")",
                               "renew the server's certificate (ssl_cert in the server's configuration), or check "
                               "this machine's clock"};
    }
    if (containsAny(msg, {"self-signed certificate", "self signed certificate", "unable to get local issuer",
                          "unable to get issuer certificate", "unable to verify the first certificate",
                          "certificate verify failed", "certificate signature failure"})) {
        if (d.sslCa.empty())
            return MysqlTlsFailure{"no CA certificate to verify the server's TLS certificate with: the dsn gives no "
                                   "ssl-ca, and ssl-mode=" +
                                       d.sslMode + " verifies the certificate (" + msg + ")",
                                   "give the CA certificate (PEM) that signed the server's certificate with "
                                   "ssl-ca=FILE in the dsn (the endpoint dialog's CA file)" +
                                       noVerify};
        return MysqlTlsFailure{"the server's TLS certificate is not signed by a CA this machine trusts: " + d.sslCa +
                                   " (ssl-ca) does not hold its CA (" + msg + ")",
                               "set ssl-ca=FILE in the dsn to the CA certificate (PEM) that signed the server's "
                               "certificate (the endpoint dialog's CA file)" +
                                   noVerify};
    }
    if (containsAny(msg, {"SSL is required", "does not support SSL", "doesn't support SSL", "not support TLS"})) {
        return MysqlTlsFailure{"the server does not offer TLS, and ssl-mode=" + d.sslMode + " requires it (" + msg +
                                   ")",
                               "turn TLS on at the server (ssl_cert and ssl_key in its configuration), or, on a "
                               "network you trust, choose ssl-mode=disabled in the dsn"};
    }
    if (!d.sslCa.empty() && containsAny(msg, {"No such file or directory", "Permission denied"})) {
        return MysqlTlsFailure{"a TLS file the dsn names cannot be read (ssl-ca " + d.sslCa + "): " + msg,
                               "check the path in ssl-ca (and ssl-cert, ssl-key), and that the user Driftless runs "
                               "as may read it"};
    }
    return std::nullopt;
}

} // namespace driftless::core
