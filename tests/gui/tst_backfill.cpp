// One-click backfill on the Tables page against real Postgres. A CDC table of 50,000 rows copied
// in chunks of 500, with drift made by hand in the target (rows changed, removed, added): the
// Backfill button asks first, starts the stopped engine so the request is taken, shows the copy
// as a progress bar that rises, and leaves the target equal to the source. A second backfill is
// cancelled from the page: the bar goes and the log says so. Full refresh tables cannot be
// backfilled, and the disabled button says why. Screenshots go to $DRIFTLESS_ARTIFACTS.

#include "ui/backfillrunner.h"
#include "ui/enginebridge.h"
#include "ui/mainwindow.h"
#include "ui/models/eventsmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/tablespage.h"
#include "ui/widgets/backfillprogress.h"

#include "core/model/workspace.h"
#include "core/state/statestore.h"
#include "tests/support/guisupport.h"
#include "tests/support/testsupport.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTest>
#include <QTimer>

#include <chrono>
#include <memory>

using namespace driftless;
using driftless::test::artifactsDir;
using driftless::test::hasEvent;
using driftless::test::saveShot;
using driftless::ui::EngineBridge;
using driftless::ui::MainWindow;
using driftless::ui::TablesModel;
using namespace std::chrono_literals;

namespace {

const char *const kPipeline = "app_to_dw";

const char *kSourceSchema = R"sql(
CREATE TABLE plans (id bigint PRIMARY KEY, name text);
CREATE TABLE orders (id bigint PRIMARY KEY, name text, amount numeric(12,2), updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO plans SELECT g, 'plan ' || g FROM generate_series(1, 20) g;
INSERT INTO orders (id, name, amount) SELECT g, 'order ' || g, g * 1.25 FROM generate_series(1, 50000) g;
ANALYZE orders;
)sql";

const char *kOrders = "SELECT id, name, amount FROM public.orders";

core::Workspace workspaceFor(const test::PgTestDb &src, const test::PgTestDb &dst, long long pageSize)
{
    core::Workspace ws;
    ws.endpoints["app"] = test::pgEndpoint("app", src.name());
    ws.endpoints["dw"] = test::pgEndpoint("dw", dst.name());
    core::PipelineSpec p;
    p.name = kPipeline;
    p.source = "app";
    p.target = "dw";
    core::TableSpec plans;
    plans.table = {"public", "plans"};
    plans.strategy = core::Strategy::FullRefresh;
    plans.freshnessSla = 600s;
    core::TableSpec orders;
    orders.table = {"public", "orders"};
    orders.strategy = core::Strategy::Cdc;
    orders.pageSize = pageSize;
    orders.freshnessSla = 120s;
    p.tables = {plans, orders};
    ws.pipelines.push_back(p);
    return ws;
}

const core::TableReport *reportOf(const TablesModel *model, const char *table)
{
    const int row = model->rowOf(QString::fromLatin1(kPipeline), QString::fromLatin1(table));
    return row < 0 ? nullptr : &model->report(row);
}

/// Streaming with nothing left to copy, and fresh.
bool streamingOk(const TablesModel *model, const char *table)
{
    const auto *r = reportOf(model, table);
    return r && (r->state == core::TableState::Streaming || r->state == core::TableState::Ok) && !r->backfill &&
           r->freshness == core::Freshness::Ok && !TablesModel::isRebackfill(*r);
}

/// The bar the delegate paints for `table` on the page, as the view shows it, while a copy
/// runs (`finished`: once it has finished, full and saying done).
std::optional<QStyleOptionProgressBar> barOf(ui::TablesPage *page, const char *table, bool finished = false)
{
    const int row = page->proxy()
                        ->mapFromSource(page->proxy()->sourceModel()->index(
                            static_cast<TablesModel *>(page->proxy()->sourceModel())
                                ->rowOf(QString::fromLatin1(kPipeline), QString::fromLatin1(table)),
                            TablesModel::Progress))
                        .row();
    if (row < 0)
        return std::nullopt;
    const QModelIndex idx = page->proxy()->index(row, TablesModel::Progress);
    if (idx.data(TablesModel::BackfillDoneRole).toBool() != finished)
        return std::nullopt;
    return page->progressDelegate()->barFor(idx, page->view()->visualRect(idx));
}

/// Clicks the confirmation's button named `button` as soon as the page opens one.
void acceptWhenShown(ui::TablesPage *page, const QString &button)
{
    auto attempt = std::make_shared<std::function<void(int)>>();
    *attempt = [page, button, attempt](int left) {
        if (QMessageBox *box = page->confirmation(); box && box->isVisible()) {
            if (auto *b = box->findChild<QPushButton *>(button))
                b->click();
            return;
        }
        if (left > 0)
            QTimer::singleShot(50, page, [attempt, left] { (*attempt)(left - 1); });
    };
    QTimer::singleShot(0, page, [attempt] { (*attempt)(100); });
}

void clickButton(QMessageBox *box, const QString &name)
{
    auto *b = box->findChild<QPushButton *>(name);
    QVERIFY2(b, qPrintable(name));
    b->click();
}

} // namespace

class TestBackfill : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void backfillRepairsDriftWithARisingProgressBar();
    void cancelStopsTheBackfillAndLogsIt();
};

void TestBackfill::initTestCase()
{
    test::useTestSettings();
}

void TestBackfill::backfillRepairsDriftWithARisingProgressBar()
{
    test::PgTestDb src("gui_backfill_src");
    test::PgTestDb dst("gui_backfill_dst");
    src.exec(kSourceSchema);
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace(workspaceFor(src, dst, 500));

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    QAbstractItemModelTester tester(w.tablesModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester proxyTester(w.tablesPage()->proxy(),
                                         QAbstractItemModelTester::FailureReportingMode::Fatal);
    w.resize(1280, 520);
    w.show();
    w.pages()->setCurrentWidget(w.tablesPage()); // the Dashboard is the first page
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.openWorkspace(QString::fromStdString(statePath));
    auto *model = w.tablesModel();
    auto *page = w.tablesPage();
    QTRY_COMPARE(model->rowCount(), 2);

    // A full refresh table cannot be backfilled; the button says why.
    page->selectTable(QString::fromLatin1(kPipeline), QStringLiteral("public.plans"));
    QVERIFY(!page->backfillButton()->isEnabled());
    QVERIFY2(page->backfillButton()->toolTip().contains(QStringLiteral("reloaded whole on every pass")),
             qPrintable(page->backfillButton()->toolTip()));
    QVERIFY(!page->cancelButton()->isEnabled());

    // The initial load, then streaming; stopped again before the drift is made.
    w.engine()->start();
    QTRY_VERIFY_WITH_TIMEOUT(streamingOk(model, "public.orders"), 120000);
    w.engine()->stop();
    QTRY_COMPARE_WITH_TIMEOUT(w.engine()->state(), EngineBridge::State::Stopped, 30000);
    dst.exec("UPDATE public.orders SET name = 'drifted' WHERE id % 100 = 0;"
             "DELETE FROM public.orders WHERE id % 97 = 0;"
             "INSERT INTO public.orders (id, name, amount, updated_at, _driftless_version) "
             "SELECT g, 'ghost', 0, now(), 0 FROM generate_series(900001, 900300) g;");
    src.exec("UPDATE orders SET amount = amount + 1 WHERE id <= 10");
    {
        auto s = src.connect();
        auto d = dst.connect();
        QVERIFY(test::pgHash(d, kOrders, "id") != test::pgHash(s, kOrders, "id"));
    }

    // Backfill asks first, saying what will happen; confirming starts the stopped engine.
    page->selectTable(QString::fromLatin1(kPipeline), QStringLiteral("public.orders"));
    QTRY_VERIFY(page->backfillButton()->isEnabled());
    QVERIFY(!page->cancelButton()->isEnabled());
    QTest::mouseClick(page->backfillButton(), Qt::LeftButton);
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    const QString informative = page->confirmation()->informativeText();
    saveShot(page->confirmation(), QStringLiteral("dialog-backfill"));
    clickButton(page->confirmation(), QStringLiteral("confirmBackfill"));
    QTRY_VERIFY(!page->confirmation());
    for (const char *says : {"fresh snapshot", "rewritten", "no longer has are removed", "No locks", "chunks of 500"})
        QVERIFY2(informative.contains(QLatin1String(says)), qPrintable(says + (": " + informative)));

    QTRY_VERIFY_WITH_TIMEOUT(w.engine()->state() == EngineBridge::State::Running, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().contains(QStringLiteral("requested")), 30000);

    // The bar appears and rises.
    QTRY_VERIFY_WITH_TIMEOUT(barOf(page, "public.orders"), 60000);
    const int first = barOf(page, "public.orders")->progress;
    QVERIFY(page->cancelButton()->isEnabled());
    QVERIFY(!page->backfillButton()->isEnabled());
    QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("so it was started")),
             qPrintable(w.statusBar()->currentMessage()));
    int highest = first;
    QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                 if (auto bar = barOf(page, "public.orders"))
                                     highest = std::max(highest, bar->progress);
                                 return highest > first || streamingOk(model, "public.orders");
                             }()),
                             60000);
    QVERIFY2(highest > first, "the bar rose while the copy ran");
    // Part way, with a rate measured: the bar, its numbers and the time left.
    if (auto bar = barOf(page, "public.orders"); bar && bar->progress < 60) {
        QTRY_VERIFY_WITH_TIMEOUT(!barOf(page, "public.orders") ||
                                     (barOf(page, "public.orders")->progress >= 35 &&
                                      barOf(page, "public.orders")->text.contains(QStringLiteral("left"))),
                                 60000);
        if (barOf(page, "public.orders"))
            saveShot(&w, QStringLiteral("mainwindow-backfill"));
    }

    // Done: streaming again with the badge ok, and the target equal to the source.
    QTRY_VERIFY_WITH_TIMEOUT(streamingOk(model, "public.orders"), 120000);
    QVERIFY(!barOf(page, "public.orders"));
    // The bar stays a while, full: the copy reached 100%.
    QTRY_VERIFY_WITH_TIMEOUT(barOf(page, "public.orders", true), 30000);
    QCOMPARE(barOf(page, "public.orders", true)->progress, 100);
    QVERIFY2(barOf(page, "public.orders", true)->text.contains(QStringLiteral("done")),
             qPrintable(barOf(page, "public.orders", true)->text));
    saveShot(&w, QStringLiteral("mainwindow-backfill-done"));
    QTRY_VERIFY(hasEvent(w.eventsModel(), "rebackfill", "re-backfill done"));
    {
        auto s = src.connect();
        auto d = dst.connect();
        QCOMPARE(test::pgHash(d, kOrders, "id"), test::pgHash(s, kOrders, "id"));
    }
    QCOMPARE(dst.scalar("SELECT count(*) FROM public.orders WHERE name = 'ghost'"), std::string("0"));
    QVERIFY(page->backfillButton()->isEnabled());
    QVERIFY(!page->cancelButton()->isEnabled());

    w.close();
    window.reset();
}

void TestBackfill::cancelStopsTheBackfillAndLogsIt()
{
    test::PgTestDb src("gui_cancel_src");
    test::PgTestDb dst("gui_cancel_dst");
    src.exec(kSourceSchema);
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    // Small chunks, so the copy lasts long enough to be cancelled by hand.
    core::StateStore(statePath).applyWorkspace(workspaceFor(src, dst, 50));

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    QAbstractItemModelTester tester(w.tablesModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    w.resize(1280, 520);
    w.show();
    w.pages()->setCurrentWidget(w.tablesPage()); // the Dashboard is the first page
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.openWorkspace(QString::fromStdString(statePath));
    auto *model = w.tablesModel();
    auto *page = w.tablesPage();
    QTRY_COMPARE(model->rowCount(), 2);
    w.engine()->start();
    QTRY_VERIFY_WITH_TIMEOUT(streamingOk(model, "public.orders"), 180000);

    page->selectTable(QString::fromLatin1(kPipeline), QStringLiteral("public.orders"));
    QTRY_VERIFY(page->backfillButton()->isEnabled());
    acceptWhenShown(page, QStringLiteral("confirmBackfill"));
    QTest::mouseClick(page->backfillButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(barOf(page, "public.orders"), 60000);
    QTRY_VERIFY(page->cancelButton()->isEnabled());

    // Keep Copying leaves it running; Cancel Backfill stops it.
    QTest::mouseClick(page->cancelButton(), Qt::LeftButton);
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    QVERIFY(page->confirmation()->informativeText().contains(QStringLiteral("rows merged so far stay")));
    saveShot(page->confirmation(), QStringLiteral("dialog-cancel-backfill"));
    for (auto *b : page->confirmation()->findChildren<QPushButton *>())
        if (b->text() == QStringLiteral("Keep Copying"))
            b->click();
    QTRY_VERIFY(!page->confirmation());
    QVERIFY(barOf(page, "public.orders") || streamingOk(model, "public.orders"));

    // Accepted the way a blocking dialog would be: found by a timer once it is shown.
    acceptWhenShown(page, QStringLiteral("confirmCancel"));
    QTest::mouseClick(page->cancelButton(), Qt::LeftButton);
    QTRY_VERIFY(!page->confirmation());
    QTRY_VERIFY_WITH_TIMEOUT(hasEvent(w.eventsModel(), "rebackfill", "re-backfill cancelled"), 30000);
    QTRY_VERIFY_WITH_TIMEOUT(!barOf(page, "public.orders"), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(streamingOk(model, "public.orders"), 30000);
    QVERIFY(!hasEvent(w.eventsModel(), "rebackfill", "re-backfill done"));
    QVERIFY(!page->cancelButton()->isEnabled());
    QVERIFY(page->backfillButton()->isEnabled());
    QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("cancel")),
             qPrintable(w.statusBar()->currentMessage()));

    w.close();
    window.reset();
}

QTEST_MAIN(TestBackfill)
#include "tst_backfill.moc"
