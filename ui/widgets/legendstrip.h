#pragma once

#include <QColor>
#include <QString>
#include <QWidget>

#include <vector>

namespace driftless::ui {

/// A chart's legend as a plain widget: a colour swatch (a dash for a dashed line) and the full
/// name of each line, wrapped onto as many rows as the width needs.
///
/// Qt Charts' own legend keeps one row: with the Lag page's twenty tables it cut every name to
/// a few letters ("p0/s0...") and laid out each label as rich text on every resize, a large part
/// of showing the page (B12). Names wider than the whole strip are elided in the middle, where
/// a schema-qualified name differs least.
///
/// A click on an entry emits toggled(): the chart hides or shows that line, and the entry is then
/// drawn greyed (Entry::hidden), as a legend click does in most charting tools.
class LegendStrip final : public QWidget {
    Q_OBJECT
public:
    struct Entry {
        QString name;
        QColor colour;
        bool dashed = false;
        /// Its line is hidden: drawn greyed and struck through.
        bool hidden = false;
        friend bool operator==(const Entry &a, const Entry &b)
        {
            return a.name == b.name && a.colour == b.colour && a.dashed == b.dashed && a.hidden == b.hidden;
        }
    };

    explicit LegendStrip(QWidget *parent = nullptr);

    void setEntries(std::vector<Entry> entries);
    const std::vector<Entry> &entries() const { return m_entries; }
    /// Where each entry is drawn at `width` (swatch and name), in order; for tests.
    std::vector<QRect> entryRects(int width) const;

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    static constexpr int kSwatch = 16;
    static constexpr int kGap = 4;      ///< between swatch and name
    static constexpr int kSpacing = 16; ///< between entries
    static constexpr int kMargin = 6;

signals:
    /// Entry `index` (named `name`) was clicked.
    void toggled(int index, const QString &name);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    int rowHeight() const;
    /// Lays the entries out at `width`; returns the rectangles and sets the height they need.
    std::vector<QRect> layOut(int width, int *height) const;
    void measure();

    std::vector<Entry> m_entries;
    std::vector<int> m_textWidths; ///< each name's advance in the widget's font
};

} // namespace driftless::ui
