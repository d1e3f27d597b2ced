#include "app/cli/keychain.h"

#include "core/base/log.h"
#include "core/base/passwordprovider.h"
#include "core/engine/rows/columnmapping.h"

#include <qt6keychain/keychain.h>

#include <QCoreApplication>
#include <QEventLoop>
#include <QTimer>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace driftless::cli {

namespace {

constexpr auto kBudget = std::chrono::seconds(5);

/// One item, or nullopt when there is none or the keychain did not answer in time.
std::optional<std::string> readItem(const std::string &endpoint, std::chrono::milliseconds left)
{
    auto *job = new QKeychain::ReadPasswordJob(QLatin1String(kKeychainService));
    job->setAutoDelete(false);
    job->setKey(QString::fromStdString(endpoint));
    bool finished = false;
    QEventLoop loop;
    QObject::connect(job, &QKeychain::Job::finished, &loop, [&] {
        finished = true;
        loop.quit();
    });
    QTimer::singleShot(left, &loop, &QEventLoop::quit);
    job->start();
    loop.exec();
    if (!finished) {
        // Still waiting on the Secret Service: the job is left to it (deleting it under a pending
        // call is not safe), and this process does without.
        QObject::disconnect(job, nullptr, &loop, nullptr);
        core::log(core::LogLevel::Warn, "the keychain did not answer for endpoint " + endpoint +
                                            " in time (locked?): using libpq's and the connector's own passwords");
        return std::nullopt;
    }
    const std::unique_ptr<QKeychain::ReadPasswordJob> done(job);
    if (job->error() == QKeychain::NoError)
        return job->textData().toStdString();
    if (job->error() != QKeychain::EntryNotFound)
        core::log(core::LogLevel::Debug, "keychain: " + job->errorString().toStdString());
    return std::nullopt;
}

} // namespace

std::vector<std::string> useKeychainPasswords(const core::Workspace &ws)
{
    std::vector<std::string> found;
    const char *bus = std::getenv("DBUS_SESSION_BUS_ADDRESS");
    const char *off = std::getenv("DRIFTLESS_KEYCHAIN");
    if (!bus || !*bus || (off && std::string(off) == "0"))
        return found;
    std::vector<const core::Endpoint *> wanted;
    for (const auto &[name, e] : ws.endpoints)
        if (e.kind != core::EndpointKind::Sqlite)
            wanted.push_back(&e);
    // Tables whose hash mask takes its HMAC key from the keychain: item `hmac:<table>`.
    std::set<std::string> hmacTables;
    for (const auto &p : ws.pipelines)
        for (const auto &t : p.tables)
            if (t.columns)
                for (const auto &[col, mask] : t.columns->mask)
                    if (mask.kind == core::ColumnMask::Kind::Hash && mask.key == "keychain")
                        hmacTables.insert(t.table.display());
    if (wanted.empty() && hmacTables.empty())
        return found;

    // QtKeychain answers through an event loop: a short-lived application when the command has
    // none of its own yet (serve makes its own afterwards).
    std::unique_ptr<QCoreApplication> app;
    static int argc = 1;
    static char name[] = "driftless-cli";
    static char *argv[] = {name, nullptr};
    if (!QCoreApplication::instance())
        app = std::make_unique<QCoreApplication>(argc, argv);

    auto passwords = std::make_shared<std::map<std::string, std::string>>(); // by DSN
    const auto deadline = std::chrono::steady_clock::now() + kBudget;
    for (const core::Endpoint *e : wanted) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            break;
        if (auto password = readItem(e->name, left)) {
            (*passwords)[e->dsn] = *password;
            found.push_back(e->name);
        }
    }
    // The passphrase of an SSH tunnel's identity file, saved by the app as ssh-passphrase:<endpoint>.
    auto passphrases = std::make_shared<std::map<std::string, std::string>>(); // by endpoint
    for (const core::Endpoint *e : wanted) {
        if (!e->ssh || !e->ssh->identityFile)
            continue;
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            break;
        if (auto passphrase = readItem(std::string(kSshPassphrasePrefix) + e->name, left))
            (*passphrases)[e->name] = *passphrase;
    }
    if (!passphrases->empty())
        core::setSshPassphraseProvider([passphrases](const std::string &endpoint) -> std::optional<std::string> {
            auto it = passphrases->find(endpoint);
            return it == passphrases->end() ? std::nullopt : std::optional<std::string>(it->second);
        });
    auto keys = std::make_shared<std::map<std::string, std::string>>(); // by table
    for (const auto &table : hmacTables) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            break;
        if (auto key = readItem(std::string(kHmacKeyPrefix) + table, left))
            (*keys)[table] = *key;
    }
    if (!keys->empty())
        core::setMaskKeyProvider([keys](const std::string &table) -> std::optional<std::string> {
            auto it = keys->find(table);
            return it == keys->end() ? std::nullopt : std::optional<std::string>(it->second);
        });
    if (!passwords->empty())
        core::setPgPasswordProvider([passwords](const std::string &dsn) -> std::optional<std::string> {
            auto it = passwords->find(dsn);
            return it == passwords->end() ? std::nullopt : std::optional<std::string>(it->second);
        });
    return found;
}

} // namespace driftless::cli
