// A two-way pipeline between a Postgres and a MariaDB/MySQL endpoint (docs/two-way.md, "Mixed
// pairs"): where the direction that reads the MariaDB side starts, and how it waits for that.

#include "core/engine/twoway/twoway.h"

#include "core/db/mysqlconnection.h"
#include "core/db/pgconnection.h"
#include "core/engine/endpoints/connect.h"
#include "core/engine/jobs/observer.h"
#include "core/engine/rows/deletepolicy.h"
#include "core/mergers/merger.h"
#include "core/model/cdcposition.h"
#include "core/model/error.h"

#include <cstdlib>

namespace driftless::core {

void startReverseFromBinlog(const Endpoint &source, const Endpoint &target, const std::string &reverseDirection,
                            const std::vector<ReverseTable> &tables, EngineObserver &observer, const TableKey &key)
{
    if (tables.empty())
        return;
    {
        // The reverse direction merges into these tables under the version guard, and the
        // forward one compares their before-images: a catalog-only change, as their owner.
        std::vector<TableRef> own;
        for (const auto &t : tables)
            own.push_back(t.spec.table);
        PgConnection ddl = connectPostgres(source, "driftless " + reverseDirection);
        addVersionColumns(ddl, own);
    }
    // The checkpoint table is not published: writing it needs no origin.
    auto session = createTargetSession(source, "driftless " + reverseDirection);
    std::optional<binlog::Position> end;
    for (const auto &t : tables) {
        auto merger =
            session->merger({reverseDirection, t.reverseSource, TargetName{t.spec.table.schema, t.spec.table.name},
                             Strategy::Cdc, softDeletes(t.spec)});
        merger->prepare(t.schema);
        if (merger->readCheckpoint())
            continue;
        if (!end) {
            MysqlConnection tgt = connectMysql(target, false);
            auto r = tgt.query("SHOW MASTER STATUS");
            if (r.empty() || !r.at(0, 0) || !r.at(0, 1))
                throw Error(ErrorKind::Permanent,
                            "endpoint '" + target.name + "' reports no binlog position (SHOW MASTER STATUS)", {},
                            "a two-way pipeline reads both sides' binlogs: start the server with log_bin");
            end = binlog::Position{*r.at(0, 0), std::strtoull(r.at(0, 1)->c_str(), nullptr, 10)};
        }
        BinlogCdcPosition pos;
        pos.at = *end;
        session->inTransaction([&] {
            merger->writeCheckpointInTransaction({pos.toJson(), binlog::positionVersion(*end)}, 0);
        });
        observer.event(Level::Info, key, "two_way",
                       "the reverse direction " + reverseDirection + " reads " + t.reverseSource.display() + " from " +
                           end->file + ":" + std::to_string(end->offset));
    }
}

void requireReverseStart(const Endpoint &target, const std::string &reverseDirection,
                         const std::vector<TableRef> &tables, const std::string &pipeline)
{
    PgConnection c = connectPostgres(target, "driftless " + reverseDirection);
    const bool haveCheckpoints = !c.execParams("SELECT to_regclass('_driftless.checkpoints') IS NULL", {}).toBool(0, 0);
    for (const auto &t : tables)
        if (!haveCheckpoints ||
            c.execParams("SELECT 1 FROM _driftless.checkpoints WHERE pipeline = $1 AND source_table = $2",
                         {reverseDirection, t.display()})
                    .rows() == 0)
            throw Error(ErrorKind::Transient, "waiting for two-way pipeline " + pipeline + " to record where " +
                                                  t.display() +
                                                  " is read from (its forward direction does, before it loads)");
}

} // namespace driftless::core
