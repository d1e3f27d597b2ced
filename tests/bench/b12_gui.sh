# shellcheck shell=bash
# B12: the desktop app with 1,000 tables and 10 live pipelines: the UI thread is never blocked
# for more than 50 ms, and the process stays under 300 MB RSS (500 MB past 1,000 tables: issue
# 19 asks for 10,000, B12_PIPELINES=100 or B12_TABLES=1000).
#
#   driftless-b12   the real MainWindow with the real engine (EngineBridge) on a workspace file,
#                   started as a click on Start would; once a second it switches pages, sorts or
#                   filters the Tables page, or regroups, filters, reorders or scrolls the
#                   Dashboard (shown four seconds in ten). A 5 ms PreciseTimer on the UI thread
#                   measures every event-loop stall (a tick's lateness; dashboard_max_stall_ms
#                   of the ticks while the Dashboard was shown); the peak RSS is the process's
#                   VmHWM.
#
# The workspace: database b12_src with schemas s0..s9 of 100 small tables each (t000..t099, 20
# rows), one pipeline per schema (p0..p9): p0-p4 into Postgres database b12_dst, p5-p9 into one
# SQLite file each. Per table: every tenth table of p0 and p1 by CDC (two slots), odd tables by
# cursor (every 2s), the rest by full refresh (every 5s). A writer updates 20 random tables every
# half second while the app runs, so cursor and CDC tables keep moving.
#
# Needs a build tree with the UI (DRIFTLESS_BUILD_UI=ON, the default; `--build build/dev`), or
# B12_DRIVER=path/to/driftless-b12. Knobs: B12_SECONDS (60), B12_TICK_MS (5), B12_TABLES (100 per
# pipeline), B12_PIPELINES (10). Sourced by run_all.sh.

# One schema's tables, in one transaction: a transaction locks every table it creates, and at
# 10,000 tables one block for all ran out of the server's shared lock memory.
b12_setup_sql() { # SCHEMA TABLES WIDTH
  cat <<SQL
DO \$\$
BEGIN
  EXECUTE format('CREATE SCHEMA s%s', $1);
  FOR t IN 0..$(($2 - 1)) LOOP
    EXECUTE format('CREATE TABLE s%s.t%s (id bigint PRIMARY KEY, v text NOT NULL,
                      updated_at timestamptz NOT NULL DEFAULT now())', $1, lpad(t::text, $3, '0'));
    EXECUTE format('CREATE INDEX ON s%s.t%s (updated_at)', $1, lpad(t::text, $3, '0'));
    EXECUTE format('INSERT INTO s%s.t%s (id, v) SELECT g, md5(g::text) FROM generate_series(1, 20) g',
                   $1, lpad(t::text, $3, '0'));
  END LOOP;
END \$\$;
SQL
}

# Digits in a table's number: 3 (t000..t099) unless there are more than 1,000 a pipeline.
b12_width() { local w=${#1}; ((w < 3)) && w=3; echo "$w"; }

# Updates one row in each of 20 random tables.
b12_writer_sql() { # PIPELINES TABLES WIDTH
  cat <<SQL
DO \$\$
BEGIN
  FOR i IN 1..20 LOOP
    EXECUTE format('UPDATE s%s.t%s SET v = md5(random()::text), updated_at = now() WHERE id = %s',
                   floor(random() * $1)::int, lpad(floor(random() * $2)::int::text, $3, '0'),
                   1 + floor(random() * 20)::int);
  END LOOP;
END \$\$;
SQL
}

b12_workspace() { # FILE PIPELINES TABLES WIDTH
  local file=$1 np=$2 nt=$3 w=$4 p t name
  {
    echo "endpoints:"
    echo "  src: { kind: postgres, dsn: \"$(pg_dsn b12_src)\" }"
    echo "  pg: { kind: postgres, dsn: \"$(pg_dsn b12_dst)\" }"
    for ((p = 5; p < np; p++)); do echo "  lite$p: { kind: sqlite, path: \"$WORK/b12_p$p.sqlite\" }"; done
    echo "pipelines:"
    for ((p = 0; p < np; p++)); do
      echo "  - name: p$p"
      echo "    source: src"
      if ((p < 5)); then echo "    target: pg"; else echo "    target: lite$p"; fi
      echo "    tables:"
      for ((t = 0; t < nt; t++)); do
        printf -v name 's%d.t%0*d' "$p" "$w" "$t"
        if ((p < 2 && t % 10 == 0)); then
          echo "      - { table: $name, strategy: cdc }"
        elif ((t % 2)); then
          echo "      - { table: $name, strategy: cursor, cursor: updated_at, lookback: 10s, every: 2s }"
        else
          echo "      - { table: $name, strategy: full_refresh, every: 5s }"
        fi
      done
    done
  } >"$file"
}

bench_b12() {
  local seconds=${B12_SECONDS:-60} tick=${B12_TICK_MS:-5} np=${B12_PIPELINES:-10} nt=${B12_TABLES:-100}
  local driver=${B12_DRIVER:-}
  if [[ -z $driver ]]; then
    cmake --build "$BUILD" --target help 2>/dev/null | grep -w 'driftless-b12' >/dev/null \
      || die "B12 needs a build tree with the UI (driftless-b12): --build build/dev, or B12_DRIVER=..."
    log "building driftless-b12 in $BUILD"
    cmake --build "$BUILD" --target driftless-b12 >"$BUILD/driftless-b12-build.log" 2>&1 \
      || { tail -n 30 "$BUILD/driftless-b12-build.log" >&2; die "building driftless-b12 failed"; }
    driver=$BUILD/tests/bench/driftless-b12
  fi
  [[ -x $driver ]] || die "no $driver"

  log "B12: $np pipelines x $nt tables, the app for $seconds s"
  drop_slots b12_src 2>/dev/null || true
  fresh_db b12_src
  fresh_db b12_dst
  local w p
  w=$(b12_width $((nt - 1)))
  for ((p = 0; p < np; p++)); do pg b12_src -c "$(b12_setup_sql "$p" "$nt" "$w")"; done
  rm -f "$WORK"/b12_p*.sqlite*
  b12_workspace "$WORK/b12.yaml" "$np" "$nt" "$w"
  cli_apply "$WORK/b12.state" "$WORK/b12.yaml"

  local writer_sql
  writer_sql=$(b12_writer_sql "$np" "$nt" "$w")
  (while sleep 0.5; do pg b12_src -c "$writer_sql" >/dev/null 2>&1 || true; done) &
  local writer=$!
  BENCH_PIDS+=("$writer")

  local out rc=0
  out=$(QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen} HOME="$WORK/b12_home" XDG_CONFIG_HOME="$WORK/b12_home/.config" \
        "$driver" --state "$WORK/b12.state" --seconds "$seconds" --tick-ms "$tick" 2>"$WORK/b12.log") || rc=$?
  kill "$writer" 2>/dev/null || true
  wait "$writer" 2>/dev/null || true
  sed 's/^/  /' "$WORK/b12.log" | grep -v '^  QStandardPaths' >&2 || true
  [[ $rc == 0 && $out == B12* ]] || die "B12: driftless-b12 failed (exit $rc)"

  local max rss mb=300
  # The line's first max_stall_ms (all ticks; dashboard_max_stall_ms is a part of them).
  max=$(sed -n 's/^B12 max_stall_ms=\([0-9.]*\).*/\1/p' <<<"$out")
  rss=$(sed -n 's/.*peak_rss_mb=\([0-9.]*\).*/\1/p' <<<"$out")
  ((np * nt > 1000)) && mb=500 # issue 19's goal at 10,000 tables
  result "$out goal=50ms,${mb}MB goal_met=$(both "$(below "$max" 50.001)" "$(below "$rss" "$mb")")"
  drop_slots b12_src
  local db
  for db in b12_src b12_dst; do pg postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; done
}
