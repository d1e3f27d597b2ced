# shellcheck shell=bash
# B5: backfill pg->SQLite of bench.t into a new SQLite file.
#
#   driftless full refresh     `driftless-cli run --once` on a full_refresh table, SQLite target
#   driftless initial load     the same on a cursor table
#   baseline                   sqlite3 `.import --csv` of the same rows in one transaction, from a
#                              CSV file exported once beforehand with psql COPY ... CSV (only the
#                              import is timed; the table is created before the clock starts)
#
# The target file is deleted before every run. Both sides use the settings the engine uses on
# SQLite targets (journal_mode WAL, synchronous NORMAL), and the baseline's table has the column
# types and primary key the engine declares. Rounds rotate the order, as in B1.
# Sourced by run_all.sh.

B5_BASE_DDL='CREATE TABLE t (id INTEGER NOT NULL, n INTEGER NOT NULL, amount TEXT NOT NULL, label TEXT NOT NULL,
  updated_at TEXT NOT NULL, flag INTEGER NOT NULL, PRIMARY KEY (id));'

b5_rm() { rm -f "$1" "$1-wal" "$1-shm" "$1-journal"; }

b5_check_rows() {
  local got
  got=$(sqlite3 "$1" "SELECT count(*) FROM t")
  [[ $got == "$ROWS" ]] || die "B5 $2: $1 holds $got rows, expected $ROWS"
}

b5_baseline_import() {
  sqlite3 -bail "$WORK/b5_base.sqlite" <<SQL
PRAGMA synchronous = NORMAL;
BEGIN;
.import --csv $WORK/b5.csv t
COMMIT;
SQL
}

bench_b5() {
  need B5 sqlite3 sqlite3 || return 0
  local v; v=$(sqlite3 -version | cut -d' ' -f1)
  if [[ $(printf '%s\n3.32.0\n' "$v" | sort -V | head -n 1) != 3.32.0 ]]; then
    refuse B5 "sqlite3 $v is too old for .import --csv (needs >= 3.32; package sqlite3)"
    return 0
  fi
  log "B5: backfill pg->SQLite, $ROWS rows, $RUNS rounds"
  write_workspace "$WORK/b5_fr.yaml" seed "{ kind: sqlite, path: \"$WORK/b5_fr.sqlite\" }" \
    "{ table: bench.t, strategy: full_refresh }"
  write_workspace "$WORK/b5_cur.yaml" seed "{ kind: sqlite, path: \"$WORK/b5_cur.sqlite\" }" \
    "{ table: bench.t, strategy: cursor, cursor: updated_at }"
  cli_apply "$WORK/b5_fr.state" "$WORK/b5_fr.yaml"
  cli_apply "$WORK/b5_cur.state" "$WORK/b5_cur.yaml"
  # The same values the engine stores: booleans as 0/1, timestamptz as ISO text with +00:00.
  pg seed -c "SET TimeZone = 'UTC'" \
    -c "COPY (SELECT id, n, amount, label, updated_at::text || ':00', flag::int FROM bench.t) TO STDOUT CSV" \
    >"$WORK/b5.csv"

  local fr=() cur=() base=() rss_fr=() rss_cur=() r k c
  local cases=(fr cur base)
  for ((r = 0; r < RUNS; r++)); do
    for ((k = 0; k < 3; k++)); do
      c=${cases[$(((r + k) % 3))]}
      case $c in
        fr)
          b5_rm "$WORK/b5_fr.sqlite"
          cli_run_once "$WORK/b5_fr.state"
          b5_check_rows "$WORK/b5_fr.sqlite" "full refresh"
          fr+=("$CLI_SECS"); rss_fr+=("$CLI_RSS_MB")
          log "B5 round $((r + 1)): full refresh $CLI_SECS s, peak RSS $CLI_RSS_MB MB" ;;
        cur)
          b5_rm "$WORK/b5_cur.sqlite"
          cli_run_once "$WORK/b5_cur.state"
          b5_check_rows "$WORK/b5_cur.sqlite" "cursor initial load"
          cur+=("$CLI_SECS"); rss_cur+=("$CLI_RSS_MB")
          log "B5 round $((r + 1)): cursor initial load $CLI_SECS s, peak RSS $CLI_RSS_MB MB" ;;
        base)
          b5_rm "$WORK/b5_base.sqlite"
          sqlite3 -bail "$WORK/b5_base.sqlite" "PRAGMA journal_mode = WAL;" "$B5_BASE_DDL" >/dev/null
          timed b5_baseline_import
          b5_check_rows "$WORK/b5_base.sqlite" baseline
          base+=("$CMD_SECS")
          log "B5 round $((r + 1)): baseline sqlite3 .import $CMD_SECS s" ;;
      esac
    done
  done

  local base_rate fr_rate cur_rate fr_ratio cur_ratio
  base_rate=$(rate "$ROWS" "$(median "${base[@]}")")
  fr_rate=$(rate "$ROWS" "$(median "${fr[@]}")")
  cur_rate=$(rate "$ROWS" "$(median "${cur[@]}")")
  fr_ratio=$(ratio "$fr_rate" "$base_rate"); cur_ratio=$(ratio "$cur_rate" "$base_rate")
  result "B5 rows_per_s=$fr_rate baseline_rows_per_s=$base_rate ratio=$fr_ratio peak_rss_mb=$(maximum "${rss_fr[@]}")" \
    "case=full_refresh rows=$ROWS runs=$RUNS goal=1.0 goal_met=$(at_least "$fr_ratio" 1.0)"
  result "B5 rows_per_s=$cur_rate baseline_rows_per_s=$base_rate ratio=$cur_ratio peak_rss_mb=$(maximum "${rss_cur[@]}")" \
    "case=cursor_initial_load rows=$ROWS runs=$RUNS goal=1.0 goal_met=$(at_least "$cur_ratio" 1.0)"
  b5_rm "$WORK/b5_fr.sqlite"; b5_rm "$WORK/b5_cur.sqlite"; b5_rm "$WORK/b5_base.sqlite"; rm -f "$WORK/b5.csv"
}
