// The slot guard in the desktop app: the endpoint dialog's "Slot guard" group round-trips a
// core::SlotGuard and refuses a warn level above the maximum; a table the guard moved from CDC
// to cursor sync shows as "cursor (fell back from CDC)" on the Tables page, and "Promote to CDC…"
// (confirmed) returns it to CDC in the stored workspace, clears its cursor checkpoint in the
// real target Postgres, and the page shows the engine's reloaded workspace; a running sync is
// stopped for it and started again, and then streams the table from a new slot. Screenshots go to
// $DRIFTLESS_ARTIFACTS.

#include "ui/backfillrunner.h"
#include "ui/dialogs/endpointdialog.h"
#include "ui/dialogs/slotguardbox.h"
#include "ui/dialogs/sshtunnelbox.h"
#include "ui/enginebridge.h"
#include "ui/models/eventsmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/tablespage.h"
#include "ui/promoterunner.h"
#include "ui/widgets/bytesizeedit.h"

#include "core/config/workspacefile.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/run/stateobserver.h"
#include "core/engine/sync/tablesync.h"
#include "core/model/workspace.h"
#include "core/state/statestore.h"
#include "tests/support/guisupport.h"
#include "tests/support/testsupport.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QTest>

using namespace driftless;
using driftless::test::saveShot;
using driftless::ui::EndpointDialog;
using driftless::ui::EngineBridge;
using driftless::ui::TablesModel;
using namespace std::chrono_literals;

Q_DECLARE_METATYPE(core::SlotGuard)

namespace {

core::Endpoint pgSource(std::optional<core::SlotGuard> guard)
{
    core::Endpoint e;
    e.name = "app";
    e.kind = core::EndpointKind::Postgres;
    e.dsn = "host=db1.example.com dbname=app user=sync";
    e.slotGuard = std::move(guard);
    return e;
}

core::SlotGuard guardOf(std::int64_t max, core::SlotGuard::Action action, std::optional<std::int64_t> warn = {},
                        std::optional<std::int64_t> minSafe = {}, std::optional<core::Millis> inactive = {})
{
    core::SlotGuard g;
    g.maxRetained = max;
    g.action = action;
    g.warnRetained = warn;
    g.minSafeWal = minSafe;
    g.inactiveAlert = inactive;
    return g;
}

/// A pipeline whose items table the slot guard moved to cursor sync (as fallBack() leaves it).
core::Workspace fellBackWorkspace(const test::PgTestDb &src, const test::PgTestDb &dst, const std::string &pipeline)
{
    core::Workspace ws;
    ws.endpoints["app"] = test::pgEndpoint("app", src.name());
    // Far above what the shared test server's other tests write while a new slot waits for its
    // first confirmed position: the guard must not fall back again after the promotion.
    ws.endpoints["app"].slotGuard = guardOf(10LL << 30, core::SlotGuard::Action::Fallback);
    ws.endpoints["dw"] = test::pgEndpoint("dw", dst.name());
    core::PipelineSpec p;
    p.name = pipeline;
    p.source = "app";
    p.target = "dw";
    core::TableSpec items;
    items.table = {"public", "items"};
    items.strategy = core::Strategy::Cursor;
    items.cursor = "updated_at";
    items.fallbackFrom = core::Strategy::Cdc;
    p.tables = {items};
    ws.pipelines = {p};
    return ws;
}

std::optional<core::Checkpoint> cursorCheckpoint(const core::Workspace &ws, const std::string &pipeline)
{
    for (const auto &job : core::jobsFor(ws, pipeline))
        if (job.spec.table.name == "items")
            return core::createMerger(job.target, {pipeline, job.spec.table, job.targetName, core::Strategy::Cursor})
                ->readCheckpoint();
    return std::nullopt;
}

} // namespace

class TestSlotGuardUi : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void endpointDialogRoundTripsSlotGuard_data();
    void endpointDialogRoundTripsSlotGuard();
    void warnAboveMaxIsRefused();
    void endpointDialogRoundTripsSshTunnel();
    void fellBackTableIsPromotedToCdc();
    void runningSyncIsRestartedOnCdc();
};

void TestSlotGuardUi::initTestCase()
{
    test::useTestSettings();
}

void TestSlotGuardUi::endpointDialogRoundTripsSlotGuard_data()
{
    QTest::addColumn<bool>("hasGuard");
    QTest::addColumn<core::SlotGuard>("guard");
    using A = core::SlotGuard::Action;
    QTest::newRow("fallback, every field")
        << true << guardOf(10LL << 30, A::Fallback, 6LL << 30, 1LL << 30, core::Millis(300'000));
    QTest::newRow("alert, defaults") << true << guardOf(512LL << 20, A::Alert);
    QTest::newRow("odd sizes") << true << guardOf(1536LL << 10, A::Fallback, 1000LL << 10);
    QTest::newRow("terabytes") << true << guardOf(2LL << 40, A::Alert, 1536LL << 30);
    QTest::newRow("no guard") << false << core::SlotGuard{};
}

void TestSlotGuardUi::endpointDialogRoundTripsSlotGuard()
{
    QFETCH(bool, hasGuard);
    QFETCH(core::SlotGuard, guard);
    const auto existing = pgSource(hasGuard ? std::optional(guard) : std::nullopt);
    EndpointDialog d(existing, {}, std::nullopt, ui::SecretStore::Backend::SessionOnly);
    QCOMPARE(d.slotGuardBox()->isChecked(), hasGuard);
    QVERIFY2(d.problem().isEmpty(), qPrintable(d.problem()));
    QVERIFY(d.okButton()->isEnabled());
    QVERIFY(d.endpoint().slotGuard == existing.slotGuard);
    QVERIFY(d.endpoint() == existing);

    if (QByteArray(QTest::currentDataTag()) == "fallback, every field") {
        QCOMPARE(d.slotGuardBox()->maxRetainedEdit()->unitBox()->currentText(), QStringLiteral("GB"));
        QCOMPARE(d.slotGuardBox()->maxRetainedEdit()->numberBox()->value(), 10);
        QVERIFY(d.slotGuardBox()->actionHelp()->text().contains(QStringLiteral("drops the slot")));
        d.tabs()->setCurrentWidget(d.slotGuardBox()->parentWidget());
        d.resize(620, d.height());
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        saveShot(&d, QStringLiteral("slot-guard-settings"));
    }
}

void TestSlotGuardUi::warnAboveMaxIsRefused()
{
    EndpointDialog d(pgSource(std::nullopt), {}, std::nullopt, ui::SecretStore::Backend::SessionOnly);
    auto *box = d.slotGuardBox();
    box->setChecked(true);
    QVERIFY(d.okButton()->isEnabled());
    box->maxRetainedEdit()->setBytes(1LL << 30);
    box->warnRetainedEdit()->setBytes(2LL << 30);
    QVERIFY(!d.okButton()->isEnabled());
    QVERIFY2(d.problem().contains(QStringLiteral("warn level")), qPrintable(d.problem()));
    box->warnRetainedEdit()->setBytes(512LL << 20);
    QVERIFY(d.okButton()->isEnabled());
    QVERIFY(d.endpoint().slotGuard->warnRetained == std::optional<std::int64_t>(512LL << 20));
    // Unchecked: no guard at all.
    box->setChecked(false);
    QVERIFY(!d.endpoint().slotGuard);
}

// The SSH tunnel group: what it loads is what it gives back, through the YAML too; a tunnel
// without its SSH host is refused in the loader's words; unchecked, the endpoint has none.
void TestSlotGuardUi::endpointDialogRoundTripsSshTunnel()
{
    auto existing = pgSource(std::nullopt);
    existing.ssh =
        core::SshTunnelSpec{"bastion.example.com", 2222, "tunnel", "~/.ssh/id_driftless", "me@edge.example.com:2200"};
    EndpointDialog d(existing, {}, std::nullopt, ui::SecretStore::Backend::SessionOnly);
    auto *box = d.sshTunnelBox();
    QVERIFY(box->isChecked());
    QCOMPARE(box->hostEdit()->text(), QStringLiteral("bastion.example.com"));
    QCOMPARE(box->portBox()->value(), 2222);
    QCOMPARE(box->identityEdit()->text(), QStringLiteral("~/.ssh/id_driftless"));
    QVERIFY2(d.problem().isEmpty(), qPrintable(d.problem()));
    QVERIFY(d.endpoint() == existing);
    // Through the tunnel the TLS options are not used: greyed, with why.
    auto *tlsMode = d.findChild<QComboBox *>(QStringLiteral("tlsMode"));
    QVERIFY(tlsMode);
    QVERIFY(!tlsMode->isEnabled());
    QVERIFY(tlsMode->toolTip().contains(QStringLiteral("SSH tunnel")));
    core::Workspace ws;
    ws.endpoints["app"] = d.endpoint();
    QVERIFY(core::WorkspaceFile::parse(core::WorkspaceFile::toYaml(ws), "t.yaml", "/").endpoints.at("app") == existing);

    d.tabs()->setCurrentWidget(d.sshTunnelBox()->parentWidget());
    d.resize(620, d.height());
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    saveShot(&d, QStringLiteral("endpoint-ssh"));

    box->hostEdit()->clear();
    QVERIFY(!d.okButton()->isEnabled());
    // The field is on a tab of its own: the message names it.
    QVERIFY2(d.problem().contains(QStringLiteral("enter the SSH host (on the SSH Tunnel tab)")),
             qPrintable(d.problem()));
    box->hostEdit()->setText(QStringLiteral("gw"));
    box->jumpEdit()->clear();
    QVERIFY(d.okButton()->isEnabled());
    QVERIFY(!d.endpoint().ssh->jump);
    box->setChecked(false);
    QVERIFY(!d.endpoint().ssh);
    QVERIFY(tlsMode->isEnabled());

    // A MySQL endpoint keeps its tunnel too.
    core::Endpoint my;
    my.name = "shop";
    my.kind = core::EndpointKind::Mysql;
    my.dsn = "mysql://sync@db-shop.internal:3306/shop";
    my.ssh = core::SshTunnelSpec{"gw.internal", 22, "ops", std::nullopt, std::nullopt};
    EndpointDialog m(my, {}, std::nullopt, ui::SecretStore::Backend::SessionOnly);
    QVERIFY(m.sshTunnelBox()->isChecked());
    QVERIFY(m.endpoint() == my);
}

void TestSlotGuardUi::fellBackTableIsPromotedToCdc()
{
    test::PgTestDb src("guardui_src");
    test::PgTestDb dst("guardui_dst");
    src.exec(R"sql(
CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO items SELECT g, 'item ' || g, now() - interval '1 day' FROM generate_series(1, 500) g;
)sql");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    const std::string pipeline = "app_to_dw"; // no slot is created: the databases are this test's own
    const auto ws = fellBackWorkspace(src, dst, pipeline);
    core::StateStore(statePath).applyWorkspace(ws);
    // The cursor sync that ran after the fallback: it left a cursor checkpoint in the target.
    {
        core::StateStore store(statePath);
        const auto jobs = core::jobsFor(ws, pipeline);
        core::StateObserver observer(store, jobs);
        for (const auto &job : jobs) {
            observer.runStarted(job.key());
            const auto outcome = core::TableSync(job, observer).runOnce({});
            observer.runFinished(job.key(), "ok", outcome.rowsWritten, {});
            observer.tableState(job.key(), core::TableState::Ok, "", std::nullopt);
        }
        store.addEvent(core::Level::Warn, pipeline, "public.items", "slot_guard",
                       "public.items switched from CDC to cursor sync by updated_at");
    }
    QVERIFY(cursorCheckpoint(ws, pipeline).has_value());

    EngineBridge engine;
    TablesModel model;
    ui::EventsModel events;
    QObject::connect(&engine, &EngineBridge::snapshotReady, &model, &TablesModel::setSnapshot);
    QObject::connect(&engine, &EngineBridge::snapshotReady, &events, &ui::EventsModel::setSnapshot);
    ui::BackfillRunner runner(&engine);
    ui::TablesPage page(&model, &runner);
    page.resize(1180, 420);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    engine.open(QString::fromStdString(statePath));
    QTRY_COMPARE(model.rowCount(), 1);

    const QString table = QStringLiteral("public.items");
    const int row = model.rowOf(QString::fromStdString(pipeline), table);
    QCOMPARE(model.index(row, TablesModel::Strategy).data().toString(), QStringLiteral("cursor (fell back from CDC)"));
    QVERIFY(model.index(row, TablesModel::Strategy).data(TablesModel::FellBackRole).toBool());
    QVERIFY(!model.index(row, TablesModel::Strategy).data(Qt::DecorationRole).isNull());
    QVERIFY(!page.promoteButton()->isEnabled()); // nothing selected
    page.selectTable(QString::fromStdString(pipeline), table);
    QTRY_VERIFY(page.promoteButton()->isEnabled());
    QVERIFY(!page.backfillButton()->isEnabled());
    QVERIFY(page.backfillButton()->toolTip().contains(QStringLiteral("Promote")));
    saveShot(&page, QStringLiteral("tables-fallback"));

    // The confirmation says exactly what happens; Cancel changes nothing.
    QTest::mouseClick(page.promoteButton(), Qt::LeftButton);
    QTRY_VERIFY(page.confirmation());
    const QString said = page.confirmation()->informativeText();
    QVERIFY2(said.contains(QStringLiteral("Create a new replication slot on <b>app</b>")), qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("rows already equal are not rewritten; rows the source no longer has are "
                                          "removed")),
             qPrintable(said));
    QVERIFY(said.contains(QStringLiteral("The cursor sync of this table stops.")));
    saveShot(page.confirmation(), QStringLiteral("dialog-promote"));
    page.confirmation()->button(QMessageBox::Cancel)->click();
    QTRY_VERIFY(!page.confirmation());
    QVERIFY(!page.promoteRunner()->busy());

    QSignalSpy finished(page.promoteRunner(), &ui::PromoteRunner::finished);
    QTest::mouseClick(page.promoteButton(), Qt::LeftButton);
    QTRY_VERIFY(page.confirmation());
    page.confirmation()->findChild<QPushButton *>(QStringLiteral("confirmPromote"))->click();
    QTRY_VERIFY(!page.promoteButton()->isEnabled() || finished.count() == 1);
    QVERIFY(finished.wait(30000) || finished.count() == 1);
    QVERIFY2(finished.first().at(3).toBool(), qPrintable(finished.first().at(4).toStringList().join('\n')));
    QVERIFY2(page.promoteResult()->text().contains(QStringLiteral("promoted back to CDC")),
             qPrintable(page.promoteResult()->text()));

    // The stored workspace: CDC again, no longer marked; the cursor checkpoint is gone.
    const auto stored = core::StateStore(statePath).loadWorkspace();
    const auto &spec = stored.pipeline(pipeline)->tables.at(0);
    QVERIFY(spec.strategy == core::Strategy::Cdc);
    QVERIFY(!spec.fallbackFrom);
    QVERIFY(!cursorCheckpoint(ws, pipeline).has_value());

    // The engine read the workspace again: the page shows the table on CDC, Promote disabled.
    QTRY_COMPARE(model.index(row, TablesModel::Strategy).data().toString(), QStringLiteral("cdc"));
    QTRY_VERIFY(!page.promoteButton()->isEnabled());
    saveShot(&page, QStringLiteral("tables-promoted"));

    // The Alerts & Log page lists the guard's events as sentences, the promotion the newest.
    QTRY_VERIFY(events.rowCount() >= 2);
    QCOMPARE(events.index(0, ui::EventsModel::Kind).data().toString(), QStringLiteral("slot_guard"));
    QVERIFY2(events.index(0, ui::EventsModel::Message)
                 .data()
                 .toString()
                 .startsWith(QStringLiteral("public.items promoted back to CDC: the next run creates a slot")),
             qPrintable(events.index(0, ui::EventsModel::Message).data().toString()));
}

void TestSlotGuardUi::runningSyncIsRestartedOnCdc()
{
    test::PgTestDb src("guardui_src");
    test::PgTestDb dst("guardui_dst");
    src.exec(R"sql(
CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO items SELECT g, 'item ' || g, now() - interval '1 day' FROM generate_series(1, 300) g;
)sql");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    const std::string pipeline = test::uniqueName("guardui");
    core::StateStore(statePath).applyWorkspace(fellBackWorkspace(src, dst, pipeline));

    EngineBridge engine;
    TablesModel model;
    QObject::connect(&engine, &EngineBridge::snapshotReady, &model, &TablesModel::setSnapshot);
    ui::BackfillRunner runner(&engine);
    ui::TablesPage page(&model, &runner);
    engine.open(QString::fromStdString(statePath));
    QTRY_COMPARE(model.rowCount(), 1);
    engine.start();
    QTRY_COMPARE(engine.state(), EngineBridge::State::Running);
    QTRY_VERIFY_WITH_TIMEOUT(model.report(0).state == core::TableState::Ok, 30000);

    QSignalSpy finished(page.promoteRunner(), &ui::PromoteRunner::finished);
    QVERIFY(page.promoteRunner()->promote(QString::fromStdString(pipeline), {QStringLiteral("public.items")}) != 0);
    QVERIFY(finished.wait(60000));
    const auto lines = finished.first().at(4).toStringList();
    QVERIFY2(finished.first().at(3).toBool(), qPrintable(lines.join('\n')));
    QVERIFY2(lines.last().contains(QStringLiteral("restarted")), qPrintable(lines.join('\n')));

    // The new run streams the table: a slot exists and the target holds every row.
    QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineBridge::State::Running, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(model.index(0, TablesModel::Strategy).data().toString(), QStringLiteral("cdc"), 30000);
    const std::string slotCount =
        "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'driftless_" + pipeline + "'";
    QTRY_VERIFY_WITH_TIMEOUT(src.scalar(slotCount) == "1", 30000);
    QTRY_VERIFY_WITH_TIMEOUT(dst.scalar("SELECT count(*) FROM public.items") == "300", 30000);

    engine.stop();
    QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineBridge::State::Stopped, 30000);
    src.exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'driftless_" +
             pipeline + "' AND NOT active");
}

QTEST_MAIN(TestSlotGuardUi)
#include "tst_slotguardui.moc"
