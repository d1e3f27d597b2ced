#!/usr/bin/env bash
# The demo sandbox: a local Postgres 15 (wal_level=logical) holding the source database `app`
# and the target database `dw`, and a local MariaDB (binlog ROW, FULL row image and metadata)
# holding the source database `shop`, under DIR (default: $XDG_DATA_HOME/driftless/sandbox).
#
#   sandbox.sh start [DIR]   create (first time) or restart the sandbox; prints the Postgres port
#   sandbox.sh stop [DIR]    stop the servers (data is kept for next time)
#   sandbox.sh reset [DIR]   stop and delete everything
#
# The Postgres password lives in DIR/pgpass (0600), used through PGPASSFILE; the MariaDB one in
# DIR/mypw (0600), handed over as MYSQL_PWD by demo.sh. Nothing is written to the user's own
# ~/.pgpass or ~/.my.cnf. MariaDB's port is in DIR/myport.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
cmd=${1:?usage: sandbox.sh start|stop|reset [DIR]}
DIR=${2:-${XDG_DATA_HOME:-$HOME/.local/share}/driftless/sandbox}

# As root, from / (the postgres user may not enter the folder the demo was started in).
as_pg() { if [[ $(id -u) -eq 0 ]]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Postgres refuses to run as root, and the postgres user cannot enter root's home, so as root
# the cluster itself lives in a postgres-owned folder and DIR/pg points at it.
pgdir() {
  if [[ $(id -u) -eq 0 ]]; then echo "/var/tmp/driftless-sandbox-$(echo "$DIR" | md5sum | cut -c1-8)"; else echo "$DIR/pg"; fi
}

mydir() {
  if [[ $(id -u) -eq 0 ]]; then echo "/var/tmp/driftless-sandbox-my-$(echo "$DIR" | md5sum | cut -c1-8)"; else echo "$DIR/my"; fi
}
my_client() { local my; my=$(mydir); mariadb --no-defaults -uroot --socket="$my/mysqld.sock" "$@"; }

start_mariadb() {
  local my; my=$(mydir)
  local user_opt=()
  mkdir -p "$my"
  if [[ $(id -u) -eq 0 ]]; then chown mysql: "$my"; chmod 700 "$my"; ln -sfn "$my" "$DIR/my"; user_opt=(--user=mysql); fi
  local fresh_my=0
  if [[ ! -d "$my/data/mysql" ]]; then
    mariadb-install-db --no-defaults "${user_opt[@]}" --datadir="$my/data" --auth-root-authentication-method=socket \
        --skip-test-db >"$DIR/mariadb-install.log" 2>&1
    local myport
    for _ in $(seq 1 50); do myport=$(( 20000 + RANDOM % 30000 )); port_busy "$myport" || break; done
    echo "$myport" > "$DIR/myport"
    od -An -N8 -tx8 /dev/urandom | tr -d ' ' | sed 's/^/shop-/' > "$DIR/mypw"
    chmod 600 "$DIR/mypw"
    fresh_my=1
  fi
  local myport; myport=$(cat "$DIR/myport")
  if ! { [[ -f "$my/mariadbd.pid" ]] && kill -0 "$(cat "$my/mariadbd.pid")" 2>/dev/null; }; then
    rm -f "$my/mariadbd.pid"
    mkdir -p "$my/tmp"
    [[ $(id -u) -eq 0 ]] && chown mysql: "$my/tmp"
    setsid mariadbd --no-defaults "${user_opt[@]}" --datadir="$my/data" --port="$myport" --bind-address=127.0.0.1 \
        --socket="$my/mysqld.sock" --pid-file="$my/mariadbd.pid" --log-error="$my/server.log" \
        --log-bin="$my/data/binlog" --binlog-format=ROW --binlog-row-image=FULL --binlog-row-metadata=FULL \
        --server-id=1 --gtid-strict-mode=1 --binlog-expire-logs-seconds=604800 --innodb-buffer-pool-size=128M \
        --tmpdir="$my/tmp" >/dev/null 2>&1 < /dev/null &
    for _ in $(seq 1 300); do
      my_client -e 'SELECT 1' >/dev/null 2>&1 && break
      sleep 0.1
    done
    my_client -e 'SELECT 1' >/dev/null 2>&1 || { echo "mariadbd did not start; see $my/server.log" >&2; exit 1; }
  fi
  if [[ $fresh_my == 1 ]]; then
    local pw; pw=$(cat "$DIR/mypw")
    my_client <<SQL
CREATE USER 'driftless'@'127.0.0.1' IDENTIFIED BY '$pw';
GRANT SELECT, RELOAD, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'driftless'@'127.0.0.1';
CREATE DATABASE shop CHARACTER SET utf8mb4;
GRANT ALL PRIVILEGES ON shop.* TO 'driftless'@'127.0.0.1';
SQL
    my_client shop < "$HERE/shop.sql"
  fi
}

stop_mariadb() {
  local my; my=$(mydir)
  [[ -f "$my/mariadbd.pid" ]] || return 0
  local pid; pid=$(cat "$my/mariadbd.pid" 2>/dev/null || true)
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
}

start() {
  mkdir -p "$DIR"
  chmod 700 "$DIR"
  local pg; pg=$(pgdir)
  if [[ ! -f "$pg/data/PG_VERSION" ]]; then
    mkdir -p "$pg"
    [[ $(id -u) -eq 0 ]] && { chown postgres: "$pg"; chmod 700 "$pg"; ln -sfn "$pg" "$DIR/pg"; }
    local pw; pw="demo-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
    printf '%s\n' "$pw" > "$pg/pwfile"
    [[ $(id -u) -eq 0 ]] && chown postgres: "$pg/pwfile"
    as_pg "$PGBIN/initdb" -D "$pg/data" -U driftless --pwfile="$pg/pwfile" --auth-local=trust \
        --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1
    rm -f "$pg/pwfile"
    local port
    for _ in $(seq 1 50); do port=$(( 20000 + RANDOM % 30000 )); port_busy "$port" || break; done
    cat >>"$pg/data/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$pg'
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
max_slot_wal_keep_size = 1GB
CONF
    echo "$port" > "$DIR/port"
    printf '127.0.0.1:%s:*:driftless:%s\n' "$port" "$pw" > "$DIR/pgpass"
    chmod 600 "$DIR/pgpass"
    fresh=1
  fi
  local port; port=$(cat "$DIR/port")
  if ! as_pg "$PGBIN/pg_ctl" -D "$pg/data" status >/dev/null 2>&1; then
    as_pg "$PGBIN/pg_ctl" -D "$pg/data" -l "$pg/server.log" -w -t 60 start >/dev/null
  fi
  if [[ "${fresh:-0}" == 1 ]]; then
    local psql=("$PGBIN/psql" -q -v ON_ERROR_STOP=1 -h "$pg" -p "$port" -U driftless)
    as_pg "${psql[@]}" -d postgres -c "CREATE DATABASE app" -c "CREATE DATABASE dw" >/dev/null
    # On stdin, read by this user: the postgres user may not read a checkout under root's home.
    as_pg "${psql[@]}" -d app < "$HERE/schema.sql" >/dev/null
  fi
  start_mariadb
  sed -e "s/@PGPORT@/$port/g" -e "s/@MYPORT@/$(cat "$DIR/myport")/g" "$HERE/workspace.yaml.in" > "$DIR/workspace.yaml"
  echo "$port"
}

stop() {
  stop_mariadb
  local pg; pg=$(pgdir)
  [[ -f "$pg/data/PG_VERSION" ]] || return 0
  as_pg "$PGBIN/pg_ctl" -D "$pg/data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  reset) stop; rm -rf "$(pgdir)" "$(mydir)" "$DIR" ;;
  *) echo "usage: sandbox.sh start|stop|reset [DIR]" >&2; exit 2 ;;
esac
