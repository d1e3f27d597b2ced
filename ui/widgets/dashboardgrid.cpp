#include "ui/widgets/dashboardgrid.h"

#include "ui/displayformat.h"
#include "ui/statusicons.h"
#include "ui/widgets/freshnessbadge.h"

#include "core/engine/slots/slotprojection.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QLocale>
#include <QMenu>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <map>

namespace driftless::ui {

namespace {
constexpr int kMargin = 8;
constexpr int kPad = 7;
constexpr int kIcon = 14;

QString rate(double rowsPerSecond)
{
    const QLocale locale;
    if (rowsPerSecond <= 0)
        return DashboardGrid::tr("0 rows/s");
    return DashboardGrid::tr("%1 rows/s")
        .arg(rowsPerSecond < 10 ? locale.toString(rowsPerSecond, 'f', 1)
                                : locale.toString(std::llround(rowsPerSecond)));
}

QString countsText(const std::array<int, 4> &by)
{
    static const char *const words[] = {"ok", "warn", "breach", "unknown"};
    QStringList parts;
    for (std::size_t i = 0; i < by.size(); ++i)
        if (by[i] || i == 0)
            parts << QStringLiteral("%1 %2").arg(by[i]).arg(QLatin1String(words[i]));
    return parts.join(QStringLiteral(" \u00b7 "));
}

QString slotText(const DashboardTiles::Pipeline &p)
{
    using Slot = DashboardTiles::Pipeline::Slot;
    switch (p.slot) {
    case Slot::NotNeeded:
        // Short enough for the tile (the tooltip says why none is needed).
        return DashboardGrid::tr("Slot: none needed");
    case Slot::NotRead:
        return DashboardGrid::tr("Slot: not read yet");
    case Slot::Unreadable:
        return DashboardGrid::tr("Slot: its source could not be read");
    case Slot::None:
        return DashboardGrid::tr("Slot: none yet (made at start)");
    case Slot::Present:
        break;
    }
    // Without a limit there is no time to it: that is not "not growing".
    if (!p.slotLimited)
        return DashboardGrid::tr("Slot: no limit set (Slot Guard)");
    if (!p.slotSecondsToLimit)
        return DashboardGrid::tr("Slot: not growing toward its limit");
    if (*p.slotSecondsToLimit <= 0)
        return DashboardGrid::tr("Slot: at its limit now");
    return DashboardGrid::tr("Slot: limit in %1")
        .arg(QString::fromStdString(core::humanTimeLeft(*p.slotSecondsToLimit)));
}

QString reconcileText(const DashboardTiles::Pipeline &p)
{
    if (!p.reconciledAtMs)
        return DashboardGrid::tr("Never reconciled");
    if (p.driftRows == 0)
        return DashboardGrid::tr("Last reconcile: no drift");
    const double ratio = p.reconciledRows > 0 ? 100.0 * double(p.driftRows) / double(p.reconciledRows) : 0;
    // A row of drift in 100,000 is not "0.00%".
    const QString share =
        ratio > 0 && ratio < 0.01 ? DashboardGrid::tr("<0.01") : QLocale().toString(ratio, 'f', ratio < 1 ? 2 : 1);
    if (p.driftRows == 1)
        return DashboardGrid::tr("Last reconcile: 1 row of drift (%1%)").arg(share);
    return DashboardGrid::tr("Last reconcile: %1 rows of drift (%2%)").arg(QLocale().toString(p.driftRows), share);
}

void drawTile(QPainter &p, const QRect &rect, const FreshnessBadge::Tint &tint, bool chosen)
{
    QPainterPath path;
    const QRectF r = QRectF(rect).adjusted(0.5, 0.5, -0.5, -0.5);
    path.addRoundedRect(r, 6, 6);
    p.fillPath(path, tint.fill);
    p.setPen(QPen(tint.border, chosen ? 3 : 1));
    p.drawPath(path);
}
} // namespace

DashboardGrid::DashboardGrid(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("dashboardGrid"));
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMouseTracking(false);
}

void DashboardGrid::setContent(std::vector<const DashboardTiles::Pipeline *> pipelines,
                               std::vector<DashboardTiles::Group> groups, const QString &selected)
{
    m_latestPipelines = pipelines;
    m_latestGroups = groups;
    m_held = m_pointerOver && selected == m_selected && keepOrder(pipelines, groups);
    m_pipelines = std::move(pipelines);
    m_groups = std::move(groups);
    m_selected = selected;
    m_shown = 0;
    m_pipelineOrder.clear();
    m_groupOrder.clear();
    for (const auto *p : m_pipelines)
        m_pipelineOrder.push_back(p->name);
    for (const auto &g : m_groups) {
        m_shown += static_cast<int>(g.tables.size());
        auto &names = m_groupOrder.emplace_back(g.title, std::vector<QString>{}).second;
        for (const auto *t : g.tables)
            names.push_back(t->pipeline + QLatin1Char('/') + t->table);
    }
    relayout();
    update();
}

bool DashboardGrid::keepOrder(std::vector<const DashboardTiles::Pipeline *> &pipelines,
                              std::vector<DashboardTiles::Group> &groups) const
{
    if (pipelines.size() != m_pipelineOrder.size() || groups.size() != m_groupOrder.size())
        return false;
    std::map<QString, const DashboardTiles::Pipeline *> pipelineByName;
    for (const auto *p : pipelines)
        pipelineByName[p->name] = p;
    std::map<QString, DashboardTiles::Group *> groupByTitle;
    for (auto &g : groups)
        groupByTitle[g.title] = &g;
    std::vector<const DashboardTiles::Pipeline *> keptPipelines;
    for (const auto &name : m_pipelineOrder) {
        const auto it = pipelineByName.find(name);
        if (it == pipelineByName.end())
            return false;
        keptPipelines.push_back(it->second);
    }
    std::vector<DashboardTiles::Group> keptGroups;
    for (const auto &[title, names] : m_groupOrder) {
        const auto it = groupByTitle.find(title);
        if (it == groupByTitle.end() || it->second->tables.size() != names.size())
            return false;
        std::map<QString, const DashboardTiles::Table *> byName;
        for (const auto *t : it->second->tables)
            byName[t->pipeline + QLatin1Char('/') + t->table] = t;
        DashboardTiles::Group g = *it->second;
        g.tables.clear();
        for (const auto &name : names) {
            const auto t = byName.find(name);
            if (t == byName.end())
                return false;
            g.tables.push_back(t->second);
        }
        keptGroups.push_back(std::move(g));
    }
    pipelines = std::move(keptPipelines);
    groups = std::move(keptGroups);
    return true;
}

void DashboardGrid::relayout()
{
    m_items.clear();
    const int width = std::max(this->width(), kPipelineWidth + 2 * kMargin);
    m_laidOutWidth = this->width();
    int x = kMargin, y = kMargin;
    const auto place = [&](Item item, int w, int h) {
        if (x > kMargin && x + w > width - kMargin) {
            x = kMargin;
            y += h + kGap;
        }
        item.rect = QRect(x, y, w, h);
        m_items.push_back(item);
        x += w + kGap;
    };
    for (const auto *pl : m_pipelines)
        place({Item::PipelineTile, {}, pl, nullptr, nullptr}, kPipelineWidth, kPipelineHeight);
    if (!m_pipelines.empty())
        y += kPipelineHeight + kGap;
    for (const auto &g : m_groups) {
        y += kGap;
        m_items.push_back({Item::Header, QRect(kMargin, y, width - 2 * kMargin, kHeaderHeight), nullptr, &g, nullptr});
        y += kHeaderHeight;
        x = kMargin;
        for (const auto *t : g.tables)
            place({Item::TableTile, {}, nullptr, &g, t}, kTableWidth, kTableHeight);
        if (!g.tables.empty())
            y += kTableHeight + kGap;
        x = kMargin;
    }
    const int height = y + kMargin;
    if (minimumHeight() != height)
        setMinimumHeight(height);
}

void DashboardGrid::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    if (width() != m_laidOutWidth)
        relayout();
}

void DashboardGrid::paintEvent(QPaintEvent *event)
{
    QPainter p(this);
    // In a scroll area most of the grid is out of sight: paint only what is on screen.
    const QRect exposed = event->rect() & visibleRegion().boundingRect();
    p.fillRect(exposed, palette().base());
    p.setRenderHint(QPainter::Antialiasing);
    for (const Item &item : m_items) {
        if (!item.rect.intersects(exposed))
            continue;
        switch (item.kind) {
        case Item::PipelineTile:
            paintPipeline(p, item);
            break;
        case Item::Header:
            paintHeader(p, item);
            break;
        case Item::TableTile:
            paintTable(p, item);
            break;
        }
    }
}

void DashboardGrid::paintPipeline(QPainter &p, const Item &item) const
{
    const auto &pl = *item.pipeline;
    const QString level = spelled(pl.worst);
    const FreshnessBadge::Tint tint = FreshnessBadge::tintFor(level);
    const QFontMetrics fm(font());
    const int line = fm.height() + 1;
    const bool chosen = pl.name == m_selected;
    // A two-way pipeline lists each table once per direction; its tile counts tables.
    const int tables = pl.twoWay ? (pl.tables + 1) / 2 : pl.tables;
    const QString count = pl.twoWay ? (tables == 1 ? tr("1 table, both ways") : tr("%1 tables, both ways").arg(tables))
                                    : (tables == 1 ? tr("1 table") : tr("%1 tables").arg(tables));
    // A pipeline whose source changed wears that state's icon, whatever its tables' freshness.
    const bool changed = pl.sourceChanged > 0;
    const QString key = QStringLiteral("p|%1|%2|%3|%4|%5").arg(pl.name, level, count).arg(chosen).arg(changed);
    m_memo.paint(&p, item.rect, key, [&](QPainter *q, const QRect &rect) {
        drawTile(*q, rect, tint, chosen);
        const QRect inner = rect.adjusted(kPad, kPad - 1, -kPad, -kPad);
        (changed ? stateIcon(core::TableState::SourceChanged) : freshnessIcon(pl.worst))
            .paint(q, QRect(inner.left(), inner.top() + (line - 16) / 2, 16, 16));
        QFont bold = font();
        bold.setBold(true);
        q->setFont(bold);
        q->setPen(tint.text);
        const int countWidth = fm.horizontalAdvance(count) + 4;
        const QRect title(inner.left() + 20, inner.top(), inner.width() - 20 - countWidth, line);
        q->drawText(title, Qt::AlignVCenter | Qt::AlignLeft,
                    QFontMetrics(bold).elidedText(pl.name, Qt::ElideRight, title.width()));
        q->setFont(font());
        q->drawText(QRect(inner.right() - countWidth, inner.top(), countWidth, line), Qt::AlignVCenter | Qt::AlignRight,
                    count);
    });
    const QRect inner = item.rect.adjusted(kPad, kPad - 1, -kPad, -kPad);
    p.setPen(tint.text);
    const QStringList lines = linesOf(pl);
    int y = inner.top() + line + 2;
    for (const QString &text : lines) {
        p.drawText(QRect(inner.left(), y, inner.width(), line), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(text, Qt::ElideRight, inner.width()));
        y += line;
    }
}

QStringList DashboardGrid::linesOf(const DashboardTiles::Pipeline &pl) const
{
    QString states = countsText(pl.byFreshness);
    // First, where no width can elide it: the tables wait for `recover` or `resnapshot`.
    if (pl.sourceChanged)
        states = tr("source changed \u00b7 ") + states;
    if (pl.failing)
        states += tr(" \u00b7 %1 failing").arg(pl.failing);
    if (pl.paused)
        states += tr(" \u00b7 %1 paused").arg(pl.paused);
    return {states, rate(pl.rowsPerSecond), slotText(pl), reconcileText(pl)};
}

QStringList DashboardGrid::pipelineLines(const QString &pipeline) const
{
    for (const auto *pl : m_pipelines)
        if (pl->name == pipeline)
            return linesOf(*pl);
    return {};
}

void DashboardGrid::paintHeader(QPainter &p, const Item &item) const
{
    const auto &g = *item.group;
    const QRect r = item.rect;
    freshnessIcon(g.worst).paint(&p, QRect(r.left(), r.top() + (r.height() - 16) / 2, 16, 16));
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics bfm(bold);
    p.setPen(palette().color(QPalette::Text));
    p.setFont(bold);
    // Elided to half the row at most, then measured: measured first, a bold title's rounded
    // width could elide a name that fits ("east_we…").
    const QString title = bfm.elidedText(g.title, Qt::ElideRight, r.width() / 2);
    const int titleWidth = bfm.horizontalAdvance(title) + 2;
    p.drawText(QRect(r.left() + 22, r.top(), titleWidth, r.height()), Qt::AlignVCenter | Qt::AlignLeft, title);
    p.setFont(font());
    const int n = static_cast<int>(g.tables.size());
    const QString counts = (n == 1 ? tr("1 table: ") : tr("%1 tables: ").arg(n)) + countsText(g.byFreshness);
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(QRect(r.left() + 22 + titleWidth + 12, r.top(), r.width(), r.height()), Qt::AlignVCenter | Qt::AlignLeft,
               counts);
    p.drawLine(QPointF(r.left(), r.bottom() + 0.5), QPointF(r.right(), r.bottom() + 0.5));
}

void DashboardGrid::paintTable(QPainter &p, const Item &item) const
{
    const auto &t = *item.table;
    const auto &r = *t.report;
    const QString level = spelled(r.freshness);
    const FreshnessBadge::Tint tint = FreshnessBadge::tintFor(level);
    const QRect inner = item.rect.adjusted(kPad, kPad - 2, -kPad, -kPad + 1);
    const QFontMetrics fm(font());
    const int line = fm.height();
    // Grouped by pipeline, the header names it; otherwise the tile does.
    const QString name = item.group && item.group->title == t.dashboardPipeline
                             ? t.table
                             : t.dashboardPipeline + QLatin1Char('/') + t.table;
    const QIcon state = stateIcon(r.state);
    const QString key = QStringLiteral("t|%1|%2|%3").arg(name, level).arg(int(state.isNull() ? -1 : int(r.state)));
    m_memo.paint(&p, item.rect, key, [&](QPainter *q, const QRect &rect) {
        drawTile(*q, rect, tint, false);
        const QRect in = rect.adjusted(kPad, kPad - 2, -kPad, -kPad + 1);
        freshnessIcon(r.freshness).paint(q, QRect(in.left(), in.top() + (line - kIcon) / 2, kIcon, kIcon));
        int right = in.right();
        if (!state.isNull()) {
            state.paint(q, QRect(right - kIcon + 1, in.top() + (line - kIcon) / 2, kIcon, kIcon));
            right -= kIcon + 3;
        }
        q->setPen(tint.text);
        const QRect nameRect(in.left() + kIcon + 4, in.top(), right - in.left() - kIcon - 4, line);
        q->drawText(nameRect, Qt::AlignVCenter | Qt::AlignLeft, fm.elidedText(name, Qt::ElideMiddle, nameRect.width()));
    });
    p.setPen(tint.text);
    // A two-way pipeline's table has a tile per direction; the facts line starts with its way.
    QString facts = tr("lag %1 \u00b7 %2").arg(formatLag(r.lagSeconds), rate(t.rowsPerSecond));
    if (!t.direction.isEmpty())
        facts = t.direction + QStringLiteral(" \u00b7 ") + facts;
    p.drawText(QRect(inner.left(), inner.top() + line, inner.width(), line), Qt::AlignVCenter | Qt::AlignLeft,
               fm.elidedText(facts, Qt::ElideRight, inner.width()));

    // The sparkline: lag over the last snapshots, scaled to its own peak so a small table's
    // movement shows (the tint tells the level), the SLA as a dotted line when within.
    const QRectF spark(inner.left(), inner.top() + 2 * line + 2, inner.width(),
                       inner.bottom() - inner.top() - 2 * line - 2);
    const std::vector<float> lag = t.lag();
    if (spark.height() < 4 || lag.size() < 2)
        return;
    const float peak = *std::max_element(lag.begin(), lag.end());
    const double top = std::max(double(peak) * 1.15, 1.0);
    const auto yOf = [&](double v) { return spark.bottom() - spark.height() * std::clamp(v / top, 0.0, 1.0); };
    if (r.slaSeconds > 0 && r.slaSeconds <= top) {
        p.setPen(QPen(tint.border, 0, Qt::DotLine));
        p.drawLine(QPointF(spark.left(), yOf(r.slaSeconds)), QPointF(spark.right(), yOf(r.slaSeconds)));
    }
    const double step = spark.width() / double(DashboardTiles::kHistory - 1);
    const double x0 = spark.right() - step * double(lag.size() - 1);
    QPolygonF line2;
    line2.reserve(static_cast<qsizetype>(lag.size()));
    for (std::size_t i = 0; i < lag.size(); ++i)
        line2 << QPointF(x0 + step * double(i), yOf(lag[i]));
    // Aliased and one pixel wide: the raster engine's fast path; antialiased, 70 sparklines on
    // screen were most of a repaint.
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(QPen(tint.border, 0));
    p.drawPolyline(line2);
    p.setRenderHint(QPainter::Antialiasing, true);
}

const DashboardGrid::Item *DashboardGrid::itemAt(const QPoint &pos) const
{
    for (const Item &item : m_items)
        if (item.kind != Item::Header && item.rect.contains(pos))
            return &item;
    return nullptr;
}

void DashboardGrid::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton)
        return QWidget::mouseReleaseEvent(event);
    const Item *item = itemAt(event->position().toPoint());
    if (!item)
        return;
    if (item->kind == Item::TableTile)
        emit tableClicked(item->table->pipeline, item->table->table);
    else if (item->kind == Item::PipelineTile)
        emit pipelineClicked(item->pipeline->name);
}

void DashboardGrid::contextMenuEvent(QContextMenuEvent *event)
{
    const Item *item = itemAt(event->pos());
    if (!item || item->kind != Item::PipelineTile)
        return QWidget::contextMenuEvent(event);
    const auto &pl = *item->pipeline;
    const QString pipeline = pl.name;
    QMenu menu(this);
    menu.setObjectName(QStringLiteral("pipelineTileMenu"));
    // A pipeline stopped by a change of source: its way back first.
    if (pl.sourceChanged) {
        menu.addAction(namedIcon(QStringLiteral("refresh")), tr("Recover %1\u2026").arg(pipeline), this,
                       [this, pipeline] { emit recoverRequested(pipeline); });
        menu.addSeparator();
    }
    // The Tables page asks and pauses (pausePipelineRequested); the tile's counts say what is left.
    QAction *pause = menu.addAction(namedIcon(QStringLiteral("pause")), tr("Pause Pipeline %1\u2026").arg(pipeline),
                                    this, [this, pipeline] { emit pausePipelineRequested(pipeline, true); });
    pause->setObjectName(QStringLiteral("pausePipeline"));
    pause->setEnabled(pl.paused < pl.tables);
    QAction *resume = menu.addAction(namedIcon(QStringLiteral("start")), tr("Resume Pipeline %1\u2026").arg(pipeline),
                                     this, [this, pipeline] { emit pausePipelineRequested(pipeline, false); });
    resume->setObjectName(QStringLiteral("resumePipeline"));
    resume->setEnabled(pl.paused > 0);
    menu.exec(event->globalPos());
}

QString DashboardGrid::toolTipFor(const Item &item) const
{
    if (item.kind == Item::PipelineTile) {
        QString text = m_selected == item.pipeline->name
                           ? tr("Click to show every pipeline's tables again")
                           : tr("Click to show only %1's tables").arg(item.pipeline->name);
        text += tr("\nRight-click to pause or resume the whole pipeline");
        if (item.pipeline->sourceChanged)
            text += tr("\nThe source changed under it (another server, or another history): bring the target back "
                       "with Recover\u2026 on this tile's context menu (driftless-cli recover %1), or reload it with "
                       "driftless-cli resnapshot %1")
                        .arg(item.pipeline->name);
        if (!item.pipeline->slotError.isEmpty())
            text += tr("\nIts slots could not be read: %1").arg(item.pipeline->slotError);
        if (item.pipeline->slot == DashboardTiles::Pipeline::Slot::NotNeeded)
            text += tr("\nIt needs no replication slot: only CDC from a Postgres source reads one");
        else if (item.pipeline->slot == DashboardTiles::Pipeline::Slot::None)
            text += tr("\nIts replication slot is made when the sync first starts (Start Sync)");
        return text;
    }
    const auto &r = *item.table->report;
    QString text = tr("%1 / %2\n%3, %4, freshness %5, lag %6 (SLA %7)")
                       .arg(item.table->pipeline, item.table->table, strategyLabel(r.strategy), stateLabel(r.state),
                            spelled(r.freshness), formatLag(r.lagSeconds), formatDuration(r.slaSeconds));
    if (!r.message.empty())
        text += QLatin1Char('\n') + QString::fromStdString(r.message);
    return text + tr("\nClick for its detail");
}

bool DashboardGrid::event(QEvent *event)
{
    if (event->type() == QEvent::Enter) {
        m_pointerOver = true;
    } else if (event->type() == QEvent::Leave) {
        m_pointerOver = false;
        // The order held while the pointer was here gives way to the latest.
        if (m_held)
            setContent(m_latestPipelines, m_latestGroups, m_selected);
    }
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        if (const Item *item = itemAt(help->pos()))
            QToolTip::showText(help->globalPos(), toolTipFor(*item), this, item->rect);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

QRect DashboardGrid::tableRect(const QString &pipeline, const QString &table) const
{
    for (const Item &item : m_items)
        if (item.kind == Item::TableTile && item.table->pipeline == pipeline && item.table->table == table)
            return item.rect;
    return {};
}

QRect DashboardGrid::pipelineRect(const QString &pipeline) const
{
    for (const Item &item : m_items)
        if (item.kind == Item::PipelineTile && item.pipeline->name == pipeline)
            return item.rect;
    return {};
}

QStringList DashboardGrid::shownTables() const
{
    QStringList out;
    for (const Item &item : m_items)
        if (item.kind == Item::TableTile)
            out << item.table->pipeline + QLatin1Char('/') + item.table->table;
    return out;
}

QStringList DashboardGrid::groupTitles() const
{
    QStringList out;
    for (const Item &item : m_items)
        if (item.kind == Item::Header)
            out << item.group->title;
    return out;
}

} // namespace driftless::ui
