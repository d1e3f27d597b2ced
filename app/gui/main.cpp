// driftless: the desktop face of the engine. Parses arguments and opens the main window.

#include "ui/mainwindow.h"
#include "ui/resources.h"

#include "core/state/statestore.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include <cstdlib>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Driftless"));
    QApplication::setOrganizationName(QStringLiteral("Driftless"));
    QApplication::setApplicationVersion(QStringLiteral(DRIFTLESS_VERSION));
    // Lets Wayland compositors and docks match the window to the installed .desktop file.
    QGuiApplication::setDesktopFileName(QStringLiteral("io.driftless.Driftless"));
    driftless::ui::initResources();
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/io.driftless.Driftless.svg")));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Keeps tables in two databases in sync, and shows that they are."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption stateOption(
        QStringLiteral("state"),
        QStringLiteral("The workspace file (default: $DRIFTLESS_STATE, else %1).")
            .arg(QString::fromStdString(driftless::core::StateStore::defaultPath())),
        QStringLiteral("FILE"));
    const QCommandLineOption runOption(QStringLiteral("run"), QStringLiteral("Start syncing at launch."));
    parser.addOption(stateOption);
    parser.addOption(runOption);
    parser.process(app);

    // The same order as driftless-cli, so both faces open the same file by default.
    QString statePath = parser.value(stateOption);
    if (statePath.isEmpty())
        statePath = qEnvironmentVariable("DRIFTLESS_STATE");
    if (statePath.isEmpty())
        statePath = QString::fromStdString(driftless::core::StateStore::defaultPath());

    driftless::ui::MainWindow window;
    window.show();
    window.openWorkspace(statePath);
    if (parser.isSet(runOption))
        window.engine()->start();
    return QApplication::exec();
}
