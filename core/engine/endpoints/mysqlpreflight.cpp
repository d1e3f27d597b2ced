#include "core/engine/endpoints/mysqlpreflight.h"

#include "core/db/mysqlconnection.h"
#include "core/engine/endpoints/endpointtls.h"
#include "core/model/error.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace driftless::core {

namespace {

std::string upper(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}

/// A DSN with the password put in for one connection (percent-encoded), never stored.
std::string mysqlWithPassword(const std::string &dsn, const std::string &password)
{
    const std::string scheme = "mysql://";
    auto at = dsn.find('@');
    if (dsn.rfind(scheme, 0) != 0 || at == std::string::npos)
        return dsn;
    std::string enc;
    for (unsigned char c : password) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            enc += static_cast<char>(c);
        } else {
            static const char *hex = "0123456789ABCDEF";
            enc += '%';
            enc += hex[c >> 4];
            enc += hex[c & 15];
        }
    }
    std::string userinfo = dsn.substr(scheme.size(), at - scheme.size());
    userinfo = userinfo.substr(0, userinfo.find(':'));
    return scheme + userinfo + ":" + enc + dsn.substr(at);
}

} // namespace

std::vector<BinlogProblem> binlogProblems(MysqlConnection &conn, std::string *retention)
{
    std::map<std::string, std::string> v;
    auto rows = conn.query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_bin', 'binlog_format', "
                           "'binlog_row_image', 'binlog_row_metadata', 'server_id', 'expire_logs_days', "
                           "'binlog_expire_logs_seconds')");
    for (const auto &r : rows.rows)
        v[r[0].value_or("")] = r[1].value_or("");
    const bool maria = conn.isMariaDb();
    std::vector<BinlogProblem> out;
    auto need = [&](const std::string &name, const std::string &want, const std::string &fix) {
        const std::string found = v.count(name) ? v[name] : std::string("(not supported by this server)");
        if (upper(found) != want)
            out.push_back({name, found, fix});
    };
    need("log_bin", "ON",
         maria ? "start mariadbd with log_bin (e.g. log_bin = mariadb-bin in [mariadb]), then restart"
               : "start mysqld with log_bin (on by default in MySQL 8; check skip-log-bin), then restart");
    need("binlog_format", "ROW", "SET GLOBAL binlog_format = 'ROW'; and binlog_format = ROW in the server's config");
    need("binlog_row_image", "FULL", "SET GLOBAL binlog_row_image = 'FULL'; and in the server's config");
    need("binlog_row_metadata", "FULL",
         std::string("SET GLOBAL binlog_row_metadata = 'FULL'; and in the server's config") +
             (maria ? " (MariaDB's default is NO_LOG; FULL carries column names, signedness and ENUM/SET labels)"
                    : " (MySQL's default is MINIMAL)"));
    if (v["server_id"] == "0")
        out.push_back({"server_id", "0", "set server_id to a non-zero value unique among your servers"});
    // Retention: a reader that is away longer than this finds its position purged.
    double seconds = 0;
    if (v.count("binlog_expire_logs_seconds") && std::atof(v["binlog_expire_logs_seconds"].c_str()) > 0)
        seconds = std::atof(v["binlog_expire_logs_seconds"].c_str());
    else if (v.count("expire_logs_days"))
        seconds = std::atof(v["expire_logs_days"].c_str()) * 86400;
    const std::string words = seconds <= 0 ? "forever (binlogs are never purged automatically)"
                                           : std::to_string(static_cast<long long>(seconds / 3600)) + " hours";
    if (retention)
        *retention = words;
    if (seconds > 0 && seconds < 3 * 86400)
        out.push_back({maria ? "expire_logs_days" : "binlog_expire_logs_seconds", words,
                       "keep binlogs at least 3 days (a reader stopped over a weekend must find its position): " +
                           std::string(maria ? "SET GLOBAL binlog_expire_logs_seconds = 604800;"
                                             : "SET PERSIST binlog_expire_logs_seconds = 604800;")});
    return out;
}

std::vector<std::string> MysqlProbe::advice() const
{
    std::vector<std::string> out;
    if (!connected)
        return out;
    if (!tlsWarning.empty())
        out.push_back(tlsWarning + "; " + tlsFix);
    for (const auto &b : binlog)
        out.push_back(b.setting + " is " + b.found + ": change data capture needs it changed: " + b.fix +
                      " (full refresh and cursor sync work as it is)");
    if (!canReplicate) {
        out.push_back("user " + user + " may not read the binlog: change data capture needs GRANT REPLICATION SLAVE" +
                      std::string(mariadb ? ", BINLOG MONITOR" : ", REPLICATION CLIENT") + " ON *.* TO " + grantee());
    }
    return out;
}

std::string MysqlProbe::grantee() const
{
    const auto at = user.rfind('@');
    return at == std::string::npos ? mysqlLiteral(user)
                                   : mysqlLiteral(user.substr(0, at)) + "@" + mysqlLiteral(user.substr(at + 1));
}

MysqlProbe probeMysql(const std::string &dsn, const std::optional<std::string> &password)
{
    MysqlProbe p;
    try {
        MysqlConnection conn(password ? mysqlWithPassword(dsn, *password) : dsn);
        p.connected = true;
        p.server = conn.dsn().display();
        const auto tls = endpointTlsOf(conn);
        p.tls = tls.tls;
        p.loopback = tls.loopback;
        p.tlsChosenBy = tls.chosenBy;
        Endpoint e;
        e.kind = EndpointKind::Mysql;
        e.dsn = dsn;
        if (auto w = tlsWarning(e, tls)) {
            p.tlsWarning = w->message;
            p.tlsFix = w->fix;
        }
        p.version = conn.serverVersion();
        p.mariadb = conn.isMariaDb();
        p.user = conn.scalar("SELECT CURRENT_USER()").value_or("");
        p.serverId = conn.scalar("SELECT @@server_id").value_or("");
        p.binlog = binlogProblems(conn, &p.retention);
        auto grants = conn.query("SHOW GRANTS");
        for (const auto &g : grants.rows) {
            const std::string line = upper(g[0].value_or(""));
            if (line.find(" ON *.* ") == std::string::npos)
                continue;
            const bool all = line.find("ALL PRIVILEGES") != std::string::npos;
            p.canReplicate = p.canReplicate || all || line.find("REPLICATION SLAVE") != std::string::npos ||
                             line.find("REPLICATION REPLICA") != std::string::npos;
            p.canReadPosition = p.canReadPosition || all || line.find("BINLOG MONITOR") != std::string::npos ||
                                line.find("REPLICATION CLIENT") != std::string::npos ||
                                line.find("SUPER") != std::string::npos;
        }
        if (!conn.dsn().database.empty())
            p.tables = std::atoi(conn.scalar("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? "
                                             "AND TABLE_TYPE = 'BASE TABLE'",
                                             {conn.dsn().database})
                                     .value_or("0")
                                     .c_str());
    } catch (const Error &e) {
        p.error = e.what();
        p.code = e.code();
        p.hint = e.hint();
        p.transient = e.isTransient();
    }
    return p;
}

} // namespace driftless::core
