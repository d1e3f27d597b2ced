#include "ui/synccontinuity.h"

#include "ui/enginebridge.h"
#include "ui/traynotifier.h"

#include <QCheckBox>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QWidget>

namespace driftless::ui {

namespace {
const char *const kOnCloseKey = "sync/onClose";
const char *const kAtLaunchKey = "sync/atLaunch";
const char *const kWasRunningKey = "sync/wasRunning";
} // namespace

SyncContinuity::SyncContinuity(EngineBridge *engine, TrayNotifier *tray, QWidget *window)
    : QObject(window), m_engine(engine), m_tray(tray), m_window(window)
{
}

SyncContinuity::OnClose SyncContinuity::onClose()
{
    const QString v = QSettings().value(QLatin1String(kOnCloseKey)).toString();
    return v == QLatin1String("background") ? OnClose::Background
           : v == QLatin1String("stop")     ? OnClose::Stop
                                            : OnClose::Ask;
}

SyncContinuity::AtLaunch SyncContinuity::atLaunch()
{
    return QSettings().value(QLatin1String(kAtLaunchKey)).toString() == QLatin1String("start") ? AtLaunch::Start
                                                                                               : AtLaunch::Ask;
}

bool SyncContinuity::wasRunning(const QString &statePath)
{
    return QSettings().value(QLatin1String(kWasRunningKey)).toStringList().contains(statePath);
}

void SyncContinuity::rememberRunning(const QString &statePath, bool running)
{
    QSettings settings;
    QStringList paths = settings.value(QLatin1String(kWasRunningKey)).toStringList();
    paths.removeAll(statePath);
    if (running)
        paths << statePath;
    settings.setValue(QLatin1String(kWasRunningKey), paths);
}

bool SyncContinuity::syncingHere() const
{
    const auto state = m_engine->state();
    return !m_engine->remote() && (state == EngineBridge::State::Starting || state == EngineBridge::State::Running);
}

void SyncContinuity::quitting()
{
    if (syncingHere())
        rememberRunning(m_engine->statePath(), true);
}

bool SyncContinuity::allowClose()
{
    if (!syncingHere() || m_closing)
        return true;
    // In the background only where a tray icon can bring the window back.
    OnClose choice = onClose();
    if (choice == OnClose::Background && !m_tray->available())
        choice = OnClose::Ask;
    switch (choice) {
    case OnClose::Background:
        emit backgrounded();
        return false;
    case OnClose::Stop:
        rememberRunning(m_engine->statePath(), true);
        return true;
    case OnClose::Ask:
        askOnClose();
        return false;
    }
    return true;
}

void SyncContinuity::askOnClose()
{
    if (m_closeQuestion) {
        m_closeQuestion->raise();
        return;
    }
    const bool tray = m_tray->available();
    auto *box = new QMessageBox(
        QMessageBox::Question, tr("Sync Running"),
        tr("The sync of %1 is running.").arg(QFileInfo(m_engine->statePath()).fileName().toHtmlEscaped()),
        QMessageBox::NoButton, m_window);
    box->setObjectName(QStringLiteral("closeWhileSyncing"));
    const QString stopped =
        tr("Stopped, its tables fall behind their sources, and a CDC pipeline's replication slot keeps WAL on the "
           "source until the sync runs again; the next time Driftless opens this workspace it offers to start it.");
    box->setInformativeText(
        tray ? tr("Keep it syncing in the background (the Driftless icon in the tray brings the window back), or "
                  "stop it and close?\n\n") +
                   stopped
             : stopped + tr("\n\nThis desktop has no tray to bring a hidden window back from: to keep syncing, "
                            "leave the window open (minimise it)."));
    QPushButton *background = nullptr;
    if (tray) {
        background = box->addButton(tr("Keep Syncing in the Background"), QMessageBox::AcceptRole);
        background->setObjectName(QStringLiteral("keepSyncing"));
    }
    QPushButton *stop = box->addButton(tr("Stop Sync and Close"), QMessageBox::DestructiveRole);
    stop->setObjectName(QStringLiteral("stopAndClose"));
    QPushButton *cancel = box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(background ? background : cancel);
    box->setEscapeButton(cancel);
    auto *remember = new QCheckBox(tr("Do not ask again"), box);
    remember->setObjectName(QStringLiteral("rememberCloseChoice"));
    box->setCheckBox(remember);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, box, background, stop, remember] {
        const QAbstractButton *clicked = box->clickedButton();
        if (clicked != background && clicked != stop)
            return; // cancelled: the window stays, the sync goes on
        const bool toBackground = clicked == background;
        if (remember->isChecked())
            QSettings().setValue(QLatin1String(kOnCloseKey),
                                 toBackground ? QStringLiteral("background") : QStringLiteral("stop"));
        if (toBackground) {
            emit backgrounded();
            return;
        }
        rememberRunning(m_engine->statePath(), true);
        m_closing = true;
        m_window->close();
    });
    m_closeQuestion = box;
    box->open();
}

void SyncContinuity::workspaceShown(const QString &statePath, const std::function<void()> &start)
{
    if (statePath.isEmpty() || statePath == m_offeredFor || m_engine->remote())
        return;
    m_offeredFor = statePath;
    if (!wasRunning(statePath))
        return;
    rememberRunning(statePath, false);
    if (atLaunch() == AtLaunch::Start) {
        start();
        return;
    }
    auto *box = new QMessageBox(QMessageBox::Question, tr("Start the Sync?"),
                                tr("The sync of %1 was running when Driftless last closed.")
                                    .arg(QDir::toNativeSeparators(statePath).toHtmlEscaped()),
                                QMessageBox::NoButton, m_window);
    box->setObjectName(QStringLiteral("startAtLaunch"));
    box->setInformativeText(tr("While it is stopped, its tables fall behind and its replication slots keep WAL on "
                               "the sources. Start it now?"));
    QPushButton *yes = box->addButton(tr("Start Sync"), QMessageBox::AcceptRole);
    yes->setObjectName(QStringLiteral("startSyncNow"));
    box->addButton(tr("Not Now"), QMessageBox::RejectRole);
    box->setDefaultButton(yes);
    auto *always = new QCheckBox(tr("Always start it when Driftless opens"), box);
    always->setObjectName(QStringLiteral("alwaysStart"));
    box->setCheckBox(always);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [box, yes, always, start] {
        if (box->clickedButton() != yes)
            return;
        if (always->isChecked())
            QSettings().setValue(QLatin1String(kAtLaunchKey), QStringLiteral("start"));
        start();
    });
    m_launchQuestion = box;
    box->open();
}

} // namespace driftless::ui
