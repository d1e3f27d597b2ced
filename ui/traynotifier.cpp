#include "ui/traynotifier.h"

#include "ui/alertwording.h"
#include "ui/statusicons.h"

#include <QMenu>
#include <QSystemTrayIcon>

#include <algorithm>

namespace driftless::ui {

TrayNotifier::TrayNotifier(QObject *parent) : QObject(parent)
{
    if (!QSystemTrayIcon::isSystemTrayAvailable())
        return;
    m_tray = new QSystemTrayIcon(namedIcon(QStringLiteral("io.driftless.Driftless")), this);
    m_tray->setToolTip(tr("Driftless"));
    connect(m_tray, &QSystemTrayIcon::messageClicked, this, [this] { emit activated(true); });
    connect(m_tray, &QSystemTrayIcon::activated, this, [this](QSystemTrayIcon::ActivationReason reason) {
        if (reason == QSystemTrayIcon::Trigger || reason == QSystemTrayIcon::DoubleClick)
            emit activated(false);
    });
    auto *menu = new QMenu;
    menu->addAction(tr("&Open Driftless"), this, [this] { emit activated(false); });
    menu->addSeparator();
    menu->addAction(tr("&Quit"), this, &TrayNotifier::quitRequested);
    connect(this, &QObject::destroyed, menu, &QObject::deleteLater);
    m_tray->setContextMenu(menu);
    m_tray->show();
}

void TrayNotifier::setStatus(const QString &status)
{
    m_status = status;
    if (m_tray)
        m_tray->setToolTip(status);
}

void TrayNotifier::noteBackground()
{
    if (m_tray)
        m_tray->showMessage(tr("Driftless keeps syncing"),
                            tr("The window is closed; the sync goes on. Click the Driftless icon to open it, or "
                               "Quit in its menu to stop."),
                            QSystemTrayIcon::Information, 8'000);
}

void TrayNotifier::notify(const std::vector<core::Alert> &opened)
{
    if (opened.empty())
        return;
    // Errors first: with several at once, the worst is the one the message names.
    const auto worst = std::min_element(opened.begin(), opened.end(), [](const core::Alert &a, const core::Alert &b) {
        return (a.level == core::Level::Error) > (b.level == core::Level::Error);
    });
    const bool error = worst->level == core::Level::Error;
    m_lastTitle = opened.size() == 1 ? (error ? tr("Driftless: error") : tr("Driftless: warning"))
                                     : tr("Driftless: %1 new alerts").arg(opened.size());
    m_lastMessage = QString::fromStdString(worst->message) + QStringLiteral(".\n") + appAction(*worst);
    if (opened.size() > 1)
        m_lastMessage += tr("\n(and %1 more on the Alerts page)").arg(opened.size() - 1);
    if (!m_tray)
        return;
    m_tray->showMessage(m_lastTitle, m_lastMessage, error ? QSystemTrayIcon::Critical : QSystemTrayIcon::Warning,
                        10'000);
}

} // namespace driftless::ui
