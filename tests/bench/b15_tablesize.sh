# shellcheck shell=bash
# B15: apply cost against table size. The same CDC batch of B15_CHANGES (10k) changes, one source
# transaction of 40% updates, 30% inserts and 30% deletes spread over the whole key range, applied
# by `driftless-cli run --once` (strategy: cdc) into targets of 100k, 1M and 10M rows
# (B15_SIZES; B15_SIZES=100000,1000000 skips the 10M one, which takes minutes to build).
#
# Per size, untimed: bench.t is generated in b15_src AND in b15_dst directly (INSERT ... SELECT
# generate_series on each, the target's rows at version 1, older than any change), after an
# initial `run --once` of the empty table made the target's layout, slot and checkpoint (pipeline
# b15); both sides VACUUM ANALYZEd. Each round: the slot is recreated at the current WAL position
# (see b8_quiesce) and the checkpoint moved to it, the batch is committed on the source, and the
# time of `run --once` that applies it is the round's (the whole command: start, decode, apply,
# exit; the merge's own statements are timed from the server log too). The target must then hold
# the source's rows (count, sum(n)).
# ms_<size> = median wall ms; merge_ms_<size> = median server time of the apply's statements;
# growth = ms of the largest size / ms of 100k (goal < 1.5: the merge is O(batch), not O(table)).
# Baseline, after each round: a batch of the same shape (keys of its own) committed on the source
# and then, by the same statements, straight into the target; baseline_ms_<size> = median server
# ms of those statements on the target, baseline_growth their growth. It is what the target's own
# work for such a batch costs at each size (random index probes and page writes), with no staging
# and no merge: when merge_growth is near baseline_growth the growth is the table's, not the apply's.
# The plans of every statement of the apply (auto_explain with ANALYZE and BUFFERS, in one
# extra untimed round per size) are written to B15_EXPLAIN (default BUILD/b15_explain.txt).
# Knobs: B15_SIZES, B15_CHANGES, B15_RUNS (default --runs).
# Sourced by run_all.sh.

: "${B15_SIZES:=100000,1000000,10000000}"
: "${B15_CHANGES:=10000}"

b15_label() { # ROWS -> 100k, 1m, 10m
  if (($1 % 1000000 == 0)); then echo "$(($1 / 1000000))m"; elif (($1 % 1000 == 0)); then echo "$(($1 / 1000))k"; else echo "$1"; fi
}

b15_wait_slot_idle() {
  local i
  for ((i = 0; i < 100; i++)); do
    [[ $(pg_value b15_src "SELECT active FROM pg_replication_slots WHERE slot_name = 'driftless_b15'") == f ]] && return 0
    sleep 0.05
  done
  die "B15: slot driftless_b15 is still in use"
}

# Source and target with SIZE rows each; the target's layout made by Driftless first.
b15_setup() { # SIZE
  drop_slots b15_src
  fresh_db b15_src
  fresh_db b15_dst
  pg b15_src -c "DROP SCHEMA IF EXISTS bench CASCADE" -c "$BENCH_TABLE_DDL" \
    -c "ALTER TABLE bench.t SET (autovacuum_enabled = off)"
  cli_apply "$WORK/b15.state" "$WORK/b15.yaml"
  cli_run_once "$WORK/b15.state" # layout, slot driftless_b15, empty initial load
  b15_wait_slot_idle
  local rows
  rows=$(b8_rows_sql 1 "$1")
  pg b15_src -c "INSERT INTO bench.t $rows" -c "VACUUM (ANALYZE) bench.t"
  pg b15_dst -c "ALTER TABLE bench.t SET (autovacuum_enabled = off)" \
    -c "INSERT INTO bench.t SELECT *, 1 FROM ($rows) g" -c "VACUUM (ANALYZE) bench.t"
}

b15_quiesce() {
  b15_wait_slot_idle
  pg b15_src -c "ANALYZE bench.t" >/dev/null
  pg b15_dst -c "ANALYZE bench.t" >/dev/null
  pg b15_src -c "CHECKPOINT" -c "SELECT pg_drop_replication_slot('driftless_b15')" \
    -c "SELECT pg_create_logical_replication_slot('driftless_b15', 'pgoutput')" >/dev/null
  local lsn
  lsn=$(pg_value b15_src "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'driftless_b15'")
  pg b15_dst -c "UPDATE _driftless.checkpoints SET position = jsonb_set(position::jsonb, '{lsn}', to_jsonb('$lsn'::text))::text
                 WHERE position::jsonb ->> 'phase' = 'stream'" >/dev/null
}

# The batch of round R into a table of SIZE rows, committed on DB: one transaction; updates and
# deletes hit keys spread over the whole range (a different set each round), inserts add keys past
# it. On the target (the baseline) the inserted rows get Driftless's version column too.
b15_workload_on() { # DB SIZE ROUND
  local db=$1 size=$2 r=$3 upd=$((B15_CHANGES * 4 / 10)) del=$((B15_CHANGES * 3 / 10)) extra=''
  local ins=$((B15_CHANGES - upd - del))
  local step=$((size / (upd + del) / (B15_ROUNDS_MAX + 1)))
  ((step >= 1)) || step=1
  [[ $db == b15_dst ]] && extra=', 1'
  pg "$db" -c "BEGIN" \
    -c "UPDATE bench.t SET n = n + 1, label = 'b15-' || substr(label, 5) WHERE id IN
          (SELECT 1 + ((g * $((B15_ROUNDS_MAX + 1)) + $r) * $step) % $size FROM generate_series(0, $((upd - 1))) g)" \
    -c "DELETE FROM bench.t WHERE id IN
          (SELECT 1 + (((g + $upd) * $((B15_ROUNDS_MAX + 1)) + $r) * $step) % $size FROM generate_series(0, $((del - 1))) g)" \
    -c "INSERT INTO bench.t SELECT *$extra FROM ($(b8_rows_sql "$((size + r * ins + 1))" "$((size + (r + 1) * ins))")) g" \
    -c "COMMIT"
}

b15_workload() { b15_workload_on b15_src "$@"; } # SIZE ROUND

b15_check() { # WHAT
  local want got
  want=$(pg_value b15_src "SELECT count(*) || ' ' || sum(n) FROM bench.t")
  got=$(pg_value b15_dst "SELECT count(*) || ' ' || sum(n) FROM bench.t")
  [[ $got == "$want" ]] || die "B15 $1: target has (count sum) $got, source $want"
}

# Server-side ms of the statements logged (log_min_duration_statement = 0 on b15_dst) since byte
# offset FROM of the server log, and that part of the log in $WORK/b15_log.txt.
b15_log_since() { # FROM
  tail -c +"$(($1 + 1))" "$B15_SERVER_LOG" >"$WORK/b15_log.txt"
  awk '/ LOG:  duration: [0-9.]+ ms  (statement|execute|bind|parse)/ {
         for (i = 1; i <= NF; i++) if ($i == "duration:") s += $(i + 1) }
       END { printf "%.1f", s }' "$WORK/b15_log.txt"
}

bench_b15() {
  local runs=${B15_RUNS:-$RUNS}
  B15_ROUNDS_MAX=$((2 * runs + 1)) # rounds 0..runs-1, the plans round, baselines runs+1..2*runs
  B15_SERVER_LOG=${DRIFTLESS_TEST_ROOT:-}/pg/server.log
  [[ -r $B15_SERVER_LOG ]] || die "B15 reads the server log for statement times and plans: no $B15_SERVER_LOG"
  local explain_file=${B15_EXPLAIN:-$BUILD/b15_explain.txt}
  log "B15: the same $B15_CHANGES-change CDC batch into targets of ${B15_SIZES//,/, } rows, $runs rounds each"
  write_workspace "$WORK/b15.yaml" b15_src "{ kind: postgres, dsn: \"$(pg_dsn b15_dst)\" }" "{ table: bench.t, strategy: cdc }"
  sed -i 's/^  - name: bench$/  - name: b15/' "$WORK/b15.yaml"
  : >"$explain_file"
  local size label r off merge_ms base_ms db first='' last='' line=B15 merges='' bases=''
  local -A wall srv base
  for size in ${B15_SIZES//,/ }; do
    label=$(b15_label "$size")
    log "B15: building source and target of $size rows"
    b15_setup "$size"
    pg postgres -c "ALTER DATABASE b15_dst SET log_min_duration_statement = 0" >/dev/null
    local ms_list=() srv_list=() base_list=()
    for ((r = 0; r <= runs; r++)); do
      b15_quiesce
      b15_workload "$size" "$r"
      if ((r == runs)); then # the extra round: plans, untimed
        pg postgres -c "ALTER DATABASE b15_dst SET session_preload_libraries = 'auto_explain'" \
          -c "ALTER DATABASE b15_dst SET auto_explain.log_min_duration = 0" \
          -c "ALTER DATABASE b15_dst SET auto_explain.log_analyze = on" \
          -c "ALTER DATABASE b15_dst SET auto_explain.log_buffers = on" >/dev/null
      fi
      off=$(stat -c %s "$B15_SERVER_LOG")
      cli_run_once "$WORK/b15.state"
      sleep 0.2 # the last lines reach the log
      merge_ms=$(b15_log_since "$off")
      b15_check "$label round $((r + 1))"
      if ((r < runs)); then
        ms_list+=("$(awk -v s="$CLI_SECS" 'BEGIN { printf "%.1f", s * 1000 }')"); srv_list+=("$merge_ms")
        log "B15 $label round $((r + 1)): ${ms_list[-1]} ms (statements $merge_ms ms); load $(cut -d' ' -f1-3 /proc/loadavg)"
        # The baseline: the same kind of batch (keys of its own) written straight into the target
        # by the statements that made it on the source; what the target's own work costs at
        # this size, the floor of any apply.
        b15_workload_on b15_src "$size" "$((runs + 1 + r))"
        off=$(stat -c %s "$B15_SERVER_LOG")
        b15_workload_on b15_dst "$size" "$((runs + 1 + r))"
        sleep 0.2
        base_ms=$(b15_log_since "$off")
        b15_check "$label baseline round $((r + 1))"
        base_list+=("$base_ms")
        log "B15 $label baseline round $((r + 1)): statements $base_ms ms"
      else
        {
          echo "=== B15: plans of the apply into $size rows ($B15_CHANGES changes) ==="
          awk '/ LOG:  duration: .* plan:/ { p = 1 } / LOG:  / && !/plan:/ { p = 0 } /^[0-9]{4}-/ && !/ LOG:  duration: .* plan:/ { p = 0 } p' \
            "$WORK/b15_log.txt"
          echo
        } >>"$explain_file"
        pg postgres -c "ALTER DATABASE b15_dst RESET ALL" >/dev/null
      fi
    done
    wall[$label]=$(median "${ms_list[@]}"); srv[$label]=$(median "${srv_list[@]}"); base[$label]=$(median "${base_list[@]}")
    line+=" ms_$label=$(printf '%.0f' "${wall[$label]}")"
    merges+=" merge_ms_$label=$(printf '%.0f' "${srv[$label]}")"
    bases+=" baseline_ms_$label=$(printf '%.0f' "${base[$label]}")"
    [[ -n $first ]] || first=$label
    last=$label
    drop_slots b15_src
    for db in b15_src b15_dst; do pg postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; done
  done
  local growth merge_growth base_growth
  growth=$(ratio "${wall[$last]}" "${wall[$first]}")
  merge_growth=$(ratio "${srv[$last]}" "${srv[$first]}")
  base_growth=$(ratio "${base[$last]}" "${base[$first]}")
  [[ $B15_SIZES == *10000000* ]] || line+=" ms_10m=skipped"
  result "$line growth=$growth$merges merge_growth=$merge_growth$bases baseline_growth=$base_growth changes=$B15_CHANGES runs=$runs" \
    "goal=1.5 goal_met=$(below "$growth" 1.5)"
  log "B15: plans in $explain_file"
}
