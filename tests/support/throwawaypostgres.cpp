#include "tests/support/throwawaypostgres.h"

#include "core/db/pgconnection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace driftless::test {

namespace {

constexpr const char *kFaketimeLib = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

std::string pgBin()
{
    const char *env = std::getenv("PGBIN");
    return env && *env ? env : "/usr/lib/postgresql/15/bin";
}

/// A loopback port nothing listens on now (the kernel's pick for an ephemeral bind).
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

/// Root runs the server tools as user postgres (initdb refuses root).
std::string asPg(const std::string &cmd)
{
    return ::geteuid() == 0 ? "runuser -u postgres -- " + cmd : cmd;
}

std::string readAll(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

ThrowawayPostgres::ThrowawayPostgres(std::chrono::seconds clockOffset)
{
    namespace fs = std::filesystem;
    std::string faketime;
    if (clockOffset.count() != 0) {
        if (!fs::exists(kFaketimeLib))
            throw std::runtime_error(std::string("a skewed clock needs libfaketime (") + kFaketimeLib +
                                     "): apt-get install -y faketime");
        faketime = std::string("env LD_PRELOAD=") + kFaketimeLib + " FAKETIME=" + (clockOffset.count() > 0 ? "+" : "") +
                   std::to_string(clockOffset.count()) + "s ";
    }
    std::string tmpl = (fs::temp_directory_path() / "driftless-pg-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
        throw std::runtime_error("cannot create a folder for a throwaway Postgres");
    m_dir = tmpl;
    if (::geteuid() == 0) {
        if (passwd *pw = ::getpwnam("postgres"); !pw || ::chown(m_dir.c_str(), pw->pw_uid, pw->pw_gid) != 0)
            throw std::runtime_error("cannot hand " + m_dir + " to user postgres");
    }
    m_port = freePort();
    const std::string data = m_dir + "/data";
    const std::string log = m_dir + "/server.log";
    if (std::system(
            asPg(pgBin() + "/initdb -D " + data + " -A trust -U postgres >" + m_dir + "/initdb.log 2>&1").c_str()) != 0)
        throw std::runtime_error("initdb failed: " + readAll(m_dir + "/initdb.log"));
    const std::string opts = "-p " + std::to_string(m_port) + " -k " + m_dir +
                             " -c listen_addresses=127.0.0.1 -c wal_level=logical -c track_commit_timestamp=on "
                             "-c max_wal_senders=10 -c max_replication_slots=10 -c fsync=off";
    if (std::system(asPg(faketime + pgBin() + "/pg_ctl -D " + data + " -o '" + opts + "' -l " + log +
                         " -w -t 120 start >/dev/null 2>&1")
                        .c_str()) != 0)
        throw std::runtime_error("the throwaway Postgres did not start: " + readAll(log));
}

ThrowawayPostgres::ThrowawayPostgres(StandbyOf standby)
{
    namespace fs = std::filesystem;
    std::string tmpl = (fs::temp_directory_path() / "driftless-pg-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
        throw std::runtime_error("cannot create a folder for a throwaway Postgres standby");
    m_dir = tmpl;
    if (::geteuid() == 0) {
        if (passwd *pw = ::getpwnam("postgres"); !pw || ::chown(m_dir.c_str(), pw->pw_uid, pw->pw_gid) != 0)
            throw std::runtime_error("cannot hand " + m_dir + " to user postgres");
    }
    const std::string data = m_dir + "/data";
    if (std::system(asPg(pgBin() + "/pg_basebackup -D " + data + " -R -X stream -c fast -h 127.0.0.1 -p " +
                         std::to_string(standby.primary.port()) + " -U postgres >" + m_dir + "/basebackup.log 2>&1")
                        .c_str()) != 0)
        throw std::runtime_error("pg_basebackup failed: " + readAll(m_dir + "/basebackup.log"));
    m_port = freePort();
    start();
}

void ThrowawayPostgres::pgctl(const std::string &args) const
{
    const std::string log = m_dir + "/server.log";
    if (std::system(
            asPg(pgBin() + "/pg_ctl -D " + m_dir + "/data " + args + " >>" + m_dir + "/pgctl.log 2>&1").c_str()) != 0)
        throw std::runtime_error("pg_ctl " + args + " failed: " + readAll(m_dir + "/pgctl.log") + readAll(log));
}

void ThrowawayPostgres::stop(bool crash)
{
    pgctl(std::string("-m ") + (crash ? "immediate" : "fast") + " -w -t 60 stop");
}

void ThrowawayPostgres::start()
{
    // The port, socket folder and settings on the command line: a base backup copies the
    // primary's postgresql.conf, whose port is taken.
    const std::string opts = "-p " + std::to_string(m_port) + " -k " + m_dir +
                             " -c listen_addresses=127.0.0.1 -c wal_level=logical -c track_commit_timestamp=on "
                             "-c max_wal_senders=10 -c max_replication_slots=10 -c fsync=off -c hot_standby=on";
    pgctl("-o '" + opts + "' -l " + m_dir + "/server.log -w -t 120 start");
}

void ThrowawayPostgres::promote()
{
    pgctl("-w -t 120 promote");
}

void ThrowawayPostgres::restoreTo(const ThrowawayPostgres &walFrom, const std::string &lsn)
{
    namespace fs = std::filesystem;
    const std::string data = m_dir + "/data";
    fs::remove(data + "/standby.signal");
    {
        std::ofstream(data + "/recovery.signal").flush();
        std::ofstream conf(data + "/postgresql.auto.conf", std::ios::app);
        conf << "primary_conninfo = ''\n"
             << "restore_command = 'cp " << walFrom.m_dir << "/data/pg_wal/%f \"%p\"'\n"
             << "recovery_target_lsn = '" << lsn << "'\n"
             << "recovery_target_inclusive = off\n"
             << "recovery_target_action = 'promote'\n";
    }
    if (::geteuid() == 0)
        if (passwd *pw = ::getpwnam("postgres"))
            if (::chown((data + "/recovery.signal").c_str(), pw->pw_uid, pw->pw_gid) != 0)
                throw std::runtime_error("cannot hand recovery.signal to user postgres");
    start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (scalar("SELECT pg_is_in_recovery()") != "f") {
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("the restore did not promote: " + readAll(m_dir + "/server.log"));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

void ThrowawayPostgres::catchUpWith(const ThrowawayPostgres &primary, int seconds) const
{
    const std::string target = primary.scalar("SELECT pg_current_wal_lsn()");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (scalar("SELECT pg_last_wal_replay_lsn() >= '" + target + "'::pg_lsn") != "t") {
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("the standby did not replay up to " + target);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

std::string ThrowawayPostgres::dsnOf(const std::string &database) const
{
    return "host=127.0.0.1 port=" + std::to_string(m_port) + " user=postgres dbname=" + database;
}

ThrowawayPostgres::~ThrowawayPostgres()
{
    if (m_dir.empty())
        return;
    if (m_port)
        (void)std::system(
            asPg(pgBin() + "/pg_ctl -D " + m_dir + "/data -m immediate -w -t 60 stop >/dev/null 2>&1").c_str());
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
}

std::string ThrowawayPostgres::dsn() const
{
    return "host=127.0.0.1 port=" + std::to_string(m_port) + " user=postgres dbname=postgres";
}

void ThrowawayPostgres::exec(const std::string &sql) const
{
    core::PgConnection c(dsn());
    c.exec(sql);
}

std::string ThrowawayPostgres::scalar(const std::string &sql) const
{
    core::PgConnection c(dsn());
    auto r = c.exec(sql);
    return r.rows() > 0 ? r.text(0, 0) : std::string();
}

} // namespace driftless::test
