#include "ui/widgets/backfillprogress.h"

#include "ui/models/tablesmodel.h"

#include <QApplication>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace driftless::ui {

BackfillProgress::BackfillProgress(QObject *parent) : QStyledItemDelegate(parent) {}

std::optional<QStyleOptionProgressBar> BackfillProgress::barFor(const QModelIndex &index, const QRect &rect) const
{
    const QVariant rows = index.data(TablesModel::BackfillRowsRole);
    if (!rows.isValid())
        return std::nullopt;
    QStyleOptionProgressBar bar;
    bar.rect = rect;
    bar.state = QStyle::State_Enabled | QStyle::State_Horizontal;
    bar.direction = QApplication::layoutDirection();
    bar.text = index.data(Qt::DisplayRole).toString();
    bar.textVisible = true;
    bar.textAlignment = Qt::AlignCenter;
    const QVariant percent = index.data(TablesModel::BackfillPercentRole);
    bar.minimum = 0;
    if (percent.isValid()) {
        bar.maximum = 100;
        bar.progress = std::clamp(static_cast<int>(std::floor(percent.toDouble())), 0, 100);
    } else {
        bar.maximum = 0; // busy: the style draws an indeterminate bar
        bar.progress = 0;
    }
    return bar;
}

QSize BackfillProgress::sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    const QSize base = QStyledItemDelegate::sizeHint(option, index);
    if (!index.data(TablesModel::BackfillRowsRole).isValid())
        return QSize(0, base.height());
    // Room for the time left even before a rate is measured, so the column does not grow again
    // a second later.
    const QFontMetrics fm(option.font);
    QString text = index.data(Qt::DisplayRole).toString();
    // A finished copy has no time left: its bar keeps no room for one (for its minute on screen
    // it pushed the Message column off a laptop's screen).
    if (index.data(TablesModel::BackfillPercentRole).isValid() && !index.data(TablesModel::BackfillEtaRole).isValid() &&
        !index.data(TablesModel::BackfillDoneRole).toBool())
        text += QStringLiteral(" \u00b7 ~00m 00s left");
    const int width = fm.horizontalAdvance(text) + 2 * kMargin + 24;
    return QSize(std::max(width, kMinWidth), std::max(base.height(), fm.height() + 2 * kMargin + 4));
}

void BackfillProgress::paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    QStyleOptionViewItem opt(option);
    initStyleOption(&opt, index);
    const QWidget *widget = opt.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();
    // The cell as the style draws it (selection, alternating rows), without the text, which
    // the bar carries.
    opt.text.clear();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

    auto bar = barFor(index, option.rect.adjusted(kMargin, kMargin, -kMargin, -kMargin));
    if (!bar)
        return;
    bar->fontMetrics = opt.fontMetrics;
    // One line, cut at the end where the column is narrower than the text (the page narrows it
    // on a small screen): the style wraps it otherwise, its second line clipped. The percentage
    // comes first and stays; the whole text is in the cell's tooltip.
    bar->text = opt.fontMetrics.elidedText(bar->text, Qt::ElideRight, bar->rect.width() - 2 * kMargin);
    bar->palette = opt.palette;
    // On a selected row the bar keeps the normal palette: the chunk must stay visible.
    bar->palette.setCurrentColorGroup(QPalette::Active);
    // Drawn once per look (value, text, size, colours) and copied after: the style's rounded,
    // antialiased bar was the costliest part of repainting the Tables page (B12).
    const QString key = QStringLiteral("%1/%2/%3|%4|%5|%6|%7|")
                            .arg(bar->minimum)
                            .arg(bar->maximum)
                            .arg(bar->progress)
                            .arg(int(bar->direction))
                            .arg(style->name(), painter->font().key(), bar->text) +
                        PixmapMemo::paletteKey(bar->palette, QPalette::Active);
    const QRect target = bar->rect;
    m_memo.paint(painter, target, key, [&](QPainter *p, const QRect &rect) {
        bar->rect = rect;
        style->drawControl(QStyle::CE_ProgressBar, &*bar, p, widget);
    });
}

} // namespace driftless::ui
