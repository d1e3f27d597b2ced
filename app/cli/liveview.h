#pragma once

#include "core/engine/jobs/observer.h"
#include "core/engine/run/stateobserver.h"
#include "core/model/workspace.h"

#include <map>
#include <mutex>

namespace driftless::cli {

/// What `driftless-cli run` prints while it runs. On a terminal: a status line redrawn once a
/// second, with events printed above it. Otherwise: one log line per event and per finished pass.
class LiveView final : public core::EngineObserver {
public:
    LiveView(const core::Workspace &ws, const core::StateObserver &state, bool terminal);
    ~LiveView() override;

    void tableState(const core::TableKey &key, core::TableState state, const std::string &message,
                    std::optional<core::Progress> progress) override;
    void batchApplied(const core::TableKey &key, const core::ApplyResult &result, const core::Checkpoint &checkpoint,
                      std::optional<std::int64_t> freshAsOfMs) override;
    void event(core::Level level, const core::TableKey &key, const std::string &kind,
               const std::string &message) override;
    void tick() override;

private:
    void printLine(const std::string &line);
    std::string statusLine() const;

    const core::Workspace &m_ws;
    const core::StateObserver &m_state;
    bool m_terminal;
    std::mutex m_mutex;
    bool m_lineShown = false;
    struct PassTotals {
        long long read = 0;
        long long written = 0;
        int batches = 0;
        std::int64_t sinceMs = 0; ///< CDC: start of the period being summed up
    };
    std::map<std::string, PassTotals> m_pass;
};

} // namespace driftless::cli
