#pragma once

#include "ui/slotsample.h"

#include <QAbstractTableModel>

#include <map>
#include <string>
#include <vector>

namespace driftless::ui {

/// One row per replication slot over a SlotSample: every slot of every Postgres source of the
/// workspace, Driftless's and others'; then one row per MariaDB/MySQL CDC pipeline (kind
/// "binlog", binlogRow()): the binlog file it needs, the server's oldest, the bytes behind and the
/// time until the needed file may be purged, in the columns that say the same of a slot. Time to limit says where each
/// slot is heading at its recent rate (`seconds_to_limit`), "not growing" or "no limit" (with its source's slot guard,
/// from the sample's workspace).
///
/// setSample() updates in place (one dataChanged) while the same slots are listed in the same
/// order, which is the usual case every 15 s, so the selection stays put; a slot appearing or
/// going away resets the model. Views sort through a proxy, by SortRole.
class SlotsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Source,
        Slot,
        Owner,
        Active,
        WalStatus,
        Retained,
        SafeWalSize,
        TimeToLimit,
        ConfirmedFlushLsn,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role {
        /// Numbers for byte columns, text otherwise.
        SortRole = Qt::UserRole + 1,
        /// bool: a consumer is connected, so the slot cannot be dropped.
        ActiveRole,
        /// Who the slot belongs to in one word: pipeline, orphaned, temporary, other; binlog for a
        /// binlog pipeline's row.
        OwnerKindRole,
    };
    Q_ENUM(Role)

    explicit SlotsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setSample(const SlotSample &sample);
    /// `limited[i]`: a limit applies to rows[i] (slotLimitApplies()); missing: only where the
    /// server has one (a safe_wal_size).
    void setSlots(const std::vector<core::SlotReport> &rows, const std::vector<bool> &limited = {});

    const core::SlotReport &slotAt(int row) const { return m_rows.at(static_cast<std::size_t>(row)); }
    /// The row of `source`/`slot`, or -1.
    int rowOf(const QString &source, const QString &slot) const;

    /// A binlog pipeline as a row: slotType "binlog", slot binlogSampleKey() (its history's key),
    /// owner the pipeline, retainedBytes the bytes behind, secondsToLimit the seconds to expiry,
    /// confirmedFlushLsn the needed position ("file:offset"), restartLsn the server's oldest file,
    /// walStatus Purged once the needed file is gone, else Unknown.
    static core::SlotReport binlogRow(const core::BinlogRetention &binlog);
    static bool isBinlog(const core::SlotReport &s) { return s.slotType == "binlog"; }

    /// What the Owner column says: the pipeline's name, `orphaned`, or whose it is otherwise.
    static QString ownerText(const core::SlotReport &s);
    static QString ownerKind(const core::SlotReport &s);

private:
    QVariant display(const core::SlotReport &s, int column) const;
    QVariant sortKey(const core::SlotReport &s, int column) const;
    QString toolTip(const core::SlotReport &s, int column) const;
    QVariant binlogDisplay(const core::SlotReport &s, int column) const;
    QString binlogToolTip(const core::SlotReport &s, int column) const;

    bool limited(std::size_t row) const;

    std::vector<core::SlotReport> m_rows;
    std::vector<bool> m_limited;
    /// The binlog rows' own words (an error, the retention), by source/slot.
    std::map<std::string, core::BinlogRetention> m_binlogs;
};

} // namespace driftless::ui
