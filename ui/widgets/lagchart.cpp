#include "ui/widgets/lagchart.h"
#include "ui/enginebridge.h"
#include "ui/enginedoor.h"

#include "ui/displayformat.h"
#include "ui/widgets/chartstyle.h"
#include "ui/widgets/legendstrip.h"

#include "core/base/clock.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QCursor>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QPalette>
#include <QSignalBlocker>
#include <QToolTip>
#include <QUrl>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace driftless::ui {

namespace {

constexpr std::int64_t kMinute = 60'000;

/// Keeps the worst lag of each of `buckets` equal slices of the window, in time order.
std::vector<QPointF> thin(const std::vector<core::LagSample> &samples, std::int64_t fromMs, std::int64_t toMs,
                          int buckets)
{
    std::vector<QPointF> out;
    if (static_cast<int>(samples.size()) <= buckets) {
        for (const auto &s : samples)
            out.emplace_back(static_cast<qreal>(s.tsMs), s.lagSeconds);
        return out;
    }
    const double width = std::max<double>(1.0, static_cast<double>(toMs - fromMs) / buckets);
    long long bucket = -1;
    for (const auto &s : samples) {
        const auto b = static_cast<long long>(static_cast<double>(s.tsMs - fromMs) / width);
        if (b != bucket || out.empty()) {
            out.emplace_back(static_cast<qreal>(s.tsMs), s.lagSeconds);
            bucket = b;
        } else if (s.lagSeconds > out.back().y()) {
            out.back() = QPointF(static_cast<qreal>(s.tsMs), s.lagSeconds);
        }
    }
    return out;
}

QString seriesName(const core::TableReport &t, bool onePipeline)
{
    return onePipeline ? QString::fromStdString(t.table) : QString::fromStdString(t.pipeline + "/" + t.table);
}

} // namespace

LagChart::LagChart(QWidget *parent)
    : QWidget(parent), m_window(new QComboBox(this)), m_strategy(new QComboBox(this)), m_note(new QLabel(this)),
      m_empty(new QLabel(this)), m_capped(new QLabel(this)), m_chart(new QChart), m_view(new QChartView(m_chart, this)),
      m_legend(new LegendStrip(this)), m_x(new QDateTimeAxis(m_chart)), m_y(new QCategoryAxis(m_chart))
{
    setObjectName(QStringLiteral("lagChartWidget"));
    m_window->setObjectName(QStringLiteral("lagWindow"));
    m_window->addItem(tr("Fit to the data"), static_cast<qlonglong>(kFit));
    m_window->addItem(tr("Last 15 minutes"), static_cast<qlonglong>(15 * kMinute));
    m_window->addItem(tr("Last hour"), static_cast<qlonglong>(60 * kMinute));
    m_window->addItem(tr("Last 24 hours"), static_cast<qlonglong>(24 * 60 * kMinute));
    m_window->setToolTip(tr("Fit to the data: from the first lag sample (at most a day back) until now"));
    m_window->setCurrentIndex(0);
    connect(m_legend, &LegendStrip::toggled, this,
            [this](int, const QString &name) { setHidden(name, !isHidden(name)); });
    connect(m_window, &QComboBox::currentIndexChanged, this, &LagChart::reload);
    m_strategy->setObjectName(QStringLiteral("lagStrategy"));
    m_strategy->addItem(tr("CDC tables"), static_cast<int>(Shown::Cdc));
    m_strategy->addItem(tr("Cursor and full refresh tables"), static_cast<int>(Shown::Passes));
    m_strategy->addItem(tr("All tables"), static_cast<int>(Shown::All));
    m_strategy->setToolTip(tr("A cursor or full refresh table's lag grows until its next pass (a sawtooth by "
                              "design); charted apart, CDC lags of seconds stay readable"));
    m_strategy->setVisible(false);
    connect(m_strategy, &QComboBox::activated, this, [this] { m_strategyChosen = true; });
    connect(m_strategy, &QComboBox::currentIndexChanged, this, [this] {
        m_path.clear(); // the next snapshot rebuilds the lines
        if (m_last && isVisible()) {
            const EngineSnapshot last = *m_last; // applySnapshot() replaces m_last
            applySnapshot(last, false);
        }
    });

    m_note->setObjectName(QStringLiteral("lagNote"));
    m_note->setText(tr("Apply lag per table: how far the target is behind the source. "
                       "Dashed lines: the freshness SLAs (grey when several tables share one)."));
    m_note->setWordWrap(true);
    m_empty->setObjectName(QStringLiteral("lagEmpty"));
    m_empty->setWordWrap(true);
    m_empty->setText(tr("No lag samples in this window yet: lag is sampled every 5 s while a sync runs."));
    m_empty->setVisible(false);
    m_capped->setObjectName(QStringLiteral("lagCapped"));
    m_capped->setWordWrap(true);
    m_capped->setVisible(false);

    styleChart(m_chart, palette());
    m_legend->setObjectName(QStringLiteral("lagLegend"));
    m_x->setTitleText(tr("Time"));
    m_y->setTitleText(tr("Lag"));
    m_y->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_y->setMin(0);
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    m_view->setObjectName(QStringLiteral("lagChart"));
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumHeight(160);

    auto *top = new QHBoxLayout;
    top->addWidget(m_note, 1);
    top->addWidget(m_strategy);
    top->addWidget(m_window);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_capped);
    layout->addWidget(m_empty);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_legend);

    m_live.setInterval(kLiveIntervalMs);
    connect(&m_live, &QTimer::timeout, this, &LagChart::applyLive);
    m_live.start();
    updateAxes(core::wallClockMs());
}

LagChart::~LagChart() = default;

std::int64_t LagChart::windowMs() const
{
    return m_window->currentData().toLongLong();
}

LagChart::Shown LagChart::shown() const
{
    return static_cast<Shown>(m_strategy->currentData().toInt());
}

void LagChart::setShown(Shown shown)
{
    m_strategyChosen = true;
    m_strategy->setCurrentIndex(m_strategy->findData(static_cast<int>(shown)));
}

std::int64_t LagChart::reachMs() const
{
    return windowMs() == kFit ? kFitReachMs : windowMs();
}

std::optional<bool> LagChart::cdcShown(const std::vector<core::TableReport> &tables)
{
    bool cdc = false, passes = false;
    for (const auto &t : tables)
        (t.strategy == core::Strategy::Cdc ? cdc : passes) = true;
    const bool both = cdc && passes && !m_only;
    m_strategy->setVisible(both);
    if (!both)
        return std::nullopt;
    if (!m_strategyChosen && shown() != Shown::Cdc) {
        const QSignalBlocker quiet(m_strategy); // the caller is applying this snapshot already
        m_strategy->setCurrentIndex(m_strategy->findData(static_cast<int>(Shown::Cdc)));
        m_path.clear();
    }
    if (shown() == Shown::All)
        return std::nullopt;
    return shown() == Shown::Cdc;
}

void LagChart::setWindowMs(std::int64_t ms)
{
    const int i = m_window->findData(static_cast<qlonglong>(ms));
    if (i >= 0)
        m_window->setCurrentIndex(i);
}

QLineSeries *LagChart::lagSeries(const QString &pipeline, const QString &table) const
{
    auto it = m_lines.find({pipeline.toStdString(), table.toStdString()});
    return it == m_lines.end() ? nullptr : it->second.segments.front();
}

QList<QPointF> LagChart::lagPoints(const QString &pipeline, const QString &table) const
{
    QList<QPointF> out;
    auto it = m_lines.find({pipeline.toStdString(), table.toStdString()});
    if (it != m_lines.end())
        for (const QLineSeries *segment : it->second.segments)
            out += segment->points();
    return out;
}

int LagChart::segmentCount(const QString &pipeline, const QString &table) const
{
    auto it = m_lines.find({pipeline.toStdString(), table.toStdString()});
    return it == m_lines.end() ? 0 : static_cast<int>(it->second.segments.size());
}

std::int64_t LagChart::gapMs() const
{
    // Samples come every 5 s while a sync runs; a day is thinned to kMaxPoints buckets.
    return std::max<std::int64_t>(5 * kMinute, 3 * reachMs() / kMaxPoints);
}

QLineSeries *LagChart::addSegment(Line &line)
{
    auto *series = new QLineSeries(m_chart);
    series->setName(line.name);
    m_chart->addSeries(series);
    series->attachAxis(m_x);
    series->attachAxis(m_y);
    if (line.segments.empty()) {
        QPen pen = series->pen();
        pen.setWidthF(2.0);
        series->setPen(pen);
    } else {
        series->setPen(line.segments.front()->pen());
    }
    series->setVisible(!isHidden(line.name));
    // The value under the pointer: which table, when, how far behind.
    connect(series, &QLineSeries::hovered, this, [this, name = line.name](const QPointF &point, bool state) {
        if (!state) {
            QToolTip::hideText();
            return;
        }
        QToolTip::showText(
            QCursor::pos(),
            tr("%1\n%2: %3 behind")
                .arg(
                    name,
                    QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(point.x())).toString(QStringLiteral("HH:mm:ss")),
                    formatLag(point.y())),
            m_view);
    });
    line.segments.push_back(series);
    return series;
}

void LagChart::emptyLine(Line &line)
{
    while (line.segments.size() > 1) {
        m_chart->removeSeries(line.segments.back());
        delete line.segments.back();
        line.segments.pop_back();
    }
    line.segments.front()->clear();
}

QString LagChart::slaName(const Line &line)
{
    return tr("%1 SLA (%2)").arg(line.name, formatDuration(line.slaSeconds));
}

void LagChart::appendPoint(Line &line, const QPointF &point)
{
    QLineSeries *last = line.segments.back();
    if (last->count() > 0 && point.x() - last->at(last->count() - 1).x() > static_cast<qreal>(gapMs()))
        last = addSegment(line);
    last->append(point);
}

QLineSeries *LagChart::slaSeries(const QString &pipeline, const QString &table) const
{
    auto it = m_lines.find({pipeline.toStdString(), table.toStdString()});
    return it == m_lines.end() ? nullptr : it->second.sla;
}

void LagChart::setOnly(const QString &pipeline, const QString &table)
{
    if (pipeline.isEmpty() && table.isEmpty())
        m_only.reset();
    else
        m_only = Key{pipeline.toStdString(), table.toStdString()};
    m_path.clear(); // the next snapshot rebuilds the lines
}

void LagChart::setNote(const QString &note)
{
    m_note->setText(note);
}

void LagChart::setSnapshot(const EngineSnapshot &full)
{
    // Hidden (another page is current, a detail not open yet), the chart only keeps the newest
    // snapshot: Qt Charts re-renders its scene on every change, shown or not, and with live
    // snapshots twice a second that was the UI thread's largest cost while a DBA looked at other
    // pages (B12). Shown again, it reads the history again (off the UI thread) and goes on live.
    if (!isVisible()) {
        m_deferred = full;
        return;
    }
    applySnapshot(full, false);
}

void LagChart::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (!m_deferred)
        return;
    // After the first paint, not inside it: the page shows at once, and the catch-up (choosing
    // the tables, reading the history) is a turn of the event loop of its own.
    QTimer::singleShot(0, this, [this] {
        if (!m_deferred || !isVisible())
            return;
        const EngineSnapshot snapshot = std::move(*m_deferred);
        m_deferred.reset();
        applySnapshot(snapshot, true);
    });
}

void LagChart::applySnapshot(const EngineSnapshot &full, bool catchUp)
{
    // Charted tables only: with setOnly(), the one table; else those of the strategies shown.
    // Copied only when some are left out.
    const EngineSnapshot *shown = &full;
    EngineSnapshot filtered;
    const auto keep = [&](const auto &pass) {
        filtered.generation = full.generation;
        filtered.statePath = full.statePath;
        filtered.takenAtMs = full.takenAtMs;
        filtered.live = full.live;
        for (const auto &t : full.tables)
            if (pass(t))
                filtered.tables.push_back(t);
        shown = &filtered;
    };
    if (m_only)
        keep([this](const core::TableReport &t) { return t.pipeline == m_only->first && t.table == m_only->second; });
    else if (const auto cdc = cdcShown(full.tables))
        keep([cdc](const core::TableReport &t) { return (t.strategy == core::Strategy::Cdc) == *cdc; });
    // Kept for a change of the strategy chooser, which is only offered with both kinds there.
    if (m_strategy->isHidden())
        m_last.reset();
    else
        m_last = full;
    const EngineSnapshot &snapshot = *shown;
    std::set<Key> all;
    for (const auto &t : snapshot.tables)
        all.insert({t.pipeline, t.table});
    bool slaChanged = false;
    for (const auto &t : snapshot.tables)
        if (auto it = m_lines.find({t.pipeline, t.table}); it != m_lines.end() && it->second.slaSeconds != t.slaSeconds)
            slaChanged = true;
    const bool changed = snapshot.statePath != m_path || all != m_all || slaChanged;
    const bool reselect =
        all.size() > static_cast<std::size_t>(kMaxTables) && snapshot.takenAtMs - m_chosenAtMs >= kReselectMs;
    if (changed || reselect) {
        const std::vector<core::TableReport> chosen = choose(snapshot.tables);
        std::set<Key> chosenKeys;
        for (const auto &t : chosen)
            chosenKeys.insert({t.pipeline, t.table});
        std::set<Key> charted;
        for (const auto &[key, line] : m_lines)
            charted.insert(key);
        m_chosenAtMs = snapshot.takenAtMs;
        if (changed || chosenKeys != charted) {
            m_path = snapshot.statePath;
            m_all = std::move(all);
            m_pending.reset();
            rebuildSeries(chosen, snapshot.tables.size());
            reload();
            return;
        }
    }
    if (catchUp) {
        // What happened while hidden is in the lag samples: read them rather than draw a jump.
        reload();
        return;
    }
    // Applied by the live timer, so at most one update per interval however often they come.
    m_pending = snapshot;
}

std::vector<core::TableReport> LagChart::choose(const std::vector<core::TableReport> &tables)
{
    if (tables.size() <= static_cast<std::size_t>(kMaxTables))
        return tables;
    // How far behind its SLA a table is; tables without a lag yet come last.
    auto behind = [](const core::TableReport &t) {
        if (!t.lagSeconds)
            return -1.0;
        return t.slaSeconds > 0 ? *t.lagSeconds / t.slaSeconds : *t.lagSeconds;
    };
    std::vector<const core::TableReport *> order;
    order.reserve(tables.size());
    for (const auto &t : tables)
        order.push_back(&t);
    std::partial_sort(order.begin(), order.begin() + kMaxTables, order.end(),
                      [&](const core::TableReport *a, const core::TableReport *b) {
                          const double x = behind(*a), y = behind(*b);
                          if (x != y)
                              return x > y;
                          return std::tie(a->pipeline, a->table) < std::tie(b->pipeline, b->table);
                      });
    order.resize(kMaxTables);
    std::sort(order.begin(), order.end(), [](const core::TableReport *a, const core::TableReport *b) {
        return std::tie(a->pipeline, a->table) < std::tie(b->pipeline, b->table);
    });
    std::vector<core::TableReport> out;
    out.reserve(order.size());
    for (const auto *t : order)
        out.push_back(*t);
    return out;
}

void LagChart::rebuildSeries(const std::vector<core::TableReport> &tables, std::size_t total)
{
    m_capped->setVisible(total > tables.size());
    if (total > tables.size())
        m_capped->setText(tr("Charting the %1 tables furthest behind their freshness SLA, of %2 (chosen again "
                             "every %3 s). A table's detail (double-click it on the Tables page) charts it alone.")
                              .arg(tables.size())
                              .arg(total)
                              .arg(kReselectMs / 1000));
    std::set<std::string> pipelines;
    for (const auto &t : tables)
        pipelines.insert(t.pipeline);
    if (!tables.empty() && tables.size() == m_lines.size()) {
        // As many lines as before (the furthest-behind tables chosen again): the series are
        // renamed and emptied rather than replaced. Replacing them makes Qt Charts tear down and
        // build again every line's items and legend entry, the largest part of showing the Lag
        // page again (B12). Each line keeps its colour.
        std::vector<Line> old;
        for (auto &[key, line] : m_lines)
            old.push_back(std::move(line));
        m_lines.clear();
        for (std::size_t i = 0; i < tables.size(); ++i) {
            const auto &t = tables[i];
            Line line = std::move(old[i]);
            emptyLine(line);
            line.slaSeconds = t.slaSeconds;
            line.name = seriesName(t, pipelines.size() == 1);
            line.segments.front()->setName(line.name);
            m_lines.emplace(Key{t.pipeline, t.table}, std::move(line));
        }
        rebuildSlaLines();
        m_loaded = false;
        return;
    }
    m_chart->removeAllSeries();
    m_lines.clear();
    m_slaLines.clear(); // removeAllSeries() deleted them
    std::size_t index = 0;
    for (const auto &t : tables) {
        Line line;
        line.slaSeconds = t.slaSeconds;
        line.name = seriesName(t, pipelines.size() == 1);
        addSegment(line);
        QPen pen = line.segments.front()->pen();
        pen.setColor(lineColour(index++));
        line.segments.front()->setPen(pen);
        m_lines.emplace(Key{t.pipeline, t.table}, line);
    }
    rebuildSlaLines();
    m_loaded = false;
}

void LagChart::rebuildSlaLines()
{
    // One dashed line per SLA value, not per table: tables sharing an SLA would draw the same
    // line on top of each other, and every series costs Qt Charts items and layout (the first
    // show of the Lag page, B12). A line of one table takes that table's colour; a line shared
    // by several is grey and its name says how many.
    std::map<double, std::vector<Line *>> byValue;
    for (auto &[key, line] : m_lines)
        byValue[line.slaSeconds].push_back(&line);
    std::map<double, QColor> colours;
    for (const auto &[value, lines] : byValue)
        colours[value] = lines.size() == 1 ? lines.front()->segments.front()->color() : QColor(0x80, 0x80, 0x80);
    bool same = byValue.size() == m_slaLines.size();
    for (auto it = m_slaLines.begin(); same && it != m_slaLines.end(); ++it)
        same = colours.count(it->first) && it->second->pen().color() == colours[it->first];
    if (!same) {
        for (auto &[value, series] : m_slaLines) {
            m_chart->removeSeries(series);
            delete series;
        }
        m_slaLines.clear();
        for (const auto &[value, lines] : byValue) {
            auto *series = new QLineSeries(m_chart);
            m_chart->addSeries(series);
            series->attachAxis(m_x);
            series->attachAxis(m_y);
            QPen dashed(colours[value]);
            dashed.setStyle(Qt::DashLine);
            dashed.setWidthF(1.5);
            series->setPen(dashed);
            m_slaLines.emplace(value, series);
        }
    }
    for (const auto &[value, lines] : byValue) {
        QLineSeries *series = m_slaLines.at(value);
        series->clear();
        series->setName(
            lines.size() == 1
                ? slaName(*lines.front())
                : tr("SLA %1 (%n tables)", nullptr, static_cast<int>(lines.size())).arg(formatDuration(value)));
        for (Line *line : lines)
            line->sla = series;
    }
    updateLegend();
}

void LagChart::updateLegend()
{
    std::vector<LegendStrip::Entry> entries;
    entries.reserve(m_lines.size() + m_slaLines.size());
    for (const auto &[key, line] : m_lines)
        entries.push_back({line.name, line.segments.front()->color(), false, isHidden(line.name)});
    for (const auto &[value, series] : m_slaLines)
        entries.push_back({series->name(), series->pen().color(), true, isHidden(series->name())});
    m_legend->setEntries(std::move(entries));
}

void LagChart::setHidden(const QString &name, bool hidden)
{
    if (hidden)
        m_hidden.insert(name);
    else
        m_hidden.erase(name);
    for (auto &[key, line] : m_lines)
        if (line.name == name)
            for (QLineSeries *segment : line.segments)
                segment->setVisible(!hidden);
    for (auto &[value, series] : m_slaLines)
        if (series->name() == name)
            series->setVisible(!hidden);
    updateLegend();
    updateAxes(m_toMs ? m_toMs : core::wallClockMs());
}

double LagChart::lagAxisTop() const
{
    return m_y->max();
}

QColor LagChart::lineColour(std::size_t i) const
{
    // Twenty colours told apart at a glance (the chart theme has five, so twenty lines repeated
    // each four times); grey is left to SLA lines shared by several tables.
    static constexpr QRgb kColours[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2,
                                        0xbcbd22, 0x17becf, 0x393b79, 0x637939, 0x8c6d31, 0x843c39, 0x7b4173,
                                        0x3182bd, 0xe6550d, 0x31a354, 0x756bb1, 0xd6616b, 0xce6dbd};
    QColor c = QColor::fromRgb(kColours[i % std::size(kColours)]);
    // On a dark background the darkest ones are lifted so they stay visible.
    if (palette().color(QPalette::Window).lightness() < 128 && c.lightness() < 110)
        c = c.lighter(160);
    return c;
}

void LagChart::setEngine(EngineBridge *engine)
{
    m_engine = engine;
}

void LagChart::reload()
{
    ++m_generation;
    m_loaded = false;
    m_pending.reset();
    startRead();
}

void LagChart::startRead()
{
    std::vector<Key> keys;
    for (const auto &[key, line] : m_lines)
        keys.push_back(key);
    const std::int64_t window = reachMs();
    // One request per table, answered in any order; the chart fills when the last is in.
    const std::int64_t now = core::wallClockMs();
    EngineDoor *door = m_engine ? m_engine->door() : nullptr;
    if (keys.empty() || !door) {
        // No engine to ask: the chart starts empty and fills from live snapshots.
        onReadDone(m_generation, {}, now);
        return;
    }
    auto history = std::make_shared<History>();
    auto left = std::make_shared<std::size_t>(keys.size());
    for (const auto &key : keys) {
        auto encoded = [](const std::string &v) {
            return QString::fromLatin1(QUrl::toPercentEncoding(QString::fromStdString(v)));
        };
        const QString path = QStringLiteral("/api/v1/lag?pipeline=%1&table=%2&since_ms=%3")
                                 .arg(encoded(key.first), encoded(key.second))
                                 .arg(now - window);
        door->request("GET", path, {}, this,
                      [this, generation = m_generation, key, history, left, now, window](const EngineDoor::Reply &r) {
                          // A busy or broken file, or an agent out of reach: that table's line starts
                          // empty and fills from live snapshots; the Tables page says why.
                          if (r.ok() && r.body.is_array()) {
                              std::vector<core::LagSample> samples;
                              for (const auto &x : r.body) {
                                  core::LagSample ls;
                                  ls.pipeline = key.first;
                                  ls.table = key.second;
                                  ls.tsMs = x.value("at_ms", std::int64_t{0});
                                  ls.lagSeconds = x.value("lag_seconds", 0.0);
                                  ls.rowsPerSecond = x.value("rows_per_second", 0.0);
                                  samples.push_back(ls);
                              }
                              // Thinned over the span there is: a sync three minutes old keeps
                              // every sample of its three minutes.
                              const std::int64_t first = samples.empty() ? now : samples.front().tsMs;
                              (*history)[key] = thin(samples, std::max(now - window, first), now, kMaxPoints);
                          }
                          if (--*left == 0)
                              onReadDone(generation, std::move(*history), now);
                      });
    }
}

void LagChart::onReadDone(std::uint64_t generation, History history, std::int64_t nowMs)
{
    if (generation != m_generation)
        return;
    for (auto &[key, line] : m_lines) {
        emptyLine(line);
        auto it = history.find(key);
        if (it == history.end())
            continue;
        // Split at gaps first, then hand each line its points in one call (one repaint).
        std::vector<QList<QPointF>> parts(1);
        for (const QPointF &p : it->second) {
            if (!parts.back().isEmpty() && p.x() - parts.back().back().x() > static_cast<qreal>(gapMs()))
                parts.emplace_back();
            parts.back().append(p);
        }
        line.segments.front()->replace(parts.front());
        for (std::size_t i = 1; i < parts.size(); ++i)
            addSegment(line)->replace(parts[i]);
    }
    m_loaded = true;
    updateAxes(nowMs);
    emit historyReady();
}

void LagChart::applyLive()
{
    if (!m_pending || !m_loaded || !isVisible())
        return;
    const EngineSnapshot snapshot = std::move(*m_pending);
    m_pending.reset();
    const auto x = static_cast<qreal>(snapshot.takenAtMs);
    for (const auto &t : snapshot.tables) {
        auto it = m_lines.find({t.pipeline, t.table});
        if (it == m_lines.end() || !t.lagSeconds)
            continue;
        QLineSeries *last = it->second.segments.back();
        if (last->count() > 0 && last->at(last->count() - 1).x() >= x)
            continue;
        appendPoint(it->second, QPointF(x, *t.lagSeconds));
    }
    updateAxes(snapshot.takenAtMs);
}

void LagChart::updateAxes(std::int64_t nowMs)
{
    const auto from = static_cast<qreal>(nowMs - reachMs());
    double top = 0;
    bool anyPoint = false;
    std::vector<double> slas;
    for (auto &[key, line] : m_lines) {
        // Points that left the window go, so a day of live updates does not pile up.
        for (std::size_t i = 0; i < line.segments.size();) {
            QLineSeries *segment = line.segments[i];
            int old = 0;
            while (old < segment->count() && segment->at(old).x() < from)
                ++old;
            if (old > 0)
                segment->removePoints(0, old);
            if (segment->count() == 0 && i > 0) {
                m_chart->removeSeries(segment);
                delete segment;
                line.segments.erase(line.segments.begin() + static_cast<std::ptrdiff_t>(i));
                continue;
            }
            // A lone sample has no line to be seen by: mark its points.
            const bool marked = segment->count() <= 2;
            if (segment->pointsVisible() != marked)
                segment->setPointsVisible(marked);
            if (segment->isVisible())
                for (int p = 0; p < segment->count(); ++p)
                    top = std::max(top, segment->at(p).y());
            anyPoint |= segment->count() > 0;
            ++i;
        }
        if (!isHidden(line.name))
            slas.push_back(line.slaSeconds);
    }
    // The axis fits the lines: an SLA is in range when it is near them (at most three times the
    // highest), else its dashed line stays above the chart and its legend entry says its value.
    // Scaled to a 2 h SLA, lags of seconds lay flat on the axis (issue 45).
    // Without a sample yet, the lowest SLA gives the scale.
    if (top <= 0 && !slas.empty())
        top = *std::min_element(slas.begin(), slas.end());
    const double dataTop = top;
    for (double sla : slas)
        if (sla <= 3 * dataTop)
            top = std::max(top, sla);
    // The time range: the chosen window, or from the first point there is (kMinFitMs at least,
    // with a little room before it so it is not drawn on the axis).
    std::int64_t shownFrom = nowMs - reachMs();
    if (windowMs() == kFit) {
        std::int64_t first = nowMs;
        for (const auto &[key, line] : m_lines)
            for (const QLineSeries *segment : line.segments)
                if (segment->count() > 0) {
                    first = std::min(first, static_cast<std::int64_t>(segment->at(0).x()));
                    break; // segments are in time order
                }
        const std::int64_t span = std::max(kMinFitMs, nowMs - first);
        shownFrom = nowMs - span - span / 50;
    }
    m_fromMs = shownFrom;
    m_toMs = nowMs;
    for (auto &[value, series] : m_slaLines)
        series->replace({QPointF(static_cast<qreal>(shownFrom), value), QPointF(static_cast<qreal>(nowMs), value)});
    setTimeRange(m_x, shownFrom, nowMs);
    setDurationRange(m_y, top, 60);
    m_empty->setVisible(m_loaded && !anyPoint && !m_lines.empty());
}

} // namespace driftless::ui
