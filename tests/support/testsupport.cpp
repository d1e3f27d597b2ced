#include "tests/support/testsupport.h"

#include "core/model/tableref.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#ifndef DRIFTLESS_CLI_PATH
#error "DRIFTLESS_CLI_PATH must be defined by the build"
#endif

extern char **environ;

namespace driftless::test {

std::map<std::string, std::string> readEnvFile(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("cannot read test server env file '" + path +
                                 "': run the tests through ctest, which starts the servers");
    std::map<std::string, std::string> kv;
    std::string line;
    while (std::getline(in, line)) {
        auto eq = line.find('=');
        if (eq != std::string::npos)
            kv[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return kv;
}

const Servers &servers()
{
    static const Servers s = [] {
        const char *path = std::getenv("DRIFTLESS_TEST_ENV");
        if (!path)
            throw std::runtime_error("DRIFTLESS_TEST_ENV is not set: run the tests through ctest");
        auto kv = readEnvFile(path);
        Servers s;
        s.root = kv["DRIFTLESS_TEST_ROOT"];
        s.pgHost = kv["PG_HOST"];
        s.pgPort = std::atoi(kv["PG_PORT"].c_str());
        s.pgUser = kv["PG_USER"];
        s.pgPassword = kv["PG_PASSWORD"];
        s.pgBin = kv["PG_BIN"];
        s.myHost = kv["MY_HOST"];
        s.myPort = std::atoi(kv["MY_PORT"].c_str());
        s.myUser = kv["MY_USER"];
        s.myPassword = kv["MY_PASSWORD"];
        s.mySocket = kv["MY_SOCKET"];
        ::setenv("PGPASSWORD", s.pgPassword.c_str(), 1);
        return s;
    }();
    return s;
}

const TlsServers &tlsServers()
{
    static const TlsServers s = [] {
        const char *path = std::getenv("DRIFTLESS_TLS_ENV");
        if (!path)
            throw std::runtime_error("DRIFTLESS_TLS_ENV is not set: run the test through ctest");
        auto kv = readEnvFile(path);
        TlsServers t;
        t.ca = kv["TLS_CA"];
        t.otherCa = kv["TLS_OTHER_CA"];
        t.certName = kv["TLS_CERT_NAME"];
        t.pgPort = std::atoi(kv["TLS_PG_PORT"].c_str());
        t.myPort = std::atoi(kv["TLS_MY_PORT"].c_str());
        t.myUser = kv["TLS_MY_USER"];
        t.myPassword = kv["TLS_MY_PASSWORD"];
        if (t.pgPort == 0 || t.ca.empty())
            throw std::runtime_error(std::string("no TLS servers in ") + path);
        return t;
    }();
    return s;
}

std::string pgDsn(const std::string &db)
{
    const auto &s = servers();
    return "host=" + s.pgHost + " port=" + std::to_string(s.pgPort) + " user=" + s.pgUser + " dbname=" + db;
}

std::string uniqueName(const std::string &prefix)
{
    static std::atomic<int> counter{0};
    static const unsigned salt = std::random_device{}() % 100000;
    return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(salt) + "_" + std::to_string(++counter);
}

PgTestDb::PgTestDb(const std::string &prefix) : m_name(uniqueName(prefix))
{
    core::PgConnection admin(pgDsn("postgres"));
    admin.exec("CREATE DATABASE " + core::quoteIdent(m_name));
}

PgTestDb::~PgTestDb()
{
    try {
        // Replication slots pin a database: drop this one's first (stopping their walsenders).
        core::PgConnection admin(pgDsn("postgres"));
        for (int attempt = 0; attempt < 50; ++attempt) {
            admin.execParams("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = $1 "
                             "AND active_pid IS NOT NULL",
                             {m_name});
            try {
                admin.execParams("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE "
                                 "database = $1 AND NOT active",
                                 {m_name});
            } catch (...) {
            }
            if (admin.execParams("SELECT count(*) FROM pg_replication_slots WHERE database = $1", {m_name})
                    .toInt(0, 0) == 0)
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        admin.exec("DROP DATABASE IF EXISTS " + core::quoteIdent(m_name) + " WITH (FORCE)");
    } catch (...) {
    }
}

core::PgConnection PgTestDb::connect() const
{
    return core::PgConnection(dsn());
}

void PgTestDb::exec(const std::string &sql) const
{
    auto c = connect();
    c.exec(sql);
}

std::string PgTestDb::scalar(const std::string &sql) const
{
    auto c = connect();
    auto r = c.exec(sql);
    return r.rows() ? r.text(0, 0) : std::string();
}

TempDir::TempDir()
{
    std::string tmpl = (std::filesystem::temp_directory_path() / "driftless-test.XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
        throw std::runtime_error("mkdtemp failed");
    m_path = tmpl;
}

TempDir::~TempDir()
{
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

std::string pgHash(core::PgConnection &conn, const std::string &select, const std::string &orderBy)
{
    auto r = conn.exec("SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, E'\\n' ORDER BY " + orderBy +
                       ")), '') FROM (" + select + ") t");
    return r.text(0, 0);
}

std::string cliPath()
{
    return DRIFTLESS_CLI_PATH;
}

namespace {
std::vector<std::string> buildEnv(const std::map<std::string, std::string> &extra)
{
    std::map<std::string, std::string> env;
    for (char **e = environ; *e; ++e) {
        std::string kv = *e;
        auto eq = kv.find('=');
        if (eq != std::string::npos)
            env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (auto &[k, v] : extra) {
        if (!k.empty() && k[0] == '-')
            env.erase(k.substr(1));
        else
            env[k] = v;
    }
    std::vector<std::string> out;
    for (auto &[k, v] : env)
        out.push_back(k + "=" + v);
    return out;
}

pid_t spawn(const std::vector<std::string> &args, const std::map<std::string, std::string> &env, int outFd, int errFd,
            const std::string &program = cliPath())
{
    std::vector<std::string> argv{program};
    argv.insert(argv.end(), args.begin(), args.end());
    auto envs = buildEnv(env);
    std::vector<char *> cargv, cenv;
    for (auto &a : argv)
        cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto &e : envs)
        cenv.push_back(e.data());
    cenv.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(outFd, 1);
        ::dup2(errFd, 2);
        int devnull = ::open("/dev/null", O_RDONLY);
        ::dup2(devnull, 0);
        ::execve(cargv[0], cargv.data(), cenv.data());
        ::_exit(127);
    }
    return pid;
}
} // namespace

std::string readFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void writeFile(const std::string &path, const std::string &content)
{
    std::ofstream out(path, std::ios::binary);
    out << content;
}

int waitPid(int pid, int timeoutSeconds)
{
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
    int status = 0;
    for (;;) {
        pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            return -1000;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return -WTERMSIG(status);
}

CliResult runCli(const std::vector<std::string> &args, const std::map<std::string, std::string> &env,
                 int timeoutSeconds)
{
    TempDir dir;
    std::string outPath = dir.file("out"), errPath = dir.file("err");
    int outFd = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int errFd = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = spawn(args, env, outFd, errFd);
    ::close(outFd);
    ::close(errFd);
    CliResult r;
    r.exitCode = waitPid(pid, timeoutSeconds);
    r.out = readFile(outPath);
    r.err = readFile(errPath);
    return r;
}

int spawnCli(const std::vector<std::string> &args, const std::map<std::string, std::string> &env,
             const std::string &logFile)
{
    return spawnProgram(cliPath(), args, env, logFile);
}

int spawnProgram(const std::string &program, const std::vector<std::string> &args,
                 const std::map<std::string, std::string> &env, const std::string &logFile)
{
    int fd = ::open(logFile.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    pid_t pid = spawn(args, env, fd, fd, program);
    ::close(fd);
    return pid;
}

} // namespace driftless::test

namespace driftless::test {

core::Endpoint pgEndpoint(const std::string &name, const std::string &db)
{
    core::Endpoint e;
    e.name = name;
    e.kind = core::EndpointKind::Postgres;
    e.dsn = pgDsn(db);
    return e;
}

core::Endpoint sqliteEndpoint(const std::string &name, const std::string &path)
{
    core::Endpoint e;
    e.name = name;
    e.kind = core::EndpointKind::Sqlite;
    e.path = path;
    return e;
}

core::TableJob makeJob(const std::string &pipeline, const core::TableSpec &spec, const core::Endpoint &source,
                       const core::Endpoint &target, std::optional<std::string> targetSchema)
{
    core::PipelineSpec p;
    p.name = pipeline;
    p.source = source.name;
    p.target = target.name;
    p.targetSchema = std::move(targetSchema);
    return {pipeline, spec, source, target, core::resolveTargetName(p, spec, target.kind), std::nullopt, std::nullopt};
}

} // namespace driftless::test

#include "core/db/sqlitedb.h"

namespace driftless::test {
std::string sqliteDump(const std::string &path)
{
    if (!std::filesystem::exists(path))
        return "<no file>";
    core::SqliteDb db(path, core::SqliteDb::Mode::ReadOnly);
    std::vector<std::string> tables;
    {
        auto st = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
        while (st.step())
            tables.push_back(st.text(0));
    }
    std::string out;
    for (const auto &t : tables) {
        out += "## " + t + "\n";
        auto st = db.prepare("SELECT * FROM " + core::quoteIdent(t) + " ORDER BY 1, 2");
        while (st.step()) {
            for (int i = 0; i < st.columnCount(); ++i)
                out += (st.isNull(i) ? std::string("NULL") : st.text(i)) + "|";
            out += "\n";
        }
    }
    return out;
}
} // namespace driftless::test

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace driftless::test {

HttpResult httpRequest(int port, const std::string &method, const std::string &path)
{
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        throw std::runtime_error("socket failed");
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
        ::close(fd);
        throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
    }
    std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
    req += method == "POST" ? "Content-Length: 0\r\n\r\n" : "\r\n";
    ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    std::string raw;
    char buf[8192];
    for (;;) {
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            break;
        raw.append(buf, static_cast<size_t>(n));
        // A server that keeps the connection open: stop once Content-Length bytes arrived.
        auto end = raw.find("\r\n\r\n");
        if (end != std::string::npos) {
            std::string head = raw.substr(0, end);
            for (auto &c : head)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            auto cl = head.find("content-length:");
            if (cl != std::string::npos &&
                raw.size() - end - 4 >= std::stoul(head.substr(cl + 15, head.find("\r\n", cl) - cl - 15)))
                break;
        }
    }
    ::close(fd);
    HttpResult r;
    auto end = raw.find("\r\n\r\n");
    if (raw.rfind("HTTP/", 0) != 0 || end == std::string::npos)
        return r;
    r.status = std::atoi(raw.c_str() + raw.find(' ') + 1);
    std::string head = raw.substr(0, end);
    std::string lower = head;
    for (auto &c : lower)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto ct = lower.find("content-type:");
    if (ct != std::string::npos) {
        auto e = head.find("\r\n", ct);
        r.contentType = head.substr(ct + 13, e == std::string::npos ? std::string::npos : e - ct - 13);
        while (!r.contentType.empty() && r.contentType.front() == ' ')
            r.contentType.erase(0, 1);
    }
    r.body = raw.substr(end + 4);
    return r;
}

} // namespace driftless::test
