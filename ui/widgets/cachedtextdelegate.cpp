#include "ui/widgets/cachedtextdelegate.h"

#include <QApplication>
#include <QFontMetrics>
#include <QPainter>

namespace driftless::ui {

CachedTextDelegate::CachedTextDelegate(QObject *parent) : QStyledItemDelegate(parent) {}

const QStaticText &CachedTextDelegate::laidOut(const QString &text, int width, Qt::TextElideMode mode,
                                               const QFont &font) const
{
    if (!(font == m_font) || m_cache.size() >= kMaxEntries) {
        m_cache.clear();
        m_font = font;
    }
    Key key{text, width, static_cast<int>(mode)};
    auto it = m_cache.find(key);
    if (it != m_cache.end())
        return *it;
    const QFontMetrics fm(font);
    QStaticText laid(fm.horizontalAdvance(text) > width ? fm.elidedText(text, mode, width) : text);
    laid.setTextFormat(Qt::PlainText);
    laid.prepare(QTransform(), font);
    return *m_cache.insert(std::move(key), std::move(laid));
}

QRect CachedTextDelegate::textRectFor(const QStyleOptionViewItem &opt, const QStyle *style) const
{
    if (style != m_rectStyle || !(opt.font == m_rectFont)) {
        m_rects.clear();
        m_rectStyle = style;
        m_rectFont = opt.font;
    }
    const RectKey key{opt.rect.size(),
                      static_cast<int>(opt.features),
                      opt.decorationSize,
                      static_cast<int>(opt.decorationPosition),
                      static_cast<int>(opt.direction),
                      static_cast<int>(opt.checkState)};
    auto it = m_rects.constFind(key);
    if (it == m_rects.constEnd()) {
        if (m_rects.size() >= kMaxEntries)
            m_rects.clear();
        QStyleOptionViewItem atOrigin(opt);
        atOrigin.rect.moveTopLeft(QPoint(0, 0));
        QRect r = style->subElementRect(QStyle::SE_ItemViewItemText, &atOrigin, opt.widget);
        const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, opt.widget) + 1;
        r.adjust(margin, 0, -margin, 0);
        it = m_rects.insert(key, r);
    }
    return it->translated(opt.rect.topLeft());
}

void CachedTextDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    QStyleOptionViewItem opt(option);
    initStyleOption(&opt, index);
    if (opt.text.isEmpty() || (opt.features & QStyleOptionViewItem::WrapText) || opt.text.contains(QChar::LineFeed) ||
        opt.text.contains(QChar::LineSeparator)) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    const QWidget *widget = opt.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();

    // Where the style would put the text: its rectangle less the focus frame's margin, as
    // QCommonStyle lays it out. Asked without the text: a single line's rectangle is what
    // the check box and icon leave of the cell, and with the text the style would shape it
    // (the costliest part of painting a cell) only to measure a size it does not use here.
    // The rectangle depends only on the cell's size and what else it shows, so it is asked once
    // per such shape.
    const QString text = opt.text;
    opt.text.clear();
    QRect textRect = textRectFor(opt, style);

    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);
    if (textRect.width() <= 0)
        return;

    // The pen the style gives text.
    QPalette::ColorGroup group = (opt.state & QStyle::State_Enabled) ? QPalette::Normal : QPalette::Disabled;
    if (group == QPalette::Normal && !(opt.state & QStyle::State_Active))
        group = QPalette::Inactive;
    const QColor color =
        opt.palette.color(group, (opt.state & QStyle::State_Selected) ? QPalette::HighlightedText : QPalette::Text);

    const QStaticText &laid = laidOut(text, textRect.width(), opt.textElideMode, opt.font);
    const QSizeF size = laid.size();
    const Qt::Alignment align = QStyle::visualAlignment(opt.direction, opt.displayAlignment);
    qreal x = textRect.left();
    if (align & Qt::AlignRight)
        x = textRect.left() + textRect.width() - size.width();
    else if (align & Qt::AlignHCenter)
        x = textRect.left() + (textRect.width() - size.width()) / 2;
    // Vertically as QCommonStyle places its layout: the rounded height aligned in whole pixels.
    const QRect line = QStyle::alignedRect(Qt::LayoutDirectionAuto, opt.displayAlignment & Qt::AlignVertical_Mask,
                                           size.toSize(), textRect);
    const qreal y = line.top();

    painter->save();
    painter->setFont(opt.font);
    painter->setPen(color);
    painter->setClipRect(textRect, Qt::IntersectClip);
    painter->drawStaticText(QPointF(x, y), laid);
    painter->restore();
}

} // namespace driftless::ui
