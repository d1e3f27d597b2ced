# shellcheck shell=bash
# B8: Postgres CDC end to end (strategy: cdc), against pg_recvlogical draining the same changes.
#
# Part 1, ingest. Per round, a fresh source database b8_src with an empty bench.t and two slots
# created before any workload:
#   driftless   slot driftless_b8, made by an untimed first `driftless-cli run --once` (initial
#               load of the empty table) into a fresh target database b8_dst
#   baseline    slot b8_base (pg_recvlogical --create-slot --plugin pgoutput) on publication
#               b8_base FOR TABLE bench.t
# Then three workloads, one after the other, each generated on the source with nothing else
# running, its end E = pg_current_wal_insert_lsn(), then drained by both, in an order that alternates:
#   one_txn           one transaction inserting ROWS rows (1M by default)
#   txns_1000_rows    ROWS/1000 transactions each updating 1000 rows (1000 x 1000 by default)
#   single_row_txns   ROWS/10 single-row transactions, each inserting one row (100k by default)
#   driftless   `driftless-cli run --once` (wall time of the whole command: it streams until
#               everything committed when it started is applied, then exits)
#   baseline    pg_recvlogical --start --endpos=E -o proto_version=1 -o publication_names=b8_base
#               -f /dev/null
# Autovacuum is off for bench.t on both sides (no vacuum inside a timed window); before each
# workload, untimed, both tables are ANALYZEd (as autovacuum would have by then) and both slots
# are dropped and recreated at the current WAL position, so both start decoding at the same
# place and neither decodes earlier workloads or the apply into b8_dst. After each workload the
# target must equal the source (count, sum(n)) and the baseline slot must have reached E.
# Figures: median rows/s over the rounds, ratio driftless / pg_recvlogical (goal >= 0.9) and,
# for the two batched workloads, driftless applied rows/s >= 75k; peak RSS of driftless-cli.
#
# Part 2, lag. A table bench.lag (id bigserial, n, label, written_at timestamptz default
# clock_timestamp()) with 10k rows, loaded by `driftless-cli run` which then keeps streaming.
#   lag_1k_tps            pgbench -R 1000 for B8_LAG_SECONDS (30): single-row transactions, half
#                         INSERTs, half UPDATEs of a random row setting written_at = clock_timestamp()
#   lag_max_insert_rate   pgbench unthrottled (2 clients) for B8_MAX_SECONDS (10), INSERTs only
# A poller in the target database (a DO loop, every B8_POLL_MS = 50 ms) records for each newly
# arrived (id, written_at) the time it first saw it; lag = seen - written_at, both read from the
# same server clock (it includes up to one poll interval). catchup_ms is the lag of the source's
# last write (how far behind the target was when the load stopped); keeps_up = catchup_ms < 1000.
# Knobs for a quicker look at one figure: B8_CASES (a space-separated subset of the ingest cases,
# e.g. "single_row_txns"; txns_1000_rows updates the rows one_txn inserts, so it needs one_txn
# before it), B8_LAG=0 (skip the lag part).
# Sourced by run_all.sh.

: "${B8_LAG_SECONDS:=30}"
: "${B8_MAX_SECONDS:=10}"
: "${B8_POLL_MS:=50}"

# The values of rows FROM..TO as bench.t holds them (as generate_table in lib.sh).
b8_rows_sql() {
  echo "SELECT g, (g * 7919) % 1000003, ((g * 104729) % 100000000) / 100.0,
               'item-' || lpad(g::text, 10, '0') || '-' || substr(md5(g::text), 1, 8),
               timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second', g % 3 = 0
        FROM generate_series($1::bigint, $2) g"
}

# Waits until no session uses the slot (the walsender of a finished client exits just after it).
b8_wait_slot_idle() {
  local i
  for ((i = 0; i < 100; i++)); do
    [[ $(pg_value b8_src "SELECT active FROM pg_replication_slots WHERE slot_name = '$1'") == f ]] && return 0
    sleep 0.05
  done
  die "B8: slot $1 is still in use"
}

# Before a workload (untimed): ANALYZE both tables, as autovacuum (off for them, so that it never
# runs inside a timed window) would have by then; then drop and recreate both slots at the
# current WAL position. Advancing them instead (pg_replication_slot_advance) moves
# confirmed_flush_lsn but leaves restart_lsn behind by one running-xacts record at a time, so the
# next START_REPLICATION would re-decode, unevenly for the two slots, up to several hundred MB of
# earlier workloads and of the apply into b8_dst (same server): seconds of noise. Driftless's
# checkpoint moves to its recreated slot's start (below).
b8_quiesce() {
  b8_wait_slot_idle driftless_b8
  b8_wait_slot_idle b8_base
  pg b8_src -c "ANALYZE bench.t"
  pg b8_dst -c "ANALYZE bench.t"
  pg b8_src -c "CHECKPOINT" \
    -c "SELECT pg_drop_replication_slot(s) FROM unnest(ARRAY['driftless_b8', 'b8_base']) s" \
    -c "SELECT pg_create_logical_replication_slot(s, 'pgoutput') FROM unnest(ARRAY['driftless_b8', 'b8_base']) s" \
    >/dev/null
  # Driftless refuses a slot that starts past its checkpoint (recreated behind its back: faults
  # F4). Nothing was committed since its last checkpoint, so moving the checkpoint to the new
  # slot's start is exact here.
  local lsn
  lsn=$(pg_value b8_src "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'driftless_b8'")
  pg b8_dst -c "UPDATE _driftless.checkpoints SET position = jsonb_set(position::jsonb, '{lsn}', to_jsonb('$lsn'::text))::text
                WHERE position::jsonb ->> 'phase' = 'stream'" >/dev/null
}

b8_recvlogical() { # ENDPOS
  "$PG_BIN/pg_recvlogical" -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d b8_src --no-password --no-loop \
    --slot b8_base --start --endpos="$1" --plugin pgoutput \
    -o proto_version=1 -o publication_names=b8_base -f /dev/null
}

# A new round: fresh source and target, both slots created, nothing streamed yet.
b8_reset() {
  drop_slots b8_src
  fresh_db b8_src
  pg b8_src -c "DROP SCHEMA IF EXISTS bench CASCADE" -c "$BENCH_TABLE_DDL" \
    -c "ALTER TABLE bench.t SET (autovacuum_enabled = off)" -c "CREATE PUBLICATION b8_base FOR TABLE bench.t"
  fresh_db b8_dst
  cli_apply "$WORK/b8.state" "$WORK/b8.yaml"
  cli_run_once "$WORK/b8.state" # creates publication driftless_b8 and slot driftless_b8, loads 0 rows
  pg b8_dst -c "ALTER TABLE bench.t SET (autovacuum_enabled = off)"
  "$PG_BIN/pg_recvlogical" -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d b8_src --no-password \
    --slot b8_base --create-slot --plugin pgoutput >"$WORK/cmd.log" 2>&1 \
    || { cat "$WORK/cmd.log" >&2; die "pg_recvlogical --create-slot failed"; }
  b8_wait_slot_idle driftless_b8
}

b8_workload() { # CASE
  # shellcheck disable=SC2153  # ROWS comes from run_all.sh
  local big=$ROWS per=1000 txns=$((ROWS / 1000)) singles=$((ROWS / 10))
  case $1 in
    one_txn) pg b8_src -c "INSERT INTO bench.t $(b8_rows_sql 1 "$big")" ;;
    txns_1000_rows)
      pg b8_src -c "DO \$\$ BEGIN
          FOR i IN 0..$((txns - 1)) LOOP
            UPDATE bench.t SET n = n + 1, amount = amount + 1, label = 'upd-' || substr(label, 5),
                               updated_at = clock_timestamp()
             WHERE id > i * $per AND id <= (i + 1) * $per;
            COMMIT;
          END LOOP; END \$\$" ;;
    single_row_txns)
      pg b8_src -c "DO \$\$ BEGIN
          FOR i IN $((big + 1))..$((big + singles)) LOOP
            INSERT INTO bench.t VALUES (i, (i::bigint * 7919) % 1000003, (i % 100000) / 100.0,
                                        'one-' || lpad(i::text, 11, '0') || '-' || substr(md5(i::text), 1, 8),
                                        clock_timestamp(), i % 3 = 0);
            COMMIT;
          END LOOP; END \$\$" ;;
  esac
}

b8_check() { # CASE ENDPOS
  local want got
  want=$(pg_value b8_src "SELECT count(*) || ' ' || coalesce(sum(n), 0) FROM bench.t")
  got=$(pg_value b8_dst "SELECT count(*) || ' ' || coalesce(sum(n), 0) FROM bench.t")
  [[ $got == "$want" ]] || die "B8 $1: target has (count sum) $got, source $want"
  got=$(pg_value b8_src "SELECT confirmed_flush_lsn >= '$2' FROM pg_replication_slots WHERE slot_name = 'b8_base'")
  [[ $got == t ]] || die "B8 $1: pg_recvlogical did not reach $2"
}

b8_ingest() {
  local runs=$1 r w k c end rows txns
  local all=(one_txn txns_1000_rows single_row_txns) cases=()
  # shellcheck disable=SC2206  # a space-separated list of case names
  [[ -n ${B8_CASES:-} ]] && cases=($B8_CASES) || cases=("${all[@]}")
  # txns_1000_rows updates the rows one_txn inserts: alone it would time an empty stream.
  if [[ " ${cases[*]} " == *" txns_1000_rows "* && " ${cases[*]} " != *" one_txn "*txns_1000_rows* ]]; then
    die "B8_CASES: txns_1000_rows updates the rows one_txn inserts; list one_txn before it (e.g. B8_CASES=\"one_txn txns_1000_rows\")"
  fi
  local -A eng base rss
  write_workspace "$WORK/b8.yaml" b8_src "{ kind: postgres, dsn: \"$(pg_dsn b8_dst)\" }" "{ table: bench.t, strategy: cdc }"
  sed -i 's/^  - name: bench$/  - name: b8/' "$WORK/b8.yaml"
  for ((r = 0; r < runs; r++)); do
    b8_reset
    for ((k = 0; k < ${#cases[@]}; k++)); do
      c=${cases[$k]}
      [[ " ${all[*]} " == *" $c "* ]] || die "B8_CASES: unknown case '$c' (${all[*]})"
      b8_quiesce
      b8_workload "$c"
      end=$(pg_value b8_src "SELECT pg_current_wal_insert_lsn()")
      for ((w = 0; w < 2; w++)); do
        if (((r + k + w) % 2 == 0)); then
          cli_run_once "$WORK/b8.state"
          eng[$c]+=" $CLI_SECS"; rss[$c]+=" $CLI_RSS_MB"
        else
          timed b8_recvlogical "$end"
          base[$c]+=" $CMD_SECS"
        fi
      done
      b8_check "$c" "$end"
      log "B8 round $((r + 1)) $c: driftless ${eng[$c]##* } s (peak RSS ${rss[$c]##* } MB), pg_recvlogical ${base[$c]##* } s"
    done
  done
  local eng_rate base_rate rt peak goal ok
  for c in "${cases[@]}"; do
    case $c in
      one_txn) rows=$ROWS; txns=1 ;;
      txns_1000_rows) rows=$(((ROWS / 1000) * 1000)); txns=$((ROWS / 1000)) ;;
      single_row_txns) rows=$((ROWS / 10)); txns=$rows ;;
    esac
    # shellcheck disable=SC2086  # the lists are space-separated numbers
    eng_rate=$(rate "$rows" "$(median ${eng[$c]})")
    # shellcheck disable=SC2086
    base_rate=$(rate "$rows" "$(median ${base[$c]})")
    rt=$(ratio "$eng_rate" "$base_rate")
    # shellcheck disable=SC2086
    peak=$(maximum ${rss[$c]})
    if [[ $c == single_row_txns ]]; then
      goal=0.9; ok=$(at_least "$rt" 0.9)
    else
      goal=0.9,75k; ok=$(both "$(at_least "$rt" 0.9)" "$(at_least "$eng_rate" 75000)")
    fi
    result "B8 rows_per_s=$eng_rate baseline_rows_per_s=$base_rate ratio=$rt peak_rss_mb=$peak" \
      "case=$c rows=$rows txns=$txns runs=$runs goal=$goal goal_met=$ok"
  done
  drop_slots b8_src
  local db
  for db in b8_src b8_dst; do pg postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; done
}

# --- part 2: lag ---------------------------------------------------------------------------------

b8_poller_sql() {
  cat <<SQL
DO \$\$
DECLARE
  since timestamptz := clock_timestamp();
  give_up timestamptz := clock_timestamp() + interval '$1 seconds';
  ts timestamptz; m timestamptz; lw timestamptz;
BEGIN
  LOOP
    ts := clock_timestamp();
    WITH seen AS (
      INSERT INTO public.b8_seen SELECT id, written_at, ts FROM bench.lag WHERE written_at > since
      ON CONFLICT DO NOTHING RETURNING written_at)
    SELECT max(written_at) INTO m FROM seen;
    -- changes apply in source commit order, which follows written_at to within milliseconds
    since := greatest(since, m - interval '2 seconds');
    SELECT last_write INTO lw FROM public.b8_ctl;
    COMMIT;
    EXIT WHEN lw IS NOT NULL AND EXISTS (SELECT 1 FROM public.b8_seen WHERE written_at >= lw);
    EXIT WHEN clock_timestamp() > give_up;
    PERFORM pg_sleep($B8_POLL_MS / 1000.0);
  END LOOP;
END \$\$
SQL
}

# One load phase: CASE SECONDS PGBENCH_ARGS...; prints its result line.
b8_lag_phase() {
  local c=$1 secs=$2; shift 2
  pg b8_ldst -c "TRUNCATE public.b8_seen, public.b8_ctl"
  pg b8_ldst -c "$(b8_poller_sql $((secs + 40)))" >"$WORK/poller.log" 2>&1 &
  local poller=$!
  BENCH_PIDS+=("$poller")
  sleep 0.3
  local t0 tps
  t0=$(pg_value b8_lsrc "SELECT clock_timestamp()")
  "$PG_BIN/pgbench" -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -n -T "$secs" "$@" b8_lsrc >"$WORK/pgbench.log" 2>&1 \
    || { cat "$WORK/pgbench.log" >&2; die "pgbench failed"; }
  tps=$(sed -n 's/^tps = \([0-9]*\).*/\1/p' "$WORK/pgbench.log" | head -n 1)
  local last
  last=$(pg_value b8_lsrc "SELECT max(written_at) FROM bench.lag")
  pg b8_ldst -c "INSERT INTO public.b8_ctl VALUES ('$last')"
  wait "$poller" || { cat "$WORK/poller.log" >&2; die "B8 $c: the lag poller failed"; }
  local written seen stats p50 p99 catchup n keeps
  stats=$(pg_value b8_ldst "SELECT count(*),
      round(1000 * percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM seen_at - written_at))),
      round(1000 * percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM seen_at - written_at))),
      coalesce(round(1000 * extract(epoch FROM max(seen_at - written_at) FILTER (WHERE written_at >= '$last'))), -1)
    FROM public.b8_seen WHERE written_at > '$t0'")
  IFS='|' read -r n p50 p99 catchup <<<"$stats"
  if ((catchup < 0)); then
    keeps=no; catchup=timeout
    log "B8 $c: the target did not catch up within 40 s of the load's end"
  else
    keeps=$(below "$catchup" 1000)
    # Every row the source wrote in the window must have reached the target in its last state.
    written=$(pg_value b8_lsrc "SELECT count(*) FROM bench.lag WHERE written_at > '$t0'")
    seen=$(pg_value b8_ldst "SELECT count(*) FROM bench.lag WHERE written_at > '$t0'")
    [[ $written == "$seen" ]] || die "B8 $c: the source wrote $written rows since $t0, the target has $seen"
  fi
  LAG_P50=$p50 LAG_P99=$p99 LAG_TPS=$tps LAG_SAMPLES=$n LAG_CATCHUP=$catchup LAG_KEEPS=$keeps
  log "B8 $c: pgbench $tps tps for $secs s; $n arrivals observed; lag p50 $p50 ms, p99 $p99 ms; last write applied after $catchup ms"
}

b8_lag() {
  log "B8: lag at 1k TPS for $B8_LAG_SECONDS s, then at the max insert rate for $B8_MAX_SECONDS s"
  drop_slots b8_lsrc
  fresh_db b8_lsrc
  fresh_db b8_ldst
  pg b8_lsrc -c "CREATE SCHEMA bench" -c "CREATE TABLE bench.lag (
        id bigserial PRIMARY KEY,
        n integer NOT NULL,
        label text NOT NULL,
        written_at timestamptz NOT NULL DEFAULT clock_timestamp())" \
    -c "INSERT INTO bench.lag (n, label, written_at)
        SELECT g, 'lag-' || g, timestamptz '2024-01-01 00:00:00+00' FROM generate_series(1, 10000) g" \
    -c "VACUUM ANALYZE bench.lag"
  write_workspace "$WORK/b8lag.yaml" b8_lsrc "{ kind: postgres, dsn: \"$(pg_dsn b8_ldst)\" }" \
    "{ table: bench.lag, strategy: cdc }"
  sed -i 's/^  - name: bench$/  - name: b8lag/' "$WORK/b8lag.yaml"
  cli_apply "$WORK/b8lag.state" "$WORK/b8lag.yaml"
  cli_run_once "$WORK/b8lag.state" # initial load (untimed); the target table now exists
  pg b8_ldst -c "CREATE INDEX lag_written_at ON bench.lag (written_at)" \
    -c "CREATE TABLE public.b8_seen (id bigint, written_at timestamptz, seen_at timestamptz,
                                     PRIMARY KEY (id, written_at))" \
    -c "CREATE TABLE public.b8_ctl (last_write timestamptz)"
  cat >"$WORK/lag_insert.sql" <<'SQL'
\set n random(1, 1000000)
INSERT INTO bench.lag (n, label) VALUES (:n, 'ins-' || :n);
SQL
  cat >"$WORK/lag_update.sql" <<'SQL'
\set id random(1, 10000)
UPDATE bench.lag SET n = n + 1, written_at = clock_timestamp() WHERE id = :id;
SQL

  # The engine streams continuously from here on.
  "$CLI" --state "$WORK/b8lag.state" run >"$WORK/b8lag_run.log" 2>&1 &
  local cli=$!
  BENCH_PIDS+=("$cli")
  local i
  for ((i = 0; i < 100; i++)); do
    [[ $(pg_value b8_lsrc "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'driftless_b8lag' AND active") == 1 ]] && break
    kill -0 "$cli" 2>/dev/null || { cat "$WORK/b8lag_run.log" >&2; die "B8: driftless-cli run exited"; }
    sleep 0.1
  done
  sleep 1

  b8_lag_phase lag_1k_tps "$B8_LAG_SECONDS" -R 1000 -c 4 -j 2 -f "$WORK/lag_insert.sql@1" -f "$WORK/lag_update.sql@1"
  local p50=$LAG_P50 p99=$LAG_P99 tps=$LAG_TPS n=$LAG_SAMPLES catchup=$LAG_CATCHUP keeps=$LAG_KEEPS
  b8_lag_phase lag_max_insert_rate "$B8_MAX_SECONDS" -c 2 -j 2 -f "$WORK/lag_insert.sql"

  local rss
  rss=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$cli/status" 2>/dev/null || echo 0)
  kill -INT "$cli" 2>/dev/null || true
  wait "$cli" || { cat "$WORK/b8lag_run.log" >&2; die "B8: driftless-cli run failed"; }
  BENCH_PIDS=()

  result "B8 lag_p50_ms=$p50 lag_p99_ms=$p99 tps=$tps peak_rss_mb=$rss case=lag_1k_tps seconds=$B8_LAG_SECONDS" \
    "samples=$n catchup_ms=$catchup keeps_up=$keeps goal=p99<1000,keeps_up" \
    "goal_met=$(both "$(below "$p99" 1000)" "$keeps")"
  result "B8 lag_p50_ms=$LAG_P50 lag_p99_ms=$LAG_P99 tps=$LAG_TPS peak_rss_mb=$rss case=lag_max_insert_rate" \
    "seconds=$B8_MAX_SECONDS samples=$LAG_SAMPLES catchup_ms=$LAG_CATCHUP keeps_up=$LAG_KEEPS goal=keeps_up" \
    "goal_met=$LAG_KEEPS"
  drop_slots b8_lsrc
  local db
  for db in b8_lsrc b8_ldst; do pg postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; done
}

bench_b8() {
  local runs=${B8_RUNS:-$RUNS}
  log "B8: CDC ingest (1 x $ROWS, $((ROWS / 1000)) x 1000, $((ROWS / 10)) x 1 rows) vs pg_recvlogical, $runs rounds; lag"
  need B8 postgresql-client-15 "$PG_BIN/pg_recvlogical" || return 0
  need B8 postgresql-15 "$PG_BIN/pgbench" || return 0
  b8_ingest "$runs"
  [[ ${B8_LAG:-1} == 0 ]] || b8_lag
}
