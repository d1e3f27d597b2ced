#pragma once

#include "core/engine/jobs/observer.h"
#include "core/engine/run/stateobserver.h"
#include "core/model/staterecords.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace driftless::ui {

/// Chained after the engine's StateObserver while the engine runs. Keeps a copy of every table's
/// status and the newest events in memory, so the UI thread can build snapshots without touching
/// SQLite (whose writers may wait on each other for seconds) and without holding a pointer into
/// objects the engine thread owns.
///
/// Thread safety: callbacks arrive from engine workers; follow()/unfollow() are called by the
/// engine thread while no callbacks run (before and after Scheduler::run); tables(), events()
/// and changes() may be called from any thread.
class LiveObserver final : public core::EngineObserver {
public:
    /// `initial`: the events already stored, newest first.
    explicit LiveObserver(std::vector<core::EventRecord> initial = {}, std::size_t capacity = 200);

    /// Follows `source`'s statuses: callbacks only mark them changed, and tables() copies them
    /// when asked (once per snapshot, not once per callback: with 1,000 tables every callback
    /// copying all of them was a large share of the engine's CPU, B12). `source` must outlive
    /// the following until unfollow().
    void follow(const core::StateObserver &source);
    /// Takes a last copy and forgets the source.
    void unfollow();

    void tableState(const core::TableKey &key, core::TableState state, const std::string &message,
                    std::optional<core::Progress> progress) override;
    void batchApplied(const core::TableKey &key, const core::ApplyResult &result, const core::Checkpoint &checkpoint,
                      std::optional<std::int64_t> freshAsOfMs) override;
    void event(core::Level level, const core::TableKey &key, const std::string &kind,
               const std::string &message) override;

    /// Records an event that concerns no single table (the engine starting or stopping).
    void addEvent(core::EventRecord e);

    std::vector<core::TableStatus> tables() const;
    /// Newest first.
    std::vector<core::EventRecord> events() const;
    /// Grows with every change, so a poller can skip rebuilding when nothing happened.
    std::uint64_t changes() const { return m_changes.load(std::memory_order_relaxed); }

private:
    void markChanged();
    /// Copies the source's statuses when they changed; m_mutex held.
    void refreshLocked() const;

    mutable std::mutex m_mutex;
    const core::StateObserver *m_source = nullptr;
    mutable std::vector<core::TableStatus> m_tables;
    mutable bool m_stale = false;
    std::deque<core::EventRecord> m_events;
    std::size_t m_capacity;
    std::atomic<std::uint64_t> m_changes{0};
};

} // namespace driftless::ui
