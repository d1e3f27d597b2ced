#!/usr/bin/env bash
# The demo, in one command: installs what is missing, builds, starts a sandbox (a local
# Postgres source `app` with plans, events and orders and a local MariaDB source `shop` with
# customers and orders, both under a steady write load; a Postgres target `dw` and a SQLite
# target), applies the demo workspace and runs the sync, showing
# status: the desktop app when a display is available, `driftless-cli run` otherwise.
# Ctrl+C (or closing the window) stops the sync and the sandbox; its data is kept for next time.
#
#   packaging/demo.sh [--reset] [--cli]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SANDBOX=${DRIFTLESS_SANDBOX:-${XDG_DATA_HOME:-$HOME/.local/share}/driftless/sandbox}
reset=0; force_cli=0
for a in "$@"; do
  case "$a" in
    --reset) reset=1 ;;
    --cli) force_cli=1 ;;
    *) echo "usage: packaging/demo.sh [--reset] [--cli]" >&2; exit 2 ;;
  esac
done

bash "$ROOT/packaging/install-deps.sh"
# Only what the demo runs: the app and the CLI, not the test suite.
(cd "$ROOT" && cmake --preset dev >/dev/null && cmake --build --preset dev --target driftless-cli driftless)
BIN="$ROOT/build/dev/app"

[[ $reset == 1 ]] && bash "$ROOT/resources/demo/sandbox.sh" reset "$SANDBOX"
echo "driftless demo: starting the sandbox in $SANDBOX"
port=$(bash "$ROOT/resources/demo/sandbox.sh" start "$SANDBOX")
export PGPASSFILE="$SANDBOX/pgpass"
MYSQL_PWD=$(cat "$SANDBOX/mypw")
export MYSQL_PWD
STATE="$SANDBOX/workspace.db"

load_pid=
cleanup() {
  trap - EXIT INT TERM
  [[ -n "$load_pid" ]] && kill "$load_pid" 2>/dev/null || true
  echo "driftless demo: stopping the sandbox (data kept; packaging/demo.sh --reset starts over)"
  bash "$ROOT/resources/demo/sandbox.sh" stop "$SANDBOX"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$BIN/driftless-cli" --state "$STATE" apply "$SANDBOX/workspace.yaml"
bash "$ROOT/resources/demo/load.sh" "$SANDBOX" &
load_pid=$!

echo "driftless demo: source app and target dw on 127.0.0.1:$port (user driftless, password in $PGPASSFILE);"
echo "                MariaDB source shop on 127.0.0.1:$(cat "$SANDBOX/myport") (user driftless, password in $SANDBOX/mypw);"
echo "                SQLite target $SANDBOX/replica.db; workspace $STATE"
if [[ $force_cli == 0 && -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" && -x "$BIN/gui/driftless" ]]; then
  "$BIN/gui/driftless" --state "$STATE" --run
else
  "$BIN/driftless-cli" --state "$STATE" run
fi
