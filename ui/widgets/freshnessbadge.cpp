#include "ui/widgets/freshnessbadge.h"

#include <QApplication>
#include <QIcon>
#include <QPainter>
#include <QPainterPath>

namespace driftless::ui {

FreshnessBadge::FreshnessBadge(QObject *parent) : QStyledItemDelegate(parent) {}

FreshnessBadge::Tint FreshnessBadge::tintFor(const QString &level)
{
    if (level == QLatin1String("ok"))
        return {QColor(0xd9, 0xf2, 0xdf), QColor(0x1e, 0x7d, 0x34), QColor(0x10, 0x3d, 0x1a)};
    if (level == QLatin1String("warn"))
        return {QColor(0xff, 0xf0, 0xc2), QColor(0xa8, 0x79, 0x00), QColor(0x4a, 0x35, 0x00)};
    if (level == QLatin1String("breach"))
        return {QColor(0xfb, 0xd8, 0xd8), QColor(0xc6, 0x28, 0x28), QColor(0x5c, 0x0b, 0x0b)};
    return {QColor(0xe8, 0xe8, 0xe8), QColor(0x6b, 0x6b, 0x6b), QColor(0x26, 0x26, 0x26)};
}

QSize FreshnessBadge::sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    const QString text = index.data(Qt::DisplayRole).toString();
    const QFontMetrics fm(option.font);
    const int width = kMargin + kPadding + kIconSize + kPadding / 2 + fm.horizontalAdvance(text) + kPadding + kMargin;
    const int height = std::max(fm.height(), kIconSize) + 2 * kMargin + 2;
    return QSize(width, height).expandedTo(QStyledItemDelegate::sizeHint(option, index));
}

void FreshnessBadge::paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    QStyleOptionViewItem opt(option);
    initStyleOption(&opt, index);
    const QString text = opt.text;
    const QIcon icon = opt.icon;

    // The cell itself (selection, hover, alternating rows) as the style draws it, without the
    // text and icon, which the badge draws.
    opt.text.clear();
    opt.icon = QIcon();
    opt.features &= ~QStyleOptionViewItem::HasDecoration;
    const QWidget *widget = opt.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

    if (text.isEmpty())
        return;
    const Tint tint = tintFor(text);
    const QFontMetrics fm(opt.font);
    const int pillHeight = std::min(opt.rect.height() - 2, std::max(fm.height(), kIconSize) + 4);
    if (!(opt.font == m_font)) {
        m_font = opt.font;
        m_fontKey = m_font.key();
        m_advances.clear();
    }
    auto advance = m_advances.constFind(text);
    if (advance == m_advances.constEnd())
        advance = m_advances.insert(text, fm.horizontalAdvance(text));
    const int pillWidth =
        std::min(opt.rect.width() - 2 * kMargin, kPadding + kIconSize + kPadding / 2 + *advance + kPadding);
    const QRect pill(opt.rect.left() + kMargin, opt.rect.top() + (opt.rect.height() - pillHeight) / 2, pillWidth,
                     pillHeight);

    // Drawn once per look (word, icon, size, font) and copied after: the antialiased pill was
    // a large part of repainting the Tables page (B12).
    const QString key = QStringLiteral("%1|%2|%3").arg(text, m_fontKey).arg(icon.cacheKey());
    m_memo.paint(painter, pill, key, [&](QPainter *p, const QRect &r) {
        p->setRenderHint(QPainter::Antialiasing);
        QPainterPath path;
        path.addRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), r.height() / 2.0, r.height() / 2.0);
        p->fillPath(path, tint.fill);
        p->setPen(QPen(tint.border, 1));
        p->drawPath(path);
        const QRect iconRect(r.left() + kPadding, r.top() + (r.height() - kIconSize) / 2, kIconSize, kIconSize);
        if (!icon.isNull())
            icon.paint(p, iconRect);
        const QRect textRect(iconRect.right() + 1 + kPadding / 2, r.top(), r.right() - iconRect.right() - kPadding / 2,
                             r.height());
        p->setPen(tint.text);
        p->setFont(opt.font);
        p->drawText(textRect, Qt::AlignLeft | Qt::AlignVCenter, fm.elidedText(text, Qt::ElideRight, textRect.width()));
    });
}

} // namespace driftless::ui
