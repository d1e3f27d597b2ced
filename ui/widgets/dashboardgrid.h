#pragma once

#include "ui/models/dashboardtiles.h"
#include "ui/widgets/pixmapmemo.h"

#include <QRect>
#include <QString>
#include <QWidget>

#include <vector>

namespace driftless::ui {

/// The dashboard's tiles, painted in one widget (1,000 child widgets would cost more to lay out
/// and paint than the UI thread's budget allows): a row of pipeline tiles, then one section per
/// group of table tiles. Each tile is tinted as the freshness badge of its worst table is
/// (FreshnessBadge::tintFor) and carries the badge's icon, so the shape tells the level too.
///
/// Lives in a QScrollArea: its height follows its width (setMinimumHeight), and a paint draws
/// only the tiles in the exposed rectangle. A click on a table tile emits tableClicked, on a
/// pipeline tile pipelineClicked. A pipeline tile's context menu offers Pause Pipeline… and
/// Resume Pipeline… (pausePipelineRequested) and, when its source changed, Recover…
/// (recoverRequested). UI thread only.
class DashboardGrid final : public QWidget {
    Q_OBJECT
public:
    explicit DashboardGrid(QWidget *parent = nullptr);

    /// Shows `pipelines` and `groups` (pointers into a DashboardTiles, valid until the next
    /// call); `selected` is the pipeline whose tables alone are shown, drawn as chosen.
    ///
    /// While the pointer is over the grid, the same tiles keep their places: ordered worst first
    /// (by lag within a freshness), they moved under the cursor with every snapshot. Their
    /// values still change; the new order is laid out when the pointer leaves, and at once when
    /// tiles come or go.
    void setContent(std::vector<const DashboardTiles::Pipeline *> pipelines, std::vector<DashboardTiles::Group> groups,
                    const QString &selected);
    /// True while the tiles are held in the order they had when the pointer came (for tests).
    bool orderHeld() const { return m_held; }

    static constexpr int kTableWidth = 208;
    static constexpr int kTableHeight = 62;
    static constexpr int kPipelineWidth = 256;
    static constexpr int kPipelineHeight = 104;
    static constexpr int kGap = 6;
    static constexpr int kHeaderHeight = 28;

    /// Where a tile is (widget coordinates); empty when it is not shown. For tests.
    QRect tableRect(const QString &pipeline, const QString &table) const;
    QRect pipelineRect(const QString &pipeline) const;
    /// The table tiles in the order they are laid out: `pipeline/table`.
    QStringList shownTables() const;
    int shownCount() const { return m_shown; }
    /// The group headers in order, as painted.
    QStringList groupTitles() const;
    /// The lines under a pipeline tile's title, as painted (whole, before eliding); empty when
    /// it is not shown. For tests.
    QStringList pipelineLines(const QString &pipeline) const;

signals:
    void tableClicked(const QString &pipeline, const QString &table);
    void pipelineClicked(const QString &pipeline);
    /// "Recover…" was chosen on the tile of a pipeline whose source changed.
    void recoverRequested(const QString &pipeline);
    /// "Pause Pipeline…" (`pause`) or "Resume Pipeline…" was chosen on `pipeline`'s tile.
    void pausePipelineRequested(const QString &pipeline, bool pause);

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;
    bool event(QEvent *event) override;

private:
    struct Item {
        enum Kind { PipelineTile, Header, TableTile } kind;
        QRect rect;
        const DashboardTiles::Pipeline *pipeline = nullptr;
        const DashboardTiles::Group *group = nullptr;
        const DashboardTiles::Table *table = nullptr;
    };

    void relayout();
    /// Puts `pipelines` and `groups` in the order on screen when they hold the same tiles;
    /// false (nothing changed) otherwise.
    bool keepOrder(std::vector<const DashboardTiles::Pipeline *> &pipelines,
                   std::vector<DashboardTiles::Group> &groups) const;
    const Item *itemAt(const QPoint &pos) const;
    void paintPipeline(QPainter &p, const Item &item) const;
    QStringList linesOf(const DashboardTiles::Pipeline &pl) const;
    void paintHeader(QPainter &p, const Item &item) const;
    void paintTable(QPainter &p, const Item &item) const;
    QString toolTipFor(const Item &item) const;

    std::vector<const DashboardTiles::Pipeline *> m_pipelines;
    std::vector<DashboardTiles::Group> m_groups;
    QString m_selected;
    std::vector<Item> m_items;
    /// Each tile's unchanging part (its tinted shape, icons and name), drawn once: antialiased
    /// shapes and text cost more to draw than to copy, and a snapshot repaints every tile on
    /// screen (B12).
    mutable PixmapMemo m_memo;
    int m_laidOutWidth = -1;
    int m_shown = 0;
    /// The order on screen, by name: pipelines, then each group's title and its tiles'
    /// `pipeline/table` (the pointers of a call are not valid at the next).
    std::vector<QString> m_pipelineOrder;
    std::vector<std::pair<QString, std::vector<QString>>> m_groupOrder;
    bool m_pointerOver = false;
    bool m_held = false;
    /// The last content in its own order, laid out when the pointer leaves.
    std::vector<const DashboardTiles::Pipeline *> m_latestPipelines;
    std::vector<DashboardTiles::Group> m_latestGroups;
};

} // namespace driftless::ui
