# shellcheck shell=bash
# B1: backfill pg->pg of bench.t into an empty target with the same primary key.
#
#   driftless full refresh     `driftless-cli run --once` on a full_refresh table
#   driftless initial load     the same on a cursor table (key-ordered pages copied straight in)
#   baseline                   psql -c "COPY bench.t TO STDOUT" | psql -c "COPY bench.t FROM STDIN"
#
# Before every run the target is dropped (its table and, for driftless, its checkpoint), so every
# run loads into an empty table. The three run one after the other within each round, in an
# order that rotates from round to round. Figures: median rows/s of RUNS rounds; peak RSS of
# driftless-cli (the largest over the rounds).
# Sourced by run_all.sh.

b1_reset_engine_target() {
  pg "$1" -c "DROP SCHEMA IF EXISTS bench CASCADE" -c "DROP SCHEMA IF EXISTS _driftless CASCADE" -c "CHECKPOINT"
}

b1_baseline_copy() {
  pg seed -c "COPY bench.t TO STDOUT" | pg b1_base -c "COPY bench.t FROM STDIN"
}

b1_check_rows() {
  local got
  got=$(pg_value "$1" "SELECT count(*) FROM bench.t")
  [[ $got == "$ROWS" ]] || die "B1 $2: target holds $got rows, expected $ROWS"
}

bench_b1() {
  log "B1: backfill pg->pg, $ROWS rows, $RUNS rounds"
  local db
  for db in b1_fr b1_cur b1_base; do fresh_db "$db"; done
  write_workspace "$WORK/b1_fr.yaml" seed "{ kind: postgres, dsn: \"$(pg_dsn b1_fr)\" }" \
    "{ table: bench.t, strategy: full_refresh }"
  write_workspace "$WORK/b1_cur.yaml" seed "{ kind: postgres, dsn: \"$(pg_dsn b1_cur)\" }" \
    "{ table: bench.t, strategy: cursor, cursor: updated_at }"
  cli_apply "$WORK/b1_fr.state" "$WORK/b1_fr.yaml"
  cli_apply "$WORK/b1_cur.state" "$WORK/b1_cur.yaml"

  local fr=() cur=() base=() rss_fr=() rss_cur=() r k c
  local cases=(fr cur base)
  for ((r = 0; r < RUNS; r++)); do
    for ((k = 0; k < 3; k++)); do
      c=${cases[$(((r + k) % 3))]}
      case $c in
        fr)
          b1_reset_engine_target b1_fr
          cli_run_once "$WORK/b1_fr.state"
          b1_check_rows b1_fr "full refresh"
          fr+=("$CLI_SECS"); rss_fr+=("$CLI_RSS_MB")
          log "B1 round $((r + 1)): full refresh $CLI_SECS s, peak RSS $CLI_RSS_MB MB" ;;
        cur)
          b1_reset_engine_target b1_cur
          cli_run_once "$WORK/b1_cur.state"
          b1_check_rows b1_cur "cursor initial load"
          cur+=("$CLI_SECS"); rss_cur+=("$CLI_RSS_MB")
          log "B1 round $((r + 1)): cursor initial load $CLI_SECS s, peak RSS $CLI_RSS_MB MB" ;;
        base)
          pg b1_base -c "DROP SCHEMA IF EXISTS bench CASCADE" -c "$BENCH_TABLE_DDL" -c "CHECKPOINT"
          timed b1_baseline_copy
          b1_check_rows b1_base baseline
          base+=("$CMD_SECS")
          log "B1 round $((r + 1)): baseline COPY pipe $CMD_SECS s" ;;
      esac
    done
  done

  local base_rate fr_rate cur_rate fr_ratio cur_ratio fr_rss cur_rss
  base_rate=$(rate "$ROWS" "$(median "${base[@]}")")
  fr_rate=$(rate "$ROWS" "$(median "${fr[@]}")")
  cur_rate=$(rate "$ROWS" "$(median "${cur[@]}")")
  fr_ratio=$(ratio "$fr_rate" "$base_rate"); cur_ratio=$(ratio "$cur_rate" "$base_rate")
  fr_rss=$(maximum "${rss_fr[@]}"); cur_rss=$(maximum "${rss_cur[@]}")
  result "B1 rows_per_s=$fr_rate baseline_rows_per_s=$base_rate ratio=$fr_ratio peak_rss_mb=$fr_rss" \
    "case=full_refresh rows=$ROWS runs=$RUNS goal=1.0,rss<200" \
    "goal_met=$(both "$(at_least "$fr_ratio" 1.0)" "$(below "$fr_rss" 200)")"
  result "B1 rows_per_s=$cur_rate baseline_rows_per_s=$base_rate ratio=$cur_ratio peak_rss_mb=$cur_rss" \
    "case=cursor_initial_load rows=$ROWS runs=$RUNS goal=1.0,rss<200" \
    "goal_met=$(both "$(at_least "$cur_ratio" 1.0)" "$(below "$cur_rss" 200)")"
  for db in b1_fr b1_cur b1_base; do pg postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; done
}
