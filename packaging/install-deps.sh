#!/usr/bin/env bash
# Installs the Debian 12 packages Driftless needs to build, run and test.
# Idempotent: packages already present are not touched, and apt is not called at all
# when nothing is missing. Uses sudo when not run as root.
set -euo pipefail

BUILD=(build-essential cmake ninja-build pkg-config git ca-certificates)
LIBS=(qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev qt6-httpserver-dev qt6-websockets-dev
      qt6-qpa-plugins qtkeychain-qt6-dev libgl-dev libqt6opengl6-dev
      libpq-dev libsqlite3-dev libssl-dev libyaml-cpp-dev nlohmann-json3-dev
      libmariadb-dev libmysqlcppconn-dev)
SERVERS=(postgresql-15 postgresql-client-15 mariadb-server mariadb-client sqlite3)
# SSH tunnels: the engine runs the system ssh client; tst_sshtunnel starts an sshd of its own.
SSH=(openssh-client openssh-server)
# curl and openssl: tst_agent's independent HTTPS client and certificate tools. groff-base and
# zsh: tst_clihelp renders the man pages and checks the completion scripts. lintian, man-db and
# dpkg-dev: package_deb lints, installs and reads the .deb. faketime: tst_newerwins runs a
# Postgres whose clock is 30 s ahead (libfaketime). clang-format-14: the `format` test checks the
# layout of every C++ file against .clang-format.
TEST=(libgtest-dev time procps util-linux xvfb xauth python3 python3-prometheus-client appstream curl openssl
      groff-base zsh lintian man-db dpkg-dev faketime libfaketime clang-format-14)
# tst_keychain: a private session bus with gnome-keyring-daemon as the Secret Service, libsecret
# (which QtKeychain loads at run time) and secret-tool to look at the keyring from outside.
KEYCHAIN=(dbus-daemon gnome-keyring libsecret-1-0 libsecret-tools)
# The binlog decoder's fuzz test (tests/fuzz/run.sh): clang and its libFuzzer runtime.
FUZZ=(clang-14 libclang-rt-14-dev)

want=("${BUILD[@]}" "${LIBS[@]}" "${SERVERS[@]}" "${SSH[@]}" "${TEST[@]}" "${KEYCHAIN[@]}" "${FUZZ[@]}")
if [[ "${1:-}" == "--print" ]]; then printf '%s\n' "${want[@]}"; exit 0; fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "driftless: all build, run and test packages are installed"
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "driftless: missing packages (${missing[*]}) and no sudo; install them as root" >&2; exit 1; }
  SUDO=(sudo)
fi

echo "driftless: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Debian starts services on install where it can; the harness and the demo run their own
# servers on free ports, so keep the packaged ones from starting.
policy_added=0
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee /usr/sbin/policy-rc.d >/dev/null
  "${SUDO[@]}" chmod 755 /usr/sbin/policy-rc.d
  policy_added=1
fi
trap '[[ $policy_added == 1 ]] && "${SUDO[@]}" rm -f /usr/sbin/policy-rc.d' EXIT
"${SUDO[@]}" apt-get update -q || echo "driftless: apt-get update failed; trying with the current package lists" >&2
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
