#include "core/db/pgtls.h"

#include "core/db/pgpass.h"

#include "core/model/dsn.h"
#include "core/model/error.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace driftless::core {

namespace {

std::vector<std::string> splitList(const std::string &s)
{
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        const auto comma = s.find(',', start);
        out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos)
            return out;
        start = comma + 1;
    }
}

std::string option(PQconninfoOption *opts, const char *keyword)
{
    for (auto *o = opts; o && o->keyword; ++o)
        if (std::strcmp(o->keyword, keyword) == 0)
            return o->val ? o->val : "";
    return {};
}

bool mentions(const std::string &h, const char *n)
{
    return h.find(n) != std::string::npos;
}

/// The text between `after` and the next double quote, or empty.
std::string quotedAfter(const std::string &s, const char *after)
{
    const auto at = s.find(after);
    if (at == std::string::npos)
        return {};
    const auto start = at + std::strlen(after);
    const auto end = s.find('"', start);
    return end == std::string::npos ? std::string() : s.substr(start, end - start);
}

} // namespace

bool isLoopbackHost(std::string_view host)
{
    if (host.empty())
        return false;
    if (host.front() == '/' || host.front() == '@')
        return true;
    std::string h(host);
    std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (h == "localhost")
        return true;
    in_addr v4{};
    if (inet_pton(AF_INET, h.c_str(), &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6{};
    if (inet_pton(AF_INET6, h.c_str(), &v6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&v6);
    return false;
}

std::string PgTlsChoice::chosenWhere() const
{
    if (chosenBy == "dsn")
        return "the dsn";
    if (chosenBy == "PGSSLMODE" || chosenBy == "PGREQUIRESSL")
        return chosenBy + " in the environment";
    if (chosenBy == "service")
        return "service '" + service + "' of the service file";
    return loopback ? "libpq's default on this machine" : "Driftless's default off this machine";
}

PgTlsChoice resolvePgTls(const std::string &dsn)
{
    PgTlsChoice c;
    bool dsnChose = false;
    try {
        for (const auto &[k, v] : parsePgDsn(dsn)) {
            dsnChose = dsnChose || k == "sslmode" || (k == "requiressl" && std::atoi(v.c_str()) != 0);
            if (k == "host")
                c.host = v;
            else if (k == "hostaddr")
                c.hostaddr = v;
            else if (k == "service")
                c.service = v; // libpq keeps no copy that PQconninfo() could show
        }
    } catch (const ConfigError &) {
        return c; // the connection says what is wrong with it
    }
    const auto opts = resolvePgOptions(dsn);
    if (!opts.empty()) {
        auto get = [&](const char *k) {
            auto it = opts.find(k);
            return it == opts.end() ? std::string() : it->second;
        };
        c.host = get("host");
        c.hostaddr = get("hostaddr");
        c.mode = get("sslmode");
        c.sslrootcert = get("sslrootcert");
    }
    if (c.service.empty())
        if (const char *s = std::getenv("PGSERVICE"))
            c.service = s;

    const auto hosts = splitList(c.host);
    const auto addrs = splitList(c.hostaddr);
    c.loopback = true;
    for (size_t i = 0; i < std::max(hosts.size(), addrs.size()); ++i) {
        const std::string h = i < hosts.size() ? hosts[i] : std::string();
        const std::string a = i < addrs.size() ? addrs[i] : std::string();
        const std::string &name = !h.empty() ? h : a;
        if (!name.empty() && !isLoopbackHost(name))
            c.loopback = false; // an empty entry is libpq's default Unix socket
    }
    if (c.mode.empty())
        return c;

    const char *envMode = std::getenv("PGSSLMODE");
    const char *envRequire = std::getenv("PGREQUIRESSL");
    if (dsnChose)
        c.chosenBy = "dsn";
    else if (envMode && *envMode && c.mode == envMode)
        c.chosenBy = "PGSSLMODE";
    else if (envRequire && std::atoi(envRequire) != 0 && c.mode == "require")
        c.chosenBy = "PGREQUIRESSL";
    else if (c.mode != "prefer")
        c.chosenBy = "service";
    else
        c.chosenBy = "default";
    if (c.verifyByDefault())
        c.mode = "verify-full";
    return c;
}

TlsState pgTlsState(PGconn *conn)
{
    TlsState s;
    if (!conn)
        return s;
    if (PQgssEncInUse(conn)) {
        // GSSAPI encryption: Kerberos authenticated the server's principal.
        s.encrypted = s.verified = s.hostVerified = true;
        s.mode = "gss";
        return s;
    }
    std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> opts(PQconninfo(conn), &PQconninfoFree);
    s.mode = option(opts.get(), "sslmode");
    if (PQsslInUse(conn)) {
        s.encrypted = true;
        const char *protocol = PQsslAttribute(conn, "protocol");
        const char *cipher = PQsslAttribute(conn, "cipher");
        s.protocol = protocol ? protocol : "";
        s.cipher = cipher ? cipher : "";
        s.verified = s.mode == "verify-ca" || s.mode == "verify-full";
        s.hostVerified = s.mode == "verify-full";
    }
    return s;
}

std::optional<PgTlsFailure> explainPgTlsFailure(const std::string &msg, const PgTlsChoice &c)
{
    const std::string why = c.verifyByDefault() ? "; verify-full is Driftless's default for a host off this machine "
                                                  "when nothing chose an sslmode"
                                                : "";
    const std::string noVerify = "; sslmode=require in the dsn would encrypt without checking who answers, which is "
                                 "not recommended off this machine";
    if (mentions(msg, "does not match host name")) {
        const std::string certName = quotedAfter(msg, "server certificate for \"");
        const std::string asked = quotedAfter(msg, "host name \"");
        return PgTlsFailure{
            "the server's TLS certificate is for \"" + certName + "\"" +
                (mentions(msg, "other name") ? " (and other names)" : "") + ", not for \"" + asked +
                "\", the host name the dsn connects by (" + msg + ")",
            "connect by a name the certificate holds (host=" + certName +
                ", with hostaddr=IP when that name does not resolve here), or use sslmode=verify-ca to check only "
                "that a trusted CA signed it"};
    }
    if (mentions(msg, "root certificate file") || mentions(msg, "could not read root certificate")) {
        return PgTlsFailure{"no CA certificate to verify the server's TLS certificate with" + why + " (" + msg + ")",
                            "set sslrootcert=FILE in the dsn to the CA certificate (PEM) that signed the server's "
                            "certificate, or put it at ~/.postgresql/root.crt of the user Driftless runs as (where "
                            "libpq looks without sslrootcert; PGSSLROOTCERT overrides)" +
                                noVerify};
    }
    if (mentions(msg, "certificate verify failed")) {
        const std::string file =
            c.sslrootcert.empty() ? "~/.postgresql/root.crt (libpq's default CA file)" : c.sslrootcert;
        return PgTlsFailure{"the server's TLS certificate is not signed by a CA this machine trusts: " + file +
                                " does not hold its CA, or the certificate has expired (" + msg + ")",
                            "set sslrootcert=FILE in the dsn to the CA certificate (PEM) that signed the server's "
                            "certificate (without sslrootcert libpq reads ~/.postgresql/root.crt of the user "
                            "Driftless runs as; PGSSLROOTCERT overrides)" +
                                noVerify};
    }
    if (mentions(msg, "server does not support SSL")) {
        return PgTlsFailure{"the server does not offer TLS, and sslmode=" + c.mode + " requires it" + why + " (" + msg +
                                ")",
                            "turn TLS on at the server (ssl = on with ssl_cert_file and ssl_key_file in "
                            "postgresql.conf), or, on a network you trust, choose sslmode=disable in the dsn"};
    }
    return std::nullopt;
}

} // namespace driftless::core
