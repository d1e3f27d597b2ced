#pragma once

#include "core/engine/jobs/observer.h"
#include "core/model/loopcounters.h"
#include "core/model/workspace.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

struct TableJob;

/// The part a table job plays in a two-way pipeline (`direction: both`): the forward direction
/// (source to target, named after the pipeline) loads the tables once and streams; the reverse
/// direction (target to source, named PipelineSpec::reverseName()) never loads, and streams from
/// the position its slot was created at, before the forward load began.
///
/// Loop prevention: each direction's merger marks what it applies with `applyOrigin` (a
/// Postgres replication origin, or MariaDB's skip_replication flag), and each reader drops the
/// transactions marked with `skipOrigin`, the other direction's mark.
struct TwoWayRole {
    bool reverse = false;
    /// The two-way pipeline's name (both directions).
    std::string pipeline;
    std::string applyOrigin;
    std::string skipOrigin;
    /// Forward direction: the reverse direction's slot and publication on the target, created
    /// before the initial load so that every later change of the target is read back.
    std::string reverseSlot;
    /// This direction's counters (shared by its tables).
    std::shared_ptr<LoopCounters> counters;

    bool operator==(const TwoWayRole &o) const
    {
        return reverse == o.reverse && pipeline == o.pipeline && applyOrigin == o.applyOrigin &&
               skipOrigin == o.skipOrigin && reverseSlot == o.reverseSlot;
    }
};

/// The replication origin (Postgres) a direction's merger applies under: `driftless_<direction>`.
std::string applyOriginName(const std::string &direction);

/// The table a two-way pipeline's reverse direction reads for `t`: the target's table, named as
/// the target's log names it (a MySQL target: in the database its DSN names).
TableRef reverseTableOf(const PipelineSpec &p, const TableSpec &t, const Endpoint &target);

/// The table the reverse direction of forward job `forward` reads: the target's table, in the
/// database the target's DSN names when it is MariaDB/MySQL (twoWayJobs names it the same).
TableRef reverseTableOf(const TableJob &forward);

/// The jobs of a two-way pipeline: its tables source to target, then target to source.
std::vector<TableJob> twoWayJobs(const PipelineSpec &p, const Endpoint &source, const Endpoint &target);

/// The counters of one direction (a pipeline name, or a reverse direction's), kept for the life
/// of the process. Thread-safe.
std::shared_ptr<LoopCounters> loopCounters(const std::string &direction);

struct LoopCountersSample {
    std::string direction;
    std::string pipeline;
    long long captured = 0;
    long long applied = 0;
    long long droppedOwn = 0;
};
/// Every direction counted so far, by name. Thread-safe.
std::vector<LoopCountersSample> loopCountersSnapshot();

/// Everything needed to sync one table, resolved from the workspace.
struct TableJob {
    std::string pipeline;
    TableSpec spec;
    Endpoint source;
    Endpoint target;
    TargetName targetName;
    /// The pipeline's `publication:` (CDC), when set.
    std::optional<std::string> publication;
    /// The pipeline's `heartbeat:` (CDC), when set.
    std::optional<Millis> heartbeat;
    /// Set for the tables of a two-way pipeline (`direction: both`): which direction this is.
    std::optional<TwoWayRole> twoWay = std::nullopt;
    /// The pipeline's `schema_changes: { add_column: ... }`, when set.
    std::optional<std::string> pipelineAddColumn = std::nullopt;
    /// The pipeline's `schema_changes: { drop_column: ..., type_change: ... }`, when set.
    std::optional<std::string> pipelineDropColumn = std::nullopt;
    std::optional<std::string> pipelineTypeChange = std::nullopt;
    /// The pipeline's `schema_changes: { rename_column: ... }`, when set.
    std::optional<std::string> pipelineRenameColumn = std::nullopt;
    /// The pipeline's `recover: auto` (CDC): bring the tables back by diff when the source changes.
    bool recoverAuto = false;
    /// `adopt` (the table's, else the pipeline's): an existing target table is taken, not refused.
    bool adopt = false;

    TableKey key() const { return {pipeline, spec.table, spec.strategy}; }
};

/// Builds the jobs of a workspace (optionally one pipeline).
std::vector<TableJob> jobsFor(const Workspace &ws, const std::string &onlyPipeline = {});

} // namespace driftless::core
