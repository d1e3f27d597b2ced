#pragma once

#include "core/engine/endpoints/tablediscovery.h"
#include "core/model/workspace.h"

#include <QWidget>

#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;
class QTableWidget;
class QTableWidgetItem;

namespace driftless::ui {

/// The pipeline editor's "Columns" panel for one table: a grid of the source table's columns
/// (name, type, key and cursor marks) with Include, Target name and Mask, and the table's row
/// filter (`where:`), `deletes:` policy and target table.
///
/// It edits a copy of the table's TableSpec and only the keys the YAML has for them (`columns:`,
/// `where:`, `deletes:`, `target_table:`): a mapping shown and not edited comes back as it was,
/// and an edited one keeps its form (include or exclude as it was written, entries in their
/// order, entries naming columns the source lacks kept for apply to refuse). Whether a mapping
/// fits the table is core's call (core::checkColumnMapping, run by the editor): the panel shows
/// the message it gets through setProblem(). Only what cannot become a TableSpec at all (a mask
/// count that is not a number) is the panel's own problem().
class ColumnMappingPanel final : public QWidget {
    Q_OBJECT
public:
    /// Grid columns.
    enum Column { Name, Type, Role, Include, TargetName, Mask, MaskSetting, ColumnCount };
    /// Mask combo entries, in order; the combo's data is the same number.
    enum MaskChoice { NoMask, NullMask, TruncateMask, KeepLastMask, HashMask };

    explicit ColumnMappingPanel(QWidget *parent = nullptr);

    /// Shows `spec` over `found`'s columns (null or without columns: the grid says why it is
    /// empty and only the filter, deletes and target table are shown). `editable` false: the
    /// table is not included, so nothing can be changed.
    void setTable(const core::TableSpec &spec, const core::DiscoveredTable *found, bool editable);
    /// Empties the grid, its mask boxes hidden at once (the view deletes them later).
    void dropRows();
    /// Nothing selected.
    void clearTable(const QString &why);
    /// The table's settings as edited.
    const core::TableSpec &spec() const { return m_spec; }
    /// Why the grid cannot be read as a mapping (a mask setting that is no count), or empty.
    QString problem() const { return m_problem; }
    /// Core's verdict on the mapping, shown under the grid (empty: none).
    void setProblem(const QString &message);
    /// The default target name, shown when the target table is left empty.
    void setTargetPlaceholder(const QString &name);

    QTableWidget *grid() const { return m_grid; }
    QLineEdit *whereEdit() const { return m_where; }
    QComboBox *deletesBox() const { return m_deletes; }
    QLineEdit *targetTableEdit() const { return m_targetTable; }
    QLabel *problemLabel() const { return m_message; }
    QLabel *noteLabel() const { return m_note; }

    /// The grid row of source column `column`, or -1.
    int rowOf(const QString &column) const;
    QComboBox *maskBox(const QString &column) const;
    /// Ticks or unticks the column's Include box, types a target name, picks a mask and its
    /// setting: what a user does, through the same widgets.
    void setColumnIncluded(const QString &column, bool included);
    void setTargetName(const QString &column, const QString &name);
    void setMask(const QString &column, MaskChoice choice, const QString &setting = {});

signals:
    /// The user changed the mapping, filter, deletes or target table: spec() has it.
    void specChanged();

private:
    void onItemChanged(QTableWidgetItem *item);
    void onMaskChosen(int row);
    void rebuildMapping();
    void showNote();

    core::TableSpec m_spec;
    /// The mapping as it was handed in: what keeps its form when the grid is read back.
    std::optional<core::ColumnMapping> m_original;
    std::optional<std::string> m_originalDeletes;
    bool m_loading = false;
    QString m_problem;
    QString m_verdict; ///< core's, from setProblem()

    QLabel *m_empty;
    QTableWidget *m_grid;
    QLineEdit *m_where;
    QComboBox *m_deletes;
    QLineEdit *m_targetTable;
    QLabel *m_message;
    QLabel *m_note;
};

} // namespace driftless::ui
