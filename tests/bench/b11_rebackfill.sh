# shellcheck shell=bash
# B11: re-backfill one CDC table while its pipeline keeps streaming under a ~1k TPS write load,
# against B1's baseline (the COPY pipe into an empty PK table) measured without load.
#
# Setup, untimed: source b11_src with bench.t (ROWS rows, a copy of seed when it exists) and
# bench.lag (10k rows); target b11_dst; one pipeline b11 with both tables as CDC, loaded by
# `driftless-cli run --once`, then `driftless-cli run --pipeline b11` streams in the background
# for the whole benchmark. Each round, in an order that alternates:
#   baseline    no load: psql -c "COPY bench.t TO STDOUT" | psql -c "COPY bench.t FROM STDIN" from
#               b11_src into an empty bench.t with the same primary key in b11_base (as B1)
#   driftless   the target is drifted by hand (every 1000th row deleted, every 997th changed, 100
#               rows the source does not have; then VACUUM and CHECKPOINT, untimed), pgbench
#               -R 1000 (B11_TPS) starts on the source (half UPDATEs of a random row of bench.t,
#               half INSERTs into bench.lag), then
#               `driftless-cli rebackfill b11 bench.t` is timed from the request to the engine's
#               "re-backfill done" event (its state file's events table): that includes picking
#               the request up (the engine polls every 250 ms) and creating the temporary slot.
#               copy_rows_per_s is the same rows over the engine's own start->done window.
# Meanwhile a poller (a DO loop in database b11_mon, every B11_POLL_MS = 50 ms) records every
# relation lock the driftless sessions on b11_src hold (application_name 'driftless...') and
# every source session waiting on a lock held by one of them. locks=none when no lock stronger
# than RowExclusiveLock was seen and no session waited on driftless; max_lock is the strongest
# mode seen on bench.t. After the re-backfill the load stops; once the target has caught up
# (count and sum of row hashes equal, within 60 s) per-key hashes of source and target are
# compared: drift_rows counts keys missing, extra or different (bench.t and bench.lag).
# tps is pgbench's rate during the re-backfill (its --progress lines in that window).
# Sourced by run_all.sh.

: "${B11_POLL_MS:=50}"
: "${B11_TPS:=1000}"

b11_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

# One value from the engine's state file (sqlite3).
b11_state_value() { sqlite3 -cmd ".timeout 5000" "$WORK/b11.state" "$1"; }

# The rows of a table as "key<TAB>md5 of the other columns", sorted by key: DB TABLE COLUMNS
b11_row_hashes() {
  pg "$1" -c "COPY (SELECT id, md5(concat_ws('|', $3)) FROM $2 ORDER BY id) TO STDOUT"
}
# count and sum of row hashes, order-independent and cheap: DB TABLE COLUMNS
b11_fingerprint() {
  pg_value "$1" "SELECT count(*) || ' ' || coalesce(sum(hashtext(concat_ws('|', $3))::bigint), 0) FROM $2"
}

B11_T_COLS='n, amount, label, updated_at, flag'
B11_LAG_COLS='n, label, written_at'

# Waits until the target equals the source by fingerprint (up to 60 s), then counts the keys that
# differ. Sets DRIFT_T, DRIFT_LAG and CATCHUP_S.
b11_drift() {
  local i t0 ok=
  t0=$EPOCHREALTIME
  for ((i = 0; i < 600; i++)); do
    if [[ $(b11_fingerprint b11_src bench.t "$B11_T_COLS") == "$(b11_fingerprint b11_dst bench.t "$B11_T_COLS")" &&
          $(b11_fingerprint b11_src bench.lag "$B11_LAG_COLS") == "$(b11_fingerprint b11_dst bench.lag "$B11_LAG_COLS")" ]]; then
      ok=1; break
    fi
    sleep 0.1
  done
  CATCHUP_S=$(elapsed "$t0" "$EPOCHREALTIME")
  [[ -n $ok ]] || log "B11: the target did not match the source within 60 s after the load stopped"
  b11_row_hashes b11_src bench.t "$B11_T_COLS" >"$WORK/b11_src.t"
  b11_row_hashes b11_dst bench.t "$B11_T_COLS" >"$WORK/b11_dst.t"
  b11_row_hashes b11_src bench.lag "$B11_LAG_COLS" >"$WORK/b11_src.lag"
  b11_row_hashes b11_dst bench.lag "$B11_LAG_COLS" >"$WORK/b11_dst.lag"
  # Lines only one side has: a key missing on one side counts once, a changed row twice (once
  # per side), hence the count of distinct keys.
  DRIFT_T=$(diff "$WORK/b11_src.t" "$WORK/b11_dst.t" | sed -n 's/^[<>] \([0-9]*\)\t.*/\1/p' | sort -u | wc -l)
  DRIFT_LAG=$(diff "$WORK/b11_src.lag" "$WORK/b11_dst.lag" | sed -n 's/^[<>] \([0-9]*\)\t.*/\1/p' | sort -u | wc -l)
  rm -f "$WORK"/b11_src.* "$WORK"/b11_dst.*
}

b11_lock_poller_sql() { # SOURCE_DB_OID TABLE_OID
  cat <<SQL
DO \$\$
DECLARE
  give_up timestamptz := clock_timestamp() + interval '1 hour';
BEGIN
  LOOP
    INSERT INTO public.locks_seen
      SELECT l.mode, l.relation = $2, 1
        FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE a.datname = 'b11_src' AND a.application_name LIKE 'driftless%'
         AND l.locktype = 'relation' AND l.database = $1 AND l.relation >= 16384 AND l.granted
    ON CONFLICT (mode, on_table) DO UPDATE SET samples = public.locks_seen.samples + 1;
    INSERT INTO public.waits_seen
      SELECT w.pid, w.wait_event FROM pg_stat_activity w
       WHERE w.datname = 'b11_src' AND w.wait_event_type = 'Lock'
         AND EXISTS (SELECT 1 FROM pg_stat_activity d
                      WHERE d.pid = ANY (pg_blocking_pids(w.pid)) AND d.application_name LIKE 'driftless%');
    UPDATE public.poll_count SET n = n + 1;
    COMMIT;
    EXIT WHEN EXISTS (SELECT 1 FROM public.poll_stop) OR clock_timestamp() > give_up;
    PERFORM pg_sleep($B11_POLL_MS / 1000.0);
  END LOOP;
END \$\$
SQL
}

# Strength order of the table lock modes (pg_locks.mode).
B11_MODES=(AccessShareLock RowShareLock RowExclusiveLock ShareUpdateExclusiveLock ShareLock
           ShareRowExclusiveLock ExclusiveLock AccessExclusiveLock)
b11_mode_rank() {
  local i
  for i in "${!B11_MODES[@]}"; do [[ ${B11_MODES[$i]} == "$1" ]] && { echo "$i"; return; }; done
  echo -1
}

b11_setup() {
  drop_slots b11_src
  seeded_db b11_src
  pg b11_src -c "CREATE TABLE bench.lag (
        id bigserial PRIMARY KEY,
        n integer NOT NULL,
        label text NOT NULL,
        written_at timestamptz NOT NULL DEFAULT clock_timestamp())" \
    -c "INSERT INTO bench.lag (n, label, written_at)
        SELECT g, 'lag-' || g, timestamptz '2024-01-01 00:00:00+00' FROM generate_series(1, 10000) g" \
    -c "VACUUM ANALYZE bench.lag"
  local db
  for db in b11_dst b11_base b11_mon; do fresh_db "$db"; done
  pg b11_mon -c "CREATE TABLE locks_seen (mode text, on_table boolean, samples bigint, PRIMARY KEY (mode, on_table))" \
    -c "CREATE TABLE waits_seen (pid int, wait_event text)" \
    -c "CREATE TABLE poll_count (n bigint)" -c "CREATE TABLE poll_stop (at timestamptz)"
  cat >"$WORK/b11.yaml" <<YAML
endpoints:
  src: { kind: postgres, dsn: "$(pg_dsn b11_src)" }
  dst: { kind: postgres, dsn: "$(pg_dsn b11_dst)" }
pipelines:
  - name: b11
    source: src
    target: dst
    tables:
      - { table: bench.t, strategy: cdc }
      - { table: bench.lag, strategy: cdc }
YAML
  cli_apply "$WORK/b11.state" "$WORK/b11.yaml"
  log "B11: initial load of bench.t ($ROWS rows) and bench.lag (untimed)"
  cli_run_once "$WORK/b11.state"
  cat >"$WORK/b11_update.sql" <<SQL
\set id random(1, $ROWS)
UPDATE bench.t SET n = n + 1, updated_at = clock_timestamp() WHERE id = :id;
SQL
  cat >"$WORK/b11_insert.sql" <<'SQL'
\set n random(1, 1000000)
INSERT INTO bench.lag (n, label) VALUES (:n, 'ins-' || :n);
SQL
}

b11_baseline_copy() {
  pg b11_src -c "COPY bench.t TO STDOUT" | pg b11_base -c "COPY bench.t FROM STDIN"
}

b11_baseline() {
  pg b11_base -c "DROP SCHEMA IF EXISTS bench CASCADE" -c "$BENCH_TABLE_DDL" -c "CHECKPOINT"
  timed b11_baseline_copy
  local got
  got=$(pg_value b11_base "SELECT count(*) FROM bench.t")
  [[ $got == "$ROWS" ]] || die "B11 baseline: target holds $got rows, expected $ROWS"
}

# Drifts the target by hand: the re-backfill has to repair it. Then, untimed, VACUUM (the previous
# re-backfill left a dead version of every row; autovacuum would clean them up in a timed window)
# and CHECKPOINT, as B1 does before each run.
b11_drift_target() {
  pg b11_dst -c "DELETE FROM bench.t WHERE id % 1000 = 0" \
    -c "UPDATE bench.t SET label = 'drifted' WHERE id % 997 = 0" \
    -c "INSERT INTO bench.t (id, n, amount, label, updated_at, flag, _driftless_version)
        SELECT id + 10 * $ROWS, n, amount, label, updated_at, flag, 0 FROM bench.t WHERE id <= 100" \
    -c "VACUUM (ANALYZE) bench.t" -c "CHECKPOINT"
}

# One re-backfill under load. Sets RB_SECS, RB_COPY_SECS, RB_ROWS, RB_TPS, RB_LOCKS, RB_MAX_LOCK,
# RB_WAITS, DRIFT_T, DRIFT_LAG.
b11_rebackfill() {
  local cli_pid=$1 src_oid tab_oid last_id
  src_oid=$(pg_value b11_src "SELECT oid FROM pg_database WHERE datname = current_database()")
  tab_oid=$(pg_value b11_src "SELECT 'bench.t'::regclass::oid")
  pg b11_mon -c "TRUNCATE locks_seen, waits_seen, poll_count, poll_stop" -c "INSERT INTO poll_count VALUES (0)"
  pg b11_mon -c "$(b11_lock_poller_sql "$src_oid" "$tab_oid")" >"$WORK/b11_poller.log" 2>&1 &
  local poller=$!
  BENCH_PIDS+=("$poller")
  "$PG_BIN/pgbench" -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -n -T 3600 -R "$B11_TPS" -c 4 -j 2 \
    -P 1 --progress-timestamp -f "$WORK/b11_update.sql@1" -f "$WORK/b11_insert.sql@1" b11_src \
    >"$WORK/b11_pgbench.log" 2>&1 &
  local bench=$!
  BENCH_PIDS+=("$bench")
  sleep 3 # the load settles, the pipeline streams it
  kill -0 "$bench" 2>/dev/null || { cat "$WORK/b11_pgbench.log" >&2; die "B11: pgbench exited"; }

  local size_before size_after
  size_before=$(pg_value b11_dst "SELECT pg_total_relation_size('bench.t') / 1048576")
  last_id=$(b11_state_value "SELECT coalesce(max(id), 0) FROM events")
  local req_ms start_ms='' done_ms='' msg='' i
  req_ms=$(b11_ms)
  "$CLI" --state "$WORK/b11.state" rebackfill b11 bench.t >"$WORK/b11_request.log" 2>&1 \
    || { cat "$WORK/b11_request.log" >&2; die "driftless-cli rebackfill b11 bench.t failed"; }
  for ((i = 0; i < 36000; i++)); do
    IFS='|' read -r done_ms msg < <(b11_state_value "SELECT ts_ms, message FROM events
        WHERE id > $last_id AND kind = 'rebackfill' AND message LIKE 're-backfill done%' ORDER BY id LIMIT 1") || true # no row yet
    [[ -n $done_ms ]] && break
    kill -0 "$cli_pid" 2>/dev/null || { cat "$WORK/b11_run.log" >&2; die "B11: driftless-cli run exited"; }
    sleep 0.1
  done
  [[ -n $done_ms ]] || die "B11: the re-backfill did not finish within an hour"
  start_ms=$(b11_state_value "SELECT ts_ms FROM events WHERE id > $last_id AND kind = 'rebackfill'
                                AND message LIKE 'starting a re-backfill%' ORDER BY id LIMIT 1")
  kill -TERM "$bench" 2>/dev/null || true # a background job ignores SIGINT
  wait "$bench" 2>/dev/null || true
  pg b11_mon -c "INSERT INTO poll_stop VALUES (now())"
  wait "$poller" || { cat "$WORK/b11_poller.log" >&2; die "B11: the lock poller failed"; }
  BENCH_PIDS=("$cli_pid")

  RB_SECS=$(awk -v a="$req_ms" -v b="$done_ms" 'BEGIN { printf "%.3f", (b - a) / 1000 }')
  RB_COPY_SECS=$(awk -v a="${start_ms:-$req_ms}" -v b="$done_ms" 'BEGIN { printf "%.3f", (b - a) / 1000 }')
  RB_ROWS=$(sed -n 's/^re-backfill done: \([0-9]*\) rows merged.*/\1/p' <<<"$msg")
  [[ -n $RB_ROWS ]] || RB_ROWS=$ROWS
  RB_TPS=$(awk -v a="$req_ms" -v b="$done_ms" '$1 == "progress:" && $2 * 1000 >= a && $2 * 1000 <= b + 1000 {
             s += $4; n++ } END { printf "%.0f", (n ? s / n : 0) }' "$WORK/b11_pgbench.log")
  local modes waits samples m on_table worst=-1 worst_table=-1
  modes=$(pg_value b11_mon "SELECT mode || ' ' || on_table FROM locks_seen")
  while read -r m on_table; do
    [[ -n $m ]] || continue
    local k; k=$(b11_mode_rank "$m")
    ((k > worst)) && worst=$k
    [[ $on_table == true ]] && ((k > worst_table)) && worst_table=$k
  done <<<"$modes"
  waits=$(pg_value b11_mon "SELECT count(*) FROM waits_seen")
  samples=$(pg_value b11_mon "SELECT n FROM poll_count")
  RB_MAX_LOCK=none
  ((worst_table >= 0)) && RB_MAX_LOCK=${B11_MODES[$worst_table]}
  if ((worst > 2 || waits > 0)); then RB_LOCKS=yes; else RB_LOCKS=none; fi
  RB_WAITS=$waits
  log "B11: locks held by driftless on b11_src: $(tr '\n' ',' <<<"$modes") sessions waiting on it: $waits ($samples polls)"
  b11_drift
  size_after=$(pg_value b11_dst "SELECT pg_total_relation_size('bench.t') / 1048576")
  log "B11: target bench.t (table and indexes) $size_before MB before, $size_after MB after"
  log "B11: re-backfill of $RB_ROWS rows in $RB_SECS s from the request ($RB_COPY_SECS s from its start)" \
      "at $RB_TPS tps; caught up in $CATCHUP_S s; drift bench.t $DRIFT_T, bench.lag $DRIFT_LAG; $msg"
}

bench_b11() {
  local runs=${B11_RUNS:-$RUNS}
  log "B11: re-backfill of $ROWS rows while CDC streams under $B11_TPS TPS vs the COPY pipe without load, $runs rounds"
  need B11 postgresql-15 "$PG_BIN/pgbench" || return 0
  need B11 sqlite3 sqlite3 || return 0 # it reads the engine's events
  b11_setup

  "$CLI" --state "$WORK/b11.state" run --pipeline b11 >"$WORK/b11_run.log" 2>&1 &
  local cli=$!
  BENCH_PIDS+=("$cli")
  local i
  for ((i = 0; i < 100; i++)); do
    [[ $(pg_value b11_src "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'driftless_b11' AND active") == 1 ]] && break
    kill -0 "$cli" 2>/dev/null || { cat "$WORK/b11_run.log" >&2; die "B11: driftless-cli run exited"; }
    sleep 0.1
  done
  sleep 1

  local r base=() eng=() copy=() tps=() drift_max=0 locks=none max_lock=none waits=0 m k
  for ((r = 0; r < runs; r++)); do
    for k in 0 1; do
      if (((r + k) % 2 == 0)); then
        b11_baseline
        base+=("$CMD_SECS")
        log "B11 round $((r + 1)): baseline COPY pipe (no load) $CMD_SECS s"
      else
        b11_drift_target
        b11_rebackfill "$cli"
        eng+=("$RB_SECS"); copy+=("$RB_COPY_SECS"); tps+=("$RB_TPS")
        ((DRIFT_T + DRIFT_LAG > drift_max)) && drift_max=$((DRIFT_T + DRIFT_LAG))
        [[ $RB_LOCKS == yes ]] && locks=yes
        waits=$((waits + RB_WAITS))
        m=$RB_MAX_LOCK
        if [[ $m != none ]] && (($(b11_mode_rank "$m") > $(b11_mode_rank "$max_lock"))); then max_lock=$m; fi
        log "B11 round $((r + 1)): re-backfill under load $RB_SECS s"
      fi
    done
  done

  local rss
  rss=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$cli/status" 2>/dev/null || echo 0)
  kill -INT "$cli" 2>/dev/null || true
  wait "$cli" || { cat "$WORK/b11_run.log" >&2; die "B11: driftless-cli run failed"; }
  BENCH_PIDS=()

  local eng_rate base_rate copy_rate rt tps_med
  eng_rate=$(rate "$ROWS" "$(median "${eng[@]}")")
  copy_rate=$(rate "$ROWS" "$(median "${copy[@]}")")
  base_rate=$(rate "$ROWS" "$(median "${base[@]}")")
  rt=$(ratio "$eng_rate" "$base_rate")
  tps_med=$(printf '%.0f' "$(median "${tps[@]}")")
  result "B11 rows_per_s=$eng_rate baseline_rows_per_s=$base_rate ratio=$rt drift_rows=$drift_max locks=$locks" \
    "max_lock=$max_lock lock_waits=$waits tps=$tps_med copy_rows_per_s=$copy_rate peak_rss_mb=$rss" \
    "case=rebackfill_under_load rows=$ROWS runs=$runs goal=0.7,drift=0,locks=none" \
    "goal_met=$(both "$(at_least "$rt" 0.7)" "$( [[ $drift_max == 0 && $locks == none ]] && echo yes || echo no)")"
  drop_slots b11_src
  local db
  for db in b11_src b11_dst b11_base b11_mon; do pg postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; done
}
