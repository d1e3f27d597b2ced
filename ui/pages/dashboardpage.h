#pragma once

#include "ui/enginesnapshot.h"
#include "ui/models/dashboardtiles.h"
#include "ui/slotsample.h"

#include <QWidget>

#include <cstddef>
#include <cstdint>

class QComboBox;
class QLabel;
class QPushButton;
class QLineEdit;
class QScrollArea;

namespace driftless::ui {

class DashboardGrid;

/// The app's first page: a tile per pipeline (its worst freshness, tables by freshness, rows/s,
/// its slots' soonest time to limit, its last reconciliation's drift) and a tile per table in
/// groups (by pipeline, strategy or schema), each tinted as its freshness badge, with a lag
/// sparkline and rows/s. The worst come first (or by name); a filter box narrows the tables.
/// A click on a table tile asks for its detail (tableActivated); a click on a pipeline tile
/// shows only its tables, a second click all again; its context menu pauses or resumes the
/// pipeline (pausePipelineRequested).
///
/// Reads snapshots and slot samples only (DashboardTiles keeps the sparklines' rings). Hidden,
/// it keeps its rings up to date and lays the tiles out when shown again.
class DashboardPage final : public QWidget {
    Q_OBJECT
public:
    explicit DashboardPage(QWidget *parent = nullptr);

    DashboardGrid *grid() const { return m_grid; }
    QScrollArea *scrollArea() const { return m_scroll; }
    QLineEdit *filterEdit() const { return m_filter; }
    QComboBox *groupCombo() const { return m_group; }
    QComboBox *orderCombo() const { return m_order; }
    QLabel *summaryLabel() const { return m_summary; }
    /// The text shown instead of the tiles while the workspace has no tables.
    QLabel *emptyLabel() const { return m_empty; }
    /// Shown with it: the first steps as buttons (welcomeAddEndpoint, welcomeImportYaml,
    /// welcomeConnectAgent, welcomeDocs).
    QWidget *welcomeButtons() const { return m_welcome; }
    const DashboardTiles &tiles() const { return m_tiles; }
    /// setSnapshot() in steps of at most `newTiles` new tiles (see DashboardTiles): false while
    /// some remain, the page showing the previous snapshot until the last step.
    bool setSnapshot(const driftless::ui::EngineSnapshot &snapshot, std::size_t newTiles);

public slots:
    void setSnapshot(const driftless::ui::EngineSnapshot &snapshot);
    void setSlotSample(const driftless::ui::SlotSample &sample);
    /// Shows only `pipeline`'s tables; empty: every pipeline's.
    void showPipeline(const QString &pipeline);

signals:
    /// A table tile was clicked: open that table's detail.
    void tableActivated(const QString &pipeline, const QString &table);
    /// Recover… on the tile of a pipeline whose source changed.
    void recoverRequested(const QString &pipeline);
    /// Pause Pipeline… (`pause`) or Resume Pipeline… on a pipeline tile's context menu.
    void pausePipelineRequested(const QString &pipeline, bool pause);
    /// A first step's button was clicked.
    void addEndpointRequested();
    void importYamlRequested();
    void connectAgentRequested();
    void docsRequested();

protected:
    void showEvent(QShowEvent *event) override;

private:
    /// Lays the tiles out again, now when shown, else when next shown.
    void rebuild();
    void updateSummary();

    DashboardTiles m_tiles;
    QLineEdit *m_filter;
    QComboBox *m_group;
    QComboBox *m_order;
    QLabel *m_summary;
    QWidget *m_emptyPage;
    QLabel *m_empty;
    QWidget *m_welcome;
    QScrollArea *m_scroll;
    DashboardGrid *m_grid;
    QString m_error;
    bool m_noWorkspaceYet = false;
    bool m_stale = false;
};

} // namespace driftless::ui
