#pragma once

#include "core/engine/alerts.h"

#include <QObject>
#include <QString>

#include <vector>

class QSystemTrayIcon;

namespace driftless::ui {

/// Tells the DBA about alerts that just opened with a tray notification, where the desktop has a
/// tray (QSystemTrayIcon::isSystemTrayAvailable()); elsewhere it stays silent and the Alerts tab
/// count is the only sign. Clicking the tray icon or the message emits activated().
class TrayNotifier final : public QObject {
    Q_OBJECT
public:
    explicit TrayNotifier(QObject *parent = nullptr);

    bool available() const { return m_tray != nullptr; }
    /// The last notification composed (shown only when available()), for tests and the tooltip.
    QString lastTitle() const { return m_lastTitle; }
    QString lastMessage() const { return m_lastMessage; }

public slots:
    void notify(const std::vector<driftless::core::Alert> &opened);

signals:
    void activated();

private:
    QSystemTrayIcon *m_tray = nullptr;
    QString m_lastTitle;
    QString m_lastMessage;
};

} // namespace driftless::ui
