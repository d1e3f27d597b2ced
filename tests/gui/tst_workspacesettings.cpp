// Every key of the workspace file has a control in the app, and the dialogs round-trip the file
// exactly (issue 45): a workspace that sets every key goes through the endpoint dialog and the
// pipeline editor without an edit and comes out as the same YAML; each control, edited, writes
// its key. A doctor finding whose fix is a setting is applied from the Doctor, the change shown
// first. No server is needed: discovery and the doctor answer through a recorded engine door.

#include "tests/support/guisupport.h"
#include "tests/support/recordeddoor.h"

#include "ui/dialogs/doctordialog.h"
#include "ui/dialogs/endpointdialog.h"
#include "ui/dialogs/pipelineeditor.h"
#include "ui/dialogs/pipelinesettingspanel.h"
#include "ui/dialogs/slotguardbox.h"
#include "ui/dialogs/tablesettingspanel.h"
#include "ui/enginebridge.h"
#include "ui/findingsetting.h"
#include "ui/mainwindow.h"
#include "ui/models/endpointsmodel.h"
#include "ui/pages/workspacepage.h"

#include "core/config/workspacefile.h"
#include "core/engine/commands/doctor.h"
#include "core/state/statestore.h"

#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include <functional>
#include <memory>

using namespace driftless;
using namespace driftless::ui;

namespace {

/// tests/gui/data/every-setting.yaml, its SQLite path in `dir`: as WorkspaceFile::toYaml writes
/// it, so the text itself is what an untouched round trip must give back.
QString everySettingYaml(const QString &dir)
{
    QFile f(QStringLiteral(DRIFTLESS_EVERY_SETTING));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll()).replace(QStringLiteral("@SQLITE@"), dir + QStringLiteral("/replica.db"));
}

core::Workspace parse(const QString &yaml)
{
    return core::WorkspaceFile::parse(yaml.toStdString(), "every-setting.yaml", "/");
}

/// The pipeline editor on `existing`, its discovery answered by the recording.
std::unique_ptr<PipelineEditor> editorOf(const core::Workspace &ws, const core::PipelineSpec &existing,
                                         test::RecordedDoor *door)
{
    auto editor = std::make_unique<PipelineEditor>(ws, existing, nullptr, door);
    QSignalSpy done(editor.get(), &PipelineEditor::discoveryFinished);
    if (editor->discovering() && !done.wait(10'000))
        return nullptr;
    return editor;
}

std::string withPipeline(core::Workspace ws, const core::PipelineSpec &p)
{
    for (auto &q : ws.pipelines)
        if (q.name == p.name)
            q = p;
    return core::WorkspaceFile::toYaml(ws);
}

/// The line of `yaml` holding `needle`, for messages.
QString lineWith(const std::string &yaml, const QString &needle)
{
    for (const QString &line : QString::fromStdString(yaml).split(QLatin1Char('\n')))
        if (line.contains(needle))
            return line;
    return {};
}

} // namespace

class TestWorkspaceSettings : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void everyKeyRoundTripsThroughTheDialogsUntouched();
    void eachPipelineControlWritesItsKey_data();
    void eachPipelineControlWritesItsKey();
    void badValuesAreRefusedSayingWhatToWrite_data();
    void badValuesAreRefusedSayingWhatToWrite();
    void theSlotGuardsInactiveAlertIsEditable();
    void aMariaDbEndpointIsListedByItsHostAndUser();
    void aPastedDsnsPasswordMovesToThePasswordField_data();
    void aPastedDsnsPasswordMovesToThePasswordField();
    void aDoctorFixThatIsASettingIsShownThenStored();

private:
    QTemporaryDir m_dir;
    QString m_yaml;
    core::Workspace m_ws;
    std::unique_ptr<test::RecordedDoor> m_door;
};

void TestWorkspaceSettings::initTestCase()
{
    test::useTestSettings();
    QVERIFY(m_dir.isValid());
    m_yaml = everySettingYaml(m_dir.path());
    QVERIFY(!m_yaml.isEmpty());
    m_ws = parse(m_yaml);
    // The fixture is written as the app writes files: else "unchanged" could not be told by text.
    QCOMPARE(QString::fromStdString(core::WorkspaceFile::toYaml(m_ws)), m_yaml);
    // ...and every key survives the state store the app and the engine read it back from.
    {
        core::StateStore store(m_dir.filePath(QStringLiteral("state.db")).toStdString());
        store.applyWorkspace(m_ws);
        QCOMPARE(QString::fromStdString(core::WorkspaceFile::toYaml(store.loadWorkspace())), m_yaml);
    }
    m_door = std::make_unique<test::RecordedDoor>(QStringLiteral(DRIFTLESS_RECORDING));
}

// Load a file that sets every key, open each endpoint and pipeline in its dialog, edit nothing,
// export: the same text.
void TestWorkspaceSettings::everyKeyRoundTripsThroughTheDialogsUntouched()
{
    core::Workspace out;
    for (const auto &[name, e] : m_ws.endpoints) {
        EndpointDialog d(e, {}, std::nullopt, SecretStore::Backend::SessionOnly);
        QVERIFY2(d.problem().isEmpty(), qPrintable(QString::fromStdString(name) + ": " + d.problem()));
        QVERIFY2(d.endpoint() == e, name.c_str());
        out.endpoints[name] = d.endpoint();
    }
    for (const auto &p : m_ws.pipelines) {
        auto editor = editorOf(m_ws, p, m_door.get());
        QVERIFY2(editor, p.name.c_str());
        // Every table selected once, as a DBA looking through them would: showing is no edit.
        for (const auto &t : p.tables)
            editor->selectTable(QString::fromStdString(t.table.display()));
        for (int tab = 0; tab < editor->settingsTabs()->count(); ++tab)
            editor->settingsTabs()->setCurrentIndex(tab);
        QVERIFY2(editor->problem().isEmpty(), qPrintable(QString::fromStdString(p.name) + ": " + editor->problem()));
        QVERIFY2(editor->pipeline() == p, p.name.c_str());
        out.pipelines.push_back(editor->pipeline());
    }
    QCOMPARE(QString::fromStdString(core::WorkspaceFile::toYaml(out)), m_yaml);
}

void TestWorkspaceSettings::eachPipelineControlWritesItsKey_data()
{
    QTest::addColumn<QString>("table"); // empty: the pipeline's own settings
    QTest::addColumn<std::function<void(PipelineEditor *)>>("edit");
    QTest::addColumn<QString>("has");  // in the exported file afterwards
    QTest::addColumn<QString>("gone"); // no longer in it

    using E = std::function<void(PipelineEditor *)>;
    auto pipelineText = [](QLineEdit *(PipelineSettingsPanel::*field)() const, QString text) {
        return E([field, text](PipelineEditor *e) { (e->pipelineSettings()->*field)()->setText(text); });
    };
    auto pipelineChoice = [](QComboBox *(PipelineSettingsPanel::*box)() const, QString value) {
        return E([box, value](PipelineEditor *e) {
            QComboBox *b = (e->pipelineSettings()->*box)();
            b->setCurrentIndex(value.isEmpty() ? 0 : b->findData(value));
        });
    };
    auto tableText = [](QLineEdit *(TableSettingsPanel::*field)() const, QString text) {
        return E([field, text](PipelineEditor *e) { (e->tableSettings()->*field)()->setText(text); });
    };
    auto tableChoice = [](QComboBox *(TableSettingsPanel::*box)() const, QString value) {
        return E([box, value](PipelineEditor *e) {
            QComboBox *b = (e->tableSettings()->*box)();
            b->setCurrentIndex(b->findData(value));
        });
    };
    using P = PipelineSettingsPanel;
    using T = TableSettingsPanel;
    QTest::addRow("heartbeat") << QString() << pipelineText(&P::heartbeatEdit, "30s") << "heartbeat: 30s"
                               << "heartbeat: 1m";
    QTest::addRow("heartbeat removed") << QString() << pipelineText(&P::heartbeatEdit, "") << QString() << "heartbeat:";
    QTest::addRow("recover auto") << QString() << pipelineChoice(&P::recoverBox, "auto") << "recover: auto"
                                  << "recover: manual";
    QTest::addRow("recover default") << QString() << pipelineChoice(&P::recoverBox, "") << QString() << "recover:";
    QTest::addRow("adopt") << QString() << pipelineChoice(&P::adoptBox, "false") << "\n    adopt: false\n"
                           << "adopt: true";
    QTest::addRow("adopt default") << QString() << pipelineChoice(&P::adoptBox, "") << QString() << "    adopt: true";
    QTest::addRow("publication") << QString() << pipelineText(&P::publicationEdit, "dw_feed") << "publication: dw_feed"
                                 << "app_pub";
    QTest::addRow("reconcile every") << QString() << pipelineText(&P::reconcileEveryEdit, "12h")
                                     << "reconcile: {every: 12h, alert_above: 0.1%}"
                                     << "every: 6h";
    QTest::addRow("reconcile alert_above")
        << QString() << pipelineText(&P::alertAboveEdit, "2.5%") << "reconcile: {every: 6h, alert_above: 2.5%}"
        << "0.1%";
    QTest::addRow("schema_changes add_column")
        << QString() << pipelineChoice(&P::addColumnBox, "pause")
        << "schema_changes: {add_column: pause, drop_column: drop, type_change: pause, rename_column: pause}"
        << "add_column: propagate";
    QTest::addRow("schema_changes type_change back to the default")
        << QString() << pipelineChoice(&P::typeChangeBox, QString())
        << "schema_changes: {add_column: propagate, drop_column: drop, rename_column: pause}"
        << "type_change";
    QTest::addRow("every") << "public.plans" << tableText(&T::everyEdit, "15m") << "freshness_sla: 2h, every: 15m"
                           << "every: 5m";
    QTest::addRow("freshness_sla") << "public.orders" << tableText(&T::slaEdit, "45s") << "freshness_sla: 45s"
                                   << "freshness_sla: 90s";
    QTest::addRow("page_size") << "public.customers" << tableText(&T::pageSizeEdit, "25000") << "page_size: 25000"
                               << "page_size: 1000,";
    QTest::addRow("lookback") << "public.customers" << tableText(&T::lookbackEdit, "1h") << "lookback: 1h"
                              << "lookback: 15m";
    QTest::addRow("truncate") << "public.orders" << tableChoice(&T::truncateBox, "apply") << "truncate: apply"
                              << "truncate: ignore";
    QTest::addRow("fallback_cursor") << "public.orders" << E([](PipelineEditor *e) {
        e->tableSettings()->fallbackCursorBox()->setCurrentText("updated_at");
    }) << "fallback_cursor: \"updated_at\""
                                     << "modified_at";
    QTest::addRow("table adopt") << "public.orders" << tableChoice(&T::adoptBox, "true")
                                 << "rename_column: rename}, adopt: true}"
                                 << "adopt: false";
    QTest::addRow("table key") << "public.customers" << tableText(&T::keyEdit, "tenant_id, customer_no")
                               << "deletes: ignore, key: [tenant_id, customer_no]}"
                               << "key: [customer_id, tenant_id]";
    QTest::addRow("table key removed") << "public.customers" << tableText(&T::keyEdit, " ") << "deletes: ignore}"
                                       << "key:";
    QTest::addRow("table schema_changes") << "public.plans" << tableChoice(&T::dropColumnBox, "pause")
                                          << "schema_changes: {add_column: ignore, drop_column: pause}"
                                          << "schema_changes: {add_column: ignore}";
}

// Each control, edited in the editor, writes its key into the exported file, and no other line
// of the file changes.
void TestWorkspaceSettings::eachPipelineControlWritesItsKey()
{
    QFETCH(QString, table);
    QFETCH(std::function<void(PipelineEditor *)>, edit);
    QFETCH(QString, has);
    QFETCH(QString, gone);
    auto editor = editorOf(m_ws, *m_ws.pipeline("app_to_dw"), m_door.get());
    QVERIFY(editor);
    if (!table.isEmpty()) {
        editor->selectTable(table);
        editor->settingsTabs()->setCurrentIndex(0);
    } else {
        editor->settingsTabs()->setCurrentWidget(
            editor->findChild<QWidget *>(QStringLiteral("pipelineSettingsScroll")));
    }
    edit(editor.get());
    QVERIFY2(editor->problem().isEmpty(), qPrintable(editor->problem()));
    const QString yaml = QString::fromStdString(withPipeline(m_ws, editor->pipeline()));
    if (!has.isEmpty())
        QVERIFY2(yaml.contains(has), qPrintable(yaml));
    QVERIFY2(!yaml.contains(gone), qPrintable(yaml));
    // The file the app writes loads again as what the editor shows.
    QVERIFY(*core::WorkspaceFile::parse(yaml.toStdString(), "edited.yaml", "/").pipeline("app_to_dw") ==
            editor->pipeline());
    // One line changed (or went), no other.
    const QStringList before = m_yaml.split(QLatin1Char('\n')), after = yaml.split(QLatin1Char('\n'));
    int went = 0, came = 0;
    for (const QString &line : before)
        went += after.contains(line) ? 0 : 1;
    for (const QString &line : after)
        came += before.contains(line) ? 0 : 1;
    QVERIFY2(went == 1 && came <= 1, qPrintable(QStringLiteral("%1 lines went, %2 came").arg(went).arg(came)));
}

void TestWorkspaceSettings::badValuesAreRefusedSayingWhatToWrite_data()
{
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("says");
    QTest::addRow("heartbeat") << "heartbeat"
                               << "often"
                               << "not a duration: write e.g. 90s";
    QTest::addRow("heartbeat under a second") << "heartbeat"
                                              << "500ms"
                                              << "at least 1s";
    QTest::addRow("reconcile every") << "reconcileEvery"
                                     << "30s"
                                     << "Reconcile every is at least 1m";
    QTest::addRow("alert_above") << "alertAbove"
                                 << "lots"
                                 << "a percentage of a table's rows (0.1%)";
    QTest::addRow("alert_above past the whole table") << "alertAbove"
                                                      << "150%"
                                                      << "from 0 to 100%";
    QTest::addRow("publication") << "publication"
                                 << "My-Pub"
                                 << "lower-case letters, digits and _";
    QTest::addRow("every") << "every"
                           << "hourly"
                           << "Every 'hourly' is not a duration";
    QTest::addRow("page_size") << "pageSize"
                               << "0"
                               << "Page size '0' is not a whole number from 1 to 1000000";
}

// A value the file would refuse keeps OK disabled, and the message says what to write.
void TestWorkspaceSettings::badValuesAreRefusedSayingWhatToWrite()
{
    QFETCH(QString, field);
    QFETCH(QString, text);
    QFETCH(QString, says);
    auto editor = editorOf(m_ws, *m_ws.pipeline("app_to_dw"), m_door.get());
    QVERIFY(editor);
    editor->selectTable(field == QLatin1String("pageSize") ? QStringLiteral("public.customers")
                                                           : QStringLiteral("public.plans"));
    auto *edit = editor->findChild<QLineEdit *>(field);
    QVERIFY(edit);
    QVERIFY(edit->isEnabled());
    edit->setText(text);
    QVERIFY2(editor->problem().contains(says), qPrintable(editor->problem()));
    QVERIFY(!editor->okButton()->isEnabled());
    QVERIFY(editor->problemLabel()->isVisibleTo(editor.get()));
}

void TestWorkspaceSettings::theSlotGuardsInactiveAlertIsEditable()
{
    const core::Endpoint &app = m_ws.endpoints.at("app");
    EndpointDialog d(app, {}, std::nullopt, SecretStore::Backend::SessionOnly);
    QCOMPARE(d.slotGuardBox()->inactiveAlertEdit()->text(), QStringLiteral("30m"));
    d.slotGuardBox()->inactiveAlertEdit()->setText(QStringLiteral("2h"));
    QVERIFY(d.okButton()->isEnabled());
    core::Workspace ws = m_ws;
    ws.endpoints["app"] = d.endpoint();
    QVERIFY2(lineWith(core::WorkspaceFile::toYaml(ws), "app:").contains("inactive_alert: 2h"),
             qPrintable(lineWith(core::WorkspaceFile::toYaml(ws), "app:")));
    // Its default is said, and a value the file refuses is refused here.
    d.slotGuardBox()->inactiveAlertEdit()->clear();
    QVERIFY(d.slotGuardBox()->inactiveAlertEdit()->placeholderText().contains(QStringLiteral("10m")));
    QVERIFY(!d.endpoint().slotGuard->inactiveAlert);
    d.slotGuardBox()->inactiveAlertEdit()->setText(QStringLiteral("soon"));
    QVERIFY2(d.problem().contains(QStringLiteral("write e.g. 30m")), qPrintable(d.problem()));
    QVERIFY(!d.okButton()->isEnabled());
}

// The Workspace page lists a MariaDB endpoint as it does a Postgres one, host:port/database and
// its user, not its whole URI and "(login name)".
void TestWorkspaceSettings::aMariaDbEndpointIsListedByItsHostAndUser()
{
    const core::Endpoint &shop = m_ws.endpoints.at("shop");
    QCOMPARE(EndpointsModel::location(shop), QStringLiteral("db2.example.com:3306/shop"));
    QCOMPARE(EndpointsModel::user(shop), QStringLiteral("sync"));
    const core::Endpoint &dw = m_ws.endpoints.at("dw");
    QCOMPARE(EndpointsModel::location(dw), QStringLiteral("127.0.0.1:5433/dw"));
}

void TestWorkspaceSettings::aPastedDsnsPasswordMovesToThePasswordField_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("pasted");
    QTest::addColumn<QString>("dsn");
    QTest::addColumn<QString>("password");
    QTest::addRow("postgres URI") << 0 << "postgresql://sync:s3cr%40t@db1.example.com:5432/app"
                                  << "postgresql://sync@db1.example.com:5432/app"
                                  << "s3cr@t";
    QTest::addRow("key=value, quoted") << 0 << "host=db1 dbname=app user=sync password='it\\'s a \\\\ secret'"
                                       << "host=db1 dbname=app user=sync"
                                       << "it's a \\ secret";
    QTest::addRow("key=value") << 0 << "host=db1 password=plain dbname=app"
                               << "host=db1 dbname=app"
                               << "plain";
    QTest::addRow("mysql URI") << 2 << "mysql://sync:pw@db2.example.com:3306/shop"
                               << "mysql://sync@db2.example.com:3306/shop"
                               << "pw";
}

// A DSN pasted with its password (as most tools copy one) is not refused: the password goes to
// the Password field, and so to the keychain; the DSN keeps the rest (issue 45).
void TestWorkspaceSettings::aPastedDsnsPasswordMovesToThePasswordField()
{
    QFETCH(int, kind);
    QFETCH(QString, pasted);
    QFETCH(QString, dsn);
    QFETCH(QString, password);
    EndpointDialog d(std::nullopt, {}, std::nullopt, SecretStore::Backend::SessionOnly);
    d.nameEdit()->setText(QStringLiteral("app"));
    d.kindBox()->setCurrentIndex(kind);
    d.dsnMode()->setChecked(true);
    d.dsnEdit()->setFocus();
    d.dsnEdit()->insert(pasted); // as a paste does: one edit
    QCOMPARE(d.dsnEdit()->text(), dsn);
    QCOMPARE(d.password(), password);
    QVERIFY2(d.passwordNote()->text().contains(QStringLiteral("moved here")), qPrintable(d.passwordNote()->text()));
    QVERIFY2(d.problem().isEmpty(), qPrintable(d.problem()));
    QVERIFY(d.endpoint().dsn.find(password.toStdString()) == std::string::npos);
}

// The doctor's "add 'heartbeat: 1m' to pipeline shop": a button applies it, after showing the
// key, its value before and after, and the lines of the file that change; the workspace stored is
// the shown one with that key set, and the doctor checks again.
void TestWorkspaceSettings::aDoctorFixThatIsASettingIsShownThenStored()
{
    MainWindow w;
    w.resize(1180, 640);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto *door = new test::RecordedDoor(QStringLiteral(DRIFTLESS_RECORDING));
    w.engine()->attachDoor(door, QStringLiteral("recorded agent"));
    WorkspacePage *page = w.workspacePage();
    QTRY_VERIFY(page->workspace().pipeline("shop"));
    const core::Workspace before = page->workspace();

    core::Finding heartbeat{core::FindingLevel::Warn,
                            "config",
                            "shop",
                            "endpoint app",
                            "no heartbeat, and other databases on this server write WAL (billing): while this "
                            "source is idle its slot cannot advance and holds their WAL",
                            "add 'heartbeat: 1m' to pipeline shop (a small transactional message in this database "
                            "moves the slot)"};
    heartbeat.setting = core::FindingSetting{{}, "heartbeat", "1m"};
    const core::Finding index{core::FindingLevel::Warn,
                              "config",
                              "shop",
                              "table public.customers",
                              "cursor column updated_at is not indexed: every pass scans the table",
                              "CREATE INDEX ON public.customers (updated_at)",
                              "CREATE INDEX ON public.customers (updated_at);"};
    door->answer("POST /api/v1/doctor", 200, core::doctorJsonValue({heartbeat, index}));
    door->answer("PUT /api/v1/workspace", 200, {{"changed", true}, {"lines", {"pipeline shop: heartbeat 1m"}}});

    page->selectPipeline(QStringLiteral("shop"));
    QTest::mouseClick(page->doctorPipelineButton(), Qt::LeftButton);
    QTRY_VERIFY(page->doctorDialog() && !page->doctorDialog()->checking());
    DoctorDialog *doctor = page->doctorDialog();
    QCOMPARE(doctor->findings().size(), std::size_t{2});
    // The SQL fix has no setting to apply; the heartbeat has.
    auto select = [&](const QString &subject) {
        for (int i = 0; i < doctor->findingsView()->topLevelItemCount(); ++i)
            if (doctor->findingsView()->topLevelItem(i)->text(2) == subject)
                doctor->findingsView()->setCurrentItem(doctor->findingsView()->topLevelItem(i));
    };
    select(QStringLiteral("table public.customers"));
    QVERIFY(!doctor->applySettingButton()->isEnabled());
    select(QStringLiteral("endpoint app"));
    QVERIFY(doctor->applySettingButton()->isEnabled());
    QCOMPARE(doctor->applySettingButton()->text(), QStringLiteral("&Apply heartbeat: 1m\u2026"));
    // Its whole text on screen, beside the fix it applies.
    QTRY_VERIFY(doctor->applySettingButton()->width() >= doctor->applySettingButton()->sizeHint().width());
    test::saveShot(doctor, QStringLiteral("doctor-apply-setting"));

    const int doctorRuns = door->count("POST /api/v1/doctor");
    QTest::mouseClick(doctor->applySettingButton(), Qt::LeftButton);
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    QMessageBox *box = page->confirmation();
    QCOMPARE(box->objectName(), QStringLiteral("applySettingConfirmation"));
    QVERIFY2(box->text().contains(QStringLiteral("heartbeat: 1m")) && box->text().contains(QStringLiteral("shop")),
             qPrintable(box->text()));
    QVERIFY2(box->informativeText().contains(QStringLiteral("not set")), qPrintable(box->informativeText()));
    QVERIFY2(box->detailedText().contains(QStringLiteral("+ heartbeat: 1m")), qPrintable(box->detailedText()));
    test::saveShot(box, QStringLiteral("dialog-apply-setting"));
    // Nothing is stored before the DBA says so.
    QCOMPARE(door->count("PUT /api/v1/workspace"), 0);
    QTest::mouseClick(box->findChild<QPushButton *>(QStringLiteral("confirmApplySetting")), Qt::LeftButton);

    QTRY_COMPARE(door->count("PUT /api/v1/workspace"), 1);
    std::string stored;
    for (const auto &c : door->calls())
        if (c.verb == "PUT")
            stored = c.raw;
    const core::Workspace sent = core::WorkspaceFile::parse(stored, "sent.yaml", "/");
    core::Workspace expected = before;
    for (auto &p : expected.pipelines)
        if (p.name == "shop")
            p.heartbeat = core::Millis(60'000);
    QVERIFY2(sent == expected, stored.c_str());
    // The doctor looks again at what was stored.
    QTRY_VERIFY(door->count("POST /api/v1/doctor") > doctorRuns);
}

QTEST_MAIN(TestWorkspaceSettings)
#include "tst_workspacesettings.moc"
