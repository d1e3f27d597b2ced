# shellcheck shell=bash
# B14 — two-way round trip under load on each side (PG<->PG, `direction: both`); sourced by
# run_all.sh. Two databases of the test server, b14_a and b14_b, are the two writable sides of
# pipeline b14, kept in sync by one `driftless-cli serve` (it also serves /metrics).
#
# Part 1, lag and loops (case=two_way_lag, case=loop). Table bench.rt (id bigint PK, n, label,
# side, written_at), 10k rows; rows 1..5000 belong to A's writer, 5001..10000 to B's, so this
# part has no conflicts. pgbench runs on both sides at once for B14_SECONDS (30) at B14_TPS (1000)
# per side: half INSERTs of new keys (each side's own sequence), half UPDATEs of a random row of
# its own half, each stamping written_at = clock_timestamp() and its side. A poller in each
# database (a DO loop every B14_POLL_MS, 50) records when it first saw each row the OTHER side
# wrote; lag = seen - written_at (one server clock), per direction. Loop counters come from
# /metrics, before and after (once both slots passed everything):
#   loop_amplification = changes applied / changes captured, both directions (the engine counts
#                        as applied every change of a committed batch, folded ones included)
#   captured_per_write = changes captured / rows the two pgbench runs changed (1.00 when no
#                        change of Driftless's own came back and none was lost)
# Both sides must then be equal (md5 of every row, in SQL on each side).
#
# Part 2, conflicts (case=conflicts). With the engine stopped, both sides change the same
# B14_MERGES (2000) rows in different columns, then the engine starts: merged_per_s = rows whose
# conflict both directions merged by column / seconds from the engine's start (includes
# connecting). Then both sides change the same column of B14_CONFLICTS (200) rows (on_overlap:
# manual queues them); once queued, `driftless-cli resolve ID --take source` for each, one process
# each: resolved_per_s. Both sides must end equal, with the resolutions not read back.
#
#   B14 lag_p50_ms_a_to_b=... lag_p99_ms_a_to_b=... lag_p50_ms_b_to_a=... lag_p99_ms_b_to_a=... tps_a=... tps_b=... rate=1000 ...
#   B14 loop_amplification=... captured_per_write=... applied=... captured=... written=... dropped_own=... case=loop ...
#   B14 resolved_per_s=... merged_per_s=... conflicts=... merges=... converged=yes case=conflicts ...

: "${B14_TPS:=1000}"
: "${B14_SECONDS:=30}"
: "${B14_POLL_MS:=50}"
: "${B14_MERGES:=2000}"
: "${B14_CONFLICTS:=200}"

b14_drop() {
  local db
  drop_slots b14_a
  drop_slots b14_b
  for db in b14_a b14_b; do pg postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; done
  pg postgres -c "SELECT pg_replication_origin_drop(roname) FROM pg_replication_origin
                  WHERE roname IN ('driftless_b14', 'driftless_b14_rev', 'driftless_b14_resolve')" >/dev/null
}

# Starts `serve` on a free port: sets B14_PID, B14_PORT and B14_STARTED ($EPOCHREALTIME).
b14_start() {
  local log=$WORK/b14_serve.log i
  B14_STARTED=$EPOCHREALTIME
  "$CLI" --state "$WORK/b14.state" serve --listen 127.0.0.1:0 >>"$log" 2>&1 &
  B14_PID=$!
  BENCH_PIDS+=("$B14_PID")
  B14_PORT=
  for ((i = 0; i < 600; i++)); do
    B14_PORT=$(sed -n 's|^serving http://127\.0\.0\.1:\([0-9]*\)/sync/status.*|\1|p' "$log" | tail -n 1)
    [[ -n $B14_PORT ]] && return 0
    kill -0 "$B14_PID" 2>/dev/null || { cat "$log" >&2; die "B14: driftless-cli serve exited"; }
    sleep 0.1
  done
  cat "$log" >&2
  die "B14: driftless-cli serve did not start listening"
}
b14_stop() {
  kill -INT "$B14_PID" 2>/dev/null || true
  wait "$B14_PID" || { tail -n 40 "$WORK/b14_serve.log" >&2; die "B14: driftless-cli serve failed"; }
  BENCH_PIDS=()
  : >"$WORK/b14_serve.log"
}

# One counter of /metrics (0 when absent): NAME LABELS
b14_metric() {
  { curl -sf "http://127.0.0.1:$B14_PORT/metrics" || true; } |
    awk -v key="$1{$2}" '$1 == key { v = $2 } END { printf "%.0f", v + 0 }'
}
# The loop counters of both directions added: captured|applied|dropped_own
b14_loop() {
  echo $(($(b14_metric "driftless_twoway_changes_$1_total" 'pipeline="b14",direction="b14"') + \
    $(b14_metric "driftless_twoway_changes_$1_total" 'pipeline="b14",direction="b14_rev"')))
}

# Waits until both directions' slots confirmed everything written up to now: SECONDS
b14_quiesce() {
  local lsn i
  lsn=$(pg_value postgres "SELECT pg_current_wal_lsn()")
  for ((i = 0; i < $1 * 10; i++)); do
    [[ $(pg_value postgres "SELECT count(*) FROM pg_replication_slots WHERE slot_name IN ('driftless_b14',
         'driftless_b14_rev') AND confirmed_flush_lsn >= '$lsn'") == 2 ]] && return 0
    kill -0 "$B14_PID" 2>/dev/null || { cat "$WORK/b14_serve.log" >&2; die "B14: driftless-cli serve exited"; }
    sleep 0.1
  done
  die "B14: the two directions did not catch up within $1 s"
}

b14_hash() {
  pg_value "$1" "SELECT md5(string_agg(concat_ws('|', id, n, label, side, written_at), ',' ORDER BY id)) FROM bench.rt"
}
# Both sides hold the same rows, within SECONDS; dies otherwise.
b14_converged() {
  local i
  for ((i = 0; i < $1 * 2; i++)); do
    [[ $(b14_hash b14_a) == "$(b14_hash b14_b)" ]] && return 0
    sleep 0.5
  done
  die "B14: the two sides differ after $1 s (hashes $(b14_hash b14_a) / $(b14_hash b14_b))"
}

# The poller of DB: records rows written by the other side (SIDE) as they arrive; stops once it
# saw the last write (public.b14_ctl) or after SECONDS.
b14_poller_sql() {
  cat <<SQL
DO \$\$
DECLARE
  since timestamptz := clock_timestamp();
  give_up timestamptz := clock_timestamp() + interval '$2 seconds';
  ts timestamptz; m timestamptz; lw timestamptz;
BEGIN
  LOOP
    ts := clock_timestamp();
    WITH seen AS (
      INSERT INTO public.b14_seen SELECT id, written_at, ts FROM bench.rt WHERE side = '$1' AND written_at > since
      ON CONFLICT DO NOTHING RETURNING written_at)
    SELECT max(written_at) INTO m FROM seen;
    since := greatest(since, m - interval '2 seconds');
    SELECT last_write INTO lw FROM public.b14_ctl;
    COMMIT;
    EXIT WHEN lw IS NOT NULL AND EXISTS (SELECT 1 FROM public.b14_seen WHERE written_at >= lw);
    EXIT WHEN clock_timestamp() > give_up;
    PERFORM pg_sleep($B14_POLL_MS / 1000.0);
  END LOOP;
END \$\$
SQL
}

# Lag of the rows SIDE wrote as seen in DB since T0: prints "n|p50|p99|catchup" (catchup -1: the
# last write never arrived).
b14_lag_stats() {
  local db=$1 last=$2 t0=$3
  pg_value "$db" "SELECT count(*),
      coalesce(round(1000 * percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM seen_at - written_at))), -1),
      coalesce(round(1000 * percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM seen_at - written_at))), -1),
      coalesce(round(1000 * extract(epoch FROM max(seen_at - written_at) FILTER (WHERE written_at >= '$last'))), -1)
    FROM public.b14_seen WHERE written_at > '$t0'"
}

b14_setup() {
  b14_drop
  fresh_db b14_a
  fresh_db b14_b
  pg b14_a -c "CREATE SCHEMA bench" -c "CREATE TABLE bench.rt (
        id bigint PRIMARY KEY,
        n integer NOT NULL,
        label text NOT NULL,
        side text NOT NULL,
        written_at timestamptz NOT NULL)" \
    -c "INSERT INTO bench.rt SELECT g, g, 'rt-' || g, 'seed', timestamptz '2024-01-01 00:00:00+00'
        FROM generate_series(1, 10000) g" \
    -c "CREATE INDEX rt_written_at ON bench.rt (written_at)" \
    -c "CREATE SEQUENCE bench.ids START 1000000000" \
    -c "VACUUM ANALYZE bench.rt"
  cat >"$WORK/b14.yaml" <<YAML
endpoints:
  a: { kind: postgres, dsn: "$(pg_dsn b14_a)" }
  b: { kind: postgres, dsn: "$(pg_dsn b14_b)" }
pipelines:
  - name: b14
    source: a
    target: b
    direction: both
    tables:
      - { table: bench.rt, strategy: cdc, conflicts: { policy: merge_columns, on_overlap: manual } }
YAML
  cli_apply "$WORK/b14.state" "$WORK/b14.yaml"
  : >"$WORK/b14_serve.log"
  b14_start
  local i
  for ((i = 0; i < 1800; i++)); do
    [[ $(pg_value b14_b "SELECT count(*) FROM pg_tables WHERE schemaname = 'bench' AND tablename = 'rt'") == 1 &&
       $(pg_value b14_b "SELECT count(*) FROM bench.rt") == 10000 &&
       $(pg_value b14_a "SELECT count(*) FROM pg_tables WHERE schemaname = '_driftless' AND tablename = 'checkpoints'") == 1 &&
       $(pg_value b14_a "SELECT count(*) FROM _driftless.checkpoints WHERE pipeline = 'b14_rev'") == 1 ]] && break
    kill -0 "$B14_PID" 2>/dev/null || { cat "$WORK/b14_serve.log" >&2; die "B14: driftless-cli serve exited"; }
    sleep 0.1
  done
  ((i < 1800)) || { cat "$WORK/b14_serve.log" >&2; die "B14: the initial load did not finish in 180 s"; }
  b14_quiesce 120
  pg b14_b -c "CREATE INDEX rt_written_at ON bench.rt (written_at)" -c "CREATE SEQUENCE bench.ids START 2000000000"
  local db
  for db in b14_a b14_b; do
    pg "$db" -c "CREATE TABLE public.b14_seen (id bigint, written_at timestamptz, seen_at timestamptz,
                                                PRIMARY KEY (id, written_at))" \
      -c "CREATE TABLE public.b14_ctl (last_write timestamptz)"
  done
  local side lo hi
  for side in a b; do
    if [[ $side == a ]]; then lo=1 hi=5000; else lo=5001 hi=10000; fi
    cat >"$WORK/b14_ins_$side.sql" <<SQL
\\set n random(1, 1000000)
INSERT INTO bench.rt VALUES (nextval('bench.ids'), :n, 'ins-$side', '$side', clock_timestamp());
SQL
    cat >"$WORK/b14_upd_$side.sql" <<SQL
\\set id random($lo, $hi)
UPDATE bench.rt SET n = n + 1, side = '$side', written_at = clock_timestamp() WHERE id = :id;
SQL
  done
}

# Part 1: both pgbench runs at once, a poller on each side. Sets B14_LINE_LAG and B14_LINE_LOOP.
b14_lag() {
  local secs=$B14_SECONDS
  local cap0 app0 drop0
  cap0=$(b14_loop captured) app0=$(b14_loop applied) drop0=$(b14_loop dropped_own)
  pg b14_b -c "$(b14_poller_sql a $((secs + 60)))" >"$WORK/b14_poll_b.log" 2>&1 &
  local poll_b=$!
  pg b14_a -c "$(b14_poller_sql b $((secs + 60)))" >"$WORK/b14_poll_a.log" 2>&1 &
  local poll_a=$!
  BENCH_PIDS+=("$poll_a" "$poll_b")
  sleep 0.3
  local t0
  t0=$(pg_value postgres "SELECT clock_timestamp()")
  local side pids=()
  for side in a b; do
    "$PG_BIN/pgbench" -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -n -T "$secs" -R "$B14_TPS" -c 4 -j 2 \
      -f "$WORK/b14_ins_$side.sql@1" -f "$WORK/b14_upd_$side.sql@1" "b14_$side" >"$WORK/b14_pgbench_$side.log" 2>&1 &
    pids+=($!)
  done
  BENCH_PIDS+=("${pids[@]}")
  for side in 0 1; do
    wait "${pids[$side]}" || { cat "$WORK/b14_pgbench_a.log" "$WORK/b14_pgbench_b.log" >&2; die "B14: pgbench failed"; }
  done
  local tps_a tps_b n_a n_b last_a last_b
  tps_a=$(sed -n 's/^tps = \([0-9]*\).*/\1/p' "$WORK/b14_pgbench_a.log" | head -n 1)
  tps_b=$(sed -n 's/^tps = \([0-9]*\).*/\1/p' "$WORK/b14_pgbench_b.log" | head -n 1)
  n_a=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$WORK/b14_pgbench_a.log")
  n_b=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$WORK/b14_pgbench_b.log")
  last_a=$(pg_value b14_a "SELECT max(written_at) FROM bench.rt WHERE side = 'a'")
  last_b=$(pg_value b14_b "SELECT max(written_at) FROM bench.rt WHERE side = 'b'")
  pg b14_b -c "INSERT INTO public.b14_ctl VALUES ('$last_a')"
  pg b14_a -c "INSERT INTO public.b14_ctl VALUES ('$last_b')"
  wait "$poll_a" || { cat "$WORK/b14_poll_a.log" >&2; die "B14: the poller of b14_a failed"; }
  wait "$poll_b" || { cat "$WORK/b14_poll_b.log" >&2; die "B14: the poller of b14_b failed"; }
  BENCH_PIDS=("$B14_PID")

  local ab ba n_ab p50_ab p99_ab c_ab n_ba p50_ba p99_ba c_ba
  ab=$(b14_lag_stats b14_b "$last_a" "$t0")
  ba=$(b14_lag_stats b14_a "$last_b" "$t0")
  IFS='|' read -r n_ab p50_ab p99_ab c_ab <<<"$ab"
  IFS='|' read -r n_ba p50_ba p99_ba c_ba <<<"$ba"
  log "B14: a->b $n_ab arrivals, lag p50 $p50_ab ms, p99 $p99_ab ms, last write after $c_ab ms;" \
    "b->a $n_ba arrivals, p50 $p50_ba ms, p99 $p99_ba ms, last write after $c_ba ms; pgbench $tps_a / $tps_b tps"

  # Everything arrived: both slots passed every write and every apply, then the counters.
  b14_quiesce 300
  b14_quiesce 120
  b14_converged 120
  local cap app dropped written
  cap=$(($(b14_loop captured) - cap0))
  app=$(($(b14_loop applied) - app0))
  dropped=$(($(b14_loop dropped_own) - drop0))
  written=$((n_a + n_b))
  local amp per_write keeps_ab keeps_ba lag_ok loop_ok
  amp=$(ratio "$app" "$cap")
  per_write=$(ratio "$cap" "$written")
  keeps_ab=$( ((c_ab >= 0)) && below "$c_ab" 1000 || echo no)
  keeps_ba=$( ((c_ba >= 0)) && below "$c_ba" 1000 || echo no)
  lag_ok=$(both "$(both "$(below "$p99_ab" 1000)" "$(below "$p99_ba" 1000)")" "$(both "$keeps_ab" "$keeps_ba")")
  loop_ok=$(both "$(below "$amp" 1.005)" "$([[ $per_write == 1.00 ]] && echo yes || echo no)")
  B14_RSS=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$B14_PID/status" 2>/dev/null || echo 0)
  B14_LINE_LAG="B14 lag_p50_ms_a_to_b=$p50_ab lag_p99_ms_a_to_b=$p99_ab lag_p50_ms_b_to_a=$p50_ba lag_p99_ms_b_to_a=$p99_ba"
  B14_LINE_LAG+=" tps_a=$tps_a tps_b=$tps_b rate=$B14_TPS peak_rss_mb=$B14_RSS case=two_way_lag seconds=$secs"
  B14_LINE_LAG+=" samples_a_to_b=$n_ab samples_b_to_a=$n_ba catchup_ms_a_to_b=$c_ab catchup_ms_b_to_a=$c_ba"
  B14_LINE_LAG+=" goal=p99<1000,keeps_up goal_met=$lag_ok"
  B14_LINE_LOOP="B14 loop_amplification=$amp captured_per_write=$per_write applied=$app captured=$cap written=$written"
  B14_LINE_LOOP+=" dropped_own=$dropped case=loop goal=1.00 goal_met=$loop_ok"
}

# Part 2: a burst of merges, then a queue resolved from the CLI. Sets B14_LINE_CONFLICTS.
b14_conflicts() {
  local m=$B14_MERGES q=$B14_CONFLICTS
  b14_stop
  # Disjoint columns of the same rows: merged by column in both directions.
  pg b14_a -c "UPDATE bench.rt SET n = n + 1000000 WHERE id <= $m"
  pg b14_b -c "UPDATE bench.rt SET label = 'merged-b-' || id WHERE id <= $m"
  b14_start
  local i merged t_merged
  for ((i = 0; i < 3000; i++)); do
    merged=$(b14_metric driftless_twoway_conflicts_total 'pipeline="b14",table="bench.rt",outcome="merged"')
    ((merged >= 2 * m)) && break
    sleep 0.1
  done
  t_merged=$(elapsed "$B14_STARTED" "$EPOCHREALTIME")
  ((merged >= 2 * m)) || die "B14: $merged of $((2 * m)) merges after 300 s"
  b14_quiesce 120
  b14_converged 60

  # The same column of the same rows: queued (on_overlap: manual), then resolved one by one.
  b14_stop
  local lo=$((m + 1)) hi=$((m + q))
  pg b14_a -c "UPDATE bench.rt SET label = 'queued-a-' || id WHERE id BETWEEN $lo AND $hi"
  pg b14_b -c "UPDATE bench.rt SET label = 'queued-b-' || id WHERE id BETWEEN $lo AND $hi"
  b14_start
  local open=0
  for ((i = 0; i < 1200; i++)); do
    open=$("$CLI" --state "$WORK/b14.state" conflicts --json | jq '.conflicts | length')
    ((open >= q)) && break
    sleep 0.25
  done
  ((open == q)) || die "B14: $open of $q conflicts queued after 300 s"
  b14_quiesce 120
  local cap0 ids t0 t1 id
  cap0=$(b14_loop captured)
  ids=$("$CLI" --state "$WORK/b14.state" conflicts --json | jq -r '.conflicts[].id')
  t0=$EPOCHREALTIME
  for id in $ids; do
    "$CLI" --state "$WORK/b14.state" resolve "$id" --take source >>"$WORK/b14_resolve.log" 2>&1 \
      || { tail -n 5 "$WORK/b14_resolve.log" >&2; die "B14: resolve $id failed"; }
  done
  t1=$EPOCHREALTIME
  b14_quiesce 120
  b14_converged 60
  [[ $("$CLI" --state "$WORK/b14.state" conflicts --json | jq '.conflicts | length') == 0 ]] \
    || die "B14: conflicts left open after resolving every one"
  local cap1
  cap1=$(b14_loop captured)
  ((cap1 == cap0)) || die "B14: the resolutions were read back ($((cap1 - cap0)) changes captured)"
  local resolved_s merged_s
  resolved_s=$(rate "$q" "$(elapsed "$t0" "$t1")")
  merged_s=$(rate "$m" "$t_merged")
  log "B14: $m rows merged by column in both directions ${t_merged}s after the engine's start;" \
    "$q queued conflicts resolved in $(elapsed "$t0" "$t1") s"
  B14_LINE_CONFLICTS="B14 resolved_per_s=$resolved_s merged_per_s=$merged_s conflicts=$q merges=$m converged=yes"
  B14_LINE_CONFLICTS+=" case=conflicts goal=converged goal_met=yes"
}

bench_b14() {
  log "B14: two-way round trip at $B14_TPS TPS per side for $B14_SECONDS s; $B14_MERGES merges, $B14_CONFLICTS queued conflicts"
  need B14 postgresql-15 "$PG_BIN/pgbench" || return 0
  need B14 curl curl || return 0
  need B14 jq jq || return 0
  b14_setup
  b14_lag
  b14_conflicts
  b14_stop
  result "$B14_LINE_LAG"
  result "$B14_LINE_LOOP"
  result "$B14_LINE_CONFLICTS"
  b14_drop
}
