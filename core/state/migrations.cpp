#include "core/state/migrations.h"

#include <array>

namespace driftless::core {

namespace {
constexpr std::string_view kV1 = R"sql(
CREATE TABLE endpoints (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    dsn TEXT NOT NULL DEFAULT '',
    path TEXT NOT NULL DEFAULT '',
    options TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE pipelines (
    name TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    source TEXT NOT NULL REFERENCES endpoints(name),
    target TEXT NOT NULL REFERENCES endpoints(name),
    target_schema TEXT,
    options TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE table_specs (
    pipeline TEXT NOT NULL REFERENCES pipelines(name) ON DELETE CASCADE,
    source_schema TEXT NOT NULL,
    source_table TEXT NOT NULL,
    position INTEGER NOT NULL,
    strategy TEXT NOT NULL,
    spec TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (pipeline, source_schema, source_table)
);
CREATE TABLE table_status (
    pipeline TEXT NOT NULL,
    source_schema TEXT NOT NULL,
    source_table TEXT NOT NULL,
    strategy TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'idle',
    message TEXT NOT NULL DEFAULT '',
    checkpoint TEXT NOT NULL DEFAULT '',
    version INTEGER NOT NULL DEFAULT 0,
    rows_applied INTEGER NOT NULL DEFAULT 0,
    last_sync_at_ms INTEGER,
    fresh_as_of_ms INTEGER,
    progress REAL,
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (pipeline, source_schema, source_table)
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    pipeline TEXT NOT NULL,
    source_schema TEXT NOT NULL,
    source_table TEXT NOT NULL,
    strategy TEXT NOT NULL,
    started_at_ms INTEGER NOT NULL,
    finished_at_ms INTEGER,
    status TEXT NOT NULL DEFAULT 'running',
    rows INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_by_table ON runs (pipeline, source_schema, source_table, id);
CREATE TABLE lag_samples (
    pipeline TEXT NOT NULL,
    table_name TEXT NOT NULL,
    ts_ms INTEGER NOT NULL,
    lag_seconds REAL NOT NULL,
    rows_per_second REAL NOT NULL DEFAULT 0
);
CREATE INDEX lag_samples_by_table ON lag_samples (pipeline, table_name, ts_ms);
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    ts_ms INTEGER NOT NULL,
    level TEXT NOT NULL,
    pipeline TEXT NOT NULL DEFAULT '',
    table_name TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX events_by_time ON events (ts_ms);
)sql";

// v2: a backfill's rows copied, its total estimate and its expected end, for `status`; samples
// of what each replication slot holds.
constexpr std::string_view kV2 = R"sql(
ALTER TABLE table_status ADD COLUMN backfill_rows INTEGER;
ALTER TABLE table_status ADD COLUMN backfill_total INTEGER;
ALTER TABLE table_status ADD COLUMN backfill_eta_seconds REAL;
CREATE TABLE slot_samples (
    source TEXT NOT NULL,
    slot TEXT NOT NULL,
    ts_ms INTEGER NOT NULL,
    retained_bytes INTEGER,
    unconfirmed_bytes INTEGER,
    safe_wal_size INTEGER
);
CREATE INDEX slot_samples_by_slot ON slot_samples (source, slot, ts_ms);
)sql";

// v3: reconciliation reports (the whole report as JSON, and a row per table for lists, badges
// and alerts).
constexpr std::string_view kV3 = R"sql(
CREATE TABLE reconcile_reports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    pipeline TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    finished_ms INTEGER NOT NULL,
    drift INTEGER NOT NULL,
    report TEXT NOT NULL
);
CREATE TABLE reconcile_tables (
    report_id INTEGER NOT NULL REFERENCES reconcile_reports (id) ON DELETE CASCADE,
    pipeline TEXT NOT NULL,
    table_name TEXT NOT NULL,
    finished_ms INTEGER NOT NULL,
    source_rows INTEGER NOT NULL,
    target_rows INTEGER NOT NULL,
    missing INTEGER NOT NULL,
    extra INTEGER NOT NULL,
    different INTEGER NOT NULL,
    in_flight INTEGER NOT NULL,
    drift_ratio REAL NOT NULL,
    error TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (report_id, table_name)
);
CREATE INDEX reconcile_tables_by_table ON reconcile_tables (pipeline, table_name, finished_ms);
CREATE TABLE pending_reconciles (
    pipeline TEXT NOT NULL,
    table_name TEXT NOT NULL,
    reason TEXT NOT NULL,
    since_ms INTEGER NOT NULL,
    repair INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (pipeline, table_name)
);
)sql";

// v4: tables a DBA paused (driftless-cli pause, the app's Pause button). A row of its own, not a
// column of table_specs: applying a workspace file rewrites the specs, and must not resume
// anything.
constexpr std::string_view kV4 = R"sql(
CREATE TABLE paused_tables (
    pipeline TEXT NOT NULL,
    source_schema TEXT NOT NULL,
    source_table TEXT NOT NULL,
    paused_at_ms INTEGER NOT NULL,
    PRIMARY KEY (pipeline, source_schema, source_table)
);
)sql";

// v5: the conflict queue of two-way pipelines (docs/two-way.md): a row both sides changed that
// the table's policy leaves to a person. Versions and the base are JSON objects (column -> text),
// or JSON null where the side has no row.
constexpr std::string_view kV5 = R"sql(
CREATE TABLE conflicts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    pipeline TEXT NOT NULL,
    table_name TEXT NOT NULL,
    row_key TEXT NOT NULL,
    columns TEXT NOT NULL,
    source_version TEXT NOT NULL,
    target_version TEXT NOT NULL,
    base TEXT NOT NULL,
    detected_at_ms INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    resolved_at_ms INTEGER,
    resolution TEXT
);
CREATE INDEX conflicts_open ON conflicts (pipeline, table_name, row_key, status);
)sql";

// v6: tables a pipeline's include_tables patterns picked up (docs/patterns.md): once each, with
// the strategy chosen then (and the cursor), or why it was not taken (`refused`, never synced).
// `fallback_from`: the slot guard moved it from CDC to cursor sync.
constexpr std::string_view kV6 = R"sql(
CREATE TABLE discovered_tables (
    pipeline TEXT NOT NULL,
    source_schema TEXT NOT NULL,
    source_table TEXT NOT NULL,
    strategy TEXT NOT NULL,
    cursor TEXT,
    fallback_from TEXT,
    refused TEXT NOT NULL DEFAULT '',
    found_at_ms INTEGER NOT NULL,
    PRIMARY KEY (pipeline, source_schema, source_table)
);
)sql";

constexpr std::array<std::string_view, 6> kMigrations{kV1, kV2, kV3, kV4, kV5, kV6};
} // namespace

std::span<const std::string_view> stateMigrations()
{
    return kMigrations;
}

} // namespace driftless::core
