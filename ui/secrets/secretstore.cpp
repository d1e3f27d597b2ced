#include "ui/secrets/secretstore.h"

#include "core/base/passwordprovider.h"
#include "core/engine/rows/columnmapping.h"

#include <qt6keychain/keychain.h>

#include <QMetaObject>

namespace driftless::ui {

namespace {

QString noKeychainMessage(const QString &detail)
{
    return SecretStore::tr("no keychain on this desktop (%1): kept in memory until Driftless quits").arg(detail);
}

/// A job that outlives this store: the Secret Service backend calls back into the job when the
/// keychain answers, so a job deleted with its parent while that call is pending is a use after
/// free (the app closed, or a window and its store went, while the keychain was slow). The job has
/// no parent and deletes itself once finished; connections made with the store as context go with
/// the store.
template <typename Job> Job *newJob()
{
    auto *job = new Job(QLatin1String(SecretStore::kService));
    job->setAutoDelete(true);
    return job;
}

} // namespace

SecretStore::SecretStore(QObject *parent) : QObject(parent), m_memory(std::make_shared<Memory>()) {}

SecretStore::~SecretStore()
{
    if (m_provider) {
        core::setPgPasswordProvider({});
        core::setSshPassphraseProvider({});
        core::setMaskKeyProvider({});
    }
}

bool SecretStore::takesPassword(const core::Endpoint &e)
{
    return e.kind == core::EndpointKind::Postgres || e.kind == core::EndpointKind::Mysql;
}

bool SecretStore::noKeychain(int error)
{
    return error == QKeychain::NoBackendAvailable || error == QKeychain::NotImplemented ||
           error == QKeychain::OtherError;
}

void SecretStore::setBackend(Backend backend)
{
    if (m_backend == backend)
        return;
    m_backend = backend;
    emit backendChanged(backend);
}

void SecretStore::keep(const QString &endpoint, const QString &password)
{
    std::lock_guard lock(m_memory->mutex);
    m_memory->passwords[endpoint] = password;
}

std::optional<QString> SecretStore::sessionPassword(const QString &endpoint) const
{
    std::lock_guard lock(m_memory->mutex);
    const auto it = m_memory->passwords.find(endpoint);
    if (it == m_memory->passwords.end())
        return std::nullopt;
    return it->second;
}

void SecretStore::store(const QString &endpoint, const QString &password)
{
    keep(endpoint, password);
    m_asked.insert(endpoint);
    if (m_backend == Backend::SessionOnly) {
        QMetaObject::invokeMethod(
            this, [this, endpoint] { emit stored(endpoint, false, noKeychainMessage(tr("checked earlier"))); },
            Qt::QueuedConnection);
        return;
    }
    auto *job = newJob<QKeychain::WritePasswordJob>();
    job->setKey(endpoint);
    job->setTextData(password);
    connect(job, &QKeychain::Job::finished, this, [this, endpoint](QKeychain::Job *j) {
        if (j->error() == QKeychain::NoError) {
            setBackend(Backend::Keychain);
            emit stored(endpoint, true, QString());
        } else if (noKeychain(j->error())) {
            setBackend(Backend::SessionOnly);
            emit stored(endpoint, false, noKeychainMessage(j->errorString()));
        } else {
            emit stored(endpoint, false,
                        tr("the keychain refused it (%1): kept in memory until Driftless quits").arg(j->errorString()));
        }
    });
    job->start();
}

void SecretStore::read(const QString &endpoint)
{
    const bool known = sessionPassword(endpoint).has_value();
    if (known || m_backend == Backend::SessionOnly || m_asked.count(endpoint)) {
        QMetaObject::invokeMethod(
            this, [this, endpoint, known] { emit passwordRead(endpoint, known, QString()); }, Qt::QueuedConnection);
        return;
    }
    m_asked.insert(endpoint);
    auto *job = newJob<QKeychain::ReadPasswordJob>();
    job->setKey(endpoint);
    if (m_reading++ == 0)
        emit readingChanged(true);
    connect(job, &QKeychain::Job::finished, this, [this, endpoint](QKeychain::Job *j) {
        // Said last, once the password is in memory: whoever waited connects with it.
        struct Done {
            SecretStore *store;
            ~Done()
            {
                if (--store->m_reading == 0)
                    emit store->readingChanged(false);
            }
        } done{this};
        const auto *r = static_cast<QKeychain::ReadPasswordJob *>(j);
        if (r->error() == QKeychain::NoError) {
            setBackend(Backend::Keychain);
            // Typed this session while the keychain answered: the newer one wins.
            if (!sessionPassword(endpoint))
                keep(endpoint, r->textData());
            emit passwordRead(endpoint, true, QString());
        } else if (r->error() == QKeychain::EntryNotFound) {
            setBackend(Backend::Keychain);
            emit passwordRead(endpoint, sessionPassword(endpoint).has_value(), QString());
        } else {
            if (noKeychain(r->error()))
                setBackend(Backend::SessionOnly);
            emit passwordRead(endpoint, sessionPassword(endpoint).has_value(),
                              tr("cannot read the keychain: %1").arg(r->errorString()));
        }
    });
    job->start();
}

void SecretStore::remove(const QString &endpoint)
{
    {
        std::lock_guard lock(m_memory->mutex);
        m_memory->passwords.erase(endpoint);
    }
    m_asked.erase(endpoint);
    if (m_backend == Backend::SessionOnly) {
        QMetaObject::invokeMethod(
            this, [this, endpoint] { emit removed(endpoint); }, Qt::QueuedConnection);
        return;
    }
    auto *job = newJob<QKeychain::DeletePasswordJob>();
    job->setKey(endpoint);
    connect(job, &QKeychain::Job::finished, this, [this, endpoint](QKeychain::Job *j) {
        if (noKeychain(j->error()))
            setBackend(Backend::SessionOnly);
        emit removed(endpoint);
    });
    job->start();
}

void SecretStore::setWorkspace(const core::Workspace &workspace)
{
    {
        std::lock_guard lock(m_memory->mutex);
        m_memory->names.clear();
        for (const auto &[name, e] : workspace.endpoints)
            if (takesPassword(e))
                m_memory->names[e.dsn] = QString::fromStdString(name);
    }
    for (const auto &[name, e] : workspace.endpoints) {
        if (takesPassword(e) && !m_asked.count(QString::fromStdString(name)))
            read(QString::fromStdString(name));
        const QString passphrase = sshPassphraseKey(QString::fromStdString(name));
        if (takesPassword(e) && e.ssh && e.ssh->identityFile && !m_asked.count(passphrase))
            read(passphrase);
    }
    // The HMAC keys of hash masks that name `key: keychain` (driftless-cli reads the same items).
    for (const auto &p : workspace.pipelines)
        for (const auto &t : p.tables)
            if (t.columns)
                for (const auto &[column, mask] : t.columns->mask) {
                    const QString key = maskKeyKey(QString::fromStdString(t.table.display()));
                    if (mask.kind == core::ColumnMask::Kind::Hash && mask.key == "keychain" && !m_asked.count(key))
                        read(key);
                }
}

QString SecretStore::maskKeyKey(const QString &table)
{
    return QStringLiteral("hmac:") + table;
}

QString SecretStore::sshPassphraseKey(const QString &endpoint)
{
    return QStringLiteral("ssh-passphrase:") + endpoint;
}

void SecretStore::installAsPasswordProvider()
{
    m_provider = true;
    core::setPgPasswordProvider([memory = m_memory](const std::string &dsn) -> std::optional<std::string> {
        std::lock_guard lock(memory->mutex);
        const auto name = memory->names.find(dsn);
        if (name == memory->names.end())
            return std::nullopt;
        const auto password = memory->passwords.find(name->second);
        if (password == memory->passwords.end())
            return std::nullopt;
        return password->second.toStdString();
    });
    core::setMaskKeyProvider([memory = m_memory](const std::string &table) -> std::optional<std::string> {
        std::lock_guard lock(memory->mutex);
        const auto it = memory->passwords.find(maskKeyKey(QString::fromStdString(table)));
        if (it == memory->passwords.end())
            return std::nullopt;
        return it->second.toStdString();
    });
    core::setSshPassphraseProvider([memory = m_memory](const std::string &endpoint) -> std::optional<std::string> {
        std::lock_guard lock(memory->mutex);
        const auto it = memory->passwords.find(sshPassphraseKey(QString::fromStdString(endpoint)));
        if (it == memory->passwords.end())
            return std::nullopt;
        return it->second.toStdString();
    });
}

} // namespace driftless::ui
