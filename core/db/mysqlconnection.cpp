#include "core/db/mysqlconnection.h"
#include "core/base/asciitext.h"

#include "core/base/passwordprovider.h"
#include "core/db/mysqltls.h"
#include "core/model/dsn.h"
#include "core/model/error.h"

#include <cppconn/connection.h>
#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_driver.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <mutex>

namespace driftless::core {

namespace {

/// The password lines of one my.cnf-style file, from the client groups, last one winning.
std::optional<std::string> passwordFromOptionFile(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        return std::nullopt;
    std::optional<std::string> password;
    bool inClient = false;
    std::string line;
    while (std::getline(in, line)) {
        auto trim = [](std::string s) {
            size_t a = s.find_first_not_of(" \t\r");
            size_t b = s.find_last_not_of(" \t\r");
            return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
        };
        line = trim(line);
        if (line.empty() || line[0] == '#' || line[0] == ';')
            continue;
        if (line.front() == '[') {
            std::string group = asciiLower(
                trim(line.substr(1, line.find(']') == std::string::npos ? std::string::npos : line.find(']') - 1)));
            inClient = group == "client" || group == "client-server" || group == "client-mariadb";
            continue;
        }
        if (!inClient)
            continue;
        size_t eq = line.find('=');
        if (asciiLower(trim(line.substr(0, eq))) != "password")
            continue;
        if (eq == std::string::npos) {
            password = std::string();
            continue;
        }
        std::string v = trim(line.substr(eq + 1));
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
            v = v.substr(1, v.size() - 2);
        password = v;
    }
    return password;
}

std::mutex &killMutex()
{
    static std::mutex m;
    return m;
}

} // namespace

std::optional<std::string> mysqlPasswordFor(const std::string &dsn, const MysqlDsn &parsed)
{
    if (parsed.password)
        return parsed.password;
    if (auto p = pgPasswordFor(dsn))
        return p;
    if (const char *env = std::getenv("MYSQL_PWD"))
        return std::string(env);
    std::optional<std::string> found;
    if (const char *home = std::getenv("MYSQL_HOME"))
        if (auto p = passwordFromOptionFile(std::string(home) + "/my.cnf"))
            found = p;
    if (const char *home = std::getenv("HOME"))
        if (auto p = passwordFromOptionFile(std::string(home) + "/.my.cnf"))
            found = p;
    return found;
}

std::string mysqlLiteral(std::string_view value)
{
    std::string out = "'";
    for (char c : value) {
        switch (c) {
        case '\0':
            out += "\\0";
            break;
        case '\'':
            out += "\\'";
            break;
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\x1a':
            out += "\\Z";
            break;
        default:
            out += c;
        }
    }
    out += '\'';
    return out;
}

bool MysqlRowView::isNull(unsigned col) const
{
    return m_rs.isNull(col + 1);
}

std::string MysqlRowView::text(unsigned col) const
{
    sql::SQLString s = m_rs.getString(col + 1);
    return std::string(s.asStdString());
}

MysqlConnection::MysqlConnection(const std::string &dsn, const std::string &endpointName, bool localInfile)
    : m_rawDsn(dsn), m_endpoint(endpointName), m_dsn(MysqlDsn::parse(dsn))
{
    const std::string who = m_endpoint.empty() ? m_dsn.display() : "endpoint '" + m_endpoint + "'";
    sql::ConnectOptionsMap opts;
    opts["hostName"] = sql::SQLString(m_dsn.host);
    opts["port"] = m_dsn.port;
    opts["userName"] = sql::SQLString(m_dsn.user);
    opts["password"] = sql::SQLString(mysqlPasswordFor(dsn, m_dsn).value_or(""));
    if (!m_dsn.database.empty())
        opts["schema"] = sql::SQLString(m_dsn.database);
    if (!m_dsn.socket.empty())
        opts["socket"] = sql::SQLString(m_dsn.socket);
    opts["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
    opts["OPT_CONNECT_TIMEOUT"] = m_dsn.connectTimeout;
    opts["OPT_RECONNECT"] = false;
    // LOAD DATA LOCAL lets the server ask for a client file: only towards a server that cannot be
    // impersonated (this machine, or TLS with the certificate verified).
    if (localInfile && (m_dsn.isLoopback() || m_dsn.sslMode == "verify_ca" || m_dsn.sslMode == "verify_identity"))
        opts["OPT_LOCAL_INFILE"] = 1;
    if (m_dsn.sslMode != "disabled") {
        if (!m_dsn.sslCa.empty())
            opts["sslCA"] = sql::SQLString(m_dsn.sslCa);
        if (!m_dsn.sslCert.empty())
            opts["sslCert"] = sql::SQLString(m_dsn.sslCert);
        if (!m_dsn.sslKey.empty())
            opts["sslKey"] = sql::SQLString(m_dsn.sslKey);
        if (m_dsn.sslMode != "preferred")
            opts["sslEnforce"] = true;
        if (m_dsn.sslMode == "verify_ca" || m_dsn.sslMode == "verify_identity")
            opts["sslVerify"] = true;
    }
    try {
        {
            // Connector/C++ initialises the client library on a first connect and its driver
            // instance lazily, neither thread-safe: tables' passes connecting at once crashed
            // (SIGSEGV here, seen once in the MariaDB zoo). Connects are rare; serialize them.
            static std::mutex connectMutex;
            std::lock_guard lock(connectMutex);
            sql::mysql::MySQL_Driver *driver = sql::mysql::get_mysql_driver_instance();
            m_conn.reset(driver->connect(opts));
        }
        if (!m_conn)
            throw Error(ErrorKind::Transient, who + ": the MySQL driver returned no connection", {},
                        "check that the server is reachable, then try again");
        m_conn->setAutoCommit(true);
        std::unique_ptr<sql::Statement> st(m_conn->createStatement());
        st->execute("SET NAMES utf8mb4, time_zone = '+00:00', "
                    "sql_mode = REPLACE(REPLACE(REPLACE(@@sql_mode, 'ANSI_QUOTES', ''), 'NO_BACKSLASH_ESCAPES', ''), "
                    "'PAD_CHAR_TO_FULL_LENGTH', '')");
        std::unique_ptr<sql::ResultSet> rs(st->executeQuery("SELECT VERSION(), CONNECTION_ID()"));
        if (rs->next()) {
            m_version = rs->getString(1).asStdString();
            m_connectionId = rs->getUInt64(2);
        }
        // What the session got, not what was asked: an empty cipher is a plain connection.
        m_tls.mode = m_dsn.sslMode;
        std::unique_ptr<sql::ResultSet> ssl(
            st->executeQuery("SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_cipher', 'Ssl_version')"));
        while (ssl->next()) {
            const std::string name = ssl->getString(1).asStdString();
            (name == "Ssl_cipher" ? m_tls.cipher : m_tls.protocol) = ssl->getString(2).asStdString();
        }
        m_tls.encrypted = !m_tls.cipher.empty();
        if (!m_tls.encrypted)
            m_tls.protocol.clear();
        // In these modes the driver refuses a certificate that does not verify, so an encrypted
        // session in them is a verified one.
        m_tls.verified = m_tls.encrypted && (m_dsn.sslMode == "verify_ca" || m_dsn.sslMode == "verify_identity");
        m_tls.hostVerified = m_tls.encrypted && m_dsn.sslMode == "verify_identity";
    } catch (const sql::SQLException &e) {
        const int code = e.getErrorCode();
        std::string msg = (m_endpoint.empty() ? who : who + " (" + m_dsn.display() + ")") + ": " + e.what();
        std::string hint;
        ErrorKind kind = ErrorKind::Permanent;
        if (code == 1045)
            hint = "check the user and password (keychain, MYSQL_PWD or ~/.my.cnf [client] password=)";
        else if (code == 1049)
            hint = "check the database name in the DSN, or create the database";
        else if (code == 2002 || code == 2003 || code == 2013 || code == 2006 || code == 1040) {
            kind = ErrorKind::Transient;
            hint = "check that the server runs and listens on " + m_dsn.host + ":" + std::to_string(m_dsn.port);
        } else if (code == 2026) {
            // Connector/C says only "TLS/SSL error: ..."; each case in its own words.
            if (auto tls = explainMysqlTlsFailure(e.what(), m_dsn)) {
                msg = (m_endpoint.empty() ? who : who + " (" + m_dsn.display() + ")") + ": " + tls->message;
                hint = tls->hint;
            } else {
                hint = "TLS failed: give ssl-ca=... for the server's CA, or ssl-mode=required to encrypt without "
                       "verifying (not recommended off the local machine)";
            }
        }
        throw ConnectionError(kind, msg, std::to_string(code), hint);
    }
}

MysqlConnection::~MysqlConnection()
{
    if (m_conn) {
        try {
            m_conn->close();
        } catch (...) {
        }
    }
}

MysqlConnection::MysqlConnection(MysqlConnection &&) noexcept = default;
MysqlConnection &MysqlConnection::operator=(MysqlConnection &&) noexcept = default;

bool MysqlConnection::isMariaDb() const
{
    return m_version.find("MariaDB") != std::string::npos;
}

void MysqlConnection::rethrow(const std::exception &e, const std::string &what) const
{
    const std::string who = m_endpoint.empty() ? m_dsn.display() : "endpoint '" + m_endpoint + "'";
    if (auto *se = dynamic_cast<const sql::SQLException *>(&e)) {
        const int code = se->getErrorCode();
        ErrorKind kind = ErrorKind::Permanent;
        std::string hint;
        // Lost connection, server gone, lock wait timeout, deadlock, too many connections.
        if (code == 2006 || code == 2013 || code == 1205 || code == 1213 || code == 1040 || code == 1053 ||
            code == 2055)
            kind = ErrorKind::Transient;
        if (code == 1142 || code == 1143 || code == 1044 || code == 1227)
            hint = "grant the privilege named above to the endpoint's user";
        else if (code == 1146)
            hint = "check the table name, or create the table on the source";
        throw SqlError(kind, who + ": " + what + ": " + se->what(), std::to_string(code), hint);
    }
    throw SqlError(ErrorKind::Permanent, who + ": " + what + ": " + e.what());
}

void MysqlConnection::exec(const std::string &sql)
{
    try {
        std::unique_ptr<sql::Statement> st(m_conn->createStatement());
        // A result set (SELECT, SHOW) is read and dropped so the connection is ready again.
        if (st->execute(sql))
            std::unique_ptr<sql::ResultSet> rs(st->getResultSet());
    } catch (const sql::SQLException &e) {
        rethrow(e, "statement failed");
    }
}

namespace {
void bind(sql::PreparedStatement &ps, const std::vector<std::optional<std::string>> &params)
{
    for (size_t i = 0; i < params.size(); ++i) {
        if (params[i])
            ps.setString(static_cast<unsigned>(i + 1), sql::SQLString(*params[i]));
        else
            ps.setNull(static_cast<unsigned>(i + 1), 0);
    }
}
} // namespace

void MysqlConnection::execParams(const std::string &sql, const std::vector<std::optional<std::string>> &params)
{
    try {
        std::unique_ptr<sql::PreparedStatement> ps(m_conn->prepareStatement(sql));
        bind(*ps, params);
        ps->execute();
    } catch (const sql::SQLException &e) {
        rethrow(e, "statement failed");
    }
}

long long MysqlConnection::queryRows(const std::string &sql, const std::vector<std::optional<std::string>> &params,
                                     const std::function<void(const MysqlRowView &)> &row)
{
    long long n = 0;
    try {
        std::unique_ptr<sql::ResultSet> rs;
        std::unique_ptr<sql::Statement> st;
        std::unique_ptr<sql::PreparedStatement> ps;
        if (params.empty()) {
            st.reset(m_conn->createStatement());
            rs.reset(st->executeQuery(sql));
        } else {
            ps.reset(m_conn->prepareStatement(sql));
            bind(*ps, params);
            rs.reset(ps->executeQuery());
        }
        MysqlRowView view(*rs);
        while (rs->next()) {
            row(view);
            ++n;
        }
    } catch (const sql::SQLException &e) {
        rethrow(e, "query failed");
    }
    return n;
}

MysqlRows MysqlConnection::query(const std::string &sql, const std::vector<std::optional<std::string>> &params)
{
    MysqlRows out;
    try {
        std::unique_ptr<sql::ResultSet> rs;
        std::unique_ptr<sql::Statement> st;
        std::unique_ptr<sql::PreparedStatement> ps;
        if (params.empty()) {
            st.reset(m_conn->createStatement());
            rs.reset(st->executeQuery(sql));
        } else {
            ps.reset(m_conn->prepareStatement(sql));
            bind(*ps, params);
            rs.reset(ps->executeQuery());
        }
        sql::ResultSetMetaData *md = rs->getMetaData();
        const unsigned n = md->getColumnCount();
        for (unsigned i = 1; i <= n; ++i)
            out.columns.push_back(md->getColumnLabel(i).asStdString());
        while (rs->next()) {
            std::vector<std::optional<std::string>> r;
            r.reserve(n);
            for (unsigned i = 1; i <= n; ++i) {
                if (rs->isNull(i))
                    r.emplace_back(std::nullopt);
                else
                    r.emplace_back(rs->getString(i).asStdString());
            }
            out.rows.push_back(std::move(r));
        }
    } catch (const sql::SQLException &e) {
        rethrow(e, "query failed");
    }
    return out;
}

std::optional<std::string> MysqlConnection::scalar(const std::string &sql,
                                                   const std::vector<std::optional<std::string>> &params)
{
    auto r = query(sql, params);
    if (r.empty() || r.rows[0].empty())
        return std::nullopt;
    return r.rows[0][0];
}

long long MysqlConnection::stream(const std::string &sql, const std::function<void(const MysqlRowView &)> &row)
{
    long long n = 0;
    std::unique_ptr<sql::Statement> st;
    std::unique_ptr<sql::ResultSet> rs;
    try {
        st.reset(m_conn->createStatement());
        st->setResultSetType(sql::ResultSet::TYPE_FORWARD_ONLY);
        rs.reset(st->executeQuery(sql));
        MysqlRowView view(*rs);
        while (rs->next()) {
            row(view);
            ++n;
        }
    } catch (const sql::SQLException &e) {
        rethrow(e, "query failed");
    } catch (...) {
        // Closing an unbuffered result reads every remaining row: stop the query first.
        killQuery();
        try {
            rs.reset();
            st.reset();
        } catch (...) {
        }
        throw;
    }
    return n;
}

void MysqlConnection::killQuery()
{
    if (!m_connectionId)
        return;
    std::lock_guard lock(killMutex());
    try {
        MysqlConnection side(m_rawDsn, m_endpoint);
        side.exec("KILL QUERY " + std::to_string(m_connectionId));
    } catch (const Error &) {
        // The query ends with the connection anyway.
    }
}

} // namespace driftless::core
