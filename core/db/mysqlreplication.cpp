#include "core/db/mysqlreplication.h"
#include "core/db/mysqltls.h"

#include "core/model/error.h"

#include <mysql.h>

// After mysql.h: it uses MYSQL and the field types without including them.
#include <mariadb_rpl.h>

#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <thread>

namespace driftless::core {

namespace {

constexpr unsigned kAccessDenied = 1045, kSpecificAccessDenied = 1227, kMasterFatalReading = 1236;

bool holds(std::string_view text, std::string_view needle)
{
    return text.find(needle) != std::string_view::npos;
}

std::string endpoint(const MysqlReplicationOptions &o)
{
    return o.unixSocket.empty() ? o.host + ":" + std::to_string(o.port) : o.unixSocket;
}

bool isConnectionLost(unsigned code)
{
    // CR_CONNECTION_ERROR, CR_CONN_HOST_ERROR, CR_SERVER_GONE_ERROR, CR_SERVER_LOST,
    // CR_SERVER_LOST_EXTENDED, ER_CONNECTION_KILLED, ER_SERVER_SHUTDOWN, ER_QUERY_INTERRUPTED
    return code == 2002 || code == 2003 || code == 2006 || code == 2013 || code == 2055 || code == 1927 ||
           code == 1053 || code == 1317;
}

} // namespace

bool isValidGtidState(std::string_view state)
{
    if (state.empty())
        return false;
    int dashes = 0;
    bool digit = false;
    for (char ch : state) {
        if (ch >= '0' && ch <= '9') {
            digit = true;
        } else if (ch == '-' && digit && dashes < 2) {
            ++dashes;
            digit = false;
        } else if (ch == ',' && digit && dashes == 2) {
            dashes = 0;
            digit = false;
        } else {
            return false;
        }
    }
    return digit && dashes == 2;
}

MysqlReplicationConnection::MysqlReplicationConnection(const MysqlReplicationOptions &options) : m_options(options)
{
    m_options.password.clear();
    if (options.serverId == 0)
        throw ConfigError("a binlog reader needs a non-zero server_id, unique among the source's replicas");
    m_mysql = mysql_init(nullptr);
    if (!m_mysql)
        throw Error(ErrorKind::Transient, "out of memory creating a MySQL connection");
    const unsigned readTimeout = static_cast<unsigned>(std::max<long long>(1, options.readTimeout.count()));
    const unsigned connectTimeout = 15;
    mysql_optionsv(m_mysql, MYSQL_OPT_READ_TIMEOUT, &readTimeout);
    mysql_optionsv(m_mysql, MYSQL_OPT_WRITE_TIMEOUT, &readTimeout);
    mysql_optionsv(m_mysql, MYSQL_OPT_CONNECT_TIMEOUT, &connectTimeout);
    mysql_optionsv(m_mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    if (options.tls) {
        const my_bool on = 1;
        mysql_optionsv(m_mysql, MYSQL_OPT_SSL_ENFORCE, &on);
        if (!options.tlsCa.empty()) {
            mysql_optionsv(m_mysql, MYSQL_OPT_SSL_CA, options.tlsCa.c_str());
            mysql_optionsv(m_mysql, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
        }
    }
    const bool viaSocket = !options.unixSocket.empty();
    if (!mysql_real_connect(m_mysql, viaSocket ? nullptr : options.host.c_str(), options.user.c_str(),
                            options.password.c_str(), nullptr, viaSocket ? 0 : options.port,
                            viaSocket ? options.unixSocket.c_str() : nullptr, 0)) {
        const unsigned code = mysql_errno(m_mysql);
        const std::string message = mysql_error(m_mysql);
        mysql_close(m_mysql);
        m_mysql = nullptr;
        const bool permanent = code == kAccessDenied || code == 1044 || code == 1698 || code == 2026;
        std::optional<MysqlTlsFailure> tls;
        if (code == 2026) {
            // As the SQL connection says it (the same Connector/C texts).
            MysqlDsn d;
            d.host = options.host;
            d.port = static_cast<int>(options.port);
            d.sslCa = options.tlsCa;
            d.sslMode = options.tlsCa.empty() ? "required" : "verify_identity";
            tls = explainMysqlTlsFailure(message, d);
        }
        throw ConnectionError(permanent ? ErrorKind::Permanent : ErrorKind::Transient,
                              "cannot open the binlog connection to " + endpoint(options) + ": " +
                                  (tls ? tls->message : message),
                              std::to_string(code),
                              code == kAccessDenied ? "check the user and password of the source endpoint"
                              : tls                 ? tls->hint
                              : code == 2026        ? "check the source's TLS certificate and the CA file"
                                                    : "check that the source server is running and reachable");
    }
    m_socket = static_cast<int>(mysql_get_socket(m_mysql));
    try {
        auto rows = query("SELECT @@log_bin, @@binlog_format, @@binlog_row_image, @@version");
        const std::string logBin = rows.at(0).at(0).value_or("0");
        const std::string format = rows.at(0).at(1).value_or("");
        if (logBin != "1")
            throw Error(ErrorKind::Permanent, "binary logging is disabled on " + endpoint(options), {},
                        "start the source with log_bin=ON (and binlog_format=ROW, binlog_row_metadata=FULL) to "
                        "use CDC, or sync its tables with the full-refresh or cursor strategy");
        if (format != "ROW")
            throw Error(ErrorKind::Permanent,
                        "binlog_format is " + format + " on " + endpoint(options) + ", CDC needs ROW", {},
                        "SET GLOBAL binlog_format=ROW on the source (and in its configuration file)");
        std::optional<std::string> metadata;
        try {
            metadata = query("SELECT @@binlog_row_metadata").at(0).at(0);
        } catch (const Error &) {
            // Servers before MySQL 8.0.1 / MariaDB 10.5 have no such variable.
        }
        if (!metadata || *metadata != "FULL")
            throw Error(ErrorKind::Permanent,
                        "binlog_row_metadata is " + metadata.value_or("not available") + " on " + endpoint(options) +
                            "; the binlog decoder needs FULL (column signedness, character sets and ENUM/SET values)",
                        {}, "SET GLOBAL binlog_row_metadata=FULL on the source (and in its configuration file)");
    } catch (...) {
        mysql_close(m_mysql);
        m_mysql = nullptr;
        throw;
    }
}

MysqlReplicationConnection::~MysqlReplicationConnection()
{
    if (m_event)
        mariadb_free_rpl_event(m_event);
    if (m_rpl)
        mariadb_rpl_close(m_rpl);
    if (m_mysql)
        mysql_close(m_mysql);
}

void MysqlReplicationConnection::exec(const std::string &sql)
{
    if (mysql_real_query(m_mysql, sql.data(), sql.size()) != 0) {
        const unsigned code = mysql_errno(m_mysql);
        throw SqlError(isConnectionLost(code) ? ErrorKind::Transient : ErrorKind::Permanent,
                       "binlog connection to " + endpoint(m_options) + ": " + mysql_error(m_mysql),
                       std::to_string(code));
    }
    if (MYSQL_RES *res = mysql_store_result(m_mysql))
        mysql_free_result(res);
}

std::vector<std::vector<std::optional<std::string>>> MysqlReplicationConnection::query(const std::string &sql)
{
    if (mysql_real_query(m_mysql, sql.data(), sql.size()) != 0) {
        const unsigned code = mysql_errno(m_mysql);
        throw SqlError(isConnectionLost(code) ? ErrorKind::Transient : ErrorKind::Permanent,
                       "binlog connection to " + endpoint(m_options) + ": " + mysql_error(m_mysql),
                       std::to_string(code));
    }
    std::vector<std::vector<std::optional<std::string>>> rows;
    MYSQL_RES *res = mysql_store_result(m_mysql);
    if (!res)
        return rows;
    const unsigned n = mysql_num_fields(res);
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
        unsigned long *lengths = mysql_fetch_lengths(res);
        std::vector<std::optional<std::string>> values;
        for (unsigned i = 0; i < n; ++i)
            values.push_back(row[i] ? std::optional<std::string>(std::string(row[i], lengths[i])) : std::nullopt);
        rows.push_back(std::move(values));
    }
    mysql_free_result(res);
    return rows;
}

std::vector<std::pair<std::uint32_t, std::string>> MysqlReplicationConnection::collationCharsets()
{
    std::vector<std::pair<std::uint32_t, std::string>> out;
    for (const auto &row :
         query("SELECT ID, CHARACTER_SET_NAME FROM information_schema.COLLATIONS WHERE ID IS NOT NULL"))
        if (row.size() == 2 && row[0] && row[1])
            out.emplace_back(static_cast<std::uint32_t>(std::stoul(*row[0])), *row[1]);
    return out;
}

binlog::Position MysqlReplicationConnection::currentPosition()
{
    auto rows = query("SHOW MASTER STATUS");
    if (rows.empty() || rows[0].size() < 2 || !rows[0][0] || !rows[0][1])
        throw Error(ErrorKind::Permanent, "SHOW MASTER STATUS returned nothing on " + endpoint(m_options), {},
                    "check that binary logging is on and that the user has the BINLOG MONITOR (MariaDB) or "
                    "REPLICATION CLIENT (MySQL) privilege");
    return binlog::Position{*rows[0][0], std::stoull(*rows[0][1])};
}

std::string MysqlReplicationConnection::serverVersion() const
{
    return mysql_get_server_info(m_mysql);
}

std::uint64_t MysqlReplicationConnection::connectionId() const
{
    return mysql_thread_id(m_mysql);
}

void MysqlReplicationConnection::start(const MysqlBinlogStart &from)
{
    if (m_started)
        throw Error(ErrorKind::Permanent, "the binlog connection was already started");
    const bool byGtid = !from.gtidState.empty();
    if (byGtid && !isValidGtidState(from.gtidState))
        throw ConfigError("'" + from.gtidState +
                          "' is not a MariaDB GTID state (domain-server-sequence, comma separated)");
    if (!byGtid && from.position.file.empty())
        throw ConfigError("a binlog start needs a file name or a GTID state");
    m_startDescription =
        byGtid ? "GTID " + from.gtidState : from.position.file + ":" + std::to_string(from.position.offset);

    // Another registered replica with our server_id would lose its stream to us (the server
    // keeps only the newest dump per id). A registration of our own previous connection goes
    // away once the server notices the old socket is gone, so give it a few heartbeats.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::max<std::chrono::milliseconds>(std::chrono::milliseconds(3000), 3 * m_options.heartbeat);
    for (;;) {
        std::optional<std::string> holder;
        try {
            for (const auto &row : query("SHOW SLAVE HOSTS"))
                if (row.size() >= 3 && row[0] && *row[0] == std::to_string(m_options.serverId))
                    holder = row[1].value_or("?") + ":" + row[2].value_or("?");
        } catch (const Error &) {
            break; // without the privilege to list replicas, the server's own check must do
        }
        if (!holder)
            break;
        if (std::chrono::steady_clock::now() >= deadline)
            throw Error(ErrorKind::Permanent,
                        "server_id " + std::to_string(m_options.serverId) + " is already in use on " +
                            endpoint(m_options) + " by the replica registered as " + *holder,
                        std::to_string(kMasterFatalReading),
                        "give this pipeline a server_id no replica or other reader of the source uses (SHOW SLAVE "
                        "HOSTS lists them); two readers with one id would take the stream from each other");
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }

    const long long heartbeatNs = std::max<long long>(1, m_options.heartbeat.count()) * 1'000'000LL;
    exec("SET @master_binlog_checksum = @@global.binlog_checksum, @mariadb_slave_capability = 4, "
         "@master_heartbeat_period = " +
         std::to_string(heartbeatNs));
    if (byGtid)
        exec("SET @slave_connect_state = '" + from.gtidState + "'");

    m_rpl = mariadb_rpl_init(m_mysql);
    if (!m_rpl)
        throw Error(ErrorKind::Transient, std::string("cannot start the binlog stream: ") + mysql_error(m_mysql));
    const std::string file = byGtid ? std::string() : from.position.file;
    mariadb_rpl_optionsv(m_rpl, MARIADB_RPL_FILENAME, file.c_str(), file.size());
    mariadb_rpl_optionsv(m_rpl, MARIADB_RPL_START,
                         static_cast<unsigned long>(byGtid ? 4 : std::max<std::uint64_t>(4, from.position.offset)));
    mariadb_rpl_optionsv(m_rpl, MARIADB_RPL_SERVER_ID, static_cast<unsigned>(m_options.serverId));
    mariadb_rpl_optionsv(m_rpl, MARIADB_RPL_FLAGS, 0u);
    if (!m_options.reportHost.empty()) {
        mariadb_rpl_optionsv(m_rpl, MARIADB_RPL_HOST, m_options.reportHost.c_str());
        mariadb_rpl_optionsv(m_rpl, MARIADB_RPL_PORT, 0u);
    }
    if (mariadb_rpl_open(m_rpl) != 0)
        throwStreamError();
    m_started = true;
}

std::optional<std::string_view> MysqlReplicationConnection::next()
{
    if (!m_started)
        throw Error(ErrorKind::Permanent, "next() on a binlog connection that was not started");
    for (;;) {
        if (m_stopping.load())
            return std::nullopt;
        MARIADB_RPL_EVENT *ev = mariadb_rpl_fetch(m_rpl, m_event);
        if (!ev) {
            m_event = nullptr; // fetch frees the event it was given when it fails
            if (m_stopping.load())
                return std::nullopt;
            throwStreamError();
        }
        m_event = ev;
        if (ev->raw_data_ofs > ev->raw_data_size)
            throw Error(ErrorKind::Permanent, "Connector/C handed over an event with an invalid offset");
        return std::string_view(reinterpret_cast<const char *>(ev->raw_data) + ev->raw_data_ofs,
                                ev->raw_data_size - ev->raw_data_ofs);
    }
}

void MysqlReplicationConnection::stop()
{
    if (m_stopping.exchange(true))
        return;
    if (m_socket >= 0)
        ::shutdown(m_socket, SHUT_RDWR);
}

void MysqlReplicationConnection::throwStreamError()
{
    unsigned code = m_rpl ? mariadb_rpl_errno(m_rpl) : 0;
    std::string message = code && m_rpl ? mariadb_rpl_error(m_rpl) : "";
    if (!code) {
        code = mysql_errno(m_mysql);
        message = mysql_error(m_mysql);
    }
    const std::string where = endpoint(m_options);
    const std::string codeText = std::to_string(code);
    if (code == 0)
        throw Error(ErrorKind::Transient, "the server " + where + " ended the binlog stream", {},
                    "the reader reconnects from its last checkpoint");
    if (holds(message, "same server_uuid/server_id") || holds(message, "same server_id"))
        throw Error(ErrorKind::Permanent,
                    "another reader connected to " + where + " with server_id " + std::to_string(m_options.serverId) +
                        " and the server dropped this one's binlog stream (" + message + ")",
                    codeText,
                    "give each pipeline and replica of the source its own server_id (SHOW SLAVE HOSTS lists "
                    "the registered ones)");
    if (code == kMasterFatalReading) {
        if (holds(message, "Could not find first log file") || holds(message, "purged") ||
            holds(message, "Could not find GTID state"))
            throw Error(ErrorKind::Permanent,
                        "the binlog to resume from (" + m_startDescription + ") is no longer on " + where +
                            " (purged): " + message,
                        codeText,
                        "re-snapshot the tables of this pipeline, and keep binlogs longer than the longest time "
                        "the pipeline may be stopped (binlog_expire_logs_seconds)");
        if (holds(message, "Binary log is not open"))
            throw Error(ErrorKind::Permanent, "binary logging is disabled on " + where, codeText,
                        "start the source with log_bin=ON and binlog_format=ROW to use CDC");
        if (holds(message, "not in the master's binlog") || holds(message, "diverged"))
            throw Error(ErrorKind::Permanent,
                        "the GTID position " + m_startDescription + " does not exist on " + where + ": " + message,
                        codeText, "the source is not the server the pipeline read before; re-snapshot the tables");
        throw Error(ErrorKind::Permanent,
                    "the server " + where + " refused the binlog stream from " + m_startDescription + ": " + message,
                    codeText, "check the stored binlog position; re-snapshot if it is not a transaction boundary");
    }
    if (code == kSpecificAccessDenied || code == kAccessDenied || code == 1044)
        throw Error(ErrorKind::Permanent, "reading the binlog of " + where + " was refused: " + message, codeText,
                    "GRANT REPLICATION SLAVE ON *.* TO the pipeline's user (and REPLICATION MASTER ADMIN on "
                    "MariaDB 10.5+ so that it can check server_id clashes)");
    throw Error(isConnectionLost(code) || code >= 2000 ? ErrorKind::Transient : ErrorKind::Permanent,
                "the binlog stream from " + where + " failed: " + message, codeText,
                "the reader reconnects from its last checkpoint");
}

} // namespace driftless::core
