#pragma once

#include "ui/widgets/pixmapmemo.h"

#include <QColor>
#include <QFont>
#include <QHash>
#include <QStyledItemDelegate>

namespace driftless::ui {

/// Paints a freshness (ok, warn, breach, unknown) as a badge: the level's icon and word on a
/// tinted pill. The word and the icon's shape carry the meaning; the tint only helps the eye,
/// so the badge reads the same to colour-blind DBAs and on a monochrome screenshot.
///
/// Reads the item's DisplayRole (the word) and DecorationRole (the icon); works on any model
/// that provides both. Each look of a badge is drawn once and copied after (PixmapMemo).
class FreshnessBadge final : public QStyledItemDelegate {
    Q_OBJECT
public:
    explicit FreshnessBadge(QObject *parent = nullptr);

    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;

    struct Tint {
        QColor fill;
        QColor border;
        QColor text;
    };
    /// Light fills with near-black text: readable on light and dark palettes, selected or not.
    static Tint tintFor(const QString &level);

    static constexpr int kIconSize = 14;
    static constexpr int kPadding = 6;
    static constexpr int kMargin = 4;

private:
    mutable PixmapMemo m_memo;
    /// The words' widths in m_font (a badge says one of four words).
    mutable QHash<QString, int> m_advances;
    mutable QFont m_font;
    mutable QString m_fontKey;
};

} // namespace driftless::ui
