#pragma once

#include "core/engine/slots/slots.h"
#include "core/model/workspace.h"

#include <QList>
#include <QPointF>
#include <QPointer>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <optional>
#include <vector>

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

/// One replication slot over time (Qt Charts): the WAL it retains, its `safe_wal_size` where the
/// server has a limit (max_slot_wal_keep_size), and its source's slot guard as two dashed lines
/// (`warn_retained`, `max_retained`). Above the chart, where the slot is heading at its recent
/// rate, from the slot's `seconds_to_limit` (core/engine/slotprojection.h).
///
/// History comes from the engine's slot samples (every 15 s, wherever it runs) through the door
/// of the engine shown: GET /api/v1/slot-history. Each read is a job with an id; a reply for an
/// older job (another slot, another window) is dropped. The Slots page asks for a read when the
/// selection changes and with each reading of the slots (every 15 s while shown), so reads are
/// throttled by that; the UI thread never reads the file. While hidden, nothing is read; shown
/// again, the chart reads once.
///
/// The default window fits the data there is (a slot sampled for three minutes shows three
/// minutes); 15 min, 1 h, 24 h and 7 d are the fixed choices. Byte values are drawn in one
/// 1024-based unit (unitBytes()) so the axis reads "MB", not digits.
///
/// The pointer over a line says the nearest sample: its time, the WAL retained and
/// safe_wal_size (hoverText()). A click on a legend entry hides or shows that line, and the
/// value axis fits the lines still shown: a server limit of gigabytes no longer flattens a
/// slot's megabytes to the floor.
class SlotHistoryChart final : public QWidget {
    Q_OBJECT
public:
    explicit SlotHistoryChart(QWidget *parent = nullptr);
    ~SlotHistoryChart() override;

    /// Points a read keeps at most per line (one per pixel column is plenty).
    static constexpr int kMaxPoints = 720;
    /// The window choice that fits the data (windowMs() 0).
    static constexpr std::int64_t kFit = 0;
    /// The longest a fitted window reaches back (what the engine keeps, thinned).
    static constexpr std::int64_t kFitReachMs = 7LL * 24 * 3600 * 1000;
    /// A fitted window is never narrower than this, so two samples do not fill the width.
    static constexpr std::int64_t kMinFitMs = 60'000;

    void setEngine(EngineBridge *engine);
    /// Charts `slot` of the endpoint it was read through, with `guard` (the source's, if any).
    /// The same slot again (a new reading) reads its history again; another one starts afresh.
    void setSlot(const core::SlotReport &slot, const std::optional<core::SlotGuard> &guard);
    /// No slot selected: an empty chart and a sentence saying to select one.
    void clearSlot();
    /// Reads the history again.
    void reload();

    std::int64_t windowMs() const;
    void setWindowMs(std::int64_t ms);
    QComboBox *windowCombo() const { return m_window; }
    QChart *chart() const { return m_chart; }
    QChartView *chartView() const { return m_view; }
    LegendStrip *legend() const { return m_legend; }
    QLabel *projectionLabel() const { return m_projection; }
    QLineSeries *retainedSeries() const { return m_retained; }
    QLineSeries *safeWalSeries() const { return m_safeWal; }
    /// How many lines the retained WAL is drawn with: one more per gap in the samples (the
    /// engine was not running), which no line crosses.
    int retainedSegments() const { return 1 + static_cast<int>(m_retainedMore.size()); }
    /// The dashed guard lines; empty (no points) without a guard.
    QLineSeries *warnLine() const { return m_warn; }
    QLineSeries *maxLine() const { return m_max; }
    /// The bytes one unit of the value axis stands for (1024, 1024², ...).
    double unitBytes() const { return m_unit; }
    /// The time range shown, ms since the epoch.
    std::int64_t shownFromMs() const { return m_fromMs; }
    std::int64_t shownToMs() const { return m_toMs; }
    bool historyLoaded() const { return m_loaded; }

    /// The chart's lines, as the legend lists them (a line without points has no entry).
    enum class Line { Retained, SafeWal, Warn, Max };
    /// A click on its legend entry hid the line; it stays hidden for other slots and windows.
    bool isHidden(Line line) const;
    void setHidden(Line line, bool hidden);
    /// What the pointer at `x` (ms since the epoch) over the chart is told: the nearest shown
    /// sample's time and values. Empty when no sample is shown.
    QString hoverText(qreal x) const;

    /// The line above the chart: "At this rate: limit in 3 h 10 min", "At its limit now",
    /// "Not growing…" or "No limit set…".
    static QString projectionText(const core::SlotReport &slot, const std::optional<core::SlotGuard> &guard);

signals:
    /// The history of the current slot and window is on screen.
    void historyReady();

protected:
    void showEvent(QShowEvent *event) override;

private:
    /// Draws `points` with `first` and as many more lines of its pen as gaps longer than `gapMs`
    /// split them into.
    void drawSplit(QLineSeries *first, std::vector<QLineSeries *> &more, const QList<QPointF> &points, double gapMs);
    struct Sample {
        std::int64_t tsMs = 0;
        std::optional<std::int64_t> retained;
        std::optional<std::int64_t> safeWal;
    };
    void startRead();
    void onReadDone(std::uint64_t job, std::vector<Sample> samples, std::int64_t nowMs);
    void redraw();
    /// The value axis' ticks, title and labels for the plot's height now.
    void fitValueAxis();
    void updateProjection();
    /// Makes each segment of the retained and safe_wal_size lines say its value under the pointer.
    void watchHover(QLineSeries *series);

    QPointer<EngineBridge> m_engine;
    std::optional<core::SlotReport> m_slot;
    std::optional<core::SlotGuard> m_guard;
    QComboBox *m_window;
    QLabel *m_title;
    QLabel *m_projection;
    QLabel *m_empty;
    QChart *m_chart;
    QChartView *m_view;
    LegendStrip *m_legend;
    QDateTimeAxis *m_x;
    QValueAxis *m_y;
    QLineSeries *m_retained;
    QLineSeries *m_safeWal;
    /// The lines after the first, one per gap.
    std::vector<QLineSeries *> m_retainedMore;
    std::vector<QLineSeries *> m_safeWalMore;
    QLineSeries *m_warn;
    QLineSeries *m_max;
    std::vector<Sample> m_samples;
    /// The legend's entries in order, as lines (for a click on one).
    std::vector<Line> m_entryLines;
    std::vector<Line> m_hidden;
    std::int64_t m_nowMs = 0;
    std::int64_t m_fromMs = 0;
    std::int64_t m_toMs = 0;
    double m_unit = 1024.0 * 1024.0;
    std::uint64_t m_job = 0;
    bool m_loaded = false;
    /// The value axis' top (in m_unit) and the plot height it was last fitted to.
    double m_yTop = 0;
    double m_fittedPlotHeight = -1;
    bool m_stale = false; ///< a read was asked for while hidden
};

} // namespace driftless::ui
