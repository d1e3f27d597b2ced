#pragma once

#include "core/engine/endpoints/endpointtls.h"
#include "core/engine/status/statusreport.h"
#include "core/model/staterecords.h"
#include "ui/sharedlist.h"

#include <QMetaType>
#include <QString>

#include <cstdint>
#include <memory>
#include <vector>

namespace driftless::ui {

/// What the UI shows of one workspace at one moment: every table's status and the newest events.
///
/// A plain value: built from the engine's in-memory state or read from the workspace file on a
/// worker, then handed to the UI and never changed, so models keep it without locks. Cheap to
/// copy: the tables and events are shared, the workspace too.
struct EngineSnapshot {
    /// The bridge's job id for the workspace (and run) it came from; the bridge drops results
    /// of jobs it no longer shows, so a late read of a previous workspace never lands.
    std::uint64_t generation = 0;
    QString statePath;
    std::int64_t takenAtMs = 0;
    /// From a running engine; otherwise read from the workspace file.
    bool live = false;
    /// The workspace the tables belong to (endpoints, pipelines, SLAs); null when it could not
    /// be read. Shared, never changed: pages that need endpoints (slots) read it from here.
    std::shared_ptr<const core::Workspace> workspace;
    /// Shared by every copy of the snapshot (a queued delivery, the pages that keep it): copying
    /// a snapshot of 10,000 tables costs reference counts, not 10,000 reports.
    SharedList<core::TableReport> tables;
    /// Newest first.
    SharedList<core::EventRecord> events;
    /// How each database endpoint's connections are protected, from the engine's ledger (what
    /// `/sync/status` says under `endpoints`): the app's own engine's, or the agent's.
    std::vector<core::EndpointTlsStatus> endpointsTls;
    /// Why the workspace could not be read, in words a DBA can act on; empty when it was read.
    QString error;
    /// There is no workspace file at statePath yet: the first endpoint added or YAML imported
    /// makes it.
    bool noWorkspaceYet = false;
};

/// The same workspace: the same object, or two equal ones (both null counts as the same).
inline bool sameWorkspace(const std::shared_ptr<const core::Workspace> &a,
                          const std::shared_ptr<const core::Workspace> &b)
{
    if (!a || !b)
        return a == b;
    return a == b || *a == *b;
}

} // namespace driftless::ui

Q_DECLARE_METATYPE(driftless::ui::EngineSnapshot)
