#!/usr/bin/env bash
# Throwaway servers that speak TLS, for the TLS tests (tests/integration/tst_tls.cpp).
#
#   tlsservers.sh start ENVFILE   make a test CA, a server certificate for db.driftless.test,
#                                 localhost and 127.0.0.1, and a second CA that signed nothing
#                                 the servers show; start Postgres 15 (ssl = on) and MariaDB
#                                 10.11 (ssl-cert, ssl-key) with it on free loopback ports
#   tlsservers.sh stop ENVFILE    stop both and remove the folder
#
# Separate from servers.sh so that no other test's connections change: those servers offer no
# TLS. Logins are trusted from loopback (Postgres) or by a password in ENVFILE (MariaDB).
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
cmd=${1:?usage: tlsservers.sh start|stop ENVFILE}
envfile=${2:?usage: tlsservers.sh start|stop ENVFILE}

# shellcheck source=serverlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/serverlib.sh"

stop_servers() { stop_envfile "$envfile" TLS_ROOT; }

make_certs() {
  local dir=$1
  mkdir -p "$dir"
  local ossl=(openssl)
  # The test CA and the server certificate it signs (RSA 2048 keeps it quick on a slow machine).
  "${ossl[@]}" req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Driftless test CA" \
      -keyout "$dir/ca.key" -out "$dir/ca.crt" >/dev/null 2>&1
  "${ossl[@]}" req -newkey rsa:2048 -nodes -subj "/CN=db.driftless.test" \
      -keyout "$dir/server.key" -out "$dir/server.csr" >/dev/null 2>&1
  printf 'subjectAltName = DNS:db.driftless.test, DNS:localhost, IP:127.0.0.1\n' > "$dir/san.ext"
  "${ossl[@]}" x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
      -days 2 -extfile "$dir/san.ext" -out "$dir/server.crt" >/dev/null 2>&1
  # A CA that signed nothing these servers show: "unknown CA" for a client that trusts only it.
  "${ossl[@]}" req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Another test CA" \
      -keyout "$dir/other-ca.key" -out "$dir/other-ca.crt" >/dev/null 2>&1
  chmod 644 "$dir/ca.crt" "$dir/other-ca.crt" "$dir/server.crt"
  rm -f "$dir/ca.key" "$dir/other-ca.key" "$dir/server.csr"
}

start_pg() {
  local root=$1 port
  mkdir -p "$root/pg"
  cp "$root/certs/server.crt" "$root/pg/server.crt"
  cp "$root/certs/server.key" "$root/pg/server.key"
  chmod 600 "$root/pg/server.key"
  [[ $(id -u) -eq 0 ]] && chown -R postgres: "$root/pg"
  as_pg "$PGBIN/initdb" -D "$root/pg/data" -U driftless --auth-local=trust --auth-host=trust -E UTF8 \
      --locale=C.UTF-8 >"$root/pg/initdb.log" 2>&1
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    cat >>"$root/pg/data/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$root/pg'
max_connections = 40
shared_buffers = 16MB
fsync = off
ssl = on
ssl_cert_file = '$root/pg/server.crt'
ssl_key_file = '$root/pg/server.key'
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
  mkdir -p "$root/my"
  cp "$root/certs/server.crt" "$root/certs/server.key" "$root/certs/ca.crt" "$root/my/"
  chmod 600 "$root/my/server.key"
  start_mariadb_in "$root" "CREATE USER 'driftless'@'127.0.0.1' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON *.* TO 'driftless'@'127.0.0.1';" \
    --innodb-buffer-pool-size=32M --skip-log-bin \
    --ssl-ca="$root/my/ca.crt" --ssl-cert="$root/my/server.crt" --ssl-key="$root/my/server.key"
}

case "$cmd" in
  start)
    stop_servers
    root=$(mktemp -d "${TMPDIR:-/tmp}/driftless-tls.XXXXXX")
    chmod 755 "$root"
    echo "TLS_ROOT=$root" > "$envfile"
    make_certs "$root/certs"
    mypw="my-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
    pgport=$(start_pg "$root")
    myport=$(start_mariadb "$root" "$mypw")
    rm -f "$root/certs/server.key"
    cat > "$envfile" <<ENV
TLS_ROOT=$root
TLS_CA=$root/certs/ca.crt
TLS_OTHER_CA=$root/certs/other-ca.crt
TLS_CERT_NAME=db.driftless.test
TLS_PG_PORT=$pgport
TLS_PG_USER=driftless
TLS_MY_PORT=$myport
TLS_MY_USER=driftless
TLS_MY_PASSWORD=$mypw
ENV
    chmod 600 "$envfile"
    echo "TLS postgres on 127.0.0.1:$pgport, TLS mariadb on 127.0.0.1:$myport, in $root"
    ;;
  stop)
    stop_servers
    echo "TLS test servers stopped"
    ;;
  *) echo "usage: tlsservers.sh start|stop ENVFILE" >&2; exit 2 ;;
esac
