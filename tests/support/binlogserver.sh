#!/usr/bin/env bash
# A MariaDB of one test's own, binlog ROW with a short binlog_expire_logs_seconds, so the test may
# rotate and purge its binary logs without touching the shared servers (servers.sh).
#   binlogserver.sh start ENVFILE PASSWORD EXPIRE_SECONDS   writes BINLOG_ROOT and BINLOG_MY_PORT
#   binlogserver.sh stop ENVFILE
# The user `driftless` gets PASSWORD (the test passes the shared server's, so MYSQL_PWD serves
# both). As root, mariadbd runs as `mysql`.
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
cmd=${1:?usage: binlogserver.sh start|stop ENVFILE [PASSWORD EXPIRE_SECONDS]}
envfile=${2:?usage: binlogserver.sh start|stop ENVFILE [PASSWORD EXPIRE_SECONDS]}

source "$(dirname "${BASH_SOURCE[0]}")/serverlib.sh"
# The test's MYSQL_PWD is the driftless user's: the root logins below have none.
unset MYSQL_PWD

stop_server() { stop_envfile "$envfile" BINLOG_ROOT; }

start_mariadb() {
  local root=$1 pw=$2 expire=$3
  start_mariadb_in "$root" "CREATE USER 'driftless'@'127.0.0.1' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON *.* TO 'driftless'@'127.0.0.1';" \
    --log-bin="$root/my/data/binlog" --binlog-format=ROW --binlog-row-image=FULL --binlog-row-metadata=FULL \
    --server-id=1 --binlog-expire-logs-seconds="$expire" --innodb-flush-log-at-trx-commit=0 \
    --innodb-buffer-pool-size=32M
}

case "$cmd" in
  start)
    pw=${3:?binlogserver.sh start needs PASSWORD}
    expire=${4:?binlogserver.sh start needs EXPIRE_SECONDS}
    stop_server
    root=$(mktemp -d "${TMPDIR:-/tmp}/driftless-binlog.XXXXXX")
    chmod 755 "$root"
    echo "BINLOG_ROOT=$root" > "$envfile"
    port=$(start_mariadb "$root" "$pw" "$expire")
    printf 'BINLOG_ROOT=%s\nBINLOG_MY_PORT=%s\n' "$root" "$port" > "$envfile"
    echo "mariadb with binlog_expire_logs_seconds=$expire on 127.0.0.1:$port, in $root"
    ;;
  stop)
    stop_server
    ;;
  *) echo "usage: binlogserver.sh start|stop ENVFILE [PASSWORD EXPIRE_SECONDS]" >&2; exit 2 ;;
esac
