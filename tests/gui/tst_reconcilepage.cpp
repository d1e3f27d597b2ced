// The Reconciliation page against real Postgres, driven as a DBA would: a cursor table synced
// once, then drift made by hand in the target (a row removed, one added, rows edited, a value
// set to NULL). Reconcile Now finds exactly that drift and lists it with its counts; selecting
// the table shows each differing key with its class and the source value beside the target
// value (a missing or extra row with its values); Repair Selected fixes the chosen keys after a
// confirmation that says what will happen (its whole SQL under Show Details), the table is
// compared again, and Repair Table fixes the rest; the history marks what was repaired and
// superseded. Rows written to a full refresh table since its pass are in flight, and a table
// without a primary key lists its differing rows. The models run under
// QAbstractItemModelTester throughout. Screenshots go to $DRIFTLESS_ARTIFACTS.

#include "ui/dialogs/comparedialog.h"
#include "ui/mainwindow.h"
#include "ui/models/eventsmodel.h"
#include "ui/models/reconcilemodel.h"
#include "ui/models/rowdiffmodel.h"
#include "ui/pages/reconcilepage.h"
#include "ui/reconcilerunner.h"
#include "ui/widgets/reconciledialog.h"

#include "core/engine/reconcile/reconciler.h"
#include "core/engine/reconcile/reportexport.h"
#include "core/model/workspace.h"
#include "core/state/statestore.h"
#include "tests/support/guisupport.h"
#include "tests/support/recordingobserver.h"
#include "tests/support/testsupport.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTest>
#include <QTextEdit>
#include <QTreeView>

#include <chrono>
#include <memory>
#include <set>

using namespace driftless;
using driftless::test::hasEvent;
using driftless::test::saveShot;
using driftless::ui::MainWindow;
using driftless::ui::ReconcileModel;
using driftless::ui::RowDiffModel;
using namespace std::chrono_literals;

namespace {

const char *const kPipeline = "app_to_dw";

// updated_at an hour back: outside the cursor's recent window, so every difference is drift.
const char *kSourceSchema = R"sql(
CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, qty int, price numeric(10,2),
                    updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO items SELECT g, 'item ' || g, g % 97, (g % 1000) / 10.0, now() - interval '1 hour'
FROM generate_series(1, 2000) g;
CREATE TABLE plans (id bigint PRIMARY KEY, name text);
INSERT INTO plans SELECT g, 'plan ' || g FROM generate_series(1, 20) g;
CREATE TABLE zlog (at timestamp, who text, what text);
INSERT INTO zlog SELECT timestamp '2024-01-01' + g * interval '1 hour', 'u' || (g % 3), 'did ' || g
FROM generate_series(1, 50) g;
)sql";

const char *kItems = "SELECT id, name, qty, price FROM public.items";

core::Workspace workspaceFor(const test::PgTestDb &src, const test::PgTestDb &dst)
{
    core::Workspace ws;
    ws.endpoints["app"] = test::pgEndpoint("app", src.name());
    ws.endpoints["dw"] = test::pgEndpoint("dw", dst.name());
    core::PipelineSpec p;
    p.name = kPipeline;
    p.source = "app";
    p.target = "dw";
    core::TableSpec items;
    items.table = {"public", "items"};
    items.strategy = core::Strategy::Cursor;
    items.cursor = "updated_at";
    items.freshnessSla = 600s;
    core::TableSpec plans;
    plans.table = {"public", "plans"};
    plans.strategy = core::Strategy::FullRefresh;
    plans.freshnessSla = 600s;
    core::TableSpec zlog = plans; // no primary key
    zlog.table = {"public", "zlog"};
    p.tables = {items, plans, zlog};
    ws.pipelines.push_back(p);
    return ws;
}

void syncOnce(const core::Workspace &ws)
{
    test::RecordingObserver observer;
    for (auto &job : core::jobsFor(ws, kPipeline)) {
        core::TableSync sync(job, observer);
        sync.runOnce({});
    }
}

QString cell(const QAbstractItemModel *model, const QModelIndex &index, int column, int role = Qt::DisplayRole)
{
    return model->index(index.row(), column, index.parent()).data(role).toString();
}

/// The newest list row of `table`, or -1.
int newestRowOf(const ReconcileModel *model, const char *table)
{
    for (int r = 0; r < model->rowCount(); ++r)
        if (model->summaryAt(r).table == table)
            return r;
    return -1;
}

void clickButton(QMessageBox *box, const QString &name)
{
    auto *b = box->findChild<QPushButton *>(name);
    QVERIFY2(b, qPrintable(name));
    b->click();
}

} // namespace

class TestReconcilePage : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void modelsShowSummariesAndDiffs();
    void reconcileNowFindsDriftAndRepairsFixIt();
    void compareTablesListsTheDifferingRowsOfTwoDatabases();
    void missingWorkspaceFileIsNotCreated();
};

void TestReconcilePage::initTestCase()
{
    test::useTestSettings();
}

void TestReconcilePage::modelsShowSummariesAndDiffs()
{
    ui::ReconcileModel list;
    QAbstractItemModelTester listTester(&list, QAbstractItemModelTester::FailureReportingMode::Fatal);
    core::StateStore::ReconcileSummary a;
    a.reportId = 2;
    a.pipeline = kPipeline;
    a.table = "public.items";
    a.sourceRows = 2000;
    a.targetRows = 2001;
    a.missing = 1;
    a.extra = 2;
    a.different = 7;
    a.driftRatio = 10.0 / 2000.0;
    core::StateStore::ReconcileSummary b = a;
    b.table = "public.plans";
    b.missing = b.extra = b.different = 0;
    b.driftRatio = 0;
    core::StateStore::ReconcileSummary c = a;
    c.reportId = 1;
    c.error = "connection refused";
    core::StateStore::ReconcileSummary d = a; // an older comparison, repaired, compared again since
    d.reportId = 1;
    d.repaired = true;
    d.supersededBy = 2;
    list.setSummaries({a, b, c, d});
    QCOMPARE(list.rowCount(), 4);
    QCOMPARE(list.index(3, ReconcileModel::Status).data().toString(),
             QStringLiteral("drift \u00b7 repaired \u00b7 superseded"));
    QVERIFY(list.index(3, ReconcileModel::Status)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("report 2 compared this table again")));
    QVERIFY(list.index(3, ReconcileModel::Table).data(Qt::ForegroundRole).isValid());
    QVERIFY(!list.index(0, ReconcileModel::Table).data(Qt::ForegroundRole).isValid());
    QCOMPARE(list.index(0, ReconcileModel::Status).data().toString(), QStringLiteral("drift"));
    QVERIFY(!list.index(0, ReconcileModel::Status).data(Qt::DecorationRole).value<QIcon>().isNull());
    QCOMPARE(list.index(0, ReconcileModel::DriftRatio).data().toString(), QStringLiteral("0.50%"));
    QCOMPARE(list.index(1, ReconcileModel::Status).data().toString(), QStringLiteral("no drift"));
    QCOMPARE(list.index(2, ReconcileModel::Status).data().toString(), QStringLiteral("error"));
    QCOMPARE(list.rowOf(2, QStringLiteral("public.plans")), 1);
    QCOMPARE(ReconcileModel::formatRatio(0.00000001), QStringLiteral("<0.01%"));
    // The same rows again, one changed: updated in place, not reset.
    int resets = 0;
    connect(&list, &QAbstractItemModel::modelReset, this, [&resets] { ++resets; });
    a.different = 8;
    list.setSummaries({a, b, c, d});
    QCOMPARE(resets, 0);
    QCOMPARE(list.index(0, ReconcileModel::Different).data().toString(), QStringLiteral("8"));

    ui::RowDiffModel diff;
    QAbstractItemModelTester diffTester(&diff, QAbstractItemModelTester::FailureReportingMode::Fatal);
    core::TableReconcile t;
    t.table = "public.items";
    t.keyColumns = {"id"};
    t.missing = 1;
    t.extra = 1;
    t.different = 3; // one more than kept
    t.missingKeys = {{"7"}};
    t.extraKeys = {{"5000"}};
    t.columns = {"id", "name", "qty"};
    t.missingRows = {{{"7"}, {"7", "item 7", std::nullopt}, 1}}; // the extra row's values were not kept
    t.differentRows = {{{"10"}, {{"name", "item 10", "edited"}}},
                       {{"20"}, {{"name", "item 20", "x"}, {"qty", "20", std::nullopt}}}};
    diff.setTable(t);
    QCOMPARE(diff.rowCount(), 4);
    QCOMPARE(diff.headerData(RowDiffModel::Key, Qt::Horizontal).toString(), QStringLiteral("Key (id)"));
    QVERIFY(diff.truncated());
    const QModelIndex missing = diff.indexOfKey({"7"});
    QCOMPARE(cell(&diff, missing, RowDiffModel::Class), QStringLiteral("missing in target"));
    QCOMPARE(cell(&diff, missing, RowDiffModel::Target), QStringLiteral("no row"));
    QVERIFY(diff.index(missing.row(), RowDiffModel::Target).data(RowDiffModel::NullRole).toBool());
    // The missing row's values, in a line and a child row per column.
    QCOMPARE(cell(&diff, missing, RowDiffModel::Source), QStringLiteral("7 | item 7 | NULL"));
    QCOMPARE(diff.rowCount(missing), 3);
    const QModelIndex name = diff.index(1, 0, missing);
    QCOMPARE(cell(&diff, name, RowDiffModel::ColumnName), QStringLiteral("name"));
    QCOMPARE(cell(&diff, name, RowDiffModel::Source), QStringLiteral("item 7"));
    QCOMPARE(cell(&diff, name, RowDiffModel::Target), QStringLiteral("no row"));
    QVERIFY(diff.index(2, RowDiffModel::Source, missing).data(RowDiffModel::NullRole).toBool());
    QCOMPARE(cell(&diff, diff.indexOfKey({"5000"}), RowDiffModel::Target), QStringLiteral("row present"));
    const QModelIndex ten = diff.indexOfKey({"10"});
    QCOMPARE(diff.rowCount(ten), 0);
    QCOMPARE(cell(&diff, ten, RowDiffModel::Source), QStringLiteral("item 10"));
    QCOMPARE(cell(&diff, ten, RowDiffModel::Target), QStringLiteral("edited"));
    const QModelIndex twenty = diff.indexOfKey({"20"});
    QCOMPARE(diff.rowCount(twenty), 2);
    QCOMPARE(cell(&diff, twenty, RowDiffModel::ColumnName), QStringLiteral("name, qty"));
    const QModelIndex qty = diff.index(1, 0, twenty);
    QCOMPARE(cell(&diff, qty, RowDiffModel::Target), QStringLiteral("NULL"));
    QVERIFY(diff.index(1, RowDiffModel::Target, twenty).data(RowDiffModel::NullRole).toBool());
    QVERIFY(diff.keyAt(qty) == core::CanonicalKey{"20"});
    QCOMPARE(cell(&diff, qty, RowDiffModel::Class, RowDiffModel::KindRole), QStringLiteral("different"));
    diff.clear();
    QCOMPARE(diff.rowCount(), 0);

    // A table without a primary key: its rows, without keys, with the copies one side has more of.
    core::TableReconcile log;
    log.table = "public.log";
    log.columns = {"at", "who"};
    log.missing = 3;
    log.missingRows = {{{}, {"2024-01-01 00:00:00", "u1"}, 2}, {{}, {"2024-01-02 00:00:00", std::nullopt}, 1}};
    diff.setTable(log);
    QVERIFY(diff.keyless());
    QVERIFY(!diff.truncated());
    QCOMPARE(diff.rowCount(), 2);
    QCOMPARE(cell(&diff, diff.index(0, 0), RowDiffModel::Key), QStringLiteral("(no key)"));
    QCOMPARE(cell(&diff, diff.index(0, 0), RowDiffModel::Class), QStringLiteral("missing in target \u00d72"));
    QCOMPARE(cell(&diff, diff.index(1, 0), RowDiffModel::Source), QStringLiteral("2024-01-02 00:00:00 | NULL"));
}

void TestReconcilePage::reconcileNowFindsDriftAndRepairsFixIt()
{
    test::PgTestDb src("gui_reconcile_src");
    test::PgTestDb dst("gui_reconcile_dst");
    src.exec(kSourceSchema);
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    const core::Workspace ws = workspaceFor(src, dst);
    core::StateStore(statePath).applyWorkspace(ws);
    syncOnce(ws);
    src.exec("INSERT INTO plans VALUES (21, 'new'), (22, 'new'), (23, 'new')"); // in flight: after the pass
    dst.exec("DELETE FROM public.zlog WHERE at = '2024-01-01 05:00:00'");
    dst.exec("DELETE FROM public.items WHERE id = 7;"
             "INSERT INTO public.items (id, name, qty, price, updated_at, _driftless_version) "
             "VALUES (5000, 'ghost', 1, 1.00, '2020-01-01 00:00:00+00', 1);"
             "UPDATE public.items SET name = 'edited by hand' WHERE id IN (10, 11);"
             "UPDATE public.items SET price = NULL WHERE id = 12;"
             "UPDATE public.items SET name = 'changed twice', qty = NULL WHERE id = 20;");

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    auto *page = w.reconcilePage();
    auto *model = page->model();
    auto *diff = page->diffModel();
    QAbstractItemModelTester listTester(model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester proxyTester(page->proxy(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester diffTester(diff, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QStringList phases;
    connect(w.reconcileRunner(), &ui::ReconcileRunner::progress, this,
            [&phases](std::uint64_t, const QString &table, const QString &phase, int, int) {
                phases << table + QLatin1Char(':') + phase;
            });
    w.resize(1180, 720);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.pages()->setCurrentWidget(page);
    QCOMPARE(w.pages()->tabText(w.pages()->indexOf(page)), QStringLiteral("Reconciliation"));
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_VERIFY(page->findChild<QLabel *>(QStringLiteral("reconcileSummary"))
                    ->text()
                    .contains(QStringLiteral("No reconciliation yet")));
    QVERIFY(!page->repairTableButton()->isEnabled());

    // Cancelled at once: the comparison stops before the next table and stores nothing.
    QTRY_VERIFY(page->reconcileButton()->isEnabled());
    QTest::mouseClick(page->reconcileButton(), Qt::LeftButton);
    QTRY_VERIFY(page->reconcileDialog() && page->reconcileDialog()->isVisible());
    page->reconcileDialog()->choose(QString::fromLatin1(kPipeline));
    QTest::mouseClick(page->reconcileDialog()->startButton(), Qt::LeftButton);
    QVERIFY(page->cancelButton()->isVisible());
    QTest::mouseClick(page->cancelButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!w.reconcileRunner()->busy(), 60000);
    QVERIFY2(page->resultLabel()->text().contains(QStringLiteral("cancelled; nothing was stored")),
             qPrintable(page->resultLabel()->text()));
    QVERIFY(!page->cancelButton()->isVisible());
    QCOMPARE(model->rowCount(), 0);

    // Reconcile Now: pick the pipeline, start; progress shows while it runs.
    QTRY_VERIFY(page->reconcileButton()->isEnabled());
    QTest::mouseClick(page->reconcileButton(), Qt::LeftButton);
    QTRY_VERIFY(page->reconcileDialog() && page->reconcileDialog()->isVisible());
    auto *dialog = page->reconcileDialog();
    QCOMPARE(dialog->tableCombo()->count(), 4); // all, items, plans, zlog
    dialog->choose(QString::fromLatin1(kPipeline));
    QVERIFY(dialog->table().isEmpty());
    saveShot(dialog, QStringLiteral("dialog-reconcile"));
    QTest::mouseClick(dialog->startButton(), Qt::LeftButton);
    QVERIFY(page->progressBar()->isVisible());
    QVERIFY(!page->reconcileButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(!w.reconcileRunner()->busy() && model->rowCount() == 3, 60000);
    QVERIFY(!page->progressBar()->isVisible());
    QVERIFY2(phases.contains(QStringLiteral("public.items:checksum")), qPrintable(phases.join(',')));
    QVERIFY2(phases.contains(QStringLiteral("public.plans:done")), qPrintable(phases.join(',')));

    // The list: one report, items with its drift, plans without.
    const int items = newestRowOf(model, "public.items");
    const int plans = newestRowOf(model, "public.plans");
    QVERIFY(items >= 0 && plans >= 0);
    auto text = [model](int row, int column) { return model->index(row, column).data().toString(); };
    QCOMPARE(text(items, ReconcileModel::Pipeline), QString::fromLatin1(kPipeline));
    QCOMPARE(text(items, ReconcileModel::Status), QStringLiteral("drift"));
    QCOMPARE(text(items, ReconcileModel::SourceRows), QLocale().toString(2000));
    QCOMPARE(text(items, ReconcileModel::TargetRows), QLocale().toString(2000));
    QCOMPARE(text(items, ReconcileModel::Missing), QStringLiteral("1"));
    QCOMPARE(text(items, ReconcileModel::Extra), QStringLiteral("1"));
    QCOMPARE(text(items, ReconcileModel::Different), QStringLiteral("4"));
    QCOMPARE(text(items, ReconcileModel::InFlight), QStringLiteral("0"));
    QCOMPARE(text(items, ReconcileModel::DriftRatio), QStringLiteral("0.30%"));
    QCOMPARE(text(plans, ReconcileModel::Status), QStringLiteral("no drift"));
    QCOMPARE(text(plans, ReconcileModel::InFlight), QStringLiteral("3"));
    const std::int64_t firstReport = model->summaryAt(items).reportId;

    // The new report's drifting table is selected, and the grid lists its keys.
    QCOMPARE(page->selectedRow(), items);
    QTRY_COMPARE(diff->keyCount(), 6);
    QVERIFY(page->detailsLabel()->text().contains(QStringLiteral("1 missing in the target, 1 extra, 4 different")));
    const QModelIndex seven = diff->indexOfKey({"7"});
    QCOMPARE(cell(diff, seven, RowDiffModel::Class), QStringLiteral("missing in target"));
    QCOMPARE(cell(diff, diff->indexOfKey({"5000"}), RowDiffModel::Class), QStringLiteral("extra in target"));
    // Missing and extra rows show their values, not just that a side has the row.
    QVERIFY2(cell(diff, seven, RowDiffModel::Source).startsWith(QStringLiteral("7 | item 7 | 7 | 0.7 | ")),
             qPrintable(cell(diff, seven, RowDiffModel::Source)));
    QCOMPARE(diff->rowCount(seven), 5);
    QCOMPARE(cell(diff, diff->indexOfKey({"5000"}), RowDiffModel::Target),
             QStringLiteral("5000 | ghost | 1 | 1 | 2020-01-01 00:00:00+00"));
    const QModelIndex ten = diff->indexOfKey({"10"});
    QCOMPARE(cell(diff, ten, RowDiffModel::Class), QStringLiteral("different"));
    QCOMPARE(cell(diff, ten, RowDiffModel::ColumnName), QStringLiteral("name"));
    QCOMPARE(cell(diff, ten, RowDiffModel::Source), QStringLiteral("item 10"));
    QCOMPARE(cell(diff, ten, RowDiffModel::Target), QStringLiteral("edited by hand"));
    const QModelIndex twelve = diff->indexOfKey({"12"});
    QCOMPARE(cell(diff, twelve, RowDiffModel::ColumnName), QStringLiteral("price"));
    QCOMPARE(cell(diff, twelve, RowDiffModel::Source), QStringLiteral("1.2"));
    QCOMPARE(cell(diff, twelve, RowDiffModel::Target), QStringLiteral("NULL"));
    QVERIFY(diff->index(twelve.row(), RowDiffModel::Target).data(RowDiffModel::NullRole).toBool());
    const QModelIndex twenty = diff->indexOfKey({"20"});
    QCOMPARE(diff->rowCount(twenty), 2);
    QVERIFY(page->diffView()->isExpanded(twenty));
    QVERIFY(page->repairTableButton()->isEnabled());
    QVERIFY(page->detailsLabel()->text().contains(QStringLiteral("public.items \u2192 dw (public.items)")));

    // Repair Selected: three keys of all three classes, after a confirmation that says what
    // will happen: the plan's statements with their rows.
    auto *selection = page->diffView()->selectionModel();
    selection->clearSelection();
    for (const QModelIndex &key : {seven, diff->indexOfKey({"5000"})})
        selection->select(key, QItemSelectionModel::Select | QItemSelectionModel::Rows);
    selection->setCurrentIndex(ten, QItemSelectionModel::Select | QItemSelectionModel::Rows);
    QCOMPARE(page->selectedKeys().size(), std::size_t(3));
    QVERIFY(page->repairSelectedButton()->isEnabled());
    QVERIFY(page->repairRowButton()->isEnabled());
    QVERIFY(page->repairRowButton()->toolTip().contains(QStringLiteral("Repair key 10")));
    saveShot(&w, QStringLiteral("reconciliation"));
    // Export CSV… and Export HTML…: the shown report, as `driftless-cli report ID --csv|--html`
    // writes it (the path set here stands in for the file dialog).
    QTRY_VERIFY(page->shownReport() && page->shownReport()->id == firstReport);
    QVERIFY(page->exportCsvButton()->isEnabled());
    const QString csvPath = QString::fromStdString(dir.file("report.csv"));
    page->setExportPath(csvPath);
    QTest::mouseClick(page->exportCsvButton(), Qt::LeftButton);
    const std::string csv = test::readFile(csvPath.toStdString());
    QCOMPARE(csv, core::reportCsv(*page->shownReport()));
    QVERIFY2(csv.rfind("pipeline,table,key,kind,columns,source,target\r\n", 0) == 0, csv.c_str());
    QVERIFY2(csv.find("app_to_dw,public.items,7,missing,,,\r\n") != std::string::npos, csv.c_str());
    QVERIFY2(csv.find("app_to_dw,public.items,5000,extra,,,\r\n") != std::string::npos, csv.c_str());
    QVERIFY2(csv.find("\"edited by hand\"") != std::string::npos, csv.c_str());
    QVERIFY(page->resultLabel()->text().contains(QStringLiteral("exported to ") + csvPath));
    const QString htmlPath = QString::fromStdString(dir.file("report.html"));
    page->setExportPath(htmlPath);
    QTest::mouseClick(page->exportHtmlButton(), Qt::LeftButton);
    const std::string html = test::readFile(htmlPath.toStdString());
    QCOMPARE(html, core::reportHtml(*page->shownReport()));
    QVERIFY(html.rfind("<!DOCTYPE html>", 0) == 0);
    QVERIFY(html.find("<td>edited by hand</td>") == std::string::npos); // values are in <code>
    QVERIFY(html.find("<code>edited by hand</code>") != std::string::npos);
    // A folder that does not exist: said, nothing written.
    const QString nowhere = QString::fromStdString(dir.file("no/such/dir/report.csv"));
    page->setExportPath(nowhere);
    QTest::mouseClick(page->exportCsvButton(), Qt::LeftButton);
    QVERIFY2(page->resultLabel()->text().contains(QStringLiteral("Could not write ") + nowhere),
             qPrintable(page->resultLabel()->text()));
    QVERIFY(!QFileInfo::exists(nowhere));

    QTest::mouseClick(page->repairSelectedButton(), Qt::LeftButton);
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    const QString informative = page->confirmation()->informativeText();
    saveShot(page->confirmation(), QStringLiteral("dialog-repair-rows"));
    saveShot(page->confirmation(), QStringLiteral("reconciliation-repair-preview"));
    for (const char *says : {"Re-read 3 rows from the source and apply them to dw (public.items) through the guarded "
                             "merge; rows deleted from the source are deleted from the target; a newer change the "
                             "sync has yet to apply is never overwritten.",
                             "Keys: 7; 5000; 10", "(1 to insert, 1 to update, 1 to delete)",
                             "3 rows: <code>COPY the rows into the staging table of "
                             "&quot;public&quot;.&quot;items&quot; FROM STDIN",
                             "2 rows: <code>MERGE INTO &quot;public&quot;.&quot;items&quot;",
                             "1 row: <code>DELETE FROM &quot;public&quot;.&quot;items&quot;"})
        QVERIFY2(informative.contains(QLatin1String(says)), qPrintable(says + (": " + informative)));
    // Nothing was written while the plan was made and shown.
    QCOMPARE(dst.scalar("SELECT name FROM public.items WHERE id = 10"), std::string("edited by hand"));
    QCOMPARE(dst.scalar("SELECT count(*) FROM public.items WHERE id IN (7, 5000)"), std::string("1"));
    // Show Details: the whole SQL the target runs, every column and the guard, nothing cut.
    const QString details = page->confirmation()->detailedText();
    for (const char *says : {"2 rows inserted or updated:", "MERGE INTO \"public\".\"items\" AS t",
                             "THEN UPDATE SET \"id\" = s.\"id\", \"name\" = s.\"name\", \"qty\" = s.\"qty\"",
                             "s._driftless_version >= t._driftless_version", "1 row deleted:"})
        QVERIFY2(details.contains(QLatin1String(says)), qPrintable(says + (": " + details)));
    QVERIFY2(!details.contains(QStringLiteral("...")), qPrintable(details));
    for (auto *b : page->confirmation()->findChildren<QPushButton *>())
        if (page->confirmation()->buttonRole(b) == QMessageBox::ActionRole)
            b->click(); // Show Details...
    // The SQL scrolls in the details box: the question still fits a 1366x768 laptop.
    QTRY_VERIFY(page->confirmation()->findChild<QTextEdit *>() &&
                page->confirmation()->findChild<QTextEdit *>()->isVisible());
    QVERIFY2(page->confirmation()->frameGeometry().width() <= 1366 &&
                 page->confirmation()->frameGeometry().height() <= 768,
             qPrintable(QStringLiteral("%1x%2")
                            .arg(page->confirmation()->frameGeometry().width())
                            .arg(page->confirmation()->frameGeometry().height())));
    saveShot(page->confirmation(), QStringLiteral("reconciliation-repair-details"));
    clickButton(page->confirmation(), QStringLiteral("confirmRepair"));
    QTRY_VERIFY(!page->confirmation());
    QTRY_VERIFY_WITH_TIMEOUT(!w.reconcileRunner()->busy() && page->resultLabel()->isVisible(), 60000);
    const QString outcome = page->resultLabel()->text();
    QVERIFY2(outcome.contains(QStringLiteral("2 rows written, 1 deleted, 3 of 3 keys verified equal")),
             qPrintable(outcome));
    QVERIFY2(!outcome.contains(QStringLiteral("still different")), qPrintable(outcome));
    QCOMPARE(dst.scalar("SELECT name FROM public.items WHERE id = 10"), std::string("item 10"));
    QCOMPARE(dst.scalar("SELECT count(*) FROM public.items WHERE id IN (7, 5000)"), std::string("1"));
    QCOMPARE(dst.scalar("SELECT name FROM public.items WHERE id = 11"), std::string("edited by hand"));

    // The table was compared again: a newer report, selected, with what is left.
    QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() == 4 && page->selectedRow() >= 0 &&
                                 model->summaryAt(page->selectedRow()).reportId > firstReport,
                             30000);
    const int again = page->selectedRow();
    QCOMPARE(text(again, ReconcileModel::Table), QStringLiteral("public.items"));
    QCOMPARE(text(again, ReconcileModel::Missing), QStringLiteral("0"));
    QCOMPARE(text(again, ReconcileModel::Extra), QStringLiteral("0"));
    QCOMPARE(text(again, ReconcileModel::Different), QStringLiteral("3"));
    QTRY_COMPARE(diff->keyCount(), 3);
    QVERIFY(!diff->indexOfKey({"10"}).isValid());
    QTRY_VERIFY(hasEvent(w.eventsModel(), "repair", "2 rows written, 1 deleted"));
    // The history: the first report's items row is marked repaired and superseded, in words.
    const int first = model->rowOf(firstReport, QStringLiteral("public.items"));
    QVERIFY(model->summaryAt(first).repaired);
    QCOMPARE(model->summaryAt(first).supersededBy, model->summaryAt(again).reportId);
    QCOMPARE(text(first, ReconcileModel::Status), QStringLiteral("drift \u00b7 repaired \u00b7 superseded"));
    QCOMPARE(text(model->rowOf(firstReport, QStringLiteral("public.plans")), ReconcileModel::Status),
             QStringLiteral("no drift"));
    QVERIFY2(page->findChild<QLabel *>(QStringLiteral("reconcileSummary"))
                 ->text()
                 .contains(QStringLiteral("2 with drift when last compared")),
             qPrintable(page->findChild<QLabel *>(QStringLiteral("reconcileSummary"))->text()));

    // Repair Table: the rest; then the table has no drift and the target equals the source.
    QTRY_VERIFY(page->repairTableButton()->isEnabled());
    QTest::mouseClick(page->repairTableButton(), Qt::LeftButton);
    QTRY_VERIFY(page->confirmation() && page->confirmation()->isVisible());
    QVERIFY2(page->confirmation()->informativeText().contains(QStringLiteral("Re-read 3 rows from the source")),
             qPrintable(page->confirmation()->informativeText()));
    clickButton(page->confirmation(), QStringLiteral("confirmRepair"));
    QTRY_VERIFY_WITH_TIMEOUT(!w.reconcileRunner()->busy() && model->rowCount() == 5 && page->selectedRow() >= 0 &&
                                 text(page->selectedRow(), ReconcileModel::Status) == QStringLiteral("no drift"),
                             60000);
    QVERIFY2(page->resultLabel()->text().contains(QStringLiteral("3 rows written, 0 deleted, 3 of 3 keys")),
             qPrintable(page->resultLabel()->text()));
    // Every report stays listed, newest first: the first comparison and the two after repairs.
    std::set<std::int64_t> reports;
    for (int r = 0; r < model->rowCount(); ++r)
        reports.insert(model->summaryAt(r).reportId);
    QCOMPARE(reports.size(), std::size_t(3));
    QVERIFY(model->summaryAt(0).reportId > model->summaryAt(model->rowCount() - 1).reportId);
    QVERIFY(reports.count(firstReport));
    {
        auto s = src.connect();
        auto d = dst.connect();
        QCOMPARE(test::pgHash(d, kItems, "id"), test::pgHash(s, kItems, "id"));
    }
    // Once the new report is read, the grid is empty and there is nothing to repair.
    const std::int64_t last = model->summaryAt(page->selectedRow()).reportId;
    QTRY_VERIFY(page->shownReport() && page->shownReport()->id == last);
    QCOMPARE(diff->keyCount(), 0);
    QVERIFY(!page->repairTableButton()->isEnabled());
    QVERIFY2(page->repairTableButton()->toolTip().contains(QStringLiteral("no drift")),
             qPrintable(page->repairTableButton()->toolTip()));
    saveShot(&w, QStringLiteral("reconciliation-repaired"));
    saveShot(&w, QStringLiteral("reconciliation-reports"));

    // The table without a primary key: its missing row with its values, no key, no row repair.
    page->selectTable(firstReport, QStringLiteral("public.zlog"));
    QTRY_VERIFY(page->shownReport() && page->shownReport()->id == firstReport && diff->keyCount() == 1);
    QVERIFY(diff->keyless());
    const QModelIndex lost = diff->index(0, 0);
    QCOMPARE(cell(diff, lost, RowDiffModel::Key), QStringLiteral("(no key)"));
    QCOMPARE(cell(diff, lost, RowDiffModel::Class), QStringLiteral("missing in target"));
    QCOMPARE(cell(diff, lost, RowDiffModel::Source), QStringLiteral("2024-01-01 05:00:00 | u2 | did 5"));
    QVERIFY(!page->repairTableButton()->isEnabled());
    QVERIFY2(page->repairTableButton()->toolTip().contains(QStringLiteral("no primary key")),
             qPrintable(page->repairTableButton()->toolTip()));
    // The old items comparison says it was repaired and compared again since.
    page->selectTable(firstReport, QStringLiteral("public.items"));
    auto *note = page->findChild<QLabel *>(QStringLiteral("diffNote"));
    QTRY_VERIFY2(note->text().contains(QStringLiteral("A repair ran from this report; report")),
                 qPrintable(note->text()));
    saveShot(&w, QStringLiteral("reconciliation-keyless"));

    w.close();
    window.reset();
}

// Compare Tables: two databases' copies of a table, no pipeline between them. The dialog lists
// each endpoint's tables, says in its own words what is wrong with a table that does not exist
// (and stays open), then compares the real ones; the report joins the list with the counts an
// independent SQL count gives, and is exported like any other.
void TestReconcilePage::compareTablesListsTheDifferingRowsOfTwoDatabases()
{
    test::PgTestDb a("gui_compare_a");
    test::PgTestDb b("gui_compare_b");
    const char *orders = "CREATE TABLE orders (id bigint PRIMARY KEY, note text NOT NULL, qty int NOT NULL);"
                         "INSERT INTO orders SELECT g, 'order ' || g, g % 7 FROM generate_series(1, 300) g;";
    a.exec(orders);
    b.exec(orders);
    b.exec("DELETE FROM orders WHERE id IN (5, 6);"
           "UPDATE orders SET note = 'edited' WHERE id = 10;"
           "UPDATE orders SET qty = 99 WHERE id IN (11, 250);"
           "INSERT INTO orders VALUES (1000, 'only in b', 1);");
    // The independent count: b's rows brought into a's database as VALUES, and joined there.
    const std::string rowsOfB =
        b.scalar("SELECT string_agg(format('(%s::bigint, %L, %s)', id, note, qty), ',') FROM orders");
    const std::string expected =
        a.scalar("WITH bb(id, note, qty) AS (VALUES " + rowsOfB +
                 ") SELECT format('%s,%s,%s', count(*) FILTER (WHERE bb.id IS NULL), "
                 "count(*) FILTER (WHERE o.id IS NULL), count(*) FILTER (WHERE o.id = bb.id AND "
                 "(o.note, o.qty) IS DISTINCT FROM (bb.note, bb.qty))) FROM orders o FULL JOIN bb ON o.id = bb.id");
    QCOMPARE(expected, std::string("2,1,3"));

    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::Workspace ws;
    ws.endpoints["left"] = test::pgEndpoint("left", a.name());
    ws.endpoints["right"] = test::pgEndpoint("right", b.name());
    core::StateStore(statePath).applyWorkspace(ws);

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    auto *page = w.reconcilePage();
    auto *model = page->model();
    w.resize(1180, 720);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.pages()->setCurrentWidget(page);
    w.openWorkspace(QString::fromStdString(statePath));
    // No pipeline is needed: Reconcile Now has none to compare, Compare Tables is there.
    QTRY_VERIFY(page->compareButton()->isEnabled());
    QVERIFY(!page->reconcileButton()->isEnabled());
    QTest::mouseClick(page->compareButton(), Qt::LeftButton);
    QTRY_VERIFY(page->compareDialog() && page->compareDialog()->isVisible());
    QPointer<ui::CompareDialog> dialog = page->compareDialog();
    // Each side's tables, read from its endpoint.
    QTRY_VERIFY_WITH_TIMEOUT(dialog->leftTableCombo()->findText(QStringLiteral("public.orders")) >= 0 &&
                                 dialog->rightTableCombo()->findText(QStringLiteral("public.orders")) >= 0,
                             20000);

    // A table that is not there: said in the dialog, which stays open to correct it.
    dialog->choose(QStringLiteral("left"), QStringLiteral("public.orders"), QStringLiteral("right"),
                   QStringLiteral("public.ordres"));
    QTest::mouseClick(dialog->compareButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!w.reconcileRunner()->busy(), 30000);
    QVERIFY(dialog && dialog->isVisible());
    QVERIFY(!dialog->running());
    const QString problem = dialog->statusLabel()->text();
    QVERIFY2(problem.contains(QStringLiteral("could not be compared: the second table, public.ordres, does not exist "
                                             "on endpoint 'right'")),
             qPrintable(problem));
    saveShot(dialog.data(), QStringLiteral("dialog-compare-error"));
    // A key list with an empty name is refused before anything starts.
    dialog->keyEdit()->setText(QStringLiteral("id,,note"));
    QTest::mouseClick(dialog->compareButton(), Qt::LeftButton);
    QVERIFY(!dialog->running());
    QVERIFY2(dialog->statusLabel()->text().contains(QStringLiteral("separated by commas")),
             qPrintable(dialog->statusLabel()->text()));

    // Corrected: the comparison runs in the engine, the dialog closes, the report is listed and
    // selected.
    std::int64_t compared = 0;
    connect(w.reconcileRunner(), &ui::ReconcileRunner::reconcileFinished, this,
            [&compared](std::uint64_t, std::int64_t id, const QString &error) {
                if (error.isEmpty())
                    compared = id;
            });
    dialog->rightTableCombo()->setEditText(QStringLiteral("public.orders"));
    dialog->keyEdit()->setText(QStringLiteral("id"));
    dialog->columnsEdit()->setText(QStringLiteral("note, qty"));
    QTest::mouseClick(dialog->compareButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!dialog, 60000);
    QTRY_VERIFY_WITH_TIMEOUT(
        compared > 0 && page->selectedRow() >= 0 && model->summaryAt(page->selectedRow()).reportId == compared, 30000);
    const auto s = model->summaryAt(page->selectedRow());
    QCOMPARE(s.pipeline, std::string(core::kComparePipeline));
    QCOMPARE(s.table, std::string("left:public.orders"));
    QCOMPARE(std::to_string(s.missing) + "," + std::to_string(s.extra) + "," + std::to_string(s.different), expected);
    QCOMPARE(model->index(page->selectedRow(), ReconcileModel::Missing).data().toString(), QStringLiteral("2"));
    QTRY_VERIFY(page->shownReport() && page->shownReport()->id == s.reportId);
    QTRY_COMPARE(page->diffModel()->keyCount(), 6);
    // Exported like any other report; repaired by a script, since no pipeline writes it.
    const QString csvPath = QString::fromStdString(dir.file("compare.csv"));
    page->setExportPath(csvPath);
    QTest::mouseClick(page->exportCsvButton(), Qt::LeftButton);
    QCOMPARE(test::readFile(csvPath.toStdString()), core::reportCsv(*page->shownReport()));
    QVERIFY(!page->repairTableButton()->isEnabled());
    QVERIFY2(page->repairTableButton()->toolTip().contains(QStringLiteral("--sql FILE")),
             qPrintable(page->repairTableButton()->toolTip()));
    saveShot(&w, QStringLiteral("reconciliation-compare"));
    // The menu's way to it: Sync > Compare Tables… opens the same dialog.
    auto *action = w.findChild<QAction *>(QStringLiteral("compareTablesAction"));
    QVERIFY(action);
    action->trigger();
    QTRY_VERIFY(page->compareDialog() && page->compareDialog()->isVisible());
    page->compareDialog()->reject();
    QTRY_VERIFY(!page->compareDialog());
    w.close();
    window.reset();
}

void TestReconcilePage::missingWorkspaceFileIsNotCreated()
{
    test::TempDir dir;
    const QString path = QString::fromStdString(dir.file("typo.db"));
    MainWindow w;
    w.show();
    w.pages()->setCurrentWidget(w.reconcilePage());
    w.openWorkspace(path);
    auto *notice = w.reconcilePage()->findChild<QLabel *>(QStringLiteral("reconcileNotice"));
    QVERIFY(notice);
    QTRY_VERIFY(notice->isVisible());
    QVERIFY2(notice->text().contains(QStringLiteral("no workspace file")), qPrintable(notice->text()));
    QVERIFY(!QFileInfo::exists(path));
    QVERIFY(!w.reconcilePage()->reconcileButton()->isEnabled());
    QCOMPARE(w.reconcilePage()->model()->rowCount(), 0);
}

QTEST_MAIN(TestReconcilePage)
#include "tst_reconcilepage.moc"
