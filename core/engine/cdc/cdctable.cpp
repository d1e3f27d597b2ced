#include "core/engine/cdc/cdctable.h"

#include "core/base/log.h"
#include "core/engine/cdc/cdcoutcome.h"

namespace driftless::core {

void CdcTable::sayStopped(StopKind kind, const std::string &pipeline, EngineObserver &observer) const
{
    log(LogLevel::Warn, pipeline + " " + job.spec.table.display() + ": " + stopped);
    observer.tableState(key, stoppedState(kind), stopped, std::nullopt);
    observer.event(Level::Error, key, "sync_failed", stopped);
}

} // namespace driftless::core
