# shellcheck shell=bash
# B7: cursor sync of bench.t with 1% of the rows changed (updated_at bumped) since the last pass.
#
#   driftless   `driftless-cli run --once` on a cursor table (cursor updated_at, lookback 0s), whose
#               initial load was done before the clock starts
#   baseline    psql -c "COPY (SELECT * FROM bench.t WHERE updated_at > 'c') TO STDOUT"
#                 | psql -c BEGIN -c "TRUNCATE staging" -c "COPY staging FROM STDIN"
#                        -c "INSERT ... ON CONFLICT (id) DO UPDATE ..." -c COMMIT
#               where c is the source's max(updated_at) before the change (what a hand-written
#               cursor script remembers between runs)
#
# Each round bumps a fresh 1% of the rows (id % 100 = round) to clock_timestamp(), then runs both
# sides (alternating which goes first) over the same change. The source has an index on
# updated_at, as any cursor-synced table should. lookback is 0s so that both sides read the same
# rows: with the default 10-minute lookback the engine would, by design, also re-read the rows
# of the earlier rounds.
# Sourced by run_all.sh.

B7_UPSERT="INSERT INTO bench.t SELECT * FROM bench.stg ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n,
  amount = EXCLUDED.amount, label = EXCLUDED.label, updated_at = EXCLUDED.updated_at, flag = EXCLUDED.flag"

b7_baseline() {
  pg b7_src -c "COPY (SELECT * FROM bench.t WHERE updated_at > '$1') TO STDOUT" \
    | pg b7_base -c "BEGIN" -c "TRUNCATE bench.stg" -c "COPY bench.stg FROM STDIN" -c "$B7_UPSERT" -c "COMMIT"
}

b7_check() { # DB CUTOFF EXPECTED WHAT
  local got
  got=$(pg_value "$1" "SELECT count(*) FROM bench.t WHERE updated_at > '$2'")
  [[ $got == "$3" ]] || die "B7 $4: target has $got rows changed after $2, expected $3"
}

bench_b7() {
  log "B7: cursor sync, 1% of $ROWS rows changed, $RUNS rounds"
  clone_db seed b7_src
  pg b7_src -c "CREATE INDEX t_updated_at ON bench.t (updated_at)" -c "ANALYZE bench.t"
  clone_db seed b7_base
  pg b7_base -c "CREATE UNLOGGED TABLE bench.stg (LIKE bench.t)"
  fresh_db b7_eng
  write_workspace "$WORK/b7.yaml" b7_src "{ kind: postgres, dsn: \"$(pg_dsn b7_eng)\" }" \
    "{ table: bench.t, strategy: cursor, cursor: updated_at, lookback: 0s }"
  cli_apply "$WORK/b7.state" "$WORK/b7.yaml"
  log "B7: initial load of the cursor table (not timed)"
  cli_run_once "$WORK/b7.state"
  [[ $(pg_value b7_eng "SELECT count(*) FROM bench.t") == "$ROWS" ]] || die "B7: the initial load is incomplete"
  pg b7_eng -c "VACUUM (ANALYZE) bench.t"

  local eng=() base=() rss=() r c changed
  for ((r = 1; r <= RUNS; r++)); do
    c=$(pg_value b7_src "SELECT max(updated_at) FROM bench.t")
    pg b7_src -c "UPDATE bench.t SET n = n + 1, updated_at = clock_timestamp() WHERE id % 100 = $((r % 100))"
    changed=$(pg_value b7_src "SELECT count(*) FROM bench.t WHERE updated_at > '$c'")
    pg postgres -c "CHECKPOINT"
    if ((r % 2)); then
      cli_run_once "$WORK/b7.state"; timed b7_baseline "$c"
    else
      timed b7_baseline "$c"; cli_run_once "$WORK/b7.state"
    fi
    b7_check b7_eng "$c" "$changed" driftless
    b7_check b7_base "$c" "$changed" baseline
    eng+=("$CLI_SECS"); rss+=("$CLI_RSS_MB"); base+=("$CMD_SECS")
    log "B7 round $r: $changed rows changed; driftless $CLI_SECS s (peak RSS $CLI_RSS_MB MB), baseline $CMD_SECS s"
  done

  local eng_rate base_rate rt
  eng_rate=$(rate "$changed" "$(median "${eng[@]}")")
  base_rate=$(rate "$changed" "$(median "${base[@]}")")
  rt=$(ratio "$eng_rate" "$base_rate")
  result "B7 rows_per_s=$eng_rate baseline_rows_per_s=$base_rate ratio=$rt peak_rss_mb=$(maximum "${rss[@]}")" \
    "rows=$changed table_rows=$ROWS runs=$RUNS goal=0.9 goal_met=$(at_least "$rt" 0.9)"
  local db
  for db in b7_src b7_eng b7_base; do pg postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; done
}
