#include "core/engine/endpoints/sshtunnel.h"

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/passwordprovider.h"
#include "core/base/process.h"
#include "core/model/dsn.h"
#include "core/model/error.h"
#include "core/state/statestore.h"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

namespace driftless::core {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr auto kStartLimit = std::chrono::seconds(20);
constexpr int kMaxBackoffSeconds = 30;

std::mutex g_knownHostsMutex;
std::string g_knownHosts;

/// The server as the SSH host reaches it: host (or a socket path on that host) and port.
struct RemoteTarget {
    std::string host;
    int port = 0;
    std::string socket; ///< a Unix socket on the SSH host, instead of host:port
};

RemoteTarget remoteTarget(const Endpoint &e)
{
    RemoteTarget t;
    if (e.kind == EndpointKind::Mysql) {
        const auto d = MysqlDsn::parse(e.dsn);
        t.host = d.host;
        t.port = d.port;
        t.socket = d.socket;
        return t;
    }
    std::string host, hostaddr, port;
    for (const auto &[k, v] : parsePgDsn(e.dsn)) {
        if (k == "host")
            host = v;
        else if (k == "hostaddr")
            hostaddr = v;
        else if (k == "port")
            port = v;
    }
    if (host.empty())
        if (const char *env = std::getenv("PGHOST"))
            host = env;
    if (port.empty())
        if (const char *env = std::getenv("PGPORT"))
            port = env;
    // A list of hosts: the tunnel goes to the first.
    auto first = [](std::string s) { return s.substr(0, s.find(',')); };
    host = first(hostaddr.empty() ? host : hostaddr);
    port = first(port);
    t.port = port.empty() ? 5432 : std::atoi(port.c_str());
    if (t.port <= 0)
        t.port = 5432;
    if (host.empty())
        host = "localhost";
    if (host.front() == '/')
        t.socket = host + "/.s.PGSQL." + std::to_string(t.port);
    else
        t.host = host;
    return t;
}

std::string runtimeDir()
{
    const char *xdg = std::getenv("XDG_RUNTIME_DIR");
    fs::path dir =
        xdg && *xdg ? fs::path(xdg) / "driftless" : fs::path("/tmp") / ("driftless-" + std::to_string(getuid()));
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        throw ConnectionError(ErrorKind::Permanent,
                              "cannot create the tunnel folder " + dir.string() + ": " + std::strerror(errno));
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
        throw ConnectionError(ErrorKind::Permanent,
                              "the tunnel folder " + dir.string() + " is not a folder of this user", {},
                              "remove it, or set XDG_RUNTIME_DIR to a private folder");
    ::chmod(dir.c_str(), 0700);
    return dir.string();
}

std::string expandHome(const std::string &path)
{
    if (path.rfind("~/", 0) != 0)
        return path;
    const char *home = std::getenv("HOME");
    return home ? std::string(home) + path.substr(1) : path;
}

std::string quoted(const std::string &s)
{
    return "\"" + s + "\"";
}

std::string lastLines(const std::string &text, size_t n)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.pop_back();
        if (!line.empty() && line.find("@@@@") == std::string::npos)
            lines.push_back(line);
    }
    std::string out;
    for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
        out += (out.empty() ? "" : " ") + lines[i];
    return out;
}

bool contains(const std::string &s, const char *needle)
{
    return s.find(needle) != std::string::npos;
}

std::string keysText(const std::vector<SshHostKey> &keys)
{
    std::string out;
    for (const auto &k : keys)
        out += (out.empty() ? "" : ", ") + k.label();
    return out.empty() ? "none" : out;
}

/// Whether ssh refused the jump host's key (unknown or changed), not the server's: its complaint
/// names the jump host ("No ED25519 host key is known for [jump]:22", "Host key for jump has
/// changed").
bool jumpKeyRefused(const SshTunnelSpec &t, const std::string &err)
{
    if (!t.jump)
        return false;
    std::optional<SshTunnelSpec> j;
    try {
        j = jumpHostOf(t);
    } catch (const ConfigError &) {
        return false;
    }
    const std::string name = knownHostsName(*j);
    return contains(err, ("host key is known for " + name + " ").c_str()) ||
           contains(err, ("Host key for " + name + " has changed").c_str());
}

/// The ssh client's complaint as an error a DBA can act on.
ConnectionError sshFailure(const Endpoint &e, const std::string &err)
{
    const SshTunnelSpec &t = *e.ssh;
    const std::string server = t.host + ":" + std::to_string(t.port);
    const std::string who = "endpoint '" + e.name + "': ";
    const std::string trustCmd = "driftless-cli trust-host " + e.name;
    if (contains(err, "REMOTE HOST IDENTIFICATION HAS CHANGED")) {
        std::vector<SshHostKey> offered, stored;
        try {
            offered = scanHostKeys(t);
        } catch (const Error &) {
        }
        try {
            stored = trustedHostKeys(t);
        } catch (const Error &) {
        }
        return ConnectionError(ErrorKind::Permanent,
                               who + "the SSH host key of " + server + " has CHANGED: trusted " + keysText(stored) +
                                   ", offered now " + keysText(offered) +
                                   "; Driftless refuses it (someone may be intercepting the connection)",
                               "ssh-host-key-changed",
                               "ask the SSH server's administrator whether its key was replaced; only then run `" +
                                   trustCmd + " --replace` and compare the fingerprint");
    }
    if (jumpKeyRefused(t, err)) {
        // The jump host is reached directly: ssh-keyscan shows its keys.
        const SshTunnelSpec j = *jumpHostOf(t);
        std::vector<SshHostKey> offered, stored;
        try {
            offered = scanHostKeys(j);
        } catch (const Error &) {
        }
        try {
            stored = trustedHostKeys(j);
        } catch (const Error &) {
        }
        const std::string jumpServer = j.host + ":" + std::to_string(j.port);
        if (!stored.empty())
            return ConnectionError(ErrorKind::Permanent,
                                   who + "the SSH host key of the jump host " + jumpServer + " has CHANGED: trusted " +
                                       keysText(stored) + ", offered now " + keysText(offered) +
                                       "; Driftless refuses it (someone may be intercepting the connection)",
                                   "ssh-host-key-changed",
                                   "ask the jump host's administrator whether its key was replaced; only then run `" +
                                       trustCmd + " --jump --replace` and compare the fingerprint");
        return ConnectionError(
            ErrorKind::Permanent,
            who + "the SSH host key of the jump host " + jumpServer + " is not trusted yet (" +
                (offered.empty() ? "it did not show its keys to ssh-keyscan" : "it offers " + keysText(offered)) + ")",
            "ssh-host-key-unknown",
            "run `" + trustCmd +
                " --jump`, check the fingerprint with the jump host's "
                "administrator and confirm");
    }
    if (contains(err, "Host key verification failed") || contains(err, "host key is known")) {
        std::string fingerprint;
        try {
            fingerprint = keysText(scanHostKeys(t));
        } catch (const Error &) {
            fingerprint = "(the server did not show its keys to ssh-keyscan)";
        }
        return ConnectionError(ErrorKind::Permanent,
                               who + "the SSH host key of " + server + " is not trusted yet (it offers " + fingerprint +
                                   ")",
                               "ssh-host-key-unknown",
                               "run `" + trustCmd + "`, check the fingerprint " + fingerprint +
                                   " with the SSH server's administrator and confirm");
    }
    if (contains(err, "Permission denied") && t.identityFile) {
        // A key protected by a passphrase is skipped under BatchMode: say so, not "refused".
        const std::string key = expandHome(*t.identityFile);
        const auto probe = runProcess({"ssh-keygen", "-y", "-P", "", "-f", key}, 15);
        if (probe.exitCode != 0 && contains(probe.err, "passphrase")) {
            if (sshPassphraseFor(e.name))
                return ConnectionError(ErrorKind::Permanent,
                                       who + "the passphrase saved for the identity file " + key +
                                           " does not open it, or the SSH server refused the key: " + lastLines(err, 1),
                                       "ssh-auth",
                                       "save the key's passphrase again in the endpoint's SSH settings (the app "
                                       "keeps it in the keychain), and check that its public key is in the user's "
                                       "authorized_keys on the SSH server");
            return ConnectionError(ErrorKind::Permanent,
                                   who + "the identity file " + key + " is protected by a passphrase and none is known",
                                   "ssh-passphrase",
                                   "save its passphrase in the endpoint's SSH settings in the app (the keychain; "
                                   "driftless-cli reads it there too), or add the key to ssh-agent (ssh-add " +
                                       key + ")");
        }
    }
    if (contains(err, "Permission denied"))
        return ConnectionError(
            ErrorKind::Permanent,
            who + "the SSH server " + server + " refused the login of " + t.user + ": " + lastLines(err, 1), "ssh-auth",
            "check the user, the identity_file (or the keys in the ssh agent) and that the "
            "public key is in the user's authorized_keys on the SSH server");
    if (contains(err, "Connection refused"))
        return ConnectionError(ErrorKind::Transient,
                               who + "the SSH server " + server + " refused the connection (is sshd running?)",
                               "ssh-refused", "start sshd there or fix ssh.host and ssh.port");
    if (contains(err, "Could not resolve hostname"))
        return ConnectionError(ErrorKind::Transient, who + "cannot resolve the SSH host: " + lastLines(err, 1),
                               "ssh-resolve", "fix ssh.host (or ssh.jump)");
    if (contains(err, "forwarding failed") || contains(err, "open failed"))
        return ConnectionError(ErrorKind::Permanent,
                               who + "the SSH server " + server +
                                   " would not forward to the database: " + lastLines(err, 2),
                               "ssh-forward",
                               "allow forwarding for this user on the SSH server (AllowTcpForwarding, "
                               "AllowStreamLocalForwarding)");
    const std::string said = lastLines(err, 2);
    return ConnectionError(ErrorKind::Transient,
                           who + "the SSH tunnel via " + t.display() + " failed" + (said.empty() ? "" : ": " + said),
                           "ssh", "check that the SSH server is reachable from here");
}

class Tunnel {
public:
    std::mutex startMutex; // held while starting: one ssh at a time per endpoint
    std::mutex mutex;      // guards the fields below
    std::string key;       // what the running ssh was started for
    int pid = -1;
    std::string dir, socketPath, logPath;
    bool up = false;
    bool started = false;
    std::string reason;
    std::string via;
    std::int64_t sinceMs = 0;
    int failures = 0;
    std::chrono::steady_clock::time_point nextAttempt{};

    ~Tunnel()
    {
        if (pid > 0)
            stopChild(pid, 500);
        if (!dir.empty()) {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    }

    /// Under `mutex`: notes that the ssh process ended, with what it said.
    void noteDeath()
    {
        if (pid > 0 && !childRunning(pid)) {
            pid = -1;
            if (up) {
                up = false;
                std::ifstream in(logPath);
                std::stringstream ss;
                ss << in.rdbuf();
                const std::string said = lastLines(ss.str(), 1);
                reason = "ssh exited" + (said.empty() ? std::string() : ": " + said);
                sinceMs = wallClockMs();
            }
        }
    }
};

std::mutex g_tunnelsMutex;
std::map<std::string, std::shared_ptr<Tunnel>> g_tunnels;

/// Stops the tunnels at exit, so no ssh outlives the engine.
struct Reaper {
    ~Reaper() { stopAllTunnels(); }
} g_reaper;

std::shared_ptr<Tunnel> tunnelFor(const std::string &name, bool create)
{
    std::lock_guard lock(g_tunnelsMutex);
    auto it = g_tunnels.find(name);
    if (it != g_tunnels.end())
        return it->second;
    if (!create)
        return nullptr;
    auto t = std::make_shared<Tunnel>();
    g_tunnels[name] = t;
    return t;
}

std::string tunnelKey(const Endpoint &e)
{
    const auto &t = *e.ssh;
    const auto r = remoteTarget(e);
    return t.display() + "|" + t.identityFile.value_or("") + "|" + r.host + ":" + std::to_string(r.port) + r.socket +
           "|" + sshKnownHostsFile();
}

std::string readAll(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// A process that exists and is not a zombie waiting to be reaped.
bool processAlive(pid_t pid)
{
    if (pid <= 0 || (::kill(pid, 0) != 0 && errno != EPERM))
        return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

/// The NUL-separated command line of `pid`, or empty.
std::string commandLine(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

/// Removes the socket folders of processes that are gone (killed with SIGKILL, or a crash) and
/// stops the ssh each one left behind, so a killed engine leaves no tunnel open to the bastion.
/// A folder is `<endpoint>.<pid>` and holds `ssh.pid`; its ssh is stopped only when that process
/// is still the ssh that forwards into the folder (its command line names the folder), never
/// another process that reused the number. Once per process.
void sweepStaleFolders(const std::string &base)
{
    static std::once_flag once;
    std::call_once(once, [&] {
        std::error_code ec;
        for (const auto &entry : fs::directory_iterator(base, ec)) {
            const std::string name = entry.path().filename().string();
            const auto dot = name.rfind('.');
            if (dot == std::string::npos || dot + 1 >= name.size() ||
                name.find_first_not_of("0123456789", dot + 1) != std::string::npos)
                continue;
            const pid_t owner = static_cast<pid_t>(std::atol(name.c_str() + dot + 1));
            struct stat st {};
            if (owner == getpid() || processAlive(owner) || ::lstat(entry.path().c_str(), &st) != 0 ||
                !S_ISDIR(st.st_mode) || st.st_uid != getuid())
                continue;
            const pid_t ssh = static_cast<pid_t>(std::atol(readAll(entry.path() / "ssh.pid").c_str()));
            if (processAlive(ssh) && commandLine(ssh).find(entry.path().string() + "/") != std::string::npos) {
                ::kill(ssh, SIGTERM);
                log(LogLevel::Info, "stopped ssh (pid " + std::to_string(ssh) +
                                        ") left behind by a process that is gone, "
                                        "and removed its tunnel folder " +
                                        entry.path().string());
            }
            fs::remove_all(entry.path(), ec);
        }
    });
}

/// The folder of one endpoint's socket: named for the endpoint and this process, so two
/// processes (a running sync and a `doctor`) never unlink each other's socket.
std::string socketFolder(const Endpoint &e)
{
    const std::string base = runtimeDir();
    sweepStaleFolders(base);
    std::string name = e.name + "." + std::to_string(getpid());
    // sun_path holds 108 bytes: keep room for the socket's own name.
    if (base.size() + name.size() + 20 > 100)
        name = "e" + std::to_string(std::hash<std::string>{}(e.name) % 1000000) + "." + std::to_string(getpid());
    const fs::path dir = fs::path(base) / name;
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (::mkdir(dir.c_str(), 0700) != 0)
        throw ConnectionError(ErrorKind::Permanent,
                              "cannot create the tunnel folder " + dir.string() + ": " + std::strerror(errno));
    return dir.string();
}

/// The user's known_hosts files, then Driftless's, quoted for an ssh option.
std::string knownHostsOption()
{
    std::string knownHosts = quoted(sshKnownHostsFile());
    if (const char *home = std::getenv("HOME"))
        knownHosts += " " + quoted(std::string(home) + "/.ssh/known_hosts");
    return knownHosts;
}

/// An ssh configuration for a tunnel through a jump host, passed with -F: ssh hands -F (and not
/// its -o options) to the ssh it starts for the jump, so the jump host is checked as strictly as
/// the server, against the same known_hosts files, and offered the same identity. The user's and
/// the system's configuration are included after it (the first value ssh reads wins).
std::string writeJumpConfig(const SshTunnelSpec &t, const std::string &dir, bool askpass = false)
{
    const std::string path = dir + "/ssh_config";
    std::ofstream out(path);
    out << "# Written by Driftless for one tunnel through a jump host.\n"
           "Host *\n"
        << (askpass ? "  BatchMode no\n  PasswordAuthentication no\n  KbdInteractiveAuthentication no\n"
                    : "  BatchMode yes\n")
        << "  StrictHostKeyChecking yes\n"
           "  UserKnownHostsFile "
        << knownHostsOption() << "\n";
    if (t.identityFile)
        out << "  IdentityFile " << quoted(expandHome(*t.identityFile)) << "\n";
    out << "  Include ~/.ssh/config\n"
           "  Include /etc/ssh/ssh_config\n";
    out.close();
    if (!out)
        throw ConnectionError(ErrorKind::Permanent, "cannot write " + path + ": " + std::strerror(errno));
    ::chmod(path.c_str(), 0600);
    return path;
}

/// `askpass`: the identity file's passphrase comes from the keychain through SSH_ASKPASS, which
/// BatchMode=yes would never ask; no other prompt is allowed (no password or keyboard-interactive
/// login; StrictHostKeyChecking=yes never asks about a key).
std::vector<std::string> sshArgv(const Endpoint &e, const std::string &socketPath, bool askpass)
{
    const auto &t = *e.ssh;
    const auto r = remoteTarget(e);
    std::string target = r.socket;
    if (target.empty())
        target = (r.host.find(':') != std::string::npos ? "[" + r.host + "]" : r.host) + ":" + std::to_string(r.port);
    const std::string knownHosts = knownHostsOption();
    std::vector<std::string> argv = {"ssh", "-N",
                                     "-o",  askpass ? "BatchMode=no" : "BatchMode=yes",
                                     "-o",  "ExitOnForwardFailure=yes",
                                     "-o",  "StrictHostKeyChecking=yes",
                                     "-o",  "UserKnownHostsFile=" + knownHosts,
                                     "-o",  "ServerAliveInterval=15",
                                     "-o",  "ServerAliveCountMax=3",
                                     "-o",  "ConnectTimeout=15",
                                     "-o",  "StreamLocalBindUnlink=yes",
                                     "-o",  "StreamLocalBindMask=0177",
                                     "-L",  socketPath + ":" + target};
    if (askpass)
        for (const char *o :
             {"PasswordAuthentication=no", "KbdInteractiveAuthentication=no", "NumberOfPasswordPrompts=1"})
            argv.insert(argv.end(), {"-o", o});
    if (t.identityFile) {
        argv.push_back("-i");
        argv.push_back(expandHome(*t.identityFile));
    }
    if (t.jump) {
        const std::string config = writeJumpConfig(t, fs::path(socketPath).parent_path().string(), askpass);
        argv.insert(argv.begin() + 1, {"-F", config});
        argv.push_back("-J");
        argv.push_back(*t.jump);
    }
    for (const std::string &a :
         {std::string("-p"), std::to_string(t.port), std::string("-l"), t.user, std::string("--"), t.host})
        argv.push_back(a);
    return argv;
}

/// Starts ssh for `e` and waits until its socket exists; under the tunnel's startMutex.
void start(const Endpoint &e, Tunnel &tun)
{
    std::string dir, socketPath, logPath;
    {
        std::lock_guard lock(tun.mutex);
        if (tun.pid > 0)
            stopChild(tun.pid, 1000);
        tun.pid = -1;
        if (!tun.dir.empty()) {
            std::error_code ec;
            fs::remove_all(tun.dir, ec);
        }
        tun.dir.clear();
    }
    dir = socketFolder(e);
    socketPath = dir + (e.kind == EndpointKind::Mysql ? std::string("/mysql.sock")
                                                      : "/.s.PGSQL." + std::to_string(remoteTarget(e).port));
    logPath = dir + "/ssh.log";
    // A passphrase from the keychain reaches ssh through SSH_ASKPASS: a script in the 0700 folder
    // that prints it from ssh's environment (never a file, never the command line).
    const auto passphrase = e.ssh->identityFile ? sshPassphraseFor(e.name) : std::nullopt;
    std::vector<std::string> env;
    if (passphrase) {
        const std::string askpass = dir + "/askpass";
        std::ofstream(askpass) << "#!/bin/sh\nprintf '%s\\n' \"$DRIFTLESS_SSH_PASSPHRASE\"\n";
        ::chmod(askpass.c_str(), 0700);
        env = {"SSH_ASKPASS=" + askpass, "SSH_ASKPASS_REQUIRE=force", "DRIFTLESS_SSH_PASSPHRASE=" + *passphrase};
    }
    const auto argv = sshArgv(e, socketPath, passphrase.has_value());
    int pid = -1;
    try {
        pid = spawnBackground(argv, logPath, env);
    } catch (const std::runtime_error &err) {
        throw ConnectionError(ErrorKind::Permanent, "endpoint '" + e.name + "': " + err.what(), "ssh",
                              "install the OpenSSH client (openssh-client)");
    }
    // For the sweep of a later process, should this one be killed before it stops ssh.
    std::ofstream(dir + "/ssh.pid") << pid << "\n";
    {
        std::lock_guard lock(tun.mutex);
        tun.pid = pid;
        tun.dir = dir;
        tun.socketPath = socketPath;
        tun.logPath = logPath;
    }
    const auto deadline = std::chrono::steady_clock::now() + kStartLimit;
    while (std::chrono::steady_clock::now() < deadline) {
        struct stat st {};
        if (::stat(socketPath.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && childRunning(pid))
            return;
        if (!childRunning(pid)) {
            std::lock_guard lock(tun.mutex);
            tun.pid = -1;
            throw sshFailure(e, readAll(logPath));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    stopChild(pid, 500);
    std::lock_guard lock(tun.mutex);
    tun.pid = -1;
    throw ConnectionError(ErrorKind::Transient,
                          "endpoint '" + e.name + "': the SSH tunnel via " + e.ssh->display() +
                              " did not come up within 20 s" +
                              (readAll(logPath).empty() ? std::string() : ": " + lastLines(readAll(logPath), 2)),
                          "ssh-timeout", "check that the SSH server answers from here");
}

std::string percentEncodePath(const std::string &s)
{
    static const char *hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~')
            out += static_cast<char>(c);
        else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string typeLabel(const std::string &type)
{
    if (type == "ssh-ed25519")
        return "ED25519";
    if (type.rfind("ecdsa-", 0) == 0)
        return "ECDSA";
    if (type == "ssh-rsa")
        return "RSA";
    if (type == "ssh-dss")
        return "DSA";
    return type;
}

/// SHA256:<base64 without padding> of a key's blob, as ssh prints it.
std::string fingerprintOf(const std::string &blob64)
{
    std::string raw(blob64.size(), '\0');
    const int n =
        EVP_DecodeBlock(reinterpret_cast<unsigned char *>(raw.data()),
                        reinterpret_cast<const unsigned char *>(blob64.data()), static_cast<int>(blob64.size()));
    if (n < 0)
        return {};
    size_t len = static_cast<size_t>(n);
    // EVP_DecodeBlock counts the padding as zero bytes.
    for (auto it = blob64.rbegin(); it != blob64.rend() && *it == '='; ++it)
        --len;
    raw.resize(len);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdLen = 0;
    EVP_Digest(raw.data(), raw.size(), md, &mdLen, EVP_sha256(), nullptr);
    std::string b64(4 * ((mdLen + 2) / 3) + 1, '\0');
    const int m = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(b64.data()), md, static_cast<int>(mdLen));
    b64.resize(static_cast<size_t>(m));
    while (!b64.empty() && b64.back() == '=')
        b64.pop_back();
    return "SHA256:" + b64;
}

/// Key lines (`NAME TYPE BLOB ...`) of known_hosts text, comments and markers skipped.
std::vector<SshHostKey> parseKeyLines(const std::string &text)
{
    std::vector<SshHostKey> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#' || line[0] == '@')
            continue;
        std::istringstream fields(line);
        std::string name, type, blob;
        if (!(fields >> name >> type >> blob))
            continue;
        SshHostKey k{type, blob, fingerprintOf(blob)};
        if (k.fingerprint.empty())
            continue;
        if (std::none_of(out.begin(), out.end(), [&](const SshHostKey &o) { return o.blob == k.blob; }))
            out.push_back(k);
    }
    return out;
}

} // namespace

std::string SshHostKey::label() const
{
    return fingerprint + " (" + typeLabel(type) + ")";
}

EndpointRoute routeTo(const Endpoint &e)
{
    if (!e.ssh || e.kind == EndpointKind::Sqlite)
        return {};
    auto tun = tunnelFor(e.name, true);
    std::lock_guard startLock(tun->startMutex);
    const std::string key = tunnelKey(e);
    {
        std::lock_guard lock(tun->mutex);
        tun->noteDeath();
        if (tun->up && tun->pid > 0 && tun->key == key)
            return {tun->socketPath, tun->dir, "ssh tunnel via " + e.ssh->display()};
        if (tun->key == key && tun->failures > 0 && std::chrono::steady_clock::now() < tun->nextAttempt) {
            const auto left =
                std::chrono::duration_cast<std::chrono::seconds>(tun->nextAttempt - std::chrono::steady_clock::now());
            throw ConnectionError(ErrorKind::Transient,
                                  "endpoint '" + e.name + "': the SSH tunnel is down (" + tun->reason +
                                      "); next attempt in " + std::to_string(left.count() + 1) + " s",
                                  "ssh-down", "");
        }
        if (tun->key != key)
            tun->failures = 0;
        tun->key = key;
        tun->via = e.ssh->display();
        tun->started = true;
    }
    try {
        start(e, *tun);
    } catch (const ConnectionError &err) {
        std::lock_guard lock(tun->mutex);
        const bool changed = tun->up || tun->reason != err.what();
        tun->up = false;
        tun->reason = err.what();
        if (changed)
            tun->sinceMs = wallClockMs();
        const int wait = std::min(kMaxBackoffSeconds, 1 << std::min(tun->failures, 5));
        ++tun->failures;
        tun->nextAttempt = std::chrono::steady_clock::now() + std::chrono::seconds(wait);
        if (changed)
            log(LogLevel::Warn, std::string("ssh tunnel down: ") + err.what());
        throw;
    }
    std::lock_guard lock(tun->mutex);
    tun->up = true;
    tun->reason.clear();
    tun->failures = 0;
    tun->sinceMs = wallClockMs();
    log(LogLevel::Info, "endpoint '" + e.name + "': ssh tunnel up via " + e.ssh->display());
    return {tun->socketPath, tun->dir, "ssh tunnel via " + e.ssh->display()};
}

std::string reachableDsn(const Endpoint &e)
{
    if (!e.ssh)
        return e.dsn;
    const auto route = routeTo(e);
    return e.kind == EndpointKind::Mysql ? mysqlDsnThrough(e, route) : pgDsnThrough(e, route);
}

std::string pgDsnThrough(const Endpoint &e, const EndpointRoute &route)
{
    if (!route.tunneled())
        return e.dsn;
    std::string out = "host=" + pgConninfoValue(route.socketDir);
    // libpq finds the socket as <host>/.s.PGSQL.<port>: the port names it.
    out += " port=" + std::to_string(remoteTarget(e).port);
    for (const auto &[k, v] : parsePgDsn(e.dsn)) {
        if (k == "host" || k == "hostaddr" || k == "port" || k.rfind("ssl", 0) == 0 || k == "requiressl" ||
            k == "gssencmode" || k == "target_session_attrs" || k == "load_balance_hosts")
            continue;
        out += " " + k + "=" + pgConninfoValue(v);
    }
    aliasPgPasswordDsn(out, e.dsn);
    return out;
}

std::string mysqlDsnThrough(const Endpoint &e, const EndpointRoute &route)
{
    if (!route.tunneled())
        return e.dsn;
    // Later options win: the socket, and no TLS on it (the tunnel is the protection).
    std::string out = e.dsn + (e.dsn.find('?') == std::string::npos ? "?" : "&") +
                      "socket=" + percentEncodePath(route.socketPath) + "&ssl-mode=disabled";
    aliasPgPasswordDsn(out, e.dsn);
    return out;
}

std::optional<TunnelState> tunnelState(const std::string &endpoint)
{
    auto tun = tunnelFor(endpoint, false);
    if (!tun)
        return std::nullopt;
    std::lock_guard lock(tun->mutex);
    if (!tun->started)
        return std::nullopt;
    tun->noteDeath();
    return TunnelState{tun->up, tun->reason, tun->via, tun->sinceMs};
}

json tunnelJsonValue(const Endpoint &e)
{
    if (!e.ssh)
        return nullptr;
    json j = {{"via", e.ssh->display()}};
    const auto s = tunnelState(e.name);
    if (!s) {
        j["state"] = "not started";
        j["reason"] = nullptr;
        j["since"] = nullptr;
        return j;
    }
    j["state"] = s->up ? "up" : "down";
    j["reason"] = s->up ? json(nullptr) : json(s->reason);
    j["since"] = s->sinceMs;
    return j;
}

void stopAllTunnels()
{
    std::map<std::string, std::shared_ptr<Tunnel>> all;
    {
        std::lock_guard lock(g_tunnelsMutex);
        all.swap(g_tunnels);
    }
    all.clear(); // each Tunnel stops its ssh
}

void setSshKnownHostsFile(const std::string &path)
{
    std::lock_guard lock(g_knownHostsMutex);
    g_knownHosts = path;
}

std::string sshKnownHostsFile()
{
    std::lock_guard lock(g_knownHostsMutex);
    if (g_knownHosts.empty()) {
        const char *env = std::getenv("DRIFTLESS_STATE");
        g_knownHosts = (env && *env ? std::string(env) : StateStore::defaultPath()) + ".known_hosts";
    }
    return g_knownHosts;
}

std::optional<SshTunnelSpec> jumpHostOf(const SshTunnelSpec &t)
{
    if (!t.jump)
        return std::nullopt;
    std::string rest = *t.jump;
    if (rest.find(',') != std::string::npos || rest.rfind("ssh://", 0) == 0)
        throw ConfigError("the jump '" + rest +
                          "' is a list or an ssh:// address; trust each of its hosts with ssh "
                          "itself (ssh-keyscan HOST >> ~/.ssh/known_hosts, after checking the fingerprints)");
    SshTunnelSpec j;
    j.user = t.user;
    if (const auto at = rest.rfind('@'); at != std::string::npos) {
        j.user = rest.substr(0, at);
        rest = rest.substr(at + 1);
    }
    std::string port;
    if (!rest.empty() && rest.front() == '[') {
        const auto close = rest.find(']');
        if (close == std::string::npos)
            throw ConfigError("the jump '" + *t.jump + "' has no closing ]");
        if (close + 1 < rest.size() && rest[close + 1] == ':')
            port = rest.substr(close + 2);
        rest = rest.substr(1, close - 1);
    } else if (const auto colon = rest.find(':');
               colon != std::string::npos && rest.find(':', colon + 1) == std::string::npos) {
        port = rest.substr(colon + 1);
        rest = rest.substr(0, colon);
    }
    j.host = rest;
    j.port = 22;
    if (!port.empty()) {
        if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoi(port) < 1 ||
            std::stoi(port) > 65535)
            throw ConfigError("the jump '" + *t.jump + "' has a bad port");
        j.port = std::stoi(port);
    }
    if (j.host.empty())
        throw ConfigError("the jump '" + *t.jump + "' names no host");
    return j;
}

std::string knownHostsName(const SshTunnelSpec &t)
{
    return t.port == 22 ? t.host : "[" + t.host + "]:" + std::to_string(t.port);
}

namespace {

/// ssh-keyscan cannot hop through a bastion, so ssh itself connects through the jump host with
/// a known_hosts file of its own, empty, and `StrictHostKeyChecking=accept-new`: it writes the
/// key it was offered there, then offers no authentication (`PreferredAuthentications=none`), is
/// refused and exits. Nothing is trusted by this: the key is only shown. The jump host's own key
/// is checked by ssh's usual rules, as the tunnel checks it.
std::vector<SshHostKey> scanHostKeysThroughJump(const SshTunnelSpec &t)
{
    char tmpl[] = "/tmp/driftless-keyscan-XXXXXX";
    if (!::mkdtemp(tmpl))
        throw Error(ErrorKind::Permanent, std::string("cannot create a temporary folder: ") + std::strerror(errno));
    const std::string dir = tmpl;
    const std::string file = dir + "/known_hosts";
    struct RemoveDir {
        std::string path;
        ~RemoveDir()
        {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
    } cleanup{dir};
    const auto r = runProcess({"ssh",
                               "-F",
                               writeJumpConfig(t, dir),
                               "-N",
                               "-o",
                               "BatchMode=yes",
                               "-o",
                               "StrictHostKeyChecking=accept-new",
                               "-o",
                               "UserKnownHostsFile=" + quoted(file),
                               "-o",
                               "GlobalKnownHostsFile=/dev/null",
                               "-o",
                               "PreferredAuthentications=none",
                               "-o",
                               "ConnectTimeout=15",
                               "-J",
                               *t.jump,
                               "-p",
                               std::to_string(t.port),
                               "-l",
                               t.user,
                               "--",
                               t.host},
                              40);
    auto keys = parseKeyLines(readAll(file));
    if (keys.empty()) {
        const std::string err = lastLines(r.err, 2);
        const bool jumpKey = jumpKeyRefused(t, r.err);
        throw ConnectionError(
            ErrorKind::Transient,
            "the SSH server " + t.host + ":" + std::to_string(t.port) + " showed no host key through " +
                "the jump host " + *t.jump + (err.empty() ? "" : ": " + err),
            "ssh-keyscan",
            jumpKey ? "the jump host's own key is not trusted: run `driftless-cli trust-host "
                      "ENDPOINT --jump` and compare its fingerprint"
                    : "check that the jump host answers and may forward to " + t.host + ":" + std::to_string(t.port));
    }
    return keys;
}

} // namespace

std::vector<SshHostKey> scanHostKeys(const SshTunnelSpec &t)
{
    if (t.jump)
        return scanHostKeysThroughJump(t);
    const auto r = runProcess({"ssh-keyscan", "-T", "10", "-p", std::to_string(t.port), "--", t.host}, 30);
    auto keys = parseKeyLines(r.out);
    if (keys.empty())
        throw ConnectionError(ErrorKind::Transient,
                              "the SSH server " + t.host + ":" + std::to_string(t.port) + " showed no host key" +
                                  (lastLines(r.err, 1).empty() ? "" : ": " + lastLines(r.err, 1)),
                              "ssh-keyscan", "check that sshd runs there and answers from this machine");
    return keys;
}

std::vector<SshHostKey> trustedHostKeys(const SshTunnelSpec &t)
{
    std::vector<std::string> files = {sshKnownHostsFile()};
    if (const char *home = std::getenv("HOME"))
        files.push_back(std::string(home) + "/.ssh/known_hosts");
    std::vector<SshHostKey> out;
    for (const auto &f : files) {
        if (!fs::exists(f))
            continue;
        // ssh-keygen -F also finds hashed entries.
        const auto r = runProcess({"ssh-keygen", "-F", knownHostsName(t), "-f", f}, 15);
        for (auto &k : parseKeyLines(r.out))
            if (std::none_of(out.begin(), out.end(), [&](const SshHostKey &o) { return o.blob == k.blob; }))
                out.push_back(k);
    }
    return out;
}

void trustHostKeys(const SshTunnelSpec &t, const std::vector<SshHostKey> &keys, bool replace)
{
    const std::string file = sshKnownHostsFile();
    const fs::path parent = fs::path(file).parent_path();
    std::error_code ec;
    if (!parent.empty())
        fs::create_directories(parent, ec);
    if (replace && fs::exists(file)) {
        const auto r = runProcess({"ssh-keygen", "-R", knownHostsName(t), "-f", file}, 15);
        if (r.exitCode != 0)
            throw Error(ErrorKind::Permanent, "cannot remove the old keys of " + knownHostsName(t) + " from " + file +
                                                  ": " + lastLines(r.err, 1));
        fs::remove(file + ".old", ec);
    }
    std::ofstream out(file, std::ios::app);
    if (!out)
        throw Error(ErrorKind::Permanent, "cannot write " + file + ": " + std::strerror(errno));
    for (const auto &k : keys)
        out << knownHostsName(t) << ' ' << k.type << ' ' << k.blob << '\n';
    out.close();
    ::chmod(file.c_str(), 0600);
    if (!out)
        throw Error(ErrorKind::Permanent, "cannot write " + file);
    // A key just trusted changes what the next attempt can do: it must not wait out the backoff
    // the refused key started (the app tests the connection again at once).
    std::lock_guard lock(g_tunnelsMutex);
    for (auto &[name, tun] : g_tunnels) {
        std::lock_guard tunLock(tun->mutex);
        if (!tun->up)
            tun->failures = 0;
    }
}

} // namespace driftless::core
