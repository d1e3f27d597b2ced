#pragma once

#include "ui/enginesnapshot.h"

#include <QDialog>
#include <QElapsedTimer>
#include <QMessageBox>
#include <QPointer>

#include <cstdint>
#include <memory>
#include <optional>

class QFormLayout;
class QLabel;
class QPushButton;
class QTableView;

namespace driftless::ui {

class EngineBridge;
class EventsModel;
class LagChart;
class PauseRunner;

/// One table at a glance: the facts a DBA looks for (strategy, state, freshness, lag, rows
/// applied, last sync, checkpoint position, target, cursor column and lookback), its own apply
/// lag chart (a LagChart of this table alone, 15 min / 1 h / 24 h, its SLA dashed), its recent
/// events newest first, and Pause / Resume.
///
/// Non-modal; follows the engine's snapshots (facts and chart) live. The events are the state
/// store's events of this table, read on a pool thread when it opens and then at most every
/// kEventsRefreshMs while snapshots arrive: a busy table's events are not crowded out by the
/// window's newest 200. Nothing here waits on a database.
class TableDetailDialog final : public QDialog {
    Q_OBJECT
public:
    TableDetailDialog(EngineBridge *engine, PauseRunner *pauser, const QString &pipeline, const QString &table,
                      QWidget *parent = nullptr);
    ~TableDetailDialog() override;

    static constexpr int kEventsRefreshMs = 2000;
    static constexpr int kEventLimit = 100;

    QString pipeline() const { return m_pipeline; }
    QString table() const { return m_table; }
    LagChart *lagChart() const { return m_chart; }
    EventsModel *eventsModel() const { return m_events; }
    QTableView *eventsView() const { return m_eventsView; }
    QPushButton *pauseButton() const { return m_pause; }
    QPushButton *resumeButton() const { return m_resume; }
    /// The value label of one fact, by its object name suffix: strategy, state, freshness, lag,
    /// rows, lastSync, checkpoint, target, cursor, paused, message, and the table's mapping:
    /// columns (left out, renamed, masked: the mask's kind, never its key), filter, deletes.
    QLabel *fact(const QString &name) const;
    /// True once the table's events were read at least once.
    bool eventsLoaded() const { return m_eventsLoaded; }
    /// The pause or resume confirmation while it is open, else null.
    QMessageBox *confirmation() const { return m_confirmation; }
    /// The table's report in the newest snapshot; empty when the snapshot has no such table.
    const std::optional<core::TableReport> &report() const { return m_report; }

public slots:
    void setSnapshot(const driftless::ui::EngineSnapshot &snapshot);
    void requestPause();
    void requestResume();

signals:
    /// The events were read (again) and are on screen.
    void eventsReady();

protected:
    /// Remembers the size the DBA gave the window.
    void done(int result) override;

private:
    void showReport();
    void readEvents();
    QLabel *addFact(QFormLayout *form, const QString &name, const QString &label);

    EngineBridge *m_engine;
    PauseRunner *m_pauser;
    QString m_pipeline;
    QString m_table;
    std::optional<core::TableReport> m_report;
    std::shared_ptr<const core::Workspace> m_workspace;
    QLabel *m_title;
    QLabel *m_stateIcon;
    QLabel *m_freshnessIcon;
    LagChart *m_chart;
    EventsModel *m_events;
    QTableView *m_eventsView;
    QPushButton *m_pause;
    QPushButton *m_resume;
    QPointer<QMessageBox> m_confirmation;
    QString m_path;
    std::uint64_t m_eventsGeneration = 0;
    bool m_eventsInFlight = false;
    bool m_eventsLoaded = false;
    QElapsedTimer m_sinceEventsRead;
};

} // namespace driftless::ui
