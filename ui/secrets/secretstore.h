#pragma once

#include "core/model/workspace.h"

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

namespace driftless::ui {

/// The passwords of a workspace's endpoints, one per endpoint name: in the OS keychain
/// (QtKeychain, service "Driftless") when the desktop has one, and in this process's memory for
/// the session. Without a keychain (no Secret Service on the session bus) a password lives in
/// memory only, until the app quits: the user is asked once per session. Passwords never go to
/// the workspace file, QSettings, YAML or the log.
///
/// The engine knows endpoints by DSN, so the store also keeps each server endpoint's DSN
/// (setWorkspace()) and, once installAsPasswordProvider() was called, answers
/// core::pgPasswordFor() from memory: libpq, and MysqlConnection through core::mysqlPasswordFor(),
/// get the password as a connect-time parameter only.
///
/// Thread affinity: a UI-thread object. Keychain jobs are asynchronous and report through the
/// signals; nothing here waits. sessionPassword() and the provider read memory under a lock and
/// may be called from any thread.
class SecretStore final : public QObject {
    Q_OBJECT
public:
    static constexpr const char *kService = "Driftless";

    /// Where passwords can go. Unknown until the first keychain job answered.
    enum class Backend { Unknown, Keychain, SessionOnly };
    Q_ENUM(Backend)

    explicit SecretStore(QObject *parent = nullptr);
    ~SecretStore() override;

    Backend backend() const { return m_backend; }
    /// Keeps `password` for this session and writes it to the keychain; stored() says where it went.
    void store(const QString &endpoint, const QString &password);
    /// Looks in memory, then in the keychain (once per endpoint and session); passwordRead().
    void read(const QString &endpoint);
    /// Forgets the password in memory and deletes it from the keychain.
    void remove(const QString &endpoint);
    /// True while a keychain read is under way: connections made meanwhile would go without the
    /// password the keychain is about to give (the app's first slot reading and Start Sync
    /// wait for it).
    bool reading() const { return m_reading > 0; }
    /// The password known in memory for `endpoint`, if any. Any thread.
    std::optional<QString> sessionPassword(const QString &endpoint) const;

    /// Whether `e` has a password to keep: Postgres and MySQL/MariaDB servers, not SQLite files.
    static bool takesPassword(const core::Endpoint &e);
    /// Binds each server endpoint's DSN (Postgres and MySQL) to its name for the provider, and
    /// reads from the keychain the passwords of endpoints not read yet this session.
    void setWorkspace(const core::Workspace &workspace);
    /// Makes this store the process's core::PgPasswordProvider, its SshPassphraseProvider
    /// (sshPassphraseKey()) and its MaskKeyProvider (maskKeyKey()), until it is destroyed.
    void installAsPasswordProvider();
    /// The item an SSH tunnel's identity-file passphrase is kept under, beside the endpoint's
    /// password: `ssh-passphrase:<endpoint>` (driftless-cli reads the same item).
    static QString sshPassphraseKey(const QString &endpoint);
    /// The item a hash mask's HMAC key (`key: keychain`) is kept under: `hmac:<schema.table>`.
    /// Read for the workspace's tables by setWorkspace(); answers core's MaskKeyProvider.
    static QString maskKeyKey(const QString &table);

signals:
    /// `inKeychain` false: kept for this session only; `message` says why (no keychain, denied).
    void stored(const QString &endpoint, bool inKeychain, const QString &message);
    /// `found` false: neither memory nor the keychain holds one; `message` says why when the
    /// keychain could not be asked.
    void passwordRead(const QString &endpoint, bool found, const QString &message);
    void removed(const QString &endpoint);
    void backendChanged(driftless::ui::SecretStore::Backend backend);
    /// reading() changed.
    void readingChanged(bool reading);

private:
    /// Shared with the provider, which may outlive this object on a connecting thread.
    struct Memory {
        mutable std::mutex mutex;
        std::map<QString, QString> passwords; ///< endpoint name -> password
        std::map<std::string, QString> names; ///< Postgres or MySQL DSN -> endpoint name
    };

    void keep(const QString &endpoint, const QString &password);
    void setBackend(Backend backend);
    /// True when the job's failure means there is no usable keychain on this desktop.
    static bool noKeychain(int error);

    std::shared_ptr<Memory> m_memory;
    Backend m_backend = Backend::Unknown;
    std::set<QString> m_asked; ///< endpoints whose keychain entry was read this session
    bool m_provider = false;
    int m_reading = 0; ///< keychain reads under way
};

} // namespace driftless::ui
