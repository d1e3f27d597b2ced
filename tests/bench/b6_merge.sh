# shellcheck shell=bash
# B6: merge a 10% delta (every tenth row changed in every column but the key) into the target.
#
#   driftless   PgMerger::apply of ONE batch holding the changed rows (staging COPY + guarded
#               MERGE + checkpoint, one transaction), then the same batch applied again (replay);
#               once as a cursor table and once as a CDC table (their MERGE statements differ:
#               a cursor table also skips rows that come back unchanged)
#   baseline    BEGIN; TRUNCATE an UNLOGGED staging table; COPY staging FROM STDIN (the same COPY
#               text); INSERT INTO bench.t SELECT * FROM staging ON CONFLICT (id) DO UPDATE ...;
#               COMMIT
#
# Both are timed inside driftless-bench (tests/bench/driftless_bench.cpp) from the same bytes in
# memory, so only the work on the server and the client library differs. Before every run each
# target is rebuilt from its template of the unchanged rows (then VACUUM ANALYZE, CHECKPOINT).
# Sourced by run_all.sh.

bench_b6() {
  [[ -x ${BENCH_DRIVER:-} ]] || die "B6 needs driftless-bench (run_all.sh builds it)"
  log "B6: merge a 10% delta into $ROWS rows, $RUNS rounds"
  # The source: every tenth row changed.
  clone_db seed b6_src
  pg b6_src -c "UPDATE bench.t SET n = n + 1, amount = amount + 1, label = 'upd!' || substr(label, 5),
                updated_at = updated_at + interval '1 day', flag = NOT flag WHERE id % 10 = 0"
  # The targets: the rows before the change, kept as tpl.t to rebuild bench.t from.
  local db
  for db in b6_eng b6_base; do
    clone_db seed "$db"
    pg "$db" -c "CREATE SCHEMA tpl" -c "ALTER TABLE bench.t SET SCHEMA tpl"
  done
  "$BENCH_DRIVER" b6 --source "$(pg_dsn b6_src)" --target "$(pg_dsn b6_eng)" --baseline "$(pg_dsn b6_base)" \
      --where "id % 10 = 0" --runs "$RUNS" --strategies cursor,cdc >"$WORK/b6.out" 2>"$WORK/b6.log" \
    || { cat "$WORK/b6.log" >&2; die "driftless-bench b6 failed"; }
  sed 's/^/[bench] /' "$WORK/b6.log" >&2
  local line
  while IFS= read -r line; do result "$line"; done <"$WORK/b6.out"
  for db in b6_src b6_eng b6_base; do pg postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; done
}
