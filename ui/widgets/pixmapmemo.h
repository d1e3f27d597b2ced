#pragma once

#include <QCache>
#include <QPainter>
#include <QPalette>
#include <QPixmap>
#include <QRect>
#include <QString>

#include <algorithm>
#include <utility>

namespace driftless::ui {

/// Remembers drawings as pixmaps: a delegate asks it to paint a piece (a progress bar, a badge)
/// under a key saying everything the piece depends on, and it draws the piece once, into a
/// transparent pixmap at the painter's device pixel ratio, then copies that pixmap on every
/// later paint with the same key and size. Item views repaint their visible cells on every
/// scroll, sort, filter and live update; a style's antialiased shapes cost far more to draw
/// than to copy.
///
/// Holds at most kMaxKilobytes of pixmaps, dropping the least recently used. Text drawn into the
/// pixmap is antialiased in grey (a transparent pixmap has no background to blend subpixels
/// with), so only pieces whose text sits on their own opaque fill belong here.
class PixmapMemo {
public:
    static constexpr int kMaxKilobytes = 4096;
    static constexpr int kBleed = 2;

    PixmapMemo() : m_cache(kMaxKilobytes) {}

    /// Paints into `target` on `painter` what `draw(QPainter *, const QRect &)` paints in a
    /// rectangle of the target's size; `key` must name everything that changes the drawing
    /// except the size and the device pixel ratio, which the memo adds. The pixmap reaches
    /// kBleed pixels past the rectangle on every side, where styles draw shadows and frames.
    template <typename Draw> void paint(QPainter *painter, const QRect &target, const QString &key, Draw &&draw)
    {
        if (target.isEmpty())
            return;
        const qreal dpr = painter->device() ? painter->device()->devicePixelRatioF() : 1.0;
        const QString fullKey = key + QStringLiteral("|%1x%2@%3").arg(target.width()).arg(target.height()).arg(dpr);
        if (const QPixmap *hit = m_cache.object(fullKey)) {
            painter->drawPixmap(target.topLeft() - QPoint(kBleed, kBleed), *hit);
            return;
        }
        const QRect around = target.adjusted(-kBleed, -kBleed, kBleed, kBleed);
        auto *pixmap = new QPixmap((QSizeF(around.size()) * dpr).toSize());
        pixmap->setDevicePixelRatio(dpr);
        pixmap->fill(Qt::transparent);
        {
            QPainter p(pixmap);
            p.setFont(painter->font());
            p.setRenderHints(painter->renderHints());
            std::forward<Draw>(draw)(&p, QRect(QPoint(kBleed, kBleed), target.size()));
        }
        painter->drawPixmap(around.topLeft(), *pixmap);
        const qsizetype cost = std::max<qsizetype>(1, qsizetype(pixmap->width()) * pixmap->height() * 4 / 1024);
        m_cache.insert(fullKey, pixmap, cost);
    }

    /// Pixmaps held now (for tests).
    qsizetype size() const { return m_cache.size(); }
    void clear() { m_cache.clear(); }

    /// The colours of `group` a style draws with, as key text. (QPalette::cacheKey() changes
    /// whenever a copy is modified, as initStyleOption does for a model's colours, so it would
    /// miss on every paint.)
    static QString paletteKey(const QPalette &palette, QPalette::ColorGroup group)
    {
        static constexpr QPalette::ColorRole roles[] = {
            QPalette::Window,   QPalette::WindowText, QPalette::Base,      QPalette::AlternateBase,   QPalette::Text,
            QPalette::Button,   QPalette::ButtonText, QPalette::Highlight, QPalette::HighlightedText, QPalette::Light,
            QPalette::Midlight, QPalette::Mid,        QPalette::Dark,      QPalette::Shadow};
        QString key;
        key.reserve(std::size(roles) * 9);
        for (QPalette::ColorRole role : roles)
            key += QString::number(palette.color(group, role).rgba(), 16) + QLatin1Char(',');
        return key;
    }

private:
    QCache<QString, QPixmap> m_cache;
};

} // namespace driftless::ui
