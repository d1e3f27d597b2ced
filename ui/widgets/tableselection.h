#pragma once

#include <QModelIndex>
#include <QSortFilterProxyModel>
#include <QTableView>

namespace driftless::ui {

/// The source-model row of a sorted/filtered table view's selected row, or -1.
inline int selectedSourceRow(const QTableView *view, const QSortFilterProxyModel *proxy)
{
    const QModelIndexList rows = view->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : proxy->mapToSource(rows.first()).row();
}

/// Selects the view's row showing source-model row `row`; clears the selection when `row` < 0.
inline void selectSourceRow(QTableView *view, const QSortFilterProxyModel *proxy, int row)
{
    if (row < 0) {
        view->clearSelection();
        return;
    }
    view->selectRow(proxy->mapFromSource(proxy->sourceModel()->index(row, 0)).row());
}

} // namespace driftless::ui
