// TLS where a DBA sees it, against servers that speak it (tests/support/tlsservers.sh: a
// throwaway CA, a server certificate for db.driftless.test, localhost and 127.0.0.1, and a second
// CA that signed nothing):
//  - the Workspace page's TLS column says, per endpoint, what the engine's ledger (the one
//    /sync/status reads) holds: verified, encrypted but not verified, not encrypted, on this
//    machine, or unknown until connected; a weak remote endpoint is in the warning colour with
//    the DSN to use in its tooltip;
//  - the endpoint dialog's CA file goes into the DSN (sslrootcert, ssl-ca) and back, and Test
//    Connection uses it: verified with the test CA, the unknown-CA message with the other one.
// Screenshots go to $DRIFTLESS_ARTIFACTS.

#include "ui/dialogs/endpointdialog.h"
#include "ui/enginebridge.h"
#include "ui/mainwindow.h"
#include "ui/models/endpointsmodel.h"
#include "ui/pages/workspacepage.h"
#include "ui/secrets/secretstore.h"

#include "core/engine/endpoints/connect.h"
#include "core/engine/endpoints/endpointtls.h"
#include "core/model/dsn.h"
#include "core/state/statestore.h"
#include "tests/support/guisupport.h"
#include "tests/support/testsupport.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include <cstdlib>
#include <fstream>
#include <map>

using namespace driftless;
using driftless::test::saveShot;
using driftless::test::tlsServers;
using driftless::ui::EndpointDialog;
using driftless::ui::EndpointsModel;
using driftless::ui::SecretStore;

namespace {

/// The TLS Postgres reached by `host` (the name the certificate is checked against) at
/// 127.0.0.1: off this machine for Driftless, while the packets stay on loopback.
std::string tlsPgDsn(const std::string &host, const std::string &extra)
{
    return "host=" + host + " hostaddr=127.0.0.1 port=" + std::to_string(tlsServers().pgPort) +
           " user=driftless dbname=postgres" + (extra.empty() ? "" : " " + extra);
}

core::Endpoint pgEndpoint(const std::string &name, const std::string &dsn)
{
    core::Endpoint e;
    e.name = name;
    e.kind = core::EndpointKind::Postgres;
    e.dsn = dsn;
    return e;
}

bool runTest(EndpointDialog &d)
{
    QSignalSpy finished(&d, &EndpointDialog::testFinished);
    QTest::mouseClick(d.testButton(), Qt::LeftButton);
    if (!finished.wait(30000))
        return false;
    return finished.first().first().toBool();
}

} // namespace

class TestWorkspaceTls : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void tlsColumnSaysWhatTheEnginesConnectionsHaveAndWarnsAboutWeakOnes();
    void postgresCaFileGoesIntoTheDsnAndBackAndTestConnectionUsesIt();
    void mysqlCaFileMakesTestConnectionVerifiedAndAnotherCaIsRefusedInItsWords();
};

void TestWorkspaceTls::initTestCase()
{
    test::useTestSettings();
    test::servers(); // exports the shared server's PGPASSWORD
    // No PGSSLMODE of the machine running the tests may decide these cases.
    qunsetenv("PGSSLMODE");
    qunsetenv("PGSSLROOTCERT");
}

void TestWorkspaceTls::tlsColumnSaysWhatTheEnginesConnectionsHaveAndWarnsAboutWeakOnes()
{
    const auto &t = tlsServers();
    test::PgTestDb local("gui_tls_local");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::Workspace ws;
    // No sslmode off this machine: verify-full, with the test CA.
    ws.endpoints["secure"] = pgEndpoint("secure", tlsPgDsn(t.certName, "sslrootcert=" + t.ca));
    ws.endpoints["weak"] = pgEndpoint("weak", tlsPgDsn(t.certName, "sslmode=require"));
    ws.endpoints["plain"] = pgEndpoint("plain", tlsPgDsn(t.certName, "sslmode=disable"));
    ws.endpoints["local"] = test::pgEndpoint("local", local.name());
    // Never connected in this test.
    ws.endpoints["later"] =
        pgEndpoint("later", tlsPgDsn(t.certName, "sslrootcert=" + t.ca + " application_name=later"));
    ws.endpoints["files"] = test::sqliteEndpoint("files", dir.file("copy.db"));
    core::StateStore(statePath).applyWorkspace(ws);

    ui::MainWindow w;
    auto *page = w.workspacePage();
    auto *model = page->endpointsModel();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    w.resize(1280, 560);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.pages()->setCurrentWidget(page);
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 6, 15000);
    QCOMPARE(model->headerData(EndpointsModel::Tls, Qt::Horizontal).toString(), QStringLiteral("TLS"));
    auto text = [&](const char *name) {
        return model->index(model->rowOf(QLatin1String(name)), EndpointsModel::Tls).data().toString();
    };
    auto cell = [&](const char *name, int role) {
        return model->index(model->rowOf(QLatin1String(name)), EndpointsModel::Tls).data(role);
    };

    // Before any connection: what the DSN says of where the server is, nothing more.
    QCOMPARE(text("local"), QStringLiteral("local (socket/loopback)"));
    QCOMPARE(text("secure"), QStringLiteral("unknown until connected"));
    QCOMPARE(text("weak"), QStringLiteral("unknown until connected"));
    QCOMPARE(text("files"), QString());
    QVERIFY(!cell("weak", Qt::ForegroundRole).isValid());

    // The engine's own connect functions note each connection in the ledger /sync/status reads.
    core::connectPostgres(ws.endpoints["secure"], "driftless", false);
    core::connectPostgres(ws.endpoints["weak"], "driftless", false);
    core::connectPostgres(ws.endpoints["plain"], "driftless", false);
    core::connectPostgres(ws.endpoints["local"], "driftless", false);
    w.engine()->refresh();
    QTRY_COMPARE_WITH_TIMEOUT(text("secure"), QStringLiteral("verified (verify-full)"), 15000);
    QCOMPARE(text("weak"), QStringLiteral("encrypted, not verified"));
    QCOMPARE(text("plain"), QStringLiteral("not encrypted"));
    QCOMPARE(text("local"), QStringLiteral("local (socket/loopback)"));
    QCOMPARE(text("later"), QStringLiteral("unknown until connected"));

    // The same facts as /sync/status's endpoints, from the same ledger.
    for (const auto &s : core::endpointsTlsStatus(ws)) {
        if (s.name == "secure")
            QVERIFY(s.tls && s.tls->tls.hostVerified && !s.warning);
        if (s.name == "weak")
            QVERIFY(s.tls && s.tls->tls.encrypted && !s.tls->tls.verified && s.warning);
    }

    // Weak and remote: the warning colour and icon, and the exact change in the tooltip.
    const QColor warning = EndpointsModel::warningColour();
    QCOMPARE(cell("weak", Qt::ForegroundRole).value<QColor>(), warning);
    QCOMPARE(cell("plain", Qt::ForegroundRole).value<QColor>(), warning);
    QVERIFY(!cell("weak", Qt::DecorationRole).value<QIcon>().isNull());
    QVERIFY(!cell("secure", Qt::ForegroundRole).isValid());
    QVERIFY(cell("secure", Qt::DecorationRole).value<QIcon>().isNull());
    QVERIFY(!cell("local", Qt::ForegroundRole).isValid());
    const QString weakTip = cell("weak", Qt::ToolTipRole).toString();
    QVERIFY2(weakTip.contains(QStringLiteral("not verified (require, chosen by the dsn)")), qPrintable(weakTip));
    QVERIFY2(weakTip.contains(QStringLiteral("To fix: change endpoint weak's dsn to: ") +
                              QString::fromStdString(tlsPgDsn(t.certName, "sslmode=verify-full"))),
             qPrintable(weakTip));
    QVERIFY2(weakTip.contains(QStringLiteral("sslrootcert=FILE")), qPrintable(weakTip));
    const QString plainTip = cell("plain", Qt::ToolTipRole).toString();
    QVERIFY2(plainTip.contains(QStringLiteral("not encrypted (disable")), qPrintable(plainTip));
    QVERIFY2(plainTip.contains(QStringLiteral("sslmode=verify-full")), qPrintable(plainTip));
    const QString secureTip = cell("secure", Qt::ToolTipRole).toString();
    QVERIFY2(secureTip.contains(QStringLiteral("certificate and host name verified (verify-full)")),
             qPrintable(secureTip));
    QVERIFY2(!secureTip.contains(QStringLiteral("To fix")), qPrintable(secureTip));

    // The weak rows unselected, so their colour shows.
    page->selectEndpoint(QStringLiteral("secure"));
    saveShot(&w, QStringLiteral("workspace-tls"));

    // A changed DSN is another connection: unknown again until the engine connects with it.
    ws.endpoints["secure"].dsn += " connect_timeout=10";
    core::StateStore(statePath).applyWorkspace(ws);
    QTRY_COMPARE_WITH_TIMEOUT(text("secure"), QStringLiteral("unknown until connected"), 15000);
}

void TestWorkspaceTls::postgresCaFileGoesIntoTheDsnAndBackAndTestConnectionUsesIt()
{
    const auto &t = tlsServers();
    EndpointDialog d(std::nullopt, {}, std::nullopt, SecretStore::Backend::SessionOnly);
    d.resize(620, d.height());
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QVERIFY(d.caFileEdit()->isVisible());
    QVERIFY(d.caBrowseButton()->isVisible());
    d.nameEdit()->setText(QStringLiteral("secure"));
    d.fieldsMode()->setChecked(true);
    // localhost is in the certificate; on this machine verify-full must be chosen to be checked.
    d.hostEdit()->setText(QStringLiteral("localhost"));
    d.portBox()->setValue(t.pgPort);
    d.databaseEdit()->setText(QStringLiteral("postgres"));
    d.userEdit()->setText(QStringLiteral("driftless"));
    d.tlsBox()->setCurrentIndex(d.tlsBox()->findData(QStringLiteral("verify-full")));
    d.caFileEdit()->setText(QString::fromStdString(t.ca));
    QVERIFY2(d.problem().isEmpty(), qPrintable(d.problem()));
    const core::Endpoint e = d.endpoint();
    QVERIFY2(e.dsn.find("sslmode=verify-full sslrootcert=" + t.ca) != std::string::npos, e.dsn.c_str());

    // Test Connection uses it: encrypted and verified.
    QVERIFY(runTest(d));
    QString result = d.resultLabel()->text();
    QVERIFY2(result.contains(QStringLiteral("the server's certificate and host name <b>verified</b> (verify-full)")),
             qPrintable(result));
    saveShot(&d, QStringLiteral("endpoint-dialog-tls-verified"));

    // The CA that signed nothing here: the unknown-CA message, naming the file, and its fix.
    d.caFileEdit()->setText(QString::fromStdString(t.otherCa));
    QVERIFY(!runTest(d));
    result = d.resultLabel()->text();
    QVERIFY2(result.contains(QStringLiteral("not signed by a CA this machine trusts: ") +
                             QString::fromStdString(t.otherCa) + QStringLiteral(" does not hold its CA")),
             qPrintable(result));
    QVERIFY2(result.contains(QStringLiteral("set sslrootcert=FILE")), qPrintable(result));
    // Without a CA file at all, the fix is the same field.
    d.caFileEdit()->clear();
    QVERIFY(d.endpoint().dsn.find("sslrootcert") == std::string::npos);
    QVERIFY(!runTest(d));
    result = d.resultLabel()->text();
    QVERIFY2(result.contains(QStringLiteral("sslrootcert=FILE")), qPrintable(result));

    // Without TLS there is no certificate: the field is disabled and left out of the DSN.
    d.caFileEdit()->setText(QString::fromStdString(t.ca));
    d.tlsBox()->setCurrentIndex(d.tlsBox()->findData(QStringLiteral("disable")));
    QVERIFY(!d.caFileEdit()->isEnabled());
    QVERIFY(d.endpoint().dsn.find("sslrootcert") == std::string::npos);

    // Round trip: the DSN opens in the fields with its CA file, and saves to the same text; a
    // path with a space is quoted for libpq and read back whole.
    EndpointDialog edit(e, {}, std::nullopt, SecretStore::Backend::SessionOnly);
    QVERIFY(edit.fieldsMode()->isChecked());
    QCOMPARE(edit.caFileEdit()->text(), QString::fromStdString(t.ca));
    QCOMPARE(edit.tlsBox()->currentData().toString(), QStringLiteral("verify-full"));
    QCOMPARE(edit.endpoint().dsn, e.dsn);
    edit.caFileEdit()->setText(QStringLiteral("/etc/ssl/our ca/root.pem"));
    const core::Endpoint spaced = edit.endpoint();
    QVERIFY2(spaced.dsn.find("sslrootcert='/etc/ssl/our ca/root.pem'") != std::string::npos, spaced.dsn.c_str());
    bool found = false;
    for (const auto &[k, v] : core::parsePgDsn(spaced.dsn))
        if (k == "sslrootcert")
            found = v == "/etc/ssl/our ca/root.pem";
    QVERIFY(found);
    EndpointDialog again(spaced, {}, std::nullopt, SecretStore::Backend::SessionOnly);
    QVERIFY(again.fieldsMode()->isChecked());
    QCOMPARE(again.caFileEdit()->text(), QStringLiteral("/etc/ssl/our ca/root.pem"));
    QCOMPARE(again.endpoint().dsn, spaced.dsn);
}

void TestWorkspaceTls::mysqlCaFileMakesTestConnectionVerifiedAndAnotherCaIsRefusedInItsWords()
{
    const auto &t = tlsServers();
    EndpointDialog d(std::nullopt, {}, std::nullopt, SecretStore::Backend::SessionOnly);
    d.resize(620, d.height());
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    d.nameEdit()->setText(QStringLiteral("shop"));
    d.kindBox()->setCurrentIndex(2);
    d.fieldsMode()->setChecked(true);
    d.hostEdit()->setText(QStringLiteral("127.0.0.1"));
    d.portBox()->setValue(t.myPort);
    d.userEdit()->setText(QString::fromStdString(t.myUser));
    d.passwordEdit()->setText(QString::fromStdString(t.myPassword));
    d.tlsBox()->setCurrentIndex(d.tlsBox()->findData(QStringLiteral("verify_identity")));
    d.caFileEdit()->setText(QString::fromStdString(t.ca));
    QCOMPARE(core::MysqlDsn::parse(d.endpoint().dsn).sslCa, t.ca);

    QVERIFY(runTest(d));
    QString result = d.resultLabel()->text();
    QVERIFY2(result.contains(QStringLiteral("the server's certificate and host name <b>verified</b> "
                                            "(verify_identity)")),
             qPrintable(result));

    d.caFileEdit()->setText(QString::fromStdString(t.otherCa));
    QVERIFY(!runTest(d));
    result = d.resultLabel()->text();
    QVERIFY2(result.contains(QStringLiteral("not signed by a CA this machine trusts: ") +
                             QString::fromStdString(t.otherCa) + QStringLiteral(" (ssl-ca) does not hold its CA")),
             qPrintable(result));
    QVERIFY2(result.contains(QStringLiteral("set ssl-ca=FILE")), qPrintable(result));

    // Round trip through the fields.
    d.caFileEdit()->setText(QString::fromStdString(t.ca));
    const core::Endpoint e = d.endpoint();
    EndpointDialog edit(e, {}, std::nullopt, SecretStore::Backend::SessionOnly);
    QVERIFY(edit.fieldsMode()->isChecked());
    QCOMPARE(edit.caFileEdit()->text(), QString::fromStdString(t.ca));
    QCOMPARE(edit.endpoint().dsn, e.dsn);
}

QTEST_MAIN(TestWorkspaceTls)
#include "tst_workspacetls.moc"
