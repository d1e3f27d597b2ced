// Which Postgres cluster and timeline answer behind the source's address, whether the stored
// positions still belong to their history, and the recovery by diff when they do not
// (ARCHITECTURE.md P6, docs/failover.md).

#include "core/engine/cdc/pg/cdcpipeline.h"
#include "core/engine/cdc/pg/pgcdctable.h"

#include "core/base/clock.h"
#include "core/db/pgconnection.h"
#include "core/db/pgreplication.h"
#include "core/engine/cdc/pg/slotcreation.h"
#include "core/engine/schema/columnbackfill.h"
#include "core/model/error.h"

#include <algorithm>

namespace driftless::core {

bool CdcPipeline::recoveryAllowed() const
{
    if (m_jobs.front().recoverAuto)
        return true;
    for (const auto &t : m_tables)
        if (t->merger && t->position && t->merger->pendingRequest() == "recover")
            return true;
    return false;
}

void CdcPipeline::sourceChanged(const std::string &what, const std::string &why)
{
    // A change the stream cannot read on from: brought back by diff when asked (recover: auto, or
    // `driftless-cli recover`), else a stop that names both ways back.
    if (recoveryAllowed()) {
        m_recovery = Recovery{what, wallClockMs(), {}, 0, 0};
        return;
    }
    throw SourceChangedError(
        what + "; " + why + "; nothing was read from it", {},
        "bring the target back to this server by diff: driftless-cli recover " + m_pipeline +
            " (or set recover: auto on the pipeline), or load it again: driftless-cli resnapshot " + m_pipeline);
}

void CdcPipeline::checkSourceIdentity(PgReplicationConnection &repl)
{
    const auto sys = repl.identifySystem();
    m_systemId = sys.systemId;
    m_timeline = sys.timeline;
    m_sourceChange.clear();
    m_recovery.reset();
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
        return sourceChanged("the source changed: another Postgres cluster answers (system id " + storedSystem +
                                 " -> " + m_systemId + ", timeline " + std::to_string(m_timeline) + ")",
                             table + " was synced from the other one");
    if (storedTimeline == 0 || storedTimeline == m_timeline)
        return;
    // The same cluster on another timeline: a promoted standby or a restore to a point in time.
    // Its history is ours only up to where it left our timeline.
    const auto history = repl.timelineHistory(m_timeline);
    const auto branch = history.find(storedTimeline);
    const std::string what = "the source changed (system id " + m_systemId + ", timeline " +
                             std::to_string(storedTimeline) + " -> " + std::to_string(m_timeline) +
                             ": a promoted standby, or a restore to a point in time)";
    if (branch == history.end())
        return sourceChanged(what, "timeline " + std::to_string(m_timeline) + " does not descend from timeline " +
                                       std::to_string(storedTimeline) + ", which " + table + " was synced on");
    if (applied > branch->second)
        return sourceChanged(what, "the new timeline left timeline " + std::to_string(storedTimeline) + " at " +
                                       formatLsn(branch->second) + ", but " + table + " was synced up to " +
                                       formatLsn(applied) +
                                       ": the target holds changes this server never had (they died with the old "
                                       "primary)");
    m_sourceChange = what + ", which continues the history the target has (it left timeline " +
                     std::to_string(storedTimeline) + " at " + formatLsn(branch->second) + ")";
    m_observer.event(Level::Warn, m_tables.front()->key, "source_changed", m_sourceChange);
}

std::int64_t CdcPipeline::startRecovery(PgReplicationConnection &repl, PgConnection &src, bool slotThere)
{
    // Whatever slot of this name the server has (one a restore brought back) is not the target's
    // history: it goes, and a new one starts where the stream takes over.
    if (slotThere)
        src.execParams("SELECT pg_drop_replication_slot($1)", {m_slot});
    auto created =
        createSlotWatched(repl, m_slot, false, m_jobs.front().source, m_stop, slotWaitReporter(tablePointers()));
    long long tables = 0;
    for (auto &t : m_tables) {
        if (!t->position || t->position->stopped)
            continue; // a stopped table waits for the copy that ends its stop
        if (!t->streaming()) {
            t->position.reset(); // a load in flight starts over on this server
            continue;
        }
        // Every version from here on outranks what the old server wrote.
        t->merger->setEpoch(t->merger->epoch() + 1);
        t->position->lsn = created.consistentPoint;
        t->position->slot = m_slot;
        t->position->rebackfill.reset();
        t->rebackfill.reset();
        t->version = created.consistentPoint;
        m_session->inTransaction([&] { t->merger->writeCheckpointInTransaction({positionOf(*t), t->version}, 0); });
        if (t->position->paused) {
            t->merger->setRequest(""); // its Resume copies it again from the new server
            continue;
        }
        t->merger->setRequest("rebackfill"); // compared page by page against the new server
        m_recovery->pending.insert(t.get());
        m_observer.tableState(t->key, TableState::Backfilling, kRecoveryMessage, std::nullopt);
        ++tables;
    }
    m_observer.event(Level::Warn, m_tables.front()->key, "source_changed",
                     m_recovery->what + ": recovering by diff: " + std::to_string(tables) +
                         " table(s) compared with the new server and the differing rows copied, while the stream "
                         "goes on from " +
                         formatLsn(created.consistentPoint) + " (replication slot " + m_slot + " created there)");
    if (m_recovery->pending.empty())
        m_recovery.reset();
    return created.consistentPoint;
}

void CdcPipeline::recoveredTable(Table &t, long long compared, long long written)
{
    if (!m_recovery || !m_recovery->pending.erase(&t))
        return;
    m_recovery->compared += compared;
    m_recovery->written += written;
    if (!m_recovery->pending.empty())
        return;
    const long long secs = std::max<long long>(0, (wallClockMs() - m_recovery->startedMs + 500) / 1000);
    m_observer.event(Level::Info, m_tables.front()->key, "source_changed",
                     m_recovery->what + ": recovered by diff, " + withThousands(m_recovery->written) +
                         " rows copied of " + withThousands(m_recovery->compared) + " compared, in " +
                         std::to_string(secs) + " s");
    m_recovery.reset();
}

} // namespace driftless::core
