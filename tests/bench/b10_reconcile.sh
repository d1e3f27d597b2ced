# shellcheck shell=bash
# B10: reconciliation of bench.t (ROWS rows) between two Postgres databases, equal and with 0.1%
# of the rows differing, against pg_comparator and against the hashing floor.
#
#   driftless   `driftless-cli reconcile bench --json` (the report is stored; exit 3 on drift)
#   baseline    pg_comparator (Debian postgresql-comparator, its pgcmp extension in both
#               databases, default checksum and aggregate) over the same key and columns
#   floor       one hashing scan of each side at once: count(*) and the sum of a 60-bit hash of
#               each row (hash_record_extended over the typed columns, as the reconciler hashes
#               rows between two Postgres servers), the scan the reconciler makes first
# Cases: equal (both databases clones of seed), then diff (every 1000th row changed in the
# target). ratio = baseline seconds / driftless seconds (goal >= 1.5); floor_ratio = driftless
# seconds / floor seconds (goal <= 2); diff_vs_equal = driftless diff seconds / equal seconds
# (goal <= 1.5). The reports must count 0 and ROWS/1000 differences, pg_comparator the same.
# Sourced by run_all.sh.

B10_COLS="id:n,amount,label,updated_at,flag"
B10_HASH="SELECT count(*), sum(hash_record_extended(ROW(id, n, amount, (label COLLATE \"C\"), updated_at, flag), 0) & 1152921504606846975) FROM bench.t"

b10_floor() {
  pg b10_src -At -c "$B10_HASH" >/dev/null &
  local pid=$!
  pg b10_dst -At -c "$B10_HASH" >/dev/null
  wait "$pid"
}

b10_comparator() { # EXPECTED_DIFFS
  local url_a url_b
  url_a="pgsql://$PG_USER@$PG_HOST:$PG_PORT/b10_src/bench.t?$B10_COLS"
  url_b="pgsql://$PG_USER@$PG_HOST:$PG_PORT/b10_dst/bench.t?$B10_COLS"
  pg_comparator --stats=txt "$url_a" "$url_b" >"$WORK/b10_cmp.log" 2>&1 || true
  local found
  found=$(awk -F: '/diffs found/ { gsub(/ /, "", $2); print $2 }' "$WORK/b10_cmp.log")
  [[ $found == "$1" ]] || { cat "$WORK/b10_cmp.log" >&2; die "B10: pg_comparator found '$found' differences, expected $1"; }
}

# Times `driftless-cli reconcile` alone (B10_SECS), then checks its report. The check runs after
# the clock stops: python3 alone starts in 0.3 s on a 2-core machine, a third of what it checks.
b10_driftless() { # EXPECTED_DIFFS
  local rc=0 t0 t1
  t0=$EPOCHREALTIME
  "$CLI" --state "$WORK/b10.state" reconcile bench --json >"$WORK/b10.json" 2>"$WORK/b10.err" || rc=$?
  t1=$EPOCHREALTIME
  B10_SECS=$(elapsed "$t0" "$t1")
  [[ $rc == 0 || $rc == 3 ]] || { cat "$WORK/b10.err" >&2; die "B10: driftless-cli reconcile failed ($rc)"; }
  local found
  found=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["tables"][0]; print(t["missing"]+t["extra"]+t["different"])' "$WORK/b10.json")
  [[ $found == "$1" ]] || die "B10: the report counts $found differences, expected $1"
}

bench_b10() {
  log "B10: reconciliation of $ROWS rows, equal and 0.1% different, $RUNS rounds"
  need B10 postgresql-comparator pg_comparator || return 0
  clone_db seed b10_src
  clone_db seed b10_dst
  local db
  for db in b10_src b10_dst; do
    if ! pg "$db" -c "CREATE EXTENSION IF NOT EXISTS pgcmp" >"$WORK/b10_ext.log" 2>&1; then
      refuse B10 "pg_comparator's pgcmp extension cannot be created in the Postgres of the benchmark ($(head -n 1 "$WORK/b10_ext.log")); install the one for Postgres 15 (package postgresql-comparator)"
      return 0
    fi
  done
  write_workspace "$WORK/b10.yaml" b10_src "{ kind: postgres, dsn: \"$(pg_dsn b10_dst)\" }" \
    "{ table: bench.t, strategy: full_refresh }"
  cli_apply "$WORK/b10.state" "$WORK/b10.yaml"

  local equal_secs=
  for case in equal diff; do
    local expected=0 eng=() base=() floor=() r t0 t1
    if [[ $case == diff ]]; then
      pg b10_dst -c "UPDATE bench.t SET label = label || '*' WHERE id % 1000 = 0" -c "VACUUM (ANALYZE) bench.t" >/dev/null
      expected=$(( ROWS / 1000 ))
    fi
    for ((r = 1; r <= RUNS; r++)); do
      pg postgres -c "CHECKPOINT" >/dev/null
      b10_driftless "$expected"
      eng+=("$B10_SECS")
      timed b10_floor; floor+=("$CMD_SECS")
      t0=$EPOCHREALTIME; b10_comparator "$expected"; t1=$EPOCHREALTIME
      base+=("$(elapsed "$t0" "$t1")")
    done
    local e f b
    e=$(median "${eng[@]}"); f=$(median "${floor[@]}")
    b=$(median "${base[@]}")
    [[ $case == equal ]] && equal_secs=$e
    local extra=""
    [[ $case == diff ]] && extra=" diff_vs_equal=$(ratio "$e" "$equal_secs") diff_vs_equal_goal_met=$(below "$(ratio "$e" "$equal_secs")" 1.5001)"
    result "B10 case=$case rows=$ROWS differences=$expected secs=$e baseline_secs=$b ratio=$(ratio "$b" "$e")" \
      "goal_met=$(at_least "$(ratio "$b" "$e")" 1.5) floor_secs=$f floor_ratio=$(ratio "$e" "$f")" \
      "floor_goal_met=$(below "$(ratio "$e" "$f")" 2.0001)$extra"
  done
}
