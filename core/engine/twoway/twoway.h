#pragma once

#include "core/engine/jobs/tablejob.h"
#include "core/model/loopcounters.h"
#include "core/model/tableschema.h"
#include "core/model/workspace.h"

#include <memory>
#include <string>
#include <vector>

namespace driftless::core {

class EngineObserver;
class Merger;
class TargetSession;
struct TableKey;
class PgConnection;

/// The prefix of the logical message that marks a Postgres transaction as Driftless's own when
/// the user may not use replication origins; its content is the origin name it stands for.
inline constexpr const char *kOwnWriteMessagePrefix = "driftless";

/// How a Postgres side marks what Driftless applies there.
enum class OwnWriteMark {
    /// Replication origin `driftless_<direction>` (superuser, or EXECUTE on the origin functions).
    Origin,
    /// A transactional `pg_logical_emit_message(true, 'driftless', <origin name>)` first in each
    /// transaction (no privilege needed).
    Message,
};

/// Origin when the connection's user may use replication origins (superuser, or EXECUTE on
/// pg_replication_origin_create and pg_replication_origin_session_setup), else Message.
OwnWriteMark ownWriteMarkFor(PgConnection &c);

/// Marks everything `session` applies from now on as Driftless's own, so the other direction's
/// reader drops it: on Postgres the session replays under replication origin `origin` (created
/// when missing) when the user may use origins, and otherwise begins each transaction with a
/// logical message naming `origin` (OwnWriteMark::Message); on MariaDB/MySQL it sets
/// skip_replication.
void markOwnWrites(TargetSession &session, const std::string &origin);
/// The same on one Postgres connection (`driftless-cli resolve`). Returns the mark chosen.
OwnWriteMark markOwnWrites(PgConnection &c, const std::string &origin);

/// Postgres: makes every later write of `c` carry replication origin `origin` (created when
/// missing). Throws a transient Error while another connection holds it, a permanent one with
/// the GRANT to run when the user may not use origins.
void writeUnderOrigin(PgConnection &c, const std::string &origin);

/// Reverse direction, Postgres target: gives each of the source tables the version column the
/// guarded merge keeps per row (`_driftless_version`, 0 for existing rows; a catalog-only change),
/// and sets them to REPLICA IDENTITY FULL (conflict detection needs their before-images).
void addVersionColumns(PgConnection &conn, const std::vector<TableRef> &tables);

/// Forward direction, Postgres target: creates the reverse direction's publication over `tables`
/// and its slot on `target`, when missing, so the target's changes from here on are read back;
/// sets `tables` (the forward direction's own) to REPLICA IDENTITY FULL.
/// Returns true when it created the slot.
bool ensureReverseSlot(const Endpoint &target, const std::string &reverseDirection,
                       const std::vector<TableRef> &tables);

/// One table of a Postgres -> MariaDB/MySQL pair, as the reverse direction will merge it.
struct ReverseTable {
    TableRef reverseSource; ///< the target's table the reverse direction reads (reverseTableOf)
    TableSpec spec;         ///< the forward direction's table (the source's)
    TableSchema schema;     ///< the source table's columns, without Driftless's own
};

/// Forward direction of a Postgres -> MariaDB/MySQL pair, before its initial load (the reverse
/// direction never loads, and must read every later change of the target): gives the source's
/// tables the version column and REPLICA IDENTITY FULL (addVersionColumns), and records the
/// target's binlog end (SHOW MASTER STATUS) as the reverse direction's checkpoint in the source,
/// for each table that has none yet. Throws Error (permanent when the target has no binlog).
void startReverseFromBinlog(const Endpoint &source, const Endpoint &target, const std::string &reverseDirection,
                            const std::vector<ReverseTable> &tables, EngineObserver &observer, const TableKey &key);

/// Reverse direction of a MariaDB/MySQL -> Postgres pair: throws a transient Error until the
/// forward direction has recorded where this one reads each of `tables` (`_driftless.checkpoints`
/// of `target`, pipeline `reverseDirection`).
void requireReverseStart(const Endpoint &target, const std::string &reverseDirection,
                         const std::vector<TableRef> &tables, const std::string &pipeline);

/// Reverse direction: throws a transient Error until every one of `tables` exists on its source
/// (the forward direction's target, whose tables its first start creates).
void requireForwardTables(PgConnection &src, const std::vector<TableRef> &tables, const std::string &pipeline);

/// Forward direction: refuses a target table that exists without Driftless's version column (one
/// it did not create), naming the way that keeps its rows: a two-way pipeline does not adopt a
/// table (both sides' rows would have to be compared and reconciled first), a one-way pipeline
/// does, and a pipeline turned two-way afterwards reads the target's changes back from then on.
void requireManagedTarget(const TableJob &job, Merger &merger);

/// Two-way: `schema` without the columns Driftless keeps in a table it merges into
/// (`_driftless_version`): each direction's target has one, and it is not data to send back.
void dropOwnColumns(TableSchema &schema);
std::vector<std::string> withoutOwnColumns(const std::vector<std::string> &columns);

} // namespace driftless::core
