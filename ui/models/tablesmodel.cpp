#include "ui/models/tablesmodel.h"

#include "ui/commandwording.h"

#include "core/base/isotime.h"
#include "ui/displayformat.h"
#include "ui/statusicons.h"

#include <QLocale>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <limits>
#include <map>
#include <string_view>

namespace driftless::ui {

namespace {

using KeyView = std::pair<std::string_view, std::string_view>;
KeyView keyOf(const core::TableReport &r)
{
    return {r.pipeline, r.table};
}

/// The columns whose cells show something else from `a` to `b` (text, icon, tooltip, a role),
/// one bit per column; 0 when the row looks the same. The checkpoint and version move with every
/// batch and are not on screen, so they cost no repaint unless they start or end a re-backfill.
unsigned changedColumns(const core::TableReport &a, const core::TableReport &b)
{
    unsigned bits = 0;
    const auto mark = [&bits](int column) { bits |= 1u << column; };
    if (a.target != b.target || a.pickedUp != b.pickedUp)
        mark(TablesModel::Table);
    if (a.strategy != b.strategy || a.fellBackFromCdc != b.fellBackFromCdc || a.pickedUp != b.pickedUp)
        mark(TablesModel::Strategy);
    if (a.state != b.state || a.progress != b.progress || a.backfill.has_value() != b.backfill.has_value())
        mark(TablesModel::State);
    if (a.freshness != b.freshness)
        mark(TablesModel::Freshness);
    if (a.slaSeconds != b.slaSeconds) { // in the tooltips of both
        mark(TablesModel::Freshness);
        mark(TablesModel::Lag);
    }
    // Lag shows whole seconds; a sub-second change is not a change on screen.
    if (a.lagSeconds != b.lagSeconds && formatLag(a.lagSeconds) != formatLag(b.lagSeconds))
        mark(TablesModel::Lag);
    if (a.rowsApplied != b.rowsApplied)
        mark(TablesModel::Rows);
    if (TablesModel::tableRows(a) != TablesModel::tableRows(b) ||
        (a.reconcile ? a.reconcile->reportId : 0) != (b.reconcile ? b.reconcile->reportId : 0))
        mark(TablesModel::TableRows);
    if (a.lastSyncAtMs != b.lastSyncAtMs)
        mark(TablesModel::LastSync);
    if (a.backfill.has_value() != b.backfill.has_value() ||
        (a.backfill && (a.backfill->rows != b.backfill->rows || a.backfill->total != b.backfill->total ||
                        formatBackfill(*a.backfill) != formatBackfill(*b.backfill))) ||
        TablesModel::isRebackfill(a) != TablesModel::isRebackfill(b))
        mark(TablesModel::Progress);
    if (a.message != b.message) {
        mark(TablesModel::State); // its tooltip
        mark(TablesModel::Message);
    }
    return bits;
}

int freshnessRank(core::Freshness f)
{
    switch (f) {
    case core::Freshness::Ok:
        return 0;
    case core::Freshness::Warn:
        return 1;
    case core::Freshness::Breach:
        return 2;
    case core::Freshness::Unknown:
        break;
    }
    return 3;
}

QString stateText(const core::TableReport &r)
{
    QString s = stateLabel(r.state);
    // A backfill's progress is in its own column, as a bar; the same number twice, rounded two
    // ways, would only disagree.
    if (r.progress && !r.backfill && (r.state == core::TableState::Backfilling || r.state == core::TableState::Running))
        s += QStringLiteral(" %1%").arg(static_cast<int>(*r.progress * 100));
    return s;
}

} // namespace

TablesModel::TablesModel(QObject *parent) : QAbstractTableModel(parent) {}

int TablesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int TablesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TablesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == Rows)
        // Not the table's size: a full refresh counts its rows again at every pass.
        return tr("Rows written to the target since the table was added, every pass counted (a full refresh of "
                  "300 rows adds 300 each time); not the number of rows the table holds");
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == TableRows)
        return tr("The rows the source table holds, as last counted: by its newest reconciliation, or (\u2248) "
                  "the estimate of a load under way; blank until one of them has counted it");
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Pipeline:
        return tr("Pipeline");
    case Table:
        return tr("Table");
    case Strategy:
        return tr("Strategy");
    case State:
        return tr("State");
    case Freshness:
        return tr("Freshness");
    case Lag:
        return tr("Lag");
    case Rows:
        return tr("Rows written");
    case TableRows:
        return tr("Table rows");
    case LastSync:
        return tr("Last sync");
    case Progress:
        return tr("Backfill");
    case Message:
        return tr("Message");
    }
    return {};
}

QHash<int, QByteArray> TablesModel::roleNames() const
{
    auto names = QAbstractTableModel::roleNames();
    names.insert(SortRole, "sort");
    names.insert(FreshnessRole, "freshness");
    names.insert(StateRole, "state");
    names.insert(AttentionRole, "attention");
    names.insert(StrategyRole, "strategy");
    names.insert(BackfillRowsRole, "backfillRows");
    names.insert(BackfillTotalRole, "backfillTotal");
    names.insert(BackfillPercentRole, "backfillPercent");
    names.insert(BackfillEtaRole, "backfillEta");
    names.insert(RebackfillRole, "rebackfill");
    names.insert(FellBackRole, "fellBack");
    names.insert(BackfillDoneRole, "backfillDone");
    return names;
}

bool TablesModel::isRebackfill(const core::TableReport &r)
{
    return r.rebackfill;
}

bool TablesModel::needsAttention(const core::TableReport &r)
{
    return core::isFailing(r.state) || r.freshness == core::Freshness::Warn || r.freshness == core::Freshness::Breach;
}

QVariant TablesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows[static_cast<std::size_t>(index.row())];
    const auto &r = *row.report;
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return cellText(row, column);
    case Qt::DecorationRole:
        if (column == Freshness)
            return freshnessIcon(r.freshness);
        if (column == Strategy && r.fellBackFromCdc)
            return namedIcon(QStringLiteral("warn"));
        if (column == Table && conflictCount(index.row()) > 0)
            return namedIcon(QStringLiteral("warn"));
        if (column == State) {
            QIcon icon = stateIcon(r.state);
            return icon.isNull() ? QVariant() : QVariant(icon);
        }
        return {};
    case Qt::ToolTipRole: {
        if (column == Progress && row.done)
            return tr("%1 (%2)").arg(row.done->message, formatTimestamp(row.done->atMs));
        QString tip = toolTip(r, column);
        if (const int n = column == Table ? conflictCount(index.row()) : 0)
            tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) +
                   tr("%n open conflict(s) wait for a decision on the Conflicts page", "", n);
        return tip.isEmpty() ? QVariant() : QVariant(tip);
    }
    case Qt::TextAlignmentRole:
        if (column == Lag || column == Rows || column == TableRows)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case SortRole:
        return sortKey(row, column);
    case FreshnessRole:
        return spelled(r.freshness);
    case StateRole:
        return spelled(r.state);
    case AttentionRole:
        return needsAttention(r);
    case StrategyRole:
        return spelled(r.strategy);
    case BackfillRowsRole:
        if (row.done)
            return static_cast<qlonglong>(row.done->rows);
        return r.backfill ? QVariant(static_cast<qlonglong>(r.backfill->rows)) : QVariant();
    case BackfillTotalRole:
        if (row.done)
            return static_cast<qlonglong>(row.done->rows);
        return r.backfill && r.backfill->total ? QVariant(static_cast<qlonglong>(*r.backfill->total)) : QVariant();
    case BackfillPercentRole:
        if (row.done)
            return 100.0;
        return r.backfill && r.backfill->percent ? QVariant(*r.backfill->percent) : QVariant();
    case BackfillEtaRole:
        return r.backfill && r.backfill->etaSeconds ? QVariant(*r.backfill->etaSeconds) : QVariant();
    case RebackfillRole:
        return isRebackfill(r);
    case FellBackRole:
        return r.fellBackFromCdc;
    case BackfillDoneRole:
        return row.done.has_value();
    case ConflictsRole:
        return conflictCount(index.row());
    }
    return {};
}

QString TablesModel::display(const Row &row, int column)
{
    const core::TableReport &r = *row.report;
    switch (column) {
    case Pipeline:
        if (!r.twoWay.empty())
            return tr("%1: %2").arg(QString::fromStdString(r.twoWay), directionLabel(r));
        return QString::fromStdString(r.pipeline);
    case Table:
        return QString::fromStdString(r.table);
    case Strategy:
        if (r.fellBackFromCdc)
            return r.pickedUp ? tr("%1 (fell back from CDC; by pattern)").arg(strategyLabel(r.strategy))
                              : tr("%1 (fell back from CDC)").arg(strategyLabel(r.strategy));
        return r.pickedUp ? tr("%1 (by pattern)").arg(strategyLabel(r.strategy)) : strategyLabel(r.strategy);
    case State:
        return stateText(r);
    case Freshness:
        return spelled(r.freshness);
    case Lag:
        return formatLag(r.lagSeconds);
    case Rows:
        return QLocale().toString(static_cast<qlonglong>(r.rowsApplied));
    case TableRows: {
        const auto n = tableRows(r);
        if (!n)
            return {};
        const QString count = QLocale().toString(static_cast<qlonglong>(n->rows));
        return n->estimate ? tr("\u2248%1").arg(count) : count;
    }
    case LastSync:
        return r.lastSyncAtMs ? formatTimestamp(*r.lastSyncAtMs) : tr("never");
    case Progress:
        if (row.done)
            return tr("100% \u00b7 done \u00b7 %1 rows")
                .arg(QLocale().toString(static_cast<qlonglong>(row.done->rows)));
        return r.backfill ? formatBackfill(*r.backfill) : QString();
    case Message:
        return inAppWords(QString::fromStdString(r.message));
    }
    return {};
}

std::optional<double> TablesModel::numberKey(const Row &row, int column)
{
    const auto &r = *row.report;
    switch (column) {
    case Freshness:
        return freshnessRank(r.freshness);
    case Lag:
        // Never synced sorts as the worst lag: it is the least known to be fresh.
        return r.lagSeconds.value_or(std::numeric_limits<double>::max());
    case Rows:
        return static_cast<double>(r.rowsApplied);
    case TableRows:
        // Never counted sorts below an empty table.
        if (const auto n = tableRows(r))
            return static_cast<double>(n->rows);
        return -1.0;
    case LastSync:
        return static_cast<double>(r.lastSyncAtMs.value_or(0));
    case Progress:
        // Running backfills first when sorted descending, the furthest along first, then the
        // ones just finished.
        if (!r.backfill)
            return row.done ? -0.5 : -1.0;
        return r.backfill->percent.value_or(0.0);
    }
    return std::nullopt;
}

QVariant TablesModel::sortKey(const Row &row, int column) const
{
    if (const auto n = numberKey(row, column))
        return *n;
    return cellText(row, column);
}

QString TablesModel::toolTip(const core::TableReport &r, int column) const
{
    switch (column) {
    case Pipeline:
        if (r.twoWay.empty())
            return {};
        return tr("Two-way pipeline %1, its %2 direction: changes made on %3 are read there and applied to %4. "
                  "Each direction streams on its own, with its own lag and state.")
            .arg(QString::fromStdString(r.twoWay), r.reverse ? tr("reverse") : tr("forward"),
                 QString::fromStdString(r.source), QString::fromStdString(r.target));
    case Table:
        if (r.pickedUp)
            return tr("Target: %1\nPicked up by the pipeline's include_tables while the sync ran: not listed in the "
                      "workspace file; its settings come from the pipeline's table_defaults.")
                .arg(QString::fromStdString(r.target));
        return tr("Target: %1").arg(QString::fromStdString(r.target));
    case State:
    case Message:
        return inAppWords(QString::fromStdString(r.message));
    case Freshness:
    case Lag: {
        const QString sla = formatDuration(r.slaSeconds);
        QString text = !r.lagSeconds ? tr("Never synced. Freshness SLA %1").arg(sla)
                                     : tr("Target is %1 behind the source. Freshness SLA %2 (warn after %3)")
                                           .arg(formatLag(r.lagSeconds), sla, formatDuration(r.slaSeconds / 2));
        // A fresh table is "warn" when its last comparison found drift: say so, or the badge
        // contradicts the lag beside it.
        if (r.driftAlert && r.reconcile) {
            const auto &rc = *r.reconcile;
            const qlonglong rows = rc.missing + rc.extra + rc.different;
            const QString found =
                rows == 1 ? tr("1 row that differs") : tr("%1 rows that differ").arg(QLocale().toString(rows));
            text += QLatin1Char('\n') + tr("Warn: reconciliation report %1 found %2; it clears when a reconciliation "
                                           "finds none (Reconciliation page).")
                                            .arg(rc.reportId)
                                            .arg(found);
        }
        return text;
    }
    case Progress:
        if (!r.backfill)
            return {};
        return (isRebackfill(r) ? tr("Re-backfill while the stream goes on: %1") : tr("Initial load: %1"))
            .arg(QString::fromStdString(core::describeBackfill(*r.backfill)));
    case Strategy:
        if (r.pickedUp && !r.fellBackFromCdc)
            return tr("Picked up by the pipeline's include_tables while the sync ran, with %1: the table_defaults' "
                      "strategy, or the one recommended for it then.%2")
                .arg(strategyLabel(r.strategy),
                     r.strategy == core::Strategy::Cursor
                         ? tr("\nCursor sync misses hard deletes and writes that do not touch the cursor column")
                         : QString());
        if (r.fellBackFromCdc)
            return tr("The slot guard dropped this pipeline's replication slot before it could harm the source "
                      "and moved the table to cursor sync, which misses hard deletes until a reconciliation "
                      "repairs them. \"Promote to CDC\" returns it to CDC.");
        if (r.strategy == core::Strategy::Cursor)
            return tr("Cursor sync misses hard deletes and writes that do not touch the cursor column");
        return {};
    case LastSync:
        return r.lastSyncAtMs ? QString::fromStdString(core::formatIso8601(*r.lastSyncAtMs)) : QString();
    case TableRows: {
        const auto n = tableRows(r);
        if (!n)
            return tr("Not counted yet: a reconciliation (Reconciliation page) counts the rows on both sides");
        if (n->estimate)
            return tr("The load under way estimates %1 rows (the source's statistics); a reconciliation counts them")
                .arg(QLocale().toString(static_cast<qlonglong>(n->rows)));
        const auto &rc = *r.reconcile;
        return tr("%1 rows at the source and %2 in the target when reconciliation report %3 counted them (%4)")
            .arg(QLocale().toString(static_cast<qlonglong>(rc.sourceRows)),
                 QLocale().toString(static_cast<qlonglong>(rc.targetRows)))
            .arg(rc.reportId)
            .arg(formatTimestamp(rc.finishedMs));
    }
    }
    return {};
}

std::optional<TablesModel::Count> TablesModel::tableRows(const core::TableReport &r)
{
    // A load under way is the newer news; its total is the planner's estimate.
    if (r.backfill && r.backfill->total)
        return Count{*r.backfill->total, true};
    if (r.reconcile && r.reconcile->error.empty())
        return Count{r.reconcile->sourceRows, false};
    return std::nullopt;
}

TablesModel::DoneByTable TablesModel::finishedBackfills(const EngineSnapshot &snapshot)
{
    // Per table, the newest event about a copy: shown as done only when it says so ("initial
    // load done: N rows; ...", "re-backfill done: N rows merged, ..."), not when a later one says
    // the next copy was cancelled or failed.
    std::map<std::pair<std::string, std::string>, const core::EventRecord *> newest;
    for (const auto &e : snapshot.events) {
        if (e.kind != "load_done" && e.kind != "rebackfill")
            continue;
        auto [it, inserted] = newest.try_emplace({e.pipeline, e.table}, &e);
        if (!inserted && (it->second->tsMs < e.tsMs || (it->second->tsMs == e.tsMs && it->second->id < e.id)))
            it->second = &e;
    }
    DoneByTable done;
    for (const auto &[key, e] : newest) {
        if (e->tsMs < snapshot.takenAtMs - kDoneShownMs)
            continue;
        const bool finished = (e->kind == "load_done" && e->message.rfind("initial load done: ", 0) == 0) ||
                              (e->kind == "rebackfill" && e->message.rfind("re-backfill done: ", 0) == 0);
        if (!finished)
            continue;
        Done d;
        d.rows = std::strtoll(e->message.c_str() + e->message.find(": ") + 2, nullptr, 10);
        d.atMs = e->tsMs;
        d.message = QString::fromStdString(e->message);
        done.emplace(key, std::move(d));
    }
    return done;
}

void TablesModel::setSnapshot(const EngineSnapshot &snapshot)
{
    setTables(snapshot.tables, finishedBackfills(snapshot));
}

void TablesModel::setTables(SharedList<core::TableReport> shared, const DoneByTable &done)
{
    // The rows point into the previous snapshot's reports until each is moved to this one's.
    const SharedList<core::TableReport> previous = std::move(m_reports);
    m_reports = std::move(shared);
    const std::vector<core::TableReport> &tables = m_reports;
    const auto doneOf = [&done](const core::TableReport &t) -> std::optional<Done> {
        if (t.backfill) // a copy runs again
            return std::nullopt;
        auto it = done.find({t.pipeline, t.table});
        return it == done.end() ? std::nullopt : std::optional<Done>(it->second);
    };
    // The common case: the same tables in the same order as last time, compared in place
    // without building any index (twice a second, with a thousand tables).
    bool sameKeys = tables.size() == m_rows.size();
    for (std::size_t i = 0; sameKeys && i < tables.size(); ++i)
        sameKeys = tables[i].pipeline == m_rows[i].report->pipeline && tables[i].table == m_rows[i].report->table;

    std::map<KeyView, std::size_t> incoming;
    if (!sameKeys) {
        for (std::size_t i = 0; i < tables.size(); ++i)
            incoming.emplace(keyOf(tables[i]), i);

        // 1. Rows that are gone, removed from the bottom up in contiguous runs.
        const auto gone = [&](int row) {
            return !incoming.count(keyOf(*m_rows[static_cast<std::size_t>(row)].report));
        };
        for (int row = static_cast<int>(m_rows.size()) - 1; row >= 0;) {
            if (!gone(row)) {
                --row;
                continue;
            }
            int first = row;
            while (first > 0 && gone(first - 1))
                --first;
            beginRemoveRows({}, first, row);
            m_rows.erase(m_rows.begin() + first, m_rows.begin() + row + 1);
            endRemoveRows();
            row = first - 1;
        }
    }

    // 2. Rows still there, updated in place. Each contiguous run of changed rows gets one
    // dataChanged spanning the columns that changed in it: a view repaints only those cells, and
    // a proxy re-filters only those rows and re-sorts them only when its sort column is among the
    // columns (lag alone changing every second leaves a proxy sorted by table alone). Runs are
    // sent once the rows are all updated, so a proxy re-sorting on the first reads current rows.
    struct Run {
        int first, last;
        unsigned columns;
    };
    std::vector<Run> runs;
    std::vector<char> present(tables.size(), 0);
    for (std::size_t row = 0; row < m_rows.size(); ++row) {
        Row &mine = m_rows[row];
        const std::size_t at = sameKeys ? row : incoming.at(keyOf(*mine.report));
        present[at] = 1;
        const auto &next = tables[at];
        std::optional<Done> nextDone = doneOf(next);
        unsigned changed = changedColumns(*mine.report, next);
        if (nextDone != mine.done)
            changed |= 1u << Progress;
        mine.report = &next; // keeps checkpoint/version current, with or without a repaint
        mine.done = std::move(nextDone);
        if (!changed)
            continue;
        // The cells are made again when read: a view reads those on screen, a filter all.
        mine.textStale |= changed;
        mine.foldedStale = true;
        const int r = static_cast<int>(row);
        if (!runs.empty() && runs.back().last == r - 1) {
            runs.back().last = r;
            runs.back().columns |= changed;
        } else {
            runs.push_back({r, r, changed});
        }
    }
    if (runs.size() > static_cast<std::size_t>(kMaxChangedRuns)) {
        Run all{runs.front().first, runs.back().last, 0};
        for (const Run &run : runs)
            all.columns |= run.columns;
        runs.assign(1, all);
    }
    for (const Run &run : runs) {
        const int firstColumn = std::countr_zero(run.columns);
        const int lastColumn = 31 - std::countl_zero(run.columns);
        emit dataChanged(index(run.first, firstColumn), index(run.last, lastColumn));
    }

    // 3. New rows, appended in snapshot order.
    std::size_t added = 0;
    for (std::size_t i = 0; i < tables.size(); ++i)
        added += present[i] ? 0 : 1;
    if (added > 0) {
        const int first = static_cast<int>(m_rows.size());
        beginInsertRows({}, first, first + static_cast<int>(added) - 1);
        m_rows.reserve(m_rows.size() + added);
        for (std::size_t i = 0; i < tables.size(); ++i)
            if (!present[i])
                m_rows.push_back(rowFor(tables[i], doneOf(tables[i])));
        endInsertRows();
    }
}

TablesModel::Row TablesModel::rowFor(const core::TableReport &report, std::optional<Done> done)
{
    return Row{&report, std::move(done), {}, {}, true, ~0u};
}

const QString &TablesModel::cellText(const Row &row, int column)
{
    auto &cell = row.text[static_cast<std::size_t>(column)];
    if (row.textStale & (1u << column)) {
        cell = display(row, column);
        row.textStale &= ~(1u << column);
    }
    return cell;
}

void TablesModel::fold(const Row &row)
{
    qsizetype size = ColumnCount;
    for (int c = 0; c < ColumnCount; ++c)
        size += cellText(row, c).size();
    QString all;
    all.reserve(size);
    for (const QString &text : row.text) {
        all += text;
        all += kCellSeparator;
    }
    row.folded = std::move(all).toCaseFolded();
    row.foldedStale = false;
}

bool TablesModel::rowShows(int row, const QString &folded) const
{
    if (row < 0 || row >= rowCount())
        return false;
    const Row &r = m_rows[static_cast<std::size_t>(row)];
    if (folded.isEmpty())
        return true;
    if (!folded.contains(kCellSeparator)) {
        if (r.foldedStale)
            fold(r);
        return r.folded.contains(folded, Qt::CaseSensitive);
    }
    // A separator in the filter: it must not match across two cells.
    for (int c = 0; c < ColumnCount; ++c)
        if (cellText(r, c).toCaseFolded().contains(folded, Qt::CaseSensitive))
            return true;
    return false;
}

bool TablesModel::sortsBefore(int left, int right, int column, Qt::CaseSensitivity cs, bool localeAware) const
{
    const Row &a = m_rows.at(static_cast<std::size_t>(left));
    const Row &b = m_rows.at(static_cast<std::size_t>(right));
    // The same keys as sortKey(), compared as QSortFilterProxyModel::lessThan compares them.
    if (const auto x = numberKey(a, column))
        return *x < *numberKey(b, column);
    if (column < 0 || column >= ColumnCount)
        return false;
    const QString &s = cellText(a, column);
    const QString &t = cellText(b, column);
    return localeAware ? s.localeAwareCompare(t) < 0 : s.compare(t, cs) < 0;
}

int TablesModel::rowOf(const QString &pipeline, const QString &table) const
{
    const std::string p = pipeline.toStdString(), t = table.toStdString();
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].report->pipeline == p && m_rows[i].report->table == t)
            return static_cast<int>(i);
    return -1;
}

void TablesModel::setConflictCounts(const ConflictCounts &counts)
{
    if (counts == m_conflicts)
        return;
    m_conflicts = counts;
    if (!m_rows.empty())
        emit dataChanged(index(0, Table), index(rowCount() - 1, Table),
                         {Qt::DecorationRole, Qt::ToolTipRole, ConflictsRole});
}

int TablesModel::conflictCount(int row) const
{
    if (row < 0 || row >= rowCount())
        return 0;
    const auto &r = *m_rows[static_cast<std::size_t>(row)].report;
    auto it = m_conflicts.find({r.pipeline, r.table});
    return it == m_conflicts.end() ? 0 : it->second;
}

} // namespace driftless::ui
