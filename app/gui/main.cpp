// driftless: the desktop face of the engine. Parses arguments and opens the main window.

#include "ui/enginepriority.h"
#include "ui/mainwindow.h"
#include "ui/resources.h"

#include "core/base/log.h"
#include "core/engine/endpoints/sshtunnel.h"
#include "core/engine/run/workspacestate.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QSocketNotifier>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
}

constexpr const char *kDescription = "Keeps tables in two databases in sync, and shows that they are.";

/// The options, described once for --help and the man page.
struct Options {
    /// `defaultState`: this user's default workspace file for --help; the man page names it
    /// by the variables it comes from.
    explicit Options(const QString &defaultState)
        : state(QStringLiteral("state"),
                QStringLiteral("The workspace file (default: $DRIFTLESS_STATE, else %1).").arg(defaultState),
                QStringLiteral("FILE"))
    {
    }
    QCommandLineOption state;
    QCommandLineOption run{QStringLiteral("run"), QStringLiteral("Start syncing at launch.")};
    QCommandLineOption man{QStringLiteral("man"), QStringLiteral("Print the man page driftless(1) and exit.")};
};

QString roff(QString text)
{
    text.replace(QLatin1Char('\\'), QStringLiteral("\\e")).replace(QLatin1Char('-'), QStringLiteral("\\-"));
    return text;
}

/// driftless(1), from the options' own descriptions (the build writes it; no display needed).
QString manPage(const Options &o)
{
    QString s = QStringLiteral(".TH DRIFTLESS 1 \"\" \"Driftless %1\" \"User Commands\"\n")
                    .arg(QString::fromLatin1(DRIFTLESS_VERSION));
    s += QStringLiteral(".SH NAME\ndriftless \\- %1\n").arg(roff(QString::fromLatin1(kDescription)));
    s += QStringLiteral(".SH SYNOPSIS\n.B driftless\n[\\fB\\-\\-state\\fR \\fIFILE\\fR] [\\fB\\-\\-run\\fR]\n");
    s += QStringLiteral(".SH DESCRIPTION\n.PP\nThe desktop face of Driftless: each table's strategy, state, "
                        "freshness badge and lag, replication slots, alerts, reconciliation reports and their "
                        "repair, and the workspace's endpoints and pipelines. It runs the same engine as "
                        "\\fBdriftless\\-cli\\fR(1), on this machine or, through File > Connect to Agent, "
                        "on a server running \\fBdriftless\\-cli serve\\fR.\n");
    s += QStringLiteral(".SH OPTIONS\n");
    for (const QCommandLineOption *opt : {&o.state, &o.run, &o.man}) {
        s += QStringLiteral(".TP\n.B \\-\\-%1").arg(roff(opt->names().constFirst()));
        if (!opt->valueName().isEmpty())
            s += QStringLiteral(" \\fI%1\\fR").arg(opt->valueName());
        s += QStringLiteral("\n%1\n").arg(roff(opt->description()));
    }
    s += QStringLiteral(".TP\n.B \\-\\-help\nDisplays help on command line options.\n"
                        ".TP\n.B \\-\\-version\nDisplays version information.\n");
    s += QStringLiteral(".SH SEE ALSO\n.BR driftless\\-cli (1)\n");
    return s;
}

} // namespace

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--man") == 0) {
            const Options generic(QStringLiteral("$XDG_DATA_HOME/driftless/workspace.db"));
            std::fputs(manPage(generic).toUtf8().constData(), stdout);
            return 0;
        }
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
    parser.setApplicationDescription(QString::fromLatin1(kDescription));
    parser.addHelpOption();
    parser.addVersionOption();
    const Options options(QString::fromStdString(driftless::core::WorkspaceState::defaultPath()));
    const QCommandLineOption &stateOption = options.state;
    const QCommandLineOption &runOption = options.run;
    parser.addOption(stateOption);
    parser.addOption(runOption);
    parser.addOption(options.man);
    parser.process(app);

    // The same order as driftless-cli, so both faces open the same file by default.
    QString statePath = parser.value(stateOption);
    if (statePath.isEmpty())
        statePath = qEnvironmentVariable("DRIFTLESS_STATE");
    if (statePath.isEmpty())
        statePath = QString::fromStdString(driftless::core::WorkspaceState::defaultPath());
    driftless::core::setSshKnownHostsFile(statePath.toStdString() + ".known_hosts");

    installSignalHandlers();
    QSocketNotifier signalNotifier(g_signalPipe[0], QSocketNotifier::Read);
    signalNotifier.setEnabled(g_signalPipe[0] >= 0);
    driftless::ui::MainWindow window;
    QObject::connect(&signalNotifier, &QSocketNotifier::activated, &app, [&window] {
        char c = 0;
        [[maybe_unused]] auto n = ::read(g_signalPipe[0], &c, 1);
        std::fprintf(stderr, "driftless: stopping after the batches in flight (again to quit now)\n");
        window.quit();
    });
    window.show();
    window.openWorkspace(statePath);
    if (parser.isSet(runOption))
        window.startWhenReady(); // once the workspace and its keychain passwords are read
    return QApplication::exec();
}
