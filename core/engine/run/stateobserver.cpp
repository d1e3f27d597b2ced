#include "core/engine/run/stateobserver.h"

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/engine/status/freshness.h"
#include "core/model/error.h"

namespace driftless::core {

StateObserver::StateObserver(StateStore &store, const std::vector<TableJob> &jobs) : m_store(store)
{
    for (const auto &j : jobs) {
        StateStore::TableStatus s;
        std::optional<StateStore::TableStatus> stored;
        try {
            stored = m_store.tableStatus(j.pipeline, j.spec.table);
        } catch (const Error &e) {
            log(LogLevel::Warn, "cannot read the workspace mirror: " + e.describe());
        }
        if (stored)
            s = *stored;
        s.pipeline = j.pipeline;
        s.table = j.spec.table;
        s.strategy = j.spec.strategy;
        s.progress.reset();
        s.backfillRows.reset();
        s.backfillTotal.reset();
        s.backfillEtaSeconds.reset();
        m_status[{j.pipeline, j.spec.table}] = s;
    }
}

void StateObserver::persist(const StateStore::TableStatus &s)
{
    try {
        m_store.upsertTableStatus(s);
    } catch (const Error &e) {
        log(LogLevel::Warn, "workspace mirror not updated (the sync goes on): " + e.describe());
    }
}

void StateObserver::tableState(const TableKey &key, TableState state, const std::string &message,
                               std::optional<Progress> progress)
{
    StateStore::TableStatus copy;
    {
        std::lock_guard lock(m_mutex);
        auto &s = m_status[{key.pipeline, key.table}];
        s.pipeline = key.pipeline;
        s.table = key.table;
        s.strategy = key.strategy;
        s.state = state;
        s.message = message;
        s.updatedAtMs = wallClockMs();
        if (progress) {
            s.progress = progress->fraction();
            s.backfillRows = progress->rows;
            if (progress->total > 0)
                s.backfillTotal = std::max(progress->total, progress->rows);
            else
                s.backfillTotal.reset(); // never analyzed: unknown
            // The expected end, from the rate since this process first saw the backfill.
            auto [it, fresh] =
                m_backfillBase.try_emplace({key.pipeline, key.table}, RateBase{s.updatedAtMs, progress->rows});
            if (!fresh && progress->rows < it->second.rows)
                it->second = {s.updatedAtMs, progress->rows};
            double elapsed = static_cast<double>(s.updatedAtMs - it->second.atMs) / 1000.0;
            long long done = progress->rows - it->second.rows;
            if (s.backfillTotal && elapsed >= 1.0 && done > 0)
                s.backfillEtaSeconds = static_cast<double>(*s.backfillTotal - progress->rows) * elapsed / done;
            else
                s.backfillEtaSeconds.reset();
        } else {
            s.progress.reset();
            s.backfillRows.reset();
            s.backfillTotal.reset();
            s.backfillEtaSeconds.reset();
            m_backfillBase.erase({key.pipeline, key.table});
        }
        copy = s;
    }
    persist(copy);
    if (m_next)
        m_next->tableState(key, state, message, progress);
}

void StateObserver::batchApplied(const TableKey &key, const ApplyResult &result, const Checkpoint &checkpoint,
                                 std::optional<std::int64_t> freshAsOfMs)
{
    StateStore::TableStatus copy;
    {
        std::lock_guard lock(m_mutex);
        auto &s = m_status[{key.pipeline, key.table}];
        s.pipeline = key.pipeline;
        s.table = key.table;
        s.strategy = key.strategy;
        s.rowsApplied += result.rowsWritten;
        s.checkpoint = checkpoint.position;
        s.version = checkpoint.version;
        s.lastSyncAtMs = wallClockMs();
        if (freshAsOfMs)
            s.freshAsOfMs = std::max(s.freshAsOfMs.value_or(0), *freshAsOfMs);
        s.updatedAtMs = wallClockMs();
        copy = s;
    }
    persist(copy);
    if (m_next)
        m_next->batchApplied(key, result, checkpoint, freshAsOfMs);
}

void StateObserver::event(Level level, const TableKey &key, const std::string &kind, const std::string &message)
{
    try {
        m_store.addEvent(level, key.pipeline, key.table.display(), kind, message);
    } catch (const Error &e) {
        log(LogLevel::Warn, "event not recorded: " + e.describe());
    }
    if (m_next)
        m_next->event(level, key, kind, message);
}

void StateObserver::conflict(const ConflictRecord &c)
{
    try {
        m_store.addConflict(c);
    } catch (const Error &e) {
        // The rows stay as they were on both sides; the next change of the row queues it again.
        log(LogLevel::Warn, "conflict on " + c.table + " " + c.key + " not queued: " + e.describe());
    }
    if (m_next)
        m_next->conflict(c);
}

void StateObserver::runStarted(const TableKey &key)
{
    try {
        auto id = m_store.startRun(key.pipeline, key.table, key.strategy);
        std::lock_guard lock(m_mutex);
        m_runIds[{key.pipeline, key.table}] = id;
    } catch (const Error &e) {
        log(LogLevel::Warn, "run not recorded: " + e.describe());
    }
    tableState(key, TableState::Running, "", std::nullopt);
    if (m_next)
        m_next->runStarted(key);
}

void StateObserver::runFinished(const TableKey &key, const std::string &status, long long rows,
                                const std::string &error)
{
    std::int64_t id = 0;
    {
        std::lock_guard lock(m_mutex);
        auto it = m_runIds.find({key.pipeline, key.table});
        if (it != m_runIds.end())
            id = it->second;
    }
    if (id) {
        try {
            m_store.finishRun(id, status, rows, error);
        } catch (const Error &e) {
            log(LogLevel::Warn, "run not recorded: " + e.describe());
        }
    }
    if (m_next)
        m_next->runFinished(key, status, rows, error);
}

void StateObserver::tick()
{
    const auto now = wallClockMs();
    std::vector<StateStore::LagSample> samples;
    bool sample = false, prune = false;
    {
        std::lock_guard lock(m_mutex);
        const std::int64_t since = now - m_lastSampleMs;
        sample = since >= 5000;
        if (sample)
            m_lastSampleMs = now;
        prune = now - m_lastPruneMs >= 600'000;
        if (prune)
            m_lastPruneMs = now;
        for (auto &[k, s] : m_status) {
            if (!sample)
                break;
            // Rows written per second since the previous sample (none before the first).
            double rate = 0;
            auto [it, first] = m_rowsAtLastSample.try_emplace(k, s.rowsApplied);
            if (!first && since > 0 && s.rowsApplied >= it->second)
                rate = static_cast<double>(s.rowsApplied - it->second) * 1000.0 / static_cast<double>(since);
            it->second = s.rowsApplied;
            auto lag = lagSeconds(s.freshAsOfMs, now);
            if (lag)
                samples.push_back({s.pipeline, s.table.display(), now, *lag, rate});
        }
    }
    try {
        for (auto &s : samples)
            m_store.addLagSample(s);
        if (prune)
            m_store.pruneLagSamples(now, kSampleKeepMs);
    } catch (const Error &e) {
        log(LogLevel::Warn, "lag sample not recorded: " + e.describe());
    }
    if (m_next)
        m_next->tick();
}

std::vector<StateStore::TableStatus> StateObserver::snapshot() const
{
    std::lock_guard lock(m_mutex);
    std::vector<StateStore::TableStatus> out;
    for (auto &[k, s] : m_status)
        out.push_back(s);
    return out;
}

} // namespace driftless::core
