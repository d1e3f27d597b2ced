#pragma once

#include <QColor>
#include <QStyledItemDelegate>

namespace driftless::ui {

/// Paints a freshness (ok, warn, breach, unknown) as a badge: the level's icon and word on a
/// tinted pill. The word and the icon's shape carry the meaning; the tint only helps the eye,
/// so the badge reads the same to colour-blind DBAs and on a monochrome screenshot.
///
/// Reads the item's DisplayRole (the word) and DecorationRole (the icon); works on any model
/// that provides both.
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
};

} // namespace driftless::ui
