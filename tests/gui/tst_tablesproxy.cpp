// TablesModel snapshots applied as diffs, and TablesProxy sorting and filtering after them: one
// dataChanged per run of changed rows (no reset), rows inserted and removed in place, and the
// proxy's order and visible rows always the ones a plain QSortFilterProxyModel (by SortRole, a
// case-insensitive fixed string over every column) shows for the same rows (issue 19, B12).

#include "ui/enginesnapshot.h"
#include "ui/models/tablesmodel.h"
#include "ui/models/tablesproxy.h"
#include "ui/widgets/heldorder.h"

#include <QAbstractItemModelTester>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>

#include <string>
#include <vector>

using driftless::core::Freshness;
using driftless::core::Strategy;
using driftless::core::TableReport;
using driftless::core::TableState;
using driftless::ui::EngineSnapshot;
using driftless::ui::TablesModel;
using driftless::ui::TablesProxy;

namespace {

TableReport table(int i)
{
    TableReport r;
    r.pipeline = "p" + std::to_string(i % 3);
    r.table = "public.t" + std::to_string(i);
    r.target = "dw:" + r.table;
    r.strategy = i % 2 ? Strategy::Cursor : Strategy::FullRefresh;
    r.state = TableState::Ok;
    r.freshness = Freshness::Ok;
    r.lagSeconds = 3.0;
    r.slaSeconds = 120;
    r.rowsApplied = 100;
    r.lastSyncAtMs = 1'700'000'000'000;
    return r;
}

std::vector<TableReport> tables(int n)
{
    std::vector<TableReport> v;
    for (int i = 0; i < n; ++i)
        v.push_back(table(i));
    return v;
}

EngineSnapshot snapshotOf(std::vector<TableReport> tables)
{
    EngineSnapshot s;
    s.tables = std::move(tables);
    return s;
}

struct Signals {
    explicit Signals(QAbstractItemModel *m)
        : inserted(m, &QAbstractItemModel::rowsInserted), removed(m, &QAbstractItemModel::rowsRemoved),
          changed(m, &QAbstractItemModel::dataChanged), reset(m, &QAbstractItemModel::modelReset),
          layout(m, &QAbstractItemModel::layoutChanged)
    {
    }
    QSignalSpy inserted, removed, changed, reset, layout;
};

/// The Table column of every row `m` shows, top to bottom.
QStringList shown(const QAbstractItemModel &m)
{
    QStringList out;
    for (int row = 0; row < m.rowCount(); ++row)
        out << m.index(row, TablesModel::Table).data().toString();
    return out;
}

/// The sort key of every row `m` shows, top to bottom.
QVariantList keysOf(const QAbstractItemModel &m, int column)
{
    QVariantList out;
    for (int row = 0; row < m.rowCount(); ++row)
        out << m.index(row, column).data(TablesModel::SortRole);
    return out;
}

QPair<int, int> rowsOf(const QList<QVariant> &signal)
{
    return {signal.at(0).toModelIndex().row(), signal.at(1).toModelIndex().row()};
}

QPair<int, int> columnsOf(const QList<QVariant> &signal)
{
    return {signal.at(0).toModelIndex().column(), signal.at(1).toModelIndex().column()};
}

} // namespace

class TestTablesProxy : public QObject {
    Q_OBJECT
private slots:
    void oneLagChangeSignalsThatRowOnly();
    void changedRowsSignalOncePerRun();
    void addedAndRemovedTablesInsertAndRemoveRows();
    void sortFollowsChangedKeys();
    void sortByAnUnchangedColumnKeepsItsOrder();
    void rowsHoldStillUnderThePointer();
    void filterFollowsChangedText();
    void filterNeverMatchesAcrossCells();
    void aFilterShowingManyRowsIsOneLayoutChange();
    void sameAsAPlainProxyThroughRandomDiffs();
};

void TestTablesProxy::oneLagChangeSignalsThatRowOnly()
{
    TablesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto v = tables(100);
    model.setSnapshot(snapshotOf(v));
    Signals spy(&model);

    v[42].lagSeconds = 9.0;
    model.setSnapshot(snapshotOf(v));
    QCOMPARE(spy.changed.count(), 1);
    QCOMPARE(rowsOf(spy.changed.at(0)), qMakePair(42, 42));
    QCOMPARE(columnsOf(spy.changed.at(0)), qMakePair(int(TablesModel::Lag), int(TablesModel::Lag)));
    QCOMPARE(spy.reset.count() + spy.inserted.count() + spy.removed.count() + spy.layout.count(), 0);
    QCOMPARE(model.index(42, TablesModel::Lag).data().toString(), QStringLiteral("9 s"));

    // A sub-second move is no change on screen: nothing at all.
    v[42].lagSeconds = 9.2;
    model.setSnapshot(snapshotOf(v));
    QCOMPARE(spy.changed.count(), 1);
}

void TestTablesProxy::changedRowsSignalOncePerRun()
{
    TablesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto v = tables(100);
    model.setSnapshot(snapshotOf(v));
    Signals spy(&model);

    // Rows 3-5 change lag (5 its rows too), row 10 its rows, row 50 its message.
    for (int i : {3, 4, 5})
        v[std::size_t(i)].lagSeconds = 7.0;
    v[5].rowsApplied = 500;
    v[10].rowsApplied = 900;
    v[50].message = "slow";
    model.setSnapshot(snapshotOf(v));
    QCOMPARE(spy.changed.count(), 3);
    QCOMPARE(rowsOf(spy.changed.at(0)), qMakePair(3, 5));
    QCOMPARE(columnsOf(spy.changed.at(0)), qMakePair(int(TablesModel::Lag), int(TablesModel::Rows)));
    QCOMPARE(rowsOf(spy.changed.at(1)), qMakePair(10, 10));
    QCOMPARE(columnsOf(spy.changed.at(1)), qMakePair(int(TablesModel::Rows), int(TablesModel::Rows)));
    QCOMPARE(rowsOf(spy.changed.at(2)), qMakePair(50, 50));
    QCOMPARE(columnsOf(spy.changed.at(2)), qMakePair(int(TablesModel::State), int(TablesModel::Message)));

    // Scattered over more runs than kMaxChangedRuns: one signal spanning them all.
    for (std::size_t i = 1; i < v.size(); i += 2)
        v[i].rowsApplied += 1;
    model.setSnapshot(snapshotOf(v));
    QCOMPARE(spy.changed.count(), 4);
    QCOMPARE(rowsOf(spy.changed.at(3)), qMakePair(1, 99));
    QCOMPARE(columnsOf(spy.changed.at(3)), qMakePair(int(TablesModel::Rows), int(TablesModel::Rows)));
    QCOMPARE(model.index(99, TablesModel::Rows).data(TablesModel::SortRole).toLongLong(), 101);
    QCOMPARE(spy.reset.count() + spy.inserted.count() + spy.removed.count() + spy.layout.count(), 0);
}

void TestTablesProxy::addedAndRemovedTablesInsertAndRemoveRows()
{
    TablesModel model;
    TablesProxy proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto v = tables(20);
    model.setSnapshot(snapshotOf(v));
    proxy.sort(TablesModel::Table, Qt::DescendingOrder);
    Signals spy(&model);

    // t5..t7 and t12 go, t20 and t21 come.
    std::vector<TableReport> next;
    for (int i = 0; i < 22; ++i)
        if ((i < 5 || i > 7) && i != 12)
            next.push_back(table(i));
    model.setSnapshot(snapshotOf(next));
    QCOMPARE(spy.reset.count(), 0);
    QCOMPARE(spy.removed.count(), 2); // t12, then t5..t7: one run each
    QCOMPARE(spy.removed.at(0).at(1).toInt(), 12);
    QCOMPARE(spy.removed.at(0).at(2).toInt(), 12);
    QCOMPARE(spy.removed.at(1).at(1).toInt(), 5);
    QCOMPARE(spy.removed.at(1).at(2).toInt(), 7);
    QCOMPARE(spy.inserted.count(), 1);
    QCOMPARE(spy.inserted.at(0).at(1).toInt(), 16);
    QCOMPARE(spy.inserted.at(0).at(2).toInt(), 17);
    QCOMPARE(spy.changed.count(), 0);

    QStringList expected;
    for (const auto &r : next)
        expected << QString::fromStdString(r.table);
    std::sort(expected.begin(), expected.end(), std::greater<>());
    QCOMPARE(shown(proxy), expected);
}

void TestTablesProxy::sortFollowsChangedKeys()
{
    TablesModel model;
    TablesProxy proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto v = tables(6);
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i].lagSeconds = 10.0 * double(i + 1); // t0 10 s .. t5 60 s
    model.setSnapshot(snapshotOf(v));
    proxy.sort(TablesModel::Lag, Qt::AscendingOrder);
    QCOMPARE(shown(proxy), QStringList({"public.t0", "public.t1", "public.t2", "public.t3", "public.t4", "public.t5"}));

    // t4 catches up, t1 falls behind, t2 was never synced: as numbers ("100 s" after "9 s"),
    // never-synced last.
    v[4].lagSeconds = 9.0;
    v[1].lagSeconds = 100.0;
    v[2].lagSeconds = std::nullopt;
    model.setSnapshot(snapshotOf(v));
    QCOMPARE(shown(proxy), QStringList({"public.t4", "public.t0", "public.t3", "public.t5", "public.t1", "public.t2"}));

    // Rows, descending, as numbers too (ties keep the order they had, as with any proxy).
    v[3].rowsApplied = 9;
    v[5].rowsApplied = 1000;
    proxy.sort(TablesModel::Rows, Qt::DescendingOrder);
    model.setSnapshot(snapshotOf(v));
    QCOMPARE(shown(proxy).first(), QStringLiteral("public.t5"));
    QCOMPARE(shown(proxy).last(), QStringLiteral("public.t3"));
    QCOMPARE(keysOf(proxy, TablesModel::Rows), QVariantList({qlonglong(1000), qlonglong(100), qlonglong(100),
                                                             qlonglong(100), qlonglong(100), qlonglong(9)}));
    v[3].rowsApplied = 5000;
    model.setSnapshot(snapshotOf(v));
    QCOMPARE(shown(proxy).first(), QStringLiteral("public.t3"));
}

// Sorted by lag, the rows re-ordered under the cursor every second: while the pointer is over
// them they stay where they are (the values still change), and sort again when it leaves; the
// selected table stays selected throughout.
void TestTablesProxy::rowsHoldStillUnderThePointer()
{
    TablesModel model;
    TablesProxy proxy;
    proxy.setSourceModel(&model);
    QTableView view;
    view.setModel(&proxy);
    auto *held = new driftless::ui::HeldOrder(&view, &proxy);
    auto v = tables(3);
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i].lagSeconds = 10.0 * double(i + 1);
    model.setSnapshot(snapshotOf(v));
    proxy.sort(TablesModel::Lag, Qt::AscendingOrder);
    QCOMPARE(shown(proxy), QStringList({"public.t0", "public.t1", "public.t2"}));
    view.selectRow(0);

    QEvent enter(QEvent::Enter);
    QCoreApplication::sendEvent(view.viewport(), &enter);
    QVERIFY(held->held());
    v[0].lagSeconds = 100.0;
    model.setSnapshot(snapshotOf(v));
    QCOMPARE(shown(proxy), QStringList({"public.t0", "public.t1", "public.t2"}));
    QCOMPARE(keysOf(proxy, TablesModel::Lag).first().toDouble(), 100.0);

    QEvent leave(QEvent::Leave);
    QCoreApplication::sendEvent(view.viewport(), &leave);
    QVERIFY(!held->held());
    QCOMPARE(shown(proxy), QStringList({"public.t1", "public.t2", "public.t0"}));
    const QModelIndexList selected = view.selectionModel()->selectedRows(TablesModel::Table);
    QCOMPARE(selected.size(), 1);
    QCOMPARE(selected.first().data().toString(), QStringLiteral("public.t0"));
}

void TestTablesProxy::sortByAnUnchangedColumnKeepsItsOrder()
{
    TablesModel model;
    TablesProxy proxy;
    proxy.setSourceModel(&model);
    auto v = tables(12);
    model.setSnapshot(snapshotOf(v));
    proxy.sort(TablesModel::Table, Qt::AscendingOrder);
    const QStringList before = shown(proxy);
    QCOMPARE(before.first(), QStringLiteral("public.t0"));
    QCOMPARE(before.at(2), QStringLiteral("public.t10")); // text, as the column shows it
    Signals spy(&proxy);

    // Every lag ticks: the proxy repaints the Lag column and does not sort again.
    for (auto &r : v)
        r.lagSeconds = 4.0;
    model.setSnapshot(snapshotOf(v));
    QCOMPARE(spy.layout.count(), 0);
    QCOMPARE(spy.changed.count(), 1);
    QCOMPARE(columnsOf(spy.changed.at(0)), qMakePair(int(TablesModel::Lag), int(TablesModel::Lag)));
    QCOMPARE(shown(proxy), before);
}

void TestTablesProxy::filterFollowsChangedText()
{
    TablesModel model;
    TablesProxy proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto v = tables(30);
    model.setSnapshot(snapshotOf(v));
    proxy.sort(TablesModel::Table, Qt::AscendingOrder);

    proxy.setFilterText(QStringLiteral("REFUSED"));
    QCOMPARE(proxy.rowCount(), 0);
    v[7].message = "connection refused";
    v[21].message = "Refused by pg_hba.conf";
    model.setSnapshot(snapshotOf(v));
    QCOMPARE(shown(proxy), QStringList({"public.t21", "public.t7"}));

    v[7].message.clear();
    model.setSnapshot(snapshotOf(v));
    QCOMPARE(shown(proxy), QStringList({"public.t21"}));

    // Any column: the strategy's label, the freshness word.
    v[3].freshness = Freshness::Breach;
    model.setSnapshot(snapshotOf(v));
    proxy.setFilterText(QStringLiteral("breach"));
    QCOMPARE(shown(proxy), QStringList({"public.t3"}));
    proxy.setFilterText(QStringLiteral("t1"));
    QCOMPARE(proxy.rowCount(), 11); // t1, t10..t19
    proxy.setFilterText(QString());
    QCOMPARE(proxy.rowCount(), 30);
    // A filter set the base class's way still works, the base class's way.
    proxy.setFilterFixedString(QStringLiteral("pg_hba"));
    QCOMPARE(shown(proxy), QStringList({"public.t21"}));
}

void TestTablesProxy::filterNeverMatchesAcrossCells()
{
    TablesModel model;
    TablesProxy proxy;
    proxy.setSourceModel(&model);
    auto v = tables(2);
    v[0].message = "abc";
    model.setSnapshot(snapshotOf(v));
    // The Progress cell is empty and the Message cell last: "abc" then the separator.
    proxy.setFilterText(QStringLiteral("abc") + QChar(u'\x1f'));
    QCOMPARE(proxy.rowCount(), 0);
    proxy.setFilterText(QStringLiteral("ABC"));
    QCOMPARE(proxy.rowCount(), 1);
}

void TestTablesProxy::aFilterShowingManyRowsIsOneLayoutChange()
{
    TablesModel model;
    TablesProxy proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto v = tables(1000);
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i].lagSeconds = double((i * 37) % 101); // sorted by lag, any filter's rows are scattered
    model.setSnapshot(snapshotOf(v));
    proxy.sort(TablesModel::Lag, Qt::AscendingOrder);
    proxy.setFilterText(QStringLiteral("p1")); // a third of the rows
    QCOMPARE(proxy.rowCount(), 333);
    const QPersistentModelIndex kept = proxy.index(5, TablesModel::Table);
    const QString keptName = kept.data().toString();
    Signals spy(&proxy);

    // Cleared: 667 rows come back, scattered over hundreds of intervals, in one layout change.
    proxy.setFilterText(QString());
    QCOMPARE(proxy.rowCount(), 1000);
    QCOMPARE(spy.inserted.count(), 0);
    QCOMPARE(spy.layout.count(), 1);
    QVERIFY(kept.isValid());
    QCOMPARE(kept.data().toString(), keptName);
    for (int row = 1; row < proxy.rowCount(); ++row)
        QVERIFY(proxy.index(row - 1, TablesModel::Lag).data(TablesModel::SortRole).toDouble() <=
                proxy.index(row, TablesModel::Lag).data(TablesModel::SortRole).toDouble());

    // Back to a third: the rows that go are gone, the ones still shown keep their indexes.
    proxy.setFilterText(QStringLiteral("P1"));
    QCOMPARE(proxy.rowCount(), 333);
    QCOMPARE(spy.removed.count(), 0);
    QCOMPARE(spy.layout.count(), 2);
    QCOMPARE(kept.data().toString(), keptName);

    // A few rows: inserted and removed as they come and go.
    proxy.setFilterText(QStringLiteral("public.t99"));
    QCOMPARE(shown(proxy).size(), 11); // t99, t990..t999
    QCOMPARE(spy.layout.count(), 3);
    proxy.setFilterText(QStringLiteral("public.t999"));
    QCOMPARE(shown(proxy), QStringList({"public.t999"}));
    QCOMPARE(spy.layout.count(), 3);
    QVERIFY(spy.removed.count() > 0);
}

void TestTablesProxy::sameAsAPlainProxyThroughRandomDiffs()
{
    TablesModel model;
    TablesProxy proxy;
    proxy.setSourceModel(&model);
    QSortFilterProxyModel plain;
    plain.setSourceModel(&model);
    plain.setSortRole(TablesModel::SortRole);
    plain.setFilterKeyColumn(-1);
    plain.setFilterCaseSensitivity(Qt::CaseInsensitive);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);

    QRandomGenerator random(19);
    const QStringList filters = {QString(),
                                 QStringLiteral("t1"),
                                 QStringLiteral("CURSOR"),
                                 QStringLiteral("p2"),
                                 QStringLiteral("warn"),
                                 QStringLiteral("5 s")};
    std::vector<TableReport> v = tables(60);
    model.setSnapshot(snapshotOf(v));
    for (int round = 0; round < 40; ++round) {
        // A diff: lags, rows, freshness and messages move; a table comes or goes now and then.
        for (auto &r : v) {
            if (random.bounded(3) == 0)
                r.lagSeconds = random.bounded(4) == 0 ? std::optional<double>() : double(random.bounded(20));
            if (random.bounded(5) == 0)
                r.rowsApplied += random.bounded(1000);
            if (random.bounded(7) == 0)
                r.freshness = random.bounded(2) ? Freshness::Warn : Freshness::Ok;
            if (random.bounded(9) == 0)
                r.lastSyncAtMs = *r.lastSyncAtMs + random.bounded(60'000);
        }
        if (round % 5 == 1)
            v.erase(v.begin() + random.bounded(int(v.size())));
        if (round % 5 == 3)
            v.push_back(table(100 + round));
        model.setSnapshot(snapshotOf(v));

        const int column = round % TablesModel::ColumnCount;
        const Qt::SortOrder order = (round / 4) % 2 ? Qt::DescendingOrder : Qt::AscendingOrder;
        if (round % 4 == 0) { // sorted anew now and then; otherwise kept sorted by the diffs
            proxy.sort(column, order);
            plain.sort(column, order);
        }
        const QString filter = filters.at(round % filters.size());
        if (round % 3 == 0) {
            proxy.setFilterText(filter);
            plain.setFilterFixedString(filter);
        }
        // The same rows, and at each position the same sort key (rows with equal keys may sit in
        // either order: a plain proxy inserts them where its binary search lands).
        QStringList mine = shown(proxy), reference = shown(plain);
        QCOMPARE(keysOf(proxy, plain.sortColumn()), keysOf(plain, plain.sortColumn()));
        std::sort(mine.begin(), mine.end());
        std::sort(reference.begin(), reference.end());
        QCOMPARE(mine, reference);
    }
}

QTEST_MAIN(TestTablesProxy)
#include "tst_tablesproxy.moc"
