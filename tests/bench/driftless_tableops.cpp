// What the Tables page's own operations cost at 10,000 tables (issue 19, B12): a snapshot
// applied (every row's lag ticks, a tenth of the rows sync), unsorted, sorted by a live column
// (Lag) or a still one (Table), and under a filter; a sort by each column; a filter typed and
// cleared. UI-thread CPU milliseconds, median and longest, on the offscreen platform with the
// page shown at 1400x900 and repainted after each operation (as the event loop would). A
// diagnostic for B12, no servers; not part of run_all.sh. Usage: driftless-tableops [ROWS] [RUNS]
#include "ui/backfillrunner.h"
#include "ui/enginebridge.h"
#include "ui/enginesnapshot.h"
#include "ui/models/tablesmodel.h"
#include "ui/pages/tablespage.h"
#include "ui/resources.h"

#include <QApplication>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <time.h>

namespace {

double threadCpuMs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

using driftless::core::TableReport;

driftless::ui::EngineSnapshot makeSnapshot(int rows, int tick)
{
    driftless::ui::EngineSnapshot snapshot;
    const std::int64_t now = 1'700'000'000'000 + tick * 1000;
    snapshot.takenAtMs = now;
    const driftless::core::Strategy strategies[] = {driftless::core::Strategy::FullRefresh,
                                                    driftless::core::Strategy::Cursor, driftless::core::Strategy::Cdc};
    const int perPipeline = std::max(1, rows / 10);
    for (int i = 0; i < rows; ++i) {
        TableReport r;
        r.pipeline = "p" + std::to_string(i / perPipeline);
        char name[32];
        std::snprintf(name, sizeof name, "s%d.t%04d", i / perPipeline, i % perPipeline);
        r.table = name;
        r.target = "dst:" + r.table;
        r.strategy = strategies[i % 3];
        r.state = driftless::core::TableState::Ok;
        r.freshness = driftless::core::Freshness::Ok;
        r.slaSeconds = 60;
        // Each row synced at a time of its own (every 5 s); lag grows by a second a tick.
        const int since = (i * 7 + tick) % 5;
        r.lagSeconds = 0.5 + since;
        r.lastSyncAtMs = now - since * 1000;
        r.rowsApplied = 20 + i + (tick - since) / 5 * 20;
        snapshot.tables.push_back(std::move(r));
    }
    return snapshot;
}

struct Figure {
    std::vector<double> ms;
    void add(double v) { ms.push_back(v); }
    void print(const char *what) const
    {
        auto s = ms;
        std::sort(s.begin(), s.end());
        std::printf("%-32s median_ms=%7.2f max_ms=%7.2f runs=%zu\n", what, s[s.size() / 2], s.back(), s.size());
    }
};

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    driftless::ui::initResources();
    const int rows = argc > 1 ? std::max(10, std::atoi(argv[1])) : 10000;
    const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;

    driftless::ui::TablesModel model;
    driftless::ui::EngineBridge engine;
    driftless::ui::BackfillRunner runner(&engine);
    driftless::ui::TablesPage page(&model, &runner);
    int tick = 0;
    model.setSnapshot(makeSnapshot(rows, tick));
    page.resize(1400, 900);
    page.show();
    QApplication::processEvents();

    const auto timed = [&](Figure &f, const std::function<void()> &op) {
        const double start = threadCpuMs();
        op();
        QApplication::processEvents(); // deferred layouts and column fits
        page.view()->viewport()->repaint();
        f.add(threadCpuMs() - start);
    };
    const auto apply = [&] { model.setSnapshot(makeSnapshot(rows, ++tick)); };
    const auto snapshotCost = [&](const char *what) {
        // Making the snapshot is the engine's work, not the page's: timed apart and left out.
        Figure f;
        for (int i = 0; i < runs; ++i) {
            const auto s = makeSnapshot(rows, ++tick);
            timed(f, [&] { model.setSnapshot(s); });
        }
        f.print(what);
    };

    std::printf("rows=%d runs=%d\n", rows, runs);
    page.view()->sortByColumn(-1, Qt::AscendingOrder);
    snapshotCost("snapshot unsorted");
    page.view()->sortByColumn(driftless::ui::TablesModel::Lag, Qt::AscendingOrder);
    snapshotCost("snapshot sorted by lag");
    page.view()->sortByColumn(driftless::ui::TablesModel::Table, Qt::AscendingOrder);
    snapshotCost("snapshot sorted by table");
    page.filterEdit()->setText(QStringLiteral("s3."));
    snapshotCost("snapshot sorted+filtered");
    page.filterEdit()->clear();

    Figure sort;
    for (int i = 0; i < runs; ++i)
        for (int c = 0; c < driftless::ui::TablesModel::ColumnCount; ++c)
            timed(sort, [&] { page.view()->sortByColumn(c, (i + c) % 2 ? Qt::DescendingOrder : Qt::AscendingOrder); });
    sort.print("sort (each column)");

    Figure filter, clear;
    const QStringList filters = {QStringLiteral("s3."), QStringLiteral("t0042"), QStringLiteral("cursor"),
                                 QStringLiteral("p7")};
    for (int i = 0; i < runs; ++i)
        for (const QString &f : filters) {
            timed(filter, [&] { page.filterEdit()->setText(f); });
            timed(clear, [&] { page.filterEdit()->clear(); });
        }
    filter.print("filter");
    clear.print("filter clear");
    apply();
    return 0;
}
