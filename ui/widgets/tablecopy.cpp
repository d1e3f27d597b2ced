#include "ui/widgets/tablecopy.h"

#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QStringList>
#include <QTableView>

#include <algorithm>

namespace driftless::ui {

namespace {
QString cell(const QVariant &v)
{
    QString text = v.toString();
    text.replace(QLatin1Char('\t'), QLatin1Char(' ')).replace(QLatin1Char('\n'), QLatin1Char(' '));
    return text;
}
} // namespace

QString selectionAsTsv(const QTableView *view)
{
    const QAbstractItemModel *model = view->model();
    if (!model)
        return {};
    const QHeaderView *header = view->horizontalHeader();
    // The columns as the DBA sees them: in their visual order, hidden ones left out.
    std::vector<int> columns;
    for (int visual = 0; visual < header->count(); ++visual) {
        const int logical = header->logicalIndex(visual);
        if (!view->isColumnHidden(logical))
            columns.push_back(logical);
    }
    QModelIndexList rows = view->selectionModel() ? view->selectionModel()->selectedRows() : QModelIndexList{};
    if (rows.isEmpty()) {
        const QModelIndex current = view->currentIndex();
        return current.isValid() ? cell(current.data()) : QString();
    }
    std::sort(rows.begin(), rows.end(), [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    QStringList lines;
    QStringList titles;
    for (int c : columns)
        titles << cell(model->headerData(c, Qt::Horizontal));
    lines << titles.join(QLatin1Char('\t'));
    for (const QModelIndex &row : rows) {
        QStringList cells;
        for (int c : columns)
            cells << cell(model->index(row.row(), c).data());
        lines << cells.join(QLatin1Char('\t'));
    }
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

namespace {
/// Takes Ctrl+C before the view does: QAbstractItemView copies the current cell itself, and
/// claims the key before any shortcut sees it.
class TsvCopier final : public QObject {
public:
    explicit TsvCopier(QTableView *view) : QObject(view), m_view(view) {}

protected:
    bool eventFilter(QObject *, QEvent *event) override
    {
        if (event->type() != QEvent::KeyPress || !static_cast<QKeyEvent *>(event)->matches(QKeySequence::Copy))
            return false;
        QApplication::clipboard()->setText(selectionAsTsv(m_view));
        return true;
    }

private:
    QTableView *m_view;
};
} // namespace

void installTsvCopy(QTableView *view)
{
    view->installEventFilter(new TsvCopier(view));
}

} // namespace driftless::ui
