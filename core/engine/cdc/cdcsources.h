#pragma once

#include "core/engine/cdc/cdcoutcome.h"
#include "core/engine/jobs/observer.h"
#include "core/engine/jobs/pauses.h"
#include "core/engine/jobs/tablejob.h"

#include <memory>
#include <stop_token>
#include <vector>

namespace driftless::core {

/// The one switch on a CDC source's kind: runs one pipeline's CDC tables (`jobs`, same source
/// and target) through the pipeline of its source's kind (Postgres: pgoutput; MariaDB/MySQL: the
/// binlog) until stopped, or caught up with `once`. Returns the tables an error stopped while the
/// others streamed on (P4). Throws Error, or CdcRestart when it must run again at once.
std::vector<StoppedTable> runCdcPipeline(const std::vector<TableJob> &jobs, EngineObserver &observer, bool once,
                                         std::shared_ptr<const PauseSet> pauses, std::stop_token stop);

} // namespace driftless::core
