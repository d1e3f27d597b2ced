// Which Postgres cluster and timeline answer behind the source's address, and whether the stored
// positions still belong to their history (ARCHITECTURE.md P6, docs/failover.md).

#include "core/engine/cdc/pg/cdcpipeline.h"
#include "core/engine/cdc/pg/cdcpipelinetable.h"

#include "core/db/pgreplication.h"
#include "core/model/error.h"

#include <algorithm>

namespace driftless::core {

void CdcPipeline::checkSourceIdentity(PgReplicationConnection &repl)
{
    const auto sys = repl.identifySystem();
    m_systemId = sys.systemId;
    m_timeline = sys.timeline;
    m_sourceChange.clear();
    const std::string fix = "load the pipeline again from this server: driftless-cli resnapshot " + m_pipeline;
    std::string storedSystem;
    int storedTimeline = 0;
    std::int64_t applied = 0;
    std::string table;
    for (auto &t : m_tables) {
        if (!t->position)
            continue;
        if (!t->position->systemId.empty() && t->position->systemId != m_systemId) {
            storedSystem = t->position->systemId;
            table = t->job.spec.table.display();
        }
        storedTimeline = std::max(storedTimeline, t->position->timeline);
        if (t->streaming() && !t->position->stopped && t->streamLsn() > applied) {
            applied = t->streamLsn();
            if (storedSystem.empty())
                table = t->job.spec.table.display();
        }
    }
    if (!storedSystem.empty())
        throw Error(ErrorKind::Permanent,
                    "the source changed: another Postgres cluster answers (system id " + m_systemId + ", timeline " +
                        std::to_string(m_timeline) + "), where " + table + " was synced from system id " +
                        storedSystem + "; nothing was read from it",
                    {}, "point the endpoint back at the original cluster, or " + fix);
    if (storedTimeline == 0 || storedTimeline == m_timeline)
        return;
    // The same cluster on another timeline: a promoted standby or a restore to a point in time.
    // Its history is ours only up to where it left our timeline.
    const auto history = repl.timelineHistory(m_timeline);
    const auto branch = history.find(storedTimeline);
    const std::string what = "the source changed: system id " + m_systemId + ", timeline " +
                             std::to_string(storedTimeline) + " -> " + std::to_string(m_timeline) +
                             " (a promoted standby, or a restore to a point in time)";
    if (branch == history.end())
        throw Error(ErrorKind::Permanent,
                    what + "; timeline " + std::to_string(m_timeline) + " does not descend from timeline " +
                        std::to_string(storedTimeline) + ", which " + table + " was synced on; nothing was read from it",
                    {}, fix);
    if (applied > branch->second)
        throw Error(ErrorKind::Permanent,
                    what + "; the new timeline left timeline " + std::to_string(storedTimeline) + " at " +
                        formatLsn(branch->second) + ", but " + table + " was synced up to " + formatLsn(applied) +
                        ": the target holds changes this server never had (they died with the old primary); nothing "
                        "was read from it",
                    {}, fix);
    m_sourceChange = what + ", which continues the history the target has (it left timeline " +
                     std::to_string(storedTimeline) + " at " + formatLsn(branch->second) + ")";
    m_observer.event(Level::Warn, m_tables.front()->key, "source_changed", m_sourceChange);
}

} // namespace driftless::core
