#pragma once

#include "core/engine/reconcile/reconciler.h"

#include <QAbstractItemModel>

#include <vector>

namespace driftless::ui {

/// The differing rows of one table of a reconciliation report, as a tree: one top-level row per
/// key with its class (missing in target, extra in target, different). A different row names its
/// differing columns with the source value beside the target value; when several columns differ,
/// each is a child row of the key. A missing or extra row shows its values on the side that has
/// it (the whole row in one line, and a child row per column), as the report kept them
/// (TableReconcile::missingRows/extraRows; a report from before they were kept says `row
/// present`). A table without a primary key lists its rows with no key, and how many copies one
/// side has more of.
///
/// Values are the reconciler's canonical text. NULL reads `NULL` in grey italics (NullRole true),
/// a side without the row reads `no row` the same way, so neither is mistaken for the text
/// "NULL" or an empty string. Only the keys the report kept are listed (ReconcileOptions::maxKeys
/// per class); truncated() says when there were more.
class RowDiffModel final : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Key, Class, ColumnName, Source, Target, ColumnCount };
    Q_ENUM(Column)

    enum class Kind { Missing, Extra, Different };

    enum Role {
        /// bool: the cell stands for NULL or for a row that is not there, not for a value.
        NullRole = Qt::UserRole + 1,
        /// missing, extra or different.
        KindRole,
    };
    Q_ENUM(Role)

    explicit RowDiffModel(QObject *parent = nullptr);

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Shows `table`; an empty TableReconcile clears the grid.
    void setTable(const core::TableReconcile &table);
    void clear();

    const core::TableReconcile &table() const { return m_table; }
    /// Keys listed, of all three classes.
    int keyCount() const { return static_cast<int>(m_entries.size()); }
    /// The key a row stands for (a child row stands for its parent's key).
    const core::CanonicalKey &keyAt(const QModelIndex &index) const;
    Kind kindAt(const QModelIndex &index) const;
    /// The top-level row of `key`, or an invalid index.
    QModelIndex indexOfKey(const core::CanonicalKey &key) const;
    /// True when the report counted more differing rows than it kept keys for.
    bool truncated() const;
    /// The table has no primary key: its rows are listed without keys and cannot be repaired one
    /// by one.
    bool keyless() const { return m_table.keyColumns.empty() && !m_table.columns.empty(); }

    /// `7`, or `eu, 42` for a composite key.
    static QString keyText(const core::CanonicalKey &key);
    static QString kindText(Kind kind);
    static QString kindWord(Kind kind);

private:
    struct Entry {
        Kind kind;
        core::CanonicalKey key;
        /// Different rows: the differing columns. Missing and extra rows: every column, its value
        /// on the side that has the row (empty when the report did not keep the values).
        std::vector<core::ColumnDiff> columns;
        long long copies = 1;
        bool hasChildren() const { return kind == Kind::Different ? columns.size() > 1 : !columns.empty(); }
    };
    /// A missing or extra row's values as the child rows show them.
    static std::vector<core::ColumnDiff> rowColumns(const core::TableReconcile &table, const core::RowValues &row,
                                                    Kind kind);
    QVariant topData(const Entry &e, int column, int role) const;
    QVariant childData(const Entry &e, const core::ColumnDiff &c, int column, int role) const;
    int entryOf(const QModelIndex &index) const;

    core::TableReconcile m_table;
    std::vector<Entry> m_entries;
};

} // namespace driftless::ui
