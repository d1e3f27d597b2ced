// B12 driver: the desktop app's responsiveness with many tables and live pipelines.
//
// Opens the real MainWindow on a workspace file (built by b12_gui.sh with driftless-cli apply),
// starts the real engine through EngineBridge, and for --seconds switches pages, sorts and
// filters the Tables page once a second, as a DBA clicking around would, and shows the Dashboard
// (the first page) for four of every ten seconds: regrouped, filtered, reordered, scrolled, while
// snapshots of all tables keep updating its tiles. A PreciseTimer ticks
// every --tick-ms on the UI thread; the lateness of each tick (time since the previous tick
// minus the interval) is an event-loop stall. Prints one line:
//
//   B12 max_stall_ms=... p99_stall_ms=... peak_rss_mb=... tables=... pipelines=... ...
//       dashboard_max_stall_ms=... dashboard_p99_stall_ms=... dashboard_seconds=...
//
// (the dashboard_ figures: the ticks while the Dashboard was the page shown)
// plus, on stderr, the longest stalls with what the driver was doing just before them, and the
// time each driver action took on the UI thread. Exit status 0 unless the run failed (no
// tables, the engine would not start); meeting the goal is the script's call.

#include "ui/enginebridge.h"
#include "ui/enginepriority.h"
#include "ui/mainwindow.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/dashboardpage.h"
#include "ui/pages/tablespage.h"
#include "ui/resources.h"

#include <QApplication>
#include <QComboBox>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFile>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

using driftless::ui::EngineBridge;
using driftless::ui::EngineSnapshot;
using driftless::ui::MainWindow;

namespace {

/// Peak resident set size of this process in MB (VmHWM), or -1.
double peakRssMb()
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (line.startsWith("VmHWM:"))
            return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
    }
    return -1;
}

/// CPU time of the calling thread, ns.
qint64 threadCpuNs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Time the calling thread spent runnable but waiting for a CPU, ns (schedstat's second field),
/// or -1 where the kernel does not keep schedstats. Read with pread on a descriptor opened once:
/// the probe runs every few milliseconds and must not cost the thread it measures.
qint64 threadRunQueueNs()
{
    static const int fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[128];
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *end = nullptr;
    std::strtoull(buf, &end, 10); // time on a CPU
    const unsigned long long waiting = std::strtoull(end, nullptr, 10);
    return qint64(waiting);
}

struct Stall {
    double ms = 0;
    double cpuMs = 0;   ///< of it, the UI thread on a CPU
    double queueMs = 0; ///< of it, runnable but waiting for a CPU (the rest: blocked or asleep)
    double atS = 0;
    QString after;          ///< the driver's last action before it
    QStringList deliveries; ///< with B12_EVENT_COSTS, the costliest event deliveries within it
};

/// Times every event the UI thread delivers, by receiver class and event type, in the UI
/// thread's CPU time (waiting for a core is the stall's other part, reported with each stall):
/// the longest single deliveries say what the UI thread spends its bursts on. Nested deliveries
/// (a paint inside a timer's handler) are counted in both.
class TimingApplication final : public QApplication {
public:
    using QApplication::QApplication;

    struct Cost {
        double maxMs = 0;
        double totalMs = 0;
        int count = 0;
    };
    std::map<std::pair<QString, int>, Cost> costs;
    bool timing = false;

    /// Deliveries of >= 2 ms, newest last, for the stalls they fall in (wall clock, ns since
    /// `clock` started); nested ones carry their depth.
    struct Delivery {
        qint64 endNs = 0;
        double cpuMs = 0;
        int depth = 0;
        QString what;
    };
    std::deque<Delivery> recent;
    const QElapsedTimer *clock = nullptr;
    int depth = 0;

    /// The costliest deliveries that ended within (fromNs, toNs], as text.
    QStringList deliveriesIn(qint64 fromNs, qint64 toNs) const
    {
        std::vector<const Delivery *> in;
        for (const Delivery &d : recent)
            if (d.endNs > fromNs && d.endNs <= toNs)
                in.push_back(&d);
        std::sort(in.begin(), in.end(), [](const Delivery *a, const Delivery *b) { return a->cpuMs > b->cpuMs; });
        QStringList out;
        for (std::size_t i = 0; i < std::min<std::size_t>(6, in.size()); ++i)
            out << QStringLiteral("%1 ms %2%3")
                       .arg(in[i]->cpuMs, 0, 'f', 1)
                       .arg(QString(in[i]->depth * 2, u' '), in[i]->what);
        return out;
    }

    bool notify(QObject *receiver, QEvent *event) override
    {
        if (!timing || QThread::currentThread() != thread())
            return QApplication::notify(receiver, event);
        const qint64 start = threadCpuNs();
        const int type = event->type();
        // Named before delivery: a receiver may delete itself while handling the event.
        const char *cls = receiver->metaObject()->className();
        const QString name = receiver->objectName();
        ++depth;
        const bool result = QApplication::notify(receiver, event);
        --depth;
        const double ms = double(threadCpuNs() - start) / 1e6;
        if (ms >= 0.5) {
            Cost &c = costs[{QString::fromLatin1(cls), type}];
            c.maxMs = std::max(c.maxMs, ms);
            c.totalMs += ms;
            ++c.count;
        }
        if (ms >= 2 && clock) {
            recent.push_back({clock->nsecsElapsed(), ms, depth,
                              QStringLiteral("%1 (%2) event %3").arg(QString::fromLatin1(cls), name).arg(type)});
            while (recent.size() > 4096)
                recent.pop_front();
        }
        return result;
    }
};

} // namespace

int main(int argc, char **argv)
{
    // As the app does when a desktop launches it: a session, so a scheduling group, of its own
    // (here even when run from a terminal, so figures do not depend on how it was started).
    const std::string session = driftless::ui::claimOwnSchedulingGroup(true);
    TimingApplication app(argc, argv);
    app.timing = qEnvironmentVariableIsSet("B12_EVENT_COSTS");
    QApplication::setApplicationName(QStringLiteral("Driftless B12"));
    QApplication::setOrganizationName(QStringLiteral("Driftless"));
    driftless::ui::initResources();

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("B12: UI thread stalls and RSS of the app under load."));
    parser.addHelpOption();
    const QCommandLineOption stateOpt(QStringLiteral("state"), QStringLiteral("The workspace file."),
                                      QStringLiteral("FILE"));
    const QCommandLineOption secondsOpt(QStringLiteral("seconds"), QStringLiteral("Measured run time (60)."),
                                        QStringLiteral("S"), QStringLiteral("60"));
    const QCommandLineOption tickOpt(QStringLiteral("tick-ms"), QStringLiteral("Probe interval (5)."),
                                     QStringLiteral("MS"), QStringLiteral("5"));
    const QCommandLineOption actionOpt(QStringLiteral("action-ms"),
                                       QStringLiteral("Interval of page switches, sorts, filters (1000)."),
                                       QStringLiteral("MS"), QStringLiteral("1000"));
    parser.addOptions({stateOpt, secondsOpt, tickOpt, actionOpt});
    parser.process(app);
    if (!parser.isSet(stateOpt)) {
        std::fprintf(stderr, "driftless-b12: --state FILE is required\n");
        return 2;
    }
    const int seconds = std::max(1, parser.value(secondsOpt).toInt());
    const int tickMs = std::max(1, parser.value(tickOpt).toInt());
    const int actionMs = std::max(50, parser.value(actionOpt).toInt());

    MainWindow window;
    window.resize(1400, 900);
    window.show();

    EngineBridge *engine = window.engine();
    driftless::ui::TablesPage *tables = window.tablesPage();
    driftless::ui::DashboardPage *dashboard = window.dashboardPage();
    QTabWidget *pages = window.pages();

    std::size_t tableCount = 0;
    std::set<std::string> pipelines;
    std::size_t snapshots = 0;
    bool started = false;
    QObject::connect(engine, &EngineBridge::snapshotReady, &app, [&](const EngineSnapshot &s) {
        ++snapshots;
        // Counted when the tables change, not per snapshot: the probe's own work is not the app's.
        if (s.tables.size() != tableCount) {
            tableCount = s.tables.size();
            pipelines.clear();
            for (const auto &t : s.tables)
                pipelines.insert(t.pipeline);
        }
        if (!started && !s.tables.empty() && s.error.isEmpty()) {
            started = true;
            // Queued: start after the window has shown this snapshot, as a click would.
            QTimer::singleShot(0, engine, &EngineBridge::start);
        }
    });

    // --- the probe ---------------------------------------------------------------------------
    QElapsedTimer clock;
    clock.start();
    app.clock = &clock;
    std::vector<double> stalls;
    std::vector<double> dashboardStalls; // ticks while the Dashboard was shown
    bool measuring = false;
    stalls.reserve(static_cast<std::size_t>(seconds) * 1000 / tickMs + 16);
    std::vector<Stall> worst; // the 10 longest
    QString lastAction = QStringLiteral("open");
    qint64 lastTickNs = clock.nsecsElapsed();
    qint64 lastCpuNs = threadCpuNs();
    qint64 lastQueueNs = threadRunQueueNs();
    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(tickMs);
    QObject::connect(&probe, &QTimer::timeout, &app, [&] {
        const qint64 now = clock.nsecsElapsed();
        const double late = std::max(0.0, double(now - lastTickNs) / 1e6 - tickMs);
        lastTickNs = now;
        const qint64 cpu = threadCpuNs();
        const double cpuMs = double(cpu - lastCpuNs) / 1e6;
        lastCpuNs = cpu;
        const qint64 queue = threadRunQueueNs();
        const double queueMs = queue >= 0 && lastQueueNs >= 0 ? double(queue - lastQueueNs) / 1e6 : -1;
        lastQueueNs = queue;
        stalls.push_back(late);
        if (measuring && pages->currentWidget() == dashboard)
            dashboardStalls.push_back(late);
        if (worst.size() < 10 || late > worst.back().ms) {
            worst.push_back({late, cpuMs, queueMs, double(now) / 1e9, lastAction,
                             app.deliveriesIn(now - qint64((late + tickMs) * 1e6), now)});
            std::sort(worst.begin(), worst.end(), [](const Stall &a, const Stall &b) { return a.ms > b.ms; });
            if (worst.size() > 10)
                worst.pop_back();
        }
    });
    probe.start();

    // --- the driver: pages, sorting, filtering -----------------------------------------------
    struct ActionTime {
        QString what;
        double maxMs = 0;
        int count = 0;
    };
    std::vector<ActionTime> actionTimes;
    auto timed = [&](const QString &what, const auto &fn) {
        QElapsedTimer t;
        t.start();
        fn();
        const double ms = double(t.nsecsElapsed()) / 1e6;
        lastAction = what;
        auto it =
            std::find_if(actionTimes.begin(), actionTimes.end(), [&](const ActionTime &a) { return a.what == what; });
        if (it == actionTimes.end())
            it = actionTimes.insert(actionTimes.end(), {what, 0, 0});
        it->maxMs = std::max(it->maxMs, ms);
        ++it->count;
    };
    const QStringList filters = {QStringLiteral("s3."), QStringLiteral("t042"), QStringLiteral("cursor"),
                                 QStringLiteral("")};
    const QStringList dashboardFilters = {QStringLiteral("p3"), QStringLiteral("t04"), QStringLiteral("cdc"),
                                          QStringLiteral("s7.t0")};
    // Of each cycle of ten actions: 0-5 the Tables page and the others, 6-9 the Dashboard.
    constexpr int kCycle = 10;
    int step = 0;
    QTimer driver;
    driver.setInterval(actionMs);
    QObject::connect(&driver, &QTimer::timeout, &app, [&] {
        const int tablesTab = pages->indexOf(tables);
        const int round = step / kCycle;
        switch (step % kCycle) {
        case 0: // another page, then back to Tables next time round
        {
            const int next = (pages->currentIndex() + 1 + round) % pages->count();
            timed(QStringLiteral("page ") + pages->widget(next)->objectName(), [&] { pages->setCurrentIndex(next); });
        } break;
        case 1:
            timed(QStringLiteral("page ") + tables->objectName(), [&] { pages->setCurrentIndex(tablesTab); });
            break;
        case 2: {
            const int column = round % tables->proxy()->columnCount();
            const auto order = round % 2 ? Qt::DescendingOrder : Qt::AscendingOrder;
            timed(QStringLiteral("sort"), [&] { tables->view()->sortByColumn(column, order); });
            break;
        }
        case 3:
        case 4:
            timed(QStringLiteral("filter"),
                  [&] { tables->filterEdit()->setText(filters.at((round * 2 + step % kCycle) % filters.size())); });
            break;
        case 5:
            timed(QStringLiteral("filter clear"), [&] { tables->filterEdit()->clear(); });
            timed(QStringLiteral("scroll"), [&] {
                if (round % 2)
                    tables->view()->scrollToTop();
                else
                    tables->view()->scrollToBottom();
            });
            break;
        case 6:
            timed(QStringLiteral("page ") + dashboard->objectName(), [&] { pages->setCurrentWidget(dashboard); });
            break;
        case 7:
            timed(QStringLiteral("dashboard group"), [&] {
                QComboBox *group = dashboard->groupCombo();
                group->setCurrentIndex((group->currentIndex() + 1) % group->count());
            });
            break;
        case 8:
            timed(QStringLiteral("dashboard filter"),
                  [&] { dashboard->filterEdit()->setText(dashboardFilters.at(round % dashboardFilters.size())); });
            break;
        default:
            timed(QStringLiteral("dashboard filter clear"), [&] { dashboard->filterEdit()->clear(); });
            timed(QStringLiteral("dashboard order"), [&] {
                QComboBox *order = dashboard->orderCombo();
                order->setCurrentIndex((order->currentIndex() + 1) % order->count());
            });
            timed(QStringLiteral("dashboard scroll"), [&] {
                QScrollBar *bar = dashboard->scrollArea()->verticalScrollBar();
                bar->setValue(round % 2 ? bar->minimum() : bar->maximum());
            });
            break;
        }
        ++step;
    });

    QString failure;
    QObject::connect(engine, &EngineBridge::stateChanged, &app, [&](EngineBridge::State state, const QString &message) {
        if (state == EngineBridge::State::Stopped && started && !message.isEmpty())
            failure = message;
    });

    qint64 measureStartNs = 0;
    std::size_t measureFrom = 0;
    QTimer::singleShot(0, &app, [&] {
        window.openWorkspace(parser.value(stateOpt));
        measureStartNs = clock.nsecsElapsed();
        measureFrom = stalls.size();
        measuring = true;
        driver.start();
    });
    QTimer::singleShot(seconds * 1000, &app, [&] {
        probe.stop();
        driver.stop();
        QApplication::quit();
    });
    QApplication::exec();
    const double rss = peakRssMb();
    engine->stop();

    std::vector<double> measured(stalls.begin() + static_cast<std::ptrdiff_t>(std::min(measureFrom, stalls.size())),
                                 stalls.end());
    if (measured.empty() || tableCount == 0) {
        std::fprintf(stderr, "driftless-b12: no measurement (tables=%zu, ticks=%zu)\n", tableCount, measured.size());
        return 1;
    }
    std::sort(measured.begin(), measured.end());
    const double maxStall = measured.back();
    const double p99 = measured[std::min(measured.size() - 1, measured.size() * 99 / 100)];
    const double over50 = double(std::count_if(measured.begin(), measured.end(), [](double v) { return v > 50; }));
    std::sort(dashboardStalls.begin(), dashboardStalls.end());
    const double dashboardMax = dashboardStalls.empty() ? -1 : dashboardStalls.back();
    const double dashboardP99 =
        dashboardStalls.empty()
            ? -1
            : dashboardStalls[std::min(dashboardStalls.size() - 1, dashboardStalls.size() * 99 / 100)];
    // Each tick is tickMs plus its lateness.
    double dashboardSeconds = 0;
    for (double late : dashboardStalls)
        dashboardSeconds += (late + tickMs) / 1000.0;

    std::fprintf(stderr, "driftless-b12: %s; engine threads: %s\n", session.c_str(),
                 driftless::ui::toString(driftless::ui::chooseEnginePriority()));
    std::fprintf(stderr, "driftless-b12: %zu ticks over %.1f s, %zu snapshots; longest stalls:\n", measured.size(),
                 double(clock.nsecsElapsed() - measureStartNs) / 1e9, snapshots);
    for (const Stall &s : worst) {
        std::fprintf(stderr,
                     "  %8.1f ms (UI thread on CPU %6.1f ms, waiting for a CPU %6.1f ms) at %6.1f s (after: %s)\n",
                     s.ms, s.cpuMs, s.queueMs, s.atS, qPrintable(s.after));
        for (const QString &d : s.deliveries)
            std::fprintf(stderr, "             %s\n", qPrintable(d));
    }
    std::fprintf(stderr, "driftless-b12: driver actions (longest, count):\n");
    for (const ActionTime &a : actionTimes)
        std::fprintf(stderr, "  %-22s %8.1f ms  %d\n", qPrintable(a.what), a.maxMs, a.count);
    if (app.timing) {
        std::vector<std::pair<std::pair<QString, int>, TimingApplication::Cost>> costs(app.costs.begin(),
                                                                                       app.costs.end());
        std::sort(costs.begin(), costs.end(),
                  [](const auto &a, const auto &b) { return a.second.maxMs > b.second.maxMs; });
        std::fprintf(stderr, "driftless-b12: longest event deliveries in UI-thread CPU (receiver, event type: max, "
                             "total ms, count of >= 0.5 ms):\n");
        for (std::size_t i = 0; i < std::min<std::size_t>(25, costs.size()); ++i)
            std::fprintf(stderr, "  %-34s %4d %8.1f %9.1f %6d\n", qPrintable(costs[i].first.first),
                         costs[i].first.second, costs[i].second.maxMs, costs[i].second.totalMs, costs[i].second.count);
    }
    if (!failure.isEmpty())
        std::fprintf(stderr, "driftless-b12: the engine stopped: %s\n", qPrintable(failure));

    std::printf("B12 max_stall_ms=%.1f p99_stall_ms=%.1f stalls_over_50ms=%.0f peak_rss_mb=%.1f tables=%zu "
                "pipelines=%zu seconds=%d tick_ms=%d dashboard_max_stall_ms=%.1f dashboard_p99_stall_ms=%.1f "
                "dashboard_seconds=%.1f\n",
                maxStall, p99, over50, rss, tableCount, pipelines.size(), seconds, tickMs, dashboardMax, dashboardP99,
                dashboardSeconds);
    return failure.isEmpty() ? 0 : 1;
}
