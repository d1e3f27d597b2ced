# shellcheck shell=bash
# B3: backfill mysql->pg of bench3.t (the bench table's six columns in MariaDB types) into an
# empty Postgres target.
#
#   driftless full refresh     `driftless-cli run --once` on a full_refresh table
#   driftless initial load     the same on a cursor table (key-ordered pages copied straight in)
#   baseline                   mariadb --quick -N -e "SELECT ..." | psql -c "COPY ... FROM STDIN"
#   pgloader                   pgloader mysql://... postgresql://... (Debian pgloader; B3 refuses without it)
#
# B9: MariaDB binlog CDC. ROWS rows are inserted on the source in 1000-row transactions while
# nothing reads; then
#
#   parse                      driftless-bench binlog-parse (our decoder, every row to the
#                              contract's text) over the binlog files those transactions wrote,
#                              read in 1 MiB pieces into one buffer (as mariadb-binlog reads
#                              them; before 2026-12-05 byte by byte, ~40% of the time), against
#                              `mariadb-binlog -v` decoding the same files to /dev/null
#   applied                    `driftless-cli run --once` of the CDC pipeline: reads those
#                              transactions from the server and applies them into Postgres
#
# Figures: medians of RUNS rounds. Sourced by run_all.sh.

my() { MYSQL_PWD=$MY_PASSWORD mariadb --no-defaults -h "$MY_HOST" -P "$MY_PORT" -u "$MY_USER" "$@"; }
my_dsn() { echo "mysql://$MY_USER@$MY_HOST:$MY_PORT/$1"; }

MY_BENCH_DDL='CREATE TABLE t (
    id bigint PRIMARY KEY,
    n int NOT NULL,
    amount decimal(12,2) NOT NULL,
    label varchar(40) NOT NULL,
    updated_at timestamp(6) NOT NULL,
    flag tinyint(1) NOT NULL,
    KEY (updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4'

# The same rows as generate_table, FROM..TO.
my_rows_sql() {
  echo "INSERT INTO t SELECT seq, (seq * 7919) % 1000003, ((seq * 104729) % 100000000) / 100.0,
          CONCAT('item-', LPAD(seq, 10, '0'), '-', SUBSTR(MD5(seq), 1, 8)),
          TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND, seq % 3 = 0
        FROM seq_$1_to_$2"
}

my_write_workspace() {
  local file=$1 db=$2 target_db=$3 table=$4
  cat >"$file" <<YAML
endpoints:
  src: { kind: mysql, dsn: "$(my_dsn "$db")" }
  dst: { kind: postgres, dsn: "$(pg_dsn "$target_db")" }
pipelines:
  - name: bench
    source: src
    target: dst
    tables:
      - $table
YAML
}

b3_check_rows() {
  local got
  got=$(pg_value "$1" "SELECT count(*) FROM bench3.t")
  [[ $got == "$ROWS" ]] || die "B3 $2: target holds $got rows, expected $ROWS"
}

b3_baseline_pipe() {
  my -N --quick bench3 -e "SELECT id, n, amount, label, updated_at, flag FROM t" |
    pg b3_base -c "COPY bench3.t FROM STDIN"
}

b3_pgloader() {
  pgloader --quiet "mysql://$MY_USER:$MY_PASSWORD@$MY_HOST:$MY_PORT/bench3" \
    "postgresql://$PG_USER:$PG_PASSWORD@$PG_HOST:$PG_PORT/b3_pgl"
}

bench_b3() {
  log "B3: backfill mysql->pg, $ROWS rows, $RUNS rounds"
  need B3 mariadb-client-core mariadb || return 0
  need B3 pgloader pgloader || return 0
  export MYSQL_PWD=$MY_PASSWORD
  my -e "DROP DATABASE IF EXISTS bench3; CREATE DATABASE bench3"
  my bench3 -e "$MY_BENCH_DDL"
  my bench3 -e "$(my_rows_sql 1 "$ROWS")"
  my bench3 -e "ANALYZE TABLE t" >/dev/null
  local db
  for db in b3_fr b3_cur b3_base b3_pgl; do fresh_db "$db"; done
  my_write_workspace "$WORK/b3_fr.yaml" bench3 b3_fr "{ table: bench3.t, strategy: full_refresh }"
  my_write_workspace "$WORK/b3_cur.yaml" bench3 b3_cur "{ table: bench3.t, strategy: cursor, cursor: updated_at }"
  cli_apply "$WORK/b3_fr.state" "$WORK/b3_fr.yaml"
  cli_apply "$WORK/b3_cur.state" "$WORK/b3_cur.yaml"
  local have_pgloader=1

  local fr=() cur=() base=() pgl=() rss_fr=() rss_cur=() r k c
  local cases=(fr cur base pgl)
  for ((r = 0; r < RUNS; r++)); do
    for ((k = 0; k < 4; k++)); do
      c=${cases[$(((r + k) % 4))]}
      case $c in
        fr)
          pg b3_fr -c "DROP SCHEMA IF EXISTS bench3 CASCADE" -c "DROP SCHEMA IF EXISTS _driftless CASCADE" -c "CHECKPOINT"
          cli_run_once "$WORK/b3_fr.state"
          b3_check_rows b3_fr "full refresh"
          fr+=("$CLI_SECS"); rss_fr+=("$CLI_RSS_MB")
          log "B3 round $((r + 1)): full refresh $CLI_SECS s, peak RSS $CLI_RSS_MB MB" ;;
        cur)
          pg b3_cur -c "DROP SCHEMA IF EXISTS bench3 CASCADE" -c "DROP SCHEMA IF EXISTS _driftless CASCADE" -c "CHECKPOINT"
          cli_run_once "$WORK/b3_cur.state"
          b3_check_rows b3_cur "cursor initial load"
          cur+=("$CLI_SECS"); rss_cur+=("$CLI_RSS_MB")
          log "B3 round $((r + 1)): cursor initial load $CLI_SECS s, peak RSS $CLI_RSS_MB MB" ;;
        base)
          pg b3_base -c "DROP SCHEMA IF EXISTS bench3 CASCADE" -c "CREATE SCHEMA bench3" \
            -c "CREATE TABLE bench3.t (id bigint PRIMARY KEY, n integer NOT NULL, amount numeric(12,2) NOT NULL,
                label varchar(40) NOT NULL, updated_at timestamptz NOT NULL, flag smallint NOT NULL)" -c "CHECKPOINT"
          timed b3_baseline_pipe
          b3_check_rows b3_base "the mariadb | psql pipe"
          base+=("$CMD_SECS")
          log "B3 round $((r + 1)): mariadb | psql COPY $CMD_SECS s" ;;
        pgl)
          [[ -n $have_pgloader ]] || continue
          pg b3_pgl -c "DROP SCHEMA IF EXISTS bench3 CASCADE" -c "CHECKPOINT"
          timed b3_pgloader
          b3_check_rows b3_pgl "pgloader"
          pgl+=("$CMD_SECS")
          log "B3 round $((r + 1)): pgloader $CMD_SECS s" ;;
      esac
    done
  done
  local t_fr t_cur t_base
  t_fr=$(median "${fr[@]}"); t_cur=$(median "${cur[@]}"); t_base=$(median "${base[@]}")
  local b_rate; b_rate=$(rate "$ROWS" "$t_base")
  local p_rate=0 p_note="pgloader=absent(apt-get install pgloader)"
  if [[ -n $have_pgloader ]]; then
    p_rate=$(rate "$ROWS" "$(median "${pgl[@]}")")
    p_note="pgloader_rows_per_s=$p_rate"
  fi
  local x name secs rss rr
  for x in "full_refresh ${t_fr} $(maximum "${rss_fr[@]}")" "cursor_initial_load ${t_cur} $(maximum "${rss_cur[@]}")"; do
    read -r name secs rss <<<"$x"
    rr=$(rate "$ROWS" "$secs")
    local vs_pgl=n/a
    [[ -n $have_pgloader ]] && vs_pgl=$(ratio "$rr" "$p_rate")
    result "B3 rows_per_s=$rr baseline_rows_per_s=$b_rate ratio=$(ratio "$rr" "$b_rate") $p_note" \
      "ratio_vs_pgloader=$vs_pgl peak_rss_mb=$rss case=$name rows=$ROWS runs=$RUNS goal=1.0x_pipe,2x_pgloader"
  done
}

bench_b9() {
  log "B9: MariaDB binlog CDC, $ROWS rows in 1000-row transactions, $RUNS rounds"
  need B9 mariadb-client-core mariadb || return 0
  need B9 mariadb-client mariadb-binlog || return 0
  export MYSQL_PWD=$MY_PASSWORD
  my -e "DROP DATABASE IF EXISTS bench9; CREATE DATABASE bench9"
  my bench9 -e "$MY_BENCH_DDL"
  fresh_db b9_dst
  my_write_workspace "$WORK/b9.yaml" bench9 b9_dst "{ table: bench9.t, strategy: cdc }"
  cli_apply "$WORK/b9.state" "$WORK/b9.yaml"
  cli_run_once "$WORK/b9.state" # loads the empty table; the stream starts here
  local datadir
  datadir=$(my -N -e "SELECT @@datadir")
  local ours=() base=() applied=() rss=() r
  for ((r = 0; r < RUNS; r++)); do
    local from=$((r * ROWS + 1)) sql="$WORK/b9.sql" i
    : >"$sql"
    for ((i = from; i < from + ROWS; i += 1000)); do
      echo "$(my_rows_sql "$i" "$((i + 999 < from + ROWS - 1 ? i + 999 : from + ROWS - 1))");" >>"$sql"
    done
    my -e "FLUSH BINARY LOGS"
    local first last
    first=$(my -N -e "SHOW MASTER STATUS" | cut -f1)
    my bench9 <"$sql"
    my -e "FLUSH BINARY LOGS"
    last=$(my -N -e "SHOW MASTER STATUS" | cut -f1)
    local files=() f
    while read -r f _; do
      [[ $f < "$first" || ! $f < "$last" ]] && continue
      files+=("$datadir/$f")
    done < <(my -N -e "SHOW BINARY LOGS")
    ((${#files[@]})) || die "B9: no binlog files between $first and $last"
    timed "$BENCH_DRIVER" binlog-parse "${files[@]}"
    local parsed; parsed=$(sed -n 's/.*rows=\([0-9]*\) .*/\1/p' "$WORK/cmd.log")
    [[ $parsed -ge $ROWS ]] || die "B9: the decoder read $parsed rows, expected at least $ROWS"
    ours+=("$CMD_SECS")
    timed bash -c "mariadb-binlog -v $(printf '%q ' "${files[@]}") >/dev/null"
    base+=("$CMD_SECS")
    cli_run_once "$WORK/b9.state"
    local got; got=$(pg_value b9_dst "SELECT count(*) FROM bench9.t")
    [[ $got == $((from + ROWS - 1)) ]] || die "B9: target holds $got rows, expected $((from + ROWS - 1))"
    applied+=("$CLI_SECS"); rss+=("$CLI_RSS_MB")
    log "B9 round $((r + 1)): parse ${ours[-1]} s (mariadb-binlog -v ${base[-1]} s), applied $CLI_SECS s"
  done
  local t_ours t_base t_apply
  t_ours=$(median "${ours[@]}"); t_base=$(median "${base[@]}"); t_apply=$(median "${applied[@]}")
  result "B9 parse_rows_per_s=$(rate "$ROWS" "$t_ours") baseline_rows_per_s=$(rate "$ROWS" "$t_base")" \
    "ratio=$(ratio "$t_base" "$t_ours") case=parse rows=$ROWS runs=$RUNS goal=1.0"
  result "B9 applied_rows_per_s=$(rate "$ROWS" "$t_apply") peak_rss_mb=$(maximum "${rss[@]}")" \
    "case=applied_into_pg rows=$ROWS runs=$RUNS goal=100000_rows_per_s"
}

# B4: backfill into MariaDB. pg->mysql: bench.t from the seed Postgres database; mysql->mysql:
# bench3.t (B3's MariaDB table) into another database on the same server.
#
#   driftless full refresh     `driftless-cli run --once` on a full_refresh table (LOAD DATA LOCAL
#                              chunks into a shadow, then RENAME TABLE)
#   baseline (pg->mysql)       psql COPY (SELECT ...) TO STDOUT | LOAD DATA LOCAL INFILE '/dev/stdin'
#   baseline (mysql->mysql)    mariadb-dump --single-transaction bench3 t | mariadb b4_dump
bench_b4() {
  log "B4: backfill into MariaDB, $ROWS rows, $RUNS rounds"
  need B4 mariadb-client-core mariadb || return 0
  need B4 mariadb-client mariadb-dump || return 0
  export MYSQL_PWD=$MY_PASSWORD
  # mysql->mysql needs B3's source table; pg->mysql the seed database.
  if [[ $(my -N -e "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'bench3' AND TABLE_NAME = 't'") != 1 ]]; then
    my -e "DROP DATABASE IF EXISTS bench3; CREATE DATABASE bench3"
    my bench3 -e "$MY_BENCH_DDL"
    my bench3 -e "$(my_rows_sql 1 "$ROWS")"
  fi
  cat >"$WORK/b4_pg.yaml" <<YAML
endpoints:
  src: { kind: postgres, dsn: "$(pg_dsn seed)" }
  dst: { kind: mysql, dsn: "$(my_dsn b4_pg)" }
pipelines:
  - name: bench
    source: src
    target: dst
    tables:
      - { table: bench.t, strategy: full_refresh }
YAML
  cat >"$WORK/b4_my.yaml" <<YAML
endpoints:
  src: { kind: mysql, dsn: "$(my_dsn bench3)" }
  dst: { kind: mysql, dsn: "$(my_dsn b4_my)" }
pipelines:
  - name: bench
    source: src
    target: dst
    tables:
      - { table: t, strategy: full_refresh }
YAML
  my -e "CREATE DATABASE IF NOT EXISTS b4_pg; CREATE DATABASE IF NOT EXISTS b4_my" # apply checks them
  cli_apply "$WORK/b4_pg.state" "$WORK/b4_pg.yaml"
  cli_apply "$WORK/b4_my.state" "$WORK/b4_my.yaml"
  local pg_e=() pg_b=() my_e=() my_b=() rss_pg=() rss_my=() r got
  for ((r = 0; r < RUNS; r++)); do
    my -e "DROP DATABASE IF EXISTS b4_pg; CREATE DATABASE b4_pg"
    cli_run_once "$WORK/b4_pg.state"
    got=$(my -N -e "SELECT COUNT(*) FROM b4_pg.t"); [[ $got == "$ROWS" ]] || die "B4 pg->mysql: $got rows"
    pg_e+=("$CLI_SECS"); rss_pg+=("$CLI_RSS_MB")
    my -e "DROP DATABASE IF EXISTS b4_pgbase; CREATE DATABASE b4_pgbase"
    my b4_pgbase -e "CREATE TABLE t (id bigint PRIMARY KEY, n int NOT NULL, amount decimal(12,2) NOT NULL,
        label longtext NOT NULL, updated_at datetime(6) NOT NULL, flag tinyint(1) NOT NULL) ENGINE=InnoDB"
    timed bash -c "PGPASSWORD='$PG_PASSWORD' '$PG_BIN/psql' -X -q -h '$PG_HOST' -p '$PG_PORT' -U '$PG_USER' -d seed \
        -c \"COPY (SELECT id, n, amount, label, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), flag::int FROM bench.t) TO STDOUT\" |
      MYSQL_PWD='$MY_PASSWORD' mariadb --no-defaults --local-infile=1 -h '$MY_HOST' -P '$MY_PORT' -u '$MY_USER' b4_pgbase \
        -e \"LOAD DATA LOCAL INFILE '/dev/stdin' INTO TABLE t\""
    pg_b+=("$CMD_SECS")
    my -e "DROP DATABASE IF EXISTS b4_my; CREATE DATABASE b4_my"
    cli_run_once "$WORK/b4_my.state"
    got=$(my -N -e "SELECT COUNT(*) FROM b4_my.t"); [[ $got == "$ROWS" ]] || die "B4 mysql->mysql: $got rows"
    my_e+=("$CLI_SECS"); rss_my+=("$CLI_RSS_MB")
    my -e "DROP DATABASE IF EXISTS b4_dump; CREATE DATABASE b4_dump"
    timed bash -c "MYSQL_PWD='$MY_PASSWORD' mariadb-dump --no-defaults --single-transaction -h '$MY_HOST' -P '$MY_PORT' -u '$MY_USER' bench3 t |
      MYSQL_PWD='$MY_PASSWORD' mariadb --no-defaults -h '$MY_HOST' -P '$MY_PORT' -u '$MY_USER' b4_dump"
    my_b+=("$CMD_SECS")
    log "B4 round $((r + 1)): pg->mysql ${pg_e[-1]} s vs psql|LOAD DATA ${pg_b[-1]} s; mysql->mysql ${my_e[-1]} s vs dump ${my_b[-1]} s"
  done
  local e b
  e=$(rate "$ROWS" "$(median "${pg_e[@]}")"); b=$(rate "$ROWS" "$(median "${pg_b[@]}")")
  result "B4 rows_per_s=$e baseline_rows_per_s=$b ratio=$(ratio "$e" "$b") peak_rss_mb=$(maximum "${rss_pg[@]}")" \
    "case=pg_to_mysql_full_refresh baseline=psql_copy_to_load_data_local rows=$ROWS runs=$RUNS goal=0.9"
  e=$(rate "$ROWS" "$(median "${my_e[@]}")"); b=$(rate "$ROWS" "$(median "${my_b[@]}")")
  result "B4 rows_per_s=$e baseline_rows_per_s=$b ratio=$(ratio "$e" "$b") peak_rss_mb=$(maximum "${rss_my[@]}")" \
    "case=mysql_to_mysql_full_refresh baseline=mariadb_dump rows=$ROWS runs=$RUNS goal=1.5"
}
