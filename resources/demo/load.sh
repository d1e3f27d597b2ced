#!/usr/bin/env bash
# The demo's small, steady write load on the sandbox sources: load.sql on Postgres and
# load_shop.sql on MariaDB, about twice a second.
#   load.sh DIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:?usage: load.sh SANDBOX_DIR}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
port=$(cat "$DIR/port")
export PGPASSFILE="$DIR/pgpass"
myport=$(cat "$DIR/myport" 2>/dev/null || true)
MYSQL_PWD=$(cat "$DIR/mypw" 2>/dev/null || true)
export MYSQL_PWD
while true; do
  "$PGBIN/psql" -q -X -h 127.0.0.1 -p "$port" -U driftless -d app -f "$HERE/load.sql" >/dev/null 2>>"$DIR/load.log" || sleep 2
  if [[ -n "$myport" ]]; then
    mariadb --no-defaults -h 127.0.0.1 -P "$myport" -u driftless shop <"$HERE/load_shop.sql" >/dev/null 2>>"$DIR/load.log" || sleep 2
  fi
  sleep 0.5
done
