#pragma once

#include "core/model/columnmapping.h"
#include "core/model/duration.h"
#include "core/model/strategy.h"
#include "core/model/tableref.h"

#include <compare>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace driftless::core {

enum class EndpointKind { Postgres, Mysql, Sqlite };
std::string_view toString(EndpointKind k);
std::optional<EndpointKind> endpointKindFromString(std::string_view s);

/// What the engine does about a Postgres source's replication slots (`slot_guard:` on the
/// endpoint). Past `maxRetained` bytes of WAL held by a Driftless slot (or when the slot's
/// safe_wal_size falls below `minSafeWal`, or it was invalidated), `Fallback` drops the slot and
/// switches the source's CDC tables to cursor sync with a full reconciliation; `Alert` only
/// raises an alert.
struct SlotGuard {
    enum class Action { Fallback, Alert };
    std::int64_t maxRetained = 0; ///< bytes; 0: no limit
    Action action = Action::Alert;
    std::optional<std::int64_t> warnRetained; ///< alert from here; default half of maxRetained
    std::optional<std::int64_t> minSafeWal;   ///< act when safe_wal_size falls below (bytes)
    std::optional<Millis> inactiveAlert;      ///< alert when a slot is inactive this long (default 10m)

    std::int64_t effectiveWarn() const { return warnRetained.value_or(maxRetained / 2); }
    Millis effectiveInactiveAlert() const { return inactiveAlert.value_or(Millis(600'000)); }
    bool operator==(const SlotGuard &) const = default;
};
std::string_view toString(SlotGuard::Action a);

/// An SSH tunnel to an endpoint's server (`ssh:` on the endpoint): the engine runs the system
/// OpenSSH client to `user@host:port` (through `jump`, as ProxyJump, when set) and connects
/// through a Unix socket it forwards to the DSN's host and port, as seen from the SSH host.
struct SshTunnelSpec {
    std::string host;
    int port = 22;
    std::string user;
    /// A private key file; `~/` is expanded when the tunnel starts. Unset: the agent, ~/.ssh/config
    /// and ssh's default keys.
    std::optional<std::string> identityFile;
    /// `[user@]host[:port]` of a bastion to hop through (ssh -J).
    std::optional<std::string> jump;

    /// `user@host:port`, and ` via JUMP` when there is one.
    std::string display() const;
    bool operator==(const SshTunnelSpec &) const = default;
};

/// A database the workspace talks to. Never holds a secret: passwords come from libpq's
/// pgpass/service file/PG* variables, ~/.my.cnf, or the OS keychain.
struct Endpoint {
    std::string name;
    EndpointKind kind = EndpointKind::Postgres;
    /// libpq conninfo (key=value or URI) for Postgres; mysql:// URI for MySQL.
    std::string dsn;
    /// Absolute path of the database file, for SQLite.
    std::string path;
    /// Postgres sources: the slot guard policy, when set.
    std::optional<SlotGuard> slotGuard;
    /// Postgres and MySQL: reach the server through this SSH tunnel, when set.
    std::optional<SshTunnelSpec> ssh;

    bool operator==(const Endpoint &) const = default;
};

/// Per-table settings. Optional fields fall back to the defaults below.
struct TableSpec {
    TableRef table;
    Strategy strategy = Strategy::FullRefresh;
    std::optional<std::string> cursor;
    /// A duration (`10m`) for temporal cursor columns, a count for numeric ones.
    std::optional<std::string> lookback;
    std::optional<long long> pageSize;
    std::optional<Millis> freshnessSla;
    std::optional<std::string> targetTable;
    std::optional<Millis> every;
    /// CDC: what a replicated TRUNCATE does: `apply` (default) or `ignore`.
    std::optional<std::string> truncate;
    /// CDC: the cursor column to sync by if the slot guard falls back (default: the best
    /// timestamp column the source table has, e.g. updated_at).
    std::optional<std::string> fallbackCursor;
    /// Set by the slot guard when it switched this table from CDC to cursor sync (YAML
    /// `fallback_from: cdc`); `driftless-cli promote` switches it back.
    std::optional<Strategy> fallbackFrom;
    /// `columns:`: which columns reach the target, renamed and masked how (see columnmapping.h).
    std::optional<ColumnMapping> columns;
    /// `where:`: a row filter in the source's SQL; only rows it holds true for reach the target
    /// (core/engine/rowfilter.h).
    std::optional<std::string> where;
    /// `deletes:`: what a source delete does on the target: `hard` (default), `soft` or `ignore`.
    std::optional<std::string> deletes;
    /// `conflicts:` (two-way pipelines): the ConflictPolicy's stored form (ConflictPolicy::text);
    /// unset: merge_columns with on_overlap manual. A pipeline's `conflicts:` is copied onto its
    /// tables that name none.
    std::optional<std::string> conflicts;
    /// `schema_changes: { add_column: ... }` on the table: overrides the pipeline's policy for a
    /// column the source gained (docs/schema-changes.md).
    std::optional<std::string> addColumn;
    /// `schema_changes: { drop_column: keep|drop|pause }` on the table: overrides the pipeline's
    /// policy for a column the source dropped.
    std::optional<std::string> dropColumn;
    /// `schema_changes: { type_change: widen|pause }` on the table: overrides the pipeline's
    /// policy for a column whose type changed at the source.
    std::optional<std::string> typeChange;
    /// `schema_changes: { rename_column: rename|pause }` on the table: overrides the pipeline's
    /// policy for a column renamed at the source.
    std::optional<std::string> renameColumn;
    /// Picked up by the pipeline's `include_tables` patterns while it ran (not listed under
    /// `tables:`): kept in the state store, never written to the YAML (core/engine/endpoints/
    /// tablepatterns.h).
    bool discovered = false;
    /// `adopt: true`: the target table exists already (a copy made by pg_dump, a replica of
    /// another tool) and becomes the pipeline's without a reload: its columns must be the mapped
    /// source's, the engine adds its version column (version 0, below every real change), and the
    /// first pass compares the rows there with the source and copies only what differs
    /// (docs/adopt.md). Unset: the pipeline's `adopt`, else false (an existing table is refused).
    std::optional<bool> adopt;
    /// `key: [cols]`: the columns rows are keyed by, declared for a table whose own key does not
    /// suit (none at all, or another than the DBA's): merged, compared and paged by them as by a
    /// primary key. Checked unique and never NULL on the source by `apply` and the doctor; a
    /// Postgres CDC source needs REPLICA IDENTITY FULL so its old rows carry them. Unset: the
    /// primary key, else the unique index on NOT NULL columns (docs/keys.md).
    std::optional<std::vector<std::string>> key;

    static constexpr long long kDefaultPageSize = 50'000;
    static constexpr const char *kDefaultCursor = "updated_at";
    static constexpr const char *kDefaultLookback = "10m";

    std::string cursorColumn() const { return cursor.value_or(kDefaultCursor); }
    long long effectivePageSize() const { return pageSize.value_or(kDefaultPageSize); }
    /// How often a full refresh or cursor pass runs (CDC streams continuously).
    Millis effectiveEvery() const;
    /// CDC: 60 s. Cursor and full refresh: twice the schedule.
    Millis effectiveSla() const;

    bool operator==(const TableSpec &) const = default;
};

struct PipelineSpec {
    std::string name;
    std::string source;
    std::string target;
    std::optional<std::string> targetSchema;
    /// CDC: an existing publication to read (creating one needs table ownership); default: the
    /// engine creates and maintains `driftless_<name>`.
    std::optional<std::string> publication;
    /// CDC: how often to write a heartbeat (a transactional `pg_logical_emit_message`) into the
    /// source database, so the slot advances even when the cluster's WAL comes from elsewhere.
    /// Unset: none (an idle stream is still acknowledged from keepalives).
    std::optional<Millis> heartbeat;
    /// CDC: `recover: auto | manual` (default manual). When the source changes under the pipeline
    /// in a way it cannot read on from (a promoted standby without the slot, a timeline that left
    /// the target's history, another cluster), `auto` brings every table back by diff at once
    /// (docs/failover.md); `manual` stops and names `driftless-cli recover PIPELINE`.
    std::optional<std::string> recover;
    /// `adopt: true`: every table of the pipeline adopts the target table it finds, unless the
    /// table says otherwise (TableSpec::adopt).
    std::optional<bool> adopt;
    /// `reconcile: { every: 24h, alert_above: 0.1% }`: how often to compare source and target
    /// while the pipeline runs, and the drift ratio past which a run raises an alert.
    std::optional<Millis> reconcileEvery;
    std::optional<double> reconcileAlertAbove;
    /// `direction: both`: a two-way pipeline, CDC from source to target and from target back to
    /// source over the same tables (docs/two-way.md). Absent or `one_way`: source to target only.
    bool twoWay = false;
    /// `schema_changes: { add_column: ... }`: what a column the source gained does to the
    /// pipeline's tables, unless a table says otherwise (default `backfill`).
    std::optional<std::string> addColumn;
    /// `schema_changes: { drop_column: ... }`: what a column the source dropped does to the
    /// pipeline's tables, unless a table says otherwise (default `keep`).
    std::optional<std::string> dropColumn;
    /// `schema_changes: { type_change: ... }`: what a column retyped at the source does to the
    /// pipeline's tables, unless a table says otherwise (default `widen`).
    std::optional<std::string> typeChange;
    /// `schema_changes: { rename_column: ... }`: what a column renamed at the source does to the
    /// pipeline's tables, unless a table says otherwise (default `rename`).
    std::optional<std::string> renameColumn;
    std::vector<TableSpec> tables;
    /// `include_tables: ["public.*"]`: tables the pipeline syncs besides `tables:`, as
    /// `schema.name` patterns (`*` any run of characters, `?` one), picked up at start and every
    /// `discover_every` while it runs. An explicit `tables:` item wins over a pattern.
    std::vector<std::string> includeTables;
    /// `exclude_tables: ["public.tmp_*"]`: names a pattern never picks up (explicit items still sync).
    std::vector<std::string> excludeTables;
    /// `table_defaults: { ... }`: the per-table keys a table picked up by a pattern gets; its
    /// `strategy`, when unset, is the one the recommender picks for the table.
    struct TableDefaults {
        std::optional<Strategy> strategy;
        TableSpec keys; ///< every other per-table key (its `table` and `strategy` unused)
        bool operator==(const TableDefaults &) const = default;
    };
    std::optional<TableDefaults> tableDefaults;
    /// `discover_every: 1m`: how often a running pipeline looks for new tables its patterns match
    /// (default kDefaultDiscoverEvery).
    std::optional<Millis> discoverEvery;
    static constexpr Millis kDefaultDiscoverEvery{60'000};

    /// `table` matches an include_tables pattern and no exclude_tables one (an explicit `tables:`
    /// item is the caller's to prefer).
    bool picksUp(const TableRef &table) const;
    /// `pattern` is `schema.name`: one dot, a part on each side (what include_tables and
    /// exclude_tables take; the loader and the pipeline editor both ask this).
    static bool isTablePattern(const std::string &pattern);
    /// `table` against one `schema.name` pattern: each part with fnmatch(3) (`*`, `?`, `[...]`).
    static bool matchesTablePattern(const std::string &pattern, const TableRef &table);
    /// A table the patterns picked up, as it syncs: `table_defaults`' keys, the strategy they
    /// name (else `recorded`, the one chosen when it was picked up), and `cursor` when the
    /// defaults name none. `fallbackFrom`: the slot guard moved it to cursor sync.
    TableSpec pickedUp(const TableRef &table, Strategy recorded, const std::optional<std::string> &cursor,
                       std::optional<Strategy> fallbackFrom) const;

    /// Drift ratio above which a reconciliation raises an alert (default: any drift).
    double driftAlertAbove() const { return reconcileAlertAbove.value_or(0.0); }

    std::string slotName() const { return "driftless_" + name; }
    /// A two-way pipeline's reverse direction (target to source) runs under this name: its own
    /// slot, publication, replication origin, checkpoints and table states.
    static constexpr const char *kReverseSuffix = "_rev";
    std::string reverseName() const { return name + kReverseSuffix; }
    std::string publicationName() const { return publication.value_or(slotName()); }

    bool operator==(const PipelineSpec &) const = default;
};

/// Everything a workspace file describes.
struct Workspace {
    std::map<std::string, Endpoint> endpoints;
    std::vector<PipelineSpec> pipelines;

    const PipelineSpec *pipeline(const std::string &name) const;
    const Endpoint *endpoint(const std::string &name) const;
    bool operator==(const Workspace &) const = default;
};

/// Where one table lands. For SQLite targets `schema` is empty.
struct TargetName {
    std::string schema;
    std::string name;
    std::string display() const;
    auto operator<=>(const TargetName &) const = default;
};

/// The target table for a table spec: `target_table` when given; else the source table's name,
/// in `target_schema` (default: the source's schema) for server targets, bare for SQLite.
TargetName resolveTargetName(const PipelineSpec &p, const TableSpec &t, EndpointKind targetKind);

} // namespace driftless::core
