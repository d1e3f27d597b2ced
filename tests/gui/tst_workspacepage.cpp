// The Workspace page and the endpoint dialog against the real test Postgres: Test Connection
// shows the server's version and wal_level or libpq's error; a DSN holding a password is refused
// in the loader's words; an endpoint added through the dialog lands in the workspace file while
// its password stays in memory (no keychain on the offscreen platform) and reaches libpq at
// connect time only; export then import gives back an equal workspace; no password is ever in
// the file or the YAML. The same against the real test MariaDB: the dialog builds a mysql:// DSN
// that MysqlDsn::parse takes, Test Connection shows the version, the binlog's readiness for CDC
// and the grants, or the error and its hint; the password goes to the SecretStore and reaches
// the connector at connect time, never the workspace. Screenshots go to $DRIFTLESS_ARTIFACTS.

#include "ui/dialogs/doctordialog.h"
#include "ui/dialogs/endpointdialog.h"
#include "ui/dialogs/slotguardbox.h"
#include "ui/dialogs/sshtunnelbox.h"
#include "ui/enginebridge.h"
#include "ui/mainwindow.h"
#include "ui/models/endpointsmodel.h"
#include "ui/models/pipelinesmodel.h"
#include "ui/pages/workspacepage.h"
#include "ui/secrets/secretstore.h"

#include "core/base/passwordprovider.h"
#include "core/config/workspacefile.h"
#include "core/db/mysqlconnection.h"
#include "core/engine/endpoints/endpointprobe.h"
#include "core/engine/endpoints/mysqlpreflight.h"
#include "core/engine/rows/columnmapping.h"
#include "core/model/workspace.h"
#include "core/state/statestore.h"
#include "tests/support/guisupport.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDirIterator>
#include <QGuiApplication>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTreeWidget>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>

using namespace driftless;
using driftless::test::fillPostgres;
using driftless::test::saveShot;
using driftless::ui::EndpointDialog;
using driftless::ui::EndpointsModel;
using driftless::ui::MainWindow;
using driftless::ui::SecretStore;
using namespace std::chrono_literals;

namespace {

core::Workspace workspaceFor(const test::PgTestDb &src, const test::PgTestDb &dst, const std::string &sqlitePath)
{
    core::Workspace ws;
    ws.endpoints["src"] = test::pgEndpoint("src", src.name());
    core::SlotGuard guard;
    guard.maxRetained = 10LL << 30;
    ws.endpoints["src"].slotGuard = guard;
    ws.endpoints["dw"] = test::pgEndpoint("dw", dst.name());
    ws.endpoints["lite"] = test::sqliteEndpoint("lite", sqlitePath);
    core::PipelineSpec p;
    p.name = "app_to_dw";
    p.source = "src";
    p.target = "dw";
    p.targetSchema = "model";
    core::TableSpec plans;
    plans.table = {"public", "plans"};
    core::TableSpec events;
    events.table = {"public", "events"};
    events.strategy = core::Strategy::Cursor;
    events.cursor = "updated_at";
    events.lookback = "10m";
    core::TableSpec orders;
    orders.table = {"public", "orders"};
    orders.strategy = core::Strategy::Cdc;
    orders.freshnessSla = 60s;
    p.tables = {plans, events, orders};
    core::PipelineSpec q;
    q.name = "app_to_lite";
    q.source = "src";
    q.target = "lite";
    q.tables = {plans};
    ws.pipelines = {p, q};
    return ws;
}

/// Every byte of every file in `dir` (the workspace file, its WAL, exported YAML).
bool anyFileContains(const std::string &dir, const QByteArray &needle)
{
    QDirIterator it(QString::fromStdString(dir), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        QFile f(it.next());
        if (f.open(QIODevice::ReadOnly) && f.readAll().contains(needle))
            return true;
    }
    return false;
}

/// A login role with its own password (PGPASSWORD holds the superuser's, which it does not take).
struct TestRole {
    std::string name = test::uniqueName("gui_role");
    std::string password = "pw-" + test::uniqueName("secret");
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

/// A MariaDB user with its own password (MYSQL_PWD holds driftless's, which it does not take).
struct MyTestUser {
    std::string name = test::uniqueName("gui_my");
    std::string password = "pw-" + test::uniqueName("secret");
    explicit MyTestUser(const std::string &db)
    {
        core::MysqlConnection c(test::myDsn(""));
        c.exec("CREATE USER " + core::mysqlLiteral(name) + "@'127.0.0.1' IDENTIFIED BY " +
               core::mysqlLiteral(password));
        c.exec("GRANT SELECT ON " + core::mysqlIdent(db) + ".* TO " + core::mysqlLiteral(name) + "@'127.0.0.1'");
    }
    ~MyTestUser()
    {
        try {
            core::MysqlConnection(test::myDsn(""))
                .exec("DROP USER IF EXISTS " + core::mysqlLiteral(name) + "@'127.0.0.1'");
        } catch (...) {
        }
    }
};

void fillMysql(EndpointDialog &d, const QString &name, const std::string &db, const std::string &user)
{
    const auto &s = test::servers();
    d.nameEdit()->setText(name);
    d.kindBox()->setCurrentIndex(2);
    d.fieldsMode()->setChecked(true);
    d.hostEdit()->setText(QString::fromStdString(s.myHost));
    d.portBox()->setValue(s.myPort);
    d.databaseEdit()->setText(QString::fromStdString(db));
    d.userEdit()->setText(QString::fromStdString(user));
}

bool runTest(EndpointDialog &d)
{
    QSignalSpy finished(&d, &EndpointDialog::testFinished);
    QTest::mouseClick(d.testButton(), Qt::LeftButton);
    if (!finished.wait(20000))
        return false;
    return finished.first().first().toBool();
}

} // namespace

class TestWorkspacePage : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void dialogTestsTheRealServerAndShowsLibpqsErrors();
    void dialogRefusesPasswordsInTheDsn();
    void mysqlDialogBuildsItsDsnAndTestsMariaDb();
    void mysqlDialogTakesRawDsnsAndKeepsEditedOnes();
    void addedMysqlEndpointsPasswordStaysInMemoryAndReachesTheConnector();
    void dialogChecksSqliteFiles();
    void pageListsTheWorkspaceAndExportImportRoundTrips();
    void addedEndpointsPasswordStaysInMemoryAndReachesLibpq();
    void sshKeyPassphraseGoesToTheSecretStoreAndFollowsTheEndpoint();
    void removeIsRefusedWhileAPipelineUsesTheEndpoint();
    void doctorShowsWhatTheCliDoctorFindsWithTheSqlAndChecksAgain();
    void aNewUsersFirstEndpointMakesTheWorkspaceFile();
    void removePipelineShowsTheSqlAndDropsTheSlotAndPublication();
};

void TestWorkspacePage::initTestCase()
{
    test::useTestSettings();
}

void TestWorkspacePage::dialogTestsTheRealServerAndShowsLibpqsErrors()
{
    test::PgTestDb db("gui_probe");
    db.exec("CREATE TABLE plans (id int PRIMARY KEY); CREATE TABLE events (id int PRIMARY KEY)");
    EndpointDialog d(std::nullopt, {QStringLiteral("dw")}, std::nullopt, SecretStore::Backend::SessionOnly);
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    fillPostgres(d, QStringLiteral("app"), db.name(), test::servers().pgUser);
    QVERIFY2(d.problem().isEmpty(), qPrintable(d.problem()));
    QVERIFY(d.okButton()->isEnabled());
    const auto e = d.endpoint();
    QVERIFY(e.kind == core::EndpointKind::Postgres);
    QVERIFY(e.dsn.find("dbname=" + db.name()) != std::string::npos);
    QVERIFY(e.dsn.find("port=" + std::to_string(test::servers().pgPort)) != std::string::npos);

    // A wrong password typed in the dialog: libpq's own message, and what to do.
    d.passwordEdit()->setText(QStringLiteral("certainly-wrong"));
    QVERIFY(!runTest(d));
    QString text = d.resultLabel()->text();
    QVERIFY2(text.contains(QStringLiteral("password authentication failed for user")), qPrintable(text));
    // What to do names the field the password was typed in, not ~/.pgpass (issue 45).
    QVERIFY2(text.contains(QStringLiteral("What to do: the server refused the password in the Password field")),
             qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral(".pgpass")), qPrintable(text));
    QVERIFY(!text.contains(QStringLiteral("certainly-wrong")));
    saveShot(&d, QStringLiteral("endpoint-dialog-error"));

    // The right one: version, wal_level, replication right and SELECT privileges.
    d.passwordEdit()->setText(QString::fromStdString(test::servers().pgPassword));
    QVERIFY(runTest(d));
    text = d.resultLabel()->text();
    QVERIFY2(text.contains(QString::fromStdString(db.scalar("SHOW server_version"))), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("wal_level <b>logical</b>")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("may replicate (superuser)")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("SELECT on 2 of 2 tables")), qPrintable(text));
    // The test server offers no TLS; on this machine that is said, not warned about.
    QVERIFY2(text.contains(QStringLiteral("<b>not encrypted</b> (prefer): fine on this machine")), qPrintable(text));
    // The password never becomes part of the endpoint.
    QVERIFY(d.endpoint().dsn.find("password") == std::string::npos);
    QCOMPARE(d.password(), QString::fromStdString(test::servers().pgPassword));
    saveShot(&d, QStringLiteral("endpoint-dialog"));

    // A name taken by another endpoint is refused.
    d.nameEdit()->setText(QStringLiteral("dw"));
    QVERIFY(!d.okButton()->isEnabled());
    QVERIFY(d.problem().contains(QStringLiteral("already an endpoint named dw")));
}

void TestWorkspacePage::dialogRefusesPasswordsInTheDsn()
{
    EndpointDialog d(std::nullopt, {}, std::nullopt, SecretStore::Backend::Unknown);
    d.show();
    d.nameEdit()->setText(QStringLiteral("app"));
    d.dsnMode()->setChecked(true);
    d.dsnEdit()->setText(QStringLiteral("host=db1 dbname=app user=sync password=hunter2"));
    QVERIFY(!d.okButton()->isEnabled());
    QVERIFY(d.problemLabel()->isVisible());
    QVERIFY2(d.problem().startsWith(QStringLiteral("the dsn contains a password; workspace files never hold secrets")),
             qPrintable(d.problem()));
    QVERIFY(!d.testButton()->isEnabled());
    saveShot(&d, QStringLiteral("endpoint-dialog-dsn-refused"));
    d.dsnEdit()->setText(QStringLiteral("postgresql://sync:hunter2@db1/app"));
    QVERIFY(d.problem().contains(QStringLiteral("contains a password")));
    d.dsnEdit()->setText(QStringLiteral("postgresql://sync@db1:5433/app?sslmode=verify-full"));
    QVERIFY2(d.problem().isEmpty(), qPrintable(d.problem()));
    QCOMPARE(d.endpoint().dsn, std::string("postgresql://sync@db1:5433/app?sslmode=verify-full"));

    // TLS modes are libpq's sslmode values.
    d.fieldsMode()->setChecked(true);
    d.hostEdit()->setText(QStringLiteral("db1"));
    d.tlsBox()->setCurrentIndex(d.tlsBox()->findData(QStringLiteral("verify-full")));
    QCOMPARE(d.endpoint().dsn, std::string("host=db1 sslmode=verify-full"));

    auto *kinds = qobject_cast<QStandardItemModel *>(d.kindBox()->model());
    QVERIFY(kinds);
    QCOMPARE(kinds->rowCount(), 3);
    QVERIFY(kinds->item(2)->isEnabled()); // MySQL / MariaDB

    // Editing an endpoint given as a URI keeps its exact text when nothing changed.
    core::Endpoint uri;
    uri.name = "dw";
    uri.dsn = "postgresql://sync@db2:5433/dw";
    EndpointDialog edit(uri, {}, std::nullopt, SecretStore::Backend::Unknown);
    QVERIFY(edit.fieldsMode()->isChecked());
    QCOMPARE(edit.hostEdit()->text(), QStringLiteral("db2"));
    QCOMPARE(edit.portBox()->value(), 5433);
    QCOMPARE(edit.endpoint(), uri);
}

void TestWorkspacePage::mysqlDialogBuildsItsDsnAndTestsMariaDb()
{
    test::MyTestDb db("gui_my_probe");
    db.exec("CREATE TABLE plans (id INT PRIMARY KEY)");
    db.exec("CREATE TABLE events (id BIGINT PRIMARY KEY, updated_at DATETIME NOT NULL)");
    const auto &s = test::servers();
    EndpointDialog d(std::nullopt, {}, std::nullopt, SecretStore::Backend::SessionOnly);
    d.resize(620, d.height());
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    d.kindBox()->setCurrentIndex(2);
    // MySQL's port, TLS modes and a CA file; no slot guard (that watches Postgres slots).
    QCOMPARE(d.portBox()->value(), 3306);
    QVERIFY(d.caFileEdit()->isVisible());
    QVERIFY(!d.slotGuardBox()->isVisible());
    QVERIFY(d.passwordEdit()->placeholderText().contains(QStringLiteral("MYSQL_PWD")));
    QCOMPARE(d.tlsBox()->count(), 6);
    for (const QString &mode : EndpointDialog::mysqlTlsModes())
        QVERIFY2(d.tlsBox()->findData(mode) > 0, qPrintable(mode));

    // The fields become a mysql:// DSN that MysqlDsn::parse reads back exactly.
    fillMysql(d, QStringLiteral("shop"), db.name(), "sync user");
    d.tlsBox()->setCurrentIndex(d.tlsBox()->findData(QStringLiteral("verify_ca")));
    d.caFileEdit()->setText(QStringLiteral("/etc/ssl/our ca/ca&root.pem"));
    QVERIFY2(d.problem().isEmpty(), qPrintable(d.problem()));
    auto e = d.endpoint();
    QVERIFY(e.kind == core::EndpointKind::Mysql);
    QVERIFY(!e.slotGuard);
    auto parsed = core::MysqlDsn::parse(e.dsn);
    QCOMPARE(parsed.host, s.myHost);
    QCOMPARE(parsed.port, s.myPort);
    QCOMPARE(parsed.database, db.name());
    QCOMPARE(parsed.user, std::string("sync user"));
    QCOMPARE(parsed.sslMode, std::string("verify_ca"));
    QCOMPARE(parsed.sslCa, std::string("/etc/ssl/our ca/ca&root.pem"));
    QVERIFY(!parsed.password);
    QVERIFY(!core::endpointProblem(e));
    // Without TLS the CA file is left out (and its field disabled).
    d.tlsBox()->setCurrentIndex(d.tlsBox()->findData(QStringLiteral("disabled")));
    QVERIFY(!d.caFileEdit()->isEnabled());
    QCOMPARE(core::MysqlDsn::parse(d.endpoint().dsn).sslCa, std::string());
    // Driftless's default mode is left unnamed: MysqlDsn picks preferred on loopback.
    d.tlsBox()->setCurrentIndex(0);
    d.caFileEdit()->clear();
    fillMysql(d, QStringLiteral("shop"), db.name(), s.myUser);
    QCOMPARE(d.endpoint().dsn,
             "mysql://" + s.myUser + "@" + s.myHost + ":" + std::to_string(s.myPort) + "/" + db.name());

    // A wrong password typed in the dialog: the server's refusal, and what to do.
    d.passwordEdit()->setText(QStringLiteral("certainly-wrong"));
    QVERIFY(!runTest(d));
    QString text = d.resultLabel()->text();
    QVERIFY2(text.contains(QStringLiteral("Could not connect")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Access denied for user")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("What to do: the server refused the password in the Password field")),
             qPrintable(text));
    QVERIFY(!text.contains(QStringLiteral("certainly-wrong")));
    saveShot(&d, QStringLiteral("endpoint-dialog-mysql-error"));

    // The right one: MariaDB's version, a binlog ready for CDC, the grants and the tables.
    d.passwordEdit()->setText(QString::fromStdString(s.myPassword));
    QVERIFY(runTest(d));
    text = d.resultLabel()->text();
    QVERIFY2(text.contains(QStringLiteral("<b>MariaDB ") + QString::fromStdString(db.scalar("SELECT VERSION()"))),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("ready for change data capture")), qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral("not ready")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("<b>not encrypted</b> (preferred): fine on this machine")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("may read the binlog (REPLICATION SLAVE) and its position")),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("2 tables in database <b>%1</b>").arg(QString::fromStdString(db.name()))),
             qPrintable(text));
    // The password never becomes part of the endpoint.
    QVERIFY(d.endpoint().dsn.find(s.myPassword) == std::string::npos);
    QVERIFY(!core::MysqlDsn::parse(d.endpoint().dsn).password);
    QCOMPARE(d.password(), QString::fromStdString(s.myPassword));
    saveShot(&d, QStringLiteral("endpoint-dialog-mysql"));

    // A kind change drops the result (it was another kind's), and MySQL's port becomes Postgres's.
    d.portBox()->setValue(3306);
    d.kindBox()->setCurrentIndex(0);
    QCOMPARE(d.portBox()->value(), 5432);
    QVERIFY(d.caFileEdit()->isVisible()); // as sslrootcert
    QVERIFY(d.resultLabel()->text().contains(QStringLiteral("wal_level")));
}

void TestWorkspacePage::mysqlDialogTakesRawDsnsAndKeepsEditedOnes()
{
    EndpointDialog d(std::nullopt, {}, std::nullopt, SecretStore::Backend::Unknown);
    d.show();
    d.nameEdit()->setText(QStringLiteral("shop"));
    d.kindBox()->setCurrentIndex(2);
    d.dsnMode()->setChecked(true);
    QVERIFY(d.dsnEdit()->placeholderText().startsWith(QStringLiteral("mysql://")));
    d.dsnEdit()->setText(QStringLiteral("mysql://sync:hunter2@db1/shop"));
    QVERIFY(!d.okButton()->isEnabled());
    QVERIFY2(d.problem().contains(QStringLiteral("the dsn contains a password")), qPrintable(d.problem()));
    QVERIFY2(d.problem().contains(QStringLiteral("type it in the Password field")), qPrintable(d.problem()));
    QVERIFY(!d.testButton()->isEnabled());
    d.dsnEdit()->setText(QStringLiteral("mysql://sync@db1/shop?ssl-mode=sometimes"));
    QVERIFY2(d.problem().contains(QStringLiteral("is not one of disabled, preferred")), qPrintable(d.problem()));
    d.dsnEdit()->setText(QStringLiteral("host=db1 dbname=shop"));
    QVERIFY2(d.problem().contains(QStringLiteral("must be a mysql:// URI")), qPrintable(d.problem()));
    const std::string raw = "mysql://sync@db1:3307/shop?ssl-mode=verify_identity&ssl-ca=/etc/ca.pem&connect-timeout=5";
    d.dsnEdit()->setText(QString::fromStdString(raw));
    QVERIFY2(d.problem().isEmpty(), qPrintable(d.problem()));
    QCOMPARE(d.endpoint().dsn, raw);
    QVERIFY(d.endpoint().kind == core::EndpointKind::Mysql);

    // Editing: a DSN the fields can show opens in them and keeps its exact text until changed.
    core::Endpoint shop;
    shop.name = "shop";
    shop.kind = core::EndpointKind::Mysql;
    shop.dsn = "mariadb://sync@db2:3307/shop?ssl-mode=REQUIRED";
    EndpointDialog edit(shop, {}, std::nullopt, SecretStore::Backend::Unknown);
    QVERIFY(edit.fieldsMode()->isChecked());
    QCOMPARE(edit.kindBox()->currentIndex(), 2);
    QCOMPARE(edit.hostEdit()->text(), QStringLiteral("db2"));
    QCOMPARE(edit.portBox()->value(), 3307);
    QCOMPARE(edit.userEdit()->text(), QStringLiteral("sync"));
    QCOMPARE(edit.tlsBox()->currentData().toString(), QStringLiteral("required"));
    QCOMPARE(edit.endpoint(), shop);
    edit.databaseEdit()->setText(QStringLiteral("shop2"));
    QCOMPARE(edit.endpoint().dsn, std::string("mysql://sync@db2:3307/shop2?ssl-mode=required"));
    // Options the fields do not show (connect-timeout, socket, client certificates): the DSN.
    shop.dsn = raw;
    EndpointDialog raw2(shop, {}, std::nullopt, SecretStore::Backend::Unknown);
    QVERIFY(raw2.dsnMode()->isChecked());
    QCOMPARE(raw2.endpoint(), shop);
}

void TestWorkspacePage::addedMysqlEndpointsPasswordStaysInMemoryAndReachesTheConnector()
{
    test::MyTestDb db("gui_my_secret");
    MyTestUser user(db.name());
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace({});

    MainWindow w;
    w.resize(1180, 620);
    w.show();
    auto *page = w.workspacePage();
    w.pages()->setCurrentWidget(page);
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_VERIFY(page->addButton()->isEnabled());

    QTest::mouseClick(page->addButton(), Qt::LeftButton);
    QTRY_VERIFY(page->endpointDialog() && page->endpointDialog()->isVisible());
    EndpointDialog &d = *page->endpointDialog();
    fillMysql(d, QStringLiteral("shop"), db.name(), user.name);
    d.passwordEdit()->setText(QString::fromStdString(user.password));
    QVERIFY(runTest(d));
    QVERIFY2(d.resultLabel()->text().contains(QString::fromStdString(user.name)), qPrintable(d.resultLabel()->text()));
    // A user without REPLICATION SLAVE is told which GRANT CDC will need.
    QVERIFY2(
        d.resultLabel()->text().contains(QStringLiteral("may <b>not</b> read the binlog: GRANT REPLICATION SLAVE")),
        qPrintable(d.resultLabel()->text()));
    QSignalSpy saved(page, &ui::WorkspacePage::saved);
    QTest::mouseClick(d.okButton(), Qt::LeftButton);
    QVERIFY(saved.wait(15000));
    QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(1).toString()));

    const auto stored = core::StateStore(statePath).loadWorkspace();
    QVERIFY(stored.endpoint("shop"));
    QVERIFY(stored.endpoint("shop")->kind == core::EndpointKind::Mysql);
    const std::string dsn = stored.endpoint("shop")->dsn;
    QVERIFY(!core::MysqlDsn::parse(dsn).password);
    QVERIFY(dsn.find(user.password) == std::string::npos);

    // No Secret Service offscreen: kept in memory for the session, and the page says so.
    auto *secrets = w.secretStore();
    QTRY_COMPARE(secrets->backend(), SecretStore::Backend::SessionOnly);
    QCOMPARE(secrets->sessionPassword(QStringLiteral("shop")),
             std::optional<QString>(QString::fromStdString(user.password)));
    const int row = page->endpointsModel()->rowOf(QStringLiteral("shop"));
    QTRY_COMPARE(page->endpointsModel()->index(row, EndpointsModel::Password).data().toString(),
                 QStringLiteral("this session only"));
    page->selectEndpoint(QStringLiteral("shop"));
    QTRY_VERIFY(page->passwordButton()->isEnabled());

    // The connector asks the provider by DSN: MYSQL_PWD holds driftless's, which this user refuses.
    QCOMPARE(core::pgPasswordFor(dsn), std::optional<std::string>(user.password));
    const auto probe = core::probeMysql(dsn);
    QVERIFY2(probe.connected, probe.error.c_str());
    QVERIFY2(probe.user.rfind(user.name + "@", 0) == 0, probe.user.c_str());

    // Never in the workspace file (nor its WAL) or the exported YAML.
    const QString yamlPath = QString::fromStdString(dir.file("exported.yaml"));
    QVERIFY(page->exportFile(yamlPath));
    QVERIFY(test::readFile(yamlPath.toStdString()).find("kind: mysql") != std::string::npos);
    QVERIFY(!anyFileContains(dir.path().string(), QByteArray::fromStdString(user.password)));
}

void TestWorkspacePage::dialogChecksSqliteFiles()
{
    test::TempDir dir;
    EndpointDialog d(std::nullopt, {}, std::nullopt, SecretStore::Backend::SessionOnly);
    d.show();
    d.nameEdit()->setText(QStringLiteral("lite"));
    d.kindBox()->setCurrentIndex(1);
    QVERIFY(d.pathEdit()->isVisible());
    QVERIFY(d.browseButton()->isVisible());
    QVERIFY(!d.passwordEdit()->isVisible());
    QVERIFY(!d.okButton()->isEnabled());
    d.pathEdit()->setText(QString::fromStdString(dir.file("replica.db")));
    QVERIFY(d.okButton()->isEnabled());
    QVERIFY(runTest(d));
    QVERIFY2(d.resultLabel()->text().contains(QStringLiteral("first sync creates")),
             qPrintable(d.resultLabel()->text()));
    QCOMPARE(d.endpoint().path, dir.file("replica.db"));
    saveShot(&d, QStringLiteral("endpoint-dialog-sqlite"));
    d.pathEdit()->setText(QString::fromStdString(dir.file("missing/replica.db")));
    QVERIFY(!runTest(d));
    QVERIFY(d.resultLabel()->text().contains(QStringLiteral("does not exist")));
}

void TestWorkspacePage::pageListsTheWorkspaceAndExportImportRoundTrips()
{
    test::PgTestDb src("gui_ws_src");
    test::PgTestDb dst("gui_ws_dst");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    const core::Workspace original = workspaceFor(src, dst, dir.file("replica.db"));
    core::StateStore(statePath).applyWorkspace(original);

    MainWindow w;
    QAbstractItemModelTester endpointsTester(w.workspacePage()->endpointsModel(),
                                             QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester pipelinesTester(w.workspacePage()->pipelinesModel(),
                                             QAbstractItemModelTester::FailureReportingMode::Fatal);
    w.resize(1180, 620);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto *page = w.workspacePage();
    w.pages()->setCurrentWidget(page);
    QCOMPARE(w.pages()->tabText(w.pages()->indexOf(page)), QStringLiteral("Workspace"));
    w.openWorkspace(QString::fromStdString(statePath));

    auto *endpoints = page->endpointsModel();
    QTRY_COMPARE(endpoints->rowCount(), 3);
    QCOMPARE(page->workspace(), original);
    const int srcRow = endpoints->rowOf(QStringLiteral("src"));
    const auto &s = test::servers();
    QCOMPARE(endpoints->index(srcRow, EndpointsModel::Kind).data().toString(), QStringLiteral("Postgres"));
    QCOMPARE(endpoints->index(srcRow, EndpointsModel::Location).data().toString(),
             QStringLiteral("%1:%2/%3")
                 .arg(QString::fromStdString(s.pgHost))
                 .arg(s.pgPort)
                 .arg(QString::fromStdString(src.name())));
    QVERIFY(endpoints->index(srcRow, EndpointsModel::SlotGuard).data().toString().contains(QStringLiteral("10GB")));
    QCOMPARE(endpoints->index(srcRow, EndpointsModel::UsedBy).data().toString(),
             QStringLiteral("app_to_dw (source), app_to_lite (source)"));
    const int liteRow = endpoints->rowOf(QStringLiteral("lite"));
    QCOMPARE(endpoints->index(liteRow, EndpointsModel::Location).data().toString(),
             QString::fromStdString(dir.file("replica.db")));
    auto *pipelines = page->pipelinesModel();
    QCOMPARE(pipelines->rowCount(), 2);
    const int p = pipelines->rowOf(QStringLiteral("app_to_dw"));
    QCOMPARE(pipelines->index(p, ui::PipelinesModel::Route).data().toString(), QStringLiteral("src \u2192 dw"));
    QCOMPARE(pipelines->index(p, ui::PipelinesModel::Tables).data().toInt(), 3);
    QCOMPARE(pipelines->index(p, ui::PipelinesModel::Strategies).data().toString(),
             QStringLiteral("1 full refresh, 1 cursor, 1 CDC"));
    QVERIFY(page->summaryText().contains(QStringLiteral("3 endpoints, 2 pipelines with 4 tables")));
    page->selectEndpoint(QStringLiteral("src"));
    saveShot(&w, QStringLiteral("page-workspace"));

    // Export, then change the stored workspace behind the page's back, then import.
    const QString yamlPath = QString::fromStdString(dir.file("exported.yaml"));
    QVERIFY(page->exportFile(yamlPath));
    QCOMPARE(core::WorkspaceFile::load(yamlPath.toStdString()), original);
    core::Workspace changed = original;
    changed.pipelines.pop_back();
    changed.endpoints.erase("lite");
    core::StateStore(statePath).applyWorkspace(changed);
    QTRY_COMPARE_WITH_TIMEOUT(endpoints->rowCount(), 2, 15000);

    QSignalSpy saved(page, &ui::WorkspacePage::saved);
    page->importFile(yamlPath);
    QVERIFY(saved.wait(15000));
    QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(1).toString()));
    QVERIFY2(saved.first().at(1).toString().contains(QStringLiteral("lite")),
             qPrintable(saved.first().at(1).toString()));
    QCOMPARE(core::StateStore(statePath).loadWorkspace(), original);
    QCOMPARE(endpoints->rowCount(), 3);

    // Importing the same file again changes nothing; the outcome's line does not move the
    // buttons (its room is kept while it is hidden).
    page->resultLabel()->setVisible(false);
    QApplication::processEvents();
    const int buttonsAt = page->addPipelineButton()->mapTo(page, QPoint()).y();
    saved.clear();
    page->importFile(yamlPath);
    QVERIFY(saved.wait(15000));
    QVERIFY2(saved.first().at(1).toString().contains(QStringLiteral("nothing changed")),
             qPrintable(saved.first().at(1).toString()));
    QTRY_VERIFY(page->resultLabel()->isVisible());
    QApplication::processEvents();
    QCOMPARE(page->addPipelineButton()->mapTo(page, QPoint()).y(), buttonsAt);

    // A broken file is refused with its line, and nothing is applied.
    const std::string broken = dir.file("broken.yaml");
    test::writeFile(broken, "endpoints:\n  app: { kind: postgres, dsn: \"host=x password=y\" }\npipelines: []\n");
    saved.clear();
    page->importFile(QString::fromStdString(broken));
    QVERIFY(saved.wait(15000));
    QVERIFY(!saved.first().at(0).toBool());
    QVERIFY2(saved.first().at(1).toString().contains(QStringLiteral("broken.yaml:2")),
             qPrintable(saved.first().at(1).toString()));
    QVERIFY(page->resultLabel()->text().contains(QStringLiteral("contains a password")));
    QCOMPARE(core::StateStore(statePath).loadWorkspace(), original);
}

void TestWorkspacePage::addedEndpointsPasswordStaysInMemoryAndReachesLibpq()
{
    test::PgTestDb db("gui_secret");
    TestRole role;
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace({});

    MainWindow w;
    w.resize(1180, 620);
    w.show();
    auto *page = w.workspacePage();
    w.pages()->setCurrentWidget(page);
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_VERIFY(page->addButton()->isEnabled());

    QTest::mouseClick(page->addButton(), Qt::LeftButton);
    QTRY_VERIFY(page->endpointDialog() && page->endpointDialog()->isVisible());
    EndpointDialog &d = *page->endpointDialog();
    fillPostgres(d, QStringLiteral("app"), db.name(), role.name);
    d.passwordEdit()->setText(QString::fromStdString(role.password));
    QVERIFY(runTest(d));
    QVERIFY(d.resultLabel()->text().contains(QString::fromStdString(role.name)));
    QSignalSpy saved(page, &ui::WorkspacePage::saved);
    QTest::mouseClick(d.okButton(), Qt::LeftButton);
    QVERIFY(saved.wait(15000));
    QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(1).toString()));

    const auto stored = core::StateStore(statePath).loadWorkspace();
    QVERIFY(stored.endpoint("app"));
    const std::string dsn = stored.endpoint("app")->dsn;
    QVERIFY(dsn.find("password") == std::string::npos);

    // No Secret Service offscreen: kept in memory for the session, and the page says so.
    auto *secrets = w.secretStore();
    QTRY_COMPARE(secrets->backend(), SecretStore::Backend::SessionOnly);
    QCOMPARE(secrets->sessionPassword(QStringLiteral("app")),
             std::optional<QString>(QString::fromStdString(role.password)));
    const int row = page->endpointsModel()->rowOf(QStringLiteral("app"));
    QTRY_COMPARE(page->endpointsModel()->index(row, EndpointsModel::Password).data().toString(),
                 QStringLiteral("this session only"));

    // libpq gets it at connect time: PGPASSWORD holds the superuser's, which this role refuses.
    QCOMPARE(core::pgPasswordFor(dsn), std::optional<std::string>(role.password));
    const auto probe = core::probePostgres(dsn);
    QVERIFY2(probe.connected, probe.error.c_str());
    QCOMPARE(probe.user, role.name);

    // Asked once per session from the page as well: a new password replaces it in memory.
    page->selectEndpoint(QStringLiteral("app"));
    QTRY_VERIFY(page->passwordButton()->isEnabled()); // once the closed dialog is gone
    QTest::mouseClick(page->passwordButton(), Qt::LeftButton);
    QTRY_VERIFY(page->passwordPrompt() && page->passwordPrompt()->isVisible());
    QVERIFY(page->passwordPrompt()->labelText().contains(QStringLiteral("kept in memory")));
    const QString second = QStringLiteral("second-") + QString::fromStdString(role.password);
    page->passwordPrompt()->setTextValue(second);
    page->passwordPrompt()->accept();
    QTRY_COMPARE(secrets->sessionPassword(QStringLiteral("app")), std::optional<QString>(second));

    // Never in the workspace file (nor its WAL) or the exported YAML.
    const QString yamlPath = QString::fromStdString(dir.file("exported.yaml"));
    QVERIFY(page->exportFile(yamlPath));
    QVERIFY(test::readFile(yamlPath.toStdString()).find("dbname=" + db.name()) != std::string::npos);
    QVERIFY(!anyFileContains(dir.path().string(), QByteArray::fromStdString(role.password)));
    QVERIFY(!anyFileContains(dir.path().string(), second.toUtf8()));
}

void TestWorkspacePage::sshKeyPassphraseGoesToTheSecretStoreAndFollowsTheEndpoint()
{
    test::PgTestDb db("wsp_phrase");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace({});
    MainWindow w;
    w.resize(1180, 620);
    w.show();
    auto *page = w.workspacePage();
    w.pages()->setCurrentWidget(page);
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_VERIFY(page->addButton()->isEnabled());

    QTest::mouseClick(page->addButton(), Qt::LeftButton);
    QTRY_VERIFY(page->endpointDialog() && page->endpointDialog()->isVisible());
    EndpointDialog &d = *page->endpointDialog();
    fillPostgres(d, QStringLiteral("app"), db.name(), test::servers().pgUser);
    auto *box = d.sshTunnelBox();
    box->setChecked(true);
    box->hostEdit()->setText(QStringLiteral("bastion.example.com"));
    box->userEdit()->setText(QStringLiteral("tunnel"));
    // Only a key file can have a passphrase.
    QVERIFY(!box->passphraseEdit()->isEnabled());
    box->identityEdit()->setText(QStringLiteral("~/.ssh/id_locked"));
    QVERIFY(box->passphraseEdit()->isEnabled());
    QCOMPARE(box->passphraseEdit()->echoMode(), QLineEdit::Password);
    const QString passphrase = QStringLiteral("correct horse 42");
    box->passphraseEdit()->setText(passphrase);
    QCOMPARE(d.sshPassphrase(), passphrase);
    saveShot(&d, QStringLiteral("endpoint-ssh-passphrase"));
    QSignalSpy saved(page, &ui::WorkspacePage::saved);
    QTest::mouseClick(d.okButton(), Qt::LeftButton);
    QVERIFY(saved.wait(15000));
    QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(1).toString()));

    // Kept as the endpoint's ssh-passphrase item and handed to its tunnel by name.
    auto *secrets = w.secretStore();
    QTRY_COMPARE(secrets->sessionPassword(QStringLiteral("ssh-passphrase:app")), std::optional<QString>(passphrase));
    QCOMPARE(core::sshPassphraseFor("app"), std::optional<std::string>(passphrase.toStdString()));
    QVERIFY(!anyFileContains(dir.path().string(), passphrase.toUtf8()));
    const QString yamlPath = QString::fromStdString(dir.file("exported.yaml"));
    QVERIFY(page->exportFile(yamlPath));
    QVERIFY(test::readFile(yamlPath.toStdString()).find("id_locked") != std::string::npos);
    QVERIFY(!anyFileContains(dir.path().string(), passphrase.toUtf8()));

    // A hash mask's `key: keychain` is answered from the same store (item hmac:<table>), so the
    // app's engine can run the table as driftless-cli does.
    QCOMPARE(core::maskKeyFor("public.customers"), std::nullopt);
    secrets->store(SecretStore::maskKeyKey(QStringLiteral("public.customers")), QStringLiteral("0123abcd"));
    QTRY_COMPARE(core::maskKeyFor("public.customers"), std::optional<std::string>("0123abcd"));
}

void TestWorkspacePage::removeIsRefusedWhileAPipelineUsesTheEndpoint()
{
    test::PgTestDb src("gui_rm_src");
    test::PgTestDb dst("gui_rm_dst");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::Workspace ws = workspaceFor(src, dst, dir.file("replica.db"));
    ws.pipelines.pop_back(); // nothing writes to lite now
    core::StateStore(statePath).applyWorkspace(ws);

    MainWindow w;
    w.show();
    auto *page = w.workspacePage();
    w.pages()->setCurrentWidget(page);
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_COMPARE(page->endpointsModel()->rowCount(), 3);

    page->selectEndpoint(QStringLiteral("src"));
    QVERIFY(!page->removeButton()->isEnabled());
    QVERIFY2(page->removeButton()->toolTip().contains(QStringLiteral("app_to_dw uses src")),
             qPrintable(page->removeButton()->toolTip()));

    page->selectEndpoint(QStringLiteral("lite"));
    QVERIFY(page->removeButton()->isEnabled());
    QVERIFY(!page->passwordButton()->isEnabled());
    QTest::mouseClick(page->removeButton(), Qt::LeftButton);
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    auto *confirm = page->confirmation()->findChild<QPushButton *>(QStringLiteral("confirmRemove"));
    QVERIFY(confirm);
    QSignalSpy saved(page, &ui::WorkspacePage::saved);
    confirm->click();
    QVERIFY(saved.wait(15000));
    QVERIFY(saved.first().at(0).toBool());
    QCOMPARE(page->endpointsModel()->rowCount(), 2);
    QVERIFY(!core::StateStore(statePath).loadWorkspace().endpoint("lite"));
}

namespace {

/// The findings of `driftless-cli doctor --json` with `args` on the workspace at `statePath`.
std::vector<core::Finding> cliDoctor(const std::string &statePath, std::vector<std::string> args)
{
    args.insert(args.begin(), {"--state", statePath, "doctor", "--json"});
    const auto r = test::runCli(args);
    return core::findingsFromJson(nlohmann::json::parse(r.out));
}

/// Finding by finding, every field; the messages name the first difference.
void compareFindings(const std::vector<core::Finding> &app, const std::vector<core::Finding> &cli)
{
    QCOMPARE(app.size(), cli.size());
    for (std::size_t i = 0; i < app.size(); ++i) {
        const auto row = [](const core::Finding &f) {
            return QString::fromStdString(std::string(toString(f.level)) + " | " + f.category + " | " + f.pipeline +
                                          " | " + f.subject + " | " + f.message + " | " + f.fix + " | " + f.sql);
        };
        QCOMPARE(row(app[i]), row(cli[i]));
    }
}

} // namespace

void TestWorkspacePage::doctorShowsWhatTheCliDoctorFindsWithTheSqlAndChecksAgain()
{
    test::PgTestDb src("gui_doc_src");
    test::PgTestDb dst("gui_doc_dst");
    // events' cursor has no index: a warning whose fix is one statement. ANALYZE keeps the row
    // estimates the findings quote the same for the app's run and the CLI's.
    src.exec("CREATE TABLE plans (id int PRIMARY KEY, name text);"
             "CREATE TABLE events (id bigint PRIMARY KEY, updated_at timestamptz NOT NULL DEFAULT now());"
             "CREATE TABLE orders (id int PRIMARY KEY, total numeric);"
             "INSERT INTO events SELECT g, now() FROM generate_series(1, 200) g; ANALYZE");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::Workspace ws = workspaceFor(src, dst, dir.file("replica.db"));
    // With a heartbeat the doctor does not list the busiest other databases (which other tests
    // running beside this one would change between two runs).
    ws.pipelines[0].heartbeat = core::Millis(60000);
    core::StateStore(statePath).applyWorkspace(ws);

    MainWindow w;
    w.resize(1180, 620);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto *page = w.workspacePage();
    w.pages()->setCurrentWidget(page);
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_COMPARE(page->pipelinesModel()->rowCount(), 2);
    QVERIFY(!page->doctorPipelineButton()->isEnabled()); // nothing selected yet
    page->selectPipeline(QStringLiteral("app_to_dw"));
    QTRY_VERIFY(page->doctorPipelineButton()->isEnabled());

    QTest::mouseClick(page->doctorPipelineButton(), Qt::LeftButton);
    QPointer<ui::DoctorDialog> doctor = page->doctorDialog();
    QVERIFY(doctor);
    QCOMPARE(doctor->windowTitle(), QStringLiteral("Doctor: pipeline app_to_dw"));
    QSignalSpy checked(doctor.data(), &ui::DoctorDialog::checked);
    QVERIFY(checked.wait(60000));
    QVERIFY2(checked.first().first().toBool(), qPrintable(doctor->summaryLabel()->text()));

    // The same findings as the CLI's doctor, field by field.
    compareFindings(doctor->findings(), cliDoctor(statePath, {"--pipeline", "app_to_dw"}));
    const core::Finding *unindexed = nullptr;
    int problems = 0;
    QString listed;
    for (const auto &f : doctor->findings()) {
        problems += std::string(toString(f.level)) != "ok";
        if (std::string(toString(f.level)) != "ok")
            listed +=
                QString::fromStdString(std::string(toString(f.level)) + " " + f.subject + ": " + f.message + "\n");
        if (f.level == core::FindingLevel::Warn && f.subject == "table public.events")
            unindexed = &f;
    }
    QVERIFY(unindexed);
    QCOMPARE(unindexed->sql, std::string("CREATE INDEX ON \"public\".\"events\" (\"updated_at\");"));
    // The shared test server may leave max_slot_wal_keep_size unset: a second warning, on the source.
    const bool unbounded = src.scalar("SHOW max_slot_wal_keep_size") == "-1";
    const int warnings = unbounded ? 2 : 1;
    QVERIFY2(problems == warnings, qPrintable(listed));
    QVERIFY2(doctor->summaryLabel()->text().contains(warnings == 1 ? QStringLiteral("0 errors and 1 warning")
                                                                   : QStringLiteral("0 errors and 2 warnings")),
             qPrintable(doctor->summaryLabel()->text()));

    // Worst first: the warnings lead, the first selected; picking the unindexed cursor's shows
    // its SQL below with Copy SQL.
    auto *view = doctor->findingsView();
    QCOMPARE(view->topLevelItemCount(), static_cast<int>(doctor->findings().size()));
    for (int row = 0; row < warnings; ++row)
        QCOMPARE(view->topLevelItem(row)->text(0), QStringLiteral("Warning"));
    QCOMPARE(view->topLevelItem(warnings)->text(0), QStringLiteral("OK"));
    QCOMPARE(view->currentItem(), view->topLevelItem(0));
    QTreeWidgetItem *eventsRow = nullptr;
    for (int row = 0; row < warnings; ++row)
        if (view->topLevelItem(row)->text(2) == QStringLiteral("table public.events"))
            eventsRow = view->topLevelItem(row);
    QVERIFY(eventsRow);
    view->setCurrentItem(eventsRow);
    QCOMPARE(doctor->sqlView()->toPlainText(), QString::fromStdString(unindexed->sql));
    QVERIFY(doctor->copySqlButton()->isEnabled());
    doctor->resize(1100, 520);
    saveShot(doctor, QStringLiteral("doctor"));
    QTest::mouseClick(doctor->copySqlButton(), Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), QString::fromStdString(unindexed->sql));
    // A passed check has no SQL to copy; hiding the passed checks leaves the warnings alone.
    view->setCurrentItem(view->topLevelItem(warnings));
    QVERIFY(!doctor->copySqlButton()->isEnabled());
    doctor->showPassedBox()->setChecked(false);
    QCOMPARE(view->topLevelItemCount(), warnings);

    // The DBA runs the statement; Check Again finds nothing left.
    src.exec(unindexed->sql);
    checked.clear();
    QTest::mouseClick(doctor->checkAgainButton(), Qt::LeftButton);
    QVERIFY(!doctor->checkAgainButton()->isEnabled());
    QVERIFY(checked.wait(60000));
    QVERIFY(checked.first().first().toBool());
    for (const auto &f : doctor->findings())
        QVERIFY2(std::string(toString(f.level)) == "ok" || (unbounded && f.subject == "endpoint src"),
                 qPrintable(QString::fromStdString(f.subject + ": " + f.message)));
    QCOMPARE(view->topLevelItemCount(), warnings - 1);
    if (!unbounded)
        QVERIFY2(doctor->summaryLabel()->text().startsWith(QStringLiteral("All ")),
                 qPrintable(doctor->summaryLabel()->text()));

    // Per endpoint: the target's own checks, as `doctor --endpoint dw` gives them.
    page->selectEndpoint(QStringLiteral("dw"));
    QTRY_VERIFY(page->doctorEndpointButton()->isEnabled());
    QTest::mouseClick(page->doctorEndpointButton(), Qt::LeftButton);
    QTRY_VERIFY(!doctor); // one doctor window at a time
    auto *forEndpoint = page->doctorDialog();
    QVERIFY(forEndpoint);
    QCOMPARE(forEndpoint->windowTitle(), QStringLiteral("Doctor: endpoint dw"));
    QSignalSpy endpointChecked(forEndpoint, &ui::DoctorDialog::checked);
    QVERIFY(endpointChecked.wait(60000));
    const auto endpointFindings = forEndpoint->findings();
    QVERIFY(!endpointFindings.empty());
    for (const auto &f : endpointFindings)
        QCOMPARE(f.subject, std::string("endpoint dw"));
    compareFindings(endpointFindings, cliDoctor(statePath, {"--endpoint", "dw"}));
    forEndpoint->close();
}

void TestWorkspacePage::aNewUsersFirstEndpointMakesTheWorkspaceFile()
{
    test::PgTestDb db("gui_first");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    MainWindow w;
    w.resize(1180, 620);
    w.show();
    auto *page = w.workspacePage();
    w.pages()->setCurrentWidget(page);
    w.openWorkspace(QString::fromStdString(statePath));
    // The app's own way in, not a command line: Import YAML… or Add Endpoint….
    QTRY_VERIFY2(page->summaryText().contains(QStringLiteral("Import YAML")), qPrintable(page->summaryText()));
    QVERIFY(page->summaryText().contains(QStringLiteral("Add Endpoint")));
    QVERIFY(!page->summaryText().contains(QStringLiteral("driftless-cli")));
    QTRY_VERIFY(page->addButton()->isEnabled());
    QVERIFY(!page->addPipelineButton()->isEnabled());
    QVERIFY(!std::filesystem::exists(statePath));

    QTest::mouseClick(page->addButton(), Qt::LeftButton);
    QTRY_VERIFY(page->endpointDialog() && page->endpointDialog()->isVisible());
    fillPostgres(*page->endpointDialog(), QStringLiteral("app"), db.name(), test::servers().pgUser);
    QSignalSpy saved(page, &ui::WorkspacePage::saved);
    QTest::mouseClick(page->endpointDialog()->okButton(), Qt::LeftButton);
    QVERIFY(saved.wait(15000));
    QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(1).toString()));
    QVERIFY(std::filesystem::exists(statePath));
    QVERIFY(core::StateStore(statePath).loadWorkspace().endpoint("app"));
    QTRY_COMPARE(page->endpointsModel()->rowCount(), 1);
    QTRY_VERIFY(page->addPipelineButton()->isEnabled());
}

void TestWorkspacePage::removePipelineShowsTheSqlAndDropsTheSlotAndPublication()
{
    test::PgTestDb src("gui_rm_src");
    test::PgTestDb dst("gui_rm_dst");
    src.exec(
        "CREATE TABLE plans (id int PRIMARY KEY); CREATE TABLE events (id int PRIMARY KEY, updated_at timestamptz);"
        "CREATE TABLE orders (id int PRIMARY KEY)");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::Workspace ws = workspaceFor(src, dst, dir.file("replica.db"));
    const std::string pipeline = test::uniqueName("gui_rm");
    ws.pipelines[0].name = pipeline;
    core::StateStore(statePath).applyWorkspace(ws);
    // What a sync of it made on the source: its slot and its publication.
    const std::string slot = "driftless_" + pipeline;
    src.exec("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput'); CREATE PUBLICATION " + slot +
             " FOR TABLE orders");
    struct DropSlot { // the test database cannot be dropped while a slot is in it
        test::PgTestDb &db;
        std::string slot;
        ~DropSlot()
        {
            db.exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot +
                    "'");
        }
    } dropSlot{src, slot};
    const std::string slotCount = "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "'";
    const std::string pubCount = "SELECT count(*) FROM pg_publication WHERE pubname = '" + slot + "'";

    MainWindow w;
    w.resize(1180, 620);
    w.show();
    auto *page = w.workspacePage();
    w.pages()->setCurrentWidget(page);
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_COMPARE(page->pipelinesModel()->rowCount(), 2);
    page->selectPipeline(QString::fromStdString(pipeline));
    QTRY_VERIFY(page->removePipelineButton()->isEnabled());
    QTest::mouseClick(page->removePipelineButton(), Qt::LeftButton);

    // The exact statements, before anything is done.
    QTRY_VERIFY_WITH_TIMEOUT(page->confirmation() && page->confirmation()->isVisible(), 30000);
    QMessageBox *box = page->confirmation();
    QCOMPARE(box->objectName(), QStringLiteral("removePipelineConfirmation"));
    const QString info = box->informativeText();
    QVERIFY2(
        info.contains(
            QStringLiteral("SELECT pg_drop_replication_slot(&#x27;%1&#x27;);").arg(QString::fromStdString(slot))) ||
            info.contains(QStringLiteral("SELECT pg_drop_replication_slot('%1');").arg(QString::fromStdString(slot))),
        qPrintable(info));
    QVERIFY2(info.contains(QStringLiteral("DROP PUBLICATION &quot;%1&quot;;").arg(QString::fromStdString(slot))),
             qPrintable(info));
    QVERIFY(info.contains(QStringLiteral("target tables on dw stay")));
    QVERIFY(box->checkBox() && box->checkBox()->isChecked());
    saveShot(box, QStringLiteral("remove-pipeline"));
    QCOMPARE(src.scalar(slotCount), std::string("1"));

    QSignalSpy saved(page, &ui::WorkspacePage::saved);
    auto *confirm = box->findChild<QPushButton *>(QStringLiteral("confirmRemovePipeline"));
    QVERIFY(confirm);
    QTest::mouseClick(confirm, Qt::LeftButton);
    QVERIFY(saved.wait(60000));
    QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(1).toString()));
    QVERIFY2(saved.first().at(1).toString().contains(QStringLiteral("ran on src: DROP PUBLICATION")),
             qPrintable(saved.first().at(1).toString()));
    QCOMPARE(src.scalar(slotCount), std::string("0"));
    QCOMPARE(src.scalar(pubCount), std::string("0"));
    const auto stored = core::StateStore(statePath).loadWorkspace();
    QVERIFY(!stored.pipeline(pipeline));
    QVERIFY(stored.pipeline("app_to_lite"));
    QTRY_COMPARE(page->pipelinesModel()->rowCount(), 1);
}

QTEST_MAIN(TestWorkspacePage)
#include "tst_workspacepage.moc"
