// The app attached to a headless agent: driftless-cli serve --tls runs the engine on another
// port (here the same machine; the app talks to it only over HTTPS), the window shows its
// tables and marks which engine it shows, pauses, resumes and backfills a table there through
// the Tables page and sees the result (in its pages, in the agent's state file, in the target's
// rows). A wrong token is refused (401) and the agent records it; SIGTERM of the agent leaves
// the window saying "agent unreachable", and it reconnects by itself when the agent is back; an
// agent with another certificate is refused. Screenshots go to $DRIFTLESS_ARTIFACTS.

#include "ui/agentlink.h"
#include "ui/enginebridge.h"
#include "ui/mainwindow.h"
#include "ui/models/eventsmodel.h"
#include "ui/models/reconcilemodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/lagpage.h"
#include "ui/pages/reconcilepage.h"
#include "ui/pages/slotspage.h"
#include "ui/pages/tablespage.h"
#include "ui/pages/workspacepage.h"
#include "ui/reconcilerunner.h"
#include "ui/slotmonitor.h"

#include "core/base/clock.h"
#include "core/db/sqlitedb.h"
#include "tests/support/guisupport.h"
#include "tests/support/testsupport.h"

#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTest>
#include <QTimer>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <memory>
#include <regex>
#include <thread>

using namespace driftless;
using driftless::test::hasEvent;
using driftless::test::saveShot;
using driftless::ui::AgentEndpoint;
using driftless::ui::EngineBridge;
using driftless::ui::MainWindow;
using driftless::ui::TablesModel;

namespace {

const char *kOrders = "SELECT id, name, amount FROM public.orders";

/// Clicks `button` in the page's confirmation as soon as it shows one.
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
    QTimer::singleShot(0, page, [attempt] { (*attempt)(200); });
}

struct Agent {
    std::string state;
    std::string log;
    int pid = 0;
    int port = 0;
    std::string fingerprint;

    /// serve --tls on `listenPort` (0: a free one); waits until it answers.
    void start(const std::string &logFile, int listenPort = 0)
    {
        log = logFile;
        pid = test::spawnCli({"--state", state, "serve", "--tls", "--listen", "127.0.0.1:" + std::to_string(listenPort),
                              "--monitor-every", "500ms"},
                             {}, log);
        std::regex re("agent API at https://127\\.0\\.0\\.1:([0-9]+)/api/v1/"), fp("fingerprint ([0-9A-F:]{95})");
        port = 0;
        for (int i = 0; i < 1200 && (port == 0 || fingerprint.empty()); ++i) {
            std::smatch m;
            const std::string out = test::readFile(log);
            if (std::regex_search(out, m, re))
                port = std::stoi(m[1]);
            if (std::regex_search(out, m, fp))
                fingerprint = m[1];
            if (port == 0 || fingerprint.empty())
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    void stop()
    {
        if (pid <= 0)
            return;
        ::kill(pid, SIGTERM);
        test::waitPid(pid, 120);
        pid = 0;
    }
    ~Agent()
    {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            test::waitPid(pid, 30);
        }
    }
    std::string token() const
    {
        auto r = test::runCli({"--state", state, "agent-token"});
        return r.out.substr(0, r.out.find('\n'));
    }
    AgentEndpoint endpoint() const
    {
        AgentEndpoint e;
        e.url = QStringLiteral("https://127.0.0.1:%1").arg(port);
        e.token = QString::fromStdString(token());
        e.fingerprint = QString::fromStdString(fingerprint);
        return e;
    }
    long long events(const std::string &kind, const std::string &like) const
    {
        core::SqliteDb db(state, core::SqliteDb::Mode::ReadOnly);
        return db.scalarInt("SELECT count(*) FROM events WHERE kind = '" + kind + "' AND message LIKE '" + like + "'");
    }
};

const core::TableReport *reportOf(const TablesModel *model, const std::string &pipeline, const char *table)
{
    const int row = model->rowOf(QString::fromStdString(pipeline), QString::fromLatin1(table));
    return row < 0 ? nullptr : &model->report(row);
}

QString engineText(MainWindow &w)
{
    auto *label = w.statusBar()->findChild<QLabel *>(QStringLiteral("engineState"));
    return label ? label->toolTip() : QString();
}

} // namespace

class TestAgentAttach : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        test::useTestSettings();
        QSettings().remove(QStringLiteral("agents/recent")); // a previous run's agents
    }
    void theWindowShowsAndDrivesAnAgent();
    void aFirstConnectShowsTheFingerprintToConfirmAndPinsIt();
};

void TestAgentAttach::theWindowShowsAndDrivesAnAgent()
{
    test::PgTestDb src("gui_agent_src");
    test::PgTestDb dst("gui_agent_dst");
    src.exec("CREATE TABLE plans (id bigint PRIMARY KEY, name text);"
             "CREATE TABLE orders (id bigint PRIMARY KEY, name text, amount numeric(12,2));"
             "INSERT INTO plans SELECT g, 'plan ' || g FROM generate_series(1, 20) g;"
             "INSERT INTO orders SELECT g, 'order ' || g, g * 1.25 FROM generate_series(1, 3000) g;");
    test::TempDir dir;
    const std::string pipeline = test::uniqueName("remote");
    const auto &s = test::servers();
    const std::string host = "host=127.0.0.1 port=" + std::to_string(s.pgPort) + " user=" + s.pgUser;
    test::writeFile(dir.file("ws.yaml"), "endpoints:\n"
                                         "  app: { kind: postgres, dsn: \"" +
                                             host + " dbname=" + src.name() +
                                             "\" }\n"
                                             "  dw: { kind: postgres, dsn: \"" +
                                             host + " dbname=" + dst.name() +
                                             "\" }\n"
                                             "pipelines:\n"
                                             "  - name: " +
                                             pipeline +
                                             "\n    source: app\n    target: dw\n    tables:\n"
                                             "      - { table: public.plans, strategy: full_refresh, every: 30s }\n"
                                             "      - { table: public.orders, strategy: cdc, page_size: 500 }\n");
    Agent agent;
    agent.state = dir.file("agent.db");
    auto applied = test::runCli({"--state", agent.state, "apply", "--no-check", dir.file("ws.yaml")});
    QVERIFY2(applied.exitCode == 0, applied.err.c_str());
    agent.start(dir.file("serve-1.log"));
    QVERIFY2(agent.port > 0 && !agent.fingerprint.empty(), test::readFile(agent.log).c_str());

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    w.resize(1280, 560);
    w.show();
    w.pages()->setCurrentWidget(w.tablesPage()); // the Dashboard is the first page
    QVERIFY(QTest::qWaitForWindowExposed(&w));

    // A wrong token: refused, said so, and the agent records it.
    AgentEndpoint wrong = agent.endpoint();
    wrong.token = QString(64, QLatin1Char('0'));
    w.connectToAgent(wrong);
    QTRY_VERIFY_WITH_TIMEOUT(engineText(w).contains(QStringLiteral("refused the token (401)")), 30000);
    QCOMPARE(w.tablesModel()->rowCount(), 0);
    QTRY_VERIFY_WITH_TIMEOUT(agent.events("agent_unauthorized", "%from 127.0.0.1%") >= 1, 30000);
    QCOMPARE(agent.events("agent_unauthorized", "%from 127.0.0.1%"), 1LL); // polling stopped at the first 401

    // The right one: the agent's tables, and a marker of which engine the window shows.
    w.connectToAgent(agent.endpoint());
    auto *model = w.tablesModel();
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 2, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(reportOf(model, pipeline, "public.orders") &&
                                 reportOf(model, pipeline, "public.orders")->state == core::TableState::Streaming,
                             120000);
    const QString label = QStringLiteral("127.0.0.1:%1").arg(agent.port);
    QTRY_VERIFY(engineText(w).startsWith(QStringLiteral("Agent %1: Engine running").arg(label)));
    QVERIFY2(w.windowTitle().contains(label) && w.windowTitle().contains(QStringLiteral("agent")),
             qPrintable(w.windowTitle()));
    auto *where = w.statusBar()->findChild<QLabel *>(QStringLiteral("workspacePath"));
    QVERIFY2(where && where->text().startsWith(QStringLiteral("Agent: https://%1").arg(label)),
             qPrintable(where ? where->text() : QString()));
    QCOMPARE(w.recentAgents().value(0).url, agent.endpoint().url);
    QCOMPARE(w.recentAgents().value(0).fingerprint, agent.endpoint().fingerprint);
    QCOMPARE(w.recentAgents().size(), 1); // the refused attempt was the same address
    saveShot(&w, QStringLiteral("mainwindow-agent"));

    // The Slots page: the agent's reading of the source's slots, not this machine's.
    w.slotMonitor()->refresh();
    const std::string slot = "driftless_" + pipeline;
    auto agentHasSlot = [&] {
        for (const auto &src : w.slotMonitor()->sample().sources)
            for (const auto &r : src.replicationSlots)
                if (r.slot == slot && r.owner == pipeline && r.active)
                    return true;
        return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT((w.slotMonitor()->refresh(), agentHasSlot()), 60000);
    // The Lag page: history the agent recorded (here: a sample put in its file 20 minutes ago,
    // before the window ever saw the table), read through the agent.
    const std::int64_t old = core::wallClockMs() - 20 * 60 * 1000;
    {
        core::SqliteDb db(agent.state, core::SqliteDb::Mode::ReadWrite);
        db.exec("INSERT INTO lag_samples (pipeline, table_name, ts_ms, lag_seconds, rows_per_second) VALUES ('" +
                pipeline + "', 'public.orders', " + std::to_string(old) + ", 42.5, 10)");
    }
    w.pages()->setCurrentWidget(w.lagPage()); // a hidden chart waits until it is shown
    w.lagPage()->reload();
    auto hasOldPoint = [&] {
        for (const QPointF &p :
             w.lagPage()->lagPoints(QString::fromStdString(pipeline), QStringLiteral("public.orders")))
            if (std::abs(p.x() - static_cast<double>(old)) < 1000 && std::abs(p.y() - 42.5) < 0.01)
                return true;
        return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(w.lagPage()->historyLoaded() && hasOldPoint(), 30000);
    saveShot(&w, QStringLiteral("mainwindow-agent-lag"));
    w.pages()->setCurrentWidget(w.slotsPage());
    saveShot(&w, QStringLiteral("mainwindow-agent-slots"));
    w.pages()->setCurrentWidget(w.tablesPage());

    // Pause through the Tables page: the agent pauses it.
    auto *page = w.tablesPage();
    page->selectTable(QString::fromStdString(pipeline), QStringLiteral("public.orders"));
    QTRY_VERIFY(page->pauseButton()->isEnabled());
    acceptWhenShown(page, QStringLiteral("confirmPause"));
    QTest::mouseClick(page->pauseButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(reportOf(model, pipeline, "public.orders")->state == core::TableState::Paused, 30000);
    {
        auto st = test::runCli({"--state", agent.state, "status", "--json"});
        QVERIFY2(st.out.find("\"paused\": true") != std::string::npos, st.out.c_str());
    }
    QTRY_VERIFY_WITH_TIMEOUT(hasEvent(w.eventsModel(), "agent_control", "paused " + pipeline + "/public.orders"),
                             30000);
    QCOMPARE(agent.events("agent_control", "paused " + pipeline + "/public.orders (agent API, from 127.0.0.1)"), 1LL);
    src.exec("UPDATE orders SET amount = amount + 1 WHERE id <= 20");
    page->selectTable(QString::fromStdString(pipeline), QStringLiteral("public.orders"));
    QTRY_VERIFY(page->resumeButton()->isEnabled());
    acceptWhenShown(page, QStringLiteral("confirmResume"));
    QTest::mouseClick(page->resumeButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(reportOf(model, pipeline, "public.orders")->state == core::TableState::Streaming &&
                                 !reportOf(model, pipeline, "public.orders")->backfill,
                             120000);

    // Drift made by hand in the target, then a backfill through the page repairs it there.
    dst.exec(
        "UPDATE public.orders SET name = 'drifted' WHERE id % 100 = 0; DELETE FROM public.orders WHERE id % 97 = 0;");
    {
        auto sc = src.connect(), dc = dst.connect();
        QVERIFY(test::pgHash(dc, kOrders, "id") != test::pgHash(sc, kOrders, "id"));
    }
    page->selectTable(QString::fromStdString(pipeline), QStringLiteral("public.orders"));
    QTRY_VERIFY(page->backfillButton()->isEnabled());
    acceptWhenShown(page, QStringLiteral("confirmBackfill"));
    QTest::mouseClick(page->backfillButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().contains(QStringLiteral("the agent's sync takes it")),
                             30000);
    bool equal = false;
    for (int i = 0; i < 1200 && !equal; ++i) {
        auto sc = src.connect(), dc = dst.connect();
        equal = test::pgHash(dc, kOrders, "id") == test::pgHash(sc, kOrders, "id");
        if (!equal)
            QTest::qWait(100);
    }
    QVERIFY2(equal, test::readFile(agent.log).c_str());
    QTRY_VERIFY_WITH_TIMEOUT(hasEvent(w.eventsModel(), "rebackfill", "re-backfill done"), 60000);
    QTRY_VERIFY_WITH_TIMEOUT(reportOf(model, pipeline, "public.orders")->state == core::TableState::Streaming, 60000);
    QVERIFY(agent.events("agent_control", "re-backfill " + pipeline + "/public.orders:%") >= 1);

    // Reconcile Now on the agent (the Reconciliation page's runner): the agent compares and stores
    // the report, the page lists it, and the agent's own file has it.
    auto *runner = w.reconcileRunner();
    QSignalSpy reconciled(runner, &ui::ReconcileRunner::reconcileFinished);
    QTRY_VERIFY(!runner->busy() && runner->workspace());
    QVERIFY(runner->reconcile(QString::fromStdString(pipeline), {QStringLiteral("public.orders")}) != 0);
    QTRY_VERIFY_WITH_TIMEOUT(reconciled.count() == 1, 120000);
    QVERIFY2(reconciled.first().at(2).toString().isEmpty(), qPrintable(reconciled.first().at(2).toString()));
    const long long reportId = reconciled.first().at(1).toLongLong();
    QVERIFY(reportId > 0);
    auto *reports = w.reconcilePage()->model();
    const auto listed = [reports, reportId] {
        for (int row = 0; row < reports->rowCount(); ++row)
            if (reports->summaryAt(row).reportId == reportId && reports->summaryAt(row).table == "public.orders")
                return reports->summaryAt(row).missing + reports->summaryAt(row).extra +
                           reports->summaryAt(row).different ==
                       0;
        return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(listed(), 30000);
    {
        auto st = test::runCli({"--state", agent.state, "status", "--json"});
        QVERIFY2(st.out.find("\"report_id\": " + std::to_string(reportId)) != std::string::npos, st.out.c_str());
    }
    w.pages()->setCurrentWidget(w.reconcilePage());
    saveShot(&w, QStringLiteral("mainwindow-agent-reconcile"));
    w.pages()->setCurrentWidget(w.tablesPage());

    // The Workspace page stores an edit on the agent, after the agent's checks against its servers.
    {
        std::string yaml = test::readFile(dir.file("ws.yaml"));
        yaml.replace(yaml.find("every: 30s"), 10, "every: 45s");
        test::writeFile(dir.file("ws2.yaml"), yaml);
    }
    QSignalSpy stored(w.workspacePage(), &ui::WorkspacePage::saved);
    w.workspacePage()->importFile(QString::fromStdString(dir.file("ws2.yaml")));
    QTRY_VERIFY_WITH_TIMEOUT(stored.count() == 1, 120000);
    QVERIFY2(stored.first().at(0).toBool(), qPrintable(stored.first().at(1).toString()));
    {
        auto ex = test::runCli({"--state", agent.state, "export"});
        QVERIFY2(ex.out.find("every: 45s") != std::string::npos, ex.out.c_str());
    }
    QTRY_VERIFY_WITH_TIMEOUT(reportOf(model, pipeline, "public.orders")->state == core::TableState::Streaming, 120000);

    // SIGTERM: the window says the agent is unreachable and keeps what it last saw.
    agent.stop();
    QTRY_VERIFY_WITH_TIMEOUT(engineText(w).contains(QStringLiteral("agent unreachable")), 30000);
    QCOMPARE(model->rowCount(), 2);
    auto *notice = page->findChild<QLabel *>(QStringLiteral("tablesNotice"));
    QTRY_VERIFY(notice && notice->isVisible() && notice->text().contains(QStringLiteral("agent unreachable")));
    // What was last seen stays, but how fresh the copies are now is not known.
    QCOMPARE(std::string(core::toString(reportOf(model, pipeline, "public.orders")->freshness)),
             std::string("unknown"));
    QVERIFY(!reportOf(model, pipeline, "public.orders")->lagSeconds);
    saveShot(&w, QStringLiteral("mainwindow-agent-unreachable"));
    // Back on the same port: it reconnects by itself.
    const int port = agent.port;
    agent.start(dir.file("serve-2.log"), port);
    QCOMPARE(agent.port, port);
    QTRY_VERIFY_WITH_TIMEOUT(engineText(w).startsWith(QStringLiteral("Agent %1: Engine running").arg(label)), 60000);
    QTRY_VERIFY(!notice->isVisible());

    // Stop and start the agent's engine from the window.
    w.stopAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(engineText(w).contains(QStringLiteral("stopped on the agent")), 30000);
    QTRY_VERIFY(w.startAction()->isEnabled());
    w.startAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(engineText(w).startsWith(QStringLiteral("Agent %1: Engine running").arg(label)), 30000);

    // Another certificate on that address: refused, the token unsent, and no more polling.
    agent.stop();
    std::filesystem::remove(agent.state + ".agent.crt");
    std::filesystem::remove(agent.state + ".agent.key");
    const std::string pinned = agent.fingerprint;
    agent.fingerprint.clear();
    agent.start(dir.file("serve-3.log"), port);
    QVERIFY(agent.fingerprint != pinned);
    const long long refusedBefore = agent.events("agent_unauthorized", "%");
    QTRY_VERIFY_WITH_TIMEOUT(engineText(w).contains(QStringLiteral("not the pinned")), 60000);
    QVERIFY2(engineText(w).contains(QString::fromStdString(agent.fingerprint)), qPrintable(engineText(w)));
    saveShot(&w, QStringLiteral("mainwindow-agent-certificate-refused"));
    QTest::qWait(2500);
    QCOMPARE(agent.events("agent_unauthorized", "%"), refusedBefore);
    QVERIFY(!w.startAction()->isEnabled());
    agent.stop();
}

void TestAgentAttach::aFirstConnectShowsTheFingerprintToConfirmAndPinsIt()
{
    test::PgTestDb src("gui_agent1_src");
    test::PgTestDb dst("gui_agent1_dst");
    src.exec("CREATE TABLE plans (id bigint PRIMARY KEY, name text); INSERT INTO plans VALUES (1, 'a'), (2, 'b');");
    test::TempDir dir;
    const auto &s = test::servers();
    const std::string host = "host=127.0.0.1 port=" + std::to_string(s.pgPort) + " user=" + s.pgUser;
    test::writeFile(dir.file("ws.yaml"), "endpoints:\n"
                                         "  app: { kind: postgres, dsn: \"" +
                                             host + " dbname=" + src.name() +
                                             "\" }\n"
                                             "  dw: { kind: postgres, dsn: \"" +
                                             host + " dbname=" + dst.name() +
                                             "\" }\n"
                                             "pipelines:\n"
                                             "  - name: first\n    source: app\n    target: dw\n    tables:\n"
                                             "      - { table: public.plans, strategy: full_refresh, every: 30s }\n");
    Agent agent;
    agent.state = dir.file("agent.db");
    auto applied = test::runCli({"--state", agent.state, "apply", "--no-check", dir.file("ws.yaml")});
    QVERIFY2(applied.exitCode == 0, applied.err.c_str());
    agent.start(dir.file("serve.log"));
    QVERIFY2(agent.port > 0, test::readFile(agent.log).c_str());
    const AgentEndpoint e = agent.endpoint();

    auto window = std::make_unique<MainWindow>();
    MainWindow &w = *window;
    w.show();
    w.pages()->setCurrentWidget(w.tablesPage()); // the Dashboard is the first page
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    bool filled = false, asked = false;
    QString question;
    // The dialog and then the question are modal: answered from timers while they run.
    std::function<void()> drive = [&] {
        for (QWidget *top : QApplication::topLevelWidgets()) {
            if (auto *box = qobject_cast<QMessageBox *>(top);
                box && box->objectName() == QLatin1String("trustAgent") && box->isVisible()) {
                question = box->text();
                saveShot(box, QStringLiteral("dialog-trust-agent"));
                asked = true;
                box->button(QMessageBox::Yes)->click();
                return;
            }
            if (top->objectName() == QLatin1String("connectAgentDialog") && top->isVisible() && !filled) {
                top->findChild<QLineEdit *>(QStringLiteral("agentUrl"))->setText(e.url);
                top->findChild<QLineEdit *>(QStringLiteral("agentToken"))->setText(e.token);
                saveShot(top, QStringLiteral("dialog-connect-agent"));
                filled = true;
                top->findChild<QPushButton *>(QStringLiteral("agentConnect"))->click();
            }
        }
        if (!asked)
            QTimer::singleShot(50, &w, drive);
    };
    QTimer::singleShot(0, &w, drive);
    w.connectAgentAction()->trigger();
    QVERIFY(filled && asked);
    QVERIFY2(question.contains(e.fingerprint), qPrintable(question));
    QTRY_COMPARE_WITH_TIMEOUT(w.tablesModel()->rowCount(), 1, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(engineText(w).contains(QStringLiteral("Engine running")), 30000);
    // What was confirmed is what is pinned.
    QCOMPARE(w.recentAgents().value(0).fingerprint, e.fingerprint);
    agent.stop();
}

QTEST_MAIN(TestAgentAttach)
#include "tst_agentattach.moc"
