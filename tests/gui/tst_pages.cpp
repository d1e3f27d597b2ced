// The Slots, Alerts and Lag pages against real Postgres. A workspace's source holds the slot of
// its CDC pipeline (created by the running engine), an orphaned `driftless_` slot and someone
// else's slot: the Slots page lists each with its owner, refuses to drop the active one and drops
// the orphan after a confirmation that shows the SQL; the Alerts page shows the orphan's alert
// and the failing table's; the Lag page draws the lag samples stored in the workspace file with
// each table's SLA. A pipeline stopped because another cluster answers behind its source shows
// `source changed` on the Tables page (with `driftless-cli recover`), its source on the Slots page
// and on its dashboard tile, as `status --json` says it, stopped and running. Screenshots go to
// $DRIFTLESS_ARTIFACTS.

#include "ui/alertcenter.h"
#include "ui/enginebridge.h"
#include "ui/mainwindow.h"
#include "ui/models/alertsmodel.h"
#include "ui/models/eventsmodel.h"
#include "ui/models/slotsmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/alertspage.h"
#include "ui/pages/dashboardpage.h"
#include "ui/pages/lagpage.h"
#include "ui/pages/slotspage.h"
#include "ui/pages/tablespage.h"
#include "ui/slotmonitor.h"
#include "ui/statusicons.h"
#include "ui/traynotifier.h"
#include "ui/widgets/dashboardgrid.h"
#include "ui/widgets/lagchart.h"

#include "core/model/workspace.h"
#include "core/state/statestore.h"
#include "tests/support/guisupport.h"
#include "tests/support/testsupport.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QChart>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QDeadlineTimer>
#include <QDir>
#include <QHeaderView>
#include <QIcon>
#include <QLabel>
#include <QLineSeries>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStyleOptionViewItem>
#include <QSystemTrayIcon>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <memory>

using namespace driftless;
using driftless::test::artifactsDir;
using driftless::test::saveShot;
using driftless::ui::EngineBridge;
using driftless::ui::MainWindow;
using driftless::ui::SlotsModel;
using namespace std::chrono_literals;

namespace {

const char *kSourceSchema = R"sql(
CREATE TABLE customers (id bigint PRIMARY KEY, name text, updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE orders (id bigint PRIMARY KEY, name text, updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO customers (id, name) SELECT g, 'customer ' || g FROM generate_series(1, 250) g;
INSERT INTO orders (id, name) SELECT g, 'order ' || g FROM generate_series(1, 500) g;
)sql";

/// One pipeline from `src` to `dst`: customers by full refresh, orders by CDC.
core::Workspace workspaceFor(const std::string &pipeline, const test::PgTestDb &src, const test::PgTestDb &dst)
{
    core::Workspace ws;
    ws.endpoints["src"] = test::pgEndpoint("src", src.name());
    ws.endpoints["dw"] = test::pgEndpoint("dw", dst.name());
    core::PipelineSpec p;
    p.name = pipeline;
    p.source = "src";
    p.target = "dw";
    core::TableSpec customers;
    customers.table = {"public", "customers"};
    customers.strategy = core::Strategy::FullRefresh;
    customers.freshnessSla = 300s;
    core::TableSpec orders;
    orders.table = {"public", "orders"};
    orders.strategy = core::Strategy::Cdc;
    orders.freshnessSla = 120s;
    p.tables = {customers, orders};
    ws.pipelines.push_back(p);
    return ws;
}

void createSlot(const test::PgTestDb &db, const std::string &name, const char *plugin = "pgoutput")
{
    db.exec("SELECT pg_create_logical_replication_slot('" + name + "', '" + plugin + "')");
}

int slotCount(const std::string &name)
{
    core::PgConnection admin(test::pgDsn("postgres"));
    return static_cast<int>(
        admin.execParams("SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", {name}).toInt(0, 0));
}

QString ownerOf(const SlotsModel *model, const std::string &source, const std::string &slot)
{
    const int row = model->rowOf(QString::fromStdString(source), QString::fromStdString(slot));
    return row < 0 ? QString() : model->index(row, SlotsModel::Owner).data().toString();
}

bool slotActive(const SlotsModel *model, const std::string &slot)
{
    const int row = model->rowOf(QStringLiteral("src"), QString::fromStdString(slot));
    return row >= 0 && model->index(row, SlotsModel::Active).data(SlotsModel::ActiveRole).toBool();
}

/// Presses F5 and waits for the slot to read as active, again until \a ms have passed. The
/// slot read is asynchronous, so each press gets a few seconds to be answered.
bool refreshUntilActive(QWidget &w, const SlotsModel *model, const std::string &slot, int ms)
{
    QDeadlineTimer deadline(ms);
    do {
        QTest::keyClick(&w, Qt::Key_F5);
        if (QTest::qWaitFor([&] { return slotActive(model, slot); }, 3000))
            return true;
    } while (!deadline.hasExpired());
    return false;
}

/// What the page shows of a slot, for failure messages.
QString slotSays(const SlotsModel *model, const std::string &slot)
{
    const int row = model->rowOf(QStringLiteral("src"), QString::fromStdString(slot));
    if (row < 0)
        return QStringLiteral("slot %1 is not listed").arg(QString::fromStdString(slot));
    return QStringLiteral("slot %1 listed, active: %2")
        .arg(QString::fromStdString(slot))
        .arg(model->index(row, SlotsModel::Active).data(SlotsModel::ActiveRole).toBool());
}

bool tableIs(const ui::TablesModel *model, const std::string &pipeline, const char *table, const char *state)
{
    const int row = model->rowOf(QString::fromStdString(pipeline), QString::fromLatin1(table));
    return row >= 0 && model->index(row, ui::TablesModel::State).data().toString() == QLatin1String(state);
}

/// "state: message" of a table's row, for failure messages.
QString tableSays(const ui::TablesModel *model, const std::string &pipeline, const char *table)
{
    const int row = model->rowOf(QString::fromStdString(pipeline), QString::fromLatin1(table));
    if (row < 0)
        return QStringLiteral("(no row)");
    return model->index(row, ui::TablesModel::State).data().toString() + QStringLiteral(": ") +
           model->index(row, ui::TablesModel::Message).data().toString();
}

/// Each table's newest reconciliation and drift alert as `tables` say them: `table report_id
/// missing alert`, in one line per table, sorted.
QStringList reconcileFacts(const std::vector<core::TableReport> &tables)
{
    QStringList out;
    for (const auto &t : tables)
        out << QStringLiteral("%1 %2 %3 %4")
                   .arg(QString::fromStdString(t.table))
                   .arg(t.reconcile ? t.reconcile->reportId : 0)
                   .arg(t.reconcile ? t.reconcile->missing : -1)
                   .arg(t.driftAlert ? QStringLiteral("alert") : QStringLiteral("no-alert"));
    out.sort();
    return out;
}

const core::Alert *alertOf(const MainWindow &w, const std::string &kind, const std::string &about)
{
    for (const auto &a : w.alertCenter()->alerts())
        if (a.kind == kind && (a.slot == about || a.table == about))
            return &a;
    return nullptr;
}

} // namespace

class TestPages : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void slotsPageListsEverySlotWithItsOwnerAndDropsTheOrphan();
    void alertsPageShowsTheOrphanedSlotAndTheFailingTable();
    void lagPageDrawsStoredSamplesWithTheSla();
    void hiddenLagPageDrawsNothingAndCatchesUpWhenShown();
    void theSameStoredFactsShowStoppedAndRunning();
    void aChangeOfSourceShowsAsItsOwnStateStoppedAndRunning();
    void theSlotsGridShowsNamesAndActiveWholeAtALaptopsWidth();
};

void TestPages::initTestCase()
{
    test::useTestSettings();
}

void TestPages::slotsPageListsEverySlotWithItsOwnerAndDropsTheOrphan()
{
    test::PgTestDb src("gui_slots_src");
    test::PgTestDb dst("gui_slots_dst");
    src.exec(kSourceSchema);
    const std::string pipeline = test::uniqueName("slots");
    const std::string ours = "driftless_" + pipeline;
    const std::string orphan = "driftless_" + test::uniqueName("gone");
    const std::string others = test::uniqueName("debezium");
    createSlot(src, orphan);
    createSlot(src, others, "test_decoding");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace(workspaceFor(pipeline, src, dst));

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    QAbstractItemModelTester tester(w.slotsModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    w.resize(1180, 620);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.pages()->setCurrentWidget(w.slotsPage());
    w.openWorkspace(QString::fromStdString(statePath));

    // Before any sync: the orphan and the other tool's slot, read off the UI thread.
    auto *model = w.slotsModel();
    QTRY_VERIFY_WITH_TIMEOUT(model->rowOf(QStringLiteral("src"), QString::fromStdString(orphan)) >= 0, 20000);
    QCOMPARE(ownerOf(model, "src", orphan), QStringLiteral("orphaned"));
    QCOMPARE(ownerOf(model, "src", others), QStringLiteral("not Driftless's"));
    QCOMPARE(model->rowOf(QStringLiteral("src"), QString::fromStdString(ours)), -1);

    // The engine creates the pipeline's slot and streams from it; F5 reads the slots again.
    w.engine()->start();
    // Streaming once loaded. The slot is active while it is created, idle during the load and
    // active again once streaming, so it is looked at only after the table streams.
    QTRY_VERIFY2_WITH_TIMEOUT(tableIs(w.tablesModel(), pipeline, "public.orders", "streaming"),
                              qPrintable(tableSays(w.tablesModel(), pipeline, "public.orders")), 60000);
    QVERIFY2(refreshUntilActive(w, model, ours, 30000), qPrintable(slotSays(model, ours)));
    QCOMPARE(ownerOf(model, "src", ours), QString::fromStdString(pipeline));
    QCOMPARE(ownerOf(model, "src", orphan), QStringLiteral("orphaned"));
    QCOMPARE(ownerOf(model, "src", others), QStringLiteral("not Driftless's"));
    const int ourRow = model->rowOf(QStringLiteral("src"), QString::fromStdString(ours));
    QVERIFY(!model->index(ourRow, SlotsModel::ConfirmedFlushLsn).data().toString().isEmpty());
    QVERIFY(!model->index(ourRow, SlotsModel::WalStatus).data().toString().isEmpty());

    // The active slot cannot be dropped, and the button says why.
    auto *page = w.slotsPage();
    page->selectSlot(QStringLiteral("src"), QString::fromStdString(ours));
    QVERIFY(!page->dropButton()->isEnabled());
    QVERIFY2(page->dropButton()->toolTip().contains(QStringLiteral("active")),
             qPrintable(page->dropButton()->toolTip()));

    page->selectSlot(QStringLiteral("src"), QString::fromStdString(orphan));
    QVERIFY(page->dropButton()->isEnabled());
    // The figures stay in view in a narrow window: the long slot names give way first.
    auto *slotsView = page->findChild<QTableView *>(QStringLiteral("slotsView"));
    QTRY_VERIFY2(slotsView->columnViewportPosition(SlotsModel::Retained) +
                         slotsView->columnWidth(SlotsModel::Retained) <=
                     slotsView->viewport()->width(),
                 qPrintable(QStringLiteral("Retained WAL ends at %1 of %2")
                                .arg(slotsView->columnViewportPosition(SlotsModel::Retained) +
                                     slotsView->columnWidth(SlotsModel::Retained))
                                .arg(slotsView->viewport()->width())));
    saveShot(&w, QStringLiteral("page-slots"));

    // Dropping the orphan asks first, showing the exact SQL; Cancel leaves it alone.
    QTest::mouseClick(page->dropButton(), Qt::LeftButton);
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    const QString expectedSql =
        QStringLiteral("SELECT pg_drop_replication_slot(&#39;%1&#39;);").arg(QString::fromStdString(orphan));
    const QString plainSql =
        QStringLiteral("SELECT pg_drop_replication_slot('%1');").arg(QString::fromStdString(orphan));
    const QString informative = page->confirmation()->informativeText();
    QVERIFY2(informative.contains(expectedSql) || informative.contains(plainSql), qPrintable(informative));
    saveShot(page->confirmation(), QStringLiteral("dialog-drop-slot"));
    page->confirmation()->button(QMessageBox::Cancel)->click();
    QTRY_VERIFY(!page->confirmation());
    QTest::qWait(200);
    QCOMPARE(slotCount(orphan), 1);

    QTest::mouseClick(page->dropButton(), Qt::LeftButton);
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    auto *confirm = page->confirmation()->findChild<QPushButton *>(QStringLiteral("confirmDrop"));
    QVERIFY(confirm);
    confirm->click();
    QTRY_COMPARE_WITH_TIMEOUT(model->rowOf(QStringLiteral("src"), QString::fromStdString(orphan)), -1, 20000);
    QCOMPARE(slotCount(orphan), 0);
    auto *result = page->findChild<QLabel *>(QStringLiteral("dropResult"));
    QVERIFY(result && result->text().contains(QStringLiteral("Dropped")));
    QVERIFY2(refreshUntilActive(w, model, ours, 30000), qPrintable(slotSays(model, ours)));

    // Quitting stops the engine; the source databases' slots go with them.
    w.close();
    window.reset();
}

void TestPages::alertsPageShowsTheOrphanedSlotAndTheFailingTable()
{
    test::PgTestDb src("gui_alerts_src");
    test::PgTestDb dst("gui_alerts_dst");
    src.exec(kSourceSchema);
    const std::string pipeline = test::uniqueName("alerts");
    const std::string orphan = "driftless_" + test::uniqueName("gone");
    createSlot(src, orphan);
    src.exec("SELECT pg_switch_wal(); CREATE TABLE filler AS SELECT g, md5(g::text) FROM generate_series(1, 20000) g;");
    auto ws = workspaceFor(pipeline, src, dst);
    core::TableSpec gone;
    gone.table = {"public", "invoices"}; // never created in the source
    gone.strategy = core::Strategy::FullRefresh;
    ws.pipelines[0].tables = {ws.pipelines[0].tables[0], gone};
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace(ws);

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    QAbstractItemModelTester tester(w.alertsModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy opened(w.alertCenter(), &ui::AlertCenter::alertsOpened);
    w.resize(1180, 620);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.pages()->setCurrentWidget(w.alertsPage());
    w.openWorkspace(QString::fromStdString(statePath));

    // The orphan is an alert as soon as the slots are read, without opening the Slots page.
    QTRY_VERIFY_WITH_TIMEOUT(alertOf(w, "slot_orphaned", orphan), 20000);
    const core::Alert orphanAlert = *alertOf(w, "slot_orphaned", orphan);
    QCOMPARE(std::string(toString(orphanAlert.level)), std::string("warn"));
    QVERIFY(orphanAlert.action.find("pg_drop_replication_slot('" + orphan + "')") != std::string::npos);
    QVERIFY(opened.count() >= 1);
    // The tray is told only where one exists (not on the offscreen platform); what it would say
    // names the slot.
    QCOMPARE(w.trayNotifier()->available(), QSystemTrayIcon::isSystemTrayAvailable());
    QVERIFY2(w.trayNotifier()->lastMessage().contains(QString::fromStdString(orphan)),
             qPrintable(w.trayNotifier()->lastMessage()));

    auto *view = w.alertsPage()->alertsView();
    QVERIFY(view->isVisible());
    bool shown = false;
    for (int row = 0; row < view->model()->rowCount(); ++row)
        shown |= view->model()->index(row, ui::AlertsModel::Subject).data().toString() ==
                     QStringLiteral("src/%1").arg(QString::fromStdString(orphan)) &&
                 view->model()->index(row, ui::AlertsModel::Level).data().toString() == QStringLiteral("warning") &&
                 !view->model()->index(row, ui::AlertsModel::Level).data(Qt::DecorationRole).value<QIcon>().isNull();
    QVERIFY(shown);

    // A sync that fails on the missing table adds its alert (an error, listed first) and its
    // events below.
    w.engine()->start();
    QTRY_VERIFY_WITH_TIMEOUT(alertOf(w, "table_error", "public.invoices"), 60000);
    QTRY_VERIFY_WITH_TIMEOUT(tableIs(w.tablesModel(), pipeline, "public.customers", "ok"), 60000);
    QCOMPARE(std::string(toString(w.alertCenter()->alerts().front().level)), std::string("error"));
    QTRY_VERIFY(w.eventsModel()->rowCount() >= 2);
    QVERIFY(w.pages()->tabText(w.pages()->indexOf(w.alertsPage())).contains(QStringLiteral("(")));
    QTest::qWait(300);
    // Nothing of an alert is cut off: its names and statements wrap inside their columns, and
    // each row is as tall as its longest cell so wrapped.
    w.pages()->setCurrentWidget(w.alertsPage());
    QTRY_VERIFY(view->isVisible());
    for (int row = 0; row < view->model()->rowCount(); ++row)
        for (int column : {ui::AlertsModel::Subject, ui::AlertsModel::Message, ui::AlertsModel::Action}) {
            QStyleOptionViewItem option;
            option.initFrom(view);
            option.rect = QRect(0, 0, view->columnWidth(column), 1);
            const QModelIndex index = view->model()->index(row, column);
            QTRY_VERIFY2(view->itemDelegateForIndex(index)->sizeHint(option, index).height() <= view->rowHeight(row),
                         qPrintable(index.data().toString()));
        }
    saveShot(&w, QStringLiteral("page-alerts"));

    w.close();
    window.reset();
}

void TestPages::lagPageDrawsStoredSamplesWithTheSla()
{
    test::PgTestDb src("gui_lag_src");
    test::PgTestDb dst("gui_lag_dst");
    src.exec(kSourceSchema);
    const std::string pipeline = test::uniqueName("lag");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    const auto now = core::StateStore::nowMs();
    {
        core::StateStore store(statePath);
        store.applyWorkspace(workspaceFor(pipeline, src, dst));
        // 50 minutes of samples every 20 s: orders streams a few seconds behind with one spike
        // past its 120 s SLA; customers is reloaded every 4 minutes, so its lag is a sawtooth.
        for (std::int64_t t = now - 50 * 60'000; t <= now; t += 20'000) {
            const double minutes = static_cast<double>(now - t) / 60'000.0;
            double orders = 4 + 3 * std::sin(minutes);
            if (minutes > 20 && minutes < 24)
                orders += 150 * std::sin((minutes - 20) / 4 * M_PI);
            store.addLagSample({pipeline, "public.orders", t, orders, 0});
            store.addLagSample({pipeline, "public.customers", t, std::fmod(static_cast<double>(t) / 1000.0, 240.0), 0});
        }
        // Older than any window but the day.
        store.addLagSample({pipeline, "public.orders", now - 5 * 3'600'000, 30, 0});
    }

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    w.resize(1180, 620);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto *page = w.lagPage();
    w.pages()->setCurrentWidget(page);
    // Fit to the data there is, by default.
    QCOMPARE(page->windowMs(), ui::LagChart::kFit);
    w.openWorkspace(QString::fromStdString(statePath));

    const QString p = QString::fromStdString(pipeline);
    QTRY_VERIFY_WITH_TIMEOUT(page->historyLoaded() && page->lagSeries(p, QStringLiteral("public.orders")), 20000);
    auto *chart = page->findChild<ui::LagChart *>();
    QVERIFY(chart);
    // From the oldest sample, five hours back, to now; the hours without samples left blank.
    const auto [fitFrom, fitTo] = chart->timeRange();
    QVERIFY2(fitFrom <= now - 5 * 3'600'000 && fitFrom >= now - 5 * 3'600'000 - 10 * 60'000,
             qPrintable(QString::number((now - fitFrom) / 60'000.0)));
    QVERIFY(fitTo >= now);
    QCOMPARE(page->lagPoints(p, QStringLiteral("public.orders")).size(), 152);
    QCOMPARE(page->segmentCount(p, QStringLiteral("public.orders")), 2);
    // customers is a full refresh, its lag a sawtooth up to 240 s: beside the CDC table it
    // would flatten orders' seconds, so the CDC tables are charted and the others offered.
    QVERIFY(chart->strategyCombo()->isVisible());
    QCOMPARE(chart->shown(), ui::LagChart::Shown::Cdc);
    QVERIFY(!page->lagSeries(p, QStringLiteral("public.customers")));
    saveShot(&w, QStringLiteral("page-lag-fit"));
    QSignalSpy shownAgain(page, &ui::LagPage::historyReady);
    chart->setShown(ui::LagChart::Shown::Passes);
    QTRY_VERIFY(shownAgain.count() >= 1 && page->historyLoaded());
    QVERIFY(page->lagSeries(p, QStringLiteral("public.customers")));
    QVERIFY(!page->lagSeries(p, QStringLiteral("public.orders")));
    chart->setShown(ui::LagChart::Shown::All);
    QTRY_VERIFY(shownAgain.count() >= 2 && page->historyLoaded());

    // The last hour.
    page->setWindowMs(3'600'000);
    QTRY_VERIFY(shownAgain.count() >= 3 && page->historyLoaded());
    QLineSeries *orders = page->lagSeries(p, QStringLiteral("public.orders"));
    QLineSeries *customers = page->lagSeries(p, QStringLiteral("public.customers"));
    QVERIFY(orders && customers);
    QCOMPARE(orders->count(), 151); // 50 minutes every 20 s, both ends
    QCOMPARE(customers->count(), 151);
    QCOMPARE(page->segmentCount(p, QStringLiteral("public.orders")), 1);
    double peak = 0;
    for (const QPointF &pt : orders->points())
        peak = std::max(peak, pt.y());
    QVERIFY2(peak > 120, "the spike past the SLA is drawn");

    // The SLA is a dashed line across the window at the table's SLA, in the table's colour.
    QLineSeries *sla = page->slaSeries(p, QStringLiteral("public.orders"));
    QVERIFY(sla);
    QCOMPARE(sla->count(), 2);
    QCOMPARE(sla->at(0).y(), 120.0);
    QCOMPARE(sla->at(1).y(), 120.0);
    QCOMPARE(sla->pen().style(), Qt::DashLine);
    QCOMPARE(sla->pen().color(), orders->color());
    QCOMPARE(page->slaSeries(p, QStringLiteral("public.customers"))->at(0).y(), 300.0);
    QTest::qWait(300);
    saveShot(&w, QStringLiteral("page-lag"));

    // Narrower window: only the last 15 minutes; the day shows the old sample too.
    QSignalSpy ready(page, &ui::LagPage::historyReady);
    page->setWindowMs(15 * 60'000);
    QTRY_VERIFY(ready.count() >= 1 && page->historyLoaded());
    QVERIFY2(orders->count() >= 45 && orders->count() <= 47, qPrintable(QString::number(orders->count())));
    page->setWindowMs(24 * 3'600'000LL);
    QTRY_VERIFY(ready.count() >= 2 && page->historyLoaded());
    // The old sample stands alone: no line joins it across the hours without samples.
    QCOMPARE(page->lagPoints(p, QStringLiteral("public.orders")).size(), 152);
    QCOMPARE(page->segmentCount(p, QStringLiteral("public.orders")), 2);
    saveShot(&w, QStringLiteral("page-lag-24h"));

    w.close();
    window.reset();
}

void TestPages::hiddenLagPageDrawsNothingAndCatchesUpWhenShown()
{
    // Qt Charts re-renders its scene on every change, shown or not: a hidden Lag page must not
    // be fed the live snapshots (B12), and must still be right the moment it is shown.
    test::PgTestDb src("gui_laghide_src");
    test::PgTestDb dst("gui_laghide_dst");
    src.exec(kSourceSchema);
    const std::string pipeline = test::uniqueName("laghide");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    const auto now = core::StateStore::nowMs();
    {
        core::StateStore store(statePath);
        store.applyWorkspace(workspaceFor(pipeline, src, dst));
        for (std::int64_t t = now - 10 * 60'000; t <= now; t += 60'000)
            store.addLagSample({pipeline, "public.orders", t, 5, 0});
    }
    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    w.resize(1180, 620);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto *page = w.lagPage();
    QVERIFY(w.pages()->currentWidget() != page);
    w.openWorkspace(QString::fromStdString(statePath));
    const QString p = QString::fromStdString(pipeline);
    QTRY_VERIFY_WITH_TIMEOUT(w.tablesModel()->rowOf(p, QStringLiteral("public.orders")) >= 0, 20000);
    QTest::qWait(200);
    QVERIFY2(!page->lagSeries(p, QStringLiteral("public.orders")), "a hidden chart builds no lines");

    w.pages()->setCurrentWidget(page);
    QTRY_VERIFY_WITH_TIMEOUT(page->historyLoaded() && page->lagSeries(p, QStringLiteral("public.orders")), 20000);
    QCOMPARE(page->lagSeries(p, QStringLiteral("public.orders"))->count(), 11); // ten minutes, both ends
    // Fitted: the ten minutes there are fill the width, not the last pixels of an hour.
    const auto [from, to] = page->findChild<ui::LagChart *>()->timeRange();
    QVERIFY2(to - from >= 10 * 60'000 && to - from <= 11 * 60'000, qPrintable(QString::number(to - from)));
    QCOMPARE(page->slaSeries(p, QStringLiteral("public.orders"))->at(0).y(), 120.0);
    w.close();
    window.reset();
}

// One truth for status (issue 45): the window reads the same stored facts whether or not its
// engine runs, and they are what `driftless-cli status --json` says. A reconciliation stored
// while nothing ran shows on the tiles, the tables and the alerts both before and after Start
// Sync; an existing inactive slot is never "none" on the dashboard; and the slot's history goes
// on while the sync is stopped.
void TestPages::theSameStoredFactsShowStoppedAndRunning()
{
    test::PgTestDb src("gui_truth_src");
    test::PgTestDb dst("gui_truth_dst");
    src.exec(kSourceSchema);
    const std::string pipeline = test::uniqueName("truth");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace(workspaceFor(pipeline, src, dst));
    // Synced once and left (the slot stays, inactive); then a row goes missing on the target and a
    // reconciliation finds it, with no engine running.
    const auto once = test::runCli({"--state", statePath, "run", "--once"});
    QVERIFY2(once.exitCode == 0, once.err.c_str());
    dst.exec("DELETE FROM public.orders WHERE id = 7");
    const auto reconciled = test::runCli({"--state", statePath, "reconcile", pipeline, "--settle", "0s"});
    QVERIFY2(reconciled.exitCode == 3, (reconciled.out + reconciled.err).c_str()); // drift found
    const auto cli = nlohmann::json::parse(test::runCli({"--state", statePath, "status", "--json"}).out);
    QStringList cliFacts;
    for (const auto &t : cli["tables"])
        cliFacts << QStringLiteral("%1 %2 %3 %4")
                        .arg(QString::fromStdString(t["table"].get<std::string>()))
                        .arg(t["reconcile"].is_object() ? t["reconcile"]["report_id"].get<std::int64_t>() : 0)
                        .arg(t["reconcile"].is_object() ? t["reconcile"]["missing"].get<std::int64_t>() : -1)
                        .arg(t["reconcile"].is_object() && t["reconcile"]["alert"].get<bool>()
                                 ? QStringLiteral("alert")
                                 : QStringLiteral("no-alert"));
    cliFacts.sort();
    QVERIFY2(cliFacts.filter(QStringLiteral("public.orders")).value(0).endsWith(QStringLiteral(" 1 alert")),
             qPrintable(cliFacts.join(';')));

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    w.resize(1180, 620);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_VERIFY_WITH_TIMEOUT(w.engine()->snapshot().tables.size() == 2, 20000);

    // Stopped: what the file says, as the CLI says it.
    QCOMPARE(reconcileFacts(w.engine()->snapshot().tables), cliFacts);
    const auto tile = [&] {
        for (const auto *p : w.dashboardPage()->tiles().pipelines())
            if (p->name == QString::fromStdString(pipeline))
                return *p;
        return ui::DashboardTiles::Pipeline{};
    };
    // The window gets the snapshot a turn of the event loop after the bridge publishes it.
    QTRY_VERIFY_WITH_TIMEOUT(tile().reconciledAtMs && tile().driftRows == 1, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(alertOf(w, "drift", "public.orders"), 20000);
    // The slot the run left: inactive, and there.
    QTRY_VERIFY_WITH_TIMEOUT(tile().slot == ui::DashboardTiles::Pipeline::Slot::Present, 20000);
    // Its history goes on while nothing syncs: each reading of the slots is a sample.
    const std::string slot = "driftless_" + pipeline;
    const auto samplesNow = [&] { return core::StateStore(statePath).slotSamples("src", slot, 0).size(); };
    const std::size_t before = samplesNow();
    w.slotMonitor()->refresh();
    QTRY_VERIFY_WITH_TIMEOUT(samplesNow() > before, 20000);

    // Running: the same reconciliation, the same alert, the same tile.
    w.engine()->start();
    QTRY_VERIFY_WITH_TIMEOUT(w.engine()->snapshot().live && w.engine()->state() == EngineBridge::State::Running, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(reconcileFacts(w.engine()->snapshot().tables) == cliFacts, 20000);
    // A state only a running engine reports, on the page: the tiles have had a live snapshot.
    QTRY_VERIFY2_WITH_TIMEOUT(tableIs(w.tablesModel(), pipeline, "public.orders", "streaming"),
                              qPrintable(tableSays(w.tablesModel(), pipeline, "public.orders")), 60000);
    QVERIFY(tile().reconciledAtMs && tile().driftRows == 1);
    QVERIFY(alertOf(w, "drift", "public.orders"));

    w.stopAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(w.engine()->state(), EngineBridge::State::Stopped, 30000);
    window.reset();
}

void TestPages::aChangeOfSourceShowsAsItsOwnStateStoppedAndRunning()
{
    test::PgTestDb src("gui_moved_src");
    test::PgTestDb dst("gui_moved_dst");
    src.exec(kSourceSchema);
    const std::string pipeline = test::uniqueName("moved");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace(workspaceFor(pipeline, src, dst));
    const auto once = test::runCli({"--state", statePath, "run", "--once"});
    QVERIFY2(once.exitCode == 0, once.err.c_str());
    // The target follows another cluster than the one behind the address now: the next run stops
    // the pipeline before reading anything.
    const std::string other = "7000000000000000001";
    dst.exec("UPDATE _driftless.checkpoints SET position = jsonb_set(position::jsonb, '{system_id}', '\"" + other +
             "\"')::text WHERE pipeline = '" + pipeline + "' AND strategy = 'cdc'");
    const auto stopped = test::runCli({"--state", statePath, "run", "--once"});
    QVERIFY2(stopped.exitCode == 1, (stopped.out + stopped.err).c_str());
    const auto cli = nlohmann::json::parse(test::runCli({"--state", statePath, "status", "--json"}).out);
    nlohmann::json cliOrders;
    for (const auto &t : cli["tables"])
        if (t["table"] == "public.orders")
            cliOrders = t;
    QCOMPARE(QString::fromStdString(cliOrders["state"].get<std::string>()), QStringLiteral("source_changed"));
    // The source its checkpoint names, as the CLI says it; the app must say the same.
    const QString identity =
        QStringLiteral("system id %1, timeline %2")
            .arg(QString::fromStdString(cliOrders["source_identity"]["system_id"].get<std::string>()))
            .arg(cliOrders["source_identity"]["timeline"].get<int>());
    const QString command = QStringLiteral("driftless-cli recover %1").arg(QString::fromStdString(pipeline));

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.resize(1180, 620); // once shown, past the offscreen screen's fit: the size of the other shots
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_VERIFY_WITH_TIMEOUT(w.engine()->snapshot().tables.size() == 2, 20000);

    const auto tile = [&] {
        for (const auto *p : w.dashboardPage()->tiles().pipelines())
            if (p->name == QString::fromStdString(pipeline))
                return *p;
        return ui::DashboardTiles::Pipeline{};
    };
    auto *slotsPage = w.slotsPage();
    auto *sources = slotsPage->findChild<QLabel *>(QStringLiteral("slotsSources"));
    QVERIFY(sources);
    auto *tablesPage = w.tablesPage();
    auto *details = tablesPage->findChild<QLabel *>(QStringLiteral("tableDetails"));
    auto *summary = tablesPage->findChild<QLabel *>(QStringLiteral("tablesSummary"));
    QVERIFY(details && summary);
    QPushButton *recover = tablesPage->recoverButton();
    QCOMPARE(recover->objectName(), QStringLiteral("recoverButton"));
    // The request Recover… leaves in the target's checkpoint, read back with SQL.
    const std::string requestSql = "SELECT coalesce(request, 'none') FROM _driftless.checkpoints WHERE pipeline = '" +
                                   pipeline + "' AND strategy = 'cdc'";
    // What each view says of the change, checked stopped and then running: the same as the CLI.
    const auto showsTheChange = [&](const char *when) {
        QTRY_VERIFY2_WITH_TIMEOUT(tableIs(w.tablesModel(), pipeline, "public.orders", "source changed"),
                                  qPrintable(QStringLiteral("%1: %2").arg(
                                      QLatin1String(when), tableSays(w.tablesModel(), pipeline, "public.orders"))),
                                  30000);
        const int row = w.tablesModel()->rowOf(QString::fromStdString(pipeline), QStringLiteral("public.orders"));
        const QModelIndex state = w.tablesModel()->index(row, ui::TablesModel::State);
        QCOMPARE(state.data(ui::TablesModel::StateRole).toString(), QStringLiteral("source_changed"));
        QVERIFY2(state.data(Qt::DecorationRole).value<QIcon>().cacheKey() ==
                     ui::stateIcon(core::TableState::SourceChanged).cacheKey(),
                 "its own icon");
        QVERIFY(ui::stateIcon(core::TableState::SourceChanged).cacheKey() !=
                ui::stateIcon(core::TableState::Error).cacheKey());
        QVERIFY(state.data(ui::TablesModel::AttentionRole).toBool());
        // The Tables page: the summary names the pipeline; the selected table's detail the command.
        w.pages()->setCurrentWidget(tablesPage);
        tablesPage->selectTable(QString::fromStdString(pipeline), QStringLiteral("public.orders"));
        QTRY_VERIFY2(details->isVisible() && details->text().contains(command), qPrintable(details->text()));
        // Said once: the engine's copy of the fix is not repeated under the page's line; its why is.
        QVERIFY2(details->text().count(command) == 1 && details->text().contains(QStringLiteral("nothing was read")),
                 qPrintable(details->text()));
        QVERIFY2(details->text().contains(identity.toHtmlEscaped()), qPrintable(details->text()));
        QVERIFY2(summary->text().contains(QStringLiteral("source changed")), qPrintable(summary->text()));
        // Recover… beside the command, for this state only: not for the full-refresh table.
        QTRY_VERIFY(recover->isVisible() && recover->isEnabled());
        tablesPage->selectTable(QString::fromStdString(pipeline), QStringLiteral("public.customers"));
        QTRY_VERIFY(!recover->isVisible());
        tablesPage->selectTable(QString::fromStdString(pipeline), QStringLiteral("public.orders"));
        QTRY_VERIFY(recover->isVisible());
        // The Slots page: the pipeline's source as its checkpoint records it, and the change with
        // the page's own Recover… named before the command.
        QTRY_VERIFY2(
            slotsPage->sourceLines().contains(QStringLiteral("%1: %2 \u2014 source changed: Recover\u2026 (%3)")
                                                  .arg(QString::fromStdString(pipeline), identity, command)),
            qPrintable(slotsPage->sourceLines().join(QLatin1Char('\n'))));
        // The dashboard's tile says so apart from other failures; the alert names the command.
        QTRY_COMPARE(tile().sourceChanged, 1);
        QCOMPARE(tile().failing, 0);
        QTRY_VERIFY(alertOf(w, "table_error", "public.orders"));
        QVERIFY2(QString::fromStdString(alertOf(w, "table_error", "public.orders")->action).contains(command),
                 alertOf(w, "table_error", "public.orders")->action.c_str());
    };
    showsTheChange("stopped");
    w.pages()->setCurrentWidget(tablesPage);
    QTest::qWait(100); // the columns fit the page once shown
    const QAbstractItemView *tablesView = tablesPage->view();
    QVERIFY2(tablesPage->view()->columnWidth(ui::TablesModel::State) >=
                 tablesView->sizeHintForColumn(ui::TablesModel::State),
             "the state is read whole, not elided");
    saveShot(&w, QStringLiteral("tables-source-changed"));
    w.pages()->setCurrentWidget(slotsPage);
    QTRY_VERIFY(sources->isVisible());
    // The grid keeps its room below the sources line at 1366x768.
    auto *slotsView = slotsPage->findChild<QTableView *>(QStringLiteral("slotsView"));
    QVERIFY2(slotsView->height() >= 3 * slotsView->verticalHeader()->defaultSectionSize(),
             qPrintable(QString::number(slotsView->height())));
    QTRY_VERIFY_WITH_TIMEOUT(w.slotMonitor()->sample().takenAtMs > 0, 20000);
    QTest::qWait(100);
    saveShot(&w, QStringLiteral("slots-source-identity"));

    // Recover… asks first, saying what happens on a Postgres source; cancelled, nothing is left.
    // (From the Slots page: it asks on the Tables page, where the outcome shows.)
    QVERIFY(slotsPage->recoverButton()->isVisible());
    QTest::mouseClick(slotsPage->recoverButton(), Qt::LeftButton);
    QTRY_VERIFY(tablesPage->confirmation() && tablesPage->confirmation()->isVisible());
    QCOMPARE(w.pages()->currentWidget(), tablesPage);
    QMessageBox *ask = tablesPage->confirmation();
    QCOMPARE(ask->objectName(), QStringLiteral("recoverConfirmation"));
    for (const char *says : {"by diff", "Rows the new server lacks are removed", "Start Sync", "driftless-cli recover"})
        QVERIFY2(ask->informativeText().contains(QLatin1String(says)), qPrintable(ask->informativeText()));
    QVERIFY(QTest::qWaitForWindowExposed(ask));
    saveShot(ask, QStringLiteral("recover-confirmation"));
    QTest::mouseClick(ask->button(QMessageBox::Cancel), Qt::LeftButton);
    QTRY_VERIFY(!tablesPage->confirmation());
    QTest::qWait(200);
    QCOMPARE(dst.scalar(requestSql), std::string("none"));
    QVERIFY(!tablesPage->recoverResult()->isVisible());
    QCOMPARE(w.engine()->state(), EngineBridge::State::Stopped);

    // The context menu of the pipeline's tile on the Dashboard asks the same.
    w.pages()->setCurrentWidget(w.dashboardPage());
    ui::DashboardGrid *grid = w.dashboardPage()->grid();
    QTRY_VERIFY(!grid->pipelineRect(QString::fromStdString(pipeline)).isEmpty());
    const QPoint onTile = grid->pipelineRect(QString::fromStdString(pipeline)).center();
    QTimer chooser;
    chooser.setInterval(20);
    connect(&chooser, &QTimer::timeout, this, [&chooser] {
        auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
        if (!menu || menu->actions().isEmpty())
            return;
        chooser.stop();
        QVERIFY2(menu->actions().front()->text().startsWith(QStringLiteral("Recover")),
                 qPrintable(menu->actions().front()->text()));
        menu->actions().front()->trigger();
        menu->close();
    });
    chooser.start();
    QContextMenuEvent onGrid(QContextMenuEvent::Mouse, onTile, grid->mapToGlobal(onTile));
    QApplication::sendEvent(grid, &onGrid);
    QTRY_VERIFY(tablesPage->confirmation() && tablesPage->confirmation()->isVisible());
    QCOMPARE(w.pages()->currentWidget(), tablesPage);
    QTest::mouseClick(tablesPage->confirmation()->button(QMessageBox::Cancel), Qt::LeftButton);
    QTRY_VERIFY(!tablesPage->confirmation());
    QCOMPARE(dst.scalar(requestSql), std::string("none"));

    // Confirmed with the sync stopped: the request is in the checkpoint, and the page says Start
    // Sync takes it. (Taken away again by hand, so the running engine below meets the change.)
    tablesPage->selectTable(QString::fromStdString(pipeline), QStringLiteral("public.orders"));
    QTRY_VERIFY(recover->isVisible());
    QTest::mouseClick(recover, Qt::LeftButton);
    QTRY_VERIFY(tablesPage->confirmation() && tablesPage->confirmation()->isVisible());
    QTest::mouseClick(tablesPage->confirmation()->findChild<QPushButton *>(QStringLiteral("confirmRecover")),
                      Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(tablesPage->recoverResult()->text().contains(QStringLiteral("Start Sync")), 20000);
    QVERIFY2(tablesPage->recoverResult()->text().contains(QStringLiteral("public.orders: recovery requested")),
             qPrintable(tablesPage->recoverResult()->text()));
    QCOMPARE(dst.scalar(requestSql), std::string("recover"));
    QCOMPARE(w.engine()->state(), EngineBridge::State::Stopped);
    saveShot(&w, QStringLiteral("tables-recover-requested"));
    dst.exec("UPDATE _driftless.checkpoints SET request = NULL WHERE pipeline = '" + pipeline + "'");

    // Running: the engine meets the same cluster and stops the same way, and says so the same way.
    w.engine()->start();
    QTRY_VERIFY_WITH_TIMEOUT(w.engine()->snapshot().live && w.engine()->state() == EngineBridge::State::Running, 30000);
    showsTheChange("running");

    // Confirmed while the sync runs: the request is left, the engine restarted, and the pipeline
    // recovers at its start, by diff; the button goes with the state.
    QTest::mouseClick(recover, Qt::LeftButton);
    QTRY_VERIFY(tablesPage->confirmation() && tablesPage->confirmation()->isVisible());
    QVERIFY2(tablesPage->confirmation()->informativeText().contains(QStringLiteral("restarted")),
             qPrintable(tablesPage->confirmation()->informativeText()));
    QTest::mouseClick(tablesPage->confirmation()->findChild<QPushButton *>(QStringLiteral("confirmRecover")),
                      Qt::LeftButton);
    QTRY_VERIFY2_WITH_TIMEOUT(tablesPage->recoverResult()->text().contains(QStringLiteral("was restarted")),
                              qPrintable(tablesPage->recoverResult()->text()), 30000);
    QVERIFY2(tablesPage->recoverResult()->text().contains(QStringLiteral("public.orders: recovery requested")),
             qPrintable(tablesPage->recoverResult()->text()));
    QTRY_VERIFY2_WITH_TIMEOUT(tableIs(w.tablesModel(), pipeline, "public.orders", "streaming"),
                              qPrintable(tableSays(w.tablesModel(), pipeline, "public.orders")), 60000);
    // The stored facts can show the table streaming a moment before the bridge, restarted for the
    // recovery, leaves Starting: what counts is that it runs on (under load it once read Starting).
    QTRY_COMPARE_WITH_TIMEOUT(w.engine()->state(), EngineBridge::State::Running, 30000);
    QCOMPARE(dst.scalar(requestSql), std::string("none"));
    QTRY_VERIFY(!recover->isVisible());
    QTRY_VERIFY(!slotsPage->recoverButton()->isVisibleTo(slotsPage));
    saveShot(&w, QStringLiteral("tables-recovered"));
    w.stopAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(w.engine()->state(), EngineBridge::State::Stopped, 30000);
    window.reset();
}

// The walk of issue 45 at 1366x768: the Slots grid said "driftle...p_to_dw" and "act...70)" while
// its last column had 500 px to spare. Its columns were fitted while the page was hidden (a
// viewport of no width) and not again when a reading made a cell longer.
void TestPages::theSlotsGridShowsNamesAndActiveWholeAtALaptopsWidth()
{
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.resize(1290, 680); // after show: the window restores a remembered size when shown
    QTRY_COMPARE(w.width(), 1290);
    QCOMPARE(w.pages()->currentWidget(), w.dashboardPage());

    ui::SlotSample sample;
    sample.generation = 1;
    sample.takenAtMs = 1'700'000'000'000;
    core::SourceSlots shop;
    shop.source = "shop";
    core::SlotReport slot;
    slot.source = "shop";
    slot.slot = "driftless_shop_to_dw";
    slot.owner = "shop_to_dw";
    slot.active = false;
    slot.retainedBytes = 18 << 20;
    shop.replicationSlots.push_back(slot);
    sample.sources.push_back(shop);
    emit w.slotMonitor()->sampleReady(sample); // the page hidden: a new row
    sample.sources[0].replicationSlots[0].active = true;
    sample.sources[0].replicationSlots[0].activePid = 14170;
    emit w.slotMonitor()->sampleReady(sample); // the same row, a longer Active

    w.pages()->setCurrentWidget(w.slotsPage());
    QCoreApplication::processEvents();
    QTableView *table = w.slotsPage()->view();
    // sizeHintForColumn() is protected in QTableView, public in QAbstractItemView.
    const QAbstractItemView *view = table;
    for (int c : {SlotsModel::Source, SlotsModel::Slot, SlotsModel::Owner, SlotsModel::Active}) {
        const int needed = view->sizeHintForColumn(c);
        QTRY_VERIFY2(
            table->columnWidth(c) >= needed,
            qPrintable(
                QStringLiteral("column %1 is %2 px, its text needs %3").arg(c).arg(table->columnWidth(c)).arg(needed)));
    }
    saveShot(&w, QStringLiteral("slots-laptop"));
}

QTEST_MAIN(TestPages)
#include "tst_pages.moc"
