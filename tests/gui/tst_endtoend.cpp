// The app end to end, as a new user drives it, against the real test Postgres: from an empty
// workspace, two endpoints are added in the endpoint dialog (a login role whose password is typed
// there, and only there), a pipeline is built in the editor with one table per strategy (full
// refresh, cursor, CDC), Start runs it until every badge is ok and the target equals the source,
// a live change arrives, drift made by hand in the target is repaired by the Tables page's
// Backfill button, and Stop stops the engine. The pieces have their own tests (tst_workspacepage,
// tst_pipelineeditor, tst_backfill); this one checks they make one working loop.
// Screenshots go to $DRIFTLESS_ARTIFACTS.
#include "core/db/pgconnection.h"
#include "core/model/workspace.h"
#include "core/state/statestore.h"
#include "tests/support/guisupport.h"
#include "tests/support/testsupport.h"
#include "ui/dialogs/endpointdialog.h"
#include "ui/dialogs/pipelineeditor.h"
#include "ui/enginebridge.h"
#include "ui/enginepriority.h"
#include "ui/mainwindow.h"
#include "ui/models/endpointsmodel.h"
#include "ui/models/eventsmodel.h"
#include "ui/models/pipelinesmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/tablespage.h"
#include "ui/pages/workspacepage.h"
#include "ui/widgets/backfillprogress.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QTreeWidget>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

#include <sched.h>
#include <unistd.h>

using namespace driftless;
using driftless::test::fillPostgres;
using driftless::test::hasEvent;
using driftless::test::saveShot;
using driftless::ui::EndpointDialog;
using driftless::ui::MainWindow;
using driftless::ui::PipelineEditor;
using driftless::ui::TablesModel;

namespace {

/// Unique: replication slots are named after the pipeline, and other tests share the server.
const std::string kPipeline = test::uniqueName("e2e");

const char *kSourceSchema = R"sql(
CREATE TABLE plans (id int PRIMARY KEY, name text);
CREATE TABLE events (id bigint PRIMARY KEY, note text, updated_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX ON events (updated_at);
CREATE TABLE orders (id bigint PRIMARY KEY, name text, amount numeric(12,2));
INSERT INTO plans SELECT g, 'plan ' || g FROM generate_series(1, 20) g;
INSERT INTO events (id, note) SELECT g, 'event ' || g FROM generate_series(1, 3000) g;
INSERT INTO orders SELECT g, 'order ' || g, g * 1.25 FROM generate_series(1, 30000) g;
ANALYZE;
)sql";

const char *kPlans = "SELECT id, name FROM public.plans";
const char *kEvents = "SELECT id, note, updated_at FROM public.events";
const char *kOrders = "SELECT id, name, amount FROM public.orders";

/// A login role with its own password, owning both databases (and so allowed to publish the
/// source's tables and to create the target's). PGPASSWORD holds the superuser's password, which
/// this role does not take: a sync that works got its password from the dialog.
struct OwnerRole {
    std::string name = test::uniqueName("e2e_role");
    std::string password = "pw-" + test::uniqueName("secret");
    OwnerRole()
    {
        core::PgConnection(test::pgDsn("postgres"))
            .exec("CREATE ROLE " + name + " LOGIN REPLICATION PASSWORD '" + password + "'");
    }
    ~OwnerRole()
    {
        try {
            core::PgConnection(test::pgDsn("postgres")).exec("DROP ROLE IF EXISTS " + name);
        } catch (...) {
        }
    }
};

/// Adds an endpoint through the Workspace page's dialog, after Test Connection passes.
bool addEndpoint(ui::WorkspacePage *page, const QString &name, const std::string &db, const OwnerRole &role)
{
    // The button comes back once the previous dialog is gone.
    if (!QTest::qWaitFor([&] { return page->addButton()->isEnabled(); }, 5000))
        return false;
    QTest::mouseClick(page->addButton(), Qt::LeftButton);
    if (!QTest::qWaitFor([&] { return page->endpointDialog() && page->endpointDialog()->isVisible(); }, 5000)) {
        qWarning("the endpoint dialog did not open");
        return false;
    }
    EndpointDialog &d = *page->endpointDialog();
    fillPostgres(d, name, db, role.name);
    d.passwordEdit()->setText(QString::fromStdString(role.password));
    QSignalSpy tested(&d, &EndpointDialog::testFinished);
    QTest::mouseClick(d.testButton(), Qt::LeftButton);
    if (!tested.wait(20000) || !tested.first().first().toBool()) {
        qWarning("Test Connection failed: %s", qPrintable(d.resultLabel()->text()));
        return false;
    }
    if (name == QLatin1String("app"))
        saveShot(&d, QStringLiteral("e2e-endpoint"));
    QSignalSpy saved(page, &ui::WorkspacePage::saved);
    QTest::mouseClick(d.okButton(), Qt::LeftButton);
    if (!saved.wait(15000) || !saved.first().at(0).toBool()) {
        qWarning("not saved: %s / %s", qPrintable(d.problem()),
                 saved.isEmpty() ? "no answer" : qPrintable(saved.first().at(1).toString()));
        return false;
    }
    return true;
}

void choose(QComboBox *box, core::Strategy s)
{
    box->setCurrentIndex(box->findData(static_cast<int>(s)));
}

const core::TableReport *reportOf(const TablesModel *model, const char *table)
{
    const int row = model->rowOf(QString::fromStdString(kPipeline), QString::fromLatin1(table));
    return row < 0 ? nullptr : &model->report(row);
}

/// Done with its pass (or streaming), nothing being copied, and fresh.
bool fresh(const TablesModel *model, const char *table)
{
    const auto *r = reportOf(model, table);
    return r && (r->state == core::TableState::Ok || r->state == core::TableState::Streaming) && !r->backfill &&
           r->freshness == core::Freshness::Ok && !TablesModel::isRebackfill(*r);
}

QString says(const TablesModel *model, const char *table)
{
    const auto *r = reportOf(model, table);
    return r ? QString::fromStdString(std::string(toString(r->state)) + " / " + std::string(toString(r->freshness)) +
                                      ": " + r->message)
             : QStringLiteral("(no row)");
}

/// Each of this process's threads' scheduling, by thread id (Linux /proc).
struct ThreadSched {
    int nice = 0;
    int policy = 0; ///< SCHED_OTHER 0, SCHED_IDLE 5
};
std::map<long, ThreadSched> threadScheduling()
{
    std::map<long, ThreadSched> out;
    QDir tasks(QStringLiteral("/proc/self/task"));
    for (const QString &tid : tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile stat(tasks.filePath(tid) + QStringLiteral("/stat"));
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray line = stat.readAll();
        // Fields after the command name (which may hold spaces) are space-separated; nice is
        // field 19 and policy field 41, the 17th and 39th after the ')'.
        const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
        if (fields.size() > 38)
            out[tid.toLong()] = {fields[16].toInt(), fields[38].toInt()};
    }
    return out;
}

bool equal(test::PgTestDb &src, test::PgTestDb &dst, const char *select)
{
    auto s = src.connect();
    auto d = dst.connect();
    return test::pgHash(s, select, "id") == test::pgHash(d, select, "id");
}

} // namespace

class TestEndToEnd : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        test::useTestSettings();
        // As the app's main() does when a desktop launches it (it fails, and the engine runs at
        // nice +10, where this process leads its process group).
        const std::string session = ui::claimOwnSchedulingGroup(true);
        qInfo("%s; engine threads: %s", session.c_str(), ui::toString(ui::chooseEnginePriority()));
    }
    void fromAnEmptyWorkspaceToAStreamingRepairedSync();
};

void TestEndToEnd::fromAnEmptyWorkspaceToAStreamingRepairedSync()
{
    OwnerRole role; // outlives the databases it owns
    test::PgTestDb src("gui_e2e_src");
    test::PgTestDb dst("gui_e2e_dst");
    src.exec(kSourceSchema);
    src.exec("ALTER DATABASE " + src.name() + " OWNER TO " + role.name);
    src.exec("ALTER TABLE plans OWNER TO " + role.name + "; ALTER TABLE events OWNER TO " + role.name +
             "; ALTER TABLE orders OWNER TO " + role.name);
    dst.exec("ALTER DATABASE " + dst.name() + " OWNER TO " + role.name);
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::StateStore(statePath).applyWorkspace({});

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    w.resize(1280, 620);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto *workspace = w.workspacePage();
    w.pages()->setCurrentWidget(workspace);
    w.openWorkspace(QString::fromStdString(statePath));
    QTRY_VERIFY(workspace->addButton()->isEnabled());

    // 1. Two endpoints, each tested before it is saved.
    QVERIFY(addEndpoint(workspace, QStringLiteral("app"), src.name(), role));
    QTRY_VERIFY(!workspace->endpointDialog()); // the closed dialog is gone before the next
    QVERIFY(addEndpoint(workspace, QStringLiteral("dw"), dst.name(), role));
    QTRY_COMPARE(workspace->endpointsModel()->rowCount(), 2);

    // 2. A pipeline with one table per strategy.
    QTRY_VERIFY(workspace->addPipelineButton()->isEnabled());
    QTest::mouseClick(workspace->addPipelineButton(), Qt::LeftButton);
    QTRY_VERIFY(workspace->pipelineEditor() && workspace->pipelineEditor()->isVisible());
    PipelineEditor *editor = workspace->pipelineEditor();
    editor->sourceBox()->setCurrentIndex(editor->sourceBox()->findData(QStringLiteral("app")));
    QTRY_VERIFY_WITH_TIMEOUT(!editor->discovering() && editor->tableItem(QStringLiteral("public.orders")), 30000);
    editor->targetBox()->setCurrentIndex(editor->targetBox()->findData(QStringLiteral("dw")));
    editor->nameEdit()->setText(QString::fromStdString(kPipeline));
    for (const char *t : {"public.plans", "public.events", "public.orders"})
        editor->setIncluded(QString::fromLatin1(t), true);
    choose(editor->strategyBox(QStringLiteral("public.plans")), core::Strategy::FullRefresh);
    choose(editor->strategyBox(QStringLiteral("public.events")), core::Strategy::Cursor);
    choose(editor->strategyBox(QStringLiteral("public.orders")), core::Strategy::Cdc);
    editor->selectTable(QStringLiteral("public.events"));
    QCOMPARE(editor->cursorBox()->currentText(), QStringLiteral("updated_at"));
    QVERIFY2(editor->okButton()->isEnabled(), qPrintable(editor->problem()));
    editor->resize(1180, 600);
    saveShot(editor, QStringLiteral("e2e-pipeline-editor"));
    QSignalSpy saved(workspace, &ui::WorkspacePage::saved);
    QTest::mouseClick(editor->okButton(), Qt::LeftButton);
    QVERIFY(saved.wait(15000));
    QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(1).toString()));
    const auto stored = core::StateStore(statePath).loadWorkspace();
    QVERIFY(stored.pipeline(kPipeline));
    QCOMPARE(stored.pipeline(kPipeline)->tables.size(), size_t(3));
    QVERIFY(stored.endpoint("app")->dsn.find("password") == std::string::npos);

    // 3. Start: every table loads, its badge turns ok, and the target equals the source.
    auto *model = w.tablesModel();
    auto *tables = w.tablesPage();
    w.pages()->setCurrentWidget(tables);
    QTRY_COMPARE(model->rowCount(), 3);
    QVERIFY(w.startAction()->isEnabled());
    w.startAction()->trigger();
    for (const char *t : {"public.plans", "public.events", "public.orders"})
        QTRY_VERIFY2_WITH_TIMEOUT(fresh(model, t), qPrintable(QString::fromLatin1(t) + ": " + says(model, t)), 60000);
    QCOMPARE(std::string(toString(reportOf(model, "public.orders")->strategy)), std::string("cdc"));
    // The engine's threads give way to the UI thread, which keeps the window responsive: at
    // SCHED_IDLE where the app has a scheduling group of its own (initTestCase started a
    // session, as the app does when a desktop launches it; with the kernel's autogroup that is
    // a group), else at nice +10.
    const auto sched = threadScheduling();
    QCOMPARE(sched.at(static_cast<long>(::getpid())).nice, 0);
    QCOMPARE(sched.at(static_cast<long>(::getpid())).policy, SCHED_OTHER);
    const bool idle = ui::chooseEnginePriority() == ui::EnginePriority::Idle;
    const auto yielding = std::count_if(sched.begin(), sched.end(), [&](const auto &t) {
        return idle ? t.second.policy == SCHED_IDLE : t.second.nice == ui::kEngineNice;
    });
    QVERIFY2(yielding >= 2, qPrintable(QStringLiteral("%1 engine threads at %2")
                                           .arg(yielding)
                                           .arg(QString::fromLatin1(ui::toString(ui::chooseEnginePriority())))));
    QVERIFY(equal(src, dst, kPlans));
    QVERIFY(equal(src, dst, kEvents));
    QTRY_VERIFY_WITH_TIMEOUT(equal(src, dst, kOrders), 30000);

    // 4. Live: a change to the CDC table and one to the cursor table arrive without a click.
    src.exec("INSERT INTO orders VALUES (30001, 'fresh order', 9.99); UPDATE orders SET amount = 0 WHERE id = 7;"
             "DELETE FROM orders WHERE id = 8; UPDATE events SET note = 'edited', updated_at = now() WHERE id = 42");
    QTRY_VERIFY_WITH_TIMEOUT(equal(src, dst, kOrders), 30000);
    QTRY_VERIFY_WITH_TIMEOUT(dst.scalar("SELECT note FROM public.events WHERE id = 42") == "edited", 60000);

    // 5. Drift made by hand in the target: Backfill repairs it through the merge.
    dst.exec(
        "UPDATE public.orders SET name = 'drifted' WHERE id % 100 = 0; DELETE FROM public.orders WHERE id % 97 = 0;"
        "INSERT INTO public.orders (id, name, amount, _driftless_version) "
        "SELECT g, 'ghost', 0, 0 FROM generate_series(900001, 900050) g");
    QVERIFY(!equal(src, dst, kOrders));
    tables->selectTable(QString::fromStdString(kPipeline), QStringLiteral("public.orders"));
    QTRY_VERIFY(tables->backfillButton()->isEnabled());
    QTest::mouseClick(tables->backfillButton(), Qt::LeftButton);
    QTRY_VERIFY(tables->confirmation() && tables->confirmation()->isVisible());
    auto *confirm = tables->confirmation()->findChild<QPushButton *>(QStringLiteral("confirmBackfill"));
    QVERIFY(confirm);
    confirm->click();
    QTRY_VERIFY_WITH_TIMEOUT(TablesModel::isRebackfill(*reportOf(model, "public.orders")) || equal(src, dst, kOrders),
                             60000);
    QTRY_VERIFY2_WITH_TIMEOUT(fresh(model, "public.orders") && equal(src, dst, kOrders),
                              qPrintable(says(model, "public.orders")), 60000);
    QCOMPARE(dst.scalar("SELECT count(*) FROM public.orders WHERE name IN ('ghost', 'drifted')"), std::string("0"));
    // The copy ran to its end: the log says so, and the row's bar is full and says done.
    QTRY_VERIFY(hasEvent(w.eventsModel(), "rebackfill", "re-backfill done"));
    const QModelIndex progress = model->index(
        model->rowOf(QString::fromStdString(kPipeline), QStringLiteral("public.orders")), TablesModel::Progress);
    QTRY_VERIFY(progress.data(TablesModel::BackfillDoneRole).toBool());
    const auto bar = tables->progressDelegate()->barFor(progress);
    QVERIFY(bar);
    QCOMPARE(bar->progress, 100);
    QVERIFY2(bar->text.contains(QStringLiteral("done")), qPrintable(bar->text));
    QVERIFY(!TablesModel::isRebackfill(*reportOf(model, "public.orders")));
    for (const char *t : {"public.plans", "public.events", "public.orders"})
        QVERIFY2(fresh(model, t), qPrintable(QString::fromLatin1(t) + ": " + says(model, t)));
    saveShot(&w, QStringLiteral("e2e-tables"));

    // 6. Stop.
    QVERIFY(w.stopAction()->isEnabled());
    w.stopAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(w.engine()->state(), ui::EngineBridge::State::Stopped, 30000);
    w.close();
    window.reset();
}

QTEST_MAIN(TestEndToEnd)
#include "tst_endtoend.moc"
