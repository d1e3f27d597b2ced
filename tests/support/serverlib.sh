# Shared by servers.sh, tlsservers.sh and binlogserver.sh (sourced, not run): running Postgres as
# `postgres` when root, free loopback ports, starting a MariaDB, and stopping the servers of one
# throwaway folder.
# Needs PGBIN set by the caller.

as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 30000 ))
    port_busy "$p" || { echo "$p"; return 0; }
  done
  echo "no free port found" >&2; return 1
}

# Stops the servers whose folder ENVFILE names in its variable VAR (as a start wrote it), and
# removes ENVFILE; nothing to do without one.
#   stop_envfile ENVFILE VAR
stop_envfile() {
  local envfile=$1 var=$2
  [[ -f "$envfile" ]] || return 0
  # shellcheck disable=SC1090
  source "$envfile"
  stop_root "${!var:-}"
  rm -f "$envfile"
}

# Stops the Postgres (ROOT/pg/data) and MariaDB (ROOT/my) a start left in ROOT, then removes it.
stop_root() {
  local root=$1
  [[ -n "$root" && -d "$root" ]] || return 0
  if [[ -f "$root/pg/data/postmaster.pid" ]]; then
    as_pg "$PGBIN/pg_ctl" -D "$root/pg/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
  fi
  if [[ -f "$root/my/mariadbd.pid" ]]; then
    local pid; pid=$(cat "$root/my/mariadbd.pid" 2>/dev/null || true)
    if [[ -n "$pid" ]]; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  rm -rf "$root"
}

# Starts a MariaDB with its data in ROOT/my (made, and owned by `mysql` when root, with whatever
# the caller put there) on a free loopback port, with the mariadbd OPTIONS given, then runs SQL
# as root over its socket; prints the port. Five ports are tried before giving up.
#   start_mariadb_in ROOT SQL [OPTION...]
start_mariadb_in() {
  local root=$1 sql=$2 port attempt
  shift 2
  # Its own temporary folder: temporary tables never land in the machine's shared /tmp.
  mkdir -p "$root/my/tmp"
  local user_opt=()
  if [[ $(id -u) -eq 0 ]]; then chown -R mysql: "$root/my"; user_opt=(--user=mysql); fi
  mariadb-install-db "${user_opt[@]}" --datadir="$root/my/data" --auth-root-authentication-method=normal \
      --skip-test-db >"$root/my/install.log" 2>&1
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    rm -f "$root/my/mariadbd.pid"
    mariadbd --no-defaults "${user_opt[@]}" --datadir="$root/my/data" --port="$port" --bind-address=127.0.0.1 \
        --socket="$root/my/mysqld.sock" --pid-file="$root/my/mariadbd.pid" --log-error="$root/my/server.log" \
        --tmpdir="$root/my/tmp" \
        "$@" >/dev/null 2>&1 &
    for _ in $(seq 1 300); do
      if mariadb --no-defaults -uroot --socket="$root/my/mysqld.sock" -e 'SELECT 1' >/dev/null 2>&1; then
        mariadb --no-defaults -uroot --socket="$root/my/mysqld.sock" <<<"$sql"
        echo "$port"; return 0
      fi
      kill -0 $! 2>/dev/null || break
      sleep 0.1
    done
    echo "mariadbd did not start on port $port (attempt $attempt); see $root/my/server.log" >&2
    kill $! 2>/dev/null || true
  done
  return 1
}
