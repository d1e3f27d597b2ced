#pragma once

#include "core/engine/status/alerts.h"

#include <QObject>
#include <QString>

#include <vector>

class QSystemTrayIcon;

namespace driftless::ui {

/// Tells the DBA about alerts that just opened with a tray notification, where the desktop has a
/// tray (QSystemTrayIcon::isSystemTrayAvailable()); elsewhere it stays silent and the Alerts tab
/// count is the only sign. The icon's tooltip says how fresh the tables are (setStatus()), so a
/// window kept syncing in the background still shows its worst freshness. Clicking the icon emits
/// activated(false), the message activated(true); its menu has Open Driftless and Quit.
class TrayNotifier final : public QObject {
    Q_OBJECT
public:
    explicit TrayNotifier(QObject *parent = nullptr);

    bool available() const { return m_tray != nullptr; }
    /// The last notification composed (shown only when available()), for tests and the tooltip.
    QString lastTitle() const { return m_lastTitle; }
    QString lastMessage() const { return m_lastMessage; }

    /// The icon's tooltip: the tables' freshness in a line.
    void setStatus(const QString &status);
    QString status() const { return m_status; }
    /// Says once that the window went on syncing in the background, and how to bring it back.
    void noteBackground();

public slots:
    void notify(const std::vector<driftless::core::Alert> &opened);

signals:
    /// Bring the window back; `alerts`: to the Alerts page (a notification was clicked).
    void activated(bool alerts);
    void quitRequested();

private:
    QSystemTrayIcon *m_tray = nullptr;
    QString m_lastTitle;
    QString m_lastMessage;
    QString m_status;
};

} // namespace driftless::ui
