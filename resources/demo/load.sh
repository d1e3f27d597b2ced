#!/usr/bin/env bash
# The demo's small, steady write load on the sandbox source: load.sql about twice a second.
#   load.sh DIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:?usage: load.sh SANDBOX_DIR}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
port=$(cat "$DIR/port")
export PGPASSFILE="$DIR/pgpass"
while true; do
  "$PGBIN/psql" -q -X -h 127.0.0.1 -p "$port" -U driftless -d app -f "$HERE/load.sql" >/dev/null 2>>"$DIR/load.log" || sleep 2
  sleep 0.5
done
