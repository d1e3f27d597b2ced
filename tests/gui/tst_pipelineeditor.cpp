// The pipeline editor against the real test Postgres: it discovers the source's tables off the UI
// thread, presets each table's strategy to core::recommendStrategy()'s choice with the reason
// beside it, disables the strategies it refuses (with why), and OK stores exactly the pipeline
// the fields describe through the Workspace page; export then import gives it back. Editing keeps
// the pipeline's tables with their settings. With a MariaDB source it lists the database's tables
// (database.table, case kept) with keys and cursor candidates from information_schema, refuses
// CDC with the GRANT to run when the user may not read the binlog, and stores a pipeline the
// loader takes. The Columns panel maps a table's columns (include, rename, mask), its filter,
// deletes policy and target table; the saved pipeline, its YAML and `driftless-cli apply` agree,
// a mapping imported from YAML comes back unchanged, and what core refuses (a masked key) is
// refused with core's message. The Patterns tab sets include_tables, exclude_tables,
// discover_every and table_defaults, refuses what the loader refuses, and saves a pipeline equal
// to the same keys written by hand; tables the patterns picked up stay picked up (half-ticked,
// never listed) through an editor save, and the Tables page marks them. Screenshots go to
// $DRIFTLESS_ARTIFACTS.

#include "ui/dialogs/conflictpolicypicker.h"
#include "ui/dialogs/patternsettingspanel.h"
#include "ui/dialogs/pipelineeditor.h"
#include "ui/dialogs/tablesettingspanel.h"
#include "ui/mainwindow.h"
#include "ui/models/endpointsmodel.h"
#include "ui/models/pipelinesmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/tablespage.h"
#include "ui/pages/workspacepage.h"
#include "ui/widgets/columnmappingpanel.h"

#include "core/config/workspacefile.h"
#include "core/db/pgcatalog.h"
#include "core/engine/endpoints/tablediscovery.h"
#include "core/engine/rows/columnmapping.h"
#include "core/model/conflictpolicy.h"
#include "core/model/error.h"
#include "core/model/workspace.h"
#include "core/state/statestore.h"
#include "tests/support/guisupport.h"
#include "tests/support/mysqltestdb.h"
#include "tests/support/testsupport.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTest>
#include <QTreeWidget>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

using namespace driftless;
using driftless::test::saveShot;
using driftless::ui::ColumnMappingPanel;
using driftless::ui::MainWindow;
using driftless::ui::PipelineEditor;
using namespace std::chrono_literals;

namespace {

// One table per rule of recommendStrategy(), as in tst_tablediscovery.
const char *kSchema = R"sql(
CREATE TABLE plans (id int PRIMARY KEY, name text, updated_at timestamptz);
INSERT INTO plans SELECT g, 'plan ' || g, now() FROM generate_series(1, 20) g;
CREATE TABLE nokey (name text, created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO nokey SELECT 'row ' || g FROM generate_series(1, 50) g;
CREATE TABLE counters (id int PRIMARY KEY, n bigint NOT NULL);
INSERT INTO counters SELECT g, 0 FROM generate_series(1, 2000) g;
CREATE TABLE orders (id int PRIMARY KEY, total numeric, updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO orders SELECT g, g FROM generate_series(1, 5000) g;
CREATE TABLE events (id bigint PRIMARY KEY, created_at date, "Updated At" timestamptz NOT NULL DEFAULT now(),
                     payload text);
CREATE INDEX ON events ("Updated At");
INSERT INTO events SELECT g, current_date, now(), 'e' FROM generate_series(1, 3000) g;
CREATE SCHEMA billing;
CREATE TABLE billing.invoices (id int PRIMARY KEY, issued_at timestamptz NOT NULL);
)sql";

const char *kWrites = R"sql(
UPDATE counters SET n = n + 1; UPDATE counters SET n = n + 1; UPDATE counters SET n = n + 1;
UPDATE orders SET total = total + 1 WHERE id <= 2000;
DELETE FROM orders WHERE id > 4000;
UPDATE events SET payload = 'f'; UPDATE events SET payload = 'g';
ANALYZE;
)sql";

/// pg_stat_user_tables is flushed by the writing backend shortly after it ends: wait for it, so
/// the editor sees the same counters.
bool waitForStats(const test::PgTestDb &db)
{
    auto conn = db.connect();
    for (int i = 0; i < 100; ++i) {
        int seen = 0;
        for (const auto &t : core::discoverTables(conn))
            if ((t.table.name == "orders" && t.deletes == 1000) || (t.table.name == "events" && t.updates == 6000))
                ++seen;
        if (seen == 2)
            return true;
        std::this_thread::sleep_for(100ms);
        conn.exec("SELECT pg_stat_clear_snapshot()");
    }
    return false;
}

core::TableSpec spec(const std::string &name, core::Strategy strategy = core::Strategy::FullRefresh)
{
    core::TableSpec t;
    t.table = {"public", name};
    t.strategy = strategy;
    return t;
}

core::Strategy chosen(QComboBox *box)
{
    return static_cast<core::Strategy>(box->currentData().toInt());
}

/// Whether the combo's entry for `s` can be picked, and its tooltip.
std::pair<bool, QString> entry(QComboBox *box, core::Strategy s)
{
    auto *items = qobject_cast<QStandardItemModel *>(box->model());
    QStandardItem *item = items->item(box->findData(static_cast<int>(s)));
    return {item->isEnabled(), item->toolTip()};
}

PipelineEditor *openEditor(ui::WorkspacePage *page, QPushButton *button)
{
    QTest::mouseClick(button, Qt::LeftButton);
    if (!QTest::qWaitFor([&] { return page->pipelineEditor() && page->pipelineEditor()->isVisible(); }, 5000))
        return nullptr;
    PipelineEditor *editor = page->pipelineEditor();
    if (!QTest::qWaitFor([&] { return !editor->discovering(); }, 30000))
        return nullptr;
    return editor;
}

QString readText(const QString &path)
{
    std::ifstream in(path.toStdString());
    std::stringstream ss;
    ss << in.rdbuf();
    return QString::fromStdString(ss.str());
}

const core::TableSpec &tableOf(const core::PipelineSpec &p, const std::string &name)
{
    for (const auto &t : p.tables)
        if (t.table.display() == name)
            return t;
    throw std::runtime_error("no table " + name);
}

void pick(QComboBox *box, const QVariant &data)
{
    QVERIFY(box);
    const int i = box->findData(data);
    QVERIFY(i >= 0);
    box->setCurrentIndex(i);
}

/// Runs a helper that checks with QVERIFY/QCOMPARE, and ends the case when a check failed.
#define STEP(call)                                                                                                     \
    do {                                                                                                               \
        call;                                                                                                          \
        if (QTest::currentTestFailed())                                                                                \
            return;                                                                                                    \
    } while (false)

/// What every case sets up and does the same way: a folder holding a workspace file with
/// `original` (its endpoints, filled in by the case), the window on it at the Workspace page, the
/// page's saved() outcomes, and the editor opened and confirmed through the page's own buttons.
struct Bench {
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    core::Workspace original;
    MainWindow w;
    ui::WorkspacePage *page = w.workspacePage();
    QSignalSpy saved{page, &ui::WorkspacePage::saved};

    /// Shows the window and opens the workspace file.
    void show()
    {
        w.resize(1180, 620);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.openWorkspace(QString::fromStdString(statePath));
    }
    /// Stores `original`, then shows it on the Workspace page; done when the page lists its
    /// endpoints.
    void open()
    {
        core::StateStore(statePath).applyWorkspace(original);
        w.pages()->setCurrentWidget(page);
        show();
        QTRY_COMPARE(page->endpointsModel()->rowCount(), static_cast<int>(original.endpoints.size()));
    }
    /// Add Pipeline… with `source` chosen, once the editor lists `table`; null if it never does.
    PipelineEditor *addPipeline(const QString &source, const QString &table)
    {
        if (!QTest::qWaitFor([&] { return page->addPipelineButton()->isEnabled(); }, 5000))
            return nullptr;
        PipelineEditor *editor = openEditor(page, page->addPipelineButton());
        if (!editor)
            return nullptr;
        editor->sourceBox()->setCurrentIndex(editor->sourceBox()->findData(source));
        return QTest::qWaitFor([&] { return !editor->discovering() && editor->tableItem(table); }, 30000) ? editor
                                                                                                          : nullptr;
    }
    /// Edit Pipeline… on `name` once the page shows `shown` (a snapshot taken before the last
    /// save or import may still arrive) and is idle; null if it never opens.
    PipelineEditor *editPipeline(const QString &name, const core::Workspace &shown)
    {
        if (!QTest::qWaitFor([&] { return page->workspace() == shown && page->addPipelineButton()->isEnabled(); },
                             15000))
            return nullptr;
        page->selectPipeline(name);
        if (!QTest::qWaitFor([&] { return page->editPipelineButton()->isEnabled(); }, 5000))
            return nullptr;
        return openEditor(page, page->editPipelineButton());
    }
    /// OK on `editor`: the page stores the pipeline, and says so.
    void ok(PipelineEditor *editor)
    {
        saved.clear();
        QTest::mouseClick(editor->okButton(), Qt::LeftButton);
        QVERIFY(saved.wait(15000));
        QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(1).toString()));
    }
    /// Import YAML… of `path`: the page applies it, and says so.
    void importYaml(const QString &path)
    {
        saved.clear();
        page->importFile(path);
        QVERIFY(saved.wait(15000));
        QVERIFY2(saved.first().at(0).toBool(), qPrintable(saved.first().at(1).toString()));
    }
    core::Workspace stored() const { return core::StateStore(statePath).loadWorkspace(); }
    /// `original` with `pipelines`.
    core::Workspace with(std::vector<core::PipelineSpec> pipelines) const
    {
        core::Workspace ws = original;
        ws.pipelines = std::move(pipelines);
        return ws;
    }
    QString path(const char *name) const { return QString::fromStdString(dir.file(name)); }
};

} // namespace

class TestPipelineEditor : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useTestSettings(); }
    void editorRecommendsStrategiesAndStoresThePipeline();
    void mysqlSourceListsItsTablesAndRefusesCdcWithoutTheGrant();
    void columnGridMapsTheTableAndRoundTripsTheYaml();
    void bothWaysMakesEveryTableStreamAndRoundTrips();
    void bothWaysSetsEachTablesConflictPolicyAndRoundTripsTheYaml();
    void patternKeysSetOnThePatternsTabEqualTheSameKeysWrittenByHand();
    void pickedUpTablesStayPickedUpThroughAnEditorSave();
};

void TestPipelineEditor::editorRecommendsStrategiesAndStoresThePipeline()
{
    test::PgTestDb src("gui_pe_src");
    test::PgTestDb dst("gui_pe_dst");
    src.exec(kSchema);
    src.exec(kWrites);
    QVERIFY(waitForStats(src));
    Bench bench;
    bench.original.endpoints["src"] = test::pgEndpoint("src", src.name());
    bench.original.endpoints["dw"] = test::pgEndpoint("dw", dst.name());
    bench.original.endpoints["lite"] = test::sqliteEndpoint("lite", bench.dir.file("replica.db"));

    STEP(bench.open());
    auto *page = bench.page;
    QVERIFY(page->addPipelineButton()->isEnabled());
    QVERIFY(!page->editPipelineButton()->isEnabled()); // nothing selected

    PipelineEditor *editor = bench.addPipeline(QStringLiteral("src"), QStringLiteral("public.orders"));
    QVERIFY(editor);
    QCOMPARE(editor->sourceBox()->count(), 2); // the Postgres endpoints only
    QVERIFY2(editor->discoveryLabel()->text().startsWith(QStringLiteral("6 tables in 2 schemas on src")),
             qPrintable(editor->discoveryLabel()->text()));
    QCOMPARE(editor->targetBox()->findData(QStringLiteral("src")), -1); // never its own target

    // Grouped by schema, with size, key and cursor candidates.
    QTreeWidget *tree = editor->tablesTree();
    QCOMPARE(tree->topLevelItemCount(), 2);
    QCOMPARE(tree->topLevelItem(0)->text(PipelineEditor::Table), QStringLiteral("billing"));
    QCOMPARE(tree->topLevelItem(1)->childCount(), 5);
    QTreeWidgetItem *orders = editor->tableItem(QStringLiteral("public.orders"));
    QCOMPARE(orders->parent(), tree->topLevelItem(1));
    QCOMPARE(orders->text(PipelineEditor::Rows), QLocale().toString(4000));
    QCOMPARE(orders->text(PipelineEditor::PrimaryKey), QStringLiteral("id"));
    QCOMPARE(orders->text(PipelineEditor::Candidates), QStringLiteral("updated_at"));
    QVERIFY(!orders->text(PipelineEditor::Size).isEmpty());
    QCOMPARE(editor->tableItem(QStringLiteral("public.events"))->text(PipelineEditor::Candidates),
             QStringLiteral("\"Updated At\", created_at"));
    QCOMPARE(editor->tableItem(QStringLiteral("public.nokey"))->text(PipelineEditor::PrimaryKey),
             QStringLiteral("none"));

    // Each table preset to the recommendation, its reason beside it; nothing included yet.
    const auto noKey = QStringLiteral("Refused: no primary key: cursor sync and CDC merge rows by key");
    struct Expect {
        QString table;
        core::Strategy strategy;
        QString reasonPart;
    };
    for (const Expect &e :
         {Expect{QStringLiteral("public.plans"), core::Strategy::FullRefresh, QStringLiteral("small")},
          Expect{QStringLiteral("public.nokey"), core::Strategy::FullRefresh, QStringLiteral("primary key")},
          Expect{QStringLiteral("public.counters"), core::Strategy::Cdc, QString()},
          Expect{QStringLiteral("public.orders"), core::Strategy::Cdc, QStringLiteral("1000 deletes")},
          Expect{QStringLiteral("public.events"), core::Strategy::Cursor, QString()}}) {
        QComboBox *box = editor->strategyBox(e.table);
        QVERIFY2(box, qPrintable(e.table));
        const auto rec = editor->recommendation(e.table);
        QVERIFY(rec);
        QVERIFY2(rec->strategy == e.strategy, qPrintable(e.table));
        QVERIFY2(chosen(box) == e.strategy, qPrintable(e.table));
        QVERIFY(!box->isEnabled());
        QCOMPARE(editor->tableItem(e.table)->checkState(PipelineEditor::Table), Qt::Unchecked);
        const QString why = editor->tableItem(e.table)->text(PipelineEditor::Reason);
        QCOMPARE(why, QString::fromStdString(rec->reason));
        QCOMPARE(editor->tableItem(e.table)->toolTip(PipelineEditor::Reason), why);
        QVERIFY2(why.contains(e.reasonPart), qPrintable(why));
    }
    // Refused strategies are disabled, with why.
    QComboBox *nokey = editor->strategyBox(QStringLiteral("public.nokey"));
    QCOMPARE(entry(nokey, core::Strategy::Cursor), std::make_pair(false, noKey));
    QCOMPARE(entry(nokey, core::Strategy::Cdc), std::make_pair(false, noKey));
    QVERIFY(entry(nokey, core::Strategy::FullRefresh).first);
    QComboBox *counters = editor->strategyBox(QStringLiteral("public.counters"));
    QCOMPARE(entry(counters, core::Strategy::Cursor),
             std::make_pair(false, QStringLiteral("Refused: no timestamp or date column for a cursor to follow")));
    QVERIFY(entry(counters, core::Strategy::Cdc).first);
    QVERIFY(entry(counters, core::Strategy::FullRefresh).first);
    QComboBox *ordersBox = editor->strategyBox(QStringLiteral("public.orders"));
    QVERIFY(entry(ordersBox, core::Strategy::Cursor).first);

    // The name follows core's rule, which the dialog shows.
    QVERIFY(editor->nameRule()->text().contains(QStringLiteral("at most 53 characters")));
    QVERIFY(!editor->okButton()->isEnabled());
    editor->nameEdit()->setText(QStringLiteral("App-DW"));
    QVERIFY(!editor->okButton()->isEnabled());
    QVERIFY2(editor->problem().contains(QStringLiteral("not a pipeline name")), qPrintable(editor->problem()));
    editor->nameEdit()->setText(QStringLiteral("app_to_dw"));
    QVERIFY2(editor->problem().contains(QStringLiteral("Include at least one table")), qPrintable(editor->problem()));

    // SQLite targets have no schema; Postgres ones may.
    editor->targetBox()->setCurrentIndex(editor->targetBox()->findData(QStringLiteral("lite")));
    QVERIFY(!editor->targetSchemaEdit()->isEnabled());
    editor->targetBox()->setCurrentIndex(editor->targetBox()->findData(QStringLiteral("dw")));
    QVERIFY(editor->targetSchemaEdit()->isEnabled());
    editor->targetSchemaEdit()->setText(QStringLiteral("model"));

    // Include four tables; orders goes by cursor instead, events along its date column.
    for (const char *t : {"public.plans", "public.orders", "public.events", "public.nokey"})
        editor->setIncluded(QString::fromLatin1(t), true);
    QVERIFY(ordersBox->isEnabled());
    QVERIFY(!counters->isEnabled());
    ordersBox->setCurrentIndex(ordersBox->findData(static_cast<int>(core::Strategy::Cursor)));
    QVERIFY(orders->text(PipelineEditor::Reason).startsWith(QStringLiteral("recommended: CDC")));
    editor->selectTable(QStringLiteral("public.orders"));
    QVERIFY(editor->cursorBox()->isEnabled());
    QCOMPARE(editor->cursorBox()->currentText(), QStringLiteral("updated_at"));
    editor->lookbackEdit()->setText(QStringLiteral("2m"));
    // A key declared on the Table tab shows in the table's row, marked; cleared, its own again.
    editor->tableSettings()->keyEdit()->setText(QStringLiteral("id, updated_at"));
    QCOMPARE(orders->text(PipelineEditor::PrimaryKey), QStringLiteral("id, updated_at (declared)"));
    QVERIFY(orders->toolTip(PipelineEditor::PrimaryKey).contains(QStringLiteral("own key: id")));
    editor->tableSettings()->keyEdit()->clear();
    QCOMPARE(orders->text(PipelineEditor::PrimaryKey), QStringLiteral("id"));

    editor->selectTable(QStringLiteral("public.events"));
    QVERIFY(editor->selectedLabel()->text().startsWith(QStringLiteral("public.events, synced by cursor")));
    QCOMPARE(editor->cursorBox()->count(), 2);
    QCOMPARE(editor->cursorBox()->currentText(), QStringLiteral("Updated At"));
    editor->cursorBox()->setCurrentIndex(editor->cursorBox()->findText(QStringLiteral("created_at")));
    editor->lookbackEdit()->setText(QStringLiteral("1d"));
    editor->slaEdit()->setText(QStringLiteral("nonsense"));
    QVERIFY(!editor->okButton()->isEnabled());
    QVERIFY2(editor->problem().contains(QStringLiteral("not a duration")), qPrintable(editor->problem()));
    editor->slaEdit()->setText(QStringLiteral("2h"));

    editor->selectTable(QStringLiteral("public.nokey")); // full refresh: no cursor, no lookback
    QVERIFY(!editor->cursorBox()->isEnabled());
    QVERIFY(!editor->lookbackEdit()->isEnabled());
    QVERIFY(editor->slaEdit()->isEnabled());
    editor->selectTable(QStringLiteral("public.events"));
    QVERIFY2(editor->okButton()->isEnabled(), qPrintable(editor->problem()));
    QCOMPARE(editor->slaEdit()->text(), QStringLiteral("2h"));

    core::PipelineSpec expected;
    expected.name = "app_to_dw";
    expected.source = "src";
    expected.target = "dw";
    expected.targetSchema = "model";
    core::TableSpec plans = spec("plans");
    core::TableSpec ordersSpec = spec("orders", core::Strategy::Cursor);
    ordersSpec.cursor = "updated_at";
    ordersSpec.lookback = "2m";
    core::TableSpec events = spec("events", core::Strategy::Cursor);
    events.cursor = "created_at";
    events.lookback = "1d";
    events.freshnessSla = 2h;
    core::TableSpec nokeySpec = spec("nokey");
    expected.tables = {plans, ordersSpec, events, nokeySpec};
    QCOMPARE(editor->pipeline(), expected);

    editor->resize(1180, 600);
    saveShot(editor, QStringLiteral("pipeline-editor"));

    STEP(bench.ok(editor));
    QVERIFY2(bench.saved.first().at(1).toString().startsWith(QStringLiteral("Added pipeline app_to_dw")),
             qPrintable(bench.saved.first().at(1).toString()));
    core::Workspace withPipeline = bench.with({expected});
    QCOMPARE(bench.stored(), withPipeline);
    QCOMPARE(page->pipelinesModel()->rowCount(), 1);
    QCOMPARE(page->pipelinesModel()->index(0, ui::PipelinesModel::Strategies).data().toString(),
             QStringLiteral("2 full refresh, 2 cursor"));

    // The page's YAML round-trips it.
    const QString yamlPath = bench.path("exported.yaml");
    QVERIFY(page->exportFile(yamlPath));
    QCOMPARE(core::WorkspaceFile::load(yamlPath.toStdString()), withPipeline);
    core::StateStore(bench.statePath).applyWorkspace(bench.original);
    QTRY_COMPARE_WITH_TIMEOUT(page->pipelinesModel()->rowCount(), 0, 15000);
    STEP(bench.importYaml(yamlPath));
    QCOMPARE(bench.stored(), withPipeline);

    // Editing (a double-click on the row) keeps the tables with their settings, a table the
    // source no longer has included.
    src.exec("DROP TABLE nokey");
    QTRY_COMPARE(page->pipelinesModel()->rowCount(), 1);
    QTRY_VERIFY(page->addPipelineButton()->isEnabled());
    page->selectPipeline(QStringLiteral("app_to_dw"));
    QVERIFY(page->editPipelineButton()->isEnabled());
    QTableView *view = page->pipelinesView();
    const QRect cell = view->visualRect(page->pipelinesModel()->index(0, 0));
    // The view emits doubleClicked() for the row the press landed on.
    QTest::mousePress(view->viewport(), Qt::LeftButton, {}, cell.center());
    QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, cell.center());
    QTRY_VERIFY(page->pipelineEditor() && page->pipelineEditor()->isVisible());
    editor = page->pipelineEditor();
    QTRY_VERIFY_WITH_TIMEOUT(!editor->discovering(), 30000);
    QCOMPARE(editor->nameEdit()->text(), QStringLiteral("app_to_dw"));
    QCOMPARE(editor->targetSchemaEdit()->text(), QStringLiteral("model"));
    QCOMPARE(editor->pipeline(), expected);
    QCOMPARE(editor->tableItem(QStringLiteral("public.events"))->checkState(PipelineEditor::Table), Qt::Checked);
    QCOMPARE(editor->tableItem(QStringLiteral("public.counters"))->checkState(PipelineEditor::Table), Qt::Unchecked);
    QVERIFY(chosen(editor->strategyBox(QStringLiteral("public.orders"))) == core::Strategy::Cursor);
    QVERIFY(editor->tableItem(QStringLiteral("public.nokey"))
                ->text(PipelineEditor::Reason)
                .contains(QStringLiteral("not found")));
    QVERIFY(editor->discoveryLabel()->text().contains(QStringLiteral("1 table of the pipeline not found")));
    QVERIFY2(editor->okButton()->isEnabled(), qPrintable(editor->problem()));

    // Leave nokey out, add counters by CDC: saved in place.
    editor->setIncluded(QStringLiteral("public.nokey"), false);
    editor->setIncluded(QStringLiteral("public.counters"), true);
    expected.tables = {plans, ordersSpec, events, spec("counters", core::Strategy::Cdc)};
    QCOMPARE(editor->pipeline(), expected);
    STEP(bench.ok(editor));
    withPipeline.pipelines = {expected};
    QCOMPARE(bench.stored(), withPipeline);
}

void TestPipelineEditor::mysqlSourceListsItsTablesAndRefusesCdcWithoutTheGrant()
{
    test::MyTestDb src("gui_pe_my");
    for (const char *sql :
         {"CREATE TABLE plans (id INT PRIMARY KEY, name VARCHAR(40), updated_at DATETIME(6))",
          "INSERT INTO plans SELECT seq, CONCAT('plan ', seq), NOW(6) FROM seq_1_to_20",
          "CREATE TABLE nokey (name VARCHAR(40), created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)",
          "INSERT INTO nokey (name) SELECT CONCAT('row ', seq) FROM seq_1_to_50",
          "CREATE TABLE counters (id INT PRIMARY KEY, n BIGINT NOT NULL)",
          "INSERT INTO counters SELECT seq, 0 FROM seq_1_to_2000",
          "CREATE TABLE Orders (region CHAR(2), id INT, total DECIMAL(12, 2), created DATE, "
          "modified_at DATETIME NOT NULL, PRIMARY KEY (region, id), KEY (modified_at))",
          "INSERT INTO Orders SELECT 'eu', seq, seq, CURRENT_DATE, NOW() FROM seq_1_to_150000",
          "CREATE TABLE events (id BIGINT PRIMARY KEY, created_at DATE, `Updated At` TIMESTAMP(3) NOT NULL "
          "DEFAULT CURRENT_TIMESTAMP(3), day DATE NOT NULL, KEY (`Updated At`))",
          "INSERT INTO events (id, created_at, day) SELECT seq, CURRENT_DATE, CURRENT_DATE FROM seq_1_to_3000",
          "ANALYZE TABLE plans, nokey, counters, Orders, events"})
        src.exec(sql);
    // A second endpoint on the same database as a user that may SELECT but not read the binlog.
    const auto &servers = test::servers();
    const std::string roUser = test::uniqueName("gui_pe_ro");
    const std::string roPassword = "pw-" + test::uniqueName("s");
    src.exec("CREATE USER " + core::mysqlLiteral(roUser) + "@'127.0.0.1' IDENTIFIED BY " +
             core::mysqlLiteral(roPassword));
    src.exec("GRANT SELECT ON " + core::mysqlIdent(src.name()) + ".* TO " + core::mysqlLiteral(roUser) +
             "@'127.0.0.1'");
    struct DropUser {
        std::string user;
        const test::MyTestDb &db;
        ~DropUser()
        {
            try {
                db.exec("DROP USER IF EXISTS " + core::mysqlLiteral(user) + "@'127.0.0.1'");
            } catch (...) {
            }
        }
    } dropUser{roUser, src};
    test::PgTestDb dst("gui_pe_my_dst");
    Bench bench;
    bench.original.endpoints["shop"] = test::myEndpoint("shop", src.name());
    core::Endpoint readOnly;
    readOnly.name = "shop_ro";
    readOnly.kind = core::EndpointKind::Mysql;
    readOnly.dsn = "mysql://" + roUser + "@" + servers.myHost + ":" + std::to_string(servers.myPort) + "/" + src.name();
    bench.original.endpoints["shop_ro"] = readOnly;
    bench.original.endpoints["dw"] = test::pgEndpoint("dw", dst.name());

    STEP(bench.open());
    auto *page = bench.page;
    // The read-only user's password as the app keeps it: the connector asks for it by DSN.
    bench.w.secretStore()->store(QStringLiteral("shop_ro"), QString::fromStdString(roPassword));
    const QString db = QString::fromStdString(src.name());
    const QString orders = db + QStringLiteral(".Orders");
    PipelineEditor *editor = bench.addPipeline(QStringLiteral("shop"), orders);
    QVERIFY(editor);
    QCOMPARE(editor->sourceBox()->count(), 3); // MySQL and Postgres endpoints are sources
    QString status = editor->discoveryLabel()->text();
    QVERIFY2(status.startsWith(QStringLiteral("5 tables in 1 database on shop")), qPrintable(status));
    QVERIFY2(!status.contains(QStringLiteral("CDC is refused")), qPrintable(status));

    // Any other endpoint is a target; a MySQL one takes a target database.
    QCOMPARE(editor->targetBox()->currentData().toString(), QStringLiteral("dw"));
    const int other = editor->targetBox()->findData(QStringLiteral("shop_ro"));
    QCOMPARE(editor->targetBox()->itemText(other), QStringLiteral("shop_ro (MySQL)"));
    editor->targetBox()->setCurrentIndex(other);
    QVERIFY(editor->targetSchemaEdit()->isEnabled());
    QVERIFY(editor->targetSchemaEdit()->toolTip().contains(QStringLiteral("MySQL database")));
    editor->targetBox()->setCurrentIndex(editor->targetBox()->findData(QStringLiteral("dw")));

    // database.table with the case kept; keys and candidates from information_schema.
    QTreeWidget *tree = editor->tablesTree();
    QCOMPARE(tree->topLevelItemCount(), 1);
    QCOMPARE(tree->topLevelItem(0)->text(PipelineEditor::Table), db);
    QCOMPARE(tree->topLevelItem(0)->childCount(), 5);
    QTreeWidgetItem *ordersItem = editor->tableItem(orders);
    QCOMPARE(ordersItem->text(PipelineEditor::Table), QStringLiteral("Orders"));
    QCOMPARE(ordersItem->text(PipelineEditor::PrimaryKey), QStringLiteral("region, id"));
    QCOMPARE(ordersItem->text(PipelineEditor::Candidates), QStringLiteral("modified_at, created"));
    QVERIFY(!ordersItem->text(PipelineEditor::Size).isEmpty());
    QCOMPARE(editor->tableItem(db + QStringLiteral(".events"))->text(PipelineEditor::Candidates),
             QStringLiteral("`Updated At`, day, created_at"));
    QCOMPARE(editor->tableItem(db + QStringLiteral(".nokey"))->text(PipelineEditor::PrimaryKey),
             QStringLiteral("none"));

    // Recommendations as for Postgres, without write counters (MariaDB keeps none by default):
    // small tables by full refresh, the large one by CDC since deletes cannot be ruled out.
    QComboBox *ordersBox = editor->strategyBox(orders);
    QVERIFY(chosen(ordersBox) == core::Strategy::Cdc);
    QVERIFY(entry(ordersBox, core::Strategy::Cdc).first);
    QVERIFY2(ordersItem->text(PipelineEditor::Reason).contains(QStringLiteral("no write counters")),
             qPrintable(ordersItem->text(PipelineEditor::Reason)));
    QVERIFY(chosen(editor->strategyBox(db + QStringLiteral(".plans"))) == core::Strategy::FullRefresh);
    QVERIFY(!editor->tableItem(db + QStringLiteral(".plans"))
                 ->text(PipelineEditor::Reason)
                 .contains(QStringLiteral("rarely")));
    QCOMPARE(entry(editor->strategyBox(db + QStringLiteral(".nokey")), core::Strategy::Cdc),
             std::make_pair(false, QStringLiteral("Refused: no primary key: cursor sync and CDC merge rows by key")));
    QCOMPARE(entry(editor->strategyBox(db + QStringLiteral(".counters")), core::Strategy::Cursor),
             std::make_pair(false, QStringLiteral("Refused: no timestamp or date column for a cursor to follow")));

    editor->nameEdit()->setText(QStringLiteral("shop_to_dw"));
    editor->setIncluded(orders, true);
    editor->setIncluded(db + QStringLiteral(".plans"), true);
    editor->setIncluded(db + QStringLiteral(".events"), true);
    // events is small (full refresh recommended) but may follow its best candidate.
    QComboBox *eventsBox = editor->strategyBox(db + QStringLiteral(".events"));
    eventsBox->setCurrentIndex(eventsBox->findData(static_cast<int>(core::Strategy::Cursor)));
    editor->selectTable(db + QStringLiteral(".events"));
    QVERIFY(editor->selectedLabel()->text().startsWith(db + QStringLiteral(".events, synced by cursor")));
    QCOMPARE(editor->cursorBox()->currentText(), QStringLiteral("Updated At"));
    editor->lookbackEdit()->setText(QStringLiteral("5m"));
    editor->selectTable(orders);
    QVERIFY2(editor->okButton()->isEnabled(), qPrintable(editor->problem()));

    core::PipelineSpec expected;
    expected.name = "shop_to_dw";
    expected.source = "shop";
    expected.target = "dw";
    core::TableSpec o;
    o.table = {src.name(), "Orders"};
    o.strategy = core::Strategy::Cdc;
    core::TableSpec p;
    p.table = {src.name(), "plans"};
    core::TableSpec e;
    e.table = {src.name(), "events"};
    e.strategy = core::Strategy::Cursor;
    e.cursor = "Updated At";
    e.lookback = "5m";
    expected.tables = {o, p, e};
    QCOMPARE(editor->pipeline(), expected);

    editor->resize(1180, 600);
    saveShot(editor, QStringLiteral("pipeline-editor-mysql"));

    STEP(bench.ok(editor));
    core::Workspace withPipeline = bench.with({expected});
    QCOMPARE(bench.stored(), withPipeline);
    // The YAML names the tables so the loader reads back the same case.
    const QString yamlPath = bench.path("exported.yaml");
    QVERIFY(page->exportFile(yamlPath));
    QCOMPARE(core::WorkspaceFile::load(yamlPath.toStdString()), withPipeline);

    // The user that may not read the binlog: CDC refused for every table, with the GRANT.
    editor = bench.addPipeline(QStringLiteral("shop_ro"), orders);
    QVERIFY(editor);
    status = editor->discoveryLabel()->text();
    const QString refusal =
        QStringLiteral("the source's user may not read the binlog: GRANT REPLICATION SLAVE ON *.* TO '%1'@'")
            .arg(QString::fromStdString(roUser));
    QVERIFY2(status.contains(QStringLiteral("CDC is refused: ") + refusal), qPrintable(status));
    for (const char *t : {"Orders", "plans", "counters", "events"}) {
        const auto [enabled, tip] =
            entry(editor->strategyBox(db + QLatin1Char('.') + QLatin1String(t)), core::Strategy::Cdc);
        QVERIFY2(!enabled, t);
        QVERIFY2(tip.startsWith(QStringLiteral("Refused: ") + refusal), qPrintable(tip));
    }
    QVERIFY(chosen(editor->strategyBox(orders)) == core::Strategy::Cursor);
    QVERIFY2(editor->tableItem(orders)->text(PipelineEditor::Reason).startsWith(QStringLiteral("CDC is unavailable")),
             qPrintable(editor->tableItem(orders)->text(PipelineEditor::Reason)));
    editor->resize(1180, 600);
    saveShot(editor, QStringLiteral("pipeline-editor-mysql-nogrant"));
    editor->reject();
}

namespace {

const char *kCustomers = R"sql(
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, email text, ssn text, phone varchar(20),
                        notes text, internal_notes text, card text, tenant_id int NOT NULL,
                        updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO customers (id, name, email, ssn, phone, notes, internal_notes, card, tenant_id)
SELECT g, 'name ' || g, 'c' || g || '@example.com', '123-45-' || g, '555-01' || g, 'notes ' || g, 'secret ' || g,
       '4111' || g, 42 FROM generate_series(1, 50) g;
)sql";

} // namespace

void TestPipelineEditor::columnGridMapsTheTableAndRoundTripsTheYaml()
{
    test::PgTestDb src("gui_pe_map_src");
    test::PgTestDb dst("gui_pe_map_dst");
    src.exec(kCustomers);
    Bench bench;
    const std::string keyFile = bench.dir.file("hmac.key");
    {
        std::ofstream key(keyFile);
        key << "0123456789abcdef0123456789abcdef\n";
    }
    bench.original.endpoints["src"] = test::pgEndpoint("src", src.name());
    bench.original.endpoints["dw"] = test::pgEndpoint("dw", dst.name());

    STEP(bench.open());
    auto *page = bench.page;

    PipelineEditor *editor = bench.addPipeline(QStringLiteral("src"), QStringLiteral("public.customers"));
    QVERIFY(editor);
    editor->targetBox()->setCurrentIndex(editor->targetBox()->findData(QStringLiteral("dw")));
    editor->nameEdit()->setText(QStringLiteral("crm"));
    const QString customers = QStringLiteral("public.customers");
    editor->setIncluded(customers, true);
    QComboBox *strategy = editor->strategyBox(customers);
    strategy->setCurrentIndex(strategy->findData(static_cast<int>(core::Strategy::Cdc)));
    editor->selectTable(customers);

    // The grid lists the source's columns in order, with their types and the key marked.
    ColumnMappingPanel *panel = editor->columnsPanel();
    QTableWidget *grid = panel->grid();
    // On the editor's Columns tab, named after the selected table.
    editor->settingsTabs()->setCurrentWidget(panel->parentWidget());
    QCOMPARE(editor->settingsTabs()->tabText(editor->settingsTabs()->currentIndex()),
             QStringLiteral("Colu&mns of public.customers"));
    QVERIFY(grid->isVisibleTo(editor));
    const QStringList names{"id",    "name",           "email", "ssn",       "phone",
                            "notes", "internal_notes", "card",  "tenant_id", "updated_at"};
    QCOMPARE(grid->rowCount(), names.size());
    for (int row = 0; row < names.size(); ++row) {
        QCOMPARE(grid->item(row, ColumnMappingPanel::Name)->text(), names[row]);
        QCOMPARE(grid->item(row, ColumnMappingPanel::Include)->checkState(), Qt::Checked);
        QCOMPARE(grid->item(row, ColumnMappingPanel::TargetName)->text(), names[row]);
        QCOMPARE(panel->maskBox(names[row])->currentData().toInt(), int(ColumnMappingPanel::NoMask));
    }
    QCOMPARE(grid->item(0, ColumnMappingPanel::Type)->text(), QStringLiteral("integer"));
    QCOMPARE(grid->item(4, ColumnMappingPanel::Type)->text(), QStringLiteral("character varying(20)"));
    QCOMPARE(grid->item(0, ColumnMappingPanel::Role)->text(), QStringLiteral("key"));
    QCOMPARE(grid->item(1, ColumnMappingPanel::Role)->text(), QString());
    QVERIFY(panel->targetTableEdit()->placeholderText().startsWith(QStringLiteral("public.customers")));

    // The three deletes policies core accepts are all offered.
    auto *deleteItems = qobject_cast<QStandardItemModel *>(panel->deletesBox()->model());
    for (const char *policy : {"hard", "ignore", "soft"}) {
        const int at = panel->deletesBox()->findData(QString::fromLatin1(policy));
        QVERIFY2(at >= 0 && deleteItems->item(at)->isEnabled(), policy);
    }

    // Masking the key with anything but the hash is refused with core's own message.
    panel->setMask(QStringLiteral("id"), ColumnMappingPanel::NullMask);
    core::TableSpec refused;
    refused.table = {"public", "customers"};
    refused.strategy = core::Strategy::Cdc;
    refused.columns = core::ColumnMapping{};
    refused.columns->mask = {{"id", core::ColumnMask{core::ColumnMask::Kind::Null, 0, {}}}};
    QString coreMessage;
    {
        auto conn = src.connect();
        try {
            core::checkColumnMapping(refused, core::pgcatalog::describeTable(conn, refused.table), false);
        } catch (const core::ConfigError &e) {
            coreMessage = QString::fromStdString(e.what());
        }
    }
    QVERIFY2(coreMessage.contains(QStringLiteral("primary key")), qPrintable(coreMessage));
    QCOMPARE(panel->problemLabel()->text(), coreMessage);
    QVERIFY(panel->problemLabel()->isVisibleTo(editor));
    QVERIFY(!editor->okButton()->isEnabled());
    QCOMPARE(editor->problem(), QStringLiteral("public.customers: ") + coreMessage);
    // Leaving the key out is refused the same way; putting both back clears it.
    panel->setMask(QStringLiteral("id"), ColumnMappingPanel::NoMask);
    panel->setColumnIncluded(QStringLiteral("id"), false);
    QVERIFY2(panel->problemLabel()->text().contains(QStringLiteral("cannot be left out")),
             qPrintable(panel->problemLabel()->text()));
    QVERIFY(!editor->okButton()->isEnabled());
    panel->setColumnIncluded(QStringLiteral("id"), true);
    QVERIFY(panel->problemLabel()->text().isEmpty());
    QVERIFY2(editor->okButton()->isEnabled(), qPrintable(editor->problem()));
    // A mask setting that is no count never becomes a spec.
    panel->setMask(QStringLiteral("notes"), ColumnMappingPanel::TruncateMask, QStringLiteral("lots"));
    QVERIFY2(editor->problem().contains(QStringLiteral("not a count")), qPrintable(editor->problem()));
    QVERIFY(!editor->okButton()->isEnabled());

    // The mapping of the issue: leave one column out, rename one, four masks, a filter, deletes
    // ignore and a target table of its own.
    panel->setColumnIncluded(QStringLiteral("internal_notes"), false);
    panel->setTargetName(QStringLiteral("email"), QStringLiteral("email_address"));
    panel->setMask(QStringLiteral("ssn"), ColumnMappingPanel::HashMask,
                   QStringLiteral("file:") + QString::fromStdString(keyFile));
    panel->setMask(QStringLiteral("phone"), ColumnMappingPanel::KeepLastMask, QStringLiteral("4"));
    panel->setMask(QStringLiteral("notes"), ColumnMappingPanel::TruncateMask, QStringLiteral("7"));
    panel->setMask(QStringLiteral("card"), ColumnMappingPanel::NullMask);
    panel->whereEdit()->setText(QStringLiteral("tenant_id = 42"));
    panel->deletesBox()->setCurrentIndex(panel->deletesBox()->findData(QStringLiteral("ignore")));
    panel->targetTableEdit()->setText(QStringLiteral("crm_customers"));
    QVERIFY2(editor->okButton()->isEnabled(), qPrintable(editor->problem()));

    core::TableSpec mapped;
    mapped.table = {"public", "customers"};
    mapped.strategy = core::Strategy::Cdc;
    mapped.targetTable = "crm_customers";
    core::ColumnMapping m;
    m.exclude = {"internal_notes"};
    m.rename = {{"email", "email_address"}};
    m.mask = {{"ssn", {core::ColumnMask::Kind::Hash, 0, "file:" + keyFile}},
              {"phone", {core::ColumnMask::Kind::KeepLast, 4, {}}},
              {"notes", {core::ColumnMask::Kind::Truncate, 7, {}}},
              {"card", {core::ColumnMask::Kind::Null, 0, {}}}};
    mapped.columns = m;
    mapped.where = "tenant_id = 42";
    mapped.deletes = "ignore";
    core::PipelineSpec expected;
    expected.name = "crm";
    expected.source = "src";
    expected.target = "dw";
    expected.tables = {mapped};
    QCOMPARE(editor->pipeline(), expected);

    // A keychain key: the note says where apply reads it; the key itself is never asked for.
    panel->setMask(QStringLiteral("ssn"), ColumnMappingPanel::HashMask, QStringLiteral("keychain"));
    QVERIFY(panel->noteLabel()->isVisibleTo(editor));
    QVERIFY2(panel->noteLabel()->text().contains(QStringLiteral("hmac:public.customers")),
             qPrintable(panel->noteLabel()->text()));
    grid->scrollToTop();
    editor->resize(1180, 900);
    saveShot(editor, QStringLiteral("pipeline-editor-columns"));
    panel->setMask(QStringLiteral("ssn"), ColumnMappingPanel::HashMask,
                   QStringLiteral("file:") + QString::fromStdString(keyFile));
    QCOMPARE(editor->pipeline(), expected);

    // OK stores it through the page; the YAML export has the keys and loads back equal.
    STEP(bench.ok(editor));
    core::Workspace withPipeline = bench.with({expected});
    QCOMPARE(bench.stored(), withPipeline);
    const QString yamlPath = bench.path("exported.yaml");
    QVERIFY(page->exportFile(yamlPath));
    const QString yaml = readText(yamlPath);
    for (const char *key :
         {"target_table:", "crm_customers", "columns:", "exclude:", "internal_notes", "rename:", "email_address",
          "mask:", "keep_last: 4", "truncate: 7", "hash: hmac-sha256", "where:", "tenant_id = 42", "deletes: ignore"})
        QVERIFY2(yaml.contains(QLatin1String(key)), key);
    QVERIFY(!yaml.contains(QStringLiteral("0123456789abcdef"))); // the key's file is named, never read into it
    QCOMPARE(core::WorkspaceFile::load(yamlPath.toStdString()), withPipeline);
    // What the editor accepted, apply accepts (live schema, key file and all).
    const auto applied = test::runCli({"--state", bench.dir.file("cli.db"), "apply", yamlPath.toStdString()});
    QVERIFY2(applied.exitCode == 0, (applied.out + applied.err).c_str());

    // A mapping written by hand in YAML (include form) shows in the grid as written, and saving
    // without an edit changes nothing.
    const std::string handYaml = bench.dir.file("hand.yaml");
    std::ofstream(handYaml) << "endpoints:\n"
                               "  src: { kind: postgres, dsn: \""
                            << bench.original.endpoints["src"].dsn
                            << "\" }\n"
                               "  dw: { kind: postgres, dsn: \""
                            << bench.original.endpoints["dw"].dsn
                            << "\" }\n"
                               "pipelines:\n"
                               "  - name: crm\n"
                               "    source: src\n"
                               "    target: dw\n"
                               "    tables:\n"
                               "      - table: public.customers\n"
                               "        strategy: cdc\n"
                               "        target_table: crm_customers\n"
                               "        columns:\n"
                               "          include: [id, name, email, ssn, tenant_id, card, updated_at, notes, phone]\n"
                               "          rename: { email: email_address }\n"
                               "          mask:\n"
                               "            ssn: { hash: hmac-sha256, key: \"file:"
                            << keyFile
                            << "\" }\n"
                               "            phone: { keep_last: 4 }\n"
                               "            card: { null: true }\n"
                               "        where: \"tenant_id = 42\"\n"
                               "        deletes: ignore\n";
    const core::Workspace hand = core::WorkspaceFile::load(handYaml);
    QVERIFY(hand.pipelines.at(0).tables.at(0).columns->hasInclude);
    STEP(bench.importYaml(QString::fromStdString(handYaml)));
    QCOMPARE(bench.stored(), hand);
    editor = bench.editPipeline(QStringLiteral("crm"), hand);
    QVERIFY(editor);
    QCOMPARE(editor->pipeline(), hand.pipelines.at(0));
    editor->selectTable(customers);
    panel = editor->columnsPanel();
    grid = panel->grid();
    QCOMPARE(grid->rowCount(), names.size());
    QCOMPARE(grid->item(panel->rowOf(QStringLiteral("internal_notes")), ColumnMappingPanel::Include)->checkState(),
             Qt::Unchecked);
    QCOMPARE(grid->item(panel->rowOf(QStringLiteral("tenant_id")), ColumnMappingPanel::Include)->checkState(),
             Qt::Checked);
    QCOMPARE(grid->item(panel->rowOf(QStringLiteral("email")), ColumnMappingPanel::TargetName)->text(),
             QStringLiteral("email_address"));
    QCOMPARE(panel->maskBox(QStringLiteral("phone"))->currentData().toInt(), int(ColumnMappingPanel::KeepLastMask));
    QCOMPARE(grid->item(panel->rowOf(QStringLiteral("phone")), ColumnMappingPanel::MaskSetting)->text(),
             QStringLiteral("4"));
    QCOMPARE(panel->maskBox(QStringLiteral("ssn"))->currentData().toInt(), int(ColumnMappingPanel::HashMask));
    QCOMPARE(panel->whereEdit()->text(), QStringLiteral("tenant_id = 42"));
    QCOMPARE(panel->deletesBox()->currentData().toString(), QStringLiteral("ignore"));
    QCOMPARE(panel->targetTableEdit()->text(), QStringLiteral("crm_customers"));
    QCOMPARE(editor->pipeline(), hand.pipelines.at(0)); // showing it edited nothing
    QVERIFY2(editor->okButton()->isEnabled(), qPrintable(editor->problem()));
    STEP(bench.ok(editor));
    QCOMPARE(bench.stored(), hand);
    const QString again = bench.path("again.yaml");
    QVERIFY(page->exportFile(again));
    QCOMPARE(core::WorkspaceFile::load(again.toStdString()), hand);
    QVERIFY(readText(again).contains(QStringLiteral("include:")));

    // An edit keeps the form it was written in: ticking a column adds it to include.
    editor = bench.editPipeline(QStringLiteral("crm"), hand);
    QVERIFY(editor);
    editor->selectTable(customers);
    editor->columnsPanel()->setColumnIncluded(QStringLiteral("internal_notes"), true);
    const std::optional<core::ColumnMapping> edited = editor->pipeline().tables.at(0).columns;
    QVERIFY(edited && edited->hasInclude && edited->exclude.empty());
    QCOMPARE(edited->include.back(), std::string("internal_notes"));
    QCOMPARE(edited->include.size(), size_t(10));
    editor->reject();
}

void TestPipelineEditor::bothWaysMakesEveryTableStreamAndRoundTrips()
{
    test::PgTestDb a("gui_pe_tw_a");
    test::PgTestDb b("gui_pe_tw_b");
    a.exec("CREATE TABLE people (id int PRIMARY KEY, name text, phone text)");
    a.exec("CREATE TABLE notes (id int PRIMARY KEY, body text)");
    Bench bench;
    bench.original.endpoints["a"] = test::pgEndpoint("a", a.name());
    bench.original.endpoints["b"] = test::pgEndpoint("b", b.name());
    core::Endpoint lite;
    lite.name = "lite";
    lite.kind = core::EndpointKind::Sqlite;
    lite.path = bench.dir.file("lite.db");
    bench.original.endpoints["lite"] = lite;

    STEP(bench.open());
    auto *page = bench.page;

    PipelineEditor *editor = bench.addPipeline(QStringLiteral("a"), QStringLiteral("public.people"));
    QVERIFY(editor);
    editor->targetBox()->setCurrentIndex(editor->targetBox()->findData(QStringLiteral("b")));
    editor->nameEdit()->setText(QStringLiteral("mirror"));
    editor->setIncluded(QStringLiteral("public.people"), true);
    QComboBox *people = editor->strategyBox(QStringLiteral("public.people"));
    people->setCurrentIndex(people->findData(static_cast<int>(core::Strategy::FullRefresh)));
    QCOMPARE(editor->directionBox()->currentData().toBool(), false);
    QVERIFY(!editor->pipeline().twoWay);

    // Both ways: the included table streams, and a table included afterwards does too.
    editor->directionBox()->setCurrentIndex(editor->directionBox()->findData(true));
    QVERIFY(chosen(people) == core::Strategy::Cdc);
    editor->setIncluded(QStringLiteral("public.notes"), true);
    QVERIFY(chosen(editor->strategyBox(QStringLiteral("public.notes"))) == core::Strategy::Cdc);
    QVERIFY2(editor->problem().isEmpty(), qPrintable(editor->problem()));
    QVERIFY(editor->okButton()->isEnabled());
    core::PipelineSpec p = editor->pipeline();
    QVERIFY(p.twoWay);
    // Picking another strategy again is refused with the loader's own words.
    people->setCurrentIndex(people->findData(static_cast<int>(core::Strategy::Cursor)));
    QVERIFY2(editor->problem().contains(QStringLiteral("every table's strategy must be cdc")) ||
                 editor->problem().contains(QStringLiteral("cursor column")),
             qPrintable(editor->problem()));
    QVERIFY(!editor->okButton()->isEnabled());
    people->setCurrentIndex(people->findData(static_cast<int>(core::Strategy::Cdc)));
    // A SQLite target cannot be written back from: refused, saying so.
    editor->targetBox()->setCurrentIndex(editor->targetBox()->findData(QStringLiteral("lite")));
    QVERIFY2(editor->problem().contains(QStringLiteral("SQLite")), qPrintable(editor->problem()));
    QVERIFY(!editor->okButton()->isEnabled());
    editor->targetBox()->setCurrentIndex(editor->targetBox()->findData(QStringLiteral("b")));
    QVERIFY2(editor->problem().isEmpty(), qPrintable(editor->problem()));
    editor->resize(1180, 700);
    saveShot(editor, QStringLiteral("pipeline-editor-two-way"));

    // OK stores it; the export says direction: both and loads back equal.
    STEP(bench.ok(editor));
    const core::Workspace stored = bench.stored();
    QCOMPARE(stored.pipelines.size(), std::size_t{1});
    QVERIFY(stored.pipelines[0].twoWay);
    QCOMPARE(stored.pipelines[0].tables.size(), std::size_t{2});
    const QString yamlPath = bench.path("exported.yaml");
    QVERIFY(page->exportFile(yamlPath));
    QVERIFY(readText(yamlPath).contains(QStringLiteral("direction: both")));
    QCOMPARE(core::WorkspaceFile::load(yamlPath.toStdString()), stored);

    // Edited again, it opens as both ways; made one way, it stores a one-way pipeline.
    editor = bench.editPipeline(QStringLiteral("mirror"), stored);
    QVERIFY(editor);
    QCOMPARE(editor->directionBox()->currentData().toBool(), true);
    editor->directionBox()->setCurrentIndex(editor->directionBox()->findData(false));
    QVERIFY(!editor->pipeline().twoWay);
    QVERIFY2(editor->problem().isEmpty(), qPrintable(editor->problem()));
    bench.saved.clear();
    QTest::mouseClick(editor->okButton(), Qt::LeftButton);
    QVERIFY(bench.saved.wait(15000));
    QVERIFY(!bench.stored().pipelines.at(0).twoWay);
}

void TestPipelineEditor::bothWaysSetsEachTablesConflictPolicyAndRoundTripsTheYaml()
{
    using Rule = core::ConflictPolicy::Rule;
    test::PgTestDb a("gui_pe_cf_a");
    test::PgTestDb b("gui_pe_cf_b");
    a.exec("CREATE TABLE people (id int PRIMARY KEY, name text, updated_at timestamptz)");
    a.exec("CREATE TABLE notes (id int PRIMARY KEY, body text)");
    Bench bench;
    bench.original.endpoints["a"] = test::pgEndpoint("a", a.name());
    bench.original.endpoints["b"] = test::pgEndpoint("b", b.name());

    STEP(bench.open());
    auto *page = bench.page;

    PipelineEditor *editor = bench.addPipeline(QStringLiteral("a"), QStringLiteral("public.people"));
    QVERIFY(editor);
    editor->targetBox()->setCurrentIndex(editor->targetBox()->findData(QStringLiteral("b")));
    editor->nameEdit()->setText(QStringLiteral("mirror"));
    editor->setIncluded(QStringLiteral("public.people"), true);
    editor->setIncluded(QStringLiteral("public.notes"), true);
    ui::ConflictPolicyPicker *picker = editor->conflictsPicker();
    QVERIFY(picker);
    auto *rule = picker->findChild<QComboBox *>(QStringLiteral("conflictPolicy"));
    auto *overlap = picker->findChild<QComboBox *>(QStringLiteral("conflictOnOverlap"));
    auto *clock = picker->findChild<QComboBox *>(QStringLiteral("conflictClock"));
    auto *column = picker->findChild<QLineEdit *>(QStringLiteral("conflictColumn"));
    auto *skew = picker->findChild<QLineEdit *>(QStringLiteral("conflictMaxSkew"));
    QVERIFY(rule && overlap && clock && column && skew);
    // One way: no conflicts to resolve, so no choice.
    QVERIFY(picker->isHidden());
    QVERIFY(editor->conflictsToAllButton()->isHidden());

    editor->directionBox()->setCurrentIndex(editor->directionBox()->findData(true));
    QVERIFY(!picker->isHidden());
    editor->tablesTree()->setCurrentItem(editor->tableItem(QStringLiteral("public.people")));
    QVERIFY(picker->isEnabled());
    QCOMPARE(rule->currentData().toInt(), static_cast<int>(Rule::MergeColumns)); // the default
    QVERIFY(!tableOf(editor->pipeline(), "public.people").conflicts);

    // newer_wins by a column: the column must be named; then max_skew.
    pick(rule, static_cast<int>(Rule::NewerWins));
    QVERIFY(overlap->isHidden());
    QVERIFY(!clock->isHidden() && !column->isHidden());
    QVERIFY2(editor->problem().contains(QStringLiteral("timestamp column")), qPrintable(editor->problem()));
    QVERIFY(!editor->okButton()->isEnabled());
    column->setText(QStringLiteral("updated_at"));
    skew->setText(QStringLiteral("soon"));
    QVERIFY2(editor->problem().contains(QStringLiteral("not a duration")), qPrintable(editor->problem()));
    skew->setText(QStringLiteral("2s"));
    QVERIFY2(editor->problem().isEmpty(), qPrintable(editor->problem()));
    QCOMPARE(tableOf(editor->pipeline(), "public.people").conflicts,
             std::optional<std::string>("newer_wins;max_skew_ms=2000;column=updated_at"));
    pick(clock, QStringLiteral("commit_time"));
    QVERIFY(column->isHidden());
    QCOMPARE(tableOf(editor->pipeline(), "public.people").conflicts,
             std::optional<std::string>("newer_wins;max_skew_ms=2000;clock=commit_time"));

    // notes: merge_columns with on_overlap target_wins; people keeps its own.
    editor->tablesTree()->setCurrentItem(editor->tableItem(QStringLiteral("public.notes")));
    QCOMPARE(rule->currentData().toInt(), static_cast<int>(Rule::MergeColumns));
    QVERIFY(!overlap->isHidden() && clock->isHidden());
    pick(overlap, static_cast<int>(Rule::TargetWins));
    QCOMPARE(tableOf(editor->pipeline(), "public.notes").conflicts,
             std::optional<std::string>("merge_columns/target_wins"));
    editor->tablesTree()->setCurrentItem(editor->tableItem(QStringLiteral("public.people")));
    QCOMPARE(rule->currentData().toInt(), static_cast<int>(Rule::NewerWins));
    QCOMPARE(clock->currentData().toString(), QStringLiteral("commit_time"));
    QCOMPARE(skew->text(), QStringLiteral("2s"));
    QVERIFY2(editor->problem().isEmpty(), qPrintable(editor->problem()));
    editor->resize(1180, 700);
    saveShot(editor, QStringLiteral("pipeline-editor-conflicts"));

    // OK stores both policies; the export writes them as conflicts: and loads back equal.
    STEP(bench.ok(editor));
    const core::Workspace stored = bench.stored();
    QCOMPARE(stored.pipelines.size(), std::size_t{1});
    QCOMPARE(tableOf(stored.pipelines[0], "public.people").conflicts,
             std::optional<std::string>("newer_wins;max_skew_ms=2000;clock=commit_time"));
    QCOMPARE(tableOf(stored.pipelines[0], "public.notes").conflicts,
             std::optional<std::string>("merge_columns/target_wins"));
    const QString yamlPath = bench.path("exported.yaml");
    QVERIFY(page->exportFile(yamlPath));
    const QString yaml = readText(yamlPath);
    QVERIFY2(yaml.contains(QStringLiteral("conflicts: {policy: merge_columns, on_overlap: target_wins}")),
             qPrintable(yaml));
    QVERIFY2(yaml.contains(QStringLiteral("commit_time")), qPrintable(yaml));
    QCOMPARE(core::WorkspaceFile::load(yamlPath.toStdString()), stored);

    // Edited again, the table opens with its policy.
    editor = bench.editPipeline(QStringLiteral("mirror"), stored);
    QVERIFY(editor);
    QTRY_VERIFY_WITH_TIMEOUT(!editor->discovering() && editor->tableItem(QStringLiteral("public.notes")), 30000);
    editor->tablesTree()->setCurrentItem(editor->tableItem(QStringLiteral("public.notes")));
    rule = editor->conflictsPicker()->findChild<QComboBox *>(QStringLiteral("conflictPolicy"));
    overlap = editor->conflictsPicker()->findChild<QComboBox *>(QStringLiteral("conflictOnOverlap"));
    QCOMPARE(rule->currentData().toInt(), static_cast<int>(Rule::MergeColumns));
    QCOMPARE(overlap->currentData().toInt(), static_cast<int>(Rule::TargetWins));
    QCOMPARE(editor->pipeline(), stored.pipelines[0]);

    // Apply to all tables: every included table takes the selected one's policy.
    QVERIFY(!editor->conflictsToAllButton()->isHidden() && editor->conflictsToAllButton()->isEnabled());
    QTest::mouseClick(editor->conflictsToAllButton(), Qt::LeftButton);
    QCOMPARE(tableOf(editor->pipeline(), "public.people").conflicts,
             std::optional<std::string>("merge_columns/target_wins"));
    QCOMPARE(tableOf(editor->pipeline(), "public.notes").conflicts,
             std::optional<std::string>("merge_columns/target_wins"));
    editor->tablesTree()->setCurrentItem(editor->tableItem(QStringLiteral("public.people")));
    QCOMPARE(rule->currentData().toInt(), static_cast<int>(Rule::MergeColumns));
    QCOMPARE(overlap->currentData().toInt(), static_cast<int>(Rule::TargetWins));
    editor->reject();
}

void TestPipelineEditor::patternKeysSetOnThePatternsTabEqualTheSameKeysWrittenByHand()
{
    test::PgTestDb src("gui_pe_pat_src");
    test::PgTestDb dst("gui_pe_pat_dst");
    src.exec("CREATE TABLE plans (id int PRIMARY KEY, name text, updated_at timestamptz)");
    Bench bench;
    bench.original.endpoints["src"] = test::pgEndpoint("src", src.name());
    bench.original.endpoints["dw"] = test::pgEndpoint("dw", dst.name());

    STEP(bench.open());
    auto *page = bench.page;

    PipelineEditor *editor = bench.addPipeline(QStringLiteral("src"), QStringLiteral("public.plans"));
    QVERIFY(editor);
    editor->targetBox()->setCurrentIndex(editor->targetBox()->findData(QStringLiteral("dw")));
    editor->nameEdit()->setText(QStringLiteral("app_to_dw"));
    ui::PatternSettingsPanel *patterns = editor->patternSettings();
    QVERIFY(patterns);
    auto *scroll = editor->findChild<QWidget *>(QStringLiteral("patternSettingsScroll"));
    QVERIFY(scroll);
    editor->settingsTabs()->setCurrentWidget(scroll);
    QVERIFY(patterns->isVisible());

    // No table listed and no pattern: nothing to sync.
    QVERIFY2(editor->problem().contains(QStringLiteral("Include at least one table")), qPrintable(editor->problem()));
    // The loader's refusals, said before OK.
    QTest::keyClicks(patterns->includeEdit(), QStringLiteral("public"));
    QVERIFY2(editor->problem().contains(QStringLiteral("'public' is not a schema.name pattern")),
             qPrintable(editor->problem()));
    QVERIFY(!editor->okButton()->isEnabled());
    patterns->includeEdit()->clear();
    QTest::keyClicks(patterns->excludeEdit(), QStringLiteral("public.tmp_*, public.*_old"));
    QVERIFY2(editor->problem().contains(QStringLiteral("exclude_tables narrows include_tables")),
             qPrintable(editor->problem()));
    QTest::keyClicks(patterns->includeEdit(), QStringLiteral("public.*, sales.order_[ab,]*"));
    QTest::keyClicks(patterns->discoverEveryEdit(), QStringLiteral("2s"));
    QVERIFY2(editor->problem().contains(QStringLiteral("at least 5s")), qPrintable(editor->problem()));
    patterns->discoverEveryEdit()->clear();
    QTest::keyClicks(patterns->discoverEveryEdit(), QStringLiteral("30s"));
    // A pipeline that names its tables by pattern only is savable.
    QVERIFY2(editor->problem().isEmpty(), qPrintable(editor->problem()));

    // Table defaults: recommended per table (every field applies), then each key.
    QVERIFY(!patterns->defaultStrategyBox()->currentData().isValid());
    ui::TableSettingsPanel *defaults = patterns->defaultsPanel();
    for (QWidget *field : std::initializer_list<QWidget *>{
             defaults->cursorBox(), defaults->lookbackEdit(), defaults->pageSizeEdit(), defaults->everyEdit(),
             defaults->slaEdit(), defaults->truncateBox(), defaults->fallbackCursorBox(), defaults->addColumnBox()})
        QVERIFY2(field->isEnabled(), qPrintable(field->objectName()));
    defaults->cursorBox()->setEditText(QStringLiteral("modified_at"));
    defaults->lookbackEdit()->setText(QStringLiteral("5m"));
    defaults->pageSizeEdit()->setText(QStringLiteral("1000"));
    defaults->everyEdit()->setText(QStringLiteral("10m"));
    defaults->slaEdit()->setText(QStringLiteral("20m"));
    pick(defaults->addColumnBox(), QStringLiteral("ignore"));
    pick(defaults->dropColumnBox(), QStringLiteral("drop"));
    pick(patterns->defaultDeletesBox(), QStringLiteral("soft"));
    patterns->defaultWhereEdit()->setText(QStringLiteral("tenant_id = 42"));
    patterns->defaultExcludedColumnsEdit()->setText(QStringLiteral("ssn, secret"));
    QVERIFY2(editor->problem().isEmpty(), qPrintable(editor->problem()));

    // A full refresh cannot keep deletes unmarked: the loader's words; CDC greys what it does not use.
    pick(patterns->defaultStrategyBox(), static_cast<int>(core::Strategy::FullRefresh));
    pick(patterns->defaultDeletesBox(), QStringLiteral("ignore"));
    QVERIFY2(editor->problem().contains(QStringLiteral("cannot keep deleted rows unmarked")),
             qPrintable(editor->problem()));
    pick(patterns->defaultDeletesBox(), QStringLiteral("soft"));
    pick(patterns->defaultStrategyBox(), static_cast<int>(core::Strategy::Cdc));
    QVERIFY(!defaults->everyEdit()->isEnabled() && !defaults->lookbackEdit()->isEnabled());
    QVERIFY(defaults->slaEdit()->isEnabled() && defaults->truncateBox()->isEnabled());
    QCOMPARE(defaults->everyEdit()->text(), QStringLiteral("10m")); // greyed, kept
    pick(patterns->defaultStrategyBox(), QVariant());
    QVERIFY(defaults->everyEdit()->isEnabled());
    QCOMPARE(defaults->cursorBox()->currentText(), QStringLiteral("modified_at"));
    QVERIFY2(editor->problem().isEmpty(), qPrintable(editor->problem()));
    editor->resize(1180, 700);
    saveShot(editor, QStringLiteral("pipeline-editor-patterns"));

    // OK stores it; the same pipeline written by hand loads equal, and the export round-trips.
    STEP(bench.ok(editor));
    const std::string handYaml = bench.dir.file("hand.yaml");
    std::ofstream(handYaml) << "endpoints:\n"
                               "  src: { kind: postgres, dsn: \""
                            << bench.original.endpoints["src"].dsn
                            << "\" }\n"
                               "  dw: { kind: postgres, dsn: \""
                            << bench.original.endpoints["dw"].dsn
                            << "\" }\n"
                               "pipelines:\n"
                               "  - name: app_to_dw\n"
                               "    source: src\n"
                               "    target: dw\n"
                               "    include_tables: [\"public.*\", \"sales.order_[ab,]*\"]\n"
                               "    exclude_tables: [\"public.tmp_*\", \"public.*_old\"]\n"
                               "    discover_every: 30s\n"
                               "    table_defaults:\n"
                               "      cursor: modified_at\n"
                               "      lookback: 5m\n"
                               "      page_size: 1000\n"
                               "      every: 10m\n"
                               "      freshness_sla: 20m\n"
                               "      deletes: soft\n"
                               "      where: \"tenant_id = 42\"\n"
                               "      columns: { exclude: [ssn, secret] }\n"
                               "      schema_changes: { add_column: ignore, drop_column: drop }\n";
    const core::Workspace hand = core::WorkspaceFile::load(handYaml);
    const core::Workspace stored = bench.stored();
    QCOMPARE(stored, hand);
    QVERIFY(stored.pipelines.at(0).tables.empty());
    const QString yamlPath = bench.path("exported.yaml");
    QVERIFY(page->exportFile(yamlPath));
    QCOMPARE(core::WorkspaceFile::load(yamlPath.toStdString()), hand);

    // Opened again, every field shows what was stored, and OK without an edit gives it back.
    editor = bench.editPipeline(QStringLiteral("app_to_dw"), stored);
    QVERIFY(editor);
    patterns = editor->patternSettings();
    QCOMPARE(patterns->includeEdit()->text(), QStringLiteral("public.*, sales.order_[ab,]*"));
    QCOMPARE(patterns->excludeEdit()->text(), QStringLiteral("public.tmp_*, public.*_old"));
    QCOMPARE(patterns->discoverEveryEdit()->text(), QStringLiteral("30s"));
    QCOMPARE(patterns->defaultsPanel()->slaEdit()->text(), QStringLiteral("20m"));
    QCOMPARE(patterns->defaultDeletesBox()->currentData().toString(), QStringLiteral("soft"));
    QCOMPARE(editor->pipeline(), hand.pipelines.at(0));
    // A strategy named in the defaults comes back as named, and as the hand-written key.
    pick(patterns->defaultStrategyBox(), static_cast<int>(core::Strategy::Cursor));
    core::PipelineSpec withStrategy = hand.pipelines.at(0);
    withStrategy.tableDefaults->strategy = core::Strategy::Cursor;
    withStrategy.tableDefaults->keys.strategy = core::Strategy::Cursor;
    QCOMPARE(editor->pipeline(), withStrategy);
    core::Workspace again = hand;
    again.pipelines.at(0) = editor->pipeline();
    QCOMPARE(core::WorkspaceFile::parse(core::WorkspaceFile::toYaml(again), {}, {}), again);
    editor->reject();
}

void TestPipelineEditor::pickedUpTablesStayPickedUpThroughAnEditorSave()
{
    test::PgTestDb src("gui_pe_pick_src");
    test::PgTestDb dst("gui_pe_pick_dst");
    src.exec("CREATE TABLE plans (id int PRIMARY KEY, name text, updated_at timestamptz)");
    src.exec("CREATE TABLE orders (id int PRIMARY KEY, total numeric, updated_at timestamptz)");
    src.exec("CREATE TABLE tmp_x (id int PRIMARY KEY)");
    Bench bench;
    bench.original.endpoints["src"] = test::pgEndpoint("src", src.name());
    bench.original.endpoints["dw"] = test::pgEndpoint("dw", dst.name());
    core::PipelineSpec p;
    p.name = "app";
    p.source = "src";
    p.target = "dw";
    p.includeTables = {"public.*"};
    p.excludeTables = {"public.tmp_*"};
    p.tableDefaults = core::PipelineSpec::TableDefaults{};
    p.tableDefaults->keys.freshnessSla = core::Millis(300'000);
    p.tables.push_back(spec("plans"));
    bench.original.pipelines.push_back(p);
    {
        core::StateStore store(bench.statePath);
        store.applyWorkspace(bench.original);
        core::StateStore::DiscoveredTable found;
        found.pipeline = "app";
        found.table = {"public", "orders"};
        found.strategy = core::Strategy::Cursor;
        found.cursor = "updated_at";
        QVERIFY(store.addDiscoveredTable(found));
    }
    const core::Workspace stored = bench.stored();
    QCOMPARE(stored.pipelines.at(0).tables.size(), std::size_t{2});
    const core::TableSpec orders = tableOf(stored.pipelines.at(0), "public.orders");
    QVERIFY(orders.discovered);

    // The Tables page tells the picked-up table from the listed one.
    MainWindow &w = bench.w;
    STEP(bench.show());
    QTRY_COMPARE_WITH_TIMEOUT(w.tablesModel()->rowCount(), 2, 15000);
    ui::TablesModel *tables = w.tablesModel();
    const int pickedRow = tables->rowOf(QStringLiteral("app"), QStringLiteral("public.orders"));
    const int listedRow = tables->rowOf(QStringLiteral("app"), QStringLiteral("public.plans"));
    QVERIFY(pickedRow >= 0 && listedRow >= 0);
    QCOMPARE(tables->index(pickedRow, ui::TablesModel::Strategy).data().toString(),
             QStringLiteral("cursor (by pattern)"));
    QVERIFY(tables->index(pickedRow, ui::TablesModel::Table)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("include_tables")));
    QVERIFY(!tables->index(listedRow, ui::TablesModel::Strategy).data().toString().contains(QStringLiteral("pattern")));
    w.pages()->setCurrentWidget(w.tablesPage());
    // Its columns fit their text once shown: the marker is read whole, not elided.
    const QAbstractItemView *view = w.tablesPage()->view(); // sizeHintForColumn is public here
    QTRY_VERIFY(w.tablesPage()->view()->columnWidth(ui::TablesModel::Strategy) >=
                view->sizeHintForColumn(ui::TablesModel::Strategy));
    saveShot(&w, QStringLiteral("tables-page-picked-up"));

    auto *page = bench.page;
    w.pages()->setCurrentWidget(page);
    PipelineEditor *editor = bench.editPipeline(QStringLiteral("app"), stored);
    QVERIFY(editor);
    QTRY_VERIFY_WITH_TIMEOUT(editor->tableItem(QStringLiteral("public.orders")), 30000);
    // Half-ticked, its strategy read-only, said to be picked up; the listed one ticked.
    QTreeWidgetItem *item = editor->tableItem(QStringLiteral("public.orders"));
    QCOMPARE(item->checkState(PipelineEditor::Table), Qt::PartiallyChecked);
    QCOMPARE(editor->tableItem(QStringLiteral("public.plans"))->checkState(PipelineEditor::Table), Qt::Checked);
    QCOMPARE(editor->tableItem(QStringLiteral("public.tmp_x"))->checkState(PipelineEditor::Table), Qt::Unchecked);
    QVERIFY(!editor->strategyBox(QStringLiteral("public.orders"))->isEnabled());
    QVERIFY(chosen(editor->strategyBox(QStringLiteral("public.orders"))) == core::Strategy::Cursor);
    QVERIFY(item->text(PipelineEditor::Reason).contains(QStringLiteral("picked up by include_tables")));
    editor->selectTable(QStringLiteral("public.orders"));
    QVERIFY(editor->selectedLabel()->text().contains(QStringLiteral("picked up by include_tables")));
    QVERIFY(!editor->slaEdit()->isEnabled());
    QCOMPARE(editor->settingsTabs()->tabText(3), QStringLiteral("Pa&tterns (1 picked up)"));
    QCOMPARE(editor->pipeline(), stored.pipelines.at(0));
    editor->resize(1180, 700);
    saveShot(editor, QStringLiteral("pipeline-editor-picked-up"));

    // Ticked, it is listed with its settings as a start; unticked, picked up again as it was.
    editor->setIncluded(QStringLiteral("public.orders"), true);
    QCOMPARE(item->checkState(PipelineEditor::Table), Qt::Checked);
    QVERIFY(!tableOf(editor->pipeline(), "public.orders").discovered);
    QVERIFY(editor->strategyBox(QStringLiteral("public.orders"))->isEnabled());
    editor->setIncluded(QStringLiteral("public.orders"), false);
    QCOMPARE(item->checkState(PipelineEditor::Table), Qt::PartiallyChecked);
    QCOMPARE(editor->pipeline(), stored.pipelines.at(0));

    // An edit of the listed table saves; the picked-up one stays picked up, out of the YAML.
    editor->selectTable(QStringLiteral("public.plans"));
    editor->slaEdit()->setText(QStringLiteral("15m"));
    QVERIFY2(editor->problem().isEmpty(), qPrintable(editor->problem()));
    STEP(bench.ok(editor));
    const core::Workspace after = bench.stored();
    QCOMPARE(after.pipelines.at(0).tables.size(), std::size_t{2});
    QCOMPARE(tableOf(after.pipelines.at(0), "public.plans").freshnessSla, std::optional(core::Millis(900'000)));
    QCOMPARE(tableOf(after.pipelines.at(0), "public.orders"), orders);
    const QString yamlPath = bench.path("exported.yaml");
    QVERIFY(page->exportFile(yamlPath));
    QVERIFY2(!readText(yamlPath).contains(QStringLiteral("orders")), qPrintable(readText(yamlPath)));
}

QTEST_MAIN(TestPipelineEditor)
#include "tst_pipelineeditor.moc"
