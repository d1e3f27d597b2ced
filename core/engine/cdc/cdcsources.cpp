#include "core/engine/cdc/cdcsources.h"

#include "core/engine/cdc/mysql/mysqlcdc.h"
#include "core/engine/cdc/pg/cdcpipeline.h"

namespace driftless::core {

std::vector<StoppedTable> runCdcPipeline(const std::vector<TableJob> &jobs, EngineObserver &observer, bool once,
                                         std::shared_ptr<const PauseSet> pauses, std::stop_token stop)
{
    if (jobs.empty())
        return {};
    if (jobs.front().source.kind == EndpointKind::Mysql) {
        MysqlCdcPipeline pipeline(jobs, observer);
        pipeline.run(stop, {once, std::move(pauses)});
        return pipeline.stoppedTables();
    }
    CdcPipeline pipeline(jobs, jobs.front().publication, observer);
    pipeline.run(stop, {once, std::move(pauses)});
    return pipeline.stoppedTables();
}

} // namespace driftless::core
