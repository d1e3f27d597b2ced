#pragma once

#include <QMessageBox>
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QLabel;
class QMenu;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace driftless::ui {

struct EngineSnapshot;
class EngineBridge;
class SlotHistoryChart;
class SlotMonitor;
class SlotsModel;
struct SlotSample;

/// Every replication slot on the workspace's Postgres sources, with what it costs (retained
/// WAL, safe_wal_size) and whose it is. Read again every kRefreshMs while the page is shown
/// (and on F5, through SlotMonitor::refresh()); never on the UI thread.
///
/// "Drop slot…" drops the selected inactive slot after a confirmation that shows the exact SQL;
/// the statement runs on a worker (SlotMonitor::dropSlot()). Active slots cannot be dropped:
/// the button is disabled and its tooltip says why.
///
/// Under the grid (a splitter), the selected slot over time with where it is heading
/// (SlotHistoryChart), read through the engine's door again with each reading of the slots.
///
/// Above the grid, each CDC pipeline's source as its checkpoints record it (system id and
/// timeline, or server_id and GTID state: what failover checks at every start, docs/failover.md),
/// from the engine's snapshots, so it says what `status --json` says under `source_identity`; a
/// pipeline stopped by a change of source says so, with `driftless-cli recover`, and "Recover…"
/// beside it asks to recover it (recoverRequested; a menu of them when several changed).
class SlotsPage final : public QWidget {
    Q_OBJECT
public:
    SlotsPage(SlotsModel *model, SlotMonitor *monitor, QWidget *parent = nullptr);

    static constexpr int kRefreshMs = 15'000;

    QTableView *view() const { return m_view; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QPushButton *dropButton() const { return m_drop; }
    /// Shown while some pipeline's source changed.
    QPushButton *recoverButton() const { return m_recover; }
    SlotHistoryChart *historyChart() const { return m_chart; }
    /// Where the slot history comes from: the door of the engine `engine` shows.
    void setEngine(EngineBridge *engine);
    /// The drop confirmation while it is open, else null.
    QMessageBox *confirmation() const { return m_confirmation; }
    /// The model row of the selected slot, or -1.
    int selectedRow() const;
    void selectSlot(const QString &source, const QString &slot);
    /// The pipelines' sources from the snapshot's tables (the identity line above the grid).
    void setSnapshot(const EngineSnapshot &snapshot);
    /// The lines of the identity label as plain text, one per pipeline (for tests and a copy).
    QStringList sourceLines() const { return m_sourceLines; }

    /// At most this many pipelines are listed; the rest are counted.
    static constexpr int kSourceLines = 6;

public slots:
    /// Asks to drop the selected slot (the button's action).
    void requestDrop();

signals:
    /// Recover… for `pipeline`, whose source changed.
    void recoverRequested(const QString &pipeline);

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void showSample(const SlotSample &sample);
    void showDropResult(const QString &source, const QString &slot, const QString &error);
    void updateButtons();
    void fitColumns();
    /// Shows the selected slot (or none) in the history chart, reading its history again.
    void updateChart();

    SlotsModel *m_model;
    SlotMonitor *m_monitor;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    SlotHistoryChart *m_chart;
    QLabel *m_summary;
    QLabel *m_notice;
    QLabel *m_sources;
    QStringList m_sourceLines;
    QLabel *m_result;
    QPushButton *m_drop;
    QPushButton *m_recover;
    QMenu *m_recoverMenu;
    /// The pipelines whose source changed, by name.
    QStringList m_changed;
    QPointer<QMessageBox> m_confirmation;
    QTimer m_timer;
    bool m_dropping = false;
};

} // namespace driftless::ui
