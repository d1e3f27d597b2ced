#pragma once

#include "core/db/mysqlcatalog.h"
#include "core/engine/twoway/conflicts.h"

namespace driftless::core {

class MysqlConnection;

/// A MariaDB/MySQL table as conflict detection sees it (two-way pipelines between MariaDB
/// endpoints): its rows read as the text the binlog decoder gives the same values
/// (mysqlcatalog::appendValue), keys compared by the server.
///
/// Thread affinity: the thread that owns `conn`, inside its open transaction. `table` describes
/// the table the batch merges into (its own types). Failure: Error from the server.
class MysqlConflictTarget final : public ConflictTarget {
public:
    /// `incoming`: a Postgres<->MariaDB pair's stream schema (Postgres terms, the change's
    /// source), which spellIncoming() converts from; null between MariaDB endpoints.
    MysqlConflictTarget(MysqlConnection &conn, const mysqlcatalog::MysqlTable &table,
                        const TableSchema *incoming = nullptr);

    std::map<size_t, Held> rowsFor(const ConflictScope &scope, const RowSet &rows, const std::vector<size_t> &picked,
                                   const std::vector<int> &keyIdx, const std::vector<size_t> &synced,
                                   bool commitTime) override;
    /// MariaDB keeps no commit time per row (`clock: commit_time` is refused for MariaDB sides);
    /// a column's values (DATETIME/TIMESTAMP text, UTC) are read as microseconds by the server.
    std::pair<std::optional<std::int64_t>, std::optional<std::int64_t>>
    timestampsUs(const std::string &type, const std::optional<std::string> &mine,
                 const std::optional<std::string> &theirs) override;

    /// A Postgres change's values written into a temporary copy of the table's columns as the
    /// one-way Postgres -> MariaDB merger writes them (appendMysqlValue: `t` as 1, a timestamptz
    /// in UTC), then read back as rowsFor() reads the table's own rows.
    void spellIncoming(const ConflictScope &scope, const std::vector<size_t> &synced,
                       const std::vector<Values *> &values) override;

private:
    MysqlConnection &m_conn;
    const mysqlcatalog::MysqlTable &m_table;
    const TableSchema *m_incoming = nullptr;
};

/// openResolutionSide() on a MariaDB/MySQL side (its table's schema empty: the DSN's database).
std::unique_ptr<ResolutionSide> openMysqlResolutionSide(const Endpoint &endpoint, const TargetName &table,
                                                        const std::string &keyJson,
                                                        const TableSchema *postgresColumns = nullptr);

} // namespace driftless::core
