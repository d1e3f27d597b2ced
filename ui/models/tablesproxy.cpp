#include "ui/models/tablesproxy.h"

#include "ui/models/tablesmodel.h"

namespace driftless::ui {

TablesProxy::TablesProxy(QObject *parent) : QSortFilterProxyModel(parent)
{
    setSortRole(TablesModel::SortRole);
    setFilterKeyColumn(-1);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
}

void TablesProxy::setSourceModel(QAbstractItemModel *model)
{
    m_tables = qobject_cast<TablesModel *>(model);
    QSortFilterProxyModel::setSourceModel(model);
}

void TablesProxy::setFilterText(const QString &text)
{
    if (text == m_text)
        return;
    const QString folded = text.toCaseFolded();
    // How many rows the new text shows or hides (a pass over the kept text, well under a
    // millisecond with 10,000 rows).
    int flips = 0;
    if (m_tables)
        for (int row = 0, n = m_tables->rowCount(); row < n && flips <= kMaxIncrementalFilterRows; ++row)
            flips += m_tables->rowShows(row, m_folded) != m_tables->rowShows(row, folded) ? 1 : 0;
    else
        flips = kMaxIncrementalFilterRows + 1;
    m_text = text;
    m_folded = folded;
    if (flips == 0)
        return;
    if (flips <= kMaxIncrementalFilterRows)
        invalidateFilter(); // the rows that come and go, inserted and removed
    else
        invalidate(); // one layout change; selection and current row kept where still shown
}

bool TablesProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (!m_folded.isEmpty()) {
        if (m_tables && !sourceParent.isValid()) {
            if (!m_tables->rowShows(sourceRow, m_folded))
                return false;
        } else {
            bool shows = false;
            for (int c = 0, n = sourceModel()->columnCount(sourceParent); c < n && !shows; ++c)
                shows = sourceModel()
                            ->index(sourceRow, c, sourceParent)
                            .data(Qt::DisplayRole)
                            .toString()
                            .contains(m_text, Qt::CaseInsensitive);
            if (!shows)
                return false;
        }
    }
    return QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent);
}

bool TablesProxy::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    if (m_tables && sortRole() == TablesModel::SortRole && left.model() == m_tables && right.model() == m_tables &&
        left.column() == right.column())
        return m_tables->sortsBefore(left.row(), right.row(), left.column(), sortCaseSensitivity(),
                                     isSortLocaleAware());
    return QSortFilterProxyModel::lessThan(left, right);
}

} // namespace driftless::ui
