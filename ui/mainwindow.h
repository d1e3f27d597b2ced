#pragma once

#include "ui/enginebridge.h"

#include <QMainWindow>

class QAction;
class QLabel;
class QTabWidget;

namespace driftless::ui {

class EventsModel;
class LogPage;
class TablesModel;
class TablesPage;

/// The app's window. It only wires things together: the engine bridge feeds snapshots to the
/// models, the pages show the models, the actions drive the bridge. Geometry and dock/toolbar
/// state persist in QSettings; nothing else does.
class MainWindow final : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    /// Shows the workspace in `statePath` (a .db file); stops a running engine first.
    void openWorkspace(const QString &statePath);

    EngineBridge *engine() const { return m_engine; }
    TablesModel *tablesModel() const { return m_tablesModel; }
    EventsModel *eventsModel() const { return m_eventsModel; }
    TablesPage *tablesPage() const { return m_tablesPage; }
    LogPage *logPage() const { return m_logPage; }
    QTabWidget *pages() const { return m_pages; }

    QAction *startAction() const { return m_start; }
    QAction *stopAction() const { return m_stop; }
    QAction *refreshAction() const { return m_refresh; }

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void createActions();
    void createMenus();
    void chooseWorkspace();
    void showSnapshot(const EngineSnapshot &snapshot);
    void showEngineState(EngineBridge::State state, const QString &message);
    void updateActions();
    void updateAlertsTab(int count);
    void showAbout();

    EngineBridge *m_engine;
    TablesModel *m_tablesModel;
    EventsModel *m_eventsModel;
    QTabWidget *m_pages;
    TablesPage *m_tablesPage;
    LogPage *m_logPage;
    QLabel *m_pathLabel;
    QLabel *m_engineLabel;

    QAction *m_open = nullptr;
    QAction *m_quit = nullptr;
    QAction *m_start = nullptr;
    QAction *m_stop = nullptr;
    QAction *m_refresh = nullptr;
    QAction *m_find = nullptr;
    QAction *m_showTables = nullptr;
    QAction *m_showLog = nullptr;
};

} // namespace driftless::ui
