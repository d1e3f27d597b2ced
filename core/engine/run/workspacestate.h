#pragma once

#include "core/engine/jobs/pauses.h"
#include "core/engine/reconcile/reconciler.h"
#include "core/engine/slots/slots.h"
#include "core/engine/status/statusreport.h"
#include "core/model/staterecords.h"
#include "core/model/workspace.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

class StateStore;

/// The faces' one door into a stored workspace (its state file): what the app and the CLI read
/// of it (snapshots, history, reports) and the commands a DBA gives it (apply, pause, promote,
/// notes), so no face opens the SQLite file or writes its tables itself.
///
/// Never creates a workspace by accident: the constructor refuses a missing file (a mistyped
/// path leaves nothing behind); create() is for `apply`, which makes one.
///
/// Thread safety: as StateStore (any thread; several processes may open the same file).
/// Failure: throws Error.
class WorkspaceState {
public:
    /// Opens the workspace at `path`. Throws ConfigError when there is none, saying how to
    /// store one.
    explicit WorkspaceState(const std::string &path);
    /// Opens the workspace at `path`, creating an empty one when there is none.
    static WorkspaceState create(const std::string &path);
    ~WorkspaceState();
    WorkspaceState(WorkspaceState &&) noexcept;
    WorkspaceState &operator=(WorkspaceState &&) noexcept;

    const std::string &path() const;
    /// Where a workspace lives when none is named: $XDG_DATA_HOME/driftless/workspace.db.
    static std::string defaultPath();

    /// Everything a status view shows at one moment: the workspace, each table's report (as
    /// `status --json` builds it) and the newest events.
    struct Snapshot {
        Workspace workspace;
        std::vector<TableReport> tables;
        std::vector<EventRecord> events; ///< newest first
    };
    Snapshot snapshot(std::int64_t nowMs, int eventLimit);

    Workspace workspace();
    /// Newest first; `pipeline` and `table` (as TableRef::display() writes it) empty for all.
    std::vector<EventRecord> events(int limit, const std::string &pipeline = {}, const std::string &table = {});
    std::vector<LagSample> lagSamples(const std::string &pipeline, const std::string &table, std::int64_t sinceMs);
    std::vector<SlotSample> slotSamples(const std::string &source, const std::string &slot, std::int64_t sinceMs);
    /// Every replication slot of the workspace's Postgres sources, read now (listSlots: blocking,
    /// a source that cannot be read carries its error), each with its time to the limit projected
    /// from the samples a running engine stored plus this reading (projectSlots). Stored samples
    /// that cannot be read leave the projection unset. Then one SourceSlots per MariaDB/MySQL
    /// source of CDC pipelines, with each pipeline's binlog retention (addBinlogs). With `record`,
    /// the reading is also stored as a sample of each slot's history (a face that reads slots
    /// while no engine runs keeps the history going).
    std::vector<SourceSlots> slotsNow(bool record = false);

    /// Newest first; `pipeline` empty for all.
    std::vector<ReconcileSummary> reconcileSummaries(int limit, const std::string &pipeline = {});
    /// Stores a reconciliation report (setting its id) with one event per table (core::storeReport).
    void storeReport(ReconcileReport &report);
    /// A stored report, or nullopt.
    std::optional<ReconcileReport> loadReport(std::int64_t id);
    /// The stored reports, newest first (core::listReports).
    std::vector<ReportListing> listReports(int limit, const std::string &pipeline = {});
    /// Records what a repair did (core::recordRepair).
    void recordRepair(const ReconcileReport &report, const std::vector<RepairOutcome> &outcomes);

    /// Makes the stored workspace equal to `ws` (StateStore::applyWorkspace).
    ApplySummary apply(const Workspace &ws);
    /// Pauses or resumes tables of a pipeline of `ws` (setTablesPaused).
    std::vector<PauseChange> setPaused(const Workspace &ws, const std::string &pipeline,
                                       const std::vector<std::string> &tables, bool pause);
    /// Moves tables a slot guard sent to cursor sync back to CDC (promoteToCdc); one line per table.
    std::vector<std::string> promoteToCdc(const std::string &pipeline, const std::vector<std::string> &tables);
    /// An engine lifecycle note (engine_started, engine_stopped, ...) in the event log, at info.
    void note(const std::string &kind, const std::string &message);
    /// An event at `level` about a table (`pipeline` and `table` empty: about the workspace).
    void note(Level level, const std::string &pipeline, const std::string &table, const std::string &kind,
              const std::string &message);

    /// For the engine and the reconciler, which write the file as they run.
    StateStore &store();

private:
    explicit WorkspaceState(std::unique_ptr<StateStore> store);
    std::unique_ptr<StateStore> m_store;
};

} // namespace driftless::core
