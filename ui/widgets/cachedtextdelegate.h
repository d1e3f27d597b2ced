#pragma once

#include <QFont>
#include <QHash>
#include <QStaticText>
#include <QStyledItemDelegate>

namespace driftless::ui {

/// QStyledItemDelegate that draws single-line cell text from a cache of laid-out text
/// (QStaticText, keyed by the text and the width it is elided to) instead of shaping it again on
/// every paint. The style still draws everything else (background, selection, focus, icon), so
/// a cell looks as the style's would; wrapped or multi-line text goes to the style unchanged.
///
/// Item views repaint their visible cells on every scroll, sort, filter and live update; with a
/// thousand live tables text shaping was the largest part of each repaint (B12). The cache holds
/// at most kMaxEntries texts and starts over when full or when the view's font changes.
class CachedTextDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    explicit CachedTextDelegate(QObject *parent = nullptr);

    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;

    static constexpr int kMaxEntries = 4096;
    /// Laid-out texts held now (for tests).
    int cachedTexts() const { return static_cast<int>(m_cache.size()); }

private:
    struct Key {
        QString text;
        int width = 0;
        int elideMode = 0;
        friend bool operator==(const Key &a, const Key &b)
        {
            return a.width == b.width && a.elideMode == b.elideMode && a.text == b.text;
        }
        friend size_t qHash(const Key &k, size_t seed = 0) { return qHashMulti(seed, k.text, k.width, k.elideMode); }
    };
    const QStaticText &laidOut(const QString &text, int width, Qt::TextElideMode mode, const QFont &font) const;

    /// Where the style puts a single line of text in a cell of opt's shape (its size, check
    /// box, icon and direction), less the focus frame's margin; opt carries no text.
    QRect textRectFor(const QStyleOptionViewItem &opt, const QStyle *style) const;
    struct RectKey {
        QSize size;
        int features = 0;
        QSize decorationSize;
        int decorationPosition = 0;
        int direction = 0;
        int checkState = 0;
        friend bool operator==(const RectKey &a, const RectKey &b)
        {
            return a.size == b.size && a.features == b.features && a.decorationSize == b.decorationSize &&
                   a.decorationPosition == b.decorationPosition && a.direction == b.direction &&
                   a.checkState == b.checkState;
        }
        friend size_t qHash(const RectKey &k, size_t seed = 0)
        {
            return qHashMulti(seed, k.size.width(), k.size.height(), k.features, k.decorationSize.width(),
                              k.decorationSize.height(), k.decorationPosition, k.direction, k.checkState);
        }
    };
    mutable QHash<RectKey, QRect> m_rects;
    mutable const QStyle *m_rectStyle = nullptr;
    mutable QFont m_rectFont;

    mutable QHash<Key, QStaticText> m_cache;
    mutable QFont m_font;
};

} // namespace driftless::ui
