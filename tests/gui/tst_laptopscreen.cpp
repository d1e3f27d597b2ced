// Every window of the app fits the screen it opens on, with its OK, Cancel and Close buttons on
// it (issue 45): a 1366x768 laptop, the same laptop at 125% and 150% scaling (1093x614 and
// 911x512 device-independent pixels) and a 1920x1080 monitor. On the offscreen platform the four
// are screens of one process (the platform's configfile); under a real X server (Xvfb with a
// window manager) the rows are that server's screens. The window and the dialogs run on the
// recording of an agent: no server is needed. Screenshots of each at 1366x768 and at 150%.

#include "tests/support/guisupport.h"
#include "tests/support/recordeddoor.h"

#include "ui/dialogs/comparedialog.h"
#include "ui/dialogs/connectagentdialog.h"
#include "ui/dialogs/doctordialog.h"
#include "ui/dialogs/endpointdialog.h"
#include "ui/dialogs/pauseconfirmation.h"
#include "ui/dialogs/pipelineeditor.h"
#include "ui/dialogs/recoverconfirmation.h"
#include "ui/dialogs/slotguardbox.h"
#include "ui/dialogs/sshtunnelbox.h"
#include "ui/dialogs/tabledetaildialog.h"
#include "ui/enginebridge.h"
#include "ui/mainwindow.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/dashboardpage.h"
#include "ui/pages/reconcilepage.h"
#include "ui/pages/slotspage.h"
#include "ui/pages/tablespage.h"
#include "ui/pages/workspacepage.h"
#include "ui/reconcilerunner.h"
#include "ui/widgets/reconciledialog.h"
#include "ui/widgets/screenfit.h"
#include "ui/widgets/slothistorychart.h"

#include "core/engine/commands/doctor.h"

#include <QAbstractButton>
#include <QApplication>
#include <QChart>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QRadioButton>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>
#include <QValueAxis>

#include <algorithm>
#include <cstdlib>
#include <memory>

using namespace driftless;
using namespace driftless::ui;

namespace {

QScreen *screenNamed(const QString &name)
{
    for (QScreen *s : QGuiApplication::screens())
        if (s->name() == name)
            return s;
    return nullptr;
}

/// `window` and its frame fit its screen, with room for a window manager's title bar and borders.
bool fits(const QWidget *window, QString *why)
{
    const QRect area = window->screen()->availableGeometry();
    const QSize room = area.size() - screenfit::kFrameAllowance;
    if (window->width() > room.width() || window->height() > room.height() || !area.contains(window->frameGeometry())) {
        *why = QStringLiteral("%1 is %2x%3 at %4,%5 (frame %6x%7); the screen %8 has %9x%10 at %11,%12")
                   .arg(window->objectName())
                   .arg(window->width())
                   .arg(window->height())
                   .arg(window->frameGeometry().x())
                   .arg(window->frameGeometry().y())
                   .arg(window->frameGeometry().width())
                   .arg(window->frameGeometry().height())
                   .arg(window->screen()->name())
                   .arg(area.width())
                   .arg(area.height())
                   .arg(area.x())
                   .arg(area.y());
        return false;
    }
    // Nothing squeezed below what its layout needs: that would overlap its widgets.
    const QSize least = window->minimumSizeHint();
    if (least.width() > room.width() || least.height() > room.height()) {
        *why = QStringLiteral("%1 needs at least %2x%3; the screen has %4x%5")
                   .arg(window->objectName())
                   .arg(least.width())
                   .arg(least.height())
                   .arg(room.width())
                   .arg(room.height());
        return false;
    }
    return true;
}

/// Every button of the window's button boxes is shown whole inside it.
bool buttonsShown(const QWidget *window, QString *why)
{
    int shown = 0;
    for (const QDialogButtonBox *box : window->findChildren<QDialogButtonBox *>()) {
        for (const QAbstractButton *b : box->buttons()) {
            if (b->isHidden())
                continue;
            const QRect r(b->mapTo(window, QPoint(0, 0)), b->size());
            if (!b->isVisible() || !window->rect().contains(r)) {
                *why = QStringLiteral("%1's button %2 is at %3,%4 %5x%6, outside %7x%8")
                           .arg(window->objectName(), b->text())
                           .arg(r.x())
                           .arg(r.y())
                           .arg(r.width())
                           .arg(r.height())
                           .arg(window->width())
                           .arg(window->height());
                return false;
            }
            ++shown;
        }
    }
    if (shown == 0)
        *why = window->objectName() + QStringLiteral(" shows no buttons");
    return shown > 0;
}

#define VERIFY_FITS(window)                                                                                            \
    do {                                                                                                               \
        QCoreApplication::processEvents();                                                                             \
        QString why;                                                                                                   \
        QVERIFY2(fits(window, &why), qPrintable(why));                                                                 \
    } while (false)

#define VERIFY_DIALOG(window)                                                                                          \
    do {                                                                                                               \
        VERIFY_FITS(window);                                                                                           \
        QString why;                                                                                                   \
        QVERIFY2(buttonsShown(window, &why), qPrintable(why));                                                         \
    } while (false)

/// Screenshots at the laptop's own size and at 150%: the two a DBA is most likely to meet.
void shot(QWidget *window, const QString &screen, const QString &name)
{
    // Under a real X server the screen is whatever it is: its size names the shot.
    if (QGuiApplication::platformName() != QLatin1String("offscreen")) {
        const QSize size = window->screen()->geometry().size();
        test::saveShot(window, QStringLiteral("x-%1x%2-").arg(size.width()).arg(size.height()) + name);
        return;
    }
    if (screen == QLatin1String("laptop"))
        test::saveShot(window, QStringLiteral("laptop-") + name);
    else if (screen == QLatin1String("laptop150"))
        test::saveShot(window, QStringLiteral("laptop150-") + name);
}

} // namespace

class TestLaptopScreen : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useTestSettings(); }
    void everyPageAndDialogFitsTheScreen_data();
    void everyPageAndDialogFitsTheScreen();
    void thePipelineEditorRemembersItsSizeAndSplit();
};

void TestLaptopScreen::everyPageAndDialogFitsTheScreen_data()
{
    QTest::addColumn<QString>("screen");
    for (QScreen *s : QGuiApplication::screens())
        QTest::addRow("%s %dx%d", qPrintable(s->name()), s->geometry().width(), s->geometry().height()) << s->name();
}

void TestLaptopScreen::everyPageAndDialogFitsTheScreen()
{
    QFETCH(QString, screen);
    QScreen *where = screenNamed(screen);
    QVERIFY(where);
    // A size kept from another screen must not decide this one's.
    QSettings().clear();

    MainWindow w;
    w.setScreen(where);
    w.move(where->availableGeometry().topLeft());
    auto *door = new test::RecordedDoor(QStringLiteral(DRIFTLESS_RECORDING));
    const core::Finding finding{core::FindingLevel::Warn,
                                "config",
                                "shop",
                                "endpoint app",
                                "max_slot_wal_keep_size is unset: a replication slot that is not read keeps WAL until "
                                "the source's disk fills",
                                "ALTER SYSTEM SET max_slot_wal_keep_size = '10GB'; SELECT pg_reload_conf();",
                                "ALTER SYSTEM SET max_slot_wal_keep_size = '10GB';\nSELECT pg_reload_conf();"};
    door->answer("POST /api/v1/doctor", 200, core::doctorJsonValue({finding}));
    w.engine()->attachDoor(door, QStringLiteral("recorded agent"));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCOMPARE(w.screen(), where);
    QTRY_COMPARE(w.tablesModel()->rowCount(), 3);

    // The window on each page.
    for (int page = 0; page < w.pages()->count(); ++page) {
        w.pages()->setCurrentIndex(page);
        VERIFY_FITS(&w);
    }
    // The Slots page's history chart: at 150% its plot is short, and eight value labels overlaid
    // each other, cut to "...", as was the axis title (Xvfb, issue 45). Each label has its line's
    // room, and a title shown fits the plot's height (else the unit is beside each number).
    w.pages()->setCurrentWidget(w.slotsPage());
    SlotHistoryChart *history = w.slotsPage()->historyChart();
    QTRY_VERIFY(history->chart()->plotArea().height() > 0);
    QTest::qWait(50); // the axis follows the plot's last size
    auto *values = qobject_cast<QValueAxis *>(history->chart()->axes(Qt::Vertical).value(0));
    QVERIFY(values);
    const double plot = history->chart()->plotArea().height();
    const int labelHeight = QFontMetrics(values->labelsFont()).height();
    QVERIFY2(
        (values->tickCount() - 1) * labelHeight <= plot,
        qPrintable(QStringLiteral("%1 ticks of %2 px in %3 px").arg(values->tickCount()).arg(labelHeight).arg(plot)));
    if (values->isTitleVisible())
        QVERIFY2(QFontMetrics(values->titleFont()).horizontalAdvance(values->titleText()) <= plot,
                 qPrintable(QStringLiteral("'%1' in %2 px").arg(values->titleText()).arg(plot)));
    else
        QVERIFY2(values->labelFormat().endsWith(QStringLiteral(" bytes")), qPrintable(values->labelFormat()));
    // The Tables page: on every screen, 125% and 150% included, every column up to Message is in
    // view and Message has room to be read, with no sideways scrolling: at 125% and 150% the grid
    // used to scroll and Message was off the screen (issue 45). Table names give way first (elided,
    // whole in the line below the grid); strategies, states, numbers and times are never cut.
    w.pages()->setCurrentWidget(w.tablesPage());
    QTest::qWait(100); // the columns are fitted on a timer once shown
    {
        QTableView *view = w.tablesPage()->view();
        const int messageAt = view->columnViewportPosition(TablesModel::Message);
        QVERIFY2(messageAt >= 0 && messageAt + 80 <= view->viewport()->width(),
                 qPrintable(QStringLiteral("Message at %1 of %2").arg(messageAt).arg(view->viewport()->width())));
        QVERIFY2(
            view->horizontalScrollBar()->maximum() == 0,
            qPrintable(QStringLiteral("the grid scrolls %1 px sideways").arg(view->horizontalScrollBar()->maximum())));
        // Strategies, states, numbers and times are whole: each column as wide as its widest text.
        const QAbstractItemView *cells = view; // sizeHintForColumn is public there
        for (int c : {TablesModel::Strategy, TablesModel::State, TablesModel::Lag, TablesModel::Rows,
                      TablesModel::TableRows, TablesModel::LastSync})
            QVERIFY2(view->columnWidth(c) >= cells->sizeHintForColumn(c),
                     qPrintable(QStringLiteral("column %1 is %2 px of %3")
                                    .arg(c)
                                    .arg(view->columnWidth(c))
                                    .arg(cells->sizeHintForColumn(c))));
    }
    shot(&w, screen, QStringLiteral("tables"));
    {
        // A column the DBA sizes stays as sized when the window narrows; the others give way.
        QTableView *view = w.tablesPage()->view();
        view->horizontalHeader()->resizeSection(TablesModel::Table, 150);
        const QSize was = w.size();
        w.resize(was - QSize(60, 0));
        QTRY_COMPARE(w.size(), was - QSize(60, 0));
        QCOMPARE(view->columnWidth(TablesModel::Table), 150);
        w.resize(was);
        QTRY_COMPARE(w.size(), was);
    }
    if (screen == QLatin1String("laptop125") && QGuiApplication::platformName() == QLatin1String("offscreen"))
        test::saveShot(&w, QStringLiteral("laptop125-tables"));
    // A reconciliation under way: its phase and progress join the Reconciliation page's top row,
    // and in the walk of issue 45 they widened the window past the laptop's screen (1442 px),
    // Reconcile Now and the repair buttons off it, for good.
    w.pages()->setCurrentWidget(w.reconcilePage());
    QCoreApplication::processEvents();
    const QWidget *repairTable = w.reconcilePage()->findChild<QWidget *>(QStringLiteral("repairTable"));
    QVERIFY(repairTable);
    const QRect repairAt(repairTable->mapTo(&w, QPoint(0, 0)), repairTable->size());
    emit w.reconcileRunner()->jobStarted(4242, false, QString());
    emit w.reconcileRunner()->progress(4242, QStringLiteral("public.pgbench_accounts_with_a_long_name"),
                                       QStringLiteral("bisect"), 3, 4);
    VERIFY_FITS(&w);
    shot(&w, screen, QStringLiteral("reconcile-running"));
    emit w.reconcileRunner()->reconcileFinished(4242, 0, QStringLiteral("cancelled"));
    VERIFY_FITS(&w);
    // The outcome's line beside the repair buttons does not move them (in the walk Repair Table
    // went from the right edge to the middle as outcomes came and went).
    QCoreApplication::processEvents();
    QVERIFY(w.reconcilePage()->findChild<QWidget *>(QStringLiteral("repairResult"))->isVisible());
    QCOMPARE(QRect(repairTable->mapTo(&w, QPoint(0, 0)), repairTable->size()), repairAt);
    w.pages()->setCurrentWidget(w.dashboardPage());
    shot(&w, screen, QStringLiteral("dashboard"));

    // The endpoint dialog: each kind, each mode, each tab.
    WorkspacePage *page = w.workspacePage();
    w.pages()->setCurrentWidget(page);
    QTRY_VERIFY(page->workspace().endpoint("app"));
    page->selectEndpoint(QStringLiteral("app"));
    QTest::mouseClick(page->editButton(), Qt::LeftButton);
    QTRY_VERIFY(page->endpointDialog() && page->endpointDialog()->isVisible());
    EndpointDialog *d = page->endpointDialog();
    QVERIFY(QTest::qWaitForWindowExposed(d));
    VERIFY_DIALOG(d);
    shot(d, screen, QStringLiteral("endpoint-dialog"));
    d->sshTunnelBox()->setChecked(true);
    d->tabs()->setCurrentWidget(d->sshTunnelBox()->parentWidget());
    VERIFY_DIALOG(d);
    shot(d, screen, QStringLiteral("endpoint-ssh"));
    d->slotGuardBox()->setChecked(true);
    d->tabs()->setCurrentWidget(d->slotGuardBox()->parentWidget());
    VERIFY_DIALOG(d);
    shot(d, screen, QStringLiteral("endpoint-slot-guard"));
    d->tabs()->setCurrentIndex(0);
    d->dsnMode()->setChecked(true);
    VERIFY_DIALOG(d);
    d->kindBox()->setCurrentIndex(2); // MySQL / MariaDB
    d->fieldsMode()->setChecked(true);
    VERIFY_DIALOG(d);
    d->kindBox()->setCurrentIndex(1); // SQLite
    VERIFY_DIALOG(d);
    d->reject();
    QTRY_VERIFY(!page->endpointDialog());

    // A new endpoint: "Name the endpoint." goes once a name is typed, and Test Connection stays
    // where it was (in the walk of issue 45 it jumped a line up under the pointer).
    QTRY_VERIFY(page->addButton()->isEnabled());
    QTest::mouseClick(page->addButton(), Qt::LeftButton);
    QTRY_VERIFY(page->endpointDialog() && page->endpointDialog()->isVisible());
    d = page->endpointDialog();
    QVERIFY(QTest::qWaitForWindowExposed(d));
    const QLabel *problem = d->findChild<QLabel *>(QStringLiteral("endpointProblem"));
    QVERIFY(problem && problem->isVisible());
    QCoreApplication::processEvents();
    const QPoint testAt = d->testButton()->mapTo(d, QPoint(0, 0));
    QTest::keyClicks(d->nameEdit(), QStringLiteral("shop"));
    d->hostEdit()->setText(QStringLiteral("127.0.0.1"));
    QCoreApplication::processEvents();
    QVERIFY(problem->isHidden());
    QCOMPARE(d->testButton()->mapTo(d, QPoint(0, 0)), testAt);
    d->reject();
    QTRY_VERIFY(!page->endpointDialog());

    // The pipeline editor with the recorded source's tables, on each of its tabs.
    page->selectPipeline(QStringLiteral("shop"));
    QTest::mouseClick(page->editPipelineButton(), Qt::LeftButton);
    QTRY_VERIFY(page->pipelineEditor() && page->pipelineEditor()->isVisible());
    PipelineEditor *editor = page->pipelineEditor();
    QVERIFY(QTest::qWaitForWindowExposed(editor));
    QTRY_VERIFY_WITH_TIMEOUT(!editor->discovering(), 10'000);
    // On every screen the list of tables shows the recorded source's schema and its three
    // tables at once: at 150% the Table tab left it two rows (Xvfb, issue 45).
    const QTreeWidget *tree = editor->tablesTree();
    QVERIFY(tree->topLevelItemCount() > 0);
    const int rowHeight = tree->visualItemRect(tree->topLevelItem(0)).height();
    QVERIFY2(tree->viewport()->height() >= 4 * rowHeight,
             qPrintable(QStringLiteral("%1 px for rows of %2 px").arg(tree->viewport()->height()).arg(rowHeight)));
    editor->selectTable(QStringLiteral("public.customers"));
    for (int tab = 0; tab < editor->settingsTabs()->count(); ++tab) {
        editor->settingsTabs()->setCurrentIndex(tab);
        VERIFY_DIALOG(editor);
    }
    // The tables and the tabs each keep room to be used.
    QVERIFY(editor->splitter()->sizes().value(0) >= 80);
    QVERIFY(editor->splitter()->sizes().value(1) >= 120);
    editor->settingsTabs()->setCurrentIndex(0);
    shot(editor, screen, QStringLiteral("pipeline-editor"));
    editor->settingsTabs()->setCurrentWidget(editor->findChild<QWidget *>(QStringLiteral("pipelineSettingsScroll")));
    QCOMPARE(editor->settingsTabs()->currentWidget()->objectName(), QStringLiteral("pipelineSettingsScroll"));
    shot(editor, screen, QStringLiteral("pipeline-editor-settings"));
    // Tables by pattern: the patterns and the first row of table defaults show without scrolling.
    auto *patterns = editor->findChild<QScrollArea *>(QStringLiteral("patternSettingsScroll"));
    QVERIFY(patterns);
    editor->settingsTabs()->setCurrentWidget(patterns);
    QCoreApplication::processEvents();
    for (const char *name : {"includeTables", "excludeTables", "discoverEvery", "defaultStrategy"}) {
        const QWidget *field = patterns->widget()->findChild<QWidget *>(QLatin1String(name));
        QVERIFY2(field, name);
        const QRect at(field->mapTo(patterns->viewport(), QPoint(0, 0)), field->size());
        QVERIFY2(patterns->viewport()->rect().contains(at), name);
    }
    shot(editor, screen, QStringLiteral("pipeline-editor-patterns"));
    editor->reject();
    QTRY_VERIFY(!page->pipelineEditor());

    // The doctor.
    QTest::mouseClick(page->doctorPipelineButton(), Qt::LeftButton);
    QTRY_VERIFY(page->doctorDialog() && !page->doctorDialog()->checking());
    QVERIFY(QTest::qWaitForWindowExposed(page->doctorDialog()));
    VERIFY_DIALOG(page->doctorDialog());
    // The finding's column is cut at this width: the selected finding is said whole below it,
    // with its fix (the walk of issue 45 could read only "... while this sourc...").
    const QLabel *fix = page->doctorDialog()->findChild<QLabel *>(QStringLiteral("doctorFix"));
    QVERIFY(fix);
    QTRY_VERIFY2(fix->text().contains(QString::fromStdString(finding.message)) &&
                     fix->text().contains(QString::fromStdString(finding.fix)),
                 qPrintable(fix->text()));
    shot(page->doctorDialog(), screen, QStringLiteral("doctor"));
    page->doctorDialog()->close();

    // A table's detail, with its chart and events.
    w.pages()->setCurrentWidget(w.tablesPage());
    TableDetailDialog *detail = w.tablesPage()->openDetail(0);
    QVERIFY(detail);
    QVERIFY(QTest::qWaitForWindowExposed(detail));
    VERIFY_DIALOG(detail);
    shot(detail, screen, QStringLiteral("table-detail"));
    detail->close();

    // The smaller dialogs and a confirmation.
    ReconcileDialog reconcile(page->workspace(), &w);
    reconcile.show();
    QVERIFY(QTest::qWaitForWindowExposed(&reconcile));
    VERIFY_DIALOG(&reconcile);
    // Compare Tables, with an error said in it (the longest it gets).
    CompareDialog compare(w.reconcileRunner(), &w);
    compare.choose(QStringLiteral("app"), QStringLiteral("public.customers"), QStringLiteral("app"),
                   QStringLiteral("public.customers_copy"));
    compare.keyEdit()->setText(QStringLiteral("id,,region"));
    compare.start();
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    QVERIFY(compare.statusLabel()->isVisible());
    VERIFY_DIALOG(&compare);
    shot(&compare, screen, QStringLiteral("compare-dialog"));
    compare.close();
    ConnectAgentDialog agent({}, &w);
    agent.show();
    QVERIFY(QTest::qWaitForWindowExposed(&agent));
    VERIFY_DIALOG(&agent);
    QMessageBox *pause = makePauseConfirmation(&w, w.tablesModel()->report(0), true, true);
    pause->show();
    QVERIFY(QTest::qWaitForWindowExposed(pause));
    VERIFY_DIALOG(pause);
    pause->close();
    // The longest confirmation: Recover… on a pipeline whose source changed.
    QMessageBox *recover = makeRecoverConfirmation(&w, QString::fromStdString(w.tablesModel()->report(0).pipeline),
                                                   w.engine()->snapshot().workspace.get(),
                                                   w.engine()->snapshot().tables, RecoverSync::Running);
    recover->show();
    QVERIFY(QTest::qWaitForWindowExposed(recover));
    VERIFY_DIALOG(recover);
    shot(recover, screen, QStringLiteral("recover-confirmation"));
    recover->close();
}

// The size a DBA gives the editor, and the split between its tables and its tabs, are there
// again the next time; a size kept from a larger screen is cut to this one.
void TestLaptopScreen::thePipelineEditorRemembersItsSizeAndSplit()
{
    QSettings().clear();
    auto *door = new test::RecordedDoor(QStringLiteral(DRIFTLESS_RECORDING), this);
    core::Workspace ws;
    ws.endpoints["app"] = {"app", core::EndpointKind::Postgres, "host=127.0.0.1 dbname=shop_app", {}, {}, {}};
    ws.endpoints["dw"] = {"dw", core::EndpointKind::Postgres, "host=127.0.0.1 dbname=dw", {}, {}, {}};
    QSize room;
    QSize given;
    QList<int> split;
    {
        PipelineEditor editor(ws, std::nullopt, nullptr, door);
        room = screenfit::usableArea(&editor).size();
        QVERIFY(editor.width() <= room.width() && editor.height() <= room.height());
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        // Smaller than the screen, with room above the dialog's least for the split to move.
        given = (room - QSize(100, 50)).expandedTo(editor.minimumSizeHint() + QSize(0, 60)).boundedTo(room);
        editor.resize(given);
        QTRY_COMPARE(editor.size(), given);
        // A split both sides can take: the tables' list no lower than it can be.
        const int total = editor.splitter()->sizes().value(0) + editor.splitter()->sizes().value(1);
        const int top = std::max(editor.tablesTree()->minimumSizeHint().height(), total / 3);
        editor.splitter()->setSizes({top, total - top});
        split = editor.splitter()->sizes();
        editor.reject();
    }
    {
        PipelineEditor editor(ws, std::nullopt, nullptr, door);
        QCOMPARE(editor.size(), given);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        // Within the rounding of a fractional scale (150% under X: a few device pixels).
        const QList<int> again = editor.splitter()->sizes();
        QCOMPARE(again.size(), split.size());
        for (int i = 0; i < split.size(); ++i)
            QVERIFY2(std::abs(again[i] - split[i]) <= 4,
                     qPrintable(QStringLiteral("%1 vs %2").arg(again[i]).arg(split[i])));
        editor.reject();
    }
    // Kept from a 4K monitor: cut to this screen.
    QSettings().setValue(QStringLiteral("windows/pipelineEditor"), QSize(3000, 2000));
    PipelineEditor editor(ws, std::nullopt, nullptr, door);
    QCOMPARE(editor.size(), room);
}

/// The offscreen platform's four screens, unless the tests run on another platform (an X server).
int main(int argc, char **argv)
{
    const QByteArray platform = qgetenv("QT_QPA_PLATFORM");
    QTemporaryDir dir;
    if ((platform.isEmpty() || platform == "offscreen") && dir.isValid()) {
        QFile config(dir.filePath(QStringLiteral("screens.json")));
        if (config.open(QIODevice::WriteOnly)) {
            // logicalDpi over logicalBaseDpi is the scaling: 120 is 125%, 144 is 150%.
            config.write(R"({"screens": [
  {"name": "laptop", "x": 0, "y": 0, "width": 1366, "height": 768, "logicalDpi": 96, "logicalBaseDpi": 96},
  {"name": "laptop125", "x": 1366, "y": 0, "width": 1366, "height": 768, "logicalDpi": 120, "logicalBaseDpi": 96},
  {"name": "laptop150", "x": 2732, "y": 0, "width": 1366, "height": 768, "logicalDpi": 144, "logicalBaseDpi": 96},
  {"name": "fullhd", "x": 4098, "y": 0, "width": 1920, "height": 1080, "logicalDpi": 96, "logicalBaseDpi": 96}
]})");
            config.close();
            qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.fileName().toLocal8Bit());
        }
    }
    QApplication app(argc, argv);
    TestLaptopScreen t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_laptopscreen.moc"
