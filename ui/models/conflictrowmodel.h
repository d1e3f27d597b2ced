#pragma once

#include "core/model/conflictpolicy.h"

#include <QAbstractTableModel>

#include <optional>
#include <string>
#include <vector>

namespace driftless::ui {

/// One queued conflict side by side, as the reconciliation's row diff shows a differing row: one
/// row per column of the table with the base (the row as both sides last agreed on it), the
/// source's and the target's value.
///
/// A side's cell whose value differs from the base is highlighted (ChangedRole); a column both
/// sides changed (the conflict's columns) is bold (OverlapRole). NULL reads `NULL` and a side
/// without the row reads `no row`, both in grey italics (NullRole), so neither is mistaken for
/// text. Key columns come first, then the others as the queue lists them.
///
/// The Choice column holds, for each column the two sides differ in, the side whose value both
/// sides will keep ("source" or "target", ChoiceRole); by default the three-way merge's: the side
/// that changed the column since the base. A column both sides changed has no default: it reads
/// "choose" until setChoice() picks a side. Columns the sides agree on have no choice.
class ConflictRowModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ColumnName, Base, Source, Target, Choice, ColumnCount };
    Q_ENUM(Column)

    enum Role {
        /// bool: the cell stands for NULL or for a row that is not there, not for a value.
        NullRole = Qt::UserRole + 1,
        /// bool: this side's value differs from the base's.
        ChangedRole,
        /// bool: both sides changed this column (one of the conflict's columns).
        OverlapRole,
        /// QString: the side chosen for this column ("source", "target"; empty: none yet, or
        /// the sides agree).
        ChoiceRole,
        /// bool: the sides' values of this column differ, so a side must be chosen.
        DiffersRole,
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
    /// The line's column name, without the key mark.
    QString columnAt(int row) const;

    /// Both sides have the row: their columns can be chosen one by one.
    bool choosable() const { return m_choosable; }
    /// Chooses `side` ("source" or "target"; empty: none) for `column`, a column the sides
    /// differ in. Returns false (and changes nothing) for any other column or side.
    bool setChoice(const QString &column, const QString &side);
    /// The three-way merge's side for `column`, or empty when both sides changed it.
    QString mergeChoice(const QString &column) const;
    /// Every column the sides differ in has a side.
    bool choiceComplete() const;
    /// The choices that differ from the merge's (including every column without a default),
    /// column -> "source"/"target": what `"columns"` needs next to `"take": "merged"`.
    std::vector<std::pair<std::string, std::string>> choicesBeyondMerge() const;
    /// Puts every choice back to the merge's.
    void resetChoices();

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
        QString merged; ///< the merge's side; empty when both sides changed the column
        QString choice; ///< the side chosen; empty when none yet or the sides agree
        bool differs() const { return source != target; }
    };
    QVariant valueData(const Line &line, int column, int role) const;

    std::vector<Line> m_lines;
    bool m_choosable = false;
};

} // namespace driftless::ui
