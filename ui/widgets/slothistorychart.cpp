#include "ui/widgets/slothistorychart.h"

#include "ui/displayformat.h"
#include "ui/enginebridge.h"
#include "ui/enginedoor.h"
#include "ui/slotsample.h"
#include "ui/widgets/chartstyle.h"
#include "ui/widgets/legendstrip.h"

#include "core/base/clock.h"
#include "core/engine/slots/slotprojection.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QCursor>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QFontMetrics>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QPalette>
#include <QToolTip>
#include <QUrl>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace driftless::ui {

namespace {

constexpr std::int64_t kMinute = 60'000;

const QColor kRetainedColour = QColor::fromRgb(0x1f77b4);
const QColor kSafeWalColour = QColor::fromRgb(0x2ca02c);
const QColor kWarnColour = QColor::fromRgb(0xe6a100);
const QColor kMaxColour = QColor::fromRgb(0xd62728);

QString encoded(const std::string &v)
{
    return QString::fromLatin1(QUrl::toPercentEncoding(QString::fromStdString(v)));
}

QString unitName(double unit)
{
    if (unit >= 1024.0 * 1024 * 1024 * 1024)
        return QStringLiteral("TB");
    if (unit >= 1024.0 * 1024 * 1024)
        return QStringLiteral("GB");
    if (unit >= 1024.0 * 1024)
        return QStringLiteral("MB");
    if (unit >= 1024.0)
        return QStringLiteral("kB");
    return QStringLiteral("bytes");
}

QLineSeries *dashedLine(QChart *chart, const QColor &colour)
{
    auto *series = new QLineSeries(chart);
    QPen pen(colour);
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(1.5);
    series->setPen(pen);
    return series;
}

} // namespace

SlotHistoryChart::SlotHistoryChart(QWidget *parent)
    : QWidget(parent), m_window(new QComboBox(this)), m_title(new QLabel(this)), m_projection(new QLabel(this)),
      m_empty(new QLabel(this)), m_chart(new QChart), m_view(new QChartView(m_chart, this)),
      m_legend(new LegendStrip(this)), m_x(new QDateTimeAxis(m_chart)), m_y(new QValueAxis(m_chart)),
      m_retained(new QLineSeries(m_chart)), m_safeWal(new QLineSeries(m_chart)),
      m_warn(dashedLine(m_chart, kWarnColour)), m_max(dashedLine(m_chart, kMaxColour))
{
    setObjectName(QStringLiteral("slotHistory"));
    m_window->setObjectName(QStringLiteral("slotHistoryWindow"));
    m_window->addItem(tr("Fit to the history"), static_cast<qlonglong>(kFit));
    m_window->addItem(tr("Last 15 minutes"), static_cast<qlonglong>(15 * kMinute));
    m_window->addItem(tr("Last hour"), static_cast<qlonglong>(60 * kMinute));
    m_window->addItem(tr("Last 24 hours"), static_cast<qlonglong>(24 * 60 * kMinute));
    m_window->addItem(tr("Last 7 days"), static_cast<qlonglong>(7 * 24 * 60 * kMinute));
    m_window->setToolTip(tr("Fit to the history: from the slot's first sample (at most 7 days back) until now"));
    connect(m_window, &QComboBox::currentIndexChanged, this, &SlotHistoryChart::reload);

    m_title->setObjectName(QStringLiteral("slotHistoryTitle"));
    m_title->setTextFormat(Qt::PlainText);
    m_projection->setObjectName(QStringLiteral("slotProjection"));
    m_projection->setTextFormat(Qt::PlainText);
    m_projection->setWordWrap(true);
    QFont bold = m_projection->font();
    bold.setBold(true);
    m_projection->setFont(bold);
    m_empty->setObjectName(QStringLiteral("slotHistoryEmpty"));
    m_empty->setWordWrap(true);
    m_empty->setVisible(false);

    styleChart(m_chart, palette());
    m_x->setTitleText(tr("Time"));
    m_y->setLabelFormat(QStringLiteral("%.4g"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    QPen pen(kRetainedColour);
    pen.setWidthF(2.0);
    m_retained->setPen(pen);
    m_retained->setName(tr("Retained WAL"));
    pen.setColor(kSafeWalColour);
    m_safeWal->setPen(pen);
    m_safeWal->setName(tr("safe_wal_size"));
    for (QLineSeries *s : {m_warn, m_max, m_safeWal, m_retained}) {
        m_chart->addSeries(s);
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    m_view->setObjectName(QStringLiteral("slotHistoryChart"));
    m_view->setRenderHint(QPainter::Antialiasing);
    // Enough to read a trend; lower, the Slots page did not fit a laptop at 150% (issue 45).
    m_view->setMinimumHeight(140);
    // The plot's height decides how many value ticks have room (fitValueAxis); only the axis'
    // labels change then, which leave the height as it is.
    connect(m_chart, &QChart::plotAreaChanged, this, [this](const QRectF &area) {
        if (std::abs(area.height() - m_fittedPlotHeight) >= 1) {
            m_fittedPlotHeight = area.height();
            fitValueAxis();
        }
    });
    m_legend->setObjectName(QStringLiteral("slotHistoryLegend"));
    connect(m_legend, &LegendStrip::toggled, this, [this](int index, const QString &) {
        if (index >= 0 && static_cast<std::size_t>(index) < m_entryLines.size())
            setHidden(m_entryLines[static_cast<std::size_t>(index)],
                      !isHidden(m_entryLines[static_cast<std::size_t>(index)]));
    });
    watchHover(m_retained);
    watchHover(m_safeWal);

    auto *top = new QHBoxLayout;
    top->addWidget(m_title, 1);
    top->addWidget(m_window);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_projection);
    layout->addWidget(m_empty);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_legend);
    clearSlot();
}

SlotHistoryChart::~SlotHistoryChart() = default;

void SlotHistoryChart::setEngine(EngineBridge *engine)
{
    m_engine = engine;
}

bool SlotHistoryChart::isHidden(Line line) const
{
    return std::find(m_hidden.begin(), m_hidden.end(), line) != m_hidden.end();
}

void SlotHistoryChart::setHidden(Line line, bool hidden)
{
    if (hidden == isHidden(line))
        return;
    if (hidden)
        m_hidden.push_back(line);
    else
        m_hidden.erase(std::find(m_hidden.begin(), m_hidden.end(), line));
    redraw();
}

QString SlotHistoryChart::hoverText(qreal x) const
{
    const Sample *nearest = nullptr;
    for (const auto &s : m_samples)
        if (s.tsMs >= m_fromMs && s.tsMs <= m_toMs &&
            (!nearest || std::abs(static_cast<double>(s.tsMs) - x) < std::abs(static_cast<double>(nearest->tsMs) - x)))
            nearest = &s;
    if (!nearest)
        return {};
    QStringList lines{QDateTime::fromMSecsSinceEpoch(nearest->tsMs).toString(QStringLiteral("HH:mm:ss"))};
    if (nearest->retained)
        lines << tr("%1: %2").arg(m_retained->name(), formatBytes(*nearest->retained));
    if (nearest->safeWal)
        lines << tr("safe_wal_size: %1").arg(formatBytes(*nearest->safeWal));
    return lines.join(QLatin1Char('\n'));
}

void SlotHistoryChart::watchHover(QLineSeries *series)
{
    connect(series, &QLineSeries::hovered, this, [this](const QPointF &point, bool state) {
        if (!state) {
            QToolTip::hideText();
            return;
        }
        if (const QString text = hoverText(point.x()); !text.isEmpty())
            QToolTip::showText(QCursor::pos(), text, m_view);
    });
}

std::int64_t SlotHistoryChart::windowMs() const
{
    return m_window->currentData().toLongLong();
}

void SlotHistoryChart::setWindowMs(std::int64_t ms)
{
    const int i = m_window->findData(static_cast<qlonglong>(ms));
    if (i >= 0)
        m_window->setCurrentIndex(i);
}

QString SlotHistoryChart::projectionText(const core::SlotReport &slot, const std::optional<core::SlotGuard> &guard)
{
    if (slot.slotType == "binlog") {
        if (slot.walStatus == core::WalStatus::Purged)
            return tr("The binlog file the pipeline needs is purged: re-snapshot it (driftless-cli resnapshot %1)")
                .arg(QString::fromStdString(slot.owner));
        if (!slot.secondsToLimit)
            return tr("No expiry known for the binlog file it needs");
        if (*slot.secondsToLimit <= 0)
            return tr("The binlog file it needs has expired: the server purges it at its next rotation");
        return tr("The binlog file it needs expires in %1")
            .arg(QString::fromStdString(core::humanTimeLeft(*slot.secondsToLimit)));
    }
    if (slot.secondsToLimit) {
        if (*slot.secondsToLimit <= 0)
            return tr("At its limit now: the slot guard acts on its next check");
        return tr("At this rate: limit in %1").arg(QString::fromStdString(core::humanTimeLeft(*slot.secondsToLimit)));
    }
    if (slotLimitApplies(slot, guard))
        return tr("Not growing: retained WAL is steady or falling over the last %1 min")
            .arg(core::kProjectionWindowMs / kMinute);
    return tr("No limit set: no slot_guard max_retained on %1 and no max_slot_wal_keep_size on the server")
        .arg(QString::fromStdString(slot.source));
}

void SlotHistoryChart::setSlot(const core::SlotReport &slot, const std::optional<core::SlotGuard> &guard)
{
    const bool same = m_slot && m_slot->source == slot.source && m_slot->slot == slot.slot;
    m_slot = slot;
    m_guard = guard;
    m_title->setText(slot.slotType == "binlog"
                         ? tr("Binlog of pipeline %1 on %2")
                               .arg(QString::fromStdString(slot.owner), QString::fromStdString(slot.source))
                         : tr("%1 on %2").arg(QString::fromStdString(slot.slot), QString::fromStdString(slot.source)));
    if (!same) {
        m_samples.clear();
        m_loaded = false;
    }
    updateProjection();
    reload();
}

void SlotHistoryChart::clearSlot()
{
    m_slot.reset();
    m_guard.reset();
    ++m_job; // whatever is on its way is for a slot no longer shown
    m_samples.clear();
    m_loaded = false;
    m_title->setText(tr("Slot history"));
    m_projection->setText(tr("Select a slot to see its retained WAL over time."));
    m_nowMs = core::wallClockMs();
    redraw();
}

void SlotHistoryChart::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_stale)
        reload();
}

void SlotHistoryChart::reload()
{
    ++m_job;
    if (!m_slot)
        return;
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    m_stale = false;
    startRead();
}

void SlotHistoryChart::startRead()
{
    const std::int64_t now = core::wallClockMs();
    const std::int64_t window = windowMs() == kFit ? kFitReachMs : windowMs();
    EngineDoor *door = m_engine ? m_engine->door() : nullptr;
    if (!door) {
        onReadDone(m_job, {}, now);
        return;
    }
    const QString path = QStringLiteral("/api/v1/slot-history?source=%1&slot=%2&since_ms=%3")
                             .arg(encoded(m_slot->source), encoded(m_slot->slot), QString::number(now - window));
    door->request("GET", path, {}, this, [this, job = m_job, now](const EngineDoor::Reply &r) {
        // A reply for another slot or window: a newer read is on its way.
        if (job != m_job)
            return;
        std::vector<Sample> samples;
        if (r.ok() && r.body.is_array()) {
            auto number = [](const nlohmann::json &x, const char *key) -> std::optional<std::int64_t> {
                auto it = x.find(key);
                if (it == x.end() || !it->is_number())
                    return std::nullopt;
                return it->get<std::int64_t>();
            };
            samples.reserve(r.body.size());
            for (const auto &x : r.body)
                samples.push_back(
                    {x.value("at_ms", std::int64_t{0}), number(x, "retained_bytes"), number(x, "safe_wal_size")});
        }
        if (r.ok())
            m_empty->clear();
        else
            m_empty->setText(tr("Cannot read the slot's history: %1").arg(r.error));
        onReadDone(job, std::move(samples), now);
    });
}

void SlotHistoryChart::onReadDone(std::uint64_t job, std::vector<Sample> samples, std::int64_t nowMs)
{
    if (job != m_job)
        return;
    std::sort(samples.begin(), samples.end(), [](const Sample &a, const Sample &b) { return a.tsMs < b.tsMs; });
    m_samples = std::move(samples);
    m_nowMs = nowMs;
    m_loaded = true;
    updateProjection();
    redraw();
    emit historyReady();
}

void SlotHistoryChart::updateProjection()
{
    if (!m_slot)
        return;
    QString text = projectionText(*m_slot, m_guard);
    // With too few samples the engine fits no rate: say so rather than "not growing".
    if (m_slot->slotType != "binlog" && !m_slot->secondsToLimit && slotLimitApplies(*m_slot, m_guard) && m_loaded) {
        const auto recent =
            static_cast<std::size_t>(std::count_if(m_samples.begin(), m_samples.end(), [this](const Sample &s) {
                return s.tsMs >= m_nowMs - core::kProjectionWindowMs;
            }));
        const bool span = recent >= 2 && m_samples.back().tsMs - m_samples[m_samples.size() - recent].tsMs >=
                                             core::kProjectionMinSpanMs;
        if (recent < core::kProjectionMinSamples || !span)
            text = tr("Too little history for a rate yet: slots are sampled every 15 s");
    }
    m_projection->setText(text);
}

void SlotHistoryChart::redraw()
{
    // The time range: the chosen window, or from the first sample (kMinFitMs at least).
    const std::int64_t now = m_nowMs ? m_nowMs : core::wallClockMs();
    std::int64_t from = now - (windowMs() == kFit ? 15 * kMinute : windowMs());
    if (windowMs() == kFit && !m_samples.empty()) {
        const std::int64_t span = std::max(kMinFitMs, now - m_samples.front().tsMs);
        // A little room before the first sample, so it is not drawn on the axis.
        from = now - span - span / 50;
    }
    m_fromMs = from;
    m_toMs = now;

    // Thinned to the most WAL retained per slice of the window: a peak never disappears.
    std::vector<const Sample *> kept;
    const double width = std::max(1.0, static_cast<double>(now - from) / kMaxPoints);
    long long bucket = -1;
    for (const auto &s : m_samples) {
        if (s.tsMs < from)
            continue;
        const auto b = static_cast<long long>(static_cast<double>(s.tsMs - from) / width);
        if (b != bucket || kept.empty()) {
            kept.push_back(&s);
            bucket = b;
        } else if (s.retained.value_or(0) > kept.back()->retained.value_or(0)) {
            kept.back() = &s;
        }
    }

    // The axis fits the lines shown: a hidden one does not stretch it.
    const bool showRetained = !isHidden(Line::Retained), showSafeWal = !isHidden(Line::SafeWal);
    double top = 0;
    for (const Sample *s : kept) {
        if (showRetained)
            top = std::max(top, static_cast<double>(s->retained.value_or(0)));
        if (showSafeWal)
            top = std::max(top, static_cast<double>(s->safeWal.value_or(0)));
    }
    const bool guarded = m_slot && m_guard && m_guard->maxRetained > 0;
    if (guarded && !isHidden(Line::Max))
        top = std::max(top, static_cast<double>(m_guard->maxRetained));
    else if (guarded && !isHidden(Line::Warn))
        top = std::max(top, static_cast<double>(m_guard->effectiveWarn()));
    m_unit = 1;
    while (m_unit * 1024 <= top && m_unit < 1024.0 * 1024 * 1024 * 1024)
        m_unit *= 1024;

    QList<QPointF> retained, safeWal;
    for (const Sample *s : kept) {
        const auto x = static_cast<qreal>(s->tsMs);
        if (s->retained)
            retained.append(QPointF(x, static_cast<double>(*s->retained) / m_unit));
        if (s->safeWal)
            safeWal.append(QPointF(x, static_cast<double>(*s->safeWal) / m_unit));
    }
    // Samples further apart than a few sampling intervals (or thinned slices) are not joined:
    // the engine was not running then, and a line across would show samples that do not exist.
    std::vector<double> steps;
    for (std::size_t i = 1; i < kept.size(); ++i)
        steps.push_back(static_cast<double>(kept[i]->tsMs - kept[i - 1]->tsMs));
    double usual = 15'000;
    if (!steps.empty()) {
        std::nth_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2), steps.end());
        usual = steps[steps.size() / 2];
    }
    const double gapMs = std::max({60'000.0, 3 * usual, 3 * width});
    drawSplit(m_retained, m_retainedMore, retained, gapMs);
    drawSplit(m_safeWal, m_safeWalMore, safeWal, gapMs);
    m_retained->setVisible(showRetained);
    for (QLineSeries *s : m_retainedMore)
        s->setVisible(showRetained);
    m_safeWal->setVisible(showSafeWal);
    for (QLineSeries *s : m_safeWalMore)
        s->setVisible(showSafeWal);
    m_warn->setVisible(!isHidden(Line::Warn));
    m_max->setVisible(!isHidden(Line::Max));

    const bool binlog = m_slot && m_slot->slotType == "binlog";
    m_retained->setName(binlog ? tr("Binlog behind") : tr("Retained WAL"));
    std::vector<LegendStrip::Entry> entries{{m_retained->name(), kRetainedColour, false, !showRetained}};
    m_entryLines = {Line::Retained};
    if (!safeWal.isEmpty()) {
        entries.push_back({tr("safe_wal_size (max_slot_wal_keep_size left)"), kSafeWalColour, false, !showSafeWal});
        m_entryLines.push_back(Line::SafeWal);
    }
    if (guarded) {
        const auto warn = static_cast<double>(m_guard->effectiveWarn());
        const auto max = static_cast<double>(m_guard->maxRetained);
        m_warn->replace(
            {QPointF(static_cast<qreal>(from), warn / m_unit), QPointF(static_cast<qreal>(now), warn / m_unit)});
        m_max->replace(
            {QPointF(static_cast<qreal>(from), max / m_unit), QPointF(static_cast<qreal>(now), max / m_unit)});
        m_warn->setName(tr("warn_retained %1").arg(formatBytes(m_guard->effectiveWarn())));
        m_max->setName(tr("max_retained %1").arg(formatBytes(m_guard->maxRetained)));
        entries.push_back({m_warn->name(), kWarnColour, true, isHidden(Line::Warn)});
        entries.push_back({m_max->name(), kMaxColour, true, isHidden(Line::Max)});
        m_entryLines.push_back(Line::Warn);
        m_entryLines.push_back(Line::Max);
    } else {
        m_warn->clear();
        m_max->clear();
    }
    m_legend->setEntries(std::move(entries));

    setTimeRange(m_x, from, now);
    m_yTop = top / m_unit;
    m_y->setTitleText((binlog ? tr("Binlog (%1)") : tr("WAL (%1)")).arg(unitName(m_unit)));
    fitValueAxis();

    const bool empty = m_loaded && retained.isEmpty();
    if (empty && m_empty->text().isEmpty())
        m_empty->setText(tr("No samples of this slot in this window yet: the engine samples slots every 15 s "
                            "while it runs."));
    m_empty->setVisible(empty);
    if (!empty)
        m_empty->clear();
}

void SlotHistoryChart::fitValueAxis()
{
    // A short plot (the Slots page at 150% on a 1366x768 laptop) overlaid eight labels, which
    // Qt Charts cut to "...", and cut the axis title: as many ticks as have a label's room, and
    // the unit beside each number when the plot is too short for the title.
    const double plot = m_chart->plotArea().height();
    const int label = QFontMetrics(m_y->labelsFont()).height();
    const int intervals = plot > 0 ? std::clamp(static_cast<int>(plot / (1.5 * label)), 1, 8) : 8;
    setRoundedRange(m_y, m_yTop, decimalSteps(), 1, intervals);
    const bool titleFits = plot <= 0 || QFontMetrics(m_y->titleFont()).horizontalAdvance(m_y->titleText()) <= plot;
    if (m_y->isTitleVisible() != titleFits)
        m_y->setTitleVisible(titleFits);
    const QString format = titleFits ? QStringLiteral("%.4g") : QStringLiteral("%.4g ") + unitName(m_unit);
    if (m_y->labelFormat() != format)
        m_y->setLabelFormat(format);
}

void SlotHistoryChart::drawSplit(QLineSeries *first, std::vector<QLineSeries *> &more, const QList<QPointF> &points,
                                 double gapMs)
{
    std::vector<QList<QPointF>> parts(1);
    for (const QPointF &p : points) {
        if (!parts.back().isEmpty() && p.x() - parts.back().back().x() > gapMs)
            parts.emplace_back();
        parts.back().append(p);
    }
    while (more.size() + 1 > parts.size()) {
        m_chart->removeSeries(more.back());
        delete more.back();
        more.pop_back();
    }
    while (more.size() + 1 < parts.size()) {
        auto *series = new QLineSeries(m_chart);
        series->setPen(first->pen());
        m_chart->addSeries(series);
        series->attachAxis(m_x);
        series->attachAxis(m_y);
        watchHover(series);
        more.push_back(series);
    }
    first->replace(parts.front());
    // A lone sample has no line to be seen by: mark its points.
    first->setPointsVisible(parts.front().size() <= 2);
    for (std::size_t i = 1; i < parts.size(); ++i) {
        more[i - 1]->replace(parts[i]);
        more[i - 1]->setPointsVisible(parts[i].size() <= 2);
    }
}

} // namespace driftless::ui
