#pragma once

#include "ui/agentlink.h"
#include "ui/enginebridge.h"

#include <optional>

#include <QMainWindow>
#include <QPointer>

class QAction;
class QLabel;
class QMenu;
class QTabWidget;

namespace driftless::ui {

class AlertCenter;
class AlertsModel;
class AlertsPage;
class ConflictsPage;
class SnapshotFanout;
class DashboardPage;
class BackfillRunner;
class EventsModel;
class HelpDialog;
class LagPage;
class ReconcilePage;
class ReconcileRunner;
class SecretStore;
class SlotMonitor;
class SlotsModel;
class SlotsPage;
class SyncContinuity;
class TablesModel;
class TablesPage;
class TrayNotifier;
class WorkspacePage;

/// The app's window. It only wires things together: the engine bridge feeds snapshots to the
/// models, the slot monitor feeds slot samples, the alert center turns both into alerts, the
/// pages show the models, the actions drive the bridge. A page is a QWidget that takes its
/// models (and the worker front it needs) in its constructor; adding one is a tab and a
/// shortcut here. Geometry and dock/toolbar
/// state persist in QSettings; nothing else does.
class MainWindow final : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    /// Shows the workspace in `statePath` (a .db file); stops a running engine first.
    void openWorkspace(const QString &statePath);
    /// Shows and drives the engine of an agent (driftless-cli serve) instead: the same pages,
    /// from its snapshots and through its commands. The token goes to the keychain, the address
    /// and the pinned fingerprint to the recent agents.
    void connectToAgent(const driftless::ui::AgentEndpoint &endpoint);
    /// The recent agents, newest first, as `url` and `fingerprint` (the token is in the keychain).
    QList<AgentEndpoint> recentAgents() const;

    EngineBridge *engine() const { return m_engine; }
    TablesModel *tablesModel() const { return m_tablesModel; }
    EventsModel *eventsModel() const { return m_eventsModel; }
    SlotsModel *slotsModel() const { return m_slotsModel; }
    AlertsModel *alertsModel() const { return m_alertsModel; }
    SlotMonitor *slotMonitor() const { return m_slotMonitor; }
    BackfillRunner *backfillRunner() const { return m_backfill; }
    AlertCenter *alertCenter() const { return m_alertCenter; }
    TrayNotifier *trayNotifier() const { return m_tray; }
    DashboardPage *dashboardPage() const { return m_dashboardPage; }
    TablesPage *tablesPage() const { return m_tablesPage; }
    LagPage *lagPage() const { return m_lagPage; }
    SlotsPage *slotsPage() const { return m_slotsPage; }
    AlertsPage *alertsPage() const { return m_alertsPage; }
    WorkspacePage *workspacePage() const { return m_workspacePage; }
    SecretStore *secretStore() const { return m_secrets; }
    ReconcilePage *reconcilePage() const { return m_reconcilePage; }
    ReconcileRunner *reconcileRunner() const { return m_reconcileRunner; }
    ConflictsPage *conflictsPage() const { return m_conflictsPage; }
    QTabWidget *pages() const { return m_pages; }

    QAction *startAction() const { return m_start; }
    QAction *stopAction() const { return m_stop; }
    QAction *refreshAction() const { return m_refresh; }
    QAction *connectAgentAction() const { return m_connectAgent; }
    QAction *quitAction() const { return m_quit; }
    /// What happens to the sync when the window closes, and at the next launch.
    SyncContinuity *syncContinuity() const { return m_continuity; }
    /// Starts the sync as soon as it can start: the workspace read, its passwords read from the
    /// keychain (--run, and the sync that was running when the app last closed).
    void startWhenReady();

public slots:
    /// Quits the app, stopping its sync without asking (File > Quit, the tray's Quit, a signal).
    void quit();
    QMenu *recentAgentsMenu() const { return m_recentAgents; }

protected:
    void closeEvent(QCloseEvent *event) override;
    void showEvent(QShowEvent *event) override;

private:
    void createActions();
    void createMenus();
    void chooseWorkspace();
    void chooseAgent(const AgentEndpoint &initial);
    void reconnectRecent(const AgentEndpoint &recent);
    void rememberAgent(const AgentEndpoint &endpoint);
    void updateRecentAgents();
    void showWhere();
    void showSnapshot(const EngineSnapshot &snapshot);
    void showEngineState(EngineBridge::State state, const QString &message);
    void updateActions();
    void updateAlertsTab(int count);
    void updateConflictsTab(int count);
    void refresh();
    QAction *pageAction(const QString &text, int key, QWidget *page);
    void showAbout();
    /// Help: the keyboard shortcuts (0) or a shipped document (1: the README).
    void showHelp(int topic);
    void saveWindowState();

    EngineBridge *m_engine;
    TablesModel *m_tablesModel;
    EventsModel *m_eventsModel;
    SlotsModel *m_slotsModel;
    AlertsModel *m_alertsModel;
    SlotMonitor *m_slotMonitor;
    BackfillRunner *m_backfill;
    AlertCenter *m_alertCenter;
    TrayNotifier *m_tray;
    SecretStore *m_secrets;
    QTabWidget *m_pages;
    TablesPage *m_tablesPage;
    LagPage *m_lagPage;
    SlotsPage *m_slotsPage;
    AlertsPage *m_alertsPage;
    WorkspacePage *m_workspacePage;
    QLabel *m_pathLabel;
    QLabel *m_engineLabel;
    ReconcileRunner *m_reconcileRunner = nullptr;
    ReconcilePage *m_reconcilePage = nullptr;
    DashboardPage *m_dashboardPage = nullptr;
    ConflictsPage *m_conflictsPage = nullptr;
    SnapshotFanout *m_fanout = nullptr;

    QAction *m_open = nullptr;
    QAction *m_connectAgent = nullptr;
    QMenu *m_recentAgents = nullptr;
    /// A recent agent whose token the keychain is being asked for.
    std::optional<AgentEndpoint> m_awaitingToken;
    QAction *m_quit = nullptr;
    QAction *m_start = nullptr;
    QAction *m_stop = nullptr;
    QAction *m_refresh = nullptr;
    QAction *m_find = nullptr;
    QList<QAction *> m_showPages;
    bool m_fitted = false;
    bool m_quitting = false;
    bool m_startPending = false;
    SyncContinuity *m_continuity = nullptr;
    QPointer<HelpDialog> m_help;
    /// The workspace whose passwords the keychain was asked for.
    std::shared_ptr<const core::Workspace> m_secretsFor;
};

} // namespace driftless::ui
