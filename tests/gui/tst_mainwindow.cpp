// The window against real Postgres: a workspace with one pipeline and two tables (full refresh
// and cursor) is opened, its stored status shows before any engine runs, Start syncs both
// tables until they are fresh, the rows land in the target, and Stop returns at once while the
// engine winds down off the UI thread. Screenshots go to $DRIFTLESS_ARTIFACTS.

#include "ui/alertcenter.h"
#include "ui/enginebridge.h"
#include "ui/mainwindow.h"
#include "ui/models/alertsmodel.h"
#include "ui/models/eventsmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/alertspage.h"
#include "ui/pages/tablespage.h"
#include "ui/synccontinuity.h"

#include "core/model/workspace.h"
#include "core/state/statestore.h"
#include "tests/support/guisupport.h"
#include "tests/support/testsupport.h"

#include <QAction>
#include <QDir>
#include <QElapsedTimer>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QSystemTrayIcon>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include <memory>

using namespace driftless;
using driftless::test::artifactsDir;
using driftless::test::saveShot;
using driftless::ui::EngineBridge;
using driftless::ui::MainWindow;
using driftless::ui::TablesModel;

namespace {

const char *kSourceSchema = R"sql(
CREATE TABLE customers (id bigint PRIMARY KEY, name text, updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE orders (id bigint PRIMARY KEY, name text, updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO customers (id, name) SELECT g, 'customer ' || g FROM generate_series(1, 250) g;
INSERT INTO orders (id, name, updated_at)
  SELECT g, 'order ' || g, now() - interval '1 hour' + g * interval '1 second' FROM generate_series(1, 1200) g;
)sql";

core::Workspace workspaceFor(const test::PgTestDb &src, const test::PgTestDb &dst)
{
    core::Workspace ws;
    ws.endpoints["src"] = test::pgEndpoint("src", src.name());
    ws.endpoints["dw"] = test::pgEndpoint("dw", dst.name());
    core::PipelineSpec p;
    p.name = "app_to_dw";
    p.source = "src";
    p.target = "dw";
    core::TableSpec customers;
    customers.table = {"public", "customers"};
    customers.strategy = core::Strategy::FullRefresh;
    core::TableSpec orders;
    orders.table = {"public", "orders"};
    orders.strategy = core::Strategy::Cursor;
    orders.cursor = "updated_at";
    p.tables = {customers, orders};
    ws.pipelines.push_back(p);
    return ws;
}

QString cell(const QAbstractItemModel *m, int row, int column)
{
    return m->data(m->index(row, column)).toString();
}

/// `state` may list several words separated by '|'.
bool tableIs(const TablesModel *model, const char *table, const char *state, const char *freshness)
{
    const int row = model->rowOf(QStringLiteral("app_to_dw"), QString::fromLatin1(table));
    if (row < 0)
        return false;
    const QStringList states = QString::fromLatin1(state).split(QLatin1Char('|'));
    return states.contains(model->index(row, TablesModel::State).data().toString()) &&
           model->index(row, TablesModel::Freshness).data().toString() == QLatin1String(freshness);
}

/// Alerts about tables. Slot alerts are left out: the test server's slots are shared with other
/// tests running at the same time, and a slot of theirs may be lost at any moment.
std::vector<core::Alert> tableAlerts(const MainWindow &w)
{
    std::vector<core::Alert> out;
    for (const auto &a : w.alertCenter()->alerts())
        if (!a.table.empty())
            out.push_back(a);
    return out;
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void missingWorkspaceFileIsExplainedNotCreated();
    void syncsBothTablesAndStopsWithoutBlocking();
    void missingSourceTableIsAnAlertThatSaysWhy();
};

void TestMainWindow::initTestCase()
{
    test::useTestSettings();
}

void TestMainWindow::missingWorkspaceFileIsExplainedNotCreated()
{
    test::TempDir dir;
    const QString path = QString::fromStdString(dir.file("typo.db"));
    MainWindow w;
    w.show();
    w.pages()->setCurrentWidget(w.tablesPage()); // the Dashboard is the first page
    w.openWorkspace(path);
    auto *notice = w.tablesPage()->findChild<QLabel *>(QStringLiteral("tablesNotice"));
    QVERIFY(notice);
    QTRY_VERIFY(notice->isVisible());
    // The app's own way to a workspace, not a command line.
    QVERIFY2(notice->text().contains(QStringLiteral("Import YAML")), qPrintable(notice->text()));
    QVERIFY2(notice->text().contains(path), qPrintable(notice->text()));
    QVERIFY(!QFileInfo::exists(path));
    QCOMPARE(w.tablesModel()->rowCount(), 0);
    QVERIFY(!w.startAction()->isEnabled());

    // As `driftless --run` with a mistyped --state: the engine refuses, says why, and still
    // creates nothing.
    w.engine()->start();
    QTRY_COMPARE(w.engine()->state(), EngineBridge::State::Stopped);
    QVERIFY2(w.engine()->message().contains(QStringLiteral("no workspace at")), qPrintable(w.engine()->message()));
    QVERIFY(w.statusBar()->findChild<QLabel *>(QStringLiteral("engineState"))->toolTip().contains(path));
    QVERIFY(!QFileInfo::exists(path));
}

void TestMainWindow::syncsBothTablesAndStopsWithoutBlocking()
{
    test::PgTestDb src("gui_src");
    test::PgTestDb dst("gui_dst");
    src.exec(kSourceSchema);
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace(workspaceFor(src, dst));

    {
        MainWindow w;
        w.resize(1180, 620);
        w.show();
        w.pages()->setCurrentWidget(w.tablesPage()); // the Dashboard is the first page
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.openWorkspace(QString::fromStdString(statePath));

        // Before any engine runs: the stored status, read off the UI thread.
        auto *model = w.tablesModel();
        QTRY_COMPARE(model->rowCount(), 2);
        QVERIFY(tableIs(model, "public.customers", "idle", "unknown"));
        QVERIFY(tableIs(model, "public.orders", "idle", "unknown"));
        QCOMPARE(w.engine()->state(), EngineBridge::State::Stopped);
        QTRY_VERIFY(w.startAction()->isEnabled());
        QVERIFY(!w.stopAction()->isEnabled());
        QVERIFY(w.statusBar()
                    ->findChild<QLabel *>(QStringLiteral("workspacePath"))
                    ->text()
                    .contains(QString::fromStdString(statePath)));
        saveShot(&w, QStringLiteral("mainwindow-before-sync"));

        w.startAction()->trigger();
        QTRY_COMPARE(w.engine()->state(), EngineBridge::State::Running);
        QVERIFY(w.stopAction()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(
            tableIs(model, "public.customers", "ok", "ok") && tableIs(model, "public.orders", "ok", "ok"), 60000);

        // The rows are in the target, not just reported.
        QCOMPARE(dst.scalar("SELECT count(*) FROM public.customers"), std::string("250"));
        QCOMPARE(dst.scalar("SELECT count(*) FROM public.orders"), std::string("1200"));
        {
            auto s = src.connect();
            auto d = dst.connect();
            QCOMPARE(test::pgHash(d, "SELECT id, name FROM public.orders", "id"),
                     test::pgHash(s, "SELECT id, name FROM public.orders", "id"));
        }
        const int orders = model->rowOf(QStringLiteral("app_to_dw"), QStringLiteral("public.orders"));
        QTRY_COMPARE(model->index(orders, TablesModel::Rows).data(TablesModel::SortRole).toLongLong(), 1200LL);

        // The Tables view lists both, and the Ctrl+F filter narrows it.
        QTableView *view = w.tablesPage()->view();
        QCOMPARE(view->model()->rowCount(), 2);
        QStringList shown;
        for (int row = 0; row < 2; ++row)
            shown << cell(view->model(), row, TablesModel::Table);
        shown.sort();
        QCOMPARE(shown, QStringList({QStringLiteral("public.customers"), QStringLiteral("public.orders")}));
        QVERIFY(view->isVisible());
        QVERIFY(view->columnWidth(TablesModel::LastSync) >=
                view->fontMetrics().horizontalAdvance(QStringLiteral("2026-01-01 00:00:00")));
        QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
        QTRY_VERIFY(w.tablesPage()->filterEdit()->hasFocus());
        QTest::keyClicks(w.tablesPage()->filterEdit(), QStringLiteral("orders"));
        QCOMPARE(view->model()->rowCount(), 1);
        QCOMPARE(cell(view->model(), 0, TablesModel::Table), QStringLiteral("public.orders"));
        w.tablesPage()->filterEdit()->clear();
        QCOMPARE(view->model()->rowCount(), 2);
        view->selectRow(0);

        // The engine's start is in the log; nothing needs attention.
        QTRY_VERIFY(w.eventsModel()->rowCount() >= 1);
        bool started = false;
        for (int row = 0; row < w.eventsModel()->rowCount(); ++row)
            started |= w.eventsModel()->event(row).kind == "engine_started";
        QVERIFY(started);
        QVERIFY(tableAlerts(w).empty());

        w.pages()->setCurrentWidget(w.tablesPage());
        saveShot(&w, QStringLiteral("mainwindow-tables"));
        saveShot(w.tablesPage(), QStringLiteral("page-tables"));
        w.pages()->setCurrentWidget(w.alertsPage());
        QTRY_VERIFY(w.alertsPage()->isVisible());
        saveShot(&w, QStringLiteral("mainwindow-log"));
        saveShot(w.alertsPage(), QStringLiteral("page-log"));
        w.pages()->setCurrentWidget(w.tablesPage());

        // Stop returns at once; the window keeps handling events while the engine winds down.
        // The engine's end reaches the window through its event loop, so a stop() that waited
        // for the engine would come back Stopped; one that did not comes back Stopping.
        w.stopAction()->trigger();
        QCOMPARE(w.engine()->state(), EngineBridge::State::Stopping);
        QVERIFY(!w.startAction()->isEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(w.engine()->state(), EngineBridge::State::Stopped, 30000);
        QCOMPARE(w.engine()->message(), QString());
        QTRY_VERIFY(w.startAction()->isEnabled());
        // Stopped between passes, tables keep their last state and freshness; the engine's
        // "stopped" note is in the log.
        QVERIFY(tableIs(model, "public.customers", "ok|idle", "ok"));
        QVERIFY(tableIs(model, "public.orders", "ok|idle", "ok"));
        QTRY_VERIFY(w.eventsModel()->rowCount() >= 2 && w.eventsModel()->event(0).kind == "engine_stopped");

        // F5 with no engine reads the file again: the same status, now from disk.
        QTest::keyClick(&w, Qt::Key_F5);
        QTRY_VERIFY(!w.engine()->snapshot().live);
        QVERIFY(tableIs(model, "public.orders", "ok|idle", "ok"));
        saveShot(&w, QStringLiteral("mainwindow-stopped"));
    }
}

void TestMainWindow::missingSourceTableIsAnAlertThatSaysWhy()
{
    test::PgTestDb src("gui_src");
    test::PgTestDb dst("gui_dst");
    src.exec(kSourceSchema);
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    auto ws = workspaceFor(src, dst);
    core::TableSpec gone;
    gone.table = {"public", "invoices"}; // never created in the source
    gone.strategy = core::Strategy::FullRefresh;
    ws.pipelines[0].tables.push_back(gone);
    core::StateStore(statePath).applyWorkspace(ws);

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    w.resize(1180, 620);
    w.show();
    w.pages()->setCurrentWidget(w.tablesPage()); // the Dashboard is the first page
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_COMPARE(w.tablesModel()->rowCount(), 3);
    w.engine()->start();

    auto *model = w.tablesModel();
    QTRY_VERIFY_WITH_TIMEOUT(tableIs(model, "public.invoices", "error", "unknown"), 60000);
    QTRY_VERIFY_WITH_TIMEOUT(
        tableIs(model, "public.customers", "ok", "ok") && tableIs(model, "public.orders", "ok", "ok"), 60000);
    const int row = model->rowOf(QStringLiteral("app_to_dw"), QStringLiteral("public.invoices"));
    const QString why = model->index(row, TablesModel::Message).data().toString();
    QVERIFY2(why.contains(QStringLiteral("invoices")), qPrintable(why));
    QVERIFY(model->index(row, TablesModel::State).data(Qt::DecorationRole).value<QIcon>().isNull() == false);

    // Only the failing table is an alert, saying why and what to do; the tab counts it, and the
    // log has the error event.
    QTRY_COMPARE(tableAlerts(w).size(), std::size_t(1));
    const core::Alert alert = tableAlerts(w).front();
    QCOMPARE(alert.table, std::string("public.invoices"));
    QCOMPARE(alert.kind, std::string("table_error"));
    QVERIFY(!alert.action.empty());
    const int alertRow = [&] {
        for (int r = 0; r < w.alertsModel()->rowCount(); ++r)
            if (w.alertsModel()->alert(r).id == alert.id)
                return r;
        return -1;
    }();
    QVERIFY(alertRow >= 0);
    QCOMPARE(w.alertsPage()->alertsView()->model()->index(alertRow, ui::AlertsModel::Subject).data().toString(),
             QStringLiteral("app_to_dw/public.invoices"));
    QTRY_VERIFY(w.pages()
                    ->tabText(w.pages()->indexOf(w.alertsPage()))
                    .contains(QStringLiteral("(%1)").arg(w.alertsPage()->alertCount())));
    QTRY_VERIFY(w.eventsModel()->rowCount() >= 2);
    bool failed = false;
    for (int r = 0; r < w.eventsModel()->rowCount(); ++r)
        failed |= w.eventsModel()->event(r).level == core::Level::Error &&
                  w.eventsModel()->event(r).table == "public.invoices";
    QVERIFY(failed);

    w.tablesPage()->view()->selectRow(2);
    saveShot(&w, QStringLiteral("mainwindow-error-tables"));
    w.pages()->setCurrentWidget(w.alertsPage());
    QTRY_VERIFY(w.alertsPage()->isVisible());
    saveShot(&w, QStringLiteral("mainwindow-error-alerts"));

    // Closing the window while it syncs asks first (issue 45): Cancel keeps both.
    QCOMPARE(w.engine()->state(), EngineBridge::State::Running);
    w.close();
    QTRY_VERIFY(w.syncContinuity()->closeQuestion() && w.syncContinuity()->closeQuestion()->isVisible());
    QMessageBox *question = w.syncContinuity()->closeQuestion();
    QVERIFY2(question->informativeText().contains(QStringLiteral("keeps WAL")),
             qPrintable(question->informativeText()));
    // In the background only where a tray can bring the window back.
    QCOMPARE(question->findChild<QPushButton *>(QStringLiteral("keepSyncing")) != nullptr,
             QSystemTrayIcon::isSystemTrayAvailable());
    saveShot(question, QStringLiteral("dialog-close-while-syncing"));
    question->button(QMessageBox::Cancel)->click();
    QTRY_VERIFY(!w.syncContinuity()->closeQuestion());
    QVERIFY(w.isVisible());
    QCOMPARE(w.engine()->state(), EngineBridge::State::Running);

    // Quitting while the engine runs stops it between batches and lets every thread go; the
    // sync is remembered as running, and the next window on the workspace offers to start it.
    QElapsedTimer clock;
    clock.start();
    w.quitAction()->trigger();
    QVERIFY(!w.isVisible());
    window.reset();
    QVERIFY2(clock.elapsed() < 30000, "the engine stops between batches when the app quits");
    QVERIFY(ui::SyncContinuity::wasRunning(QString::fromStdString(statePath)));
    MainWindow again;
    again.show();
    QVERIFY(QTest::qWaitForWindowExposed(&again));
    again.openWorkspace(QString::fromStdString(statePath));
    QTRY_VERIFY(again.syncContinuity()->launchQuestion() && again.syncContinuity()->launchQuestion()->isVisible());
    saveShot(again.syncContinuity()->launchQuestion(), QStringLiteral("dialog-start-at-launch"));
    QTest::mouseClick(
        again.syncContinuity()->launchQuestion()->findChild<QPushButton *>(QStringLiteral("startSyncNow")),
        Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(again.engine()->state(), EngineBridge::State::Running, 30000);
    QVERIFY(!ui::SyncContinuity::wasRunning(QString::fromStdString(statePath)));
    again.stopAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(again.engine()->state(), EngineBridge::State::Stopped, 30000);
}

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
