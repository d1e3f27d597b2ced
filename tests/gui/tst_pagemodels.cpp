// SlotsModel, AlertsModel and AlertCenter over plain values: structure checked by
// QAbstractItemModelTester on every change, updates in place while the same rows stay, owners
// and statuses told in words and icons, and alerts opening once.

#include "ui/alertcenter.h"
#include "ui/displayformat.h"
#include "ui/models/alertsmodel.h"
#include "ui/models/pipelinesmodel.h"
#include "ui/models/slotsmodel.h"
#include "ui/slotmonitor.h"
#include "ui/widgets/cachedtextdelegate.h"
#include "ui/widgets/lagchart.h"
#include "ui/widgets/legendstrip.h"
#include "ui/widgets/visiblerowfitter.h"

#include <QAbstractItemModelTester>
#include <QChart>
#include <QHeaderView>
#include <QIcon>
#include <QImage>
#include <QLineSeries>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace driftless;
using driftless::ui::AlertCenter;
using driftless::ui::AlertsModel;
using driftless::ui::PipelinesModel;
using driftless::ui::SlotsModel;

namespace {

core::SlotReport slot(const std::string &name, const std::string &owner, bool active, std::int64_t retained)
{
    core::SlotReport s;
    s.source = "app";
    s.slot = name;
    s.slotType = "logical";
    s.plugin = "pgoutput";
    s.database = "app";
    s.owner = owner;
    s.active = active;
    if (active)
        s.activePid = 4242;
    s.walStatus = driftless::core::WalStatus::Reserved;
    s.retainedBytes = retained;
    s.confirmedFlushLsn = "0/1A2B3C4";
    s.restartLsn = "0/1A2B000";
    return s;
}

core::SlotReport orphan(const std::string &name)
{
    auto s = slot(name, "", false, 3 * 1024 * 1024);
    s.orphaned = true;
    return s;
}

ui::SlotSample sampleOf(std::vector<core::SlotReport> rows, std::int64_t atMs = 1'700'000'000'000)
{
    ui::SlotSample s;
    s.statePath = QStringLiteral("/tmp/ws.db");
    s.takenAtMs = atMs;
    core::SourceSlots source;
    source.source = "app";
    source.replicationSlots = std::move(rows);
    s.sources.push_back(std::move(source));
    return s;
}

core::Alert alert(const std::string &kind, const std::string &level, const std::string &slotName)
{
    core::Alert a;
    a.id = kind + ":app/" + slotName;
    a.kind = kind;
    a.level = *core::levelFrom(level);
    a.source = "app";
    a.slot = slotName;
    a.message = "replication slot " + slotName + " needs a look";
    a.action = "SELECT pg_drop_replication_slot('" + slotName + "')";
    a.sinceMs = 1'700'000'000'000;
    return a;
}

std::shared_ptr<const core::Workspace> workspaceWithPipeline(const std::string &pipeline)
{
    auto ws = std::make_shared<core::Workspace>();
    ws->endpoints["app"] =
        core::Endpoint{"app", core::EndpointKind::Postgres, "dbname=app", "", std::nullopt, std::nullopt};
    ws->endpoints["dw"] =
        core::Endpoint{"dw", core::EndpointKind::Postgres, "dbname=dw", "", std::nullopt, std::nullopt};
    core::PipelineSpec p;
    p.name = pipeline;
    p.source = "app";
    p.target = "dw";
    ws->pipelines.push_back(p);
    return ws;
}

} // namespace

class TestPageModels : public QObject {
    Q_OBJECT
private slots:
    void slotsModelPassesTesterThroughUpdates();
    void slotsModelSaysWhoseEachSlotIs_data();
    void slotsModelSaysWhoseEachSlotIs();
    void slotsModelShowsStatusAsWordsAndIcons();
    void slotsModelUpdatesInPlaceWhileTheSameSlotsStay();
    void dropSqlIsQuoted();
    void bytesReadLikePgSizePretty_data();
    void bytesReadLikePgSizePretty();
    void alertsModelPassesTesterThroughUpdates();
    void alertCenterOpensEachAlertOnceAndTracksInactiveSlots();
    void rowFitterMeasuresOnlyTheRowsOnScreen();
    void cachedTextDelegatePaintsAsTheStyleDoes();
    void lagChartChartsTheFurthestBehindAndReusesItsLines();
    void aSnapshotsCopiesShareItsTablesUntilOneIsEdited();
    void pipelinesModelSaysHowManyTablesArePausedInPlace();
};

void TestPageModels::slotsModelPassesTesterThroughUpdates()
{
    SlotsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(SlotsModel::SortRole);
    proxy.sort(SlotsModel::Retained);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);

    model.setSample(sampleOf({slot("driftless_p1", "p1", true, 1024), orphan("driftless_gone")}));
    QCOMPARE(model.rowCount(), 2);
    model.setSample(sampleOf({slot("driftless_p1", "p1", false, 4096), orphan("driftless_gone")}));
    model.setSample(sampleOf({slot("driftless_p1", "p1", false, 4096)}));
    QCOMPARE(model.rowCount(), 1);
    model.setSample(sampleOf({}));
    QCOMPARE(model.rowCount(), 0);
    model.setSample(sampleOf({slot("a", "", true, 1), slot("b", "", false, 2), slot("c", "", false, 3)}));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(proxy.index(0, SlotsModel::Slot).data().toString(), QStringLiteral("a"));
}

void TestPageModels::slotsModelSaysWhoseEachSlotIs_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("owner");
    QTest::addColumn<bool>("orphaned");
    QTest::addColumn<bool>("temporary");
    QTest::addColumn<QString>("shown");
    QTest::addColumn<QString>("kind");
    QTest::newRow("pipeline") << "driftless_p1"
                              << "p1" << false << false << "p1"
                              << "pipeline";
    QTest::newRow("orphaned") << "driftless_gone"
                              << "" << true << false << "orphaned"
                              << "orphaned";
    QTest::newRow("someone else's") << "debezium"
                                    << "" << false << false << "not Driftless's"
                                    << "other";
    QTest::newRow("backfill") << "driftless_tmp_p1_1"
                              << "" << false << true << "backfill (temporary)"
                              << "temporary";
    QTest::newRow("another database") << "driftless_x"
                                      << "" << false << false << "Driftless, another database"
                                      << "other";
}

void TestPageModels::slotsModelSaysWhoseEachSlotIs()
{
    QFETCH(QString, name);
    QFETCH(QString, owner);
    QFETCH(bool, orphaned);
    QFETCH(bool, temporary);
    QFETCH(QString, shown);
    QFETCH(QString, kind);
    auto s = slot(name.toStdString(), owner.toStdString(), false, 0);
    s.orphaned = orphaned;
    s.temporary = temporary;
    SlotsModel model;
    model.setSlots({s});
    QCOMPARE(model.index(0, SlotsModel::Owner).data().toString(), shown);
    QCOMPARE(model.index(0, SlotsModel::Owner).data(SlotsModel::OwnerKindRole).toString(), kind);
    QVERIFY(!model.index(0, SlotsModel::Owner).data(Qt::ToolTipRole).toString().isEmpty());
}

void TestPageModels::slotsModelShowsStatusAsWordsAndIcons()
{
    auto lost = slot("driftless_p1", "p1", false, 0);
    lost.walStatus = driftless::core::WalStatus::Lost;
    lost.retainedBytes.reset();
    lost.safeWalSize.reset();
    auto limited = slot("other", "", true, 5 * 1024 * 1024);
    limited.safeWalSize = 1536 * 1024;
    SlotsModel model;
    model.setSlots({lost, limited});
    QCOMPARE(model.index(0, SlotsModel::Active).data().toString(), QStringLiteral("inactive"));
    QCOMPARE(model.index(1, SlotsModel::Active).data().toString(), QStringLiteral("active (pid 4242)"));
    QCOMPARE(model.index(0, SlotsModel::WalStatus).data().toString(), QStringLiteral("lost"));
    for (int row : {0, 1})
        for (int column : {SlotsModel::Active, SlotsModel::WalStatus})
            QVERIFY(!model.index(row, column).data(Qt::DecorationRole).value<QIcon>().isNull());
    QCOMPARE(model.index(0, SlotsModel::Retained).data().toString(), QStringLiteral("\u2014"));
    QCOMPARE(model.index(1, SlotsModel::Retained).data().toString(), QStringLiteral("5.0 MB"));
    QCOMPARE(model.index(1, SlotsModel::Retained).data(SlotsModel::SortRole).toLongLong(), 5LL * 1024 * 1024);
    QCOMPARE(model.index(1, SlotsModel::SafeWalSize).data().toString(), QStringLiteral("1.5 MB"));
    QCOMPARE(model.index(0, SlotsModel::SafeWalSize).data().toString(), QStringLiteral("\u2014"));
    limited.safeWalSize.reset();
    model.setSlots({lost, limited});
    QCOMPARE(model.index(1, SlotsModel::SafeWalSize).data().toString(), QStringLiteral("no limit"));
    QCOMPARE(model.index(1, SlotsModel::ConfirmedFlushLsn).data().toString(), QStringLiteral("0/1A2B3C4"));
    QCOMPARE(model.index(1, SlotsModel::Active).data(SlotsModel::ActiveRole).toBool(), true);
}

void TestPageModels::slotsModelUpdatesInPlaceWhileTheSameSlotsStay()
{
    SlotsModel model;
    model.setSlots({slot("driftless_p1", "p1", true, 100), orphan("driftless_gone")});
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setSlots({slot("driftless_p1", "p1", true, 100), orphan("driftless_gone")});
    QCOMPARE(changed.count(), 0);
    model.setSlots({slot("driftless_p1", "p1", false, 200), orphan("driftless_gone")});
    QCOMPARE(reset.count(), 0);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).toModelIndex().row(), 0);
    QCOMPARE(changed.at(0).at(1).toModelIndex().row(), 0);
    model.setSlots({orphan("driftless_gone")});
    QCOMPARE(reset.count(), 1);
}

void TestPageModels::dropSqlIsQuoted()
{
    QCOMPARE(ui::SlotMonitor::dropSql(QStringLiteral("driftless_gone")),
             QStringLiteral("SELECT pg_drop_replication_slot('driftless_gone');"));
    QCOMPARE(ui::SlotMonitor::dropSql(QStringLiteral("it's")),
             QStringLiteral("SELECT pg_drop_replication_slot('it''s');"));
}

void TestPageModels::bytesReadLikePgSizePretty_data()
{
    QTest::addColumn<qlonglong>("bytes");
    QTest::addColumn<QString>("text");
    QTest::newRow("zero") << 0LL << "0 bytes";
    QTest::newRow("bytes") << 1023LL << "1023 bytes";
    QTest::newRow("kB") << 1024LL << "1.0 kB";
    QTest::newRow("MB") << 1536LL * 1024 << "1.5 MB";
    QTest::newRow("tens of GB") << 12LL * 1024 * 1024 * 1024 << "12 GB";
    QTest::newRow("negative") << -2048LL << "-2.0 kB";
}

void TestPageModels::bytesReadLikePgSizePretty()
{
    QFETCH(qlonglong, bytes);
    QFETCH(QString, text);
    QCOMPARE(ui::formatBytes(bytes), text);
}

void TestPageModels::alertsModelPassesTesterThroughUpdates()
{
    AlertsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setAlerts({alert("slot_lost", "error", "a"), alert("slot_orphaned", "warn", "driftless_gone")});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, AlertsModel::Level).data().toString(), QStringLiteral("error"));
    QCOMPARE(model.index(1, AlertsModel::Level).data().toString(), QStringLiteral("warning"));
    QVERIFY(!model.index(1, AlertsModel::Level).data(Qt::DecorationRole).value<QIcon>().isNull());
    QCOMPARE(model.index(1, AlertsModel::Subject).data().toString(), QStringLiteral("app/driftless_gone"));
    QVERIFY(model.index(1, AlertsModel::Action).data().toString().contains(QStringLiteral("pg_drop_replication_slot")));
    QCOMPARE(model.index(1, AlertsModel::Level).data(AlertsModel::KindRole).toString(),
             QStringLiteral("slot_orphaned"));

    // The same alerts with a new message: updated in place, not reset.
    auto moved = alert("slot_lost", "error", "a");
    moved.message = "changed";
    const int resets = reset.count();
    model.setAlerts({moved, alert("slot_orphaned", "warn", "driftless_gone")});
    QCOMPARE(reset.count(), resets);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.index(0, AlertsModel::Message).data().toString(), QStringLiteral("changed"));

    model.setAlerts({alert("slot_orphaned", "warn", "driftless_gone")});
    QCOMPARE(model.rowCount(), 1);
    model.setAlerts({});
    QCOMPARE(model.rowCount(), 0);
}

void TestPageModels::alertCenterOpensEachAlertOnceAndTracksInactiveSlots()
{
    AlertCenter center;
    QSignalSpy opened(&center, &AlertCenter::alertsOpened);
    ui::EngineSnapshot snapshot;
    snapshot.statePath = QStringLiteral("/tmp/ws.db");
    snapshot.takenAtMs = 1'700'000'000'000;
    snapshot.workspace = workspaceWithPipeline("p1");
    center.setSnapshot(snapshot);
    QVERIFY(center.alerts().empty());

    auto sample = sampleOf({slot("driftless_p1", "p1", false, 10), orphan("driftless_gone")}, snapshot.takenAtMs);
    center.setSlotSample(sample);
    QCOMPARE(center.alerts().size(), std::size_t(1));
    QCOMPARE(center.alerts().front().kind, std::string("slot_orphaned"));
    QCOMPARE(opened.count(), 1);
    QCOMPARE(center.inactiveSince().at("app/driftless_p1"), snapshot.takenAtMs);

    // Seen again 11 minutes later: still the same orphan (not opened again), and the pipeline's
    // own slot has now been inactive past the default 10 minutes.
    sample.takenAtMs += 11 * 60'000;
    center.setSlotSample(sample);
    QCOMPARE(center.inactiveSince().at("app/driftless_p1"), snapshot.takenAtMs);
    QCOMPARE(center.alerts().size(), std::size_t(2));
    QCOMPARE(opened.count(), 2);
    const auto newest = opened.last().at(0).value<std::vector<core::Alert>>();
    QCOMPARE(newest.size(), std::size_t(1));
    QCOMPARE(newest.front().kind, std::string("slot_inactive"));

    // Its consumer came back: no longer inactive, the alert clears.
    sample.sources[0].replicationSlots[0].active = true;
    sample.takenAtMs += 1000;
    center.setSlotSample(sample);
    QVERIFY(!center.inactiveSince().count("app/driftless_p1"));
    QCOMPARE(center.alerts().size(), std::size_t(1));

    // Another workspace forgets everything.
    snapshot.statePath = QStringLiteral("/tmp/other.db");
    center.setSnapshot(snapshot);
    QVERIFY(center.alerts().empty());
    QVERIFY(center.inactiveSince().empty());
}

void TestPageModels::rowFitterMeasuresOnlyTheRowsOnScreen()
{
    // 1,000 rows of sentences that wrap: each row on screen as tall as its text, rows off screen
    // not measured until they scroll into view.
    QStandardItemModel model(1000, 2);
    const QString sentence = QStringLiteral("replication slot driftless_p%1 retains 12 GB of WAL; drop it or promote "
                                            "the pipeline again, since a slot nobody reads keeps WAL forever");
    for (int r = 0; r < 1000; ++r) {
        model.setItem(r, 0, new QStandardItem(QStringLiteral("warn")));
        model.setItem(r, 1, new QStandardItem(r % 2 ? sentence.arg(r) : QStringLiteral("short %1").arg(r)));
    }
    QTableView view;
    view.setModel(&model);
    view.setWordWrap(true);
    view.horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    view.resize(500, 300);
    auto *fitter = new ui::VisibleRowFitter(&view);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    // Unmeasured rows keep the default height; measured ones are as tall as their text.
    const int unmeasured = view.verticalHeader()->defaultSectionSize();
    QTRY_VERIFY(view.rowHeight(1) > unmeasured); // fitted at the next event-loop turn
    QVERIFY(view.rowHeight(0) < unmeasured);
    QCOMPARE(view.rowHeight(999), unmeasured); // off screen: not measured
    QCOMPARE(view.rowHeight(998), unmeasured);
    const int measured = fitter->fitNow();
    QVERIFY2(measured > 0 && measured < 40, qPrintable(QString::number(measured)));

    // Scrolled to the end, the rows there are fitted too.
    view.scrollToBottom();
    QTRY_VERIFY(view.rowHeight(999) > unmeasured);
    QTRY_VERIFY(view.rowHeight(998) < unmeasured);

    // Narrower columns wrap into more lines: the rows on screen grow again.
    const int top = view.rowAt(0) | 1; // a long row at the top of the viewport
    const int before = view.rowHeight(top);
    view.resize(260, 300);
    QTRY_VERIFY(view.rowHeight(top) > before);
}

void TestPageModels::cachedTextDelegatePaintsAsTheStyleDoes()
{
    // The same cells drawn by the style (QStyledItemDelegate) and from the cache: the same pixels,
    // selected or not, left or right aligned, elided or whole, with an icon.
    QStandardItemModel model(4, 3);
    const QStringList texts = {QStringLiteral("s3.t042"),
                               QStringLiteral("cursor (fell back from CDC)"),
                               QStringLiteral("12 s"),
                               QStringLiteral("public.orders"),
                               QStringLiteral("a message far too long for its column, elided at the end"),
                               QStringLiteral("1,234,567"),
                               QStringLiteral("never"),
                               QStringLiteral(""),
                               QStringLiteral("2026-11-30 04:12:09"),
                               QStringLiteral("ok"),
                               QStringLiteral("Ünïcödé ✓ 表"),
                               QStringLiteral("-3.4028235e+38")};
    for (int i = 0; i < texts.size(); ++i) {
        auto *item = new QStandardItem(texts.at(i));
        if (i % 3 == 2)
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        if (i == 9)
            item->setIcon(QIcon(QStringLiteral(":/icons/ok.svg")));
        model.setItem(i / 3, i % 3, item);
    }
    auto render = [&](QStyledItemDelegate *delegate) {
        QTableView view;
        view.setItemDelegate(delegate);
        view.setWordWrap(false); // as the Tables page; wrapped text is left to the style
        view.setModel(&model);
        view.setColumnWidth(0, 150);
        view.setColumnWidth(1, 140);
        view.setColumnWidth(2, 120);
        view.resize(500, 200);
        view.selectRow(1);
        view.show();
        if (!QTest::qWaitForWindowExposed(&view))
            return QImage();
        QCoreApplication::processEvents();
        QImage image = view.viewport()->grab().toImage();
        view.setItemDelegate(nullptr);
        return image;
    };
    QStyledItemDelegate style;
    driftless::ui::CachedTextDelegate cached;
    const QImage expected = render(&style);
    const QImage drawn = render(&cached);
    QVERIFY(!expected.isNull());
    QVERIFY2(cached.cachedTexts() >= 10, "the texts were drawn from the cache");
    int inked = 0; // not the empty viewport's colour: cells, text, the selection
    const QRgb empty = expected.pixel(expected.width() - 1, expected.height() - 1);
    for (int y = 0; y < expected.height(); ++y)
        for (int x = 0; x < expected.width(); ++x)
            inked += expected.pixel(x, y) != empty ? 1 : 0;
    QVERIFY2(inked > 2000, qPrintable(QString::number(inked)));
    QCOMPARE(drawn.size(), expected.size());
    // Left-aligned text on the plain background lands on the same pixels. Right-aligned text
    // may land a fraction of a pixel apart, and text on the selection blends its edges a shade
    // differently (QTextLayout and QStaticText take different paths): there the ink must span
    // the same columns and rows within a pixel.
    QTableView probe;
    probe.setModel(&model);
    probe.setColumnWidth(0, 150);
    probe.setColumnWidth(1, 140);
    probe.setColumnWidth(2, 120);
    probe.resize(500, 200);
    probe.show();
    QVERIFY(QTest::qWaitForWindowExposed(&probe));
    for (int row = 0; row < model.rowCount(); ++row)
        for (int column = 0; column < model.columnCount(); ++column) {
            const QRect cellRect = probe.visualRect(model.index(row, column)).adjusted(1, 1, -2, -2);
            const QString where =
                QStringLiteral("cell %1,%2 (%3)").arg(row).arg(column).arg(model.index(row, column).data().toString());
            int differing = 0;
            QRect inkA, inkB; // where each differs from the cell's own fill
            const QRgb fill = expected.pixel(cellRect.left(), cellRect.top());
            for (int y = cellRect.top(); y <= cellRect.bottom(); ++y)
                for (int x = cellRect.left(); x <= cellRect.right(); ++x) {
                    const QRgb a = expected.pixel(x, y), b = drawn.pixel(x, y);
                    differing += a != b ? 1 : 0;
                    if (a != fill)
                        inkA |= QRect(x, y, 1, 1);
                    if (b != fill)
                        inkB |= QRect(x, y, 1, 1);
                }
            const bool exact = column != 2 && row != 1;
            if (exact) {
                QVERIFY2(differing == 0, qPrintable(QStringLiteral("%1: %2 pixels differ").arg(where).arg(differing)));
            } else {
                const auto near = [](int a, int b) { return std::abs(a - b) <= 1; };
                QVERIFY2(near(inkA.left(), inkB.left()) && near(inkA.right(), inkB.right()) &&
                             near(inkA.top(), inkB.top()) && near(inkA.bottom(), inkB.bottom()),
                         qPrintable(QStringLiteral("%1: style's ink (%2,%3)-(%4,%5), cached (%6,%7)-(%8,%9)")
                                        .arg(where)
                                        .arg(inkA.left())
                                        .arg(inkA.top())
                                        .arg(inkA.right())
                                        .arg(inkA.bottom())
                                        .arg(inkB.left())
                                        .arg(inkB.top())
                                        .arg(inkB.right())
                                        .arg(inkB.bottom())));
            }
        }
}

void TestPageModels::lagChartChartsTheFurthestBehindAndReusesItsLines()
{
    // Of 30 tables the chart draws the 20 furthest behind their SLA. When others fall behind,
    // the choice is made again (every kReselectMs): the same 21 series (a lag line per table,
    // one SLA line for the SLA they share) are renamed and refilled, not rebuilt, and live points
    // land in the right table's line.
    QTemporaryDir dir;
    driftless::ui::LagChart chart;
    chart.resize(900, 500);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    const auto name = [](int i) { return QStringLiteral("public.t%1").arg(i, 2, 10, QLatin1Char('0')); };
    driftless::ui::EngineSnapshot s;
    s.statePath = dir.filePath(QStringLiteral("no-history.db")); // no file: no history, only live points
    s.takenAtMs = driftless::core::StateStore::nowMs();
    s.live = true;
    for (int i = 0; i < 30; ++i) {
        driftless::core::TableReport t;
        t.pipeline = "p";
        t.table = name(i).toStdString();
        t.slaSeconds = 60;
        t.lagSeconds = i; // t29 is furthest behind
        s.tables.push_back(t);
    }
    chart.setSnapshot(s);
    QTRY_VERIFY(chart.historyLoaded());
    const QString p = QStringLiteral("p");
    for (int i = 0; i < 30; ++i)
        QVERIFY2(bool(chart.lagSeries(p, name(i))) == (i >= 10), qPrintable(name(i)));
    const auto before = chart.chart()->series();
    QCOMPARE(before.size(), 21);
    // Twenty tables share one SLA: one dashed grey line says so, not twenty lines on top of
    // each other.
    QLineSeries *shared = chart.slaSeries(p, name(10));
    QVERIFY(shared);
    QCOMPARE(chart.slaSeries(p, name(29)), shared);
    QCOMPARE(shared->pen().style(), Qt::DashLine);
    QCOMPARE(shared->pen().color(), QColor(0x80, 0x80, 0x80));
    QVERIFY2(shared->name().contains(QStringLiteral("20 tables")), qPrintable(shared->name()));
    // The legend names every charted table in full, each in a colour of its own, and the
    // shared SLA as one dashed entry, wrapped onto rows rather than cut short.
    const auto legend = [&] { return chart.legend()->entries(); };
    QCOMPARE(legend().size(), std::size_t(21));
    QSet<QRgb> colours;
    for (std::size_t i = 0; i < 20; ++i) {
        QCOMPARE(legend()[i].name, name(static_cast<int>(i) + 10));
        QVERIFY(!legend()[i].dashed);
        QCOMPARE(legend()[i].colour, chart.lagSeries(p, name(static_cast<int>(i) + 10))->color());
        colours.insert(legend()[i].colour.rgb());
    }
    QCOMPARE(colours.size(), 20);
    QVERIFY(legend()[20].dashed);
    QCOMPARE(legend()[20].name, shared->name());
    const auto rects = chart.legend()->entryRects(chart.legend()->width());
    QVERIFY2(rects.back().top() > rects.front().top(), "twenty names take more than one row at 900 px");
    for (std::size_t i = 0; i < rects.size(); ++i)
        QVERIFY(rects[i].width() >= driftless::ui::LegendStrip::kSwatch + driftless::ui::LegendStrip::kGap +
                                        chart.legend()->fontMetrics().horizontalAdvance(legend()[i].name));
    QVERIFY(chart.legend()->height() >= chart.legend()->heightForWidth(chart.legend()->width()));
    QVERIFY(chart.legend()->accessibleDescription().startsWith(name(10) + QStringLiteral(", ") + name(11)));

    // Half a minute on, the other end is behind: t00..t19 are charted now.
    s.takenAtMs += driftless::ui::LagChart::kReselectMs + 1000;
    for (int i = 0; i < 30; ++i)
        s.tables.edit()[static_cast<std::size_t>(i)].lagSeconds = 100 - i;
    chart.setSnapshot(s);
    QTRY_VERIFY(chart.historyLoaded());
    for (int i = 0; i < 30; ++i)
        QVERIFY2(bool(chart.lagSeries(p, name(i))) == (i < 20), qPrintable(name(i)));
    const auto after = chart.chart()->series();
    QCOMPARE(QSet<QAbstractSeries *>(after.begin(), after.end()),
             QSet<QAbstractSeries *>(before.begin(), before.end()));
    QCOMPARE(chart.lagSeries(p, name(3))->name(), name(3));
    QVERIFY(chart.lagPoints(p, name(3)).isEmpty()); // emptied: no points of the table it drew before
    QCOMPARE(legend().size(), std::size_t(21));
    QCOMPARE(legend()[3].name, name(3)); // the legend follows the new choice
    QCOMPARE(legend()[3].colour, chart.lagSeries(p, name(3))->color());

    // The next snapshot's lags are appended to each table's own line.
    s.takenAtMs += 1000;
    chart.setSnapshot(s);
    QTRY_COMPARE(chart.lagPoints(p, name(3)).size(), 1);
    QCOMPARE(chart.lagPoints(p, name(3)).front().y(), 97.0);
    QCOMPARE(chart.lagPoints(p, name(19)).front().y(), 81.0);
    QCOMPARE(chart.slaSeries(p, name(3))->at(0).y(), 60.0);
}

void TestPageModels::aSnapshotsCopiesShareItsTablesUntilOneIsEdited()
{
    // A snapshot travels to a queued call and to every page that keeps it: each copy shares the
    // reports (B12: at 10,000 tables a deep copy was tens of milliseconds of the UI thread).
    driftless::ui::EngineSnapshot s;
    QVERIFY(s.tables.empty());
    std::vector<driftless::core::TableReport> reports(3);
    for (std::size_t i = 0; i < reports.size(); ++i) {
        reports[i].pipeline = "p";
        reports[i].table = "public.t" + std::to_string(i);
    }
    s.tables = std::move(reports);
    const driftless::ui::EngineSnapshot copy = s; // NOLINT(performance-unnecessary-copy-initialization)
    QVERIFY(copy.tables.sharesWith(s.tables));
    QCOMPARE(&copy.tables[1], &s.tables[1]);
    // Taken as the const std::vector<TableReport> & that core functions want, without a copy.
    const std::vector<driftless::core::TableReport> &asVector = copy.tables;
    QCOMPARE(asVector.data(), &s.tables[0]);

    // An edit changes its own list only: the copy already handed out stays as it was.
    s.tables.edit()[1].lagSeconds = 42;
    QVERIFY(!copy.tables.sharesWith(s.tables));
    QVERIFY(!copy.tables[1].lagSeconds);
    QCOMPARE(*s.tables[1].lagSeconds, 42.0);
    QCOMPARE(copy.tables[1].table, s.tables[1].table);

    // Alone with its reports, an edit copies nothing.
    const auto *before = &s.tables[0];
    s.tables.edit()[0].lagSeconds = 1;
    QCOMPARE(&s.tables[0], before);
    s.tables.push_back({});
    QCOMPARE(s.tables.size(), std::size_t(4));
    s.tables.clear();
    QVERIFY(s.tables.empty());
    QCOMPARE(copy.tables.size(), std::size_t(3));
}

// The Workspace page's Tables column: a number while none is paused, "3 (2 paused)" otherwise,
// changed in place (the Tables column only, no reset) and only when a count changes.
void TestPageModels::pipelinesModelSaysHowManyTablesArePausedInPlace()
{
    auto ws = std::make_shared<core::Workspace>();
    for (const char *name : {"shop", "crm"}) {
        core::PipelineSpec p;
        p.name = name;
        p.source = "app";
        p.target = "dw";
        for (const char *t : {"a", "b", "c"}) {
            core::TableSpec spec;
            spec.table = {"public", t};
            p.tables.push_back(spec);
        }
        ws->pipelines.push_back(p);
    }
    PipelinesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setWorkspace(ws);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    const QModelIndex shop = model.index(model.rowOf(QStringLiteral("shop")), PipelinesModel::Tables);
    const QModelIndex crm = model.index(model.rowOf(QStringLiteral("crm")), PipelinesModel::Tables);
    QCOMPARE(shop.data().toInt(), 3);

    QVERIFY(model.setPausedCounts({{"shop", 2}, {"crm", 0}}));
    QCOMPARE(shop.data().toString(), QStringLiteral("3 (2 paused)"));
    QCOMPARE(crm.data(), QVariant(3)); // none paused: still a number
    QCOMPARE(model.pausedCount("shop"), 2);
    QCOMPARE(reset.size(), 0);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(changed.first().at(0).toModelIndex().column(), int(PipelinesModel::Tables));
    QCOMPARE(changed.first().at(1).toModelIndex().column(), int(PipelinesModel::Tables));
    // The same counts (a zero is no count): nothing changes.
    QVERIFY(!model.setPausedCounts({{"shop", 2}}));
    QCOMPARE(changed.size(), 1);
    // A new workspace keeps the counts, which are by name.
    model.setWorkspace(ws);
    QCOMPARE(shop.data().toString(), QStringLiteral("3 (2 paused)"));
    QVERIFY(model.setPausedCounts({}));
    QCOMPARE(shop.data(), QVariant(3));
}

QTEST_MAIN(TestPageModels)
#include "tst_pagemodels.moc"
