#include "core/model/dsn.h"
#include "core/base/asciitext.h"

#include "core/base/copytext.h"
#include "core/model/error.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace driftless::core {

namespace {

std::string percentDecode(std::string_view s, const std::string &what)
{
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%') {
            int hi = i + 1 < s.size() ? copytext::hexValue(s[i + 1]) : -1;
            int lo = i + 2 < s.size() ? copytext::hexValue(s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                throw ConfigError("the MySQL DSN's " + what + " has a '%' that is not followed by two hex digits");
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

const char *kDsnExample = "mysql://user@host:3306/database";

} // namespace

MysqlDsn MysqlDsn::parse(const std::string &dsn)
{
    const std::string scheme = "mysql://";
    std::string_view s = dsn;
    if (s.substr(0, scheme.size()) != scheme && s.substr(0, 10) != "mariadb://")
        throw ConfigError("a MySQL endpoint's dsn must be a mysql:// URI, e.g. " + std::string(kDsnExample));
    s.remove_prefix(s.substr(0, scheme.size()) == scheme ? scheme.size() : 10);
    MysqlDsn d;
    std::string_view query;
    if (auto q = s.find('?'); q != std::string_view::npos) {
        query = s.substr(q + 1);
        s = s.substr(0, q);
    }
    std::string_view path;
    if (auto slash = s.find('/'); slash != std::string_view::npos) {
        path = s.substr(slash + 1);
        s = s.substr(0, slash);
    }
    if (auto at = s.rfind('@'); at != std::string_view::npos) {
        std::string_view userinfo = s.substr(0, at);
        s = s.substr(at + 1);
        if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
            d.password = percentDecode(userinfo.substr(colon + 1), "password");
            userinfo = userinfo.substr(0, colon);
        }
        d.user = percentDecode(userinfo, "user");
    }
    if (!s.empty()) {
        std::string_view host = s;
        if (host.front() == '[') {
            auto close = host.find(']');
            if (close == std::string_view::npos)
                throw ConfigError("the MySQL DSN's host '" + std::string(s) + "' has '[' without ']'");
            d.host = std::string(host.substr(1, close - 1));
            host = host.substr(close + 1);
            if (!host.empty() && host.front() != ':')
                throw ConfigError("the MySQL DSN's host '" + std::string(s) + "' is not host:port");
            if (!host.empty()) {
                host.remove_prefix(1);
                int port = 0;
                auto [p, ec] = std::from_chars(host.data(), host.data() + host.size(), port);
                if (ec != std::errc() || p != host.data() + host.size() || port < 1 || port > 65535)
                    throw ConfigError("the MySQL DSN's port '" + std::string(host) + "' is not a port (1-65535)");
                d.port = port;
            }
        } else {
            auto colon = host.rfind(':');
            d.host = percentDecode(host.substr(0, colon), "host");
            if (colon != std::string_view::npos) {
                std::string_view ps = host.substr(colon + 1);
                int port = 0;
                auto [p, ec] = std::from_chars(ps.data(), ps.data() + ps.size(), port);
                if (ec != std::errc() || p != ps.data() + ps.size() || port < 1 || port > 65535)
                    throw ConfigError("the MySQL DSN's port '" + std::string(ps) + "' is not a port (1-65535)");
                d.port = port;
            }
        }
    }
    d.database = percentDecode(path, "database");
    if (d.database.find('/') != std::string::npos)
        throw ConfigError("the MySQL DSN's database '" + d.database + "' contains '/'; write " + kDsnExample);
    while (!query.empty()) {
        auto amp = query.find('&');
        std::string_view kv = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (kv.empty())
            continue;
        auto eq = kv.find('=');
        std::string key = asciiLower(std::string(kv.substr(0, eq)));
        std::replace(key.begin(), key.end(), '_', '-');
        std::string value = eq == std::string_view::npos ? std::string() : percentDecode(kv.substr(eq + 1), key);
        if (key == "ssl-mode" || key == "sslmode") {
            std::string v = asciiLower(value);
            std::replace(v.begin(), v.end(), '-', '_');
            static const char *modes[] = {"disabled", "preferred", "required", "verify_ca", "verify_identity"};
            if (std::find(std::begin(modes), std::end(modes), v) == std::end(modes))
                throw ConfigError("the MySQL DSN's ssl-mode '" + value +
                                  "' is not one of disabled, preferred, required, verify_ca, verify_identity");
            d.sslMode = v;
        } else if (key == "ssl-ca") {
            d.sslCa = value;
        } else if (key == "ssl-cert") {
            d.sslCert = value;
        } else if (key == "ssl-key") {
            d.sslKey = value;
        } else if (key == "socket") {
            d.socket = value;
        } else if (key == "connect-timeout") {
            int t = 0;
            auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), t);
            if (ec != std::errc() || p != value.data() + value.size() || t < 1)
                throw ConfigError("the MySQL DSN's connect-timeout '" + value + "' is not a number of seconds");
            d.connectTimeout = t;
        } else {
            throw ConfigError("the MySQL DSN has an unknown option '" + key +
                              "' (known: ssl-mode, ssl-ca, ssl-cert, ssl-key, socket, connect-timeout)");
        }
    }
    if (d.host.empty())
        d.host = "127.0.0.1";
    if (d.sslMode.empty())
        d.sslMode = d.isLoopback() ? "preferred" : "verify_identity";
    return d;
}

bool MysqlDsn::isLoopback() const
{
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0 || !socket.empty();
}

std::string MysqlDsn::display() const
{
    std::string s = (user.empty() ? std::string() : user + "@") + host + ":" + std::to_string(port);
    if (!database.empty())
        s += "/" + database;
    return s;
}

std::vector<std::pair<std::string, std::string>> parsePgDsn(const std::string &dsn)
{
    char *err = nullptr;
    PQconninfoOption *opts = PQconninfoParse(dsn.c_str(), &err);
    if (!opts) {
        std::string msg = err ? err : "out of memory";
        while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
            msg.pop_back();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        if (err)
            PQfreemem(err);
        throw ConfigError("not a libpq connection string: " + msg);
    }
    std::vector<std::pair<std::string, std::string>> out;
    for (auto *o = opts; o->keyword; ++o)
        if (o->val && *o->val)
            out.emplace_back(o->keyword, o->val);
    PQconninfoFree(opts);
    return out;
}

std::string pgConninfoValue(const std::string &v)
{
    std::string out = "'";
    for (char c : v) {
        if (c == '\'' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "'";
}

} // namespace driftless::core
