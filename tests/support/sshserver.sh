#!/usr/bin/env bash
# A throwaway OpenSSH server for the SSH tunnel tests (tests/integration/tst_sshtunnel.cpp).
#
#   sshserver.sh start DIR    make DIR (once: an ed25519 host key, a client key allowed to log in,
#                             a free loopback port), start sshd on 127.0.0.1 at that port and
#                             write DIR/env (SSH_PORT, SSH_USER, SSH_KEY, SSH_HOST_KEY, SSH_LOG)
#   sshserver.sh stop DIR     stop sshd and the connections it serves (the tunnels break)
#   sshserver.sh rotate DIR   replace the host key (start again to offer the new one)
#   sshserver.sh pgsocket DIR start a Postgres of its own in DIR-pg that listens on no TCP port,
#                             only on a Unix socket in DIR-pg/sock (which the SSH user can
#                             reach), and write DIR/pgsocket.env (PGSOCK_DIR, PGSOCK_PORT)
#   sshserver.sh remove DIR   stop them and remove DIR (and DIR-pg)
#
# A restart keeps the port and (unless rotated) the host key. LogLevel DEBUG1 logs each
# forwarding channel (direct-tcpip), so a test can see its connections took the tunnel.
set -euo pipefail

cmd=${1:?usage: sshserver.sh start|stop|rotate|remove DIR}
dir=${2:?usage: sshserver.sh start|stop|rotate|remove DIR}

# shellcheck source=serverlib.sh
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
source "$(dirname "${BASH_SOURCE[0]}")/serverlib.sh"

SSHD=${SSHD:-/usr/sbin/sshd}

stop_sshd() {
  [[ -f "$dir/sshd.pid" ]] || return 0
  local pid; pid=$(cat "$dir/sshd.pid")
  rm -f "$dir/sshd.pid"
  [[ -n "$pid" ]] || return 0
  # Each connection's sshd is a child of the listener in a session of its own: stop those
  # first (with them the tunnels through them break), then the listener.
  local children; children=$(ps -o pid= --ppid "$pid" 2>/dev/null || true)
  for c in $children; do kill -KILL "$c" 2>/dev/null || true; done
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -KILL "$pid" 2>/dev/null || true
}

new_host_key() {
  rm -f "$dir/host_ed25519" "$dir/host_ed25519.pub"
  ssh-keygen -q -t ed25519 -N '' -C driftless-test-host -f "$dir/host_ed25519"
}

case "$cmd" in
  start)
    mkdir -p "$dir"
    chmod 700 "$dir"
    # sshd's privilege separation needs its empty folder (absent on a machine that never ran it).
    if [[ $(id -u) -eq 0 ]]; then mkdir -p /run/sshd; chmod 755 /run/sshd; fi
    [[ -f "$dir/host_ed25519" ]] || new_host_key
    if [[ ! -f "$dir/client_ed25519" ]]; then
      ssh-keygen -q -t ed25519 -N '' -C driftless-test-client -f "$dir/client_ed25519"
      cp "$dir/client_ed25519.pub" "$dir/authorized_keys"
    fi
    stop_sshd
    [[ -f "$dir/port" ]] || free_port > "$dir/port"
    port=$(cat "$dir/port")
    cat > "$dir/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_ed25519
PidFile $dir/sshd.listener.pid
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
AllowTcpForwarding yes
AllowStreamLocalForwarding yes
PermitTTY no
X11Forwarding no
MaxStartups 50
LogLevel DEBUG1
CONF
    setsid "$SSHD" -D -e -f "$dir/sshd_config" >>"$dir/sshd.log" 2>&1 </dev/null &
    echo $! > "$dir/sshd.pid"
    for _ in $(seq 1 200); do
      if port_busy "$port"; then break; fi
      if ! kill -0 "$(cat "$dir/sshd.pid")" 2>/dev/null; then
        echo "sshd did not start; see $dir/sshd.log" >&2; exit 1
      fi
      sleep 0.05
    done
    port_busy "$port" || { echo "sshd does not listen on $port; see $dir/sshd.log" >&2; exit 1; }
    cat > "$dir/env" <<ENV
SSH_PORT=$port
SSH_USER=$(id -un)
SSH_KEY=$dir/client_ed25519
SSH_HOST_KEY=$dir/host_ed25519.pub
SSH_LOG=$dir/sshd.log
ENV
    echo "sshd on 127.0.0.1:$port in $dir"
    ;;
  stop) stop_sshd ;;
  rotate) new_host_key ;;
  pgsocket)
    # A database behind a bastion, reachable only from it: no TCP listener at all.
    root="$dir-pg"
    stop_root "$root"
    mkdir -p "$root/pg/sock"
    if [[ $(id -u) -eq 0 ]]; then chown -R postgres: "$root"; fi
    chmod 755 "$root"
    as_pg "$PGBIN/initdb" -D "$root/pg/data" -U postgres --auth=trust -E UTF8 >"$root/pg/initdb.log" 2>&1
    # The port only names the socket (.s.PGSQL.PORT); nothing listens on it.
    pgport=$(free_port)
    as_pg "$PGBIN/pg_ctl" -D "$root/pg/data" -l "$root/pg/server.log" -w -t 60 \
      -o "-c listen_addresses='' -c unix_socket_directories='$root/pg/sock' -p $pgport" start >/dev/null
    cat > "$dir/pgsocket.env" <<ENV
PGSOCK_DIR=$root/pg/sock
PGSOCK_PORT=$pgport
ENV
    echo "Postgres on $root/pg/sock/.s.PGSQL.$pgport only"
    ;;
  remove) stop_sshd; stop_root "$dir-pg"; rm -rf "$dir" ;;
  *) echo "usage: sshserver.sh start|stop|rotate|pgsocket|remove DIR" >&2; exit 2 ;;
esac
