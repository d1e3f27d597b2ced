#pragma once

#include "ui/enginesnapshot.h"

#include <QColor>
#include <QPointF>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

class QCategoryAxis;
class QChart;
class QChartView;
class QComboBox;
class QDateTimeAxis;
class QLabel;
class QLineSeries;
class QValueAxis;

namespace driftless::ui {

class EngineBridge;

class LegendStrip;

/// Apply lag per table over time (Qt Charts), with the freshness SLAs as dashed lines (one per
/// SLA value: in the table's colour when one table has it, grey when several share it), and a
/// window chooser: fit to the data there is (the default: a sync that started three minutes ago
/// shows three minutes, at most a day back), 15 min, 1 h, 24 h. The Lag page charts every
/// table with it; a table's detail charts that table alone (setOnly()).
///
/// Strategies: a full refresh or cursor table's lag is a sawtooth by design (it grows until the
/// next pass), often minutes high, and drawn beside CDC tables it flattens their seconds into the
/// axis. So when both kinds are there, the chart shows the CDC tables and a chooser offers the
/// others, or all (strategyCombo()).
///
/// History comes from the lag samples in the workspace file, read on a pool thread whenever the
/// workspace, its tables or the window change; long windows are thinned to
/// the worst lag per bucket, so a spike never disappears. Between reads the newest snapshot's
/// lags are appended, at most every kLiveIntervalMs, and points that leave the window are
/// dropped. The UI thread never reads the file. While hidden, the chart keeps only the newest
/// snapshot and draws nothing; shown again, it reads the history again.
///
/// With more than kMaxTables tables, only the kMaxTables furthest behind their SLA are charted
/// (a line per table is unreadable beyond that, and Qt Charts spends seconds of the UI thread on
/// thousands of series and legend entries); the choice is made again at most every
/// kReselectMs, and a line above the chart says so.
///
/// The lag axis fits the lines shown (an SLA far above them is left out, so a 2 h SLA does not
/// flatten lags of seconds), labelled in s, min, h or d; hovering a line shows its table, time
/// and lag; a click on a legend entry hides or shows that line (isHidden()).
class LagChart final : public QWidget {
    Q_OBJECT
public:
    explicit LagChart(QWidget *parent = nullptr);
    ~LagChart() override;

    static constexpr int kLiveIntervalMs = 500;
    /// Points per table a read keeps at most (one per pixel column is plenty).
    static constexpr int kMaxPoints = 720;
    /// Tables charted at most (the ones furthest behind their SLA).
    static constexpr int kMaxTables = 20;
    /// How often the charted tables are chosen again when there are more than kMaxTables.
    static constexpr std::int64_t kReselectMs = 30'000;
    /// windowMs() of "Fit to the data".
    static constexpr std::int64_t kFit = 0;
    /// How far back "Fit to the data" reads.
    static constexpr std::int64_t kFitReachMs = 24LL * 3600 * 1000;
    /// The narrowest span it draws (a first sample is not a dot on the axis).
    static constexpr std::int64_t kMinFitMs = 60'000;
    /// Which tables are charted, by strategy (strategyCombo()'s data).
    enum class Shown { Cdc, Passes, All };

    QChart *chart() const { return m_chart; }
    QChartView *chartView() const { return m_view; }
    /// The names and colours of the charted lines, under the chart.
    LegendStrip *legend() const { return m_legend; }
    QComboBox *windowCombo() const { return m_window; }
    /// The chosen window in ms, or kFit.
    std::int64_t windowMs() const;
    void setWindowMs(std::int64_t ms);
    /// The time range drawn now (ms since the epoch).
    std::pair<std::int64_t, std::int64_t> timeRange() const { return {m_fromMs, m_toMs}; }
    /// CDC tables, cursor and full refresh tables, or all; shown only when both kinds are there.
    QComboBox *strategyCombo() const { return m_strategy; }
    Shown shown() const;
    void setShown(Shown shown);
    /// The first line of one table (the one in the legend), or null when it is not charted.
    /// A table's lag is drawn as several lines when samples have gaps (the engine was not
    /// running): a line across a gap would suggest samples that do not exist.
    QLineSeries *lagSeries(const QString &pipeline, const QString &table) const;
    /// Whether the DBA hid the line named `name` (a table, or an SLA line) from the legend.
    bool isHidden(const QString &name) const { return m_hidden.count(name) > 0; }
    /// Hides or shows that line, as a click on its legend entry does.
    void setHidden(const QString &name, bool hidden);
    /// The lag axis' range top, in seconds.
    double lagAxisTop() const;
    /// Every point of one table's lag lines, in time order.
    QList<QPointF> lagPoints(const QString &pipeline, const QString &table) const;
    /// How many lines one table's lag is drawn with.
    int segmentCount(const QString &pipeline, const QString &table) const;
    QLineSeries *slaSeries(const QString &pipeline, const QString &table) const;
    /// True once the history of the current tables and window has been read.
    bool historyLoaded() const { return m_loaded; }
    /// Charts only `pipeline`/`table` (as the engine displays it); empty strings: every table.
    void setOnly(const QString &pipeline, const QString &table);
    /// The sentence above the chart.
    void setNote(const QString &note);

    /// Where the history comes from: GET /api/v1/lag through the door of the engine `engine`
    /// shows at the time (the app's own or an agent's); null: none, the chart fills from live
    /// snapshots only.
    void setEngine(EngineBridge *engine);

public slots:
    void setSnapshot(const driftless::ui::EngineSnapshot &snapshot);
    /// Reads the history again (F5).
    void reload();

signals:
    /// The history of the current tables and window is on screen.
    void historyReady();

private:
    using Key = std::pair<std::string, std::string>; // pipeline, table
    struct Line {
        /// Never empty; the first one carries the legend entry and is never removed.
        std::vector<QLineSeries *> segments;
        /// The dashed line of its SLA, shared with the tables of the same SLA.
        QLineSeries *sla = nullptr;
        double slaSeconds = 0;
        QString name;
    };
    using History = std::map<Key, std::vector<QPointF>>;

    /// The tables to chart: all of them, or the kMaxTables furthest behind their SLA.
    void showEvent(QShowEvent *event) override;
    /// setSnapshot() while shown; `catchUp`: the chart was hidden, so its history is read again.
    void applySnapshot(const EngineSnapshot &snapshot, bool catchUp);
    static std::vector<core::TableReport> choose(const std::vector<core::TableReport> &tables);
    void rebuildSeries(const std::vector<core::TableReport> &tables, std::size_t total);
    /// One dashed SLA line per SLA value among the charted tables.
    void rebuildSlaLines();
    void updateLegend();
    /// The colour of the i-th charted table's line.
    QColor lineColour(std::size_t i) const;
    void startRead();
    void onReadDone(std::uint64_t generation, History history, std::int64_t nowMs);
    void applyLive();
    void updateAxes(std::int64_t nowMs);
    QLineSeries *addSegment(Line &line);
    /// Drops a line's later segments and empties the first (which keeps the legend entry).
    void emptyLine(Line &line);
    static QString slaName(const Line &line);
    void appendPoint(Line &line, const QPointF &point);
    /// Samples further apart than this are not joined by a line.
    std::int64_t gapMs() const;
    /// How far back the history is read: the window, or kFitReachMs.
    std::int64_t reachMs() const;
    /// Whether the strategy chooser lets through the CDC tables (true) or the others (false);
    /// nullopt when it lets all through (one kind only, "All tables", or setOnly()). Shows or
    /// hides the chooser.
    std::optional<bool> cdcShown(const std::vector<core::TableReport> &tables);

    QPointer<EngineBridge> m_engine;
    std::optional<Key> m_only;
    QComboBox *m_window;
    QComboBox *m_strategy;
    /// The DBA picked a strategy: the chart stops choosing for them.
    bool m_strategyChosen = false;
    /// The newest snapshot applied while the strategy chooser is offered, for a change of it.
    std::optional<EngineSnapshot> m_last;
    std::int64_t m_fromMs = 0;
    std::int64_t m_toMs = 0;
    QLabel *m_note;
    QLabel *m_empty;
    QLabel *m_capped;
    QChart *m_chart;
    QChartView *m_view;
    LegendStrip *m_legend;
    QDateTimeAxis *m_x;
    /// Seconds, labelled in the unit that reads best (chartstyle: setDurationRange).
    QCategoryAxis *m_y;
    /// Lines the DBA hid with a click on the legend (their names).
    std::set<QString> m_hidden;
    std::map<Key, Line> m_lines;
    /// SLA seconds -> its dashed line.
    std::map<double, QLineSeries *> m_slaLines;
    /// Every table of the newest snapshot, charted or not.
    std::set<Key> m_all;
    std::int64_t m_chosenAtMs = 0;
    QString m_path;
    std::uint64_t m_generation = 0;
    bool m_loaded = false;
    std::optional<EngineSnapshot> m_pending;
    /// The newest snapshot that came while the chart was hidden.
    std::optional<EngineSnapshot> m_deferred;
    QTimer m_live;
};

} // namespace driftless::ui
