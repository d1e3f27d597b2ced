#include "ui/models/tablesmodel.h"

#include "ui/displayformat.h"
#include "ui/statusicons.h"

#include <QLocale>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace driftless::ui
{

namespace
{

using Key = std::pair<std::string, std::string>;
Key keyOf(const core::TableReport &r)
{
    return {r.pipeline, r.table};
}

/// Everything a row shows. The checkpoint and version are left out: they move with every batch
/// and are not on screen, so they must not cost a repaint.
bool sameOnScreen(const core::TableReport &a, const core::TableReport &b)
{
    return a.target == b.target && a.strategy == b.strategy && a.fellBackFromCdc == b.fellBackFromCdc &&
           a.state == b.state && a.message == b.message &&
           a.rowsApplied == b.rowsApplied && a.lastSyncAtMs == b.lastSyncAtMs && a.freshness == b.freshness &&
           a.slaSeconds == b.slaSeconds && a.progress == b.progress &&
           a.backfill.has_value() == b.backfill.has_value() &&
           (!a.backfill || (a.backfill->rows == b.backfill->rows && a.backfill->total == b.backfill->total &&
                            formatBackfill(*a.backfill) == formatBackfill(*b.backfill))) &&
           TablesModel::isRebackfill(a) == TablesModel::isRebackfill(b) &&
           // Lag shows whole seconds; a sub-second change is not a change on screen.
           formatLag(a.lagSeconds) == formatLag(b.lagSeconds);
}

int freshnessRank(const std::string &f)
{
    if (f == "ok")
        return 0;
    if (f == "warn")
        return 1;
    if (f == "breach")
        return 2;
    return 3;
}

QString stateText(const core::TableReport &r)
{
    QString s = QString::fromStdString(r.state);
    // A backfill's progress is in its own column, as a bar; the same number twice, rounded two
    // ways, would only disagree.
    if (r.progress && !r.backfill && (r.state == "backfilling" || r.state == "running"))
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
        return tr("Rows");
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
    return names;
}

bool TablesModel::isRebackfill(const core::TableReport &r)
{
    if (r.strategy != "cdc")
        return false;
    // Core marks it two ways: the state's message while chunks are copied, and the position
    // (the checkpoint's "rebackfill" key) while one waits to resume after a restart.
    if (r.state == "backfilling" && r.message.find("re-backfill") != std::string::npos)
        return true;
    return r.checkpoint.find("\"rebackfill\"") != std::string::npos;
}

bool TablesModel::needsAttention(const core::TableReport &r)
{
    return r.state == "error" || r.state == "retrying" || r.freshness == "warn" || r.freshness == "breach";
}

QVariant TablesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &r = m_rows[static_cast<std::size_t>(index.row())];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return display(r, column);
    case Qt::DecorationRole:
        if (column == Freshness)
            return freshnessIcon(QString::fromStdString(r.freshness));
        if (column == Strategy && r.fellBackFromCdc)
            return namedIcon(QStringLiteral("warn"));
        if (column == State) {
            QIcon icon = stateIcon(QString::fromStdString(r.state));
            return icon.isNull() ? QVariant() : QVariant(icon);
        }
        return {};
    case Qt::ToolTipRole: {
        QString tip = toolTip(r, column);
        return tip.isEmpty() ? QVariant() : QVariant(tip);
    }
    case Qt::TextAlignmentRole:
        if (column == Lag || column == Rows)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case SortRole:
        return sortKey(r, column);
    case FreshnessRole:
        return QString::fromStdString(r.freshness);
    case StateRole:
        return QString::fromStdString(r.state);
    case AttentionRole:
        return needsAttention(r);
    case StrategyRole:
        return QString::fromStdString(r.strategy);
    case BackfillRowsRole:
        return r.backfill ? QVariant(static_cast<qlonglong>(r.backfill->rows)) : QVariant();
    case BackfillTotalRole:
        return r.backfill && r.backfill->total ? QVariant(static_cast<qlonglong>(*r.backfill->total)) : QVariant();
    case BackfillPercentRole:
        return r.backfill && r.backfill->percent ? QVariant(*r.backfill->percent) : QVariant();
    case BackfillEtaRole:
        return r.backfill && r.backfill->etaSeconds ? QVariant(*r.backfill->etaSeconds) : QVariant();
    case RebackfillRole:
        return isRebackfill(r);
    case FellBackRole:
        return r.fellBackFromCdc;
    }
    return {};
}

QVariant TablesModel::display(const core::TableReport &r, int column) const
{
    switch (column) {
    case Pipeline:
        return QString::fromStdString(r.pipeline);
    case Table:
        return QString::fromStdString(r.table);
    case Strategy:
        if (r.fellBackFromCdc)
            return tr("%1 (fell back from CDC)").arg(strategyLabel(r.strategy));
        return strategyLabel(r.strategy);
    case State:
        return stateText(r);
    case Freshness:
        return QString::fromStdString(r.freshness);
    case Lag:
        return formatLag(r.lagSeconds);
    case Rows:
        return QLocale().toString(static_cast<qlonglong>(r.rowsApplied));
    case LastSync:
        return r.lastSyncAtMs ? formatTimestamp(*r.lastSyncAtMs) : tr("never");
    case Progress:
        return r.backfill ? formatBackfill(*r.backfill) : QString();
    case Message:
        return QString::fromStdString(r.message);
    }
    return {};
}

QVariant TablesModel::sortKey(const core::TableReport &r, int column) const
{
    switch (column) {
    case Freshness:
        return freshnessRank(r.freshness);
    case Lag:
        // Never synced sorts as the worst lag: it is the least known to be fresh.
        return r.lagSeconds.value_or(std::numeric_limits<double>::max());
    case Rows:
        return static_cast<qlonglong>(r.rowsApplied);
    case LastSync:
        return static_cast<qlonglong>(r.lastSyncAtMs.value_or(0));
    case Progress:
        // Running backfills first when sorted descending, the furthest along first.
        return r.backfill ? r.backfill->percent.value_or(0.0) : -1.0;
    }
    return display(r, column);
}

QString TablesModel::toolTip(const core::TableReport &r, int column) const
{
    switch (column) {
    case Table:
        return tr("Target: %1").arg(QString::fromStdString(r.target));
    case State:
    case Message:
        return QString::fromStdString(r.message);
    case Freshness:
    case Lag: {
        const QString sla = formatDuration(r.slaSeconds);
        if (!r.lagSeconds)
            return tr("Never synced. Freshness SLA %1").arg(sla);
        return tr("Target is %1 behind the source. Freshness SLA %2 (warn after %3)")
            .arg(formatLag(r.lagSeconds), sla, formatDuration(r.slaSeconds / 2));
    }
    case Progress:
        if (!r.backfill)
            return {};
        return (isRebackfill(r) ? tr("Re-backfill while the stream goes on: %1") : tr("Initial load: %1"))
            .arg(QString::fromStdString(core::describeBackfill(*r.backfill)));
    case Strategy:
        if (r.fellBackFromCdc)
            return tr("The slot guard dropped this pipeline's replication slot before it could harm the source "
                      "and moved the table to cursor sync, which misses hard deletes until a reconciliation "
                      "repairs them. \"Promote to CDC\" returns it to CDC.");
        if (r.strategy == "cursor")
            return tr("Cursor sync misses hard deletes and writes that do not touch the cursor column");
        return {};
    case LastSync:
        return r.lastSyncAtMs ? QString::fromStdString(core::formatIso8601(*r.lastSyncAtMs)) : QString();
    }
    return {};
}

void TablesModel::setSnapshot(const EngineSnapshot &snapshot)
{
    setTables(snapshot.tables);
}

void TablesModel::setTables(const std::vector<core::TableReport> &tables)
{
    std::map<Key, std::size_t> incoming;
    for (std::size_t i = 0; i < tables.size(); ++i)
        incoming.emplace(keyOf(tables[i]), i);

    // 1. Rows that are gone, removed from the bottom up in contiguous runs.
    for (int row = static_cast<int>(m_rows.size()) - 1; row >= 0;) {
        if (incoming.count(keyOf(m_rows[static_cast<std::size_t>(row)]))) {
            --row;
            continue;
        }
        int first = row;
        while (first > 0 && !incoming.count(keyOf(m_rows[static_cast<std::size_t>(first - 1)])))
            --first;
        beginRemoveRows({}, first, row);
        m_rows.erase(m_rows.begin() + first, m_rows.begin() + row + 1);
        endRemoveRows();
        row = first - 1;
    }

    // 2. Rows still there, updated in place; one dataChanged spans them all.
    std::set<Key> present;
    int firstChanged = -1, lastChanged = -1;
    for (std::size_t row = 0; row < m_rows.size(); ++row) {
        const auto key = keyOf(m_rows[row]);
        present.insert(key);
        const auto &next = tables[incoming.at(key)];
        if (sameOnScreen(m_rows[row], next)) {
            m_rows[row] = next; // keeps checkpoint/version current without a repaint
            continue;
        }
        m_rows[row] = next;
        if (firstChanged < 0)
            firstChanged = static_cast<int>(row);
        lastChanged = static_cast<int>(row);
    }
    if (firstChanged >= 0)
        emit dataChanged(index(firstChanged, 0), index(lastChanged, ColumnCount - 1));

    // 3. New rows, appended in snapshot order.
    std::vector<const core::TableReport *> added;
    for (const auto &t : tables)
        if (present.insert(keyOf(t)).second)
            added.push_back(&t);
    if (!added.empty()) {
        const int first = static_cast<int>(m_rows.size());
        beginInsertRows({}, first, first + static_cast<int>(added.size()) - 1);
        for (const auto *t : added)
            m_rows.push_back(*t);
        endInsertRows();
    }
}

int TablesModel::rowOf(const QString &pipeline, const QString &table) const
{
    const Key key{pipeline.toStdString(), table.toStdString()};
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (keyOf(m_rows[i]) == key)
            return static_cast<int>(i);
    return -1;
}

} // namespace driftless::ui
