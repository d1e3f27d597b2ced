// Pause Pipeline… and Resume Pipeline… in the Tables page's context menu (issue 45: a pipeline
// was paused one table at a time): one choice and its confirmation pause every table of the row's
// pipeline in the workspace file, and no other pipeline's; Resume Pipeline… lifts them all. The
// same choices on a Workspace page pipeline row and on a Dashboard pipeline tile ask the Tables
// page's question and write the same pauses, and the row and the tile then say how many are
// paused. The app's own engine, stopped, on a workspace whose endpoints nothing listens on: no
// server is needed.

#include "tests/support/guisupport.h"

#include "ui/enginebridge.h"
#include "ui/mainwindow.h"
#include "ui/models/pipelinesmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/dashboardpage.h"
#include "ui/pages/tablespage.h"
#include "ui/pages/workspacepage.h"
#include "ui/widgets/dashboardgrid.h"

#include "core/state/statestore.h"

#include <QAction>
#include <QApplication>
#include <QContextMenuEvent>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QTimer>

#include <set>
#include <string>
#include <utility>

using namespace driftless;
using namespace driftless::ui;

namespace {

core::TableSpec table(const char *name, core::Strategy strategy)
{
    core::TableSpec t;
    t.table = {"public", name};
    t.strategy = strategy;
    if (strategy == core::Strategy::Cursor)
        t.cursor = "updated_at";
    return t;
}

/// Two pipelines from one source; port 1: nothing answers, and nothing here asks.
core::Workspace twoPipelines()
{
    core::Workspace ws;
    ws.endpoints["app"] = {"app", core::EndpointKind::Postgres, "host=127.0.0.1 port=1 dbname=shop", {}, {}, {}};
    ws.endpoints["dw"] = {"dw", core::EndpointKind::Postgres, "host=127.0.0.1 port=1 dbname=dw", {}, {}, {}};
    core::PipelineSpec shop;
    shop.name = "shop";
    shop.source = "app";
    shop.target = "dw";
    shop.tables = {table("customers", core::Strategy::FullRefresh), table("orders", core::Strategy::Cursor),
                   table("plans", core::Strategy::FullRefresh)};
    core::PipelineSpec crm = shop;
    crm.name = "crm";
    crm.tables = {table("leads", core::Strategy::Cursor)};
    ws.pipelines = {shop, crm};
    return ws;
}

std::set<std::pair<std::string, std::string>> storedPauses(const std::string &path)
{
    std::set<std::pair<std::string, std::string>> out;
    for (const auto &p : core::StateStore(path).pausedTables())
        out.insert({p.pipeline, p.table.display()});
    return out;
}

/// Opens the context menu at `at` of `target` and triggers its action named `action`; returns
/// whether that action was there and enabled.
bool chooseFromMenu(QWidget *target, QPoint at, const QString &action)
{
    bool chosen = false;
    QTimer chooser;
    chooser.setInterval(20);
    QObject::connect(&chooser, &QTimer::timeout, [&] {
        auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
        if (!menu || menu->actions().isEmpty())
            return;
        chooser.stop();
        for (QAction *a : menu->actions())
            if (a->objectName() == action && a->isEnabled()) {
                a->trigger();
                chosen = true;
            }
        menu->close();
    });
    chooser.start();
    QContextMenuEvent event(QContextMenuEvent::Mouse, at, target->mapToGlobal(at));
    QApplication::sendEvent(target, &event);
    return chosen;
}

/// The same on `row` of a table view.
bool chooseFromMenu(QTableView *view, int row, const QString &action)
{
    return chooseFromMenu(view->viewport(), view->visualRect(view->model()->index(row, 0)).center(), action);
}

bool chooseFromMenu(TablesPage *page, int row, const QString &action)
{
    return chooseFromMenu(page->view(), row, action);
}

const std::set<std::pair<std::string, std::string>> kShopPaused{
    {"shop", "public.customers"}, {"shop", "public.orders"}, {"shop", "public.plans"}};

/// The window on `statePath`, `page` shown, its four tables listed.
void openOn(MainWindow &w, const std::string &statePath, QWidget *page)
{
    w.resize(1280, 640);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.pages()->setCurrentWidget(page);
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_COMPARE(w.tablesModel()->rowCount(), 4);
    QCOMPARE(w.engine()->state(), EngineBridge::State::Stopped);
}

/// Confirms the Tables page's open pipeline question (`pause` or resume) and waits for the
/// runner's outcome, which must be a success.
void confirmPipeline(MainWindow &w, bool pause)
{
    TablesPage *tables = w.tablesPage();
    QTRY_VERIFY(tables->confirmation() && tables->confirmation()->isVisible());
    QMessageBox *box = tables->confirmation();
    QVERIFY2(box->text().contains(QStringLiteral("pipeline <b>shop</b>")), qPrintable(box->text()));
    QSignalSpy done(tables->pauseRunner(), &PauseRunner::finished);
    QTest::mouseClick(
        box->findChild<QPushButton *>(pause ? QStringLiteral("confirmPause") : QStringLiteral("confirmResume")),
        Qt::LeftButton);
    QVERIFY(done.wait(10'000));
    QVERIFY2(done.first().at(4).toBool(), qPrintable(done.first().at(5).toString()));
    QCOMPARE(done.first().at(1).toString(), QStringLiteral("shop"));
    QCOMPARE(done.first().at(2).toString(), QString()); // the whole pipeline, one request
    QCOMPARE(done.first().at(3).toBool(), pause);
}

} // namespace

class TestPipelinePause : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useTestSettings(); }
    void pausePipelinePausesEveryTableOfItAndNoOther();
    void theWorkspacePagesPipelineRowPausesAndResumesIt();
    void theDashboardsPipelineTilePausesAndResumesIt();
};

void TestPipelinePause::pausePipelinePausesEveryTableOfItAndNoOther()
{
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace(twoPipelines());
    // One table of shop paused already: the pipeline's pause takes the other two.
    core::StateStore(statePath).setPaused("shop", {"public", "plans"}, true);

    MainWindow w;
    w.resize(1280, 640);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.pages()->setCurrentWidget(w.tablesPage());
    w.openWorkspace(QString::fromStdString(statePath));
    TablesPage *page = w.tablesPage();
    QTRY_COMPARE(w.tablesModel()->rowCount(), 4);
    QCOMPARE(w.engine()->state(), EngineBridge::State::Stopped);
    const int orders = page->proxy()
                           ->mapFromSource(w.tablesModel()->index(
                               w.tablesModel()->rowOf(QStringLiteral("shop"), QStringLiteral("public.orders")), 0))
                           .row();
    QVERIFY(orders >= 0);

    // Pause Pipeline… on one row of shop: the question names the two tables it changes.
    QVERIFY(chooseFromMenu(page, orders, QStringLiteral("pausePipeline")));
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    QMessageBox *box = page->confirmation();
    QVERIFY2(box->text().contains(QStringLiteral("Its 2 tables not paused yet")), qPrintable(box->text()));
    QVERIFY2(box->informativeText().contains(QStringLiteral("public.customers")) &&
                 box->informativeText().contains(QStringLiteral("public.orders")) &&
                 !box->informativeText().contains(QStringLiteral("public.leads")),
             qPrintable(box->informativeText()));
    // Each with its strategy in the grid's words; the pipeline, named in the question, not again.
    QVERIFY2(box->informativeText().contains(QStringLiteral("public.customers <small>(full refresh)</small>")) &&
                 box->informativeText().contains(QStringLiteral("public.orders <small>(cursor)</small>")) &&
                 !box->informativeText().contains(QStringLiteral("shop,")),
             qPrintable(box->informativeText()));
    test::saveShot(box, QStringLiteral("dialog-pause-pipeline"));
    // Cancel writes nothing.
    QTest::mouseClick(box->button(QMessageBox::Cancel), Qt::LeftButton);
    QTRY_VERIFY(!page->confirmation());
    QCOMPARE(storedPauses(statePath).size(), std::size_t{1});

    QSignalSpy done(page->pauseRunner(), &PauseRunner::finished);
    QVERIFY(chooseFromMenu(page, orders, QStringLiteral("pausePipeline")));
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    QTest::mouseClick(page->confirmation()->findChild<QPushButton *>(QStringLiteral("confirmPause")), Qt::LeftButton);
    QVERIFY(done.wait(10'000));
    QVERIFY2(done.first().at(4).toBool(), qPrintable(done.first().at(5).toString()));
    QCOMPARE(done.first().at(2).toString(), QString()); // one request, for the whole pipeline
    QCOMPARE(done.first().at(5).toString(), QStringLiteral("Paused pipeline shop (2 tables); 1 was paused already"));
    const std::set<std::pair<std::string, std::string>> shopPaused{
        {"shop", "public.customers"}, {"shop", "public.orders"}, {"shop", "public.plans"}};
    QCOMPARE(storedPauses(statePath), shopPaused);
    // The grid shows it; with nothing of shop left to pause, the menu's choice is off.
    for (const char *t : {"public.customers", "public.orders", "public.plans"})
        QTRY_VERIFY(w.tablesModel()->report(w.tablesModel()->rowOf(QStringLiteral("shop"), QLatin1String(t))).paused);
    QVERIFY(
        !w.tablesModel()->report(w.tablesModel()->rowOf(QStringLiteral("crm"), QStringLiteral("public.leads"))).paused);
    QVERIFY(!chooseFromMenu(page, orders, QStringLiteral("pausePipeline")));
    QVERIFY(!page->confirmation());

    // Resume Pipeline…: every table of shop syncs again.
    done.clear();
    QVERIFY(chooseFromMenu(page, orders, QStringLiteral("resumePipeline")));
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    QVERIFY2(page->confirmation()->text().contains(QStringLiteral("Its 3 paused tables")),
             qPrintable(page->confirmation()->text()));
    QTest::mouseClick(page->confirmation()->findChild<QPushButton *>(QStringLiteral("confirmResume")), Qt::LeftButton);
    QVERIFY(done.wait(10'000));
    QVERIFY2(done.first().at(4).toBool(), qPrintable(done.first().at(5).toString()));
    QVERIFY(storedPauses(statePath).empty());
}

void TestPipelinePause::theWorkspacePagesPipelineRowPausesAndResumesIt()
{
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace(twoPipelines());
    MainWindow w;
    WorkspacePage *page = w.workspacePage();
    openOn(w, statePath, page);
    if (QTest::currentTestFailed())
        return;
    PipelinesModel *pipelines = page->pipelinesModel();
    QTRY_COMPARE(pipelines->rowCount(), 2);
    const int shop = pipelines->rowOf(QStringLiteral("shop")), crm = pipelines->rowOf(QStringLiteral("crm"));
    const QModelIndex shopTables = pipelines->index(shop, PipelinesModel::Tables);
    QCOMPARE(shopTables.data().toString(), QStringLiteral("3"));

    // Nothing of shop is paused: Resume Pipeline… is off, Pause Pipeline… asks the Tables page's
    // question, and the DBA stays on the Workspace page.
    QVERIFY(!chooseFromMenu(page->pipelinesView(), shop, QStringLiteral("resumePipeline")));
    QVERIFY(!w.tablesPage()->confirmation());
    QVERIFY(chooseFromMenu(page->pipelinesView(), shop, QStringLiteral("pausePipeline")));
    confirmPipeline(w, true);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(w.pages()->currentWidget(), page);
    QCOMPARE(storedPauses(statePath), kShopPaused);
    // The row says so; crm's is untouched; with nothing left to pause, Pause Pipeline… is off.
    QTRY_COMPARE(shopTables.data().toString(), QStringLiteral("3 (3 paused)"));
    QCOMPARE(pipelines->index(crm, PipelinesModel::Tables).data().toString(), QStringLiteral("1"));
    QVERIFY(!chooseFromMenu(page->pipelinesView(), shop, QStringLiteral("pausePipeline")));

    QVERIFY(chooseFromMenu(page->pipelinesView(), shop, QStringLiteral("resumePipeline")));
    confirmPipeline(w, false);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(storedPauses(statePath).empty());
    QTRY_COMPARE(shopTables.data().toString(), QStringLiteral("3"));
}

void TestPipelinePause::theDashboardsPipelineTilePausesAndResumesIt()
{
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace(twoPipelines());
    MainWindow w;
    DashboardPage *page = w.dashboardPage();
    openOn(w, statePath, page);
    if (QTest::currentTestFailed())
        return;
    DashboardGrid *grid = page->grid();
    QTRY_VERIFY(!grid->pipelineRect(QStringLiteral("shop")).isEmpty());
    const auto tile = [grid] { return grid->pipelineRect(QStringLiteral("shop")).center(); };
    const auto states = [grid] { return grid->pipelineLines(QStringLiteral("shop")).value(0); };
    QVERIFY2(!states().contains(QStringLiteral("paused")), qPrintable(states()));

    QVERIFY(!chooseFromMenu(grid, tile(), QStringLiteral("resumePipeline")));
    QVERIFY(chooseFromMenu(grid, tile(), QStringLiteral("pausePipeline")));
    confirmPipeline(w, true);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(w.pages()->currentWidget(), page);
    QCOMPARE(storedPauses(statePath), kShopPaused);
    QTRY_VERIFY2(states().contains(QStringLiteral("3 paused")), qPrintable(states()));
    QVERIFY(!grid->pipelineLines(QStringLiteral("crm")).value(0).contains(QStringLiteral("paused")));
    QVERIFY(!chooseFromMenu(grid, tile(), QStringLiteral("pausePipeline")));

    QVERIFY(chooseFromMenu(grid, tile(), QStringLiteral("resumePipeline")));
    confirmPipeline(w, false);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(storedPauses(statePath).empty());
    QTRY_VERIFY2(!states().contains(QStringLiteral("paused")), qPrintable(states()));
}

QTEST_MAIN(TestPipelinePause)
#include "tst_pipelinepause.moc"
