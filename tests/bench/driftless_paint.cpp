// Paint cost of the Tables page: a 1,000-row snapshot (every state, badge and bar the page
// draws), the page at 1400x900 on the offscreen platform, and the viewport repainted whole N
// times. Prints the median and the longest full repaint in UI-thread CPU milliseconds, then
// the UI-thread CPU of showing the Lag chart the first time. A diagnostic for B12 (a full
// repaint follows every page switch, sort, filter and scroll); not part of run_all.sh.
#include "ui/backfillrunner.h"
#include "ui/enginebridge.h"
#include "ui/enginesnapshot.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/tablespage.h"
#include "ui/resources.h"
#include "ui/widgets/lagchart.h"

#include <QApplication>
#include <QEventLoop>
#include <QLineEdit>
#include <QTableView>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <vector>

#include <time.h>

namespace {

double threadCpuMs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    driftless::ui::initResources();
    const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;

    using driftless::core::TableReport;
    driftless::ui::EngineSnapshot snapshot;
    const std::int64_t now = 1'700'000'000'000;
    snapshot.takenAtMs = now;
    const driftless::core::Strategy strategies[] = {driftless::core::Strategy::FullRefresh,
                                                    driftless::core::Strategy::Cursor, driftless::core::Strategy::Cdc};
    using driftless::core::Freshness;
    const Freshness freshness[] = {Freshness::Ok, Freshness::Ok, Freshness::Warn, Freshness::Breach,
                                   Freshness::Unknown};
    for (int i = 0; i < 1000; ++i) {
        TableReport r;
        r.pipeline = "p" + std::to_string(i / 100);
        char name[32];
        std::snprintf(name, sizeof name, "s%d.t%03d", i / 100, i % 100);
        r.table = name;
        r.target = "dst:" + r.table;
        r.strategy = strategies[i % 3];
        r.state = i % 7 == 0 ? driftless::core::TableState::Backfilling : driftless::core::TableState::Ok;
        r.freshness = freshness[i % 5];
        r.lagSeconds = 0.5 + i % 37;
        r.slaSeconds = 60;
        r.rowsApplied = 1000 + i * 17;
        r.lastSyncAtMs = now - i * 100;
        if (i % 7 == 0)
            r.backfill = TableReport::Backfill{i * 10, 10000, i * 0.1, 30.0};
        snapshot.tables.push_back(std::move(r));
    }
    for (int i = 0; i < 1000; i += 3) { // finished loads: a full bar saying done
        driftless::core::StateStore::Event e;
        e.id = i + 1;
        e.tsMs = now - 1000;
        e.level = driftless::core::Level::Info;
        e.pipeline = snapshot.tables[std::size_t(i)].pipeline;
        e.table = snapshot.tables[std::size_t(i)].table;
        e.kind = "load_done";
        e.message = "initial load done: 20 rows";
        if (!snapshot.tables[std::size_t(i)].backfill)
            snapshot.events.push_back(e);
    }

    driftless::ui::TablesModel model;
    driftless::ui::EngineBridge engine;
    driftless::ui::BackfillRunner runner(&engine);
    driftless::ui::TablesPage page(&model, &runner);
    model.setSnapshot(snapshot);
    page.resize(1400, 900);
    page.show();
    QApplication::processEvents();

    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
        const double start = threadCpuMs();
        page.view()->viewport()->repaint();
        ms.push_back(threadCpuMs() - start);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("tables_page_repaint median_ms=%.2f max_ms=%.2f min_ms=%.2f runs=%d\n", ms[ms.size() / 2], ms.back(),
                ms.front(), runs);

    // Filtering the page as a DBA types (each keystroke filters 1,000 rows), then clearing it.
    {
        std::vector<double> filterMs;
        const QStringList filters = {QStringLiteral("s3."), QStringLiteral("t042"), QStringLiteral("cursor"),
                                     QStringLiteral("breach"), QString()};
        for (int round = 0; round < 10; ++round)
            for (const QString &f : filters) {
                const double start = threadCpuMs();
                page.filterEdit()->setText(f);
                page.view()->viewport()->repaint();
                filterMs.push_back(threadCpuMs() - start);
            }
        std::sort(filterMs.begin(), filterMs.end());
        std::printf("tables_filter_and_repaint median_ms=%.2f max_ms=%.2f runs=%zu\n", filterMs[filterMs.size() / 2],
                    filterMs.back(), filterMs.size());
    }

    // The Lag chart shown for the first time with 1,000 tables: it charts the 20 furthest
    // behind (series, legend, first layout and paint), all on the UI thread.
    for (int round = 0; round < 3; ++round) {
        driftless::ui::LagChart chart;
        chart.resize(1400, 800);
        chart.setSnapshot(snapshot); // hidden: kept for the first show
        const double start = threadCpuMs();
        chart.show();
        QEventLoop settle;
        QTimer::singleShot(300, &settle, &QEventLoop::quit);
        settle.exec();
        std::printf("lag_chart_first_show cpu_ms=%.2f (over 300 ms)\n", threadCpuMs() - start);
        if (round == 0 && qEnvironmentVariableIsSet("PAINT_SHOT"))
            chart.grab().save(qEnvironmentVariable("PAINT_SHOT"));
    }
    return 0;
}
