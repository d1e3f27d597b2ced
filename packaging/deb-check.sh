#!/usr/bin/env bash
# Builds the .deb from a build tree, lints it, installs it with apt as a DBA would, runs what it
# installed (the CLI, the man pages, the app offscreen, the agent's user and state directory),
# then purges it and checks nothing is left. Needs root or passwordless sudo: exits 77 (skipped)
# without them.
#
#   packaging/deb-check.sh BUILD_DIR
set -euo pipefail

BUILD=${1:?usage: packaging/deb-check.sh BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if ! sudo -n true 2>/dev/null; then
    echo "deb-check: skipped: installing a package needs root or passwordless sudo" >&2
    exit 77
  fi
  SUDO=(sudo -n)
fi
fail() { echo "deb-check: FAILED: $*" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

echo "deb-check: building the package"
(cd "$BUILD" && cpack -G DEB -B "$work" >/dev/null)
deb=$(ls "$work"/driftless_*.deb)
version=$(dpkg-deb -f "$deb" Version)
echo "deb-check: $(basename "$deb")"

echo "deb-check: lintian"
lintian --tag-display-limit 0 --fail-on error "$deb" 2>&1 | grep -v 'running with root privileges' || true
lintian --fail-on error "$deb" >/dev/null 2>&1 || fail "lintian found errors"

echo "deb-check: apt install ./$(basename "$deb")"
# apt reads a local file as the _apt user: the file and its folder must be readable to it.
chmod 644 "$deb"
if dpkg-query -W -f='${Status}' driftless 2>/dev/null | grep -q "install ok installed"; then
  echo "deb-check: skipped: a driftless package is installed here already, and this check would replace it" >&2
  exit 77
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "$deb" >"$work/apt.log" 2>&1 ||
  { cat "$work/apt.log" >&2; fail "apt could not install the package"; }
purge() { "${SUDO[@]}" apt-get purge -y -q driftless >"$work/purge.log" 2>&1; }
trap 'purge || true; rm -rf "$work"' EXIT

echo "deb-check: what it installed runs"
[[ $(/usr/bin/driftless-cli --version) == "driftless-cli $version" ]] || fail "driftless-cli --version: $(/usr/bin/driftless-cli --version)"
/usr/bin/driftless-cli help reconcile | grep -q -- '--max-keys' || fail "driftless-cli help reconcile"
for page in driftless-cli driftless; do
  man -w "$page" >/dev/null 2>&1 || fail "no man page $page(1)"
done
[[ -f /usr/share/bash-completion/completions/driftless-cli ]] || fail "no bash completion"
bash -c 'source /usr/share/bash-completion/completions/driftless-cli && complete -p driftless-cli' >/dev/null ||
  fail "the bash completion does not load"
mkdir -m 700 "$work/run"
[[ $(QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR="$work/run" /usr/bin/driftless --version) == "Driftless $version" ]] ||
  fail "driftless --version"
# The app starts from the installed files and stays up until it is stopped.
set +e
QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR="$work/run" HOME="$work" timeout -s TERM 8 /usr/bin/driftless \
  --state "$work/workspace.db" >"$work/app.log" 2>&1
rc=$?
set -e
[[ $rc -eq 124 || $rc -eq 0 ]] || { cat "$work/app.log" >&2; fail "the app exited with $rc before it was stopped"; }

echo "deb-check: the agent service"
unit=/lib/systemd/system/driftless-agent.service
[[ -f $unit ]] || fail "no $unit"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify "$unit" 2>"$work/verify.log" || { cat "$work/verify.log" >&2; fail "systemd-analyze verify"; }
fi
getent passwd driftless >/dev/null || fail "the package made no driftless user"
[[ $(stat -c '%U %a' /var/lib/driftless) == "driftless 700" ]] || fail "/var/lib/driftless is $(stat -c '%U %a' /var/lib/driftless)"
# As the unit's user: a workspace stored in its state directory, and the agent's token beside
# it, 0600.
cat >"$work/ws.yaml" <<'YAML'
endpoints:
  app: { kind: postgres, dsn: "host=127.0.0.1 port=5432 dbname=app user=sync" }
  lite: { kind: sqlite, path: "/var/lib/driftless/replica.db" }
pipelines:
  - name: app_to_lite
    source: app
    target: lite
    tables:
      - { table: public.plans, strategy: full_refresh }
YAML
chmod 644 "$work/ws.yaml"
as_agent() { "${SUDO[@]}" runuser -u driftless -- env DRIFTLESS_STATE=/var/lib/driftless/workspace.db "$@"; }
as_agent /usr/bin/driftless-cli apply "$work/ws.yaml" --no-check >/dev/null || fail "apply as the agent's user"
token=$(as_agent /usr/bin/driftless-cli agent-token)
[[ ${#token} -ge 32 ]] || fail "agent-token printed '$token'"
[[ $("${SUDO[@]}" stat -c '%U %a' /var/lib/driftless/workspace.db.agent-token) == "driftless 600" ]] ||
  fail "the agent token is not the agent user's alone"

echo "deb-check: apt purge driftless"
purge || { cat "$work/purge.log" >&2; fail "apt could not purge the package"; }
trap 'rm -rf "$work"' EXIT
[[ ! -e /usr/bin/driftless-cli && ! -e $unit && ! -e /var/lib/driftless ]] || fail "the purge left files behind"
! getent passwd driftless >/dev/null || fail "the purge left the driftless user"
echo "deb-check: passed ($version)"
