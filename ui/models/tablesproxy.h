#pragma once

#include <QPointer>
#include <QSortFilterProxyModel>

namespace driftless::ui {

class TablesModel;

/// The Tables page's sorting and filtering proxy over a TablesModel, for 10,000 tables on the UI
/// thread (issue 19, B12; figures in tests/bench/README.md).
///
/// Sorting by TablesModel::SortRole compares rows through TablesModel::sortsBefore() (numbers as
/// numbers, the kept text as is), in the order a QSortFilterProxyModel comparing SortRole's values
/// gives, without two QVariants per comparison. setFilterText() shows the rows with a cell
/// containing the text, case-insensitively, as setFilterFixedString() with a case-insensitive
/// filter over every column would, looking in each row's kept case-folded text rather than
/// formatting ten cells per row per keystroke. A text that shows or hides many rows at once
/// rebuilds the mapping in one go (a layout change) rather than inserting and removing rows one
/// interval at a time, which under a sort scattered over thousands of intervals, each a pass
/// through the views. The text filter applies on top of any the base class holds (a regular
/// expression, a key column); another sort role or source model goes the base class's way.
class TablesProxy final : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit TablesProxy(QObject *parent = nullptr);

    void setSourceModel(QAbstractItemModel *model) override;
    QString filterText() const { return m_text; }

    /// More rows than this coming or going with a new filter text rebuild the mapping at once.
    static constexpr int kMaxIncrementalFilterRows = 64;

public slots:
    /// Shows only the rows with a cell containing `text`, case-insensitively (every row when
    /// empty).
    void setFilterText(const QString &text);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;

private:
    QPointer<TablesModel> m_tables;
    QString m_text;
    QString m_folded; ///< m_text, case-folded
};

} // namespace driftless::ui
