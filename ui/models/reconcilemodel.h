#pragma once

#include "core/model/staterecords.h"

#include <QAbstractTableModel>

#include <cstdint>
#include <vector>

namespace driftless::ui {

/// One row per table of a stored reconciliation report, newest report first, as
/// WorkspaceState::reconcileSummaries() lists them: counts on each side, the three kinds of drift,
/// rows in flight and the drift ratio.
///
/// setSummaries() updates in place (one dataChanged) while the same rows are listed in the same
/// order, so the selection stays put; a new report resets the model. Views sort through a
/// proxy, by SortRole. The Status column says drift, no drift or error in a word and an icon,
/// never by colour alone, and marks the history: "repaired" when a repair ran from the report
/// for the table, "superseded" (the row in grey) when a newer report compared the table again.
class ReconcileModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Report,
        When,
        Pipeline,
        Table,
        Status,
        SourceRows,
        TargetRows,
        Missing,
        Extra,
        Different,
        InFlight,
        DriftRatio,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role {
        /// Numbers for number columns, text otherwise.
        SortRole = Qt::UserRole + 1,
        /// qint64: the report's id.
        ReportIdRole,
        /// One word: drift, none, error.
        StatusRole,
    };
    Q_ENUM(Role)

    explicit ReconcileModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setSummaries(const std::vector<core::ReconcileSummary> &rows);

    const core::ReconcileSummary &summaryAt(int row) const { return m_rows.at(static_cast<std::size_t>(row)); }
    /// The row of `table` in report `reportId`, or -1.
    int rowOf(std::int64_t reportId, const QString &table) const;

    /// drift, none or error.
    static QString statusKind(const core::ReconcileSummary &s);
    /// `0.50%`; `<0.01%` for drift too small to show; `0%` for none.
    static QString formatRatio(double ratio);

private:
    QVariant display(const core::ReconcileSummary &s, int column) const;
    QVariant sortKey(const core::ReconcileSummary &s, int column) const;
    QString toolTip(const core::ReconcileSummary &s, int column) const;

    std::vector<core::ReconcileSummary> m_rows;
};

} // namespace driftless::ui
