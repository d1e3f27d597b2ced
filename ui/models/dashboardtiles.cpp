#include "ui/models/dashboardtiles.h"

#include "ui/displayformat.h"

#include <algorithm>
#include <map>

namespace driftless::ui {

int DashboardTiles::freshnessRank(core::Freshness f)
{
    switch (f) {
    case core::Freshness::Ok:
        return 0;
    case core::Freshness::Unknown:
        return 1;
    case core::Freshness::Warn:
        return 2;
    case core::Freshness::Breach:
        return 3;
    }
    return 1;
}

int DashboardTiles::freshnessIndex(core::Freshness f)
{
    switch (f) {
    case core::Freshness::Ok:
        return 0;
    case core::Freshness::Warn:
        return 1;
    case core::Freshness::Breach:
        return 2;
    case core::Freshness::Unknown:
        return 3;
    }
    return 3;
}

int DashboardTiles::severity(const core::TableReport &r)
{
    return freshnessRank(r.freshness) + (core::isFailing(r.state) ? 4 : 0);
}

namespace {
core::Freshness worse(core::Freshness a, core::Freshness b)
{
    return DashboardTiles::freshnessRank(b) > DashboardTiles::freshnessRank(a) ? b : a;
}

QString schemaOf(const std::string &table)
{
    const auto dot = table.find('.');
    return dot == std::string::npos ? QString() : QString::fromStdString(table.substr(0, dot));
}
} // namespace

bool DashboardTiles::setSnapshot(const EngineSnapshot &snapshot, std::size_t newTiles)
{
    if (snapshot.generation != m_generation) {
        m_generation = snapshot.generation;
        m_tables.clear();
        m_inOrder.clear();
        m_taking = {};
        m_lastTakenMs = -1;
    }

    // The tiles update in place: at 10,000 tables, rebuilding them (a map keyed by two strings,
    // every report copied into new nodes, five strings converted per table) was most of the UI
    // thread's time per snapshot (B12).
    const SharedList<core::TableReport> &reports = snapshot.tables;
    bool sameOrder = m_inOrder.size() == reports.size();
    for (std::size_t i = 0; sameOrder && i < reports.size(); ++i)
        sameOrder = m_inOrder[i]->first.second == reports[i].table && m_inOrder[i]->first.first == reports[i].pipeline;
    if (sameOrder) {
        m_taking = {};
    } else {
        Taking &t = m_taking;
        if (!t.tables.sharesWith(reports)) {
            // Another list: walked from its start; the tiles made for the last one stay made.
            t.tables = reports;
            t.at = 0;
            t.seen = ++m_setCount;
            t.inOrder.clear();
            t.inOrder.reserve(reports.size());
        }
        std::size_t made = 0;
        for (; t.at < reports.size(); ++t.at) {
            const auto &r = reports[t.at];
            Key key{r.pipeline, r.table};
            auto it = m_tables.find(key);
            if (it == m_tables.end()) {
                it = t.made.lower_bound(key);
                if (it == t.made.end() || it->first != key) {
                    if (made == newTiles)
                        return false;
                    ++made;
                    it = t.made.emplace_hint(it, std::move(key), Table{});
                }
            }
            it->second.seen = t.seen;
            t.inOrder.push_back(it);
        }
        // Every table has its tile: the new ones join (their iterators stay valid), and tables
        // that left the workspace take their rings with them.
        m_tables.merge(t.made);
        for (auto it = m_tables.begin(); it != m_tables.end();)
            it = it->second.seen == t.seen ? std::next(it) : m_tables.erase(it);
        m_inOrder = std::move(t.inOrder);
        m_taking = {};
    }

    // A snapshot read again at the same moment (a refresh) adds no point to the rings.
    const bool newMoment = snapshot.takenAtMs != m_lastTakenMs;
    m_lastTakenMs = snapshot.takenAtMs;
    // The previous snapshot's reports stay until every tile has moved to the new ones: a tile's
    // labels are made again only when its report's parts changed.
    const SharedList<core::TableReport> previous = std::move(m_reports);
    m_reports = snapshot.tables;
    for (std::size_t i = 0; i < m_reports.size(); ++i)
        updateTable(m_inOrder[i]->second, m_reports[i], snapshot.takenAtMs, newMoment);
    updatePipelines();
    return true;
}

void DashboardTiles::updateTable(Table &t, const core::TableReport &r, std::int64_t takenAtMs, bool newMoment)
{
    Ring &ring = t.ring;
    if (newMoment) {
        if (r.lagSeconds) {
            ring.lag[static_cast<std::size_t>(ring.lagHead)] = static_cast<float>(*r.lagSeconds);
            ring.lagHead = (ring.lagHead + 1) % kHistory;
            ring.lagCount = std::min(ring.lagCount + 1, kHistory);
        }
        ring.rows[static_cast<std::size_t>(ring.rowsHead)] = {takenAtMs, r.rowsApplied};
        ring.rowsHead = (ring.rowsHead + 1) % kRateSamples;
        ring.rowsCount = std::min(ring.rowsCount + 1, kRateSamples);
    }
    const bool relabel =
        !t.report || t.report->twoWay != r.twoWay || t.report->source != r.source || t.report->target != r.target;
    t.report = &r;
    if (relabel) {
        t.pipeline = QString::fromStdString(r.pipeline);
        t.table = QString::fromStdString(r.table);
        t.schema = schemaOf(r.table);
        t.dashboardPipeline = r.twoWay.empty() ? t.pipeline : QString::fromStdString(r.twoWay);
        t.direction = directionLabel(r);
    }
    t.rowsPerSecond = 0;
    if (ring.rowsCount >= 2) {
        const auto &newest = ring.rows[static_cast<std::size_t>((ring.rowsHead - 1 + kRateSamples) % kRateSamples)];
        const auto &oldest =
            ring.rows[static_cast<std::size_t>((ring.rowsHead - ring.rowsCount + kRateSamples) % kRateSamples)];
        const double seconds = double(newest.first - oldest.first) / 1000.0;
        // A full refresh starts its count again: a fall is no negative rate.
        if (seconds > 0 && newest.second >= oldest.second)
            t.rowsPerSecond = double(newest.second - oldest.second) / seconds;
    }
    t.severity = severity(r);
    t.lagRatio = r.lagSeconds && r.slaSeconds > 0 ? *r.lagSeconds / r.slaSeconds : 0;
}

std::vector<float> DashboardTiles::Table::lag() const
{
    std::vector<float> out;
    out.reserve(static_cast<std::size_t>(ring.lagCount));
    for (int i = 0; i < ring.lagCount; ++i)
        out.push_back(ring.lag[static_cast<std::size_t>((ring.lagHead - ring.lagCount + i + kHistory) % kHistory)]);
    return out;
}

void DashboardTiles::setSlotSample(const SlotSample &sample)
{
    const bool newWorkspace = !sameWorkspace(sample.workspace, m_slots.workspace);
    m_slots = sample;
    // Which pipelines read a slot follows from the workspace the sample brings.
    if (newWorkspace)
        updatePipelines();
    else
        updateSlots();
}

void DashboardTiles::updatePipelines()
{
    std::map<std::string, Pipeline> pipelines;
    std::map<std::string, std::string> pipelineOf;
    for (const auto &[key, t] : m_tables) {
        const auto &r = *t.report;
        const std::string &shownUnder = r.twoWay.empty() ? r.pipeline : r.twoWay;
        pipelineOf[r.pipeline] = shownUnder;
        Pipeline &p = pipelines[shownUnder];
        if (p.tables == 0) {
            p.name = t.dashboardPipeline;
            p.twoWay = !r.twoWay.empty();
            p.worst = r.freshness;
        }
        ++p.tables;
        p.worst = worse(p.worst, r.freshness);
        ++p.byFreshness[static_cast<std::size_t>(freshnessIndex(r.freshness))];
        if (r.state == core::TableState::SourceChanged)
            ++p.sourceChanged;
        else if (core::isFailing(r.state))
            ++p.failing;
        // CDC from Postgres reads a slot; the binlog of MariaDB/MySQL has none.
        if (r.strategy == core::Strategy::Cdc && m_slots.workspace) {
            const core::PipelineSpec *spec = m_slots.workspace->pipeline(r.pipeline);
            const core::Endpoint *from = spec ? m_slots.workspace->endpoint(spec->source) : nullptr;
            p.readsSlot = p.readsSlot || (from && from->kind == core::EndpointKind::Postgres);
        } else if (r.strategy == core::Strategy::Cdc && !m_slots.workspace) {
            p.readsSlot = true; // not known yet: the slot sample brings the workspace
        }
        if (r.paused)
            ++p.paused;
        p.rowsPerSecond += t.rowsPerSecond;
        p.severity = std::max(p.severity, t.severity);
        // Each table's own newest comparison, as status --json gives it: a newer report that
        // compared other tables of the pipeline (or repaired one) does not clear this one's drift.
        if (r.reconcile && r.reconcile->error.empty()) {
            p.reconciledAtMs = std::max(p.reconciledAtMs.value_or(r.reconcile->finishedMs), r.reconcile->finishedMs);
            p.driftRows += r.reconcile->missing + r.reconcile->extra + r.reconcile->different;
            p.reconciledRows += r.reconcile->sourceRows;
        }
    }
    m_pipelines = std::move(pipelines);
    m_pipelineOf = std::move(pipelineOf);
    updateSlots();
}

void DashboardTiles::updateSlots()
{
    const core::Workspace *ws = m_slots.workspace.get();
    for (auto &[name, p] : m_pipelines) {
        p.hasSlot = false;
        p.slotSecondsToLimit.reset();
        p.slotLimited = false;
        p.slotError.clear();
        if (!p.readsSlot) {
            p.slot = Pipeline::Slot::NotNeeded;
            continue;
        }
        p.slot = m_slots.takenAtMs == 0 ? Pipeline::Slot::NotRead : Pipeline::Slot::None;
        // A source that could not be read may hold its slot all the same: not "none". A failure
        // that names no endpoint of the workspace (an agent that did not answer) covers them all.
        const core::PipelineSpec *spec = ws ? ws->pipeline(name) : nullptr;
        for (const auto &source : m_slots.sources)
            if (!source.error.empty() && (!spec || source.source == spec->source || source.source == spec->target ||
                                          !ws->endpoint(source.source))) {
                p.slot = Pipeline::Slot::Unreadable;
                p.slotError = QString::fromStdString(source.error);
            }
    }
    for (const auto &source : m_slots.sources) {
        for (const auto &slot : source.replicationSlots) {
            const auto owner = m_pipelineOf.find(slot.owner);
            const auto it = owner == m_pipelineOf.end() ? m_pipelines.end() : m_pipelines.find(owner->second);
            if (slot.owner.empty() || it == m_pipelines.end())
                continue;
            Pipeline &p = it->second;
            p.hasSlot = true;
            p.slot = Pipeline::Slot::Present;
            p.slotLimited = p.slotLimited || slotLimitApplies(slot, slotGuardOf(ws, source.source));
            if (slot.secondsToLimit && (!p.slotSecondsToLimit || *slot.secondsToLimit < *p.slotSecondsToLimit))
                p.slotSecondsToLimit = slot.secondsToLimit;
        }
    }
}

std::vector<const DashboardTiles::Pipeline *> DashboardTiles::pipelines() const
{
    std::vector<const Pipeline *> out;
    out.reserve(m_pipelines.size());
    for (const auto &[name, p] : m_pipelines)
        out.push_back(&p);
    if (m_order == Order::Worst)
        std::stable_sort(out.begin(), out.end(),
                         [](const Pipeline *a, const Pipeline *b) { return a->severity > b->severity; });
    return out;
}

std::vector<DashboardTiles::Group> DashboardTiles::groups() const
{
    std::map<QString, Group> byTitle;
    for (const auto &[key, t] : m_tables) {
        if (!m_pipelineFilter.isEmpty() && t.dashboardPipeline != m_pipelineFilter)
            continue;
        if (!m_filter.isEmpty() && !t.table.contains(m_filter, Qt::CaseInsensitive) &&
            !t.pipeline.contains(m_filter, Qt::CaseInsensitive) &&
            !t.direction.contains(m_filter, Qt::CaseInsensitive) &&
            !spelled(t.report->strategy).contains(m_filter, Qt::CaseInsensitive))
            continue;
        QString title;
        switch (m_grouping) {
        case Grouping::Pipeline:
            title = t.dashboardPipeline;
            break;
        case Grouping::Strategy:
            title = strategyLabel(t.report->strategy);
            break;
        case Grouping::Schema:
            title = t.schema.isEmpty() ? QStringLiteral("(no schema)") : t.schema;
            break;
        }
        Group &g = byTitle[title];
        if (g.tables.empty()) {
            g.title = title;
            g.worst = t.report->freshness;
        }
        g.worst = worse(g.worst, t.report->freshness);
        ++g.byFreshness[static_cast<std::size_t>(freshnessIndex(t.report->freshness))];
        g.severity = std::max(g.severity, t.severity);
        g.tables.push_back(&t);
    }
    std::vector<Group> out;
    out.reserve(byTitle.size());
    for (auto &[title, g] : byTitle)
        out.push_back(std::move(g));
    if (m_order == Order::Worst) {
        std::stable_sort(out.begin(), out.end(),
                         [](const Group &a, const Group &b) { return a.severity > b.severity; });
        for (Group &g : out)
            std::stable_sort(g.tables.begin(), g.tables.end(), [](const Table *a, const Table *b) {
                if (a->severity != b->severity)
                    return a->severity > b->severity;
                return a->lagRatio > b->lagRatio;
            });
    }
    // By name: the map's order already (pipeline, then table).
    return out;
}

} // namespace driftless::ui
