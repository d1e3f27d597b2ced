// The Slots page's history chart on a recording of a real agent with slot samples of known
// values added: the retained WAL and safe_wal_size lines hold those samples, the slot guard's
// warn_retained and max_retained are dashed lines at their values, the window fits the three
// minutes there are, and the projection line and the Time to limit column read as the engine's
// seconds_to_limit says (and, when it is null, as the guard tells apart). A binlog pipeline of a
// MariaDB source is a row of its own (kind binlog: needed and oldest file, bytes behind, time to
// expiry) and charts its bytes behind. The pointer over the chart is told the nearest sample's
// values, and a legend click hides a line and fits the axis to the lines still shown.

#include "tests/support/guisupport.h"
#include "tests/support/recordeddoor.h"

#include "ui/enginebridge.h"
#include "ui/mainwindow.h"
#include "ui/models/slotsmodel.h"
#include "ui/pages/slotspage.h"
#include "ui/widgets/legendstrip.h"
#include "ui/widgets/slothistorychart.h"

#include <QAbstractItemModelTester>
#include <QChart>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QFile>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QToolTip>
#include <QValueAxis>

using namespace driftless;
using namespace driftless::ui;
using nlohmann::json;

namespace {

constexpr std::int64_t kMB = 1024 * 1024;

std::int64_t recordedAtMs()
{
    QFile f(QStringLiteral(DRIFTLESS_RECORDING));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    return json::parse(f.readAll().toStdString()).at("recorded_at_ms").get<std::int64_t>();
}

/// The recording's workspace with a slot guard on its source `app`.
std::string guardedWorkspace(const std::string &guard)
{
    return "endpoints:\n"
           "  app: {kind: postgres, dsn: \"host=127.0.0.1 port=5432 user=driftless dbname=shop_app\"" +
           guard +
           "}\n"
           "  warehouse: {kind: postgres, dsn: \"host=127.0.0.1 port=5432 user=driftless dbname=shop_warehouse\"}\n"
           "pipelines:\n"
           "  - name: shop\n"
           "    source: app\n"
           "    target: warehouse\n"
           "    tables:\n"
           "      - {table: \"public.orders\", strategy: cdc, freshness_sla: 1m}\n";
}

json slotsAnswer(std::int64_t atMs, const json &secondsToLimit, const json &safeWalSize)
{
    return {
        {"errors", json::array()},
        {"sampled_at_ms", atMs},
        {"slots",
         {{{"active", true},
           {"active_pid", 20814},
           {"confirmed_flush_lsn", "0/7297988"},
           {"database", "shop_app"},
           {"orphaned", false},
           {"owner", "shop"},
           {"plugin", "pgoutput"},
           {"restart_lsn", "0/726F990"},
           {"retained_bytes", 25 * kMB / 10},
           {"safe_wal_size", safeWalSize},
           {"seconds_to_limit", secondsToLimit},
           {"slot", "driftless_shop"},
           {"slot_type", "logical"},
           {"source", "app"},
           {"temporary", false},
           {"unconfirmed_bytes", 42608},
           {"wal_status", "reserved"}}}},
        {"sources",
         {{{"current_lsn", "0/72A1FF8"}, {"error", nullptr}, {"max_slot_wal_keep_size", nullptr}, {"source", "app"}}}}};
}

} // namespace

class TestSlotHistory : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::useTestSettings(); }
    void theChartDrawsTheStoredSamplesWithTheGuardLines();
    void theProjectionReadsAsTheEngineSays_data();
    void theProjectionReadsAsTheEngineSays();
    void aBinlogPipelineIsListedAndChartedLikeASlot();
};

void TestSlotHistory::theChartDrawsTheStoredSamplesWithTheGuardLines()
{
    const std::int64_t recorded = recordedAtMs();
    QVERIFY(recorded > 0);
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QAbstractItemModelTester tester(w.slotsModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    auto *door = new test::RecordedDoor(QStringLiteral(DRIFTLESS_RECORDING));

    // The source guards its slots at 4 MB, warning from 2 MB; the server limits them too.
    QFile f(QStringLiteral(DRIFTLESS_RECORDING));
    QVERIFY(f.open(QIODevice::ReadOnly));
    json snapshot =
        json::parse(f.readAll().toStdString()).at("answers").at("GET /api/v1/snapshot?events=200").at("body");
    snapshot["workspace_yaml"] =
        guardedWorkspace(", slot_guard: {max_retained: 4MB, warn_retained: 2MB, action: alert}");
    door->answer("GET /api/v1/snapshot?events=200", 200, snapshot);
    door->answer("GET /api/v1/slots?fresh=true", 200, slotsAnswer(recorded, 11'400, 5 * kMB));
    // Thirteen samples 15 s apart over the last three minutes: retained WAL grows by 0.125 MB a
    // sample from 1 MB, safe_wal_size falls as much from 6.5 MB.
    json history = json::array();
    std::vector<std::int64_t> at;
    for (int i = 0; i < 13; ++i) {
        at.push_back(recorded - 180'000 + i * 15'000);
        history.push_back({{"at_ms", at.back()},
                           {"retained_bytes", kMB + i * kMB / 8},
                           {"unconfirmed_bytes", 1000},
                           {"safe_wal_size", 13 * kMB / 2 - i * kMB / 8}});
    }
    door->answer("GET /api/v1/slot-history?source=app&slot=driftless_shop", 200, history);
    w.engine()->attachDoor(door, QStringLiteral("recorded agent"));

    w.pages()->setCurrentWidget(w.slotsPage());
    QTRY_VERIFY2(w.engine()->snapshot().workspace, qPrintable(w.engine()->snapshot().error));
    QTRY_COMPARE(w.slotsModel()->rowCount(), 1);
    auto *chart = w.slotsPage()->historyChart();
    QCOMPARE(chart->windowMs(), SlotHistoryChart::kFit);
    QSignalSpy ready(chart, &SlotHistoryChart::historyReady);
    // The guard comes with the workspace of the engine's snapshot.
    QTRY_COMPARE(w.slotsModel()->index(0, SlotsModel::TimeToLimit).data().toString(), QStringLiteral("3 h 10 min"));
    w.slotsPage()->selectSlot(QStringLiteral("app"), QStringLiteral("driftless_shop"));
    QTRY_VERIFY(chart->historyLoaded() && chart->retainedSeries()->count() == 13);
    QVERIFY(door->count("GET /api/v1/slot-history?source=app&slot=driftless_shop") >= 1);

    // The samples, moved to now as the door moves the recording, in MB.
    const std::int64_t shift = chart->shownToMs() - core::wallClockMs();
    QVERIFY(std::abs(shift) < 60'000);
    QCOMPARE(chart->unitBytes(), double(kMB));
    const auto retained = chart->retainedSeries()->points();
    const auto safe = chart->safeWalSeries()->points();
    QCOMPARE(safe.size(), 13);
    const std::int64_t moved = static_cast<std::int64_t>(retained.front().x()) - at.front();
    QVERIFY(moved >= 0);
    for (int i = 0; i < 13; ++i) {
        QCOMPARE(static_cast<std::int64_t>(retained[i].x()), at[static_cast<std::size_t>(i)] + moved);
        QCOMPARE(retained[i].y(), 1.0 + i / 8.0);
        QCOMPARE(safe[i].y(), 6.5 - i / 8.0);
    }
    // The guard's lines, dashed, across the window, at 2 MB and 4 MB.
    for (auto [line, value] : {std::pair{chart->warnLine(), 2.0}, std::pair{chart->maxLine(), 4.0}}) {
        QCOMPARE(line->count(), 2);
        QCOMPARE(line->at(0).y(), value);
        QCOMPARE(line->at(1).y(), value);
        QCOMPARE(line->pen().style(), Qt::DashLine);
        QCOMPARE(static_cast<std::int64_t>(line->at(0).x()), chart->shownFromMs());
    }
    QCOMPARE(chart->warnLine()->name(), QStringLiteral("warn_retained 2.0 MB"));
    QCOMPARE(chart->maxLine()->name(), QStringLiteral("max_retained 4.0 MB"));
    QCOMPARE(chart->legend()->entries().size(), std::size_t{4});
    // The window fits the three minutes of history, not the last hour.
    const std::int64_t span = chart->shownToMs() - chart->shownFromMs();
    QVERIFY2(span >= 180'000 && span < 200'000, qPrintable(QString::number(span)));
    QVERIFY(chart->shownFromMs() <= at.front() + moved);
    QCOMPARE(chart->projectionLabel()->text(), QStringLiteral("At this rate: limit in 3 h 10 min"));
    auto *y = qobject_cast<QValueAxis *>(chart->chart()->axes(Qt::Vertical).value(0));
    QVERIFY(y);
    QCOMPARE(y->titleText(), QStringLiteral("WAL (MB)"));
    QCOMPARE(y->max(), 8.0); // 6.5 MB with headroom, in whole MB ticks

    // The pointer over a line is told the nearest sample: its time and both values.
    const qreal fifth = static_cast<qreal>(at[4] + moved);
    const QString told = QDateTime::fromMSecsSinceEpoch(at[4] + moved).toString(QStringLiteral("HH:mm:ss")) +
                         QStringLiteral("\nRetained WAL: 1.5 MB\nsafe_wal_size: 6.0 MB");
    QCOMPARE(chart->hoverText(fifth + 4'000), told);
    emit chart->retainedSeries()->hovered(QPointF(fifth + 4'000, 1.5), true);
    QTRY_COMPARE(QToolTip::text(), told);
    emit chart->retainedSeries()->hovered(QPointF(fifth + 4'000, 1.5), false);
    QTRY_VERIFY(!QToolTip::isVisible());

    // A click on a legend entry hides its line and the axis fits the lines still shown: without
    // safe_wal_size the 4 MB limit is the top; without it too, the 2.5 MB retained.
    auto click = [&](int entry) {
        const QRect rect = chart->legend()->entryRects(chart->legend()->width()).at(std::size_t(entry));
        QTest::mouseClick(chart->legend(), Qt::LeftButton, {}, rect.center());
    };
    QCOMPARE(chart->legend()->entries().at(1).name, QStringLiteral("safe_wal_size (max_slot_wal_keep_size left)"));
    click(1);
    QVERIFY(chart->isHidden(SlotHistoryChart::Line::SafeWal));
    QVERIFY(!chart->safeWalSeries()->isVisible() && chart->retainedSeries()->isVisible());
    QVERIFY(chart->legend()->entries().at(1).hidden);
    QVERIFY2(y->max() >= 4.0 && y->max() < 6.0, qPrintable(QString::number(y->max())));
    click(3); // max_retained 4.0 MB
    QVERIFY(!chart->maxLine()->isVisible() && chart->warnLine()->isVisible());
    QVERIFY2(y->max() >= 2.5 && y->max() < 4.0, qPrintable(QString::number(y->max())));
    QTest::qWait(200);
    test::saveShot(&w, QStringLiteral("slots-history-lines-hidden"));
    // Hidden lines stay hidden through a new read, and a second click shows them again.
    chart->reload();
    QTRY_VERIFY(chart->historyLoaded() && chart->retainedSeries()->count() == 13);
    QVERIFY(!chart->safeWalSeries()->isVisible() && y->max() < 4.0);
    click(1);
    click(3);
    QVERIFY(chart->safeWalSeries()->isVisible() && chart->maxLine()->isVisible());
    QCOMPARE(y->max(), 8.0);
    // Qt Charts lays its scene out on the event loop: let it, before the screenshot.
    QTest::qWait(200);
    test::saveShot(&w, QStringLiteral("slots-history"));

    // A fixed window: the same samples, in the last 15 minutes.
    chart->setWindowMs(15 * 60'000);
    QTRY_VERIFY(chart->historyLoaded() && chart->shownToMs() - chart->shownFromMs() == 15 * 60'000);
    QCOMPARE(chart->retainedSeries()->count(), 13);

    // The engine stopped for twelve minutes: two lines, none drawn across the gap.
    json gapped = json::array();
    for (std::int64_t start : {recorded - 900'000, recorded - 90'000})
        for (int i = 0; i < 6; ++i)
            gapped.push_back({{"at_ms", start + i * 15'000},
                              {"retained_bytes", kMB},
                              {"unconfirmed_bytes", 1000},
                              {"safe_wal_size", 6 * kMB}});
    door->answer("GET /api/v1/slot-history?source=app&slot=driftless_shop", 200, gapped);
    chart->setWindowMs(SlotHistoryChart::kFit);
    QTRY_VERIFY(chart->historyLoaded() && chart->retainedSegments() == 2);
    QCOMPARE(chart->retainedSeries()->count(), 6);
    door->answer("GET /api/v1/slot-history?source=app&slot=driftless_shop", 200, history);
    chart->reload();
    QTRY_VERIFY(chart->historyLoaded() && chart->retainedSegments() == 1 && chart->retainedSeries()->count() == 13);

    // Nothing selected: nothing charted, and a reply still on its way is dropped.
    chart->setWindowMs(SlotHistoryChart::kFit);
    w.slotsPage()->view()->clearSelection();
    QTRY_COMPARE(chart->retainedSeries()->count(), 0);
    QVERIFY(!chart->historyLoaded());
    QTest::qWait(50);
    QCOMPARE(chart->retainedSeries()->count(), 0);
    Q_UNUSED(ready);
}

void TestSlotHistory::theProjectionReadsAsTheEngineSays_data()
{
    QTest::addColumn<QVariant>("seconds");
    QTest::addColumn<bool>("guarded");
    QTest::addColumn<bool>("serverLimit");
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("column");
    QTest::newRow("heading for the limit")
        << QVariant(11'400.0) << true << false << QStringLiteral("At this rate: limit in 3 h 10 min")
        << QStringLiteral("3 h 10 min");
    QTest::newRow("at the limit") << QVariant(0.0) << true << false << QStringLiteral("At its limit now")
                                  << QStringLiteral("at its limit now");
    QTest::newRow("null with a guard") << QVariant() << true << false << QStringLiteral("Not growing")
                                       << QStringLiteral("not growing");
    QTest::newRow("null with the server's limit")
        << QVariant() << false << true << QStringLiteral("Not growing") << QStringLiteral("not growing");
    QTest::newRow("null without a limit")
        << QVariant() << false << false << QStringLiteral("No limit set") << QStringLiteral("no limit");
}

void TestSlotHistory::theProjectionReadsAsTheEngineSays()
{
    QFETCH(QVariant, seconds);
    QFETCH(bool, guarded);
    QFETCH(bool, serverLimit);
    QFETCH(QString, line);
    QFETCH(QString, column);
    core::SlotReport slot;
    slot.source = "app";
    slot.slot = "driftless_shop";
    slot.retainedBytes = 1024;
    if (seconds.isValid())
        slot.secondsToLimit = seconds.toDouble();
    if (serverLimit)
        slot.safeWalSize = 5 * kMB;
    std::optional<core::SlotGuard> guard;
    if (guarded)
        guard = core::SlotGuard{4 * kMB, core::SlotGuard::Action::Alert, 2 * kMB, {}, {}};
    const QString text = SlotHistoryChart::projectionText(slot, guard);
    QVERIFY2(text.startsWith(line), qPrintable(text));

    SlotsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setSlots({slot}, {slotLimitApplies(slot, guard)});
    QCOMPARE(model.index(0, SlotsModel::TimeToLimit).data().toString(), column);
}

void TestSlotHistory::aBinlogPipelineIsListedAndChartedLikeASlot()
{
    const std::int64_t recorded = recordedAtMs();
    QVERIFY(recorded > 0);
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QAbstractItemModelTester tester(w.slotsModel(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    auto *door = new test::RecordedDoor(QStringLiteral(DRIFTLESS_RECORDING));
    // The agent's answer with the Postgres slot and a MariaDB pipeline 3.2 MB behind, whose needed
    // file the server may purge in 2 h 10 min.
    json withBinlog = slotsAnswer(recorded, 11'400, nullptr);
    withBinlog["binlogs"] = json::array({{{"source", "shop_db"},
                                          {"pipeline", "orders_mysql"},
                                          {"needed_file", "mysql-bin.000012"},
                                          {"needed_pos", 1234},
                                          {"oldest_file", "mysql-bin.000010"},
                                          {"newest_file", "mysql-bin.000014"},
                                          {"bytes_behind", 32 * kMB / 10},
                                          {"retention_seconds", 86'400},
                                          {"needed_closed_at", nullptr},
                                          {"expires_at", nullptr},
                                          {"seconds_to_expiry", 7'800},
                                          {"needed_purged", false},
                                          {"error", nullptr}}});
    door->answer("GET /api/v1/slots?fresh=true", 200, withBinlog);
    // Thirteen samples 15 s apart: 0.25 MB more behind each, from 0.25 MB.
    json history = json::array();
    for (int i = 0; i < 13; ++i)
        history.push_back({{"at_ms", recorded - 180'000 + i * 15'000},
                           {"retained_bytes", kMB / 4 + i * kMB / 4},
                           {"unconfirmed_bytes", nullptr},
                           {"safe_wal_size", nullptr}});
    door->answer("GET /api/v1/slot-history?source=shop_db&slot=binlog:orders_mysql", 200, history);
    w.engine()->attachDoor(door, QStringLiteral("recorded agent"));

    w.pages()->setCurrentWidget(w.slotsPage());
    QTRY_VERIFY2(w.engine()->snapshot().workspace, qPrintable(w.engine()->snapshot().error));
    QTRY_COMPARE(w.slotsModel()->rowCount(), 2);
    const int row = w.slotsModel()->rowOf(QStringLiteral("shop_db"), QStringLiteral("binlog:orders_mysql"));
    QVERIFY(row >= 0);
    auto cell = [&](int column) { return w.slotsModel()->index(row, column).data().toString(); };
    QCOMPARE(w.slotsModel()->index(row, 0).data(SlotsModel::OwnerKindRole).toString(), QStringLiteral("binlog"));
    QCOMPARE(cell(SlotsModel::Slot), QStringLiteral("binlog: needs mysql-bin.000012"));
    QCOMPARE(cell(SlotsModel::Owner), QStringLiteral("orders_mysql"));
    QCOMPARE(cell(SlotsModel::WalStatus), QStringLiteral("oldest mysql-bin.000010"));
    QCOMPARE(cell(SlotsModel::Retained), QStringLiteral("3.2 MB"));
    QCOMPARE(cell(SlotsModel::SafeWalSize), QStringLiteral("kept 1 d"));
    QCOMPARE(cell(SlotsModel::TimeToLimit), QStringLiteral("expires in 2 h 10 min"));
    QCOMPARE(cell(SlotsModel::ConfirmedFlushLsn), QStringLiteral("mysql-bin.000012:1234"));
    QVERIFY2(w.slotsPage()
                 ->findChild<QLabel *>(QStringLiteral("slotsSummary"))
                 ->text()
                 .contains(QStringLiteral("1 binlog pipeline")),
             qPrintable(w.slotsPage()->findChild<QLabel *>(QStringLiteral("slotsSummary"))->text()));

    auto *chart = w.slotsPage()->historyChart();
    w.slotsPage()->selectSlot(QStringLiteral("shop_db"), QStringLiteral("binlog:orders_mysql"));
    QVERIFY(!w.slotsPage()->dropButton()->isEnabled()); // a binlog holds nothing to drop
    // The history of binlog:orders_mysql: the ':' is sent encoded, and the encoding kept whole.
    QTRY_VERIFY(chart->historyLoaded() && chart->retainedSeries()->count() == 13);
    QVERIFY(door->count("GET /api/v1/slot-history?source=shop_db&slot=binlog:orders_mysql") >= 1);
    const auto behind = chart->retainedSeries()->points();
    for (int i = 0; i < 13; ++i)
        QCOMPARE(behind[i].y(), 0.25 + i / 4.0);
    QCOMPARE(chart->retainedSeries()->name(), QStringLiteral("Binlog behind"));
    QCOMPARE(chart->projectionLabel()->text(), QStringLiteral("The binlog file it needs expires in 2 h 10 min"));
    auto *y = qobject_cast<QValueAxis *>(chart->chart()->axes(Qt::Vertical).value(0));
    QVERIFY(y);
    QCOMPARE(y->titleText(), QStringLiteral("Binlog (MB)"));
    QTest::qWait(200);
    test::saveShot(&w, QStringLiteral("slots-binlog"));
}

QTEST_MAIN(TestSlotHistory)
#include "tst_slothistory.moc"
