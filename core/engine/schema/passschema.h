#pragma once

// The `schema_changes:` policies for cursor and full-refresh tables (docs/schema-changes.md):
// at the start of every pass the source's columns are compared with the target's and the
// table's policies applied, with the same comparison, policies and Merger column methods as CDC.

#include "core/engine/jobs/observer.h"
#include "core/engine/schema/columnbackfill.h"
#include "core/mergers/merger.h"
#include "core/model/cdcposition.h"
#include "core/model/tableschema.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

class PgConnection;
struct TableJob;

/// What a cursor or full-refresh table remembers of its source's columns from one pass to the
/// next, stored in its checkpoint position (key "columns", in the target with the data).
struct PassColumns {
    /// "attnums": a Postgres source's attribute numbers at the last pass, which tell a renamed
    /// column (same number) from a dropped one and an added one.
    std::map<std::string, int> attnums;
    /// "types": each source column's type at the last pass, which tells a retype on a target
    /// whose own types are spelled otherwise (MariaDB/MySQL, SQLite) and cannot be compared.
    std::map<std::string, std::string> types;
    /// "kept": dropped on the source and kept on the target (`drop_column: keep`).
    std::vector<std::string> kept;
    /// "ignored": added on the source and left out (`add_column: ignore`).
    std::vector<std::string> ignored;
    /// "fill": a cursor table's add-column backfill under way.
    std::optional<PgAddColumnProgress> fill;

    /// JSON object text, or empty when there is nothing to remember.
    std::string toJson() const;
    /// Empty or unreadable text gives an empty memory (an older position has none).
    static PassColumns fromJson(const std::string &json);
    bool operator==(const PassColumns &) const = default;
};

/// What one pass works with. Thread affinity: the pass's thread (it owns both connections).
struct PassSchemaContext {
    const TableJob &job;
    EngineObserver &observer;
    Merger &merger;
    /// Begins, commits and rolls back on the merger's connection.
    TargetSession &session;
    /// The source, when it is Postgres (attribute numbers); null for MariaDB/MySQL.
    PgConnection *pgSource = nullptr;
    /// The source's current version (an LSN, a binlog position's version): rows a pass reads
    /// from now on carry at least this one, so a fill started now never overwrites them.
    std::function<std::int64_t()> sourceVersion;
    /// Stores the table's checkpoint, its position carrying `memory` as it is now, inside an
    /// open transaction (cursor tables; a full refresh stores it with its swap).
    std::function<void(const PassColumns &memory, long long rows)> writeCheckpoint;
};

struct PassSchemaResult {
    /// What the pass reads and writes: the source's schema without the columns left out.
    TableSchema schema;
    /// Columns left out of the reads (`add_column: ignore`).
    std::vector<std::string> leftOut;
    /// Non-empty: the table pauses, with this message (what changed and what to do); nothing
    /// was changed on the target.
    std::string paused;
};

/// Compares `source` (the source's columns now) with the target's, applies the table's
/// policies (DDL on the target, events) and prepares the merger (Merger::prepare) for the
/// result's schema; `memory` is updated (the caller stores it with the pass's checkpoint).
/// A first pass (no target table) takes every column. Tables with a `columns:` mapping are
/// prepared as they are, without policies. Throws Error from either side.
PassSchemaResult applyPassSchemaPolicies(PassSchemaContext &cx, const TableSchema &source, PassColumns &memory,
                                         Strategy strategy);

/// A cursor table's add-column backfill (memory.fill), run to its end before the pass reads:
/// chunks through Merger::fillColumnsInTransaction (that column only, rows older than the
/// fill's version), each committed with the checkpoint, then the column-scoped comparison. The
/// finishing event is logged; memory.fill is cleared and stored. Throws Error (the chunk rolled
/// back; the progress stored before stays, so the next pass resumes).
void runPassColumnFill(PassSchemaContext &cx, ColumnFillSource &source, const TableSchema &schema, PassColumns &memory,
                       const std::function<bool()> &stopRequested);

} // namespace driftless::core
