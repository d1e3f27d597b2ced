#pragma once

#include "core/engine/jobs/observer.h"
#include "core/engine/sync/tablesync.h"
#include "core/state/statestore.h"

#include <map>
#include <mutex>
#include <vector>

namespace driftless::core {

/// Mirrors what the engine does into the workspace's StateStore (table status, runs, events,
/// lag samples) and keeps the same in memory for live displays.
///
/// The mirror is not the authority (the target's checkpoint is), so a failing StateStore (disk
/// full, locked by another process) never stops a sync: the write is logged and retried with the
/// next update.
class StateObserver : public EngineObserver {
public:
    StateObserver(StateStore &store, const std::vector<TableJob> &jobs);

    void tableState(const TableKey &key, TableState state, const std::string &message,
                    std::optional<Progress> progress) override;
    void batchApplied(const TableKey &key, const ApplyResult &result, const Checkpoint &checkpoint,
                      std::optional<std::int64_t> freshAsOfMs) override;
    void event(Level level, const TableKey &key, const std::string &kind, const std::string &message) override;
    void runStarted(const TableKey &key) override;
    void runFinished(const TableKey &key, const std::string &status, long long rows, const std::string &error) override;
    void tick() override;
    void conflict(const ConflictRecord &c) override;

    /// Samples are kept this long (thinned to one a minute past an hour).
    static constexpr std::int64_t kSampleKeepMs = 7LL * 24 * 3600 * 1000;

    /// A copy of every table's status, for display.
    std::vector<StateStore::TableStatus> snapshot() const;
    /// Chains another observer (a live display) after this one.
    void setNext(EngineObserver *next) { m_next = next; }

private:
    using Key = std::pair<std::string, TableRef>;
    void persist(const StateStore::TableStatus &s);

    StateStore &m_store;
    mutable std::mutex m_mutex;
    std::map<Key, StateStore::TableStatus> m_status;
    std::map<Key, std::int64_t> m_runIds;
    struct RateBase {
        std::int64_t atMs = 0;
        long long rows = 0;
    };
    std::map<Key, RateBase> m_backfillBase; ///< where the running backfill stood when first seen

    std::int64_t m_lastSampleMs = 0;
    std::int64_t m_lastPruneMs = 0;
    std::map<Key, std::int64_t> m_rowsAtLastSample; ///< for rows/s between samples
    EngineObserver *m_next = nullptr;
};

} // namespace driftless::core
