#pragma once

#include "ui/widgets/pixmapmemo.h"

#include <QStyleOptionProgressBar>
#include <QStyledItemDelegate>

namespace driftless::ui {

/// Paints a running backfill (an initial load or a re-backfill) as a progress bar with its line
/// of text: `42% · 420,000 of 1,000,000 rows · ~1m 20s left`. With no estimate of the total the
/// bar is a busy indicator and the text says how many rows were copied. Cells with no backfill
/// are painted as plain, empty cells. Each look of a bar (value, text, size, colours) is drawn
/// once and copied after (PixmapMemo).
///
/// Reads TablesModel's BackfillRowsRole and BackfillPercentRole, and the text from DisplayRole.
class BackfillProgress final : public QStyledItemDelegate {
    Q_OBJECT
public:
    explicit BackfillProgress(QObject *parent = nullptr);

    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;

    /// What paint() draws in `rect` for `index`: progress 0..100, or minimum == maximum == 0 for
    /// a busy bar; nullopt when the cell has no backfill. Tests read the bar through this.
    std::optional<QStyleOptionProgressBar> barFor(const QModelIndex &index, const QRect &rect = {}) const;

    static constexpr int kMargin = 3;
    static constexpr int kMinWidth = 220;

    /// Bars held drawn (for tests).
    qsizetype memoSize() const { return m_memo.size(); }

private:
    mutable PixmapMemo m_memo;
};

} // namespace driftless::ui
