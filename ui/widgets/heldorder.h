#pragma once

#include <QObject>
#include <QPointer>

class QAbstractItemView;
class QSortFilterProxyModel;

namespace driftless::ui {

/// Holds a sorted view's rows in place while the pointer is over them. Sorted by a live column
/// (lag, rows/s), the proxy re-sorted on every snapshot, so the row under the cursor moved away
/// about once a second and a click could land on another table. While the pointer is over the
/// view's rows the proxy's dynamic sort (and filter) is off: values still change in place, rows
/// do not move; when the pointer leaves, the proxy sorts again. Selections follow their rows
/// either way (the proxy keeps persistent indexes).
///
/// Owned by the view; a UI-thread object.
class HeldOrder final : public QObject {
public:
    HeldOrder(QAbstractItemView *view, QSortFilterProxyModel *proxy);

    /// True while the order is held (the pointer is over the rows).
    bool held() const { return m_held; }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void hold(bool on);

    QPointer<QSortFilterProxyModel> m_proxy;
    bool m_held = false;
};

} // namespace driftless::ui
