#include "tests/support/throwawaymariadb.h"

#include "tests/support/testsupport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace driftless::test {

namespace {

int freePort()
{
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (s < 0 || ::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
        ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &len) != 0) {
        if (s >= 0)
            ::close(s);
        throw std::runtime_error("no free loopback port");
    }
    ::close(s);
    return ntohs(a.sin_port);
}

bool root()
{
    return ::geteuid() == 0;
}

std::string quoted(const std::string &s)
{
    return "'" + s + "'";
}

} // namespace

ThrowawayMariadb::ThrowawayMariadb(unsigned serverId) : m_serverId(serverId)
{
    namespace fs = std::filesystem;
    std::string tmpl = (fs::temp_directory_path() / "driftless-my-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
        throw std::runtime_error("cannot create a folder for a throwaway MariaDB");
    m_dir = tmpl;
    fs::create_directories(m_dir + "/tmp");
    if (root()) {
        if (std::system(("chown -R mysql: " + m_dir).c_str()) != 0)
            throw std::runtime_error("cannot hand " + m_dir + " to user mysql");
        fs::permissions(m_dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                   fs::perms::others_read | fs::perms::others_exec);
    }
    const std::string install =
        "mariadb-install-db " + std::string(root() ? "--user=mysql " : "") + "--datadir=" + m_dir +
        "/data --auth-root-authentication-method=normal --skip-test-db >" + m_dir + "/install.log 2>&1";
    if (std::system(install.c_str()) != 0)
        throw std::runtime_error("mariadb-install-db failed: " + readFile(m_dir + "/install.log"));
    m_port = freePort();
    launch();
    // The tests' user, as on the shared server (MYSQL_PWD), kept out of the binary log so that a
    // replica of this server does not replay it.
    const std::string pw = servers().myPassword;
    std::string sql = "SET SESSION sql_log_bin = 0;";
    for (const char *host : {"127.0.0.1", "localhost"})
        sql += "CREATE USER 'driftless'@'" + std::string(host) + "' IDENTIFIED BY " + quoted(pw) +
               "; GRANT ALL PRIVILEGES ON *.* TO 'driftless'@'" + host + "' WITH GRANT OPTION;";
    const std::string cmd = "env -u MYSQL_PWD mariadb --no-defaults -uroot --socket=" + m_dir + "/mysqld.sock -e \"" +
                            sql + "\" >>" + m_dir + "/install.log 2>&1";
    if (std::system(cmd.c_str()) != 0)
        throw std::runtime_error("cannot create the test user: " + readFile(m_dir + "/install.log"));
}

ThrowawayMariadb::~ThrowawayMariadb()
{
    if (m_pid > 0) {
        ::kill(m_pid, SIGKILL);
        waitPid(m_pid, 30);
    }
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
}

void ThrowawayMariadb::launch()
{
    const std::vector<std::string> args = {
        "--no-defaults",
        root() ? "--user=mysql" : "--user=" + std::string(::getpwuid(::geteuid())->pw_name),
        "--datadir=" + m_dir + "/data",
        "--port=" + std::to_string(m_port),
        "--bind-address=127.0.0.1",
        "--socket=" + m_dir + "/mysqld.sock",
        "--pid-file=" + m_dir + "/mariadbd.pid",
        "--log-error=" + m_dir + "/server.log",
        "--tmpdir=" + m_dir + "/tmp",
        "--log-bin=" + m_dir + "/data/binlog",
        "--binlog-format=ROW",
        "--binlog-row-image=FULL",
        "--binlog-row-metadata=FULL",
        "--server-id=" + std::to_string(m_serverId),
        "--gtid-strict-mode=1",
        "--log-slave-updates=1",
        "--innodb-flush-log-at-trx-commit=0",
        "--innodb-buffer-pool-size=32M",
        "--max-connections=100",
        "--local-infile=1",
    };
    m_pid = spawnProgram("/usr/sbin/mariadbd", args, {}, m_dir + "/stdout.log");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        const std::string probe = "env -u MYSQL_PWD mariadb --no-defaults -uroot --socket=" + m_dir +
                                  "/mysqld.sock -e 'SELECT 1' >/dev/null 2>&1";
        if (std::system(probe.c_str()) == 0)
            return;
        if (::kill(m_pid, 0) != 0)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    throw std::runtime_error("the throwaway MariaDB did not start on port " + std::to_string(m_port) + ": " +
                             readFile(m_dir + "/server.log"));
}

std::string ThrowawayMariadb::dsnAt(int port, const std::string &db)
{
    ::setenv("MYSQL_PWD", servers().myPassword.c_str(), 1);
    return "mysql://driftless@127.0.0.1:" + std::to_string(port) + "/" + db;
}

core::MysqlConnection ThrowawayMariadb::connect(const std::string &db) const
{
    return core::MysqlConnection(dsn(db));
}

void ThrowawayMariadb::exec(const std::string &sql) const
{
    auto c = connect();
    c.exec(sql);
}

std::string ThrowawayMariadb::scalar(const std::string &sql) const
{
    auto c = connect();
    return c.scalar(sql).value_or("NULL");
}

void ThrowawayMariadb::replicateFrom(const ThrowawayMariadb &primary)
{
    exec("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = " + std::to_string(primary.port()) +
         ", MASTER_USER = 'driftless', MASTER_PASSWORD = " + quoted(servers().myPassword) +
         ", MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1");
    exec("START SLAVE");
}

void ThrowawayMariadb::catchUpWith(const ThrowawayMariadb &primary, int seconds)
{
    const std::string pos = primary.scalar("SELECT @@gtid_binlog_pos");
    const std::string r = scalar("SELECT MASTER_GTID_WAIT(" + quoted(pos) + ", " + std::to_string(seconds) + ")");
    if (r != "0")
        throw std::runtime_error("the replica did not reach " + pos + " in " + std::to_string(seconds) +
                                 " s: " + scalar("SELECT @@gtid_slave_pos"));
}

void ThrowawayMariadb::promote()
{
    exec("STOP SLAVE");
    exec("RESET SLAVE ALL");
}

void ThrowawayMariadb::stop(bool crash)
{
    if (m_pid <= 0)
        return;
    ::kill(m_pid, crash ? SIGKILL : SIGTERM);
    waitPid(m_pid, 120);
    m_pid = 0;
}

void ThrowawayMariadb::start(int port)
{
    if (port)
        m_port = port;
    launch();
}

} // namespace driftless::test
