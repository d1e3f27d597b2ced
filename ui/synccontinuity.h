#pragma once

#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>

class QMessageBox;
class QWidget;

namespace driftless::ui {

class EngineBridge;
class TrayNotifier;

/// What becomes of the app's own sync when its window closes, and at the next launch.
///
/// Closing the window while this machine's engine syncs asks first (closeQuestion): keep syncing
/// in the background (where the desktop has a tray: the window hides, the tray icon shows the
/// worst freshness and brings it back), stop the sync and close, or cancel; the answer can be
/// remembered. A workspace whose sync was running when the app closed is remembered too, and
/// when it is shown again the app offers to start it (launchQuestion), or starts it at once if
/// the DBA chose so: while it is stopped, its replication slots hold WAL on the sources.
///
/// An agent's sync is the agent's: closing a window attached to one asks nothing.
/// The choices live in QSettings under "sync/".
class SyncContinuity final : public QObject {
    Q_OBJECT
public:
    enum class OnClose { Ask, Background, Stop };
    enum class AtLaunch { Ask, Start };

    SyncContinuity(EngineBridge *engine, TrayNotifier *tray, QWidget *window);

    /// The window is asked to close. True: let it close (no sync of its own runs, or the DBA
    /// chose to stop it). False: it stays, hidden in the background or while the question is
    /// open; the question's answer closes it again when that is the choice.
    bool allowClose();
    /// The app quits (File > Quit, a signal): nothing is asked; a running sync is remembered.
    void quitting();
    /// A snapshot of workspace `statePath` landed: the first one offers to start its sync when it
    /// was running at the last close. `start` starts it (when it can).
    void workspaceShown(const QString &statePath, const std::function<void()> &start);

    static OnClose onClose();
    static AtLaunch atLaunch();
    /// Whether the sync of `statePath` was running when the app last closed.
    static bool wasRunning(const QString &statePath);

    /// The question open now, or null.
    QMessageBox *closeQuestion() const { return m_closeQuestion; }
    QMessageBox *launchQuestion() const { return m_launchQuestion; }

signals:
    /// The DBA chose to keep syncing in the background: the window hides.
    void backgrounded();

private:
    bool syncingHere() const;
    void rememberRunning(const QString &statePath, bool running);
    void askOnClose();

    EngineBridge *m_engine;
    TrayNotifier *m_tray;
    QWidget *m_window;
    QString m_offeredFor;   ///< the workspace the launch question was decided for
    bool m_closing = false; ///< the DBA answered "stop and close": the next close goes through
    QPointer<QMessageBox> m_closeQuestion;
    QPointer<QMessageBox> m_launchQuestion;
};

} // namespace driftless::ui
