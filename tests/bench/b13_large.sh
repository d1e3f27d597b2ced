# shellcheck shell=bash
# B13: CDC apply of rows with large values (strategy: cdc), against pg_recvlogical draining the
# same changes from its own slot.
#
# Table bench.big (id bigint PK, n integer, payload text or bytea) in b13_src with B13_TABLE_ROWS
# rows (10k); payload is stored out of line and uncompressed (STORAGE EXTERNAL, so every byte of
# it is TOASTed and travels) and its size follows the mix B13_SIZES (bytes:weight,...; default
# 8 kB for 989 rows in 1000, 64 kB for 10, 1 MB for 1). Setup, untimed: the source is loaded,
# `driftless-cli run --once` (pipeline b13) makes slot driftless_b13 and copies the table into
# b13_dst; pg_recvlogical --create-slot makes b13_base (publication b13_base, the same table).
# Each round (untimed first: VACUUM and ANALYZE both tables, both slots recreated at the current
# WAL position, as B8 does) generates B13_CHANGES changes (100k) in transactions of B13_TXN
# (1000) rows: half update the small column n and leave payload alone (pgoutput sends payload as
# 'u', unchanged TOAST, and the target must keep its value), half rewrite payload with a new
# value of the row's size. Then, in an order that alternates, both drain everything up to the
# workload's end E:
#   driftless   `driftless-cli run --once` (wall time of the whole command)
#   baseline    pg_recvlogical --start --endpos=E --plugin pgoutput -o proto_version=1
#               -o publication_names=b13_base -f /dev/null
# mb = MB the changes carry (the new large values plus 12 bytes of id and n per change), the
# same for both; mb_per_s = mb / seconds; ratio = driftless / pg_recvlogical (goal >= 0.5).
# After each round the target must equal the source (count, sum(n), md5 of every payload).
# Also printed, from the servers' statistics over Driftless's timed run: source_row_reads (rows
# of bench.big read on the source: re-reading unchanged large values would show here; the
# walsender decodes WAL and reads no rows), source_toast_blocks (TOAST blocks read there), and
# target_toast_blocks (TOAST blocks the apply read in the target: detoasting large values to
# compare or copy them).
# Knobs: --rows N sets B13_CHANGES when given; B13_RUNS (default 3, or --runs), B13_CHANGES,
# B13_TABLE_ROWS, B13_TXN, B13_SIZES, B13_TYPE (text or bytea).
# Sourced by run_all.sh.

: "${B13_TABLE_ROWS:=10000}"
: "${B13_TXN:=1000}"
: "${B13_SIZES:=8192:989,65536:10,1048576:1}"
: "${B13_TYPE:=text}"

# The SQL CASE giving a row's payload size from B13_SIZES (weights spread over id by a hash).
b13_size_sql() {
  local total=0 acc=0 part size weight sql="CASE"
  for part in ${B13_SIZES//,/ }; do
    weight=${part#*:}; total=$((total + weight))
  done
  for part in ${B13_SIZES//,/ }; do
    size=${part%%:*}; weight=${part#*:}
    acc=$((acc + weight))
    sql+=" WHEN (id * 7919) % $total < $acc THEN $size"
  done
  echo "$sql END"
}

# A payload of the row's size, different for every generation GEN.
b13_value_sql() { # ID_EXPR GEN_EXPR
  local v="repeat(md5(($1)::text || ':' || ($2)::text), bench.big_size($1) / 32)"
  [[ $B13_TYPE == bytea ]] && v="convert_to($v, 'UTF8')"
  echo "$v"
}

b13_wait_slot_idle() {
  local i
  for ((i = 0; i < 100; i++)); do
    [[ $(pg_value b13_src "SELECT active FROM pg_replication_slots WHERE slot_name = '$1'") == f ]] && return 0
    sleep 0.05
  done
  die "B13: slot $1 is still in use"
}

b13_setup() {
  drop_slots b13_src
  fresh_db b13_src
  fresh_db b13_dst
  pg b13_src -c "CREATE SCHEMA bench" \
    -c "CREATE FUNCTION bench.big_size(id bigint) RETURNS integer LANGUAGE sql IMMUTABLE AS \$\$ SELECT $(b13_size_sql) \$\$" \
    -c "CREATE TABLE bench.big (id bigint PRIMARY KEY, n integer NOT NULL, payload $B13_TYPE NOT NULL)" \
    -c "ALTER TABLE bench.big ALTER COLUMN payload SET STORAGE EXTERNAL" \
    -c "ALTER TABLE bench.big SET (autovacuum_enabled = off, toast.autovacuum_enabled = off)" \
    -c "INSERT INTO bench.big SELECT id, 0, $(b13_value_sql id 0) FROM generate_series(1::bigint, $B13_TABLE_ROWS) id" \
    -c "VACUUM (ANALYZE) bench.big" \
    -c "CREATE PUBLICATION b13_base FOR TABLE bench.big"
  write_workspace "$WORK/b13.yaml" b13_src "{ kind: postgres, dsn: \"$(pg_dsn b13_dst)\" }" "{ table: bench.big, strategy: cdc }"
  sed -i 's/^  - name: bench$/  - name: b13/' "$WORK/b13.yaml"
  cli_apply "$WORK/b13.state" "$WORK/b13.yaml"
  cli_run_once "$WORK/b13.state" # publication and slot driftless_b13, initial load
  pg b13_dst -c "ALTER TABLE bench.big SET (autovacuum_enabled = off, toast.autovacuum_enabled = off)"
  "$PG_BIN/pg_recvlogical" -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d b13_src --no-password \
    --slot b13_base --create-slot --plugin pgoutput >"$WORK/cmd.log" 2>&1 \
    || { cat "$WORK/cmd.log" >&2; die "pg_recvlogical --create-slot failed"; }
  b13_check setup
}

# Untimed, before a workload: vacuum and analyze both sides, recreate both slots here (see
# b8_quiesce for why not advance them) and move Driftless's checkpoint to its slot's start.
b13_quiesce() {
  b13_wait_slot_idle driftless_b13
  b13_wait_slot_idle b13_base
  pg b13_src -c "VACUUM (ANALYZE) bench.big"
  pg b13_dst -c "VACUUM (ANALYZE) bench.big"
  pg b13_src -c "CHECKPOINT" \
    -c "SELECT pg_drop_replication_slot(s) FROM unnest(ARRAY['driftless_b13', 'b13_base']) s" \
    -c "SELECT pg_create_logical_replication_slot(s, 'pgoutput') FROM unnest(ARRAY['driftless_b13', 'b13_base']) s" \
    >/dev/null
  local lsn
  lsn=$(pg_value b13_src "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'driftless_b13'")
  pg b13_dst -c "UPDATE _driftless.checkpoints SET position = jsonb_set(position::jsonb, '{lsn}', to_jsonb('$lsn'::text))::text
                 WHERE position::jsonb ->> 'phase' = 'stream'" >/dev/null
}

# The workload of round R: B13_CHANGES changes in transactions of B13_TXN, half small updates,
# half rewrites of payload, on disjoint rows of each transaction.
b13_workload() { # ROUND
  local half=$((B13_TXN / 2)) txns=$((B13_CHANGES / B13_TXN)) rows=$B13_TABLE_ROWS
  pg b13_src -c "DO \$\$ DECLARE a bigint; b bigint; BEGIN
      FOR i IN 0..$((txns - 1)) LOOP
        a := (i * $half) % $rows;
        b := (i * $half + $rows / 2) % $rows;
        UPDATE bench.big SET n = n + 1 WHERE id > a AND id <= a + $half;
        UPDATE bench.big SET payload = $(b13_value_sql id "$1 * $txns + i + 1") WHERE id > b AND id <= b + $half;
        COMMIT;
      END LOOP; END \$\$"
}

# Bytes the workload carries: every rewritten value, plus id and n of every change.
b13_volume() {
  local half=$((B13_TXN / 2)) txns=$((B13_CHANGES / B13_TXN)) rows=$B13_TABLE_ROWS
  pg_value b13_src "SELECT sum(bench.big_size(id)) + $((txns * B13_TXN * 12)) FROM generate_series(0, $((txns - 1))) i,
                    LATERAL generate_series((i * $half + $rows / 2) % $rows + 1, (i * $half + $rows / 2) % $rows + $half) id"
}

b13_recvlogical() { # ENDPOS
  "$PG_BIN/pg_recvlogical" -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d b13_src --no-password --no-loop \
    --slot b13_base --start --endpos="$1" --plugin pgoutput \
    -o proto_version=1 -o publication_names=b13_base -f /dev/null
}

B13_SUM="SELECT count(*) || ' ' || sum(n) || ' ' || md5(string_agg(md5(payload), '' ORDER BY id)) FROM bench.big"
b13_check() { # WHAT [ENDPOS]
  local want got
  want=$(pg_value b13_src "$B13_SUM")
  got=$(pg_value b13_dst "$B13_SUM")
  [[ $got == "$want" ]] || die "B13 $1: target has (count sum md5) $got, source $want"
  if [[ -n ${2:-} ]]; then
    got=$(pg_value b13_src "SELECT confirmed_flush_lsn >= '$2' FROM pg_replication_slots WHERE slot_name = 'b13_base'")
    [[ $got == t ]] || die "B13 $1: pg_recvlogical did not reach $2"
  fi
}

# Rows read from bench.big, and blocks of its TOAST table read (hits included): DB
b13_reads() {
  pg_value "$1" "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) || ' ' ||
                 coalesce(toast_blks_read, 0) + coalesce(toast_blks_hit, 0)
                 FROM pg_stat_user_tables u JOIN pg_statio_user_tables io USING (relid)
                 WHERE u.schemaname = 'bench' AND u.relname = 'big'"
}

bench_b13() {
  local runs=${B13_RUNS:-$RUNS}
  [[ -n ${RUNS_GIVEN:-} || -n ${B13_RUNS:-} ]] || runs=3
  [[ -n ${ROWS_GIVEN:-} ]] && : "${B13_CHANGES:=$ROWS}"
  : "${B13_CHANGES:=100000}"
  need B13 postgresql-client-15 "$PG_BIN/pg_recvlogical" || return 0
  [[ $B13_TYPE == text || $B13_TYPE == bytea ]] || die "B13_TYPE must be text or bytea"
  ((B13_TXN >= 2 && B13_TXN % 2 == 0 && B13_CHANGES % B13_TXN == 0 && B13_TABLE_ROWS % (B13_TXN / 2) == 0 &&
    B13_TABLE_ROWS >= B13_TXN)) \
    || die "B13: B13_CHANGES ($B13_CHANGES) must be a multiple of B13_TXN ($B13_TXN, even), and B13_TABLE_ROWS ($B13_TABLE_ROWS) a multiple of B13_TXN/2 and >= B13_TXN"
  log "B13: CDC apply of $B13_CHANGES changes with large values ($B13_SIZES, $B13_TYPE) vs pg_recvlogical, $runs rounds"
  b13_setup
  local bytes; bytes=$(b13_volume)
  local mb; mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
  log "B13: $B13_TABLE_ROWS rows ($(pg_value b13_src "SELECT pg_size_pretty(pg_total_relation_size('bench.big'))")), $mb MB of changes per round"
  local eng=() base=() rss=() r w end s0 s1 t0 t1 t0b t1b sreads=0 stoast=0 ttoast=0
  for ((r = 0; r < runs; r++)); do
    b13_quiesce
    b13_workload "$r"
    end=$(pg_value b13_src "SELECT pg_current_wal_insert_lsn()")
    for ((w = 0; w < 2; w++)); do
      if (((r + w) % 2 == 0)); then
        read -r s0 t0 <<<"$(b13_reads b13_src)"
        read -r _ t1 <<<"$(b13_reads b13_dst)"
        cli_run_once "$WORK/b13.state"
        eng+=("$CLI_SECS"); rss+=("$CLI_RSS_MB")
        sleep 1 # the engine's sessions report their statistics as they end
        read -r s1 t0b <<<"$(b13_reads b13_src)"
        read -r _ t1b <<<"$(b13_reads b13_dst)"
        sreads=$((s1 - s0 > sreads ? s1 - s0 : sreads))
        stoast=$((t0b - t0 > stoast ? t0b - t0 : stoast))
        ttoast=$((t1b - t1 > ttoast ? t1b - t1 : ttoast))
      else
        timed b13_recvlogical "$end"
        base+=("$CMD_SECS")
      fi
    done
    b13_check "round $((r + 1))" "$end"
    log "B13 round $((r + 1)): driftless ${eng[-1]} s (peak RSS ${rss[-1]} MB), pg_recvlogical ${base[-1]} s; load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
  local e b er br rt
  e=$(median "${eng[@]}"); b=$(median "${base[@]}")
  er=$(awk -v m="$mb" -v s="$e" 'BEGIN { printf "%.1f", m / s }')
  br=$(awk -v m="$mb" -v s="$b" 'BEGIN { printf "%.1f", m / s }')
  rt=$(ratio "$er" "$br")
  result "B13 mb_per_s=$er baseline_mb_per_s=$br ratio=$rt rows_per_s=$(rate "$B13_CHANGES" "$e")" \
    "baseline_rows_per_s=$(rate "$B13_CHANGES" "$b") peak_rss_mb=$(maximum "${rss[@]}") mb=$mb changes=$B13_CHANGES" \
    "table_rows=$B13_TABLE_ROWS sizes=$B13_SIZES type=$B13_TYPE source_row_reads=$sreads source_toast_blocks=$stoast" \
    "target_toast_blocks=$ttoast runs=$runs goal=0.5 goal_met=$(at_least "$rt" 0.5)"
  drop_slots b13_src
  local db
  for db in b13_src b13_dst; do pg postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; done
}
