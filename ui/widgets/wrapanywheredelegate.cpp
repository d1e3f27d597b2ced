#include "ui/widgets/wrapanywheredelegate.h"

#include <QApplication>
#include <QPainter>
#include <QTextLayout>

#include <algorithm>
#include <cmath>

namespace driftless::ui {

namespace {

QTextOption wrapping(Qt::Alignment alignment)
{
    QTextOption option(alignment);
    option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    return option;
}

/// The style's margin left and right of a cell's text (QCommonStyle's, for the same look).
int textMargin(const QWidget *widget)
{
    const QStyle *style = widget ? widget->style() : QApplication::style();
    return style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
}

/// The height `text` takes wrapped into `width`.
qreal wrappedHeight(const QString &text, const QFont &font, qreal width)
{
    QTextLayout layout(text, font);
    layout.setTextOption(wrapping(Qt::AlignLeft));
    layout.beginLayout();
    qreal height = 0;
    for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
        line.setLineWidth(width);
        height += line.height();
    }
    layout.endLayout();
    return height;
}

} // namespace

void WrapAnywhereDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString text = opt.text;
    opt.text.clear();
    const QWidget *widget = opt.widget;
    const QStyle *style = widget ? widget->style() : QApplication::style();
    // The background, selection, focus and any icon as the style draws them; then the text.
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);
    const int margin = textMargin(widget);
    const QRect rect = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, widget).adjusted(margin, 0, -margin, 0);
    painter->save();
    const QPalette::ColorGroup group = !(opt.state & QStyle::State_Enabled) ? QPalette::Disabled
                                       : (opt.state & QStyle::State_Active) ? QPalette::Normal
                                                                            : QPalette::Inactive;
    painter->setPen(
        opt.palette.color(group, opt.state & QStyle::State_Selected ? QPalette::HighlightedText : QPalette::Text));
    painter->setFont(opt.font);
    painter->setClipRect(rect);
    painter->drawText(QRectF(rect), text, wrapping(opt.displayAlignment));
    painter->restore();
}

QSize WrapAnywhereDelegate::sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    // Asked with the column's width (a word-wrapping table view passes it): as tall as the text
    // wrapped into it, at least a line.
    if (option.rect.width() <= 0)
        return size;
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const int width = option.rect.width() - 2 * textMargin(opt.widget);
    if (width <= 0)
        return size;
    const int height = static_cast<int>(std::ceil(wrappedHeight(opt.text, opt.font, width))) + 4;
    size.setHeight(std::max(size.height(), height));
    return size;
}

} // namespace driftless::ui
