#pragma once

#include "core/engine/jobs/pauses.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"
#include "core/model/tableref.h"
#include "core/model/vocabulary.h"
#include "core/model/workspace.h"

#include <memory>
#include <string>
#include <vector>

namespace driftless::core {

/// How a CDC pipeline's run is asked for, whichever source it reads (the same for both).
struct CdcRunOptions {
    /// Load what needs loading, stream until everything committed on the source when the stream
    /// started is applied, then return.
    bool once = false;
    /// The tables a DBA paused, looked at between target transactions; null: none.
    std::shared_ptr<const PauseSet> pauses = nullptr;
};

/// How a CDC run ends besides returning or failing as a whole.

/// Thrown by a CDC pipeline's run() when it must start over to take a change (a resumed table
/// that still needs its initial load, which is done before streaming; a table just stopped by an
/// error, whose batch is read again without it): run it again at once; it is not a failure.
struct CdcRestart {
    std::string reason;
};

/// A CDC table an error stopped while the rest of its pipeline streams on (P4): its changes are
/// no longer applied until a DBA has it copied again, and it shows red with `message` (the
/// reason and what to do) until then. The stop is recorded in the table's checkpoint, so a
/// restart keeps it stopped instead of failing the same way again.
struct StoppedTable {
    TableRef table;
    std::string message;
};

/// Whether an error met while loading or applying one table's changes into a `target` of that
/// kind is that table's alone: a value or a constraint its target refuses, a privilege or a
/// column it lacks, a value our own checks refuse. Those stop the table. A lost connection, a
/// server shutting down, a lock timeout (all transient), an endpoint that refuses us altogether,
/// a read-only, full or damaged database stay the pipeline's: it is retried or fails as a whole.
bool stopsOnlyTheTable(const Error &e, EndpointKind target);

/// A chunk of a re-seed (a load merging into rows a target already holds, under a new epoch)
/// must write every row it read: rows the version guard refused mean the target holds versions
/// the epoch did not outrank, and "done" would be a lie. Throws Error (the table's own, so it
/// stops that table) with the counts and what to do; returns when `written` reaches `read`.
void requireReseedWritten(const std::string &table, const std::string &pipeline, long long read, long long written);

/// What a stopped table shows: `stopped: ` and the error, then `next` (what happens to the
/// pipeline and what to do), without the doubled punctuation a server's message would leave.
std::string stopMessage(const Error &e, const std::string &next);

/// The kind of stop an error makes: a change of source (SourceChangedError) or any other error.
StopKind stopKindOf(const Error &e);
/// The state a table stopped this way shows: `source_changed` or `error`.
TableState stoppedState(StopKind kind);

} // namespace driftless::core
