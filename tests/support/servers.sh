#!/usr/bin/env bash
# Throwaway database servers for the test suite.
#
#   servers.sh start ENVFILE   start Postgres 15 (wal_level=logical) and MariaDB 10.11
#                              (binlog ROW) on free loopback ports in a new temporary folder,
#                              and write their coordinates to ENVFILE (shell KEY=VALUE lines)
#   servers.sh stop ENVFILE    stop both servers and remove the folder
#
# ctest runs start as a FIXTURES_SETUP test and stop as FIXTURES_CLEANUP, so the servers are
# stopped even when tests fail. As root, Postgres runs as `postgres` and mariadbd as `mysql`.
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
cmd=${1:?usage: servers.sh start|stop ENVFILE}
envfile=${2:?usage: servers.sh start|stop ENVFILE}

# shellcheck source=serverlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/serverlib.sh"

stop_servers() { stop_envfile "$envfile" DRIFTLESS_TEST_ROOT; }

start_pg() {
  local root=$1 pw=$2 port
  mkdir -p "$root/pg"
  [[ $(id -u) -eq 0 ]] && chown postgres: "$root/pg"
  printf '%s\n' "$pw" > "$root/pg/pwfile"; chmod 600 "$root/pg/pwfile"
  [[ $(id -u) -eq 0 ]] && chown postgres: "$root/pg/pwfile"
  as_pg "$PGBIN/initdb" -D "$root/pg/data" -U driftless --pwfile="$root/pg/pwfile" \
      --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$root/pg/initdb.log" 2>&1
  rm -f "$root/pg/pwfile"
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    cat >>"$root/pg/data/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$root/pg'
wal_level = logical
max_wal_senders = 20
max_replication_slots = 20
max_connections = 200
shared_buffers = 256MB
fsync = off
full_page_writes = off
synchronous_commit = off
CONF
    if as_pg "$PGBIN/pg_ctl" -D "$root/pg/data" -l "$root/pg/server.log" -w -t 60 start >/dev/null 2>&1; then
      echo "$port"; return 0
    fi
    echo "postgres did not start on port $port (attempt $attempt); see $root/pg/server.log" >&2
  done
  return 1
}

start_mariadb() {
  local root=$1 pw=$2
  start_mariadb_in "$root" "CREATE USER 'driftless'@'127.0.0.1' IDENTIFIED BY '$pw';
CREATE USER 'driftless'@'localhost' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON *.* TO 'driftless'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO 'driftless'@'localhost' WITH GRANT OPTION;" \
    --log-bin="$root/my/data/binlog" --binlog-format=ROW --binlog-row-image=FULL --binlog-row-metadata=FULL \
    --server-id=1 --gtid-strict-mode=1 --innodb-flush-log-at-trx-commit=0 --innodb-buffer-pool-size=256M \
    --max-connections=300 --local-infile=1
}

case "$cmd" in
  start)
    stop_servers
    root=$(mktemp -d "${TMPDIR:-/tmp}/driftless-servers.XXXXXX")
    chmod 755 "$root"
    pgpw="pg-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
    mypw="my-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
    # Written first so that `stop` can clean up after a half-finished start.
    echo "DRIFTLESS_TEST_ROOT=$root" > "$envfile"
    pgport=$(start_pg "$root" "$pgpw")
    myport=$(start_mariadb "$root" "$mypw")
    cat > "$envfile" <<ENV
DRIFTLESS_TEST_ROOT=$root
PG_HOST=127.0.0.1
PG_PORT=$pgport
PG_USER=driftless
PG_PASSWORD=$pgpw
PG_SOCKET_DIR=$root/pg
PG_BIN=$PGBIN
MY_HOST=127.0.0.1
MY_PORT=$myport
MY_USER=driftless
MY_PASSWORD=$mypw
MY_SOCKET=$root/my/mysqld.sock
ENV
    chmod 600 "$envfile"
    echo "postgres on 127.0.0.1:$pgport, mariadb on 127.0.0.1:$myport, in $root"
    ;;
  stop)
    stop_servers
    echo "test servers stopped"
    ;;
  *) echo "usage: servers.sh start|stop ENVFILE" >&2; exit 2 ;;
esac
