// TablesModel and EventsModel over snapshots: structure checked by QAbstractItemModelTester on
// every change, updates made with the fewest signals, and freshness shown as words and icons.
// "Rows written" counts every pass; "Table rows" is what the table holds as last counted.

#include "ui/enginesnapshot.h"
#include "ui/models/eventsmodel.h"
#include "ui/models/tablesmodel.h"
#include "ui/widgets/backfillprogress.h"
#include "ui/widgets/freshnessbadge.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDateTime>
#include <QIcon>
#include <QImage>
#include <QLocale>
#include <QPainter>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStyleOptionViewItem>
#include <QTest>

using driftless::core::Freshness;
using driftless::core::freshnessFrom;
using driftless::core::Level;
using driftless::core::levelFrom;
using driftless::core::StateStore;
using driftless::core::Strategy;
using driftless::core::TableReport;
using driftless::core::TableState;
using driftless::ui::BackfillProgress;
using driftless::ui::EngineSnapshot;
using driftless::ui::EventsModel;
using driftless::ui::FreshnessBadge;
using driftless::ui::TablesModel;

namespace {

TableReport table(const std::string &name, const std::string &freshness = "ok", std::optional<double> lag = 3.0)
{
    TableReport r;
    r.pipeline = "app_to_dw";
    r.table = "public." + name;
    r.target = "dw:public." + name;
    r.strategy = Strategy::Cursor;
    r.state = TableState::Ok;
    r.freshness = *freshnessFrom(freshness);
    r.lagSeconds = lag;
    r.slaSeconds = 120;
    r.rowsApplied = 100;
    r.lastSyncAtMs = 1'700'000'000'000;
    return r;
}

EngineSnapshot snapshotOf(std::vector<TableReport> tables, std::vector<StateStore::Event> events = {})
{
    EngineSnapshot s;
    s.tables = std::move(tables);
    s.events = std::move(events);
    return s;
}

StateStore::Event makeEvent(std::int64_t id, const std::string &level, const std::string &message)
{
    StateStore::Event e;
    e.id = id;
    e.tsMs = 1'700'000'000'000 + id * 1000;
    e.level = *levelFrom(level);
    e.pipeline = "app_to_dw";
    e.table = "public.orders";
    e.kind = "sync_failed";
    e.message = message;
    return e;
}

QString cell(const QAbstractItemModel &m, int row, int column, int role = Qt::DisplayRole)
{
    return m.data(m.index(row, column), role).toString();
}

/// Counts every structural and data signal of a model.
struct Signals {
    explicit Signals(QAbstractItemModel *m)
        : inserted(m, &QAbstractItemModel::rowsInserted), removed(m, &QAbstractItemModel::rowsRemoved),
          changed(m, &QAbstractItemModel::dataChanged), reset(m, &QAbstractItemModel::modelReset),
          moved(m, &QAbstractItemModel::rowsMoved), layout(m, &QAbstractItemModel::layoutChanged)
    {
    }
    QSignalSpy inserted, removed, changed, reset, moved, layout;
};

} // namespace

class TestTablesModel : public QObject {
    Q_OBJECT
private slots:
    void snapshotsAddRemoveAndChangeRowsInPlace();
    void unchangedSnapshotEmitsNothing();
    void changesSpanOnlyTheChangedColumns();
    void freshnessShowsWordAndIcon_data();
    void freshnessShowsWordAndIcon();
    void errorsNeedAttentionAndShowTheirMessage();
    void proxySortsLagAndRowsAsNumbers();
    void newEventsAreInsertedAtTheTop();
    void eventsLevelHasIcon();
    void badgeFitsIconAndWord();
    void barsAndBadgesAreDrawnOnceAndNeverStale();
    void backfillShowsAsProgress_data();
    void backfillShowsAsProgress();
    void backfillProgressChangesOnlyTheRow();
    void rebackfillIsToldFromInitialLoad();
    void finishedBackfillShowsAFullBarForAMinute();
    void aFreshTableWarnedByDriftSaysWhy();
    void tableRowsSayWhatTheTableHoldsNotWhatWasWritten();
};

void TestTablesModel::snapshotsAddRemoveAndChangeRowsInPlace()
{
    TablesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);

    model.setSnapshot(snapshotOf({table("a"), table("b"), table("c"), table("d")}));
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.columnCount(), int(TablesModel::ColumnCount));
    QCOMPARE(cell(model, 1, TablesModel::Table), QStringLiteral("public.b"));

    Signals spy(&model);
    // b and c go, d changes state, e and f arrive.
    auto d = table("d");
    d.state = TableState::Running;
    model.setSnapshot(snapshotOf({table("a"), d, table("e"), table("f")}));

    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(cell(model, 0, TablesModel::Table), QStringLiteral("public.a"));
    QCOMPARE(cell(model, 1, TablesModel::Table), QStringLiteral("public.d"));
    QCOMPARE(cell(model, 1, TablesModel::State), QStringLiteral("running"));
    QCOMPARE(cell(model, 2, TablesModel::Table), QStringLiteral("public.e"));
    QCOMPARE(cell(model, 3, TablesModel::Table), QStringLiteral("public.f"));
    QCOMPARE(spy.reset.count(), 0);
    QCOMPARE(spy.removed.count(), 1); // b and c are adjacent: one removal
    QCOMPARE(spy.removed.at(0).at(1).toInt(), 1);
    QCOMPARE(spy.removed.at(0).at(2).toInt(), 2);
    QCOMPARE(spy.inserted.count(), 1); // e and f: one insert at the end
    QCOMPARE(spy.inserted.at(0).at(1).toInt(), 2);
    QCOMPARE(spy.inserted.at(0).at(2).toInt(), 3);
    QCOMPARE(spy.changed.count(), 1); // only d changed
    QCOMPARE(spy.changed.at(0).at(0).toModelIndex().row(), 1);
    QCOMPARE(spy.changed.at(0).at(1).toModelIndex().row(), 1);

    model.setSnapshot(snapshotOf({}));
    QCOMPARE(model.rowCount(), 0);
}

void TestTablesModel::unchangedSnapshotEmitsNothing()
{
    TablesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSnapshot(snapshotOf({table("a"), table("b")}));
    Signals spy(&model);
    auto a = table("a");
    a.lagSeconds = 3.4; // still "3 s" on screen
    a.checkpoint = R"({"cursor":"2026-01-01"})";
    model.setSnapshot(snapshotOf({a, table("b")}));
    QCOMPARE(spy.changed.count() + spy.inserted.count() + spy.removed.count() + spy.reset.count(), 0);
    QCOMPARE(model.report(0).checkpoint, a.checkpoint); // kept current all the same
}

void TestTablesModel::changesSpanOnlyTheChangedColumns()
{
    TablesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSnapshot(snapshotOf({table("a"), table("b"), table("c"), table("d")}));
    Signals spy(&model);

    // Every second lag moves on a whole second, for every table: only the Lag column repaints.
    auto a = table("a", "ok", 4.0), b = table("b", "ok", 4.0), c = table("c", "ok", 4.0), d = table("d", "ok", 4.0);
    model.setSnapshot(snapshotOf({a, b, c, d}));
    QCOMPARE(spy.changed.count(), 1);
    QCOMPARE(spy.changed.at(0).at(0).toModelIndex(), model.index(0, TablesModel::Lag));
    QCOMPARE(spy.changed.at(0).at(1).toModelIndex(), model.index(3, TablesModel::Lag));
    QCOMPARE(cell(model, 2, TablesModel::Lag), QStringLiteral("4 s"));

    // A pass on b and c: rows and last sync of those two rows, and their cells' new text.
    b.rowsApplied = 250;
    b.lastSyncAtMs = *b.lastSyncAtMs + 5000;
    c.lastSyncAtMs = *c.lastSyncAtMs + 7000;
    model.setSnapshot(snapshotOf({a, b, c, d}));
    QCOMPARE(spy.changed.count(), 2);
    QCOMPARE(spy.changed.at(1).at(0).toModelIndex(), model.index(1, TablesModel::Rows));
    QCOMPARE(spy.changed.at(1).at(1).toModelIndex(), model.index(2, TablesModel::LastSync));
    QCOMPARE(cell(model, 1, TablesModel::Rows), QLocale().toString(250));
    QCOMPARE(cell(model, 2, TablesModel::LastSync),
             QDateTime::fromMSecsSinceEpoch(*c.lastSyncAtMs).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
    QCOMPARE(cell(model, 0, TablesModel::LastSync),
             QDateTime::fromMSecsSinceEpoch(*a.lastSyncAtMs).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));

    // A message (the State column's tooltip too) and a new target (the Table column's tooltip).
    d.message = "connection refused";
    d.target = "dw2:public.d";
    model.setSnapshot(snapshotOf({a, b, c, d}));
    QCOMPARE(spy.changed.count(), 3);
    QCOMPARE(spy.changed.at(2).at(0).toModelIndex(), model.index(3, TablesModel::Table));
    QCOMPARE(spy.changed.at(2).at(1).toModelIndex(), model.index(3, TablesModel::Message));
    QCOMPARE(cell(model, 3, TablesModel::Message), QStringLiteral("connection refused"));
    QCOMPARE(cell(model, 3, TablesModel::Table, Qt::ToolTipRole), QStringLiteral("Target: dw2:public.d"));

    // Sorting and filtering read the same text.
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setFilterKeyColumn(-1);
    proxy.setFilterFixedString(QStringLiteral("refused"));
    QCOMPARE(proxy.rowCount(), 1);
    QCOMPARE(proxy.index(0, TablesModel::Table).data().toString(), QStringLiteral("public.d"));
    QCOMPARE(spy.inserted.count() + spy.removed.count() + spy.reset.count() + spy.layout.count(), 0);
}

void TestTablesModel::freshnessShowsWordAndIcon_data()
{
    QTest::addColumn<QString>("freshness");
    QTest::addColumn<bool>("attention");
    QTest::newRow("ok") << "ok" << false;
    QTest::newRow("warn") << "warn" << true;
    QTest::newRow("breach") << "breach" << true;
    QTest::newRow("unknown") << "unknown" << false;
}

void TestTablesModel::freshnessShowsWordAndIcon()
{
    QFETCH(QString, freshness);
    QFETCH(bool, attention);
    TablesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const bool known = freshness != QLatin1String("unknown");
    model.setSnapshot(snapshotOf({table("a", freshness.toStdString(), known ? std::optional(75.0) : std::nullopt)}));

    const QModelIndex idx = model.index(0, TablesModel::Freshness);
    QCOMPARE(idx.data(Qt::DisplayRole).toString(), freshness);
    QCOMPARE(idx.data(TablesModel::FreshnessRole).toString(), freshness);
    const auto icon = idx.data(Qt::DecorationRole).value<QIcon>();
    QVERIFY2(!icon.isNull(), "a freshness is never told by colour alone");
    QVERIFY(!icon.pixmap(16, 16).isNull());
    QVERIFY(idx.data(Qt::ToolTipRole).toString().contains(QStringLiteral("SLA 2 min")));
    QCOMPARE(model.index(0, 0).data(TablesModel::AttentionRole).toBool(), attention);
    QCOMPARE(cell(model, 0, TablesModel::Lag), known ? QStringLiteral("75 s") : QStringLiteral("\u2014"));
}

void TestTablesModel::errorsNeedAttentionAndShowTheirMessage()
{
    TablesModel model;
    auto r = table("orders", "unknown", std::nullopt);
    r.state = TableState::Error;
    r.message = "permission denied for table orders; GRANT SELECT ON public.orders TO driftless";
    r.lastSyncAtMs.reset();
    model.setSnapshot(snapshotOf({r}));
    QVERIFY(model.index(0, 0).data(TablesModel::AttentionRole).toBool());
    QCOMPARE(cell(model, 0, TablesModel::Message), QString::fromStdString(r.message));
    QCOMPARE(cell(model, 0, TablesModel::State, Qt::ToolTipRole), QString::fromStdString(r.message));
    QVERIFY(!model.index(0, TablesModel::State).data(Qt::DecorationRole).value<QIcon>().isNull());
    QCOMPARE(cell(model, 0, TablesModel::LastSync), QStringLiteral("never"));
}

void TestTablesModel::proxySortsLagAndRowsAsNumbers()
{
    TablesModel model;
    auto slow = table("slow", "warn", 100.0);
    slow.rowsApplied = 9;
    auto fast = table("fast", "ok", 9.0);
    fast.rowsApplied = 100000;
    auto never = table("never", "unknown", std::nullopt);
    never.rowsApplied = 0;
    model.setSnapshot(snapshotOf({slow, fast, never}));

    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(TablesModel::SortRole);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.sort(TablesModel::Lag, Qt::AscendingOrder);
    // As text "100 s" would sort before "9 s".
    QCOMPARE(cell(proxy, 0, TablesModel::Table), QStringLiteral("public.fast"));
    QCOMPARE(cell(proxy, 1, TablesModel::Table), QStringLiteral("public.slow"));
    QCOMPARE(cell(proxy, 2, TablesModel::Table), QStringLiteral("public.never"));
    proxy.sort(TablesModel::Rows, Qt::DescendingOrder);
    QCOMPARE(cell(proxy, 0, TablesModel::Table), QStringLiteral("public.fast"));
    QCOMPARE(cell(proxy, 2, TablesModel::Table), QStringLiteral("public.never"));
}

void TestTablesModel::newEventsAreInsertedAtTheTop()
{
    EventsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSnapshot(
        snapshotOf({}, {makeEvent(3, "error", "c"), makeEvent(2, "warn", "b"), makeEvent(1, "info", "a")}));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(cell(model, 0, EventsModel::Message), QStringLiteral("c"));

    Signals spy(&model);
    // Two new events; the cap of four pushes the oldest two out.
    model.setSnapshot(snapshotOf({}, {makeEvent(5, "info", "e"), makeEvent(4, "warn", "d"), makeEvent(3, "error", "c"),
                                      makeEvent(2, "warn", "b")}));
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(spy.reset.count(), 0);
    QCOMPARE(spy.inserted.count(), 1);
    QCOMPARE(spy.inserted.at(0).at(1).toInt(), 0);
    QCOMPARE(spy.inserted.at(0).at(2).toInt(), 1);
    QCOMPARE(spy.removed.count(), 1);
    QCOMPARE(spy.removed.at(0).at(1).toInt(), 2); // "a" was at row 2 before the insert
    QStringList messages;
    for (int row = 0; row < model.rowCount(); ++row)
        messages << cell(model, row, EventsModel::Message);
    QCOMPARE(messages, QStringList({"e", "d", "c", "b"}));

    // Another workspace: nothing in common, so a reset.
    model.setSnapshot(snapshotOf({}, {makeEvent(42, "info", "other")}));
    QCOMPARE(spy.reset.count(), 1);
    QCOMPARE(model.rowCount(), 1);
}

void TestTablesModel::eventsLevelHasIcon()
{
    EventsModel model;
    model.setSnapshot(snapshotOf({}, {makeEvent(2, "error", "boom"), makeEvent(1, "info", "started")}));
    for (int row = 0; row < 2; ++row) {
        const auto icon = model.index(row, EventsModel::Level).data(Qt::DecorationRole).value<QIcon>();
        QVERIFY(!icon.isNull());
    }
    QCOMPARE(cell(model, 0, EventsModel::Level), QStringLiteral("error"));
    QCOMPARE(model.index(0, EventsModel::Time).data(EventsModel::SortRole).toLongLong(), 1'700'000'002'000LL);
}

void TestTablesModel::badgeFitsIconAndWord()
{
    TablesModel model;
    model.setSnapshot(snapshotOf({table("a", "breach", 500.0)}));
    FreshnessBadge badge;
    QStyleOptionViewItem option;
    option.font = QFont();
    option.rect = QRect(0, 0, 120, 28);
    const QModelIndex idx = model.index(0, TablesModel::Freshness);
    const QSize hint = badge.sizeHint(option, idx);
    QVERIFY(hint.width() >= QFontMetrics(option.font).horizontalAdvance(QStringLiteral("breach")) +
                                FreshnessBadge::kIconSize + 2 * FreshnessBadge::kPadding);

    // Paints the pill in the breach tint at the left of the cell, with the icon inside it.
    QImage image(option.rect.size(), QImage::Format_ARGB32);
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        badge.paint(&painter, option, idx);
    }
    const QColor fill = FreshnessBadge::tintFor(QStringLiteral("breach")).fill;
    int tinted = 0, iconRed = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) {
            const QColor c = image.pixelColor(x, y);
            tinted += c == fill;
            iconRed += c.red() > 150 && c.green() < 80 && c.blue() < 80;
        }
    QVERIFY2(tinted > 100, "the pill is filled");
    QVERIFY2(iconRed > 20, "the breach icon is painted");
}

void TestTablesModel::backfillShowsAsProgress_data()
{
    QTest::addColumn<qlonglong>("rows");
    QTest::addColumn<qlonglong>("total");
    QTest::addColumn<double>("eta");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("barMaximum");
    QTest::addColumn<int>("barValue");
    // Numbers in the C locale here (QLocale::setDefault in the test).
    QTest::newRow("percent and eta") << 420000LL << 1000000LL << 80.0
                                     << QStringLiteral("42% \u00b7 420,000 of 1,000,000 rows \u00b7 ~1m 20s left")
                                     << 100 << 42;
    QTest::newRow("no rate yet") << 500LL << 50000LL << -1.0 << QStringLiteral("1% \u00b7 500 of 50,000 rows") << 100
                                 << 1;
    QTest::newRow("hours left") << 10LL << 1000LL << 7500.0
                                << QStringLiteral("1% \u00b7 10 of 1,000 rows \u00b7 ~2h 05m left") << 100 << 1;
    QTest::newRow("no estimate: busy") << 420000LL << -1LL << -1.0 << QStringLiteral("420,000 rows copied") << 0 << 0;
}

void TestTablesModel::backfillShowsAsProgress()
{
    QFETCH(qlonglong, rows);
    QFETCH(qlonglong, total);
    QFETCH(double, eta);
    QFETCH(QString, text);
    QFETCH(int, barMaximum);
    QFETCH(int, barValue);
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));

    TablesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto r = table("orders");
    r.strategy = Strategy::Cdc;
    r.state = TableState::Backfilling;
    r.message = "re-backfill while streaming";
    r.rebackfill = true;
    TableReport::Backfill b;
    b.rows = rows;
    if (total > 0) {
        b.total = total;
        b.percent = std::round(1000.0 * double(rows) / double(total)) / 10.0;
    }
    if (eta >= 0)
        b.etaSeconds = eta;
    r.backfill = b;
    model.setSnapshot(snapshotOf({r, table("plans")}));

    const QModelIndex idx = model.index(0, TablesModel::Progress);
    QCOMPARE(idx.data().toString(), text);
    QCOMPARE(idx.data(TablesModel::BackfillRowsRole).toLongLong(), rows);
    QCOMPARE(idx.data(TablesModel::BackfillPercentRole).isValid(), total > 0);
    QVERIFY(idx.data(TablesModel::RebackfillRole).toBool());
    QVERIFY(idx.data(Qt::ToolTipRole).toString().startsWith(QStringLiteral("Re-backfill")));

    BackfillProgress delegate;
    const auto bar = delegate.barFor(idx, QRect(0, 0, 300, 24));
    QVERIFY(bar);
    QCOMPARE(bar->maximum, barMaximum);
    QCOMPARE(bar->progress, barValue);
    QCOMPARE(bar->text, text);
    // A table with no backfill has no bar and an empty cell.
    QVERIFY(!delegate.barFor(model.index(1, TablesModel::Progress)));
    QCOMPARE(model.index(1, TablesModel::Progress).data().toString(), QString());

    // The bar is painted: the cell is not left blank.
    QStyleOptionViewItem option;
    option.font = QFont();
    option.rect = QRect(0, 0, 360, 26);
    QVERIFY(delegate.sizeHint(option, idx).width() >= BackfillProgress::kMinWidth);
    QImage image(option.rect.size(), QImage::Format_ARGB32);
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        delegate.paint(&painter, option, idx);
    }
    int painted = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            painted += image.pixelColor(x, y) != QColor(Qt::white);
    QVERIFY2(painted > 500, "the bar and its text are painted");
    QLocale::setDefault(QLocale::system());
}

void TestTablesModel::backfillProgressChangesOnlyTheRow()
{
    TablesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto r = table("orders");
    r.strategy = Strategy::Cdc;
    r.state = TableState::Backfilling;
    r.backfill = TableReport::Backfill{100, 1000, 10.0, std::nullopt};
    model.setSnapshot(snapshotOf({table("plans"), r}));
    Signals spy(&model);
    // Rows copied move while every other column stays: still a change on screen.
    r.backfill->rows = 200;
    r.backfill->percent = 20.0;
    model.setSnapshot(snapshotOf({table("plans"), r}));
    QCOMPARE(spy.changed.count(), 1);
    QCOMPARE(spy.changed.at(0).at(0).toModelIndex().row(), 1);
    // The backfill ends: the bar goes.
    r.state = TableState::Streaming;
    r.backfill.reset();
    model.setSnapshot(snapshotOf({table("plans"), r}));
    QCOMPARE(spy.changed.count(), 2);
    QVERIFY(!model.index(1, TablesModel::Progress).data(TablesModel::BackfillRowsRole).isValid());
    QCOMPARE(spy.inserted.count() + spy.removed.count() + spy.reset.count(), 0);
}

void TestTablesModel::rebackfillIsToldFromInitialLoad()
{
    // Core tells the two apart (Vocabulary.aRebackfillIsToldFromAnInitialLoadByTheEngineNotByTheFace);
    // the model shows what core says, whatever the message's words.
    TablesModel model;
    auto r = table("orders");
    r.strategy = Strategy::Cdc;
    r.state = TableState::Backfilling;
    r.message = "initial load";
    r.backfill = TableReport::Backfill{100, 1000, 10.0, std::nullopt};
    auto load = r;
    load.table = "public.load";
    r.rebackfill = true;
    model.setSnapshot(snapshotOf({load, r}));
    QVERIFY(!model.index(0, TablesModel::Progress).data(TablesModel::RebackfillRole).toBool());
    QVERIFY(model.index(1, TablesModel::Progress).data(TablesModel::RebackfillRole).toBool());
    QVERIFY(model.index(1, TablesModel::Progress)
                .data(Qt::ToolTipRole)
                .toString()
                .startsWith(QStringLiteral("Re-backfill while the stream goes on")));
    QVERIFY(model.index(0, TablesModel::Progress)
                .data(Qt::ToolTipRole)
                .toString()
                .startsWith(QStringLiteral("Initial load")));
}

void TestTablesModel::finishedBackfillShowsAFullBarForAMinute()
{
    TablesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    BackfillProgress delegate;
    auto r = table("orders");
    r.strategy = Strategy::Cdc;
    r.state = TableState::Backfilling;
    r.message = "re-backfill while streaming";
    r.rebackfill = true;
    r.backfill = TableReport::Backfill{500, 1000, 50.0, 12.0};
    EngineSnapshot s = snapshotOf({table("plans"), r});
    s.takenAtMs = 1'700'000'100'000;
    model.setSnapshot(s);
    const QModelIndex idx = model.index(1, TablesModel::Progress);
    QCOMPARE(delegate.barFor(idx)->progress, 50);

    // The copy ends: the engine says so in its log, and the bar stays, full, saying done.
    Signals spy(&model);
    r.state = TableState::Streaming;
    r.message.clear();
    r.backfill.reset();
    r.rebackfill = false;
    auto done = makeEvent(7, "info", "re-backfill done: 1000 rows merged, 3 rows the source no longer has removed");
    done.kind = "rebackfill";
    done.table = "public.orders";
    done.tsMs = s.takenAtMs + 400;
    s = snapshotOf({table("plans"), r}, {done});
    s.takenAtMs = 1'700'000'101'000;
    model.setSnapshot(s);
    QCOMPARE(spy.changed.count(), 1);
    QVERIFY(spy.changed.at(0).at(1).toModelIndex().column() >= TablesModel::Progress);
    QCOMPARE(delegate.barFor(idx)->progress, 100);
    QCOMPARE(idx.data().toString(), QStringLiteral("100% \u00b7 done \u00b7 %1 rows").arg(QLocale().toString(1000)));
    QVERIFY(idx.data(Qt::ToolTipRole).toString().contains(QStringLiteral("3 rows the source no longer has removed")));
    QVERIFY(!TablesModel::isRebackfill(model.report(1)));
    QVERIFY(!delegate.barFor(model.index(0, TablesModel::Progress))); // the other table had none
    // No room kept for a time left it will never show: as wide as its words.
    QStyleOptionViewItem option;
    option.font = QFont();
    const int words = QFontMetrics(option.font).horizontalAdvance(idx.data().toString());
    QVERIFY2(delegate.sizeHint(option, idx).width() <= std::max(BackfillProgress::kMinWidth, words + 64),
             qPrintable(QString::number(delegate.sizeHint(option, idx).width())));

    // A minute later it is history: the event log keeps it, the row no longer does.
    s.takenAtMs = done.tsMs + TablesModel::kDoneShownMs + 1;
    model.setSnapshot(s);
    QVERIFY(!delegate.barFor(idx));
    QCOMPARE(idx.data().toString(), QString());

    // A cancelled copy is not a finished one.
    auto cancelled = done;
    cancelled.message = "re-backfill cancelled after 500 rows";
    cancelled.tsMs = s.takenAtMs;
    s.events = {cancelled};
    model.setSnapshot(s);
    QVERIFY(!delegate.barFor(idx));

    // An initial load's end shows the same way; a copy running again replaces it.
    auto loaded = done;
    loaded.kind = "load_done";
    loaded.message = "initial load done: 20 rows; streaming from 0/1A2B3C";
    loaded.tsMs = s.takenAtMs;
    s.events = {loaded, cancelled};
    model.setSnapshot(s);
    QCOMPARE(delegate.barFor(idx)->progress, 100);
    QCOMPARE(idx.data(TablesModel::BackfillRowsRole).toLongLong(), 20);
    r.state = TableState::Backfilling;
    r.backfill = TableReport::Backfill{10, 1000, 1.0, std::nullopt};
    s.tables = {table("plans"), r};
    model.setSnapshot(s);
    QCOMPARE(delegate.barFor(idx)->progress, 1);
}

namespace {

/// The largest difference of any colour channel between two images of one size.
int maxChannelDifference(const QImage &a, const QImage &b)
{
    int worst = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            const QRgb p = a.pixel(x, y), q = b.pixel(x, y);
            worst = std::max(
                {worst, std::abs(qRed(p) - qRed(q)), std::abs(qGreen(p) - qGreen(q)), std::abs(qBlue(p) - qBlue(q))});
        }
    return worst;
}

QStyleOptionViewItem cellOption(const QPalette &palette)
{
    QStyleOptionViewItem option;
    option.rect = QRect(0, 0, 260, 28);
    option.font = QApplication::font();
    option.fontMetrics = QFontMetrics(option.font);
    option.palette = palette;
    option.state = QStyle::State_Enabled | QStyle::State_Active;
    return option;
}

/// A cell's picture on white: `draw` paints it with the cell's option.
template <typename Draw> QImage renderCell(const QPalette &palette, Draw &&draw)
{
    QImage image(260, 28, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setFont(QApplication::font());
    draw(painter, cellOption(palette));
    return image;
}

QImage paintCell(const QStyledItemDelegate &delegate, const QModelIndex &idx, const QPalette &palette)
{
    return renderCell(palette, [&](QPainter &p, const QStyleOptionViewItem &cell) { delegate.paint(&p, cell, idx); });
}

/// The style's own bar for the cell, drawn straight onto the image (what the memo must copy).
QImage styleBar(const BackfillProgress &delegate, const QModelIndex &idx, const QPalette &palette)
{
    return renderCell(palette, [&](QPainter &p, QStyleOptionViewItem cell) {
        QApplication::style()->drawControl(QStyle::CE_ItemViewItem, &cell, &p, nullptr);
        auto bar = delegate.barFor(idx, cell.rect.adjusted(BackfillProgress::kMargin, BackfillProgress::kMargin,
                                                           -BackfillProgress::kMargin, -BackfillProgress::kMargin));
        bar->fontMetrics = cell.fontMetrics;
        bar->palette = palette;
        bar->palette.setCurrentColorGroup(QPalette::Active);
        QApplication::style()->drawControl(QStyle::CE_ProgressBar, &*bar, &p, nullptr);
    });
}

} // namespace

void TestTablesModel::barsAndBadgesAreDrawnOnceAndNeverStale()
{
    // Bars and badges are drawn into a pixmap once per look and copied on later paints (the
    // Tables page repaints every visible cell on each scroll, sort and filter). The copy must
    // look as the style's own drawing does, and a new value, word or palette must draw anew.
    TablesModel model;
    auto loading = table("orders");
    loading.state = TableState::Backfilling;
    loading.backfill = TableReport::Backfill{400, 1000, 40.0, 12.0};
    model.setSnapshot(snapshotOf({loading, table("plans", "breach", 500.0)}));
    const QModelIndex barCell = model.index(0, TablesModel::Progress);
    const QModelIndex badgeCell = model.index(1, TablesModel::Freshness);
    const QPalette light = QApplication::palette();
    QPalette dark = light;
    dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    dark.setColor(QPalette::Text, QColor(0xee, 0xee, 0xee));
    dark.setColor(QPalette::Highlight, QColor(0x2a, 0x82, 0xda));

    BackfillProgress bar;
    const QImage first = paintCell(bar, barCell, light);
    QCOMPARE(bar.memoSize(), 1);
    const QImage again = paintCell(bar, barCell, light);
    QCOMPARE(bar.memoSize(), 1); // the same look: copied, not drawn again
    QCOMPARE(again, first);
    // Within a shade: blending through a transparent pixmap rounds once more.
    QVERIFY2(maxChannelDifference(first, styleBar(bar, barCell, light)) <= 2, "the copy is the style's bar");

    // The copy moves on with the value and the words, never showing the previous bar.
    loading.backfill = TableReport::Backfill{410, 1000, 41.0, 11.0};
    model.setSnapshot(snapshotOf({loading, table("plans", "breach", 500.0)}));
    const QImage moved = paintCell(bar, barCell, light);
    QCOMPARE(bar.memoSize(), 2);
    QVERIFY(moved != first);
    QVERIFY(maxChannelDifference(moved, styleBar(bar, barCell, light)) <= 2);
    loading.backfill = TableReport::Backfill{415, 1000, 41.5, 10.0}; // same 41%, other words
    model.setSnapshot(snapshotOf({loading, table("plans", "breach", 500.0)}));
    const QImage reworded = paintCell(bar, barCell, light);
    QVERIFY(reworded != moved);
    QVERIFY(maxChannelDifference(reworded, styleBar(bar, barCell, light)) <= 2);
    const QImage darkBar = paintCell(bar, barCell, dark);
    QVERIFY(maxChannelDifference(darkBar, styleBar(bar, barCell, dark)) <= 2);

    FreshnessBadge badge;
    const QImage breach = paintCell(badge, badgeCell, light);
    QCOMPARE(paintCell(badge, badgeCell, light), breach);
    model.setSnapshot(snapshotOf({loading, table("plans", "ok", 1.0)}));
    const QImage ok = paintCell(badge, badgeCell, light);
    QVERIFY(ok != breach);
    // Each word in its own tint: the breach pill's fill is gone from the ok badge.
    const QRgb breachFill = FreshnessBadge::tintFor(QStringLiteral("breach")).fill.rgb();
    const QRgb okFill = FreshnessBadge::tintFor(QStringLiteral("ok")).fill.rgb();
    auto count = [](const QImage &image, QRgb colour) {
        int n = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x)
                n += (image.pixel(x, y) & 0xffffff) == (colour & 0xffffff);
        return n;
    };
    QVERIFY(count(breach, breachFill) > 100);
    QCOMPARE(count(ok, breachFill), 0);
    QVERIFY(count(ok, okFill) > 100);
}

// The walk of issue 45: orders read "warn" beside a lag of <1 s, and the badge's tooltip spoke
// only of lag and SLA. The warn came from the last reconciliation's drift (status --json:
// reconcile.alert): the tooltip says so.
void TestTablesModel::aFreshTableWarnedByDriftSaysWhy()
{
    TablesModel model;
    auto r = table("orders", "warn", 0.4);
    r.slaSeconds = 60;
    driftless::core::ReconcileSummary rc;
    rc.reportId = 4;
    rc.table = "public.orders";
    rc.sourceRows = 3001;
    rc.different = 1;
    rc.driftRatio = 1.0 / 3001;
    r.reconcile = rc;
    r.driftAlert = true;
    auto quiet = table("plans", "ok", 0.4);
    quiet.reconcile = rc;
    quiet.reconcile->different = 0;
    model.setSnapshot(snapshotOf({r, quiet}));
    const QString tip = model.index(0, TablesModel::Freshness).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("reconciliation report 4 found 1 row that differs")), qPrintable(tip));
    QCOMPARE(model.index(0, TablesModel::Lag).data(Qt::ToolTipRole).toString(), tip);
    // Without drift it is about the lag alone.
    QVERIFY(
        !model.index(1, TablesModel::Freshness).data(Qt::ToolTipRole).toString().contains(QStringLiteral("report")));
}

void TestTablesModel::tableRowsSayWhatTheTableHoldsNotWhatWasWritten()
{
    // A full refresh of 300 rows after four passes: 1,200 written, and 300 is what it holds.
    TablesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto refreshed = table("plans");
    refreshed.strategy = Strategy::FullRefresh;
    refreshed.rowsApplied = 1200;
    driftless::core::ReconcileSummary rc;
    rc.reportId = 8;
    rc.table = "public.plans";
    rc.finishedMs = 1'700'000'100'000;
    rc.sourceRows = 300;
    rc.targetRows = 300;
    refreshed.reconcile = rc;
    // A load under way: its estimate, marked as one.
    auto loading = table("events");
    loading.state = TableState::Backfilling;
    loading.backfill = TableReport::Backfill{250'000, 1'000'000, 25.0, 60.0};
    // Never counted, and a reconciliation that failed: nothing, not a zero.
    auto unknown = table("accounts");
    auto failed = table("ledger");
    failed.reconcile = rc;
    failed.reconcile->error = "connection refused";
    failed.reconcile->sourceRows = 0;
    model.setSnapshot(snapshotOf({refreshed, loading, unknown, failed}));

    QCOMPARE(model.headerData(TablesModel::Rows, Qt::Horizontal).toString(), QStringLiteral("Rows written"));
    QCOMPARE(model.headerData(TablesModel::TableRows, Qt::Horizontal).toString(), QStringLiteral("Table rows"));
    QCOMPARE(cell(model, 0, TablesModel::Rows), QLocale().toString(1200));
    QCOMPARE(cell(model, 0, TablesModel::TableRows), QLocale().toString(300));
    const QString tip = cell(model, 0, TablesModel::TableRows, Qt::ToolTipRole);
    QVERIFY2(tip.contains(QStringLiteral("reconciliation report 8")) &&
                 tip.contains(QStringLiteral("%1 in the target").arg(QLocale().toString(300))),
             qPrintable(tip));
    QCOMPARE(cell(model, 1, TablesModel::TableRows), QStringLiteral("\u2248") + QLocale().toString(1'000'000));
    QVERIFY(cell(model, 1, TablesModel::TableRows, Qt::ToolTipRole).contains(QStringLiteral("estimates")));
    QCOMPARE(cell(model, 2, TablesModel::TableRows), QString());
    QCOMPARE(cell(model, 3, TablesModel::TableRows), QString());
    QVERIFY(cell(model, 2, TablesModel::TableRows, Qt::ToolTipRole).contains(QStringLiteral("Not counted yet")));

    // Sorted as numbers, never counted last when descending.
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(TablesModel::SortRole);
    proxy.sort(TablesModel::TableRows, Qt::DescendingOrder);
    QCOMPARE(proxy.index(0, TablesModel::Table).data().toString(), QStringLiteral("public.events"));
    QCOMPARE(proxy.index(1, TablesModel::Table).data().toString(), QStringLiteral("public.plans"));

    // A newer reconciliation changes that cell only.
    Signals spy(&model);
    refreshed.reconcile->reportId = 9;
    refreshed.reconcile->sourceRows = 310;
    model.setSnapshot(snapshotOf({refreshed, loading, unknown, failed}));
    QCOMPARE(spy.changed.count(), 1);
    QCOMPARE(spy.changed.at(0).at(0).toModelIndex(), model.index(0, TablesModel::TableRows));
    QCOMPARE(spy.changed.at(0).at(1).toModelIndex(), model.index(0, TablesModel::TableRows));
    QCOMPARE(cell(model, 0, TablesModel::TableRows), QLocale().toString(310));
}

QTEST_MAIN(TestTablesModel)
#include "tst_tablesmodel.moc"
