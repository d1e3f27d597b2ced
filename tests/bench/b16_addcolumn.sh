# shellcheck shell=bash
# B16: the add-column backfill (schema_changes: add_column: backfill) of a CDC table against a
# re-snapshot of the same table (driftless-cli resnapshot, then run --once), into a Postgres and
# into a MariaDB target. The issue asks for the backfill's cost per million rows next to a full
# re-backfill's; this prints both and their ratio.
#
# Per target, each round, untimed: source b16_src with bench.t (ROWS rows, a copy of seed when it
# exists), an empty target (b16_dst on Postgres, b16_my on MariaDB), one pipeline b16 with bench.t
# as CDC, loaded by `driftless-cli run --once`. Then
#   backfill     ALTER TABLE bench.t ADD COLUMN d int DEFAULT 7 and one UPDATE of row 1 (the
#                change that brings the new column to the stream); `run --once` is timed: it
#                reads the change, adds d on the target and fills it in every existing row,
#                that column only, through the version guard, then checks it. The whole
#                `run --once` is the figure (the engine's own event says whole seconds only:
#                "... rows backfilled in N s", printed as engine_backfill_s).
#   resnapshot   `driftless-cli resnapshot b16 bench.t`, then `run --once` timed: the table is
#                copied again from a new snapshot, d included.
# ratio = backfill rows/s / re-snapshot rows/s, each its whole `run --once` (1.00: as fast as
# copying the table again).
# The target's contents are compared with the source's after each (count and sum of d; B16 dies
# when they differ). Sourced by run_all.sh.

b16_state_value() { sqlite3 -cmd ".timeout 5000" "$WORK/b16.state" "$1"; }

# One round into TARGET (postgres|mariadb). Sets B16_RUN_S (the backfill's run --once),
# B16_BACKFILL_S (the engine's event, whole seconds) and B16_RESNAP_S.
b16_round() {
  local target=$1 dst_yaml last_id msg
  drop_slots b16_src
  seeded_db b16_src
  if [[ $target == postgres ]]; then
    fresh_db b16_dst
    dst_yaml="{ kind: postgres, dsn: \"$(pg_dsn b16_dst)\" }"
  else
    my -e "DROP DATABASE IF EXISTS b16_my; CREATE DATABASE b16_my"
    dst_yaml="{ kind: mysql, dsn: \"$(my_dsn b16_my)\" }"
  fi
  cat >"$WORK/b16.yaml" <<YAML
endpoints:
  src: { kind: postgres, dsn: "$(pg_dsn b16_src)" }
  dst: $dst_yaml
pipelines:
  - name: b16
    source: src
    target: dst
    tables:
      - { table: bench.t, strategy: cdc, schema_changes: { add_column: backfill } }
YAML
  cli_apply "$WORK/b16.state" "$WORK/b16.yaml"
  cli_run_once "$WORK/b16.state"

  pg b16_src -c "ALTER TABLE bench.t ADD COLUMN d int DEFAULT 7" -c "UPDATE bench.t SET d = 8 WHERE id = 1" \
    -c "CHECKPOINT"
  last_id=$(b16_state_value "SELECT coalesce(max(id), 0) FROM events")
  cli_run_once "$WORK/b16.state"
  B16_RUN_S=$CLI_SECS
  msg=$(b16_state_value "SELECT message FROM events WHERE id > $last_id AND kind = 'schema_change'
                           AND message LIKE '%rows backfilled in%' ORDER BY id LIMIT 1")
  [[ -n $msg ]] || { cat "$WORK/run.log" >&2; die "B16 ($target): no backfill event after run --once"; }
  # "column d added, 1,000,000 rows backfilled in 41 s (...)": whole seconds.
  B16_BACKFILL_S=$(sed -n 's/.*rows backfilled in \([0-9]*\) s.*/\1/p' <<<"$msg")
  b16_check "$target" "backfill"

  "$CLI" --state "$WORK/b16.state" resnapshot b16 bench.t >"$WORK/b16_resnap.log" 2>&1 \
    || { cat "$WORK/b16_resnap.log" >&2; die "B16: driftless-cli resnapshot b16 bench.t failed"; }
  cli_run_once "$WORK/b16.state"
  B16_RESNAP_S=$CLI_SECS
  b16_check "$target" "resnapshot"
  log "B16 ($target): $msg"
}

# The target holds every row with the source's d: TARGET WHAT
b16_check() {
  local want got
  want=$(pg_value b16_src "SELECT count(*) || ' ' || sum(d) FROM bench.t")
  if [[ $1 == postgres ]]; then
    got=$(pg_value b16_dst "SELECT count(*) || ' ' || sum(d) FROM bench.t")
  else
    got=$(my -N -e "SELECT CONCAT(COUNT(*), ' ', SUM(d)) FROM b16_my.t")
  fi
  [[ $got == "$want" ]] || die "B16 ($1, after the $2): the target holds '$got' (rows, sum of d), the source '$want'"
}

bench_b16() {
  local runs=${B16_RUNS:-$RUNS} target
  log "B16: add-column backfill of $ROWS rows vs a re-snapshot of the same table, Postgres and MariaDB targets, $runs rounds"
  need B16 sqlite3 sqlite3 || return 0 # it reads the engine's events
  for target in postgres mariadb; do
    if [[ $target == mariadb ]]; then
      need B16 mariadb-client-core mariadb || continue
      export MYSQL_PWD=$MY_PASSWORD
    fi
    local r fill=() engine=() resnap=()
    for ((r = 0; r < runs; r++)); do
      b16_round "$target"
      fill+=("$B16_RUN_S"); engine+=("$B16_BACKFILL_S"); resnap+=("$B16_RESNAP_S")
      log "B16 ($target) round $((r + 1)): backfill run --once $B16_RUN_S s (the engine's event: $B16_BACKFILL_S s), re-snapshot run --once $B16_RESNAP_S s"
    done
    local f s fill_rate resnap_rate
    f=$(median "${fill[@]}"); s=$(median "${resnap[@]}")
    fill_rate=$(rate "$ROWS" "$f"); resnap_rate=$(rate "$ROWS" "$s")
    result "B16 target=$target backfill_rows_per_s=$fill_rate resnapshot_rows_per_s=$resnap_rate" \
      "ratio=$(ratio "$fill_rate" "$resnap_rate")" \
      "backfill_s_per_million=$(awk -v s="$f" -v n="$ROWS" 'BEGIN { printf "%.1f", s * 1e6 / n }')" \
      "resnapshot_s_per_million=$(awk -v s="$s" -v n="$ROWS" 'BEGIN { printf "%.1f", s * 1e6 / n }')" \
      "engine_backfill_s=$(printf %.0f "$(median "${engine[@]}")") case=add_column_backfill rows=$ROWS runs=$runs"
  done
  drop_slots b16_src
  pg postgres -c "DROP DATABASE IF EXISTS b16_src WITH (FORCE)" -c "DROP DATABASE IF EXISTS b16_dst WITH (FORCE)"
  my -e "DROP DATABASE IF EXISTS b16_my" 2>/dev/null || true
}
