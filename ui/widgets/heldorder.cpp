#include "ui/widgets/heldorder.h"

#include <QAbstractItemView>
#include <QEvent>
#include <QSortFilterProxyModel>

namespace driftless::ui {

HeldOrder::HeldOrder(QAbstractItemView *view, QSortFilterProxyModel *proxy) : QObject(view), m_proxy(proxy)
{
    view->viewport()->installEventFilter(this);
    hold(view->viewport()->underMouse());
}

bool HeldOrder::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::Enter)
        hold(true);
    else if (event->type() == QEvent::Leave)
        hold(false);
    return QObject::eventFilter(watched, event);
}

void HeldOrder::hold(bool on)
{
    if (on == m_held || !m_proxy)
        return;
    m_held = on;
    // Turned back on, the proxy sorts and filters what changed meanwhile at once.
    m_proxy->setDynamicSortFilter(!on);
}

} // namespace driftless::ui
