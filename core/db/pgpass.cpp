#include "core/db/pgpass.h"

#include <libpq-fe.h>

#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

namespace driftless::core {

namespace {

/// Not a gssencmode libpq knows: connectOptions2() refuses it after the options are resolved and
/// before any host is looked up, which leaves a connection object holding every resolved option.
constexpr const char *kResolveOnly = "driftless-resolve-only";

/// The fields of one line, unescaped; fewer than five when the line is not a pgpass entry.
std::vector<std::string> pgpassFields(const std::string &line)
{
    std::vector<std::string> out(1);
    for (size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (ch == '\\' && i + 1 < line.size()) {
            out.back() += line[++i];
        } else if (ch == ':' && out.size() < 5) {
            out.emplace_back();
        } else {
            out.back() += ch;
        }
    }
    return out;
}

std::string firstOfList(const std::string &s)
{
    const auto comma = s.find(',');
    return comma == std::string::npos ? s : s.substr(0, comma);
}

} // namespace

std::map<std::string, std::string> resolvePgOptions(const std::string &dsn)
{
    const char *keys[] = {"dbname", "gssencmode", nullptr};
    const char *vals[] = {dsn.c_str(), kResolveOnly, nullptr};
    std::unique_ptr<PGconn, decltype(&PQfinish)> probe(PQconnectStartParams(keys, vals, 1), &PQfinish);
    if (!probe)
        return {};
    const bool resolved =
        PQstatus(probe.get()) == CONNECTION_BAD && std::strstr(PQerrorMessage(probe.get()), kResolveOnly) != nullptr;
    std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> opts(resolved ? PQconninfo(probe.get()) : nullptr,
                                                                      &PQconninfoFree);
    std::map<std::string, std::string> out;
    for (auto *o = opts.get(); o && o->keyword; ++o)
        if (o->val)
            out[o->keyword] = o->val;
    return out;
}

std::optional<std::string> pgpassPasswordFor(const std::string &dsn)
{
    const auto opts = resolvePgOptions(dsn);
    if (opts.empty())
        return std::nullopt;
    auto get = [&](const char *k) {
        auto it = opts.find(k);
        return it == opts.end() ? std::string() : it->second;
    };
    std::string file = get("passfile");
    if (file.empty()) {
        const char *home = std::getenv("HOME");
        if (!home || !*home)
            return std::nullopt;
        file = std::string(home) + "/.pgpass";
    }
    struct stat st {};
    // libpq ignores a file others may read (and says so on stderr); so does Driftless.
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
        return std::nullopt;

    std::string host = firstOfList(get("host"));
    if (host.empty() || host.front() == '/' || host.front() == '@')
        host = "localhost";
    std::string port = firstOfList(get("port"));
    if (port.empty())
        port = "5432";
    const std::string user = get("user");
    std::string db = get("dbname");
    if (db.empty())
        db = user;

    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.empty() || line.front() == '#')
            continue;
        const auto f = pgpassFields(line);
        if (f.size() < 5)
            continue;
        auto match = [](const std::string &field, const std::string &value) { return field == "*" || field == value; };
        if (match(f[0], host) && match(f[1], port) && match(f[2], db) && match(f[3], user))
            return f[4];
    }
    return std::nullopt;
}

} // namespace driftless::core
