#pragma once

#include <QStyledItemDelegate>

namespace driftless::ui {

/// Draws a cell's text wrapped at word boundaries where it can and anywhere else where it must.
/// A table's word wrap breaks only at spaces, so a long name or statement in a sentence
/// (`gui_alerts_src_1/public.invoices`, `pg_drop_replication_slot('driftless_gone')`) ran past
/// its column and was cut off; here it continues on the next line, and sizeHint() makes the row
/// as tall as that (VisibleRowFitter asks it). The text, its colours and selection are the
/// style's; only the wrapping differs.
class WrapAnywhereDelegate final : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;
};

} // namespace driftless::ui
