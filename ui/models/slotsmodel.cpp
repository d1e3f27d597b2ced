#include "ui/models/slotsmodel.h"

#include "ui/displayformat.h"
#include "ui/statusicons.h"

#include "core/engine/slots/slotprojection.h"

#include <cmath>
#include <limits>

namespace driftless::ui {

namespace {

bool sameSlot(const core::SlotReport &a, const core::SlotReport &b)
{
    return a.source == b.source && a.slot == b.slot;
}

bool sameOnScreen(const core::SlotReport &a, const core::SlotReport &b)
{
    return sameSlot(a, b) && a.owner == b.owner && a.orphaned == b.orphaned && a.temporary == b.temporary &&
           a.active == b.active && a.activePid == b.activePid && a.walStatus == b.walStatus &&
           a.retainedBytes == b.retainedBytes && a.safeWalSize == b.safeWalSize &&
           a.confirmedFlushLsn == b.confirmedFlushLsn && a.slotType == b.slotType && a.database == b.database &&
           a.secondsToLimit == b.secondsToLimit && a.restartLsn == b.restartLsn;
}

bool startsWith(const std::string &s, const char *prefix)
{
    return s.rfind(prefix, 0) == 0;
}

QString dash()
{
    return QStringLiteral("\u2014");
}

/// Icon for a wal_status word: reserved is fine, extended is past max_wal_size (a warning),
/// unreserved is about to be invalidated, lost already is.
QIcon walStatusIcon(core::WalStatus status)
{
    if (status == core::WalStatus::Reserved)
        return freshnessIcon(QStringLiteral("ok"));
    if (status == core::WalStatus::Extended)
        return freshnessIcon(QStringLiteral("warn"));
    if (status == core::WalStatus::Unreserved || status == core::WalStatus::Lost)
        return levelIcon(QStringLiteral("error"));
    return freshnessIcon(QStringLiteral("unknown"));
}

} // namespace

SlotsModel::SlotsModel(QObject *parent) : QAbstractTableModel(parent) {}

int SlotsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int SlotsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SlotsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Retained:
            return tr("WAL the slot holds on the source: pg_current_wal_lsn() minus restart_lsn");
        case SafeWalSize:
            return tr("WAL that may still be written before the slot is invalidated (max_slot_wal_keep_size)");
        case TimeToLimit:
            return tr("At the slot's growth over the last 15 minutes, when its slot guard's max_retained or the "
                      "server's max_slot_wal_keep_size is reached");
        case ConfirmedFlushLsn:
            return tr("The last position its consumer confirmed");
        }
        return {};
    }
    if (role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Source:
        return tr("Source");
    case Slot:
        return tr("Slot");
    case Owner:
        return tr("Owner");
    case Active:
        return tr("Active");
    case WalStatus:
        return tr("WAL status");
    case Retained:
        return tr("Retained WAL");
    case SafeWalSize:
        return tr("Safe WAL size");
    case TimeToLimit:
        return tr("Time to limit");
    case ConfirmedFlushLsn:
        return tr("Confirmed flush LSN");
    }
    return {};
}

QString SlotsModel::ownerKind(const core::SlotReport &s)
{
    if (isBinlog(s))
        return QStringLiteral("binlog");
    if (!s.owner.empty())
        return QStringLiteral("pipeline");
    if (s.orphaned)
        return QStringLiteral("orphaned");
    if (s.temporary && startsWith(s.slot, "driftless_tmp_"))
        return QStringLiteral("temporary");
    return QStringLiteral("other");
}

QString SlotsModel::ownerText(const core::SlotReport &s)
{
    if (!s.owner.empty())
        return QString::fromStdString(s.owner);
    if (s.orphaned)
        return tr("orphaned");
    if (s.temporary && startsWith(s.slot, "driftless_tmp_"))
        return tr("backfill (temporary)");
    if (startsWith(s.slot, "driftless_"))
        return tr("Driftless, another database");
    return tr("not Driftless's");
}

core::SlotReport SlotsModel::binlogRow(const core::BinlogRetention &b)
{
    core::SlotReport s;
    s.source = b.source;
    s.slot = core::binlogSampleKey(b.pipeline);
    s.slotType = "binlog";
    s.owner = b.pipeline;
    s.walStatus = b.neededPurged ? core::WalStatus::Purged : core::WalStatus::Unknown;
    s.retainedBytes = b.bytesBehind;
    s.secondsToLimit = b.secondsToExpiry;
    s.confirmedFlushLsn = b.neededFile.empty() ? std::string() : b.neededFile + ":" + std::to_string(b.neededOffset);
    s.restartLsn = b.oldestFile;
    return s;
}

QVariant SlotsModel::binlogDisplay(const core::SlotReport &s, int column) const
{
    auto it = m_binlogs.find(s.source + "/" + s.slot);
    const core::BinlogRetention *b = it == m_binlogs.end() ? nullptr : &it->second;
    switch (column) {
    case Source:
        return QString::fromStdString(s.source);
    case Slot:
        return b && !b->neededFile.empty() ? tr("binlog: needs %1").arg(QString::fromStdString(b->neededFile))
                                           : tr("binlog");
    case Owner:
        return QString::fromStdString(s.owner);
    case Active:
        return dash();
    case WalStatus:
        if (s.walStatus == core::WalStatus::Purged)
            return tr("purged");
        if (b && !b->error.empty() && !b->bytesBehind)
            return tr("unreadable");
        return s.restartLsn.empty() ? dash() : tr("oldest %1").arg(QString::fromStdString(s.restartLsn));
    case Retained:
        return s.retainedBytes ? formatBytes(*s.retainedBytes) : dash();
    case SafeWalSize:
        if (!b || !b->retentionSeconds)
            return dash();
        return *b->retentionSeconds == 0
                   ? tr("kept forever")
                   : tr("kept %1").arg(QString::fromStdString(core::humanTimeLeft(double(*b->retentionSeconds))));
    case TimeToLimit:
        if (s.walStatus == core::WalStatus::Purged)
            return tr("purged: re-snapshot");
        if (!s.secondsToLimit)
            return b && b->retentionSeconds && *b->retentionSeconds == 0 ? tr("never expires") : tr("unknown");
        return *s.secondsToLimit <= 0
                   ? tr("expired")
                   : tr("expires in %1").arg(QString::fromStdString(core::humanTimeLeft(*s.secondsToLimit)));
    case ConfirmedFlushLsn:
        return s.confirmedFlushLsn.empty() ? dash() : QString::fromStdString(s.confirmedFlushLsn);
    }
    return {};
}

QString SlotsModel::binlogToolTip(const core::SlotReport &s, int column) const
{
    auto it = m_binlogs.find(s.source + "/" + s.slot);
    const core::BinlogRetention *b = it == m_binlogs.end() ? nullptr : &it->second;
    if (b && !b->error.empty())
        return QString::fromStdString(b->error);
    switch (column) {
    case Slot:
        return tr("The binlog file pipeline %1's checkpoint resumes from; a binlog reader holds nothing on the "
                  "server, which purges by age alone")
            .arg(QString::fromStdString(s.owner));
    case WalStatus:
        return s.walStatus == core::WalStatus::Purged
                   ? tr("The server no longer has the file: the pipeline needs a re-snapshot (driftless-cli "
                        "resnapshot %1)")
                         .arg(QString::fromStdString(s.owner))
                   : tr("The oldest binlog file the server still has");
    case Retained:
        return s.retainedBytes ? tr("%L1 bytes of binlog from the needed position to the end").arg(*s.retainedBytes)
                               : QString();
    case SafeWalSize:
        return tr("binlog_expire_logs_seconds (or expire_logs_days)");
    case TimeToLimit:
        return b && b->expiresAtMs
                   ? tr("The server may purge it from %1 on (at its next binlog rotation)")
                         .arg(formatTimestamp(*b->expiresAtMs))
                   : tr("The file is still written to, or nothing expires: it lasts at least the retention");
    }
    return {};
}

QVariant SlotsModel::display(const core::SlotReport &s, int column) const
{
    if (isBinlog(s))
        return binlogDisplay(s, column);
    switch (column) {
    case TimeToLimit:
        if (s.secondsToLimit)
            return *s.secondsToLimit <= 0 ? tr("at its limit now")
                                          : QString::fromStdString(core::humanTimeLeft(*s.secondsToLimit));
        return limited(static_cast<std::size_t>(&s - m_rows.data())) ? tr("not growing") : tr("no limit");
    case Source:
        return QString::fromStdString(s.source);
    case Slot:
        return QString::fromStdString(s.slot);
    case Owner:
        return ownerText(s);
    case Active:
        if (!s.active)
            return tr("inactive");
        return s.activePid ? tr("active (pid %1)").arg(*s.activePid) : tr("active");
    case WalStatus:
        return s.walStatus == core::WalStatus::Unknown ? tr("unknown")
                                                       : QString::fromLatin1(core::toString(s.walStatus));
    case Retained:
        return s.retainedBytes ? formatBytes(*s.retainedBytes) : dash();
    case SafeWalSize:
        if (!s.safeWalSize)
            return s.walStatus == core::WalStatus::Lost ? dash() : tr("no limit");
        return formatBytes(*s.safeWalSize);
    case ConfirmedFlushLsn:
        return s.confirmedFlushLsn.empty() ? dash() : QString::fromStdString(s.confirmedFlushLsn);
    }
    return {};
}

QVariant SlotsModel::sortKey(const core::SlotReport &s, int column) const
{
    switch (column) {
    case Retained:
        return static_cast<qlonglong>(s.retainedBytes.value_or(-1));
    case SafeWalSize:
        // No limit sorts as the safest.
        return static_cast<qlonglong>(s.safeWalSize.value_or(std::numeric_limits<qint64>::max()));
    case Active:
        return s.active ? 1 : 0;
    case TimeToLimit:
        // Soonest first; nothing heading for a limit sorts as the safest.
        return s.secondsToLimit.value_or(std::numeric_limits<double>::max());
    }
    return display(s, column);
}

QString SlotsModel::toolTip(const core::SlotReport &s, int column) const
{
    if (isBinlog(s))
        return binlogToolTip(s, column);
    switch (column) {
    case Owner:
        if (!s.owner.empty())
            return tr("Read by pipeline %1 of this workspace").arg(QString::fromStdString(s.owner));
        if (s.orphaned)
            return tr("Named like Driftless's slots, in this database, but no pipeline of this workspace reads it. "
                      "It holds WAL until it is dropped.");
        return tr("Not created by this workspace (%1 slot, plugin %2, database %3)")
            .arg(QString::fromStdString(s.slotType), QString::fromStdString(s.plugin.empty() ? "-" : s.plugin),
                 QString::fromStdString(s.database.empty() ? "-" : s.database));
    case Active:
        return s.active ? tr("A consumer is connected; an active slot cannot be dropped")
                        : tr("No consumer is connected; the slot keeps WAL meanwhile");
    case WalStatus:
        if (s.walStatus == core::WalStatus::Reserved)
            return tr("The WAL it needs is within max_wal_size");
        if (s.walStatus == core::WalStatus::Extended)
            return tr("Past max_wal_size, still kept (wal_keep_size or max_slot_wal_keep_size)");
        if (s.walStatus == core::WalStatus::Unreserved)
            return tr("Past max_slot_wal_keep_size: the next checkpoint invalidates it");
        if (s.walStatus == core::WalStatus::Lost)
            return tr("Invalidated: the WAL it needed is gone; its consumer must re-sync");
        return {};
    case Retained:
        return s.retainedBytes ? tr("%L1 bytes").arg(*s.retainedBytes) : QString();
    case SafeWalSize:
        if (!s.safeWalSize)
            return tr("max_slot_wal_keep_size is -1: the slot may hold WAL until the disk fills");
        return tr("%L1 bytes").arg(*s.safeWalSize);
    case TimeToLimit:
        if (s.secondsToLimit)
            return tr("At its growth over the last 15 minutes (%1 s)").arg(std::llround(*s.secondsToLimit));
        return limited(static_cast<std::size_t>(&s - m_rows.data()))
                   ? tr("Retained WAL is steady or falling, or too few samples for a rate yet")
                   : tr("No slot_guard max_retained on %1 and no max_slot_wal_keep_size on the server")
                         .arg(QString::fromStdString(s.source));
    case ConfirmedFlushLsn:
        return s.restartLsn.empty() ? QString() : tr("restart_lsn %1").arg(QString::fromStdString(s.restartLsn));
    }
    return {};
}

QVariant SlotsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &s = m_rows[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return display(s, index.column());
    case Qt::DecorationRole:
        // Icons carry the shape, the text the word: status is never told by colour alone.
        if (isBinlog(s)) {
            if (index.column() == WalStatus && s.walStatus == core::WalStatus::Purged)
                return levelIcon(QStringLiteral("error"));
            return {};
        }
        if (index.column() == Active)
            return s.active ? freshnessIcon(QStringLiteral("ok")) : freshnessIcon(QStringLiteral("unknown"));
        if (index.column() == WalStatus)
            return walStatusIcon(s.walStatus);
        if (index.column() == Owner && s.orphaned)
            return freshnessIcon(QStringLiteral("warn"));
        return {};
    case Qt::ToolTipRole:
        return toolTip(s, index.column());
    case Qt::TextAlignmentRole:
        if (index.column() == Retained || index.column() == SafeWalSize || index.column() == TimeToLimit)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case SortRole:
        return sortKey(s, index.column());
    case ActiveRole:
        return s.active;
    case OwnerKindRole:
        return ownerKind(s);
    }
    return {};
}

void SlotsModel::setSample(const SlotSample &sample)
{
    std::vector<core::SlotReport> rows;
    std::vector<bool> limitedRows;
    for (const auto &source : sample.sources)
        for (const auto &s : source.replicationSlots) {
            rows.push_back(s);
            limitedRows.push_back(slotLimitApplies(s, slotGuardOf(sample.workspace.get(), s.source)));
        }
    m_binlogs.clear();
    for (const auto &source : sample.sources)
        for (const auto &b : source.binlogs) {
            rows.push_back(binlogRow(b));
            limitedRows.push_back(b.retentionSeconds.value_or(0) > 0);
            m_binlogs[rows.back().source + "/" + rows.back().slot] = b;
        }
    setSlots(rows, limitedRows);
}

bool SlotsModel::limited(std::size_t row) const
{
    return row < m_limited.size() ? m_limited[row] : m_rows[row].safeWalSize.has_value();
}

void SlotsModel::setSlots(const std::vector<core::SlotReport> &rows, const std::vector<bool> &limitedRows)
{
    if (limitedRows != m_limited && rows.size() == m_rows.size() && !rows.empty()) {
        // A guard set or lifted changes what Time to limit says, not which slots there are.
        m_limited = limitedRows;
        emit dataChanged(index(0, TimeToLimit), index(static_cast<int>(rows.size()) - 1, TimeToLimit));
    }
    m_limited = limitedRows;
    bool sameRows = rows.size() == m_rows.size();
    for (std::size_t i = 0; sameRows && i < rows.size(); ++i)
        sameRows = sameSlot(rows[i], m_rows[i]);
    if (!sameRows) {
        beginResetModel();
        m_rows = rows;
        endResetModel();
        return;
    }
    int first = -1, last = -1;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (sameOnScreen(rows[i], m_rows[i]))
            continue;
        if (first < 0)
            first = static_cast<int>(i);
        last = static_cast<int>(i);
    }
    m_rows = rows;
    if (first >= 0)
        emit dataChanged(index(first, 0), index(last, ColumnCount - 1));
}

int SlotsModel::rowOf(const QString &source, const QString &slot) const
{
    const std::string src = source.toStdString(), name = slot.toStdString();
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].source == src && m_rows[i].slot == name)
            return static_cast<int>(i);
    return -1;
}

} // namespace driftless::ui
