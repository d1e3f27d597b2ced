#include "core/agent/agentauth.h"

#include "core/model/error.h"

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace driftless::core {

namespace {

std::string readWhole(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(ErrorKind::Permanent, "cannot read " + path + ": " + std::strerror(errno));
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Refuses a secret file others may read, as ssh does.
void checkPrivate(const std::string &path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw Error(ErrorKind::Permanent, "cannot read " + path + ": " + std::strerror(errno));
    if ((st.st_mode & 077) != 0)
        throw Error(ErrorKind::Permanent, path + " may be read by other users", {},
                    "run 'chmod 600 " + path + "' (or delete it to have a new one made)");
}

/// Writes `content` to `path` through a temporary file made with `mode`, renamed into place:
/// a reader sees the old file or the new one, never half of one, and never looser permissions.
void writeAtomically(const std::string &path, const std::string &content, mode_t mode)
{
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    ::unlink(tmp.c_str());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        throw Error(ErrorKind::Permanent, "cannot write " + path + ": " + std::strerror(errno));
    ::fchmod(fd, mode); // the umask does not loosen or tighten what is asked for
    size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int err = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            throw Error(ErrorKind::Permanent, "cannot write " + path + ": " + std::strerror(err));
        }
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw Error(ErrorKind::Permanent, "cannot write " + path + ": " + std::strerror(err));
    }
}

std::string hex(const unsigned char *p, size_t n, const char *separator = "", bool upper = false)
{
    static const char *lower = "0123456789abcdef", *upperDigits = "0123456789ABCDEF";
    const char *digits = upper ? upperDigits : lower;
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        if (i)
            s += separator;
        s += digits[p[i] >> 4];
        s += digits[p[i] & 0xf];
    }
    return s;
}

std::string sslError(const std::string &what)
{
    return what + " (OpenSSL: " + std::to_string(ERR_get_error()) + ")";
}

struct Free {
    void operator()(EVP_PKEY *p) const { EVP_PKEY_free(p); }
    void operator()(X509 *p) const { X509_free(p); }
    void operator()(BIO *p) const { BIO_free(p); }
    void operator()(X509_EXTENSION *p) const { X509_EXTENSION_free(p); }
};

std::string bioText(BIO *bio)
{
    char *data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<size_t>(n));
}

std::unique_ptr<X509, Free> parseCertificate(const std::string &pem)
{
    std::unique_ptr<BIO, Free> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    std::unique_ptr<X509, Free> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    return cert;
}

std::string fingerprintOf(X509 *cert)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (X509_digest(cert, EVP_sha256(), md, &n) != 1)
        throw Error(ErrorKind::Permanent, sslError("cannot hash the certificate"));
    return hex(md, n, ":", true);
}

void addExtension(X509 *cert, int nid, const std::string &value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
    std::unique_ptr<X509_EXTENSION, Free> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
    if (!ext || X509_add_ext(cert, ext.get(), -1) != 1)
        throw Error(ErrorKind::Permanent, sslError("cannot make the agent's certificate (" + value + ")"));
}

std::string hostName()
{
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0)
        return {};
    std::string s = name;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.'))
            return {};
    return s;
}

AgentCertificate makeCertificate()
{
    std::unique_ptr<EVP_PKEY, Free> key(EVP_EC_gen("P-256"));
    if (!key)
        throw Error(ErrorKind::Permanent, sslError("cannot make a key for the agent's certificate"));
    std::unique_ptr<X509, Free> cert(X509_new());
    X509_set_version(cert.get(), 2);
    unsigned char serial[16];
    if (RAND_bytes(serial, sizeof serial) != 1)
        throw Error(ErrorKind::Permanent, sslError("no random bytes for the certificate's serial"));
    serial[0] &= 0x7f; // positive
    BIGNUM *bn = BN_bin2bn(serial, sizeof serial, nullptr);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
    BN_free(bn);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600); // a client whose clock is a little behind
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
    X509_set_pubkey(cert.get(), key.get());
    const std::string host = hostName();
    X509_NAME *name = X509_get_subject_name(cert.get());
    const std::string cn = "Driftless agent" + (host.empty() ? std::string() : " on " + host);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char *>(cn.c_str()), -1, -1,
                               0);
    X509_set_issuer_name(cert.get(), name);
    addExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE");
    addExtension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign");
    addExtension(cert.get(), NID_ext_key_usage, "serverAuth");
    addExtension(cert.get(), NID_subject_key_identifier, "hash");
    std::string san = "DNS:localhost,IP:127.0.0.1,IP:::1";
    if (!host.empty() && host != "localhost")
        san += ",DNS:" + host;
    addExtension(cert.get(), NID_subject_alt_name, san);
    if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0)
        throw Error(ErrorKind::Permanent, sslError("cannot sign the agent's certificate"));

    AgentCertificate out;
    std::unique_ptr<BIO, Free> certBio(BIO_new(BIO_s_mem())), keyBio(BIO_new(BIO_s_mem()));
    if (PEM_write_bio_X509(certBio.get(), cert.get()) != 1 ||
        PEM_write_bio_PrivateKey(keyBio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
        throw Error(ErrorKind::Permanent, sslError("cannot write the agent's certificate"));
    out.certificatePem = bioText(certBio.get());
    out.keyPem = bioText(keyBio.get());
    out.fingerprint = fingerprintOf(cert.get());
    out.created = true;
    return out;
}

} // namespace

AgentFiles AgentFiles::beside(const std::string &statePath)
{
    return {statePath + ".agent-token", statePath + ".agent.crt", statePath + ".agent.key"};
}

std::string readAgentToken(const std::string &path)
{
    if (!std::filesystem::exists(path))
        return {};
    checkPrivate(path);
    std::string s = readWhole(path);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
        s.pop_back();
    if (s.size() < 32)
        throw Error(ErrorKind::Permanent, path + " does not hold an agent token", {},
                    "run 'driftless-cli agent-token --rotate' to make a new one");
    return s;
}

std::string rotateAgentToken(const std::string &path)
{
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
        throw Error(ErrorKind::Permanent, sslError("no random bytes for the agent token"));
    const std::string token = hex(bytes, sizeof bytes);
    writeAtomically(path, token + "\n", 0600);
    return token;
}

std::string ensureAgentToken(const std::string &path)
{
    if (auto t = readAgentToken(path); !t.empty())
        return t;
    return rotateAgentToken(path);
}

bool agentTokenMatches(const std::string &token, const std::string &presented)
{
    if (token.empty() || presented.size() != token.size())
        return false;
    return CRYPTO_memcmp(token.data(), presented.data(), token.size()) == 0;
}

std::string certificateFingerprint(const std::string &certificatePem)
{
    auto cert = parseCertificate(certificatePem);
    if (!cert)
        throw Error(ErrorKind::Permanent, "not a PEM certificate");
    return fingerprintOf(cert.get());
}

AgentCertificate loadAgentCertificate(const std::string &certificatePath, const std::string &keyPath)
{
    AgentCertificate out;
    out.certificatePem = readWhole(certificatePath);
    out.keyPem = readWhole(keyPath);
    checkPrivate(keyPath);
    auto cert = parseCertificate(out.certificatePem);
    if (!cert)
        throw Error(ErrorKind::Permanent, certificatePath + " is not a PEM certificate", {},
                    "give --cert a certificate in PEM form (-----BEGIN CERTIFICATE-----)");
    std::unique_ptr<BIO, Free> bio(BIO_new_mem_buf(out.keyPem.data(), static_cast<int>(out.keyPem.size())));
    std::unique_ptr<EVP_PKEY, Free> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!key)
        throw Error(ErrorKind::Permanent, keyPath + " is not an unencrypted PEM private key", {},
                    "give --key the certificate's private key in PEM form, without a passphrase");
    if (X509_check_private_key(cert.get(), key.get()) != 1)
        throw Error(ErrorKind::Permanent, keyPath + " is not the key of " + certificatePath, {},
                    "give --key the private key that belongs to the certificate");
    out.fingerprint = fingerprintOf(cert.get());
    return out;
}

AgentCertificate ensureAgentCertificate(const AgentFiles &files)
{
    if (std::filesystem::exists(files.certificate) && std::filesystem::exists(files.key))
        return loadAgentCertificate(files.certificate, files.key);
    AgentCertificate made = makeCertificate();
    writeAtomically(files.key, made.keyPem, 0600);
    writeAtomically(files.certificate, made.certificatePem, 0644);
    return made;
}

int FailureLimiter::lockedFor(const std::string &address, Clock::time_point now)
{
    std::lock_guard lock(m_mutex);
    auto it = m_entries.find(address);
    if (it == m_entries.end() || it->second.lockedUntil <= now)
        return 0;
    return static_cast<int>(std::chrono::ceil<std::chrono::seconds>(it->second.lockedUntil - now).count());
}

bool FailureLimiter::failed(const std::string &address, Clock::time_point now)
{
    std::lock_guard lock(m_mutex);
    if (m_entries.size() > 10000) // a flood of addresses: forget those no longer locked out
        std::erase_if(m_entries, [&](const auto &e) { return e.second.lockedUntil <= now; });
    Entry &e = m_entries[address];
    if (e.failures == 0 || now - e.first > m_window) {
        e.failures = 0;
        e.first = now;
    }
    if (++e.failures < m_limit)
        return false;
    e.failures = 0;
    e.lockedUntil = now + m_window;
    return true;
}

void FailureLimiter::succeeded(const std::string &address)
{
    std::lock_guard lock(m_mutex);
    m_entries.erase(address);
}

} // namespace driftless::core
