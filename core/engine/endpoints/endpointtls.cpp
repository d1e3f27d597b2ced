#include "core/engine/endpoints/endpointtls.h"

#include "core/base/clock.h"
#include "core/base/isotime.h"
#include "core/base/log.h"
#include "core/db/mysqlconnection.h"
#include "core/db/pgconnection.h"
#include "core/db/pgtls.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/model/dsn.h"
#include "core/model/error.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <map>
#include <mutex>

namespace driftless::core {

using json = nlohmann::json;

namespace {

struct LedgerEntry {
    std::string dsn;     ///< the endpoint's DSN then: a changed DSN is another connection
    EndpointTls tls;     ///< what the newest connection had
    bool warned = false; ///< its warning was logged
};
std::mutex g_mutex;
std::map<std::string, LedgerEntry> g_ledger; ///< by endpoint name

bool isWordChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

/// Replaces the value of key=value `key` in a libpq key=value string (spaces around '=' and a
/// quoted value allowed); false when the key is not there.
bool replaceConninfoValue(std::string &dsn, const std::string &key, const std::string &value)
{
    for (size_t at = dsn.find(key); at != std::string::npos; at = dsn.find(key, at + 1)) {
        if (at > 0 && isWordChar(dsn[at - 1]))
            continue;
        size_t i = at + key.size();
        while (i < dsn.size() && dsn[i] == ' ')
            ++i;
        if (i >= dsn.size() || dsn[i] != '=')
            continue;
        ++i;
        while (i < dsn.size() && dsn[i] == ' ')
            ++i;
        size_t end = i;
        if (end < dsn.size() && dsn[end] == '\'') {
            ++end;
            while (end < dsn.size() && dsn[end] != '\'')
                end += dsn[end] == '\\' ? 2 : 1;
            end = std::min(end + 1, dsn.size());
        } else {
            while (end < dsn.size() && dsn[end] != ' ')
                ++end;
        }
        dsn.replace(i, end - i, value);
        return true;
    }
    return false;
}

/// Replaces the value of one of `keys` in a URI's query string; false when none is there.
bool replaceQueryValue(std::string &uri, std::initializer_list<const char *> keys, const std::string &value)
{
    const auto q = uri.find('?');
    if (q == std::string::npos)
        return false;
    size_t start = q + 1;
    while (start <= uri.size()) {
        size_t amp = uri.find('&', start);
        if (amp == std::string::npos)
            amp = uri.size();
        const auto eq = uri.find('=', start);
        if (eq != std::string::npos && eq < amp) {
            const std::string key = uri.substr(start, eq - start);
            for (const char *k : keys)
                if (key == k) {
                    uri.replace(eq + 1, amp - eq - 1, value);
                    return true;
                }
        }
        start = amp + 1;
    }
    return false;
}

std::string withQuery(const std::string &uri, const std::string &kv)
{
    return uri + (uri.find('?') == std::string::npos ? "?" : "&") + kv;
}

bool isPgUri(const std::string &dsn)
{
    return dsn.starts_with("postgresql://") || dsn.starts_with("postgres://");
}

bool hasPgKey(const std::string &dsn, const char *key)
{
    try {
        for (const auto &[k, v] : parsePgDsn(dsn))
            if (k == key)
                return true;
    } catch (const ConfigError &) {
    }
    return false;
}

std::string chosenWords(const Endpoint &e, const EndpointTls &t)
{
    if (e.kind == EndpointKind::Mysql)
        return t.chosenBy == "dsn" ? "chosen by the dsn" : "Driftless's default";
    PgTlsChoice c;
    c.chosenBy = t.chosenBy;
    c.service = t.service;
    c.loopback = t.loopback;
    return "chosen by " + c.chosenWhere();
}

} // namespace

EndpointTls endpointTlsOf(const PgConnection &conn)
{
    const auto &choice = conn.tlsChoice();
    return {conn.tls(), choice.loopback, choice.chosenBy, choice.service, wallClockMs()};
}

EndpointTls endpointTlsOf(const MysqlConnection &conn)
{
    const auto &dsn = conn.dsn();
    const bool loopback = dsn.isLoopback();
    // Off this machine, anything but the default (verify_identity) was written into the DSN.
    const bool byDefault = dsn.sslMode == (loopback ? "preferred" : "verify_identity");
    return {conn.tls(), loopback, byDefault ? "default" : "dsn", {}, wallClockMs()};
}

std::string dsnWithVerifiedTls(const Endpoint &e)
{
    std::string dsn = e.dsn;
    if (e.kind == EndpointKind::Mysql) {
        if (!replaceQueryValue(dsn, {"ssl-mode", "ssl_mode", "sslmode"}, "verify_identity"))
            dsn = withQuery(dsn, "ssl-mode=verify_identity");
        return dsn;
    }
    if (isPgUri(dsn)) {
        if (!replaceQueryValue(dsn, {"sslmode"}, "verify-full"))
            dsn = withQuery(dsn, "sslmode=verify-full");
    } else if (!replaceConninfoValue(dsn, "sslmode", "verify-full")) {
        dsn += (dsn.empty() || dsn.back() == ' ' ? "" : " ") + std::string("sslmode=verify-full");
    }
    return dsn;
}

std::optional<TlsWarning> tlsWarning(const Endpoint &e, const EndpointTls &t)
{
    if (t.loopback || t.tls.hostVerified || e.kind == EndpointKind::Sqlite)
        return std::nullopt;
    const std::string mode = t.tls.mode + ", " + chosenWords(e, t);
    const std::string who = e.name.empty() ? "this endpoint" : "endpoint " + e.name;
    const std::string change = "change " + (e.name.empty() ? "the dsn" : "endpoint " + e.name + "'s dsn") + " to: ";
    TlsWarning w;
    if (!t.tls.encrypted)
        w.message = "connections to " + who + " are not encrypted (" + mode +
                    "): the password and every row cross the network in clear";
    else if (!t.tls.verified)
        w.message = "connections to " + who + " are encrypted, but the server's certificate is not verified (" + mode +
                    "): whoever answers at that address gets the session and its password";
    else
        w.message = "connections to " + who +
                    " check the server's certificate against the CA but not its host "
                    "name (" +
                    mode + "): any server with a certificate from that CA is accepted";
    const std::string dsn = dsnWithVerifiedTls(e);
    std::string ca;
    if (e.kind == EndpointKind::Mysql) {
        const auto parsed = MysqlDsn::parse(e.dsn);
        if (parsed.sslCa.empty())
            ca = " (and add &ssl-ca=FILE, the CA certificate that signed the server's)";
        w.fix = change + dsn + ca;
        return w;
    }
    if (!hasPgKey(e.dsn, "sslrootcert"))
        ca = " (with sslrootcert=FILE, the CA certificate that signed the server's, unless ~/.postgresql/root.crt "
             "holds it)";
    if (t.chosenBy == "PGSSLMODE" || t.chosenBy == "PGREQUIRESSL")
        w.fix = "unset " + t.chosenBy + " where Driftless runs, or " + change + dsn + ca;
    else if (t.chosenBy == "service")
        w.fix = "set sslmode=verify-full in service '" + t.service + "' of the service file, or " + change + dsn + ca;
    else
        w.fix = change + dsn + ca;
    return w;
}

void recordEndpointTls(const Endpoint &e, const EndpointTls &t, bool warn)
{
    const auto warning = tlsWarning(e, t);
    {
        std::lock_guard lock(g_mutex);
        auto it = g_ledger.find(e.name);
        const bool changed =
            it == g_ledger.end() || it->second.dsn != e.dsn || it->second.tls.tls.encrypted != t.tls.encrypted ||
            it->second.tls.tls.verified != t.tls.verified || it->second.tls.tls.hostVerified != t.tls.hostVerified ||
            it->second.tls.tls.mode != t.tls.mode;
        const bool warned = !changed && it->second.warned;
        g_ledger[e.name] = {e.dsn, t, warned || (warn && warning)};
        if (warned || !warn || !warning)
            return;
    }
    log(LogLevel::Warn, warning->message + "; to fix: " + warning->fix);
}

std::optional<EndpointTls> observedEndpointTls(const Endpoint &e)
{
    std::lock_guard lock(g_mutex);
    auto it = g_ledger.find(e.name);
    if (it == g_ledger.end() || it->second.dsn != e.dsn)
        return std::nullopt;
    return it->second.tls;
}

json tlsJsonValue(const TlsState &t)
{
    return {{"encrypted", t.encrypted}, {"verified", t.verified}, {"host_verified", t.hostVerified},
            {"mode", t.mode},           {"protocol", t.protocol}, {"cipher", t.cipher}};
}

TlsState tlsFromJson(const json &j)
{
    TlsState t;
    if (!j.is_object())
        return t;
    auto flag = [&](const char *k) { return j.contains(k) && j[k].is_boolean() && j[k].get<bool>(); };
    auto text = [&](const char *k) {
        return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
    };
    t.encrypted = flag("encrypted");
    t.verified = flag("verified");
    t.hostVerified = flag("host_verified");
    t.mode = text("mode");
    t.protocol = text("protocol");
    t.cipher = text("cipher");
    return t;
}

std::vector<EndpointTlsStatus> endpointsTlsStatus(const Workspace &ws)
{
    std::vector<EndpointTlsStatus> out;
    for (const auto &[name, e] : ws.endpoints) {
        if (e.kind == EndpointKind::Sqlite)
            continue;
        EndpointTlsStatus s;
        s.name = name;
        s.kind = e.kind;
        s.tls = observedEndpointTls(e);
        if (s.tls)
            s.loopback = s.tls->loopback;
        else if (e.kind == EndpointKind::Postgres)
            s.loopback = resolvePgTls(e.dsn).loopback;
        else
            try {
                s.loopback = MysqlDsn::parse(e.dsn).isLoopback();
            } catch (const Error &) {
            }
        if (e.ssh) {
            // Through a tunnel the last hop is a Unix socket, but the server is not on this
            // machine; the tunnel, not TLS, protects the way there.
            s.loopback = false;
            s.tunnelNote = "ssh tunnel via " + e.ssh->display() + "; not TLS to the server";
        } else if (s.tls) {
            s.warning = tlsWarning(e, *s.tls);
        }
        s.tunnel = tunnelJsonValue(e);
        out.push_back(std::move(s));
    }
    return out;
}

json endpointsTlsJsonValue(const Workspace &ws)
{
    return endpointsTlsJsonValue(endpointsTlsStatus(ws));
}

json endpointsTlsJsonValue(const std::vector<EndpointTlsStatus> &endpoints)
{
    json out = json::array();
    for (const auto &s : endpoints) {
        json tls = nullptr;
        json warning = nullptr;
        if (s.tls) {
            tls = tlsJsonValue(s.tls->tls);
            tls["chosen_by"] = s.tls->chosenBy;
            tls["checked_at"] = formatIso8601(s.tls->atMs);
            if (!s.tunnelNote.empty())
                tls["note"] = s.tunnelNote;
        }
        if (s.warning)
            warning = {{"message", s.warning->message}, {"fix", s.warning->fix}};
        out.push_back({{"name", s.name},
                       {"kind", std::string(toString(s.kind))},
                       {"loopback", s.loopback},
                       {"tls", tls},
                       {"tls_warning", warning},
                       {"tunnel", s.tunnel}});
    }
    return out;
}

std::vector<EndpointTlsStatus> endpointsTlsFromJson(const json &j)
{
    std::vector<EndpointTlsStatus> out;
    if (!j.is_array())
        return out;
    for (const auto &e : j) {
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
            continue;
        EndpointTlsStatus s;
        s.name = e["name"].get<std::string>();
        const std::string kind = e.value("kind", std::string());
        if (kind == toString(EndpointKind::Mysql))
            s.kind = EndpointKind::Mysql;
        else if (kind != toString(EndpointKind::Postgres))
            continue;
        s.loopback = e.value("loopback", false);
        if (e.contains("tls") && e["tls"].is_object()) {
            const auto &t = e["tls"];
            EndpointTls tls;
            tls.tls = tlsFromJson(t);
            tls.loopback = s.loopback;
            tls.chosenBy = t.value("chosen_by", std::string());
            tls.atMs = parseIso8601(t.value("checked_at", std::string())).value_or(0);
            s.tls = tls;
        }
        if (e.contains("tls") && e["tls"].is_object())
            s.tunnelNote = e["tls"].value("note", std::string());
        if (e.contains("tunnel"))
            s.tunnel = e["tunnel"];
        if (e.contains("tls_warning") && e["tls_warning"].is_object())
            s.warning = TlsWarning{e["tls_warning"].value("message", std::string()),
                                   e["tls_warning"].value("fix", std::string())};
        out.push_back(std::move(s));
    }
    return out;
}

} // namespace driftless::core
