#pragma once

#include "core/engine/jobs/observer.h"

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace driftless::test {

/// Collects what the engine reports, for assertions. Optionally calls `onBatch` after each
/// applied batch (tests use it to stop a pass or inject writes between batches).
class RecordingObserver : public core::EngineObserver {
public:
    struct Applied {
        core::ApplyResult result;
        core::Checkpoint checkpoint;
        bool completedPass = false;
        std::string table;
    };

    void tableState(const core::TableKey &key, core::TableState state, const std::string &message,
                    std::optional<core::Progress>) override
    {
        std::lock_guard lock(m_mutex);
        states.push_back(std::string(toString(state)) + (message.empty() ? "" : ": " + message));
        lastStates[key.table.display()] = states.back();
    }
    void batchApplied(const core::TableKey &key, const core::ApplyResult &result, const core::Checkpoint &cp,
                      std::optional<std::int64_t> fresh) override
    {
        {
            std::lock_guard lock(m_mutex);
            applied.push_back({result, cp, fresh.has_value(), key.table.display()});
        }
        if (onBatch)
            onBatch(applied.size());
    }
    void event(core::Level level, const core::TableKey &, const std::string &kind, const std::string &message) override
    {
        std::lock_guard lock(m_mutex);
        events.push_back(std::string(toString(level)) + " " + kind + ": " + message);
    }

    /// Thread-safe lookups while the engine runs on another thread.
    bool sawEvent(const std::string &needle)
    {
        std::lock_guard lock(m_mutex);
        for (auto &e : events)
            if (e.find(needle) != std::string::npos)
                return true;
        return false;
    }
    bool sawState(const std::string &needle)
    {
        std::lock_guard lock(m_mutex);
        for (auto &s : states)
            if (s.find(needle) != std::string::npos)
                return true;
        return false;
    }
    /// Forgets the events so far, while the engine may be reporting more.
    void clearEvents()
    {
        std::lock_guard lock(m_mutex);
        events.clear();
    }
    /// The last state (and message) told for `table` (TableRef::display()), or empty.
    std::string lastStateOf(const std::string &table)
    {
        std::lock_guard lock(m_mutex);
        auto it = lastStates.find(table);
        return it == lastStates.end() ? std::string() : it->second;
    }
    size_t eventIndex(const std::string &needle)
    {
        std::lock_guard lock(m_mutex);
        for (size_t i = 0; i < events.size(); ++i)
            if (events[i].find(needle) != std::string::npos)
                return i;
        return events.size();
    }
    /// Batches with rows applied to `table` so far.
    size_t batchesWithRows(const std::string &table)
    {
        std::lock_guard lock(m_mutex);
        size_t n = 0;
        for (auto &a : applied)
            n += (a.table == table && a.result.rowsWritten > 0) ? 1 : 0;
        return n;
    }

    std::vector<std::string> states;
    std::map<std::string, std::string> lastStates;
    std::vector<Applied> applied;
    std::vector<std::string> events;
    std::function<void(size_t)> onBatch;

private:
    std::mutex m_mutex;
};

} // namespace driftless::test
