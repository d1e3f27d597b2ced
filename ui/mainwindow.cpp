#include "ui/mainwindow.h"

#include "ui/snapshotfanout.h"

#include "ui/alertcenter.h"
#include "ui/backfillrunner.h"
#include "ui/dialogs/connectagentdialog.h"
#include "ui/dialogs/helpdialog.h"
#include "ui/models/alertsmodel.h"
#include "ui/models/eventsmodel.h"
#include "ui/models/slotsmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/alertspage.h"
#include "ui/pages/conflictspage.h"
#include "ui/pages/dashboardpage.h"
#include "ui/pages/lagpage.h"
#include "ui/pages/reconcilepage.h"
#include "ui/pages/slotspage.h"
#include "ui/pages/tablespage.h"
#include "ui/pages/workspacepage.h"
#include "ui/reconcilerunner.h"
#include "ui/resources.h"
#include "ui/secrets/secretstore.h"
#include "ui/slotmonitor.h"
#include "ui/snapshotfanout.h"
#include "ui/statusicons.h"
#include "ui/synccontinuity.h"
#include "ui/traynotifier.h"
#include "ui/widgets/screenfit.h"
#include "ui/widgets/tablecopy.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>

#include <map>

namespace driftless::ui {

namespace {
const char *const kGeometryKey = "mainWindow/geometry";
const char *const kStateKey = "mainWindow/state";
const char *const kRecentAgentsKey = "agents/recent";
constexpr int kRecentAgentLimit = 8;
QString tokenKey(const QString &url)
{
    return QStringLiteral("agent:") + url;
}
/// The tray icon's tooltip: how many tables, how fresh the worst is.
QString freshnessLine(const EngineSnapshot &s)
{
    int by[4] = {0, 0, 0, 0}; // ok, warn, breach, unknown
    for (const auto &t : s.tables)
        ++by[t.freshness == core::Freshness::Ok       ? 0
             : t.freshness == core::Freshness::Warn   ? 1
             : t.freshness == core::Freshness::Breach ? 2
                                                      : 3];
    if (s.tables.empty())
        return MainWindow::tr("Driftless");
    const QString worst = by[2]   ? MainWindow::tr("breach")
                          : by[1] ? MainWindow::tr("warn")
                          : by[3] ? MainWindow::tr("unknown")
                                  : MainWindow::tr("ok");
    return MainWindow::tr("Driftless: %1 tables, worst freshness %2 (%3 ok, %4 warn, %5 breach)")
        .arg(s.tables.size())
        .arg(worst)
        .arg(by[0])
        .arg(by[1])
        .arg(by[2]);
}
/// Long enough to read a backfill's outcome, which can be a sentence.
constexpr int kStatusMessageMs = 20'000;
} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent), m_engine(new EngineBridge(this)), m_tablesModel(new TablesModel(this)),
      m_eventsModel(new EventsModel(this)), m_slotsModel(new SlotsModel(this)), m_alertsModel(new AlertsModel(this)),
      m_slotMonitor(new SlotMonitor(m_engine, this)), m_backfill(new BackfillRunner(m_engine, this)),
      m_alertCenter(new AlertCenter(this)), m_tray(new TrayNotifier(this)), m_secrets(new SecretStore(this)),
      m_pages(new QTabWidget(this)), m_tablesPage(new TablesPage(m_tablesModel, m_backfill, m_pages)),
      m_lagPage(new LagPage(m_pages)), m_slotsPage(new SlotsPage(m_slotsModel, m_slotMonitor, m_pages)),
      m_alertsPage(new AlertsPage(m_alertsModel, m_eventsModel, m_pages)),
      m_workspacePage(new WorkspacePage(m_engine, m_secrets, m_pages)), m_pathLabel(new QLabel(this)),
      m_engineLabel(new QLabel(this))
{
    initResources();
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(tr("Driftless"));
    setWindowIcon(namedIcon(QStringLiteral("io.driftless.Driftless")));

    m_pages->setObjectName(QStringLiteral("pages"));
    m_pages->setDocumentMode(true);
    m_pages->addTab(m_tablesPage, tr("Tables"));
    m_lagPage->setEngine(m_engine); // its history is where the engine is
    m_pages->addTab(m_lagPage, tr("Lag"));
    m_slotsPage->setEngine(m_engine);
    m_pages->addTab(m_slotsPage, tr("Slots"));
    m_pages->addTab(m_alertsPage, tr("Alerts && Log"));
    m_pages->addTab(m_workspacePage, tr("Workspace"));
    // Right after Alerts & Log, where drift is noticed.
    m_reconcileRunner = new ReconcileRunner(m_engine, this);
    m_reconcilePage = new ReconcilePage(m_reconcileRunner, m_pages);
    m_pages->insertTab(m_pages->indexOf(m_alertsPage) + 1, m_reconcilePage, tr("Reconciliation"));
    // Beside Reconciliation: the other place where rows that differ wait for a DBA.
    m_conflictsPage = new ConflictsPage(m_engine, m_pages);
    m_pages->insertTab(m_pages->indexOf(m_reconcilePage) + 1, m_conflictsPage, tr("Conflicts"));
    // The first page, and the one shown at start: every pipeline and table at a glance.
    m_dashboardPage = new DashboardPage(m_pages);
    m_pages->insertTab(0, m_dashboardPage, tr("Dashboard"));
    m_pages->setCurrentWidget(m_dashboardPage);
    setCentralWidget(m_pages);
    // The engine's connections get the keychain's passwords at connect time, never in a DSN.
    m_secrets->installAsPasswordProvider();

    createActions();
    createMenus();
    m_pathLabel->setObjectName(QStringLiteral("workspacePath"));
    m_pathLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_engineLabel->setObjectName(QStringLiteral("engineState"));
    statusBar()->addWidget(m_pathLabel, 1);
    statusBar()->addPermanentWidget(m_engineLabel);

    // Who gets each snapshot, in this order; from 2,000 tables one step per event-loop turn, so
    // the first snapshot of a large workspace (every row and tile built) does not stall the
    // window in one piece (B12). The Dashboard makes its new tiles 2,000 a step.
    m_fanout = new SnapshotFanout(2000, this);
    m_fanout->add([this](const EngineSnapshot &s) { m_tablesModel->setSnapshot(s); });
    m_fanout->addInSteps([this](const EngineSnapshot &s) { return m_dashboardPage->setSnapshot(s, 2000); });
    m_fanout->add([this](const EngineSnapshot &s) {
        m_eventsModel->setSnapshot(s);
        // The keychain is asked for the endpoints' passwords before the slots are first read
        // (held meanwhile), so a launch raises no "no password" alert for a password it holds.
        if (s.workspace && !sameWorkspace(s.workspace, m_secretsFor)) {
            m_secretsFor = s.workspace;
            m_secrets->setWorkspace(*s.workspace);
        }
        m_slotMonitor->setSnapshot(s);
        m_alertCenter->setSnapshot(s);
    });
    m_fanout->add([this](const EngineSnapshot &s) {
        m_lagPage->setSnapshot(s);
        m_slotsPage->setSnapshot(s);
        m_reconcilePage->setSnapshot(s);
        m_conflictsPage->setSnapshot(s);
        m_tablesPage->setNotice(s.error);
        m_workspacePage->setSnapshot(s);
        updateActions();
    });
    // Queued: a snapshot lands from the event loop, never inside the bridge's own call, so a
    // model update can never re-enter the bridge.
    connect(m_engine, &EngineBridge::snapshotReady, this, &MainWindow::showSnapshot, Qt::QueuedConnection);
    connect(m_engine, &EngineBridge::stateChanged, this, &MainWindow::showEngineState);
    connect(m_engine, &EngineBridge::statePathChanged, this, &MainWindow::showWhere);
    connect(m_secrets, &SecretStore::passwordRead, this, [this](const QString &key, bool found, const QString &) {
        if (!m_awaitingToken || key != tokenKey(m_awaitingToken->url))
            return;
        AgentEndpoint e = *m_awaitingToken;
        m_awaitingToken.reset();
        const auto token = m_secrets->sessionPassword(key);
        if (found && token && !token->isEmpty()) {
            e.token = *token;
            connectToAgent(e);
        } else {
            chooseAgent(e); // the keychain lost it: ask again, the rest filled in
        }
    });
    connect(m_secrets, &SecretStore::readingChanged, this, [this](bool reading) {
        m_slotMonitor->setHeld(reading);
        updateActions();
    });
    connect(m_slotMonitor, &SlotMonitor::sampleReady, m_slotsModel, &SlotsModel::setSample);
    connect(m_slotMonitor, &SlotMonitor::sampleReady, m_alertCenter, &AlertCenter::setSlotSample);
    connect(m_slotMonitor, &SlotMonitor::sampleReady, m_dashboardPage, &DashboardPage::setSlotSample);
    // The welcome page's first steps are the Workspace page's and the File menu's own.
    connect(m_dashboardPage, &DashboardPage::addEndpointRequested, this, [this] {
        m_pages->setCurrentWidget(m_workspacePage);
        m_workspacePage->addEndpoint();
    });
    connect(m_dashboardPage, &DashboardPage::importYamlRequested, this, [this] {
        m_pages->setCurrentWidget(m_workspacePage);
        m_workspacePage->importYaml();
    });
    connect(m_dashboardPage, &DashboardPage::connectAgentRequested, this, [this] { chooseAgent({}); });
    connect(m_dashboardPage, &DashboardPage::docsRequested, this, [this] { showHelp(1); });
    // A tile opens the table's detail as a double-click on the Tables page does.
    connect(m_dashboardPage, &DashboardPage::tableActivated, this,
            [this](const QString &pipeline, const QString &table) {
                m_tablesPage->openDetail(m_tablesModel->rowOf(pipeline, table));
            });
    // Recover… on a tile or on the Slots page: asked, and its outcome shown, on the Tables page
    // with the pipeline's tables.
    const auto recover = [this](const QString &pipeline) {
        m_pages->setCurrentWidget(m_tablesPage);
        m_tablesPage->selectPipeline(pipeline);
        m_tablesPage->requestRecover(pipeline);
    };
    connect(m_dashboardPage, &DashboardPage::recoverRequested, this, recover);
    // Pause Pipeline… on a tile or a Workspace row: the Tables page's question and request, the
    // one path (the DBA stays where they are; the tile and row show the pause when it lands).
    connect(m_dashboardPage, &DashboardPage::pausePipelineRequested, m_tablesPage, &TablesPage::requestPipelinePaused);
    connect(m_workspacePage, &WorkspacePage::pausePipelineRequested, m_tablesPage, &TablesPage::requestPipelinePaused);
    connect(m_slotsPage, &SlotsPage::recoverRequested, this, recover);
    connect(m_alertCenter, &AlertCenter::alertsChanged, m_alertsModel, &AlertsModel::setAlerts);
    connect(m_alertCenter, &AlertCenter::alertsOpened, m_tray, &TrayNotifier::notify);
    connect(m_tray, &TrayNotifier::activated, this, [this](bool alerts) {
        QApplication::setQuitOnLastWindowClosed(true);
        showNormal();
        raise();
        activateWindow();
        if (alerts)
            m_pages->setCurrentWidget(m_alertsPage);
    });
    m_continuity = new SyncContinuity(m_engine, m_tray, this);
    connect(m_continuity, &SyncContinuity::backgrounded, this, [this] {
        // Hidden, not closed: the app (and its sync) lives on with its tray icon.
        QApplication::setQuitOnLastWindowClosed(false);
        saveWindowState();
        hide();
        m_tray->noteBackground();
    });
    connect(m_tray, &TrayNotifier::quitRequested, this, &MainWindow::quit);
    connect(qApp, &QCoreApplication::aboutToQuit, this, [this] { m_continuity->quitting(); });
    connect(m_tablesPage, &TablesPage::statusMessage, this,
            [this](const QString &message) { statusBar()->showMessage(message, kStatusMessageMs); });
    connect(m_alertsPage, &AlertsPage::alertCountChanged, this, &MainWindow::updateAlertsTab);
    // These pages (and Conflicts, below) say the outcome in a line of their own: the status bar
    // says it only when the DBA has gone to another page meanwhile, not twice on one screen.
    connect(m_workspacePage, &WorkspacePage::statusMessage, this, [this](const QString &message) {
        if (m_pages->currentWidget() != m_workspacePage)
            statusBar()->showMessage(message, kStatusMessageMs);
    });
    connect(m_reconcilePage, &ReconcilePage::statusMessage, this, [this](const QString &message) {
        if (m_pages->currentWidget() != m_reconcilePage)
            statusBar()->showMessage(message, kStatusMessageMs);
    });
    connect(m_conflictsPage, &ConflictsPage::statusMessage, this, [this](const QString &message) {
        if (m_pages->currentWidget() != m_conflictsPage)
            statusBar()->showMessage(message, kStatusMessageMs);
    });
    connect(m_conflictsPage, &ConflictsPage::openCountChanged, this, &MainWindow::updateConflictsTab);
    connect(m_conflictsPage, &ConflictsPage::countsChanged, m_tablesModel, &TablesModel::setConflictCounts);

    // Ctrl+C on any grid copies its selected rows as tab-separated text, with the headers.
    for (QTableView *view : m_pages->findChildren<QTableView *>())
        installTsvCopy(view);

    QSettings settings;
    if (!restoreGeometry(settings.value(QLatin1String(kGeometryKey)).toByteArray()))
        // As wide as a 1366 px laptop allows (bounded to the screen), so the Tables grid shows
        // every column up to Message there without a horizontal scroll.
        screenfit::fit(this, QSize(1320, 680));
    restoreState(settings.value(QLatin1String(kStateKey)).toByteArray());
    m_pathLabel->setText(tr("No workspace open"));
    showEngineState(m_engine->state(), m_engine->message());
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions()
{
    m_open = new QAction(namedIcon(QStringLiteral("open")), tr("&Open Workspace\u2026"), this);
    m_open->setShortcut(QKeySequence::Open);
    m_open->setStatusTip(tr("Open a workspace file (.db)"));
    connect(m_open, &QAction::triggered, this, &MainWindow::chooseWorkspace);

    m_connectAgent = new QAction(tr("&Connect to Agent\u2026"), this);
    m_connectAgent->setObjectName(QStringLiteral("connectAgent"));
    m_connectAgent->setStatusTip(tr("Show and drive the syncs a headless driftless-cli serve runs on a server"));
    connect(m_connectAgent, &QAction::triggered, this, [this] { chooseAgent({}); });

    m_quit = new QAction(tr("&Quit"), this);
    m_quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    m_quit->setMenuRole(QAction::QuitRole);
    connect(m_quit, &QAction::triggered, this, &MainWindow::quit);

    m_start = new QAction(namedIcon(QStringLiteral("start")), tr("&Start Sync"), this);
    m_start->setObjectName(QStringLiteral("startSync"));
    m_start->setStatusTip(tr("Run every pipeline of this workspace on its schedule"));
    connect(m_start, &QAction::triggered, m_engine, &EngineBridge::start);

    m_stop = new QAction(namedIcon(QStringLiteral("stop")), tr("S&top Sync"), this);
    m_stop->setObjectName(QStringLiteral("stopSync"));
    m_stop->setStatusTip(tr("Stop after the batches in flight; nothing half-applied is left behind"));
    connect(m_stop, &QAction::triggered, m_engine, &EngineBridge::stop);

    m_refresh = new QAction(namedIcon(QStringLiteral("refresh")), tr("&Refresh"), this);
    m_refresh->setShortcut(QKeySequence(Qt::Key_F5));
    connect(m_refresh, &QAction::triggered, this, &MainWindow::refresh);

    m_find = new QAction(tr("&Find Table\u2026"), this);
    m_find->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_F));
    connect(m_find, &QAction::triggered, this, [this] {
        m_pages->setCurrentWidget(m_tablesPage);
        m_tablesPage->focusFilter();
    });

    // Ctrl+0, Ctrl+1, ... in the order of the tabs, as the tabs' tooltips say.
    const std::map<QWidget *, QString> names{{m_dashboardPage, tr("&Dashboard")},
                                             {m_tablesPage, tr("&Tables")},
                                             {m_lagPage, tr("&Lag")},
                                             {m_slotsPage, tr("S&lots")},
                                             {m_alertsPage, tr("&Alerts && Log")},
                                             {m_reconcilePage, tr("&Reconciliation")},
                                             {m_conflictsPage, tr("&Conflicts")},
                                             {m_workspacePage, tr("&Workspace")}};
    for (int i = 0; i < m_pages->count() && i < 10; ++i) {
        QWidget *page = m_pages->widget(i);
        const auto name = names.find(page);
        QAction *action = pageAction(name == names.end() ? m_pages->tabText(i) : name->second, Qt::Key_0 + i, page);
        m_pages->setTabToolTip(i, action->shortcut().toString(QKeySequence::NativeText));
        m_showPages.append(action);
    }
}

QAction *MainWindow::pageAction(const QString &text, int key, QWidget *page)
{
    auto *action = new QAction(text, this);
    action->setShortcut(QKeySequence(Qt::CTRL | key));
    connect(action, &QAction::triggered, this, [this, page] { m_pages->setCurrentWidget(page); });
    return action;
}

void MainWindow::refresh()
{
    m_engine->refresh();
    m_slotMonitor->refresh();
    m_lagPage->reload();
    m_reconcilePage->reload();
    m_conflictsPage->reload();
}

void MainWindow::createMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_open);
    file->addAction(m_connectAgent);
    m_recentAgents = file->addMenu(tr("Recent &Agents"));
    m_recentAgents->setObjectName(QStringLiteral("recentAgents"));
    updateRecentAgents();
    file->addSeparator();
    file->addAction(m_quit);

    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(m_find);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    view->addActions(m_showPages);
    view->addSeparator();
    view->addAction(m_refresh);

    QMenu *sync = menuBar()->addMenu(tr("&Sync"));
    sync->addAction(m_start);
    sync->addAction(m_stop);
    sync->addSeparator();
    // Two tables of any two endpoints, no pipeline needed: the report joins the Reconciliation
    // page's list, which is shown with the dialog.
    QAction *compare = sync->addAction(tr("&Compare Tables\u2026"), this, [this] {
        m_pages->setCurrentWidget(m_reconcilePage);
        m_reconcilePage->requestCompare();
    });
    compare->setObjectName(QStringLiteral("compareTablesAction"));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    QAction *docs = help->addAction(tr("&Documentation"), this, [this] { showHelp(1); });
    docs->setObjectName(QStringLiteral("helpDocs"));
    docs->setShortcut(QKeySequence::HelpContents);
    QAction *keys = help->addAction(tr("&Keyboard Shortcuts"), this, [this] { showHelp(0); });
    keys->setObjectName(QStringLiteral("helpShortcuts"));
    help->addSeparator();
    help->addAction(tr("&About Driftless"), this, &MainWindow::showAbout);

    QToolBar *bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->setMovable(false);
    bar->addAction(m_open);
    bar->addSeparator();
    bar->addAction(m_start);
    bar->addAction(m_stop);
    bar->addAction(m_refresh);
}

void MainWindow::openWorkspace(const QString &statePath)
{
    m_engine->open(statePath);
}

void MainWindow::connectToAgent(const AgentEndpoint &endpoint)
{
    rememberAgent(endpoint);
    m_engine->attach(endpoint);
}

void MainWindow::chooseAgent(const AgentEndpoint &initial)
{
    ConnectAgentDialog dialog(initial, this);
    if (dialog.exec() == QDialog::Accepted)
        connectToAgent(dialog.endpoint());
}

void MainWindow::reconnectRecent(const AgentEndpoint &recent)
{
    m_awaitingToken = recent;
    m_secrets->read(tokenKey(recent.url));
}

QList<AgentEndpoint> MainWindow::recentAgents() const
{
    QList<AgentEndpoint> out;
    for (const QString &entry : QSettings().value(QLatin1String(kRecentAgentsKey)).toStringList()) {
        const auto parts = entry.split(QLatin1Char('\t'));
        AgentEndpoint e;
        e.url = parts.value(0);
        e.fingerprint = parts.value(1);
        if (!e.url.isEmpty())
            out << e;
    }
    return out;
}

void MainWindow::rememberAgent(const AgentEndpoint &endpoint)
{
    QStringList entries{endpoint.url + QLatin1Char('\t') + endpoint.fingerprint};
    for (const auto &e : recentAgents())
        if (e.url != endpoint.url && entries.size() < kRecentAgentLimit)
            entries << e.url + QLatin1Char('\t') + e.fingerprint;
    QSettings().setValue(QLatin1String(kRecentAgentsKey), entries);
    if (!endpoint.token.isEmpty())
        m_secrets->store(tokenKey(endpoint.url), endpoint.token);
    updateRecentAgents();
}

void MainWindow::updateRecentAgents()
{
    m_recentAgents->clear();
    const auto agents = recentAgents();
    for (const auto &e : agents) {
        QAction *a = m_recentAgents->addAction(e.url);
        a->setToolTip(e.fingerprint.isEmpty() ? e.url : tr("%1, certificate %2").arg(e.url, e.fingerprint));
        connect(a, &QAction::triggered, this, [this, e] { reconnectRecent(e); });
    }
    m_recentAgents->setEnabled(!agents.isEmpty());
}

void MainWindow::showWhere()
{
    const QString path = m_engine->statePath();
    if (AgentLink *agent = m_engine->agent()) {
        const auto &e = agent->endpoint();
        m_pathLabel->setText(e.fingerprint.isEmpty()
                                 ? tr("Agent: %1").arg(e.url)
                                 : tr("Agent: %1 (certificate %2\u2026)").arg(e.url, e.fingerprint.left(11)));
        setWindowTitle(tr("%1 \u2014 Driftless agent").arg(e.label()));
        return;
    }
    m_pathLabel->setText(tr("Workspace: %1").arg(QDir::toNativeSeparators(path)));
    setWindowTitle(tr("%1 \u2014 Driftless").arg(QFileInfo(path).fileName()));
}

void MainWindow::chooseWorkspace()
{
    const QString current = m_engine->statePath();
    const QString dir = current.isEmpty() ? QDir::homePath() : QFileInfo(current).absolutePath();
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open Workspace"), dir, tr("Driftless workspaces (*.db);;All files (*)"));
    if (!path.isEmpty())
        openWorkspace(path);
}

void MainWindow::showSnapshot(const EngineSnapshot &snapshot)
{
    m_fanout->deliver(snapshot);
    if (snapshot.workspace)
        m_continuity->workspaceShown(snapshot.statePath, [this] { startWhenReady(); });
    m_tray->setStatus(freshnessLine(snapshot));
}

void MainWindow::showEngineState(EngineBridge::State state, const QString &message)
{
    QString text;
    switch (state) {
    case EngineBridge::State::Stopped:
        text = message.isEmpty() ? tr("Engine stopped") : tr("Engine stopped: %1").arg(message);
        break;
    case EngineBridge::State::Starting:
        text = tr("Engine starting\u2026");
        break;
    case EngineBridge::State::Running:
        text = tr("Engine running");
        break;
    case EngineBridge::State::Stopping:
        text = tr("Engine stopping after the batches in flight\u2026");
        break;
    }
    // Which engine the window shows: this machine's, or an agent's.
    if (AgentLink *agent = m_engine->agent())
        text = tr("Agent %1: %2").arg(agent->endpoint().label(), text);
    m_engineLabel->setToolTip(text);
    m_engineLabel->setText(m_engineLabel->fontMetrics().elidedText(text, Qt::ElideRight, 480));
    updateActions();
}

void MainWindow::updateActions()
{
    const auto state = m_engine->state();
    // Starting an empty workspace could only fail; the Tables page says how to fill it. While
    // the keychain is read, the engine would connect without the passwords it holds.
    m_start->setEnabled(m_engine->canStart() && !m_engine->snapshot().tables.empty() && !m_secrets->reading());
    m_start->setToolTip(m_secrets->reading() ? tr("Waiting for the keychain to give the endpoints' passwords")
                                             : m_start->statusTip());
    // --run, or the sync that was running at the last close: started once it can start.
    if (m_startPending && m_start->isEnabled()) {
        m_startPending = false;
        m_engine->start();
    }
    m_stop->setEnabled(state == EngineBridge::State::Starting || state == EngineBridge::State::Running);
}

void MainWindow::updateAlertsTab(int count)
{
    const int tab = m_pages->indexOf(m_alertsPage);
    m_pages->setTabText(tab, count ? tr("Alerts && Log (%1)").arg(count) : tr("Alerts && Log"));
    m_pages->setTabIcon(tab, count ? namedIcon(QStringLiteral("warn")) : QIcon());
}

void MainWindow::updateConflictsTab(int count)
{
    const int tab = m_pages->indexOf(m_conflictsPage);
    m_pages->setTabText(tab, count ? tr("Conflicts (%1)").arg(count) : tr("Conflicts"));
    m_pages->setTabIcon(tab, count ? namedIcon(QStringLiteral("warn")) : QIcon());
    m_pages->setTabToolTip(tab, (count ? tr("%n open conflict(s) of two-way pipelines wait for a decision", "", count) +
                                             QStringLiteral(" (")
                                       : QString()) +
                                    QKeySequence(Qt::CTRL | (Qt::Key_0 + tab)).toString(QKeySequence::NativeText) +
                                    (count ? QStringLiteral(")") : QString()));
}

void MainWindow::showHelp(int topic)
{
    if (!m_help) {
        m_help = new HelpDialog(findChildren<QAction *>(), this);
        m_help->show();
    }
    m_help->topics()->setCurrentRow(topic);
    m_help->raise();
    m_help->activateWindow();
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About Driftless"),
                       tr("<h3>Driftless %1</h3><p>Keeps tables in two databases in sync, and shows that they are.</p>")
                           .arg(QApplication::applicationVersion().toHtmlEscaped()));
}

void MainWindow::showEvent(QShowEvent *event)
{
    // The size asked for before the window knew its screen: at most that screen, once shown.
    if (!m_fitted) {
        m_fitted = true;
        if (!isMaximized() && !isFullScreen())
            screenfit::fit(this, size());
    }
    QMainWindow::showEvent(event);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (m_quitting) {
        m_continuity->quitting();
    } else if (!m_continuity->allowClose()) {
        event->ignore(); // asked, or went on in the background
        return;
    }
    saveWindowState();
    QMainWindow::closeEvent(event);
}

void MainWindow::quit()
{
    // Quit means quit: the sync stops (and is offered again at the next launch). Qt closes the
    // windows first when the application quits, so the window must not ask then.
    m_quitting = true;
    QApplication::setQuitOnLastWindowClosed(true);
    close();
    QApplication::quit();
}

void MainWindow::saveWindowState()
{
    QSettings settings;
    settings.setValue(QLatin1String(kGeometryKey), saveGeometry());
    settings.setValue(QLatin1String(kStateKey), saveState());
}

void MainWindow::startWhenReady()
{
    m_startPending = true;
    updateActions();
}

} // namespace driftless::ui
