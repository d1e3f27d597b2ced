// Endpoint passwords through a real OS keychain: a private D-Bus session bus and
// gnome-keyring-daemon (the Secret Service most Linux desktops run), with a login keyring unlocked
// from a password on stdin, under a temporary HOME so the developer's keyring is never touched.
// SecretStore writes through QtKeychain (libsecret); a new store, as after a restart, reads the
// password back; secret-tool, a separate libsecret client, sees the item appear and disappear.
// Then the app as a user drives it: the endpoint dialog's save lands in the keychain, a restarted
// window reads it from there and its engine syncs from Postgres as a role that only that password
// admits, driftless-cli run reads the same item and syncs with it too, and the password is in no
// file the app wrote: not the workspace file, not QSettings, not the log. tst_workspacepage
// covers the desktop without a keychain.

#include "ui/dialogs/endpointdialog.h"
#include "ui/enginebridge.h"
#include "ui/mainwindow.h"
#include "ui/models/endpointsmodel.h"
#include "ui/models/eventsmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/tablespage.h"
#include "ui/pages/workspacepage.h"
#include "ui/secrets/secretstore.h"

#include "core/base/log.h"
#include "core/db/pgconnection.h"
#include "core/db/sqlitedb.h"
#include "core/model/workspace.h"
#include "core/state/statestore.h"
#include "tests/support/guisupport.h"
#include "tests/support/testsupport.h"

#include <QAction>
#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusVariant>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QLabel>
#include <QLibrary>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>

#include <csignal>
#include <sys/prctl.h>

using namespace driftless;
using driftless::test::fillPostgres;
using driftless::ui::EndpointDialog;
using driftless::ui::EndpointsModel;
using driftless::ui::MainWindow;
using driftless::ui::SecretStore;

namespace {

const char *kInstallHint = "run packaging/install-deps.sh (CI installs it)";
const char *kProbeConnection = "tst_keychain_probe";

/// Dies with the test process, even when the watchdog aborts it before any destructor runs.
void dieWithParent()
{
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/// A private session bus and a gnome-keyring-daemon on it, under a temporary HOME (keyrings in
/// its XDG_DATA_HOME, the control socket in its XDG_RUNTIME_DIR). start() points this process's
/// HOME, XDG_* and DBUS_SESSION_BUS_ADDRESS there; QtKeychain picks its backend once per process,
/// so that must happen before the first keychain job. Both daemons are stopped by stop() or the
/// destructor, and killed by the kernel if the test process dies first.
class PrivateKeyring {
public:
    ~PrivateKeyring() { stop(); }

    /// Empty when the keyring is up and unlocked; otherwise what went wrong.
    QString start()
    {
        for (const char *tool : {"dbus-daemon", "gnome-keyring-daemon", "secret-tool"})
            if (QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty())
                return QStringLiteral("%1 is not installed: %2").arg(QLatin1String(tool), QLatin1String(kInstallHint));
        // QtKeychain dlopens libsecret and, without it, quietly reports no keychain at all.
        QLibrary libsecret(QStringLiteral("secret-1"), 0);
        if (!libsecret.load())
            return QStringLiteral("libsecret-1.so.0 (libsecret-1-0) cannot be loaded: %1")
                .arg(QLatin1String(kInstallHint));
        if (!m_dir.isValid())
            return QStringLiteral("no temporary folder: %1").arg(m_dir.errorString());

        const QDir root(m_dir.path());
        for (const char *sub : {"home/.local/share", "home/.config", "home/.cache", "run", "bus"})
            root.mkpath(QLatin1String(sub));
        QFile::setPermissions(root.filePath(QStringLiteral("run")),
                              QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        qputenv("HOME", root.filePath(QStringLiteral("home")).toLocal8Bit());
        qputenv("XDG_DATA_HOME", root.filePath(QStringLiteral("home/.local/share")).toLocal8Bit());
        qputenv("XDG_CONFIG_HOME", root.filePath(QStringLiteral("home/.config")).toLocal8Bit());
        qputenv("XDG_CACHE_HOME", root.filePath(QStringLiteral("home/.cache")).toLocal8Bit());
        qputenv("XDG_RUNTIME_DIR", root.filePath(QStringLiteral("run")).toLocal8Bit());
        // A KDE session would send QtKeychain to KWallet; another keyring's control socket would
        // make --unlock unlock that daemon instead of starting ours.
        for (const char *name : {"XDG_CURRENT_DESKTOP", "DESKTOP_SESSION", "KDE_FULL_SESSION", "KDE_SESSION_VERSION",
                                 "GNOME_DESKTOP_SESSION_ID", "GNOME_KEYRING_CONTROL"})
            qunsetenv(name);

        // No service directories: nothing is activated behind the test's back.
        const QString config = root.filePath(QStringLiteral("bus.conf"));
        QFile conf(config);
        if (!conf.open(QIODevice::WriteOnly))
            return QStringLiteral("cannot write %1").arg(config);
        conf.write(QStringLiteral("<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                                  " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                                  "<busconfig>\n"
                                  "  <type>session</type>\n"
                                  "  <listen>unix:dir=%1</listen>\n"
                                  "  <auth>EXTERNAL</auth>\n"
                                  "  <policy context=\"default\">\n"
                                  "    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
                                  "    <allow eavesdrop=\"true\"/>\n"
                                  "    <allow own=\"*\"/>\n"
                                  "  </policy>\n"
                                  "</busconfig>\n")
                       .arg(root.filePath(QStringLiteral("bus")))
                       .toUtf8());
        conf.close();

        m_bus.setChildProcessModifier(dieWithParent);
        m_bus.setStandardErrorFile(root.filePath(QStringLiteral("dbus-daemon.log")));
        m_bus.start(QStringLiteral("dbus-daemon"), {QStringLiteral("--config-file=") + config,
                                                    QStringLiteral("--nofork"), QStringLiteral("--print-address=1")});
        if (!m_bus.waitForStarted(10000))
            return QStringLiteral("dbus-daemon did not start: %1").arg(m_bus.errorString());
        if (!QTest::qWaitFor([this] { return m_bus.canReadLine() || m_bus.state() != QProcess::Running; }, 10000) ||
            !m_bus.canReadLine())
            return QStringLiteral("dbus-daemon printed no address: %1").arg(logOf("dbus-daemon.log"));
        m_address = QString::fromUtf8(m_bus.readLine()).trimmed();
        qputenv("DBUS_SESSION_BUS_ADDRESS", m_address.toUtf8());

        m_keyring.setChildProcessModifier(dieWithParent);
        m_keyring.setProcessChannelMode(QProcess::MergedChannels);
        m_keyring.setStandardOutputFile(root.filePath(QStringLiteral("gnome-keyring.log")));
        m_keyring.start(
            QStringLiteral("gnome-keyring-daemon"),
            {QStringLiteral("--foreground"), QStringLiteral("--unlock"), QStringLiteral("--components=secrets")});
        if (!m_keyring.waitForStarted(10000))
            return QStringLiteral("gnome-keyring-daemon did not start: %1").arg(m_keyring.errorString());
        // The login keyring's password, as PAM hands it over at login: on stdin, to its end.
        m_keyring.write(QByteArrayLiteral("login-") + QByteArray::number(qint64(::getpid())));
        m_keyring.closeWriteChannel();

        m_probe = std::make_unique<QDBusConnection>(
            QDBusConnection::connectToBus(m_address, QLatin1String(kProbeConnection)));
        if (!QTest::qWaitFor([this] { return defaultCollectionUnlocked() || m_keyring.state() != QProcess::Running; },
                             20000) ||
            !defaultCollectionUnlocked())
            return QStringLiteral("gnome-keyring-daemon did not offer an unlocked login keyring on %1: %2")
                .arg(m_address, logOf("gnome-keyring.log"));
        return {};
    }

    void stop()
    {
        if (m_probe) {
            m_probe.reset();
            QDBusConnection::disconnectFromBus(QLatin1String(kProbeConnection));
        }
        for (QProcess *p : {&m_keyring, &m_bus}) {
            if (p->state() == QProcess::NotRunning)
                continue;
            p->terminate();
            if (!p->waitForFinished(5000)) {
                p->kill();
                p->waitForFinished(5000);
            }
        }
    }

private:
    /// The Secret Service answers and its default collection (the login keyring) is unlocked.
    bool defaultCollectionUnlocked() const
    {
        auto call = QDBusMessage::createMethodCall(
            QStringLiteral("org.freedesktop.secrets"), QStringLiteral("/org/freedesktop/secrets/aliases/default"),
            QStringLiteral("org.freedesktop.DBus.Properties"), QStringLiteral("Get"));
        call << QStringLiteral("org.freedesktop.Secret.Collection") << QStringLiteral("Locked");
        const QDBusMessage reply = m_probe->call(call, QDBus::Block, 2000);
        return reply.type() == QDBusMessage::ReplyMessage && reply.arguments().size() == 1 &&
               !reply.arguments().first().value<QDBusVariant>().variant().toBool();
    }

    QString logOf(const char *name) const
    {
        QFile f(QDir(m_dir.path()).filePath(QLatin1String(name)));
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()).trimmed() : QStringLiteral("(no log)");
    }

    QTemporaryDir m_dir;
    QProcess m_bus;
    QProcess m_keyring;
    QString m_address;
    std::unique_ptr<QDBusConnection> m_probe;
};

/// What the Secret Service itself holds under QtKeychain's attributes (the service as "server",
/// the key as "user"), asked by secret-tool: another process and libsecret's own client, not
/// QtKeychain.
struct Lookup {
    bool answered = false;
    std::optional<QString> secret; ///< nullopt: no such item
    QString error;
};

Lookup lookUp(const QString &endpoint)
{
    QProcess p;
    p.start(QStringLiteral("secret-tool"), {QStringLiteral("lookup"), QStringLiteral("server"),
                                            QLatin1String(SecretStore::kService), QStringLiteral("user"), endpoint});
    if (!p.waitForFinished(15000)) {
        p.kill();
        p.waitForFinished();
        return {false, std::nullopt, QStringLiteral("secret-tool did not answer")};
    }
    const QString err = QString::fromUtf8(p.readAllStandardError()).trimmed();
    if (p.exitStatus() != QProcess::NormalExit || !err.isEmpty())
        return {false, std::nullopt, QStringLiteral("secret-tool failed: ") + err};
    if (p.exitCode() != 0)
        return {true, std::nullopt, {}};
    return {true, QString::fromUtf8(p.readAllStandardOutput()), {}};
}

/// Every line the app logs while this lives, engine lines at every level (the desktop app keeps
/// only warnings and errors, on stderr) and Qt's messages (passed on to Qt Test), in one file.
class LogCapture {
public:
    explicit LogCapture(const std::string &path)
    {
        s_file = std::fopen(path.c_str(), "w");
        core::setLogSink([](core::LogLevel level, const std::string &line) {
            write("engine " + std::to_string(static_cast<int>(level)) + ": " + line);
        });
        s_previous = qInstallMessageHandler([](QtMsgType type, const QMessageLogContext &context, const QString &msg) {
            write("qt " + std::to_string(static_cast<int>(type)) + ": " + msg.toStdString());
            if (s_previous)
                s_previous(type, context, msg);
        });
    }
    ~LogCapture()
    {
        qInstallMessageHandler(s_previous);
        core::setLogSink({});
        std::lock_guard lock(s_mutex);
        if (s_file)
            std::fclose(s_file);
        s_file = nullptr;
    }
    LogCapture(const LogCapture &) = delete;
    LogCapture &operator=(const LogCapture &) = delete;

private:
    static void write(const std::string &line)
    {
        std::lock_guard lock(s_mutex);
        if (!s_file)
            return;
        std::fprintf(s_file, "%s\n", line.c_str());
        std::fflush(s_file);
    }

    static inline std::mutex s_mutex;
    static inline std::FILE *s_file = nullptr;
    static inline QtMessageHandler s_previous = nullptr;
};

/// The files under `dir` (every level) that hold `needle` anywhere in their bytes.
QStringList filesContaining(const QString &dir, const QByteArray &needle)
{
    QStringList out;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        QFile f(it.next());
        if (f.open(QIODevice::ReadOnly) && f.readAll().contains(needle))
            out << f.fileName();
    }
    return out;
}

/// A login role with its own password, owning the source table. PGPASSWORD holds the
/// superuser's, which this role does not take: a connection that works got the keychain's.
struct TestRole {
    std::string name = test::uniqueName("kc_role");
    std::string password = "kc-" + test::uniqueName("secret");
    TestRole()
    {
        core::PgConnection(test::pgDsn("postgres")).exec("CREATE ROLE " + name + " LOGIN PASSWORD '" + password + "'");
    }
    ~TestRole()
    {
        try {
            core::PgConnection(test::pgDsn("postgres")).exec("DROP ROLE IF EXISTS " + name);
        } catch (...) {
        }
    }
};

} // namespace

class TestKeychain : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase();
    void storedPasswordIsReadBackByANewStore();
    void removeDeletesItFromTheSecretService();
    void aStoreDestroyedWhileTheKeychainIsAskedDoesNotCrash();
    void dialogSavesToTheKeychainAndARestartedAppSyncsWithIt();

private:
    std::unique_ptr<PrivateKeyring> m_keyring;
};

void TestKeychain::initTestCase()
{
    test::useTestSettings();
    test::servers(); // exports PGPASSWORD now, before any thread could read the environment
    m_keyring = std::make_unique<PrivateKeyring>();
    const QString problem = m_keyring->start();
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
}

void TestKeychain::cleanupTestCase()
{
    m_keyring.reset();
}

void TestKeychain::storedPasswordIsReadBackByANewStore()
{
    const QString endpoint = QStringLiteral("warehouse");
    const QString password = QStringLiteral("kc-") + QString::fromStdString(test::uniqueName("stored"));
    {
        SecretStore store;
        QSignalSpy stored(&store, &SecretStore::stored);
        QSignalSpy backend(&store, &SecretStore::backendChanged);
        store.store(endpoint, password);
        QVERIFY(stored.wait(15000));
        QCOMPARE(stored.first().at(0).toString(), endpoint);
        QVERIFY2(stored.first().at(1).toBool(), qPrintable(stored.first().at(2).toString()));
        QCOMPARE(stored.first().at(2).toString(), QString());
        QCOMPARE(store.backend(), SecretStore::Backend::Keychain);
        QCOMPARE(backend.size(), 1);
    }
    const Lookup inService = lookUp(endpoint);
    QVERIFY2(inService.answered, qPrintable(inService.error));
    QCOMPARE(inService.secret, std::optional<QString>(password));

    // A new store, as in the app after a restart: nothing in memory, the keychain has it.
    SecretStore restarted;
    QCOMPARE(restarted.sessionPassword(endpoint), std::optional<QString>());
    QSignalSpy read(&restarted, &SecretStore::passwordRead);
    restarted.read(endpoint);
    QVERIFY(read.wait(15000));
    QCOMPARE(read.first().at(0).toString(), endpoint);
    QVERIFY2(read.first().at(1).toBool(), qPrintable(read.first().at(2).toString()));
    QCOMPARE(restarted.sessionPassword(endpoint), std::optional<QString>(password));
    QCOMPARE(restarted.backend(), SecretStore::Backend::Keychain);

    // A new password replaces the item rather than adding a second one.
    const QString changed = password + QStringLiteral("-changed");
    QSignalSpy stored(&restarted, &SecretStore::stored);
    restarted.store(endpoint, changed);
    QVERIFY(stored.wait(15000));
    QVERIFY2(stored.first().at(1).toBool(), qPrintable(stored.first().at(2).toString()));
    QCOMPARE(lookUp(endpoint).secret, std::optional<QString>(changed));
    SecretStore third;
    QSignalSpy readAgain(&third, &SecretStore::passwordRead);
    third.read(endpoint);
    QVERIFY(readAgain.wait(15000));
    QCOMPARE(third.sessionPassword(endpoint), std::optional<QString>(changed));

    QSignalSpy removed(&third, &SecretStore::removed);
    third.remove(endpoint);
    QVERIFY(removed.wait(15000));
}

void TestKeychain::removeDeletesItFromTheSecretService()
{
    const QString endpoint = QStringLiteral("shop");
    const QString password = QStringLiteral("kc-") + QString::fromStdString(test::uniqueName("removed"));
    {
        SecretStore store;
        QSignalSpy stored(&store, &SecretStore::stored);
        store.store(endpoint, password);
        QVERIFY(stored.wait(15000));
        QVERIFY2(stored.first().at(1).toBool(), qPrintable(stored.first().at(2).toString()));
    }
    QCOMPARE(lookUp(endpoint).secret, std::optional<QString>(password));

    SecretStore restarted;
    QSignalSpy read(&restarted, &SecretStore::passwordRead);
    restarted.read(endpoint);
    QVERIFY(read.wait(15000));
    QCOMPARE(restarted.sessionPassword(endpoint), std::optional<QString>(password));
    QSignalSpy removed(&restarted, &SecretStore::removed);
    restarted.remove(endpoint);
    QVERIFY(removed.wait(15000));
    QCOMPARE(removed.first().at(0).toString(), endpoint);
    QCOMPARE(restarted.sessionPassword(endpoint), std::optional<QString>());
    QCOMPARE(restarted.backend(), SecretStore::Backend::Keychain);

    const Lookup gone = lookUp(endpoint);
    QVERIFY2(gone.answered, qPrintable(gone.error));
    QCOMPARE(gone.secret, std::optional<QString>());

    // After another restart the keychain answers, and has none.
    SecretStore again;
    QSignalSpy readAgain(&again, &SecretStore::passwordRead);
    again.read(endpoint);
    QVERIFY(readAgain.wait(15000));
    QVERIFY(!readAgain.first().at(1).toBool());
    QCOMPARE(readAgain.first().at(2).toString(), QString());
    QCOMPARE(again.backend(), SecretStore::Backend::Keychain);
    QCOMPARE(again.sessionPassword(endpoint), std::optional<QString>());
}

void TestKeychain::aStoreDestroyedWhileTheKeychainIsAskedDoesNotCrash()
{
    // A window and its store closed while the Secret Service had not answered yet (CI met this
    // as a crash between GUI tests): the keychain's answer must find a live job, and nothing.
    const QString endpoint = QStringLiteral("closing");
    const QString password = QStringLiteral("kc-") + QString::fromStdString(test::uniqueName("closing"));
    for (int round = 0; round < 5; ++round) {
        auto store = std::make_unique<SecretStore>();
        store->read(endpoint);
        store->store(endpoint, password);
        store->remove(QStringLiteral("closing-other"));
        store.reset(); // all three jobs still wait on D-Bus
    }
    // Every answer arrives (each job's call is one D-Bus round trip) and lands nowhere.
    QTest::qWait(1500);

    // The keychain took the write of a store that is gone, and a new store reads it.
    QTRY_COMPARE_WITH_TIMEOUT(lookUp(endpoint).secret, std::optional<QString>(password), 15000);
    SecretStore restarted;
    QSignalSpy read(&restarted, &SecretStore::passwordRead);
    restarted.read(endpoint);
    QVERIFY(read.wait(15000));
    QCOMPARE(restarted.sessionPassword(endpoint), std::optional<QString>(password));
    QSignalSpy removed(&restarted, &SecretStore::removed);
    restarted.remove(endpoint);
    QVERIFY(removed.wait(15000));
}

void TestKeychain::dialogSavesToTheKeychainAndARestartedAppSyncsWithIt()
{
    TestRole role; // outlives the database whose table it owns
    test::PgTestDb src("gui_kc_src");
    src.exec("CREATE TABLE plans (id int PRIMARY KEY, name text);"
             "INSERT INTO plans SELECT g, 'plan ' || g FROM generate_series(1, 20) g; ANALYZE");
    src.exec("ALTER TABLE plans OWNER TO " + role.name);
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace({});
    auto log = std::make_unique<LogCapture>(dir.file("driftless.log"));
    const QString app = QStringLiteral("app");
    const auto password = std::optional<QString>(QString::fromStdString(role.password));

    // 1. The endpoint dialog's save goes to the keychain.
    {
        MainWindow w;
        w.resize(1180, 620);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto *page = w.workspacePage();
        w.pages()->setCurrentWidget(page);
        w.openWorkspace(QString::fromStdString(statePath));
        QTRY_VERIFY(page->addButton()->isEnabled());
        QTest::mouseClick(page->addButton(), Qt::LeftButton);
        QTRY_VERIFY(page->endpointDialog() && page->endpointDialog()->isVisible());
        EndpointDialog &d = *page->endpointDialog();
        fillPostgres(d, app, src.name(), role.name);
        d.passwordEdit()->setText(*password);
        QSignalSpy tested(&d, &EndpointDialog::testFinished);
        QTest::mouseClick(d.testButton(), Qt::LeftButton);
        QVERIFY(tested.wait(20000));
        QVERIFY2(tested.first().first().toBool(), qPrintable(d.resultLabel()->text()));

        auto *secrets = w.secretStore();
        QSignalSpy stored(secrets, &SecretStore::stored);
        QSignalSpy saved(page, &ui::WorkspacePage::saved);
        QTest::mouseClick(d.okButton(), Qt::LeftButton);
        QVERIFY(saved.wait(15000));
        QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(1).toString()));
        QTRY_VERIFY_WITH_TIMEOUT(!stored.isEmpty(), 15000);
        QVERIFY2(stored.first().at(1).toBool(), qPrintable(stored.first().at(2).toString()));
        QCOMPARE(secrets->backend(), SecretStore::Backend::Keychain);
        const int row = page->endpointsModel()->rowOf(app);
        QTRY_COMPARE(page->endpointsModel()->index(row, EndpointsModel::Password).data().toString(),
                     QStringLiteral("keychain"));
        const Lookup inService = lookUp(app);
        QVERIFY2(inService.answered, qPrintable(inService.error));
        QCOMPARE(inService.secret, password);
        w.close();
    }

    // A pipeline from that endpoint to a SQLite file, as an import would add it.
    core::Workspace ws = core::StateStore(statePath).loadWorkspace();
    QVERIFY(ws.endpoint("app"));
    QVERIFY(ws.endpoint("app")->dsn.find(role.password) == std::string::npos);
    const std::string replica = dir.file("replica.db");
    ws.endpoints["lite"] = test::sqliteEndpoint("lite", replica);
    core::PipelineSpec pipeline;
    pipeline.name = test::uniqueName("kc");
    pipeline.source = "app";
    pipeline.target = "lite";
    core::TableSpec plans;
    plans.table = {"public", "plans"};
    // Gone from the source: its failing pass puts an engine line about this endpoint in the log.
    core::TableSpec retired;
    retired.table = {"public", "retired"};
    pipeline.tables = {plans, retired};
    ws.pipelines = {pipeline};
    core::StateStore(statePath).applyWorkspace(ws);

    // 2. The app restarted: the password comes from the keychain, and the engine connects with it.
    {
        MainWindow w;
        w.resize(1180, 620);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto *page = w.workspacePage();
        w.pages()->setCurrentWidget(page);
        w.openWorkspace(QString::fromStdString(statePath));
        auto *secrets = w.secretStore();
        QTRY_COMPARE_WITH_TIMEOUT(secrets->sessionPassword(app), password, 15000);
        QCOMPARE(secrets->backend(), SecretStore::Backend::Keychain);
        const int row = page->endpointsModel()->rowOf(app);
        QTRY_COMPARE(page->endpointsModel()->index(row, EndpointsModel::Password).data().toString(),
                     QStringLiteral("keychain"));

        auto *model = w.tablesModel();
        w.pages()->setCurrentWidget(w.tablesPage());
        const QString pipelineName = QString::fromStdString(pipeline.name);
        QTRY_VERIFY(model->rowOf(pipelineName, QStringLiteral("public.plans")) >= 0);
        const auto report = [&] { return model->report(model->rowOf(pipelineName, QStringLiteral("public.plans"))); };
        QVERIFY(w.startAction()->isEnabled());
        w.startAction()->trigger();
        QTRY_VERIFY2_WITH_TIMEOUT(
            report().state == core::TableState::Ok && report().freshness == core::Freshness::Ok,
            qPrintable(QString::fromStdString(std::string(toString(report().state)) + ": " + report().message)), 30000);
        QCOMPARE(core::SqliteDb(replica, core::SqliteDb::Mode::ReadOnly).scalarInt("SELECT count(*) FROM plans"),
                 std::int64_t(20));
        QTRY_VERIFY(test::hasEvent(w.eventsModel(), "sync_failed", ""));
        for (int row = 0; row < w.eventsModel()->rowCount(); ++row)
            QVERIFY2(w.eventsModel()->event(row).message.find(role.password) == std::string::npos,
                     w.eventsModel()->event(row).message.c_str());
        w.stopAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(w.engine()->state(), ui::EngineBridge::State::Stopped, 30000);
        w.close();
    }
    // 3. driftless-cli reads the same keychain: on the session bus the app used, `run` syncs as the
    // role only that password admits; without the bus it is refused (PGPASSWORD holds another's).
    {
        core::Workspace withCli = core::StateStore(statePath).loadWorkspace();
        const std::string cliReplica = dir.file("cli-replica.db");
        withCli.endpoints["lite_cli"] = test::sqliteEndpoint("lite_cli", cliReplica);
        core::PipelineSpec cliPipeline = pipeline;
        cliPipeline.name = test::uniqueName("kc_cli");
        cliPipeline.target = "lite_cli";
        cliPipeline.tables = {plans};
        withCli.pipelines.push_back(cliPipeline);
        core::StateStore(statePath).applyWorkspace(withCli);
        const std::vector<std::string> args = {"--state", statePath, "run", "--once", "--pipeline", cliPipeline.name};
        const auto without = test::runCli(args, {{"-DBUS_SESSION_BUS_ADDRESS", ""}});
        QVERIFY(without.exitCode != 0);
        QVERIFY2((without.out + without.err).find("password authentication failed") != std::string::npos,
                 (without.out + without.err).c_str());
        const auto with = test::runCli(args);
        QVERIFY2(with.exitCode == 0, (with.out + with.err).c_str());
        QCOMPARE(core::SqliteDb(cliReplica, core::SqliteDb::Mode::ReadOnly).scalarInt("SELECT count(*) FROM plans"),
                 std::int64_t(20));
        QVERIFY((with.out + with.err).find(role.password) == std::string::npos);
    }
    log.reset();

    // 4. The password is in none of the files the app wrote: the workspace file and its WAL (with
    // the event log), the SQLite target, QSettings, and the log.
    const QString settings = QSettings().fileName();
    QVERIFY2(QFile::exists(settings), qPrintable(settings));
    const std::string logged = test::readFile(dir.file("driftless.log"));
    QVERIFY2(logged.find("public.retired") != std::string::npos, logged.c_str());
    const QByteArray needle = password->toUtf8();
    const QStringList leaks = filesContaining(QString::fromStdString(dir.path().string()), needle) +
                              filesContaining(QFileInfo(settings).absolutePath(), needle);
    QVERIFY2(leaks.isEmpty(), qPrintable(leaks.join(QStringLiteral(", "))));

    SecretStore cleanup;
    QSignalSpy removed(&cleanup, &SecretStore::removed);
    cleanup.remove(app);
    QVERIFY(removed.wait(15000));
    QCOMPARE(lookUp(app).secret, std::optional<QString>());
}

QTEST_MAIN(TestKeychain)
#include "tst_keychain.moc"
