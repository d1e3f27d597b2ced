// Pause Pipeline… and Resume Pipeline… in the Tables page's context menu (issue 45: a pipeline
// was paused one table at a time): one choice and its confirmation pause every table of the row's
// pipeline in the workspace file, and no other pipeline's; Resume Pipeline… lifts them all. The
// app's own engine, stopped, on a workspace whose endpoints nothing listens on: no server is
// needed.

#include "tests/support/guisupport.h"

#include "ui/enginebridge.h"
#include "ui/mainwindow.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/tablespage.h"

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

/// Opens the context menu on `row` of the grid and triggers its action named `action`; returns
/// whether that action was there and enabled.
bool chooseFromMenu(TablesPage *page, int row, const QString &action)
{
    QTableView *view = page->view();
    const QRect cell = view->visualRect(view->model()->index(row, 0));
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
    QContextMenuEvent event(QContextMenuEvent::Mouse, cell.center(), view->viewport()->mapToGlobal(cell.center()));
    QApplication::sendEvent(view->viewport(), &event);
    return chosen;
}

} // namespace

class TestPipelinePause : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useTestSettings(); }
    void pausePipelinePausesEveryTableOfItAndNoOther();
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

QTEST_MAIN(TestPipelinePause)
#include "tst_pipelinepause.moc"
