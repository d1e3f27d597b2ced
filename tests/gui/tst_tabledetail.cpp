// A table's detail and Pause / Resume in the app, against real Postgres: a double-click on the
// Tables page opens the table's detail with its facts, its own lag chart (only its series and
// its SLA) and its events newest first; Pause… (confirmed) holds a CDC table while the other
// table keeps streaming, Resume… (confirmed, saying it re-copies through the guarded merge)
// brings it back with every change made meanwhile. A table applied from YAML with a column
// mapping, a row filter and deletes: ignore shows them in its detail (the masks' kinds, never a
// key). Screenshots go to $DRIFTLESS_ARTIFACTS.

#include "ui/backfillrunner.h"
#include "ui/dialogs/tabledetaildialog.h"
#include "ui/enginebridge.h"
#include "ui/models/eventsmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/tablespage.h"
#include "ui/pauserunner.h"
#include "ui/widgets/lagchart.h"

#include "core/model/workspace.h"
#include "core/state/statestore.h"
#include "tests/support/guisupport.h"
#include "tests/support/testsupport.h"

#include <QLabel>
#include <QLineSeries>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>

#include <cmath>
#include <fstream>

using namespace driftless;
using driftless::test::saveShot;
using driftless::ui::EngineBridge;
using driftless::ui::TablesModel;

namespace {

const char *kSchema = R"sql(
CREATE TABLE orders (id bigint PRIMARY KEY, customer text NOT NULL, total numeric(12,2) NOT NULL,
                     updated_at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL,
                        updated_at timestamptz NOT NULL DEFAULT clock_timestamp());
INSERT INTO orders (id, customer, total) SELECT g, 'customer ' || (g % 50), g * 1.5 FROM generate_series(1, 2000) g;
INSERT INTO customers (id, name) SELECT g, 'customer ' || g FROM generate_series(1, 50) g;
)sql";
const char *kOrders = "SELECT id, customer, total, updated_at FROM orders";
const char *kCustomers = "SELECT id, name, updated_at FROM customers";

core::Workspace workspaceFor(const std::string &pipeline, const test::PgTestDb &src, const test::PgTestDb &dst)
{
    core::Workspace ws;
    ws.endpoints["app"] = test::pgEndpoint("app", src.name());
    ws.endpoints["dw"] = test::pgEndpoint("dw", dst.name());
    core::PipelineSpec p;
    p.name = pipeline;
    p.source = "app";
    p.target = "dw";
    core::TableSpec orders;
    orders.table = {"public", "orders"};
    orders.strategy = core::Strategy::Cdc;
    orders.freshnessSla = core::Millis(120'000);
    core::TableSpec customers;
    customers.table = {"public", "customers"};
    customers.strategy = core::Strategy::Cursor;
    customers.cursor = "updated_at";
    customers.lookback = "5m";
    customers.every = core::Millis(1000);
    p.tables = {orders, customers};
    ws.pipelines = {p};
    return ws;
}

std::string hashOf(const test::PgTestDb &db, const char *select)
{
    auto c = db.connect();
    return test::pgHash(c, select, "id");
}

} // namespace

class TestTableDetail : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useTestSettings(); }
    void detailOpensOnDoubleClickAndPauseResumeRoundTrips();
    void detailShowsTheTablesMapping();
};

void TestTableDetail::detailOpensOnDoubleClickAndPauseResumeRoundTrips()
{
    test::PgTestDb src("detail_src");
    test::PgTestDb dst("detail_dst");
    src.exec(kSchema);
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    const std::string pipeline = test::uniqueName("detail");
    const auto now = core::StateStore::nowMs();
    {
        core::StateStore store(statePath);
        store.applyWorkspace(workspaceFor(pipeline, src, dst));
        // 40 minutes of history: a few seconds behind, one spike past the 120 s SLA.
        for (std::int64_t t = now - 40 * 60'000; t <= now - 60'000; t += 20'000) {
            const double minutes = static_cast<double>(now - t) / 60'000.0;
            double lag = 3 + 2 * std::sin(minutes / 2);
            if (minutes > 14 && minutes < 19)
                lag += 160 * std::sin((minutes - 14) / 5 * M_PI);
            store.addLagSample({pipeline, "public.orders", t, lag, 0});
            store.addLagSample({pipeline, "public.customers", t, 20 + 10 * std::sin(minutes), 0});
        }
    }

    EngineBridge engine;
    TablesModel model;
    QObject::connect(&engine, &EngineBridge::snapshotReady, &model, &TablesModel::setSnapshot);
    ui::BackfillRunner runner(&engine);
    ui::TablesPage page(&model, &runner);
    page.resize(1180, 360);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    engine.open(QString::fromStdString(statePath));
    QTRY_COMPARE(model.rowCount(), 2);
    engine.start();
    QTRY_COMPARE(engine.state(), EngineBridge::State::Running);
    const QString p = QString::fromStdString(pipeline);
    const QString orders = QStringLiteral("public.orders");
    const int row = model.rowOf(p, orders);
    QTRY_VERIFY_WITH_TIMEOUT(model.report(row).state == core::TableState::Streaming, 60000);
    QTRY_VERIFY_WITH_TIMEOUT(hashOf(src, kOrders) == hashOf(dst, kOrders), 30000);

    // Double-click the orders row: its detail opens.
    QVERIFY(!page.detail());
    const QModelIndex cell = page.proxy()->mapFromSource(model.index(row, TablesModel::Table));
    const QPoint at = page.view()->visualRect(cell).center();
    // The view emits doubleClicked() for the row the press landed on.
    QTest::mousePress(page.view()->viewport(), Qt::LeftButton, {}, at);
    QTest::mouseDClick(page.view()->viewport(), Qt::LeftButton, {}, at);
    QTRY_VERIFY(page.detail());
    ui::TableDetailDialog *detail = page.detail();
    QVERIFY(QTest::qWaitForWindowExposed(detail));
    QCOMPARE(detail->pipeline(), p);
    QCOMPARE(detail->table(), orders);
    QCOMPARE(detail->fact(QStringLiteral("strategy"))->text(), QStringLiteral("cdc"));
    QTRY_COMPARE(detail->fact(QStringLiteral("state"))->text(), QStringLiteral("streaming"));
    QVERIFY2(detail->fact(QStringLiteral("checkpoint"))->text().startsWith(QStringLiteral("LSN ")),
             qPrintable(detail->fact(QStringLiteral("checkpoint"))->text()));
    QVERIFY(detail->fact(QStringLiteral("target"))->text().endsWith(QStringLiteral("public.orders")));
    QCOMPARE(detail->fact(QStringLiteral("rows"))->text(), QLocale().toString(2000));
    QCOMPARE(detail->fact(QStringLiteral("paused"))->text(), QStringLiteral("not paused"));
    QVERIFY(detail->fact(QStringLiteral("freshness"))->text().contains(QStringLiteral("SLA 2 min")));

    // Its own chart: this table's lag (the stored history) and its SLA, no other table's.
    ui::LagChart *chart = detail->lagChart();
    QTRY_VERIFY_WITH_TIMEOUT(chart->historyLoaded() && chart->lagSeries(p, orders), 20000);
    QVERIFY(!chart->lagSeries(p, QStringLiteral("public.customers")));
    QVERIFY2(chart->lagPoints(p, orders).size() >= 100,
             qPrintable(QString::number(chart->lagPoints(p, orders).size())));
    QLineSeries *sla = chart->slaSeries(p, orders);
    QVERIFY(sla);
    QCOMPARE(sla->at(0).y(), 120.0);
    QCOMPARE(sla->pen().style(), Qt::DashLine);

    // Its events, newest first, only its own, each level with an icon.
    QTRY_VERIFY_WITH_TIMEOUT(detail->eventsLoaded() && detail->eventsModel()->rowCount() > 0, 10000);
    auto *events = detail->eventsModel();
    bool sawLoad = false;
    for (int r = 0; r < events->rowCount(); ++r) {
        QCOMPARE(events->index(r, ui::EventsModel::Table).data().toString(), orders);
        QVERIFY(!events->index(r, ui::EventsModel::Level).data(Qt::DecorationRole).isNull());
        QVERIFY(!events->index(r, ui::EventsModel::Level).data().toString().isEmpty());
        if (r > 0)
            QVERIFY(events->event(r - 1).id > events->event(r).id);
        sawLoad = sawLoad || events->event(r).kind == "load_done";
    }
    QVERIFY(sawLoad);
    QVERIFY(detail->eventsView()->isColumnHidden(ui::EventsModel::Table));

    // Pause from the detail: the confirmation says what happens; Cancel changes nothing.
    QVERIFY(detail->pauseButton()->isEnabled());
    QVERIFY(!detail->resumeButton()->isEnabled());
    QTest::mouseClick(detail->pauseButton(), Qt::LeftButton);
    QTRY_VERIFY(detail->confirmation());
    QString said = detail->confirmation()->informativeText();
    QVERIFY2(said.contains(QStringLiteral("the pipeline's other tables keep streaming")), qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("Resume re-copies the table through the guarded merge; only rows that differ "
                                          "are written")),
             qPrintable(said));
    QVERIFY(said.contains(QStringLiteral("The running sync takes it within a second.")));
    saveShot(detail->confirmation(), QStringLiteral("dialog-pause"));
    detail->confirmation()->button(QMessageBox::Cancel)->click();
    QTRY_VERIFY(!detail->confirmation());
    QVERIFY(core::StateStore(statePath).pausedTables().empty());

    QSignalSpy paused(page.pauseRunner(), &ui::PauseRunner::finished);
    QTest::mouseClick(detail->pauseButton(), Qt::LeftButton);
    QTRY_VERIFY(detail->confirmation());
    detail->confirmation()->findChild<QPushButton *>(QStringLiteral("confirmPause"))->click();
    QVERIFY(paused.wait(10000));
    QVERIFY2(paused.first().at(4).toBool(), qPrintable(paused.first().at(5).toString()));
    QCOMPARE(core::StateStore(statePath).pausedTables().size(), 1u);
    QTRY_VERIFY_WITH_TIMEOUT(model.report(row).paused && model.report(row).state == core::TableState::Paused, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(dst.scalar("SELECT position FROM _driftless.checkpoints WHERE source_table = "
                                        "'public.orders'")
                                     .find("\"paused\":true") != std::string::npos,
                             10000);
    QTRY_VERIFY(detail->resumeButton()->isEnabled());
    QVERIFY(!detail->pauseButton()->isEnabled());
    QVERIFY(detail->fact(QStringLiteral("paused"))->text() != QStringLiteral("not paused"));
    QCOMPARE(model.index(row, TablesModel::State).data().toString(), QStringLiteral("paused"));
    QVERIFY(!model.index(row, TablesModel::State).data(Qt::DecorationRole).isNull());

    // While it is paused the other table syncs; orders stays as it was.
    const std::string before = hashOf(dst, kOrders);
    src.exec("INSERT INTO orders (id, customer, total) SELECT g, 'late', 1 FROM generate_series(3001, 3100) g");
    src.exec("UPDATE orders SET total = total + 1, updated_at = clock_timestamp() WHERE id % 10 = 0");
    src.exec("DELETE FROM orders WHERE id BETWEEN 500 AND 549");
    src.exec("INSERT INTO customers (id, name) VALUES (51, 'while orders is paused')");
    QTRY_VERIFY_WITH_TIMEOUT(hashOf(src, kCustomers) == hashOf(dst, kCustomers), 30000);
    QTest::qWait(1500);
    QCOMPARE(hashOf(dst, kOrders), before);

    page.selectTable(p, orders);
    QTRY_VERIFY(page.resumeButton()->isEnabled());
    QVERIFY(!page.pauseButton()->isEnabled());
    QTest::qWait(200);
    QCOMPARE(page.width(), 1180); // the buttons leave room: no window wider than asked
    QVERIFY2(page.findChild<QLabel *>(QStringLiteral("tablesSummary"))->text().contains(QStringLiteral("1 paused")),
             qPrintable(page.findChild<QLabel *>(QStringLiteral("tablesSummary"))->text()));
    saveShot(&page, QStringLiteral("tables-paused"));
    QTRY_VERIFY_WITH_TIMEOUT(detail->eventsModel()->rowCount() > 0 && detail->eventsModel()->event(0).kind == "paused",
                             10000);
    QTest::qWait(300);
    saveShot(detail, QStringLiteral("table-detail-paused"));

    // Resume from the page: the confirmation says the table is re-copied through the merge.
    QTest::mouseClick(page.resumeButton(), Qt::LeftButton);
    QTRY_VERIFY(page.confirmation());
    said = page.confirmation()->informativeText();
    QVERIFY2(said.contains(QStringLiteral("re-copies the table through the guarded merge; only rows that differ are "
                                          "written")),
             qPrintable(said));
    saveShot(page.confirmation(), QStringLiteral("dialog-resume"));
    QSignalSpy resumed(page.pauseRunner(), &ui::PauseRunner::finished);
    page.confirmation()->findChild<QPushButton *>(QStringLiteral("confirmResume"))->click();
    QVERIFY(resumed.wait(10000));
    QVERIFY2(resumed.first().at(4).toBool(), qPrintable(resumed.first().at(5).toString()));
    QVERIFY(core::StateStore(statePath).pausedTables().empty());

    // Every change made during the pause arrives; the table streams again.
    QTRY_VERIFY_WITH_TIMEOUT(hashOf(src, kOrders) == hashOf(dst, kOrders), 60000);
    QTRY_VERIFY_WITH_TIMEOUT(model.report(row).state == core::TableState::Streaming && !model.report(row).paused,
                             30000);
    QTRY_VERIFY(detail->pauseButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(detail->eventsModel()->rowCount() > 0 &&
                                 detail->eventsModel()->event(0).message.find("re-backfill done") != std::string::npos,
                             10000);
    QTest::qWait(300);
    saveShot(detail, QStringLiteral("table-detail"));

    detail->close();
    engine.stop();
    QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineBridge::State::Stopped, 30000);
}

void TestTableDetail::detailShowsTheTablesMapping()
{
    test::PgTestDb src("detail_map_src");
    test::PgTestDb dst("detail_map_dst");
    src.exec(R"sql(
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, email text, ssn text, phone text, notes text,
                        internal_notes text, card text, tenant_id int NOT NULL,
                        updated_at timestamptz NOT NULL DEFAULT clock_timestamp());
INSERT INTO customers (id, name, email, ssn, phone, notes, internal_notes, card, tenant_id)
SELECT g, 'name ' || g, 'c' || g || '@example.com', '123-45-' || g, '555-01' || g, 'long notes ' || g,
       'secret ' || g, '4111' || g, CASE WHEN g % 5 = 0 THEN 7 ELSE 42 END FROM generate_series(1, 200) g;
)sql");
    test::TempDir dir;
    const std::string statePath = dir.file("workspace.db");
    const std::string keyFile = dir.file("hmac.key");
    const std::string key = "fedcba9876543210fedcba9876543210";
    std::ofstream(keyFile) << key << "\n";
    const std::string pipeline = test::uniqueName("detail_map");
    // The user's path: a YAML file and driftless-cli apply.
    const std::string yaml = dir.file("workspace.yaml");
    std::ofstream(yaml) << "endpoints:\n"
                           "  app: { kind: postgres, dsn: \""
                        << test::pgEndpoint("app", src.name()).dsn
                        << "\" }\n"
                           "  dw: { kind: postgres, dsn: \""
                        << test::pgEndpoint("dw", dst.name()).dsn
                        << "\" }\n"
                           "pipelines:\n"
                           "  - name: "
                        << pipeline
                        << "\n"
                           "    source: app\n"
                           "    target: dw\n"
                           "    tables:\n"
                           "      - table: public.customers\n"
                           "        strategy: cursor\n"
                           "        cursor: updated_at\n"
                           "        every: 5s\n"
                           "        target_table: crm_customers\n"
                           "        columns:\n"
                           "          exclude: [internal_notes]\n"
                           "          rename: { email: email_address }\n"
                           "          mask:\n"
                           "            ssn: { hash: hmac-sha256, key: \"file:"
                        << keyFile
                        << "\" }\n"
                           "            phone: { keep_last: 4 }\n"
                           "            notes: { truncate: 7 }\n"
                           "            card: { null: true }\n"
                           "        where: \"tenant_id = 42\"\n"
                           "        deletes: ignore\n";
    const auto applied = test::runCli({"--state", statePath, "apply", yaml});
    QVERIFY2(applied.exitCode == 0, (applied.out + applied.err).c_str());

    EngineBridge engine;
    TablesModel model;
    QObject::connect(&engine, &EngineBridge::snapshotReady, &model, &TablesModel::setSnapshot);
    ui::BackfillRunner runner(&engine);
    ui::TablesPage page(&model, &runner);
    page.resize(1180, 360);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    engine.open(QString::fromStdString(statePath));
    QTRY_COMPARE(model.rowCount(), 1);
    engine.start();
    QTRY_COMPARE(engine.state(), EngineBridge::State::Running);
    // The target holds the filtered rows with the mapping applied (compared in SQL on each side).
    const char *sourceSide = "SELECT id, name, email, left(notes, 7), NULL::text FROM customers WHERE tenant_id = 42";
    const char *targetSide = "SELECT id, name, email_address, notes, card FROM public.crm_customers";
    auto synced = [&] {
        try {
            return hashOf(src, sourceSide) == hashOf(dst, targetSide);
        } catch (const std::exception &) {
            return false; // the target table is not there yet
        }
    };
    QTRY_VERIFY_WITH_TIMEOUT(synced(), 120000);

    const QString p = QString::fromStdString(pipeline);
    const int row = model.rowOf(p, QStringLiteral("public.customers"));
    const QModelIndex cell = page.proxy()->mapFromSource(model.index(row, TablesModel::Table));
    const QPoint at = page.view()->visualRect(cell).center();
    QTest::mousePress(page.view()->viewport(), Qt::LeftButton, {}, at);
    QTest::mouseDClick(page.view()->viewport(), Qt::LeftButton, {}, at);
    QTRY_VERIFY(page.detail());
    ui::TableDetailDialog *detail = page.detail();
    QVERIFY(QTest::qWaitForWindowExposed(detail));
    QVERIFY(detail->fact(QStringLiteral("target"))->text().endsWith(QStringLiteral("crm_customers")));
    QCOMPARE(detail->fact(QStringLiteral("columns"))->text(),
             QStringLiteral("left out: internal_notes\nrenamed: email \u2192 email_address\nmasked: ssn (hmac-sha256), "
                            "phone (keep last 4), notes (truncate to 7), card (null)"));
    QCOMPARE(detail->fact(QStringLiteral("filter"))->text(), QStringLiteral("where tenant_id = 42"));
    QVERIFY2(detail->fact(QStringLiteral("deletes"))->text().startsWith(QStringLiteral("ignore")),
             qPrintable(detail->fact(QStringLiteral("deletes"))->text()));
    // The mask's kind only: neither the key nor where it is kept, nor a value it hides.
    for (const QLabel *label : detail->findChildren<QLabel *>()) {
        QVERIFY2(!label->text().contains(QString::fromStdString(key)), qPrintable(label->text()));
        QVERIFY2(!label->text().contains(QStringLiteral("hmac.key")), qPrintable(label->text()));
        QVERIFY2(!label->text().contains(QStringLiteral("123-45-")), qPrintable(label->text()));
    }
    QTRY_VERIFY_WITH_TIMEOUT(detail->eventsLoaded(), 10000);
    // For the picture: a few lag samples (one every 5 s while the sync runs).
    ui::LagChart *chart = detail->lagChart();
    QTRY_VERIFY_WITH_TIMEOUT(chart->historyLoaded() && chart->lagSeries(p, QStringLiteral("public.customers")) &&
                                 chart->lagSeries(p, QStringLiteral("public.customers"))->count() >= 3,
                             60000);
    QTest::qWait(300);
    saveShot(detail, QStringLiteral("table-detail-mapping"));

    detail->close();
    engine.stop();
    QTRY_COMPARE_WITH_TIMEOUT(engine.state(), EngineBridge::State::Stopped, 30000);
}

QTEST_MAIN(TestTableDetail)
#include "tst_tabledetail.moc"
