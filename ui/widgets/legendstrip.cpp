#include "ui/widgets/legendstrip.h"

#include <QEvent>
#include <QFontMetrics>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QStringList>

#include <algorithm>

namespace driftless::ui {

LegendStrip::LegendStrip(QWidget *parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
    setAccessibleName(tr("Legend"));
    setCursor(Qt::PointingHandCursor);
    setToolTip(tr("Click a name to hide or show its line"));
}

void LegendStrip::setEntries(std::vector<Entry> entries)
{
    if (entries == m_entries)
        return;
    m_entries = std::move(entries);
    // Painted, so screen readers get the names from here.
    QStringList names;
    for (const Entry &e : m_entries)
        names << e.name;
    setAccessibleDescription(names.join(QStringLiteral(", ")));
    measure();
    updateGeometry();
    update();
}

void LegendStrip::measure()
{
    const QFontMetrics fm(font());
    m_textWidths.clear();
    m_textWidths.reserve(m_entries.size());
    for (const Entry &e : m_entries)
        m_textWidths.push_back(fm.horizontalAdvance(e.name));
}

int LegendStrip::rowHeight() const
{
    return std::max(QFontMetrics(font()).height(), kSwatch) + 4;
}

std::vector<QRect> LegendStrip::layOut(int width, int *height) const
{
    std::vector<QRect> rects;
    rects.reserve(m_entries.size());
    const int row = rowHeight();
    const int right = std::max(width - kMargin, kMargin + kSwatch);
    int x = kMargin;
    int y = kMargin / 2;
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
        int w = kSwatch + kGap + m_textWidths[i];
        if (x > kMargin && x + w > right) {
            x = kMargin;
            y += row;
        }
        w = std::min(w, right - x); // wider than the strip: the name is elided
        rects.emplace_back(x, y, w, row);
        x += w + kSpacing;
    }
    if (height)
        *height = m_entries.empty() ? 0 : y + row + kMargin / 2;
    return rects;
}

std::vector<QRect> LegendStrip::entryRects(int width) const
{
    return layOut(width, nullptr);
}

int LegendStrip::heightForWidth(int width) const
{
    int height = 0;
    layOut(width, &height);
    return height;
}

QSize LegendStrip::sizeHint() const
{
    const int width = std::max(this->width(), 400);
    return {width, heightForWidth(width)};
}

QSize LegendStrip::minimumSizeHint() const
{
    return {kSwatch + 2 * kMargin, m_entries.empty() ? 0 : rowHeight()};
}

void LegendStrip::paintEvent(QPaintEvent *event)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QFontMetrics fm(font());
    const std::vector<QRect> rects = layOut(width(), nullptr);
    const QColor text = palette().color(QPalette::WindowText);
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
        const QRect &r = rects[i];
        if (!event->rect().intersects(r))
            continue;
        const Entry &e = m_entries[i];
        p.setOpacity(e.hidden ? 0.35 : 1.0);
        const QRect swatch(r.left(), r.top() + (r.height() - kSwatch) / 2, kSwatch, kSwatch);
        if (e.dashed) {
            QPen pen(e.colour, 2, Qt::DashLine);
            pen.setDashPattern({2.0, 1.5});
            p.setPen(pen);
            p.drawLine(QPointF(swatch.left(), swatch.center().y() + 0.5),
                       QPointF(swatch.right() + 1, swatch.center().y() + 0.5));
        } else {
            p.setPen(QPen(e.colour.darker(130), 1));
            p.setBrush(e.colour);
            p.drawRoundedRect(QRectF(swatch).adjusted(2.5, 2.5, -2.5, -2.5), 2, 2);
        }
        const QRect textRect(swatch.right() + 1 + kGap, r.top(), r.right() - swatch.right() - kGap, r.height());
        p.setPen(text);
        QFont f = font();
        f.setStrikeOut(e.hidden);
        p.setFont(f);
        p.drawText(textRect, Qt::AlignLeft | Qt::AlignVCenter,
                   m_textWidths[i] > textRect.width() ? fm.elidedText(e.name, Qt::ElideMiddle, textRect.width())
                                                      : e.name);
    }
}

void LegendStrip::mouseReleaseEvent(QMouseEvent *event)
{
    const std::vector<QRect> rects = layOut(width(), nullptr);
    for (std::size_t i = 0; i < rects.size(); ++i)
        if (rects[i].contains(event->position().toPoint())) {
            emit toggled(static_cast<int>(i), m_entries[i].name);
            return;
        }
    QWidget::mouseReleaseEvent(event);
}

void LegendStrip::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        measure();
        updateGeometry();
    }
}

} // namespace driftless::ui
