# shellcheck shell=bash
# Helpers shared by the benchmark scripts; sourced by run_all.sh (not run on its own).
#
# Expects from run_all.sh: PG_* from servers.sh's env file, PGPASSWORD, CLI (driftless-cli),
# WORK (a scratch folder), ROWS, RUNS.

die() { echo "bench: error: $*" >&2; exit 1; }
log() { echo "[bench $(date +%H:%M:%S)] $*" >&2; }

# --- baselines ------------------------------------------------------------------------------

# A benchmark without its baseline must not print a ratio: it refuses instead, saying what is
# missing, and run_all.sh exits non-zero at the end. With --install (BENCH_INSTALL=1) a missing
# package is installed first with apt-get, as packaging/install-deps.sh does (sudo when not root).
REFUSED=()

# Prints `ID refused: REASON` as the benchmark's result line and remembers it: ID REASON...
refuse() {
  local id=$1; shift
  result "$id refused: $*"
  REFUSED+=("$id")
}

# True when COMMAND (a name on PATH or an absolute path) can be run.
have_cmd() { if [[ $1 == /* ]]; then [[ -x $1 ]]; else command -v "$1" >/dev/null; fi; }

# Installs Debian packages (only with --install): PACKAGE...
install_packages() {
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { log "cannot install $* (not root and no sudo)"; return 1; }
    sudo=(sudo)
  fi
  log "installing $* (apt-get)"
  # Keep Debian from starting packaged services: the benchmarks run their own servers.
  local policy_added=0 rc=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee /usr/sbin/policy-rc.d >/dev/null
    "${sudo[@]}" chmod 755 /usr/sbin/policy-rc.d
    policy_added=1
  fi
  if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "$@" >&2; then
    "${sudo[@]}" apt-get update -q >&2 || true
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "$@" >&2 || rc=$?
  fi
  [[ $policy_added == 0 ]] || "${sudo[@]}" rm -f /usr/sbin/policy-rc.d
  return "$rc"
}

# Checks that a baseline or tool is there (installing it with --install), else refuses the
# benchmark and returns 1: ID PACKAGE COMMAND
#   need B10 postgresql-comparator pg_comparator || return 0
need() {
  local id=$1 pkg=$2 cmd=$3
  have_cmd "$cmd" && return 0
  if [[ ${BENCH_INSTALL:-} == 1 ]]; then
    install_packages "$pkg" && have_cmd "$cmd" && return 0
  fi
  refuse "$id" "$(basename "$cmd") (package $pkg) is not installed; run: apt-get install $pkg (or run_all.sh --install)"
  return 1
}

# --- numbers --------------------------------------------------------------------------------

# Seconds between two $EPOCHREALTIME stamps.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b - a }'; }
# Median of the arguments (mean of the two middle ones for an even count).
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
    END { if (NR == 0) exit 1; if (NR % 2) printf "%.6f", v[(NR + 1) / 2];
          else printf "%.6f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
maximum() { printf '%s\n' "$@" | sort -g | tail -n 1; }
# rows / seconds, as a whole number.
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }
# a / b with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
# yes when a >= b (decimals allowed).
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 >= b + 0 ? "yes" : "no") }'; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 < b + 0 ? "yes" : "no") }'; }
both() { [[ $1 == yes && $2 == yes ]] && echo yes || echo no; }

# --- Postgres -------------------------------------------------------------------------------

# psql against one database of the test server, quiet, stopping at the first error.
pg() {
  local db=$1; shift
  PGOPTIONS='-c client_min_messages=warning' "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$db" "$@"
}
# One value from a query.
pg_value() { pg "$1" -At -c "$2"; }
# A libpq key=value DSN for the engine (the password comes from PGPASSWORD, as for a DBA).
pg_dsn() { echo "host=$PG_HOST port=$PG_PORT dbname=$1 user=$PG_USER"; }

# (Re)creates an empty database.
fresh_db() {
  pg postgres -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1"
}
# (Re)creates a database as a file copy of another (much faster than reloading its rows).
clone_db() {
  pg postgres -c "DROP DATABASE IF EXISTS $2 WITH (FORCE)" \
              -c "CREATE DATABASE $2 TEMPLATE $1 STRATEGY FILE_COPY"
}

# Drops every replication slot of a database (a database with slots cannot be dropped), once
# no session reads them any more: DB
drop_slots() {
  local i
  for ((i = 0; i < 50; i++)); do
    [[ $(pg_value postgres "SELECT count(*) FROM pg_replication_slots WHERE database = '$1' AND active") == 0 ]] && break
    sleep 0.1
  done
  pg postgres -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = '$1'" >/dev/null
}

# The benchmark table: 6 columns (bigint PK, int, numeric(12,2), ~24-char text, timestamptz,
# bool), rows 1..N, deterministic so every database that generates it holds the same rows.
BENCH_TABLE_DDL='CREATE SCHEMA IF NOT EXISTS bench;
CREATE TABLE bench.t (
    id bigint PRIMARY KEY,
    n integer NOT NULL,
    amount numeric(12,2) NOT NULL,
    label text NOT NULL,
    updated_at timestamptz NOT NULL,
    flag boolean NOT NULL
);'
generate_table() {
  local db=$1 rows=$2
  pg "$db" -c "DROP SCHEMA IF EXISTS bench CASCADE" -c "$BENCH_TABLE_DDL"
  pg "$db" -c "INSERT INTO bench.t
      SELECT g, (g * 7919) % 1000003, ((g * 104729) % 100000000) / 100.0,
             'item-' || lpad(g::text, 10, '0') || '-' || substr(md5(g::text), 1, 8),
             timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second', g % 3 = 0
      FROM generate_series(1::bigint, $rows) g"
  pg "$db" -c "VACUUM (ANALYZE) bench.t"
}

# DB holding bench.t with ROWS rows: a file copy of database seed when it holds as many (B1
# makes it), else generated: DB
seeded_db() {
  if [[ $(pg_value postgres "SELECT count(*) FROM pg_database WHERE datname = 'seed'") == 1 &&
        $(pg_value seed "SELECT count(*) FROM bench.t" 2>/dev/null) == "$ROWS" ]]; then
    clone_db seed "$1"
  else
    fresh_db "$1"
    generate_table "$1" "$ROWS"
  fi
}

# --- driftless-cli --------------------------------------------------------------------------

# Writes a workspace file: NAME SOURCE_DB TARGET_ENDPOINT_YAML TABLE_YAML
#   TARGET_ENDPOINT_YAML e.g. '{ kind: postgres, dsn: "..." }' or '{ kind: sqlite, path: "..." }'
write_workspace() {
  local file=$1 source_db=$2 target=$3 table=$4
  cat >"$file" <<YAML
endpoints:
  src: { kind: postgres, dsn: "$(pg_dsn "$source_db")" }
  dst: $target
pipelines:
  - name: bench
    source: src
    target: dst
    tables:
      - $table
YAML
}

# Stores a workspace in a fresh state file: STATE WORKSPACE
cli_apply() {
  rm -f "$1" "$1-wal" "$1-shm"
  "$CLI" --state "$1" apply "$2" >"$WORK/apply.log" 2>&1 \
    || { cat "$WORK/apply.log" >&2; die "driftless-cli apply $2 failed"; }
}

# One `run --once` under /usr/bin/time -v: STATE. Sets CLI_SECS and CLI_RSS_MB.
# shellcheck disable=SC2034  # results for the caller
cli_run_once() {
  local state=$1 t0 t1
  t0=$EPOCHREALTIME
  if ! /usr/bin/time -v -o "$WORK/time.txt" "$CLI" --state "$state" run --once >"$WORK/run.log" 2>&1; then
    cat "$WORK/run.log" >&2
    die "driftless-cli run --once failed (state $state)"
  fi
  t1=$EPOCHREALTIME
  CLI_SECS=$(elapsed "$t0" "$t1")
  CLI_RSS_MB=$(awk -F: '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$WORK/time.txt")
}

# Runs a command timed: sets CMD_SECS. The command's output goes to $WORK/cmd.log.
# shellcheck disable=SC2034  # result for the caller
timed() {
  local t0 t1
  t0=$EPOCHREALTIME
  if ! "$@" >"$WORK/cmd.log" 2>&1; then
    cat "$WORK/cmd.log" >&2
    die "baseline command failed: $*"
  fi
  t1=$EPOCHREALTIME
  CMD_SECS=$(elapsed "$t0" "$t1")
}

# Prints one result line (the arguments joined by spaces) on stdout and keeps it for the summary.
result() {
  local line="$*"
  echo "$line"
  echo "$line" >>"$WORK/results.txt"
}
