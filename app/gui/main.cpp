// driftless: the desktop face of the engine. Parses arguments and opens the main window.

#include "ui/enginepriority.h"
#include "ui/mainwindow.h"
#include "ui/resources.h"

#include "core/base/log.h"
#include "core/engine/workspacestate.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QSocketNotifier>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sys/socket.h>
#include <unistd.h>

namespace {

// SIGINT/SIGTERM (Ctrl+C in the terminal that started the app, a logout, the demo stopping):
// the first quits the event loop, so the window closes and the engine stops between batches as
// when the window is closed; a second one exits at once. The handler only writes a byte; the
// event loop does the rest.
int g_signalPipe[2] = {-1, -1};
std::atomic<int> g_signals{0};

void onSignal(int)
{
    if (g_signals.fetch_add(1) >= 1)
        ::_exit(130);
    const char c = 1;
    [[maybe_unused]] auto n = ::write(g_signalPipe[1], &c, 1);
}

void installSignalHandlers()
{
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, g_signalPipe) != 0)
        return;
    struct sigaction sa{};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
}

} // namespace

int main(int argc, char **argv)
{
    // Before any thread starts: a session, and so a scheduling group, of its own lets the engine
    // yield to the window without yielding to every other application (ui/enginepriority.h).
    const std::string session = driftless::ui::claimOwnSchedulingGroup();
    QApplication app(argc, argv);
    driftless::core::log(driftless::core::LogLevel::Debug, session);
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
            .arg(QString::fromStdString(driftless::core::WorkspaceState::defaultPath())),
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
        statePath = QString::fromStdString(driftless::core::WorkspaceState::defaultPath());

    installSignalHandlers();
    QSocketNotifier signalNotifier(g_signalPipe[0], QSocketNotifier::Read);
    signalNotifier.setEnabled(g_signalPipe[0] >= 0);
    QObject::connect(&signalNotifier, &QSocketNotifier::activated, &app, [] {
        char c = 0;
        [[maybe_unused]] auto n = ::read(g_signalPipe[0], &c, 1);
        std::fprintf(stderr, "driftless: stopping after the batches in flight (again to quit now)\n");
        QApplication::quit();
    });

    driftless::ui::MainWindow window;
    window.show();
    window.openWorkspace(statePath);
    if (parser.isSet(runOption))
        window.engine()->start();
    return QApplication::exec();
}
