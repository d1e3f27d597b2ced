#include "ui/widgets/visiblerowfitter.h"

#include <QAbstractItemModel>
#include <QEvent>
#include <QHeaderView>
#include <QScrollBar>
#include <QTableView>

namespace driftless::ui {

VisibleRowFitter::VisibleRowFitter(QTableView *view) : QObject(view), m_view(view)
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(0);
    connect(&m_timer, &QTimer::timeout, this, [this] { fitNow(); });
    view->verticalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    view->viewport()->installEventFilter(this);
    connect(view->verticalScrollBar(), &QScrollBar::valueChanged, this, &VisibleRowFitter::schedule);
    // A column's width decides where its text wraps.
    connect(view->horizontalHeader(), &QHeaderView::sectionResized, this, &VisibleRowFitter::schedule);
    if (QAbstractItemModel *model = view->model()) {
        connect(model, &QAbstractItemModel::modelReset, this, &VisibleRowFitter::schedule);
        connect(model, &QAbstractItemModel::layoutChanged, this, &VisibleRowFitter::schedule);
        connect(model, &QAbstractItemModel::rowsInserted, this, &VisibleRowFitter::schedule);
        connect(model, &QAbstractItemModel::rowsRemoved, this, &VisibleRowFitter::schedule);
        connect(model, &QAbstractItemModel::dataChanged, this, &VisibleRowFitter::schedule);
    }
}

void VisibleRowFitter::schedule()
{
    if (m_view->isVisible() && !m_timer.isActive())
        m_timer.start();
}

bool VisibleRowFitter::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::Resize || event->type() == QEvent::Show)
        schedule();
    return QObject::eventFilter(watched, event);
}

int VisibleRowFitter::fitNow()
{
    QAbstractItemModel *model = m_view->model();
    if (!model || !m_view->isVisible())
        return 0;
    QHeaderView *rows = m_view->verticalHeader();
    const int count = model->rowCount(m_view->rootIndex());
    const int height = m_view->viewport()->height();
    int measured = 0;
    // Growing a row pushes the ones below it down (and out of view), shrinking one pulls others
    // in: a second pass measures those.
    for (int pass = 0; pass < 2; ++pass) {
        bool changed = false;
        const int first = std::max(0, m_view->rowAt(0));
        for (int row = first; row < count && rows->sectionViewportPosition(row) < height; ++row) {
            if (rows->isSectionHidden(row))
                continue;
            // Public in QAbstractItemView, protected in QTableView.
            const int wanted = static_cast<const QAbstractItemView *>(m_view)->sizeHintForRow(row);
            ++measured;
            if (wanted > 0 && wanted != rows->sectionSize(row)) {
                rows->resizeSection(row, wanted);
                changed = true;
            }
        }
        if (!changed)
            break;
    }
    return measured;
}

} // namespace driftless::ui
