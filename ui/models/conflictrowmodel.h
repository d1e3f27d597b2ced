#pragma once

#include "core/model/conflictpolicy.h"

#include <QAbstractTableModel>

#include <optional>
#include <string>
#include <vector>

namespace driftless::ui
{

/// One queued conflict side by side, as the reconciliation's row diff shows a differing row: one
/// row per column of the table with the base (the row as both sides last agreed on it), the
/// source's and the target's value.
///
/// A side's cell whose value differs from the base is highlighted (ChangedRole); a column both
/// sides changed (the conflict's columns) is bold (OverlapRole). NULL reads `NULL` and a side
/// without the row reads `no row`, both in grey italics (NullRole), so neither is mistaken for
/// text. Key columns come first, then the others as the queue lists them.
class ConflictRowModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { ColumnName, Base, Source, Target, ColumnCount };
    Q_ENUM(Column)

    enum Role {
        /// bool: the cell stands for NULL or for a row that is not there, not for a value.
        NullRole = Qt::UserRole + 1,
        /// bool: this side's value differs from the base's.
        ChangedRole,
        /// bool: both sides changed this column (one of the conflict's columns).
        OverlapRole,
    };
    Q_ENUM(Role)

    explicit ConflictRowModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Shows `conflict`; clear() empties the grid.
    void setConflict(const core::QueuedConflict &conflict);
    void clear();
    /// The row of `column`, or -1.
    int rowOf(const QString &column) const;

private:
    /// A side's value of one column: nullopt for NULL; `present` false when the side has no row.
    struct Value {
        bool present = false;
        std::optional<std::string> text;
        bool operator==(const Value &) const = default;
    };
    struct Line {
        QString column;
        bool key = false;
        bool overlap = false;
        Value base, source, target;
    };
    QVariant valueData(const Line &line, int column, int role) const;

    std::vector<Line> m_lines;
};

} // namespace driftless::ui
