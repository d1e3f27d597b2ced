# Shared by servers.sh and tlsservers.sh (sourced, not run): running Postgres as `postgres` when
# root, free loopback ports, and stopping the servers of one throwaway folder.
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
