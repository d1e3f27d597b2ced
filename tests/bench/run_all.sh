#!/usr/bin/env bash
# Runs the Driftless benchmarks B1, B3, B4, B5, B6, B7, B8, B9, B10, B11, B13, B14, B15 and B16 against their baselines, side by side on
# throwaway servers, and prints one line per figure (format: reference/benchmarks.md):
#
#   B1 rows_per_s=... baseline_rows_per_s=... ratio=... peak_rss_mb=... case=... rows=... ...
#
# usage: tests/bench/run_all.sh [--rows N] [--runs K] [--build DIR] [--only B1,B3,...,B15,B16]
#                               [--servers ENVFILE] [--install]
#   --rows N          rows in bench.t (default 1000000); B8 scales its workloads with it; B11
#                     re-backfills a table of that many rows
#   --runs K          rounds per benchmark; figures are medians (default 5; B8 3 unless given)
#   --build DIR       a configured Driftless build tree (default build/bench, else build/dev)
#   --only LIST       run only these benchmarks (comma-separated); B12 (the desktop app) runs
#                     only when named, from a build tree with the UI
#   --servers FILE    use servers already started with tests/support/servers.sh (their env
#                     file) instead of starting and stopping our own
#   --install         install missing baselines (apt-get, as root or with sudo); without it a
#                     benchmark whose baseline is missing prints `Bn refused: ...` instead of
#                     figures
#
# Exits non-zero when a benchmark failed or refused.
# Result lines go to stdout; progress goes to stderr. See tests/bench/README.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

ROWS=1000000
RUNS=5
BUILD=
ONLY=B1,B3,B4,B5,B6,B7,B8,B9,B10,B11,B13,B14,B15,B16
BENCH_INSTALL=
SERVERS_ENV=
RUNS_GIVEN=
ROWS_GIVEN=

usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while (($#)); do
  case $1 in
    --rows) ROWS=${2:?--rows needs a number}; ROWS_GIVEN=1; shift 2 ;;
    --runs) RUNS=${2:?--runs needs a number}; RUNS_GIVEN=1; shift 2 ;;
    --build) BUILD=${2:?--build needs a folder}; shift 2 ;;
    --only) ONLY=${2:?--only needs a list}; shift 2 ;;
    --servers) SERVERS_ENV=${2:?--servers needs an env file}; shift 2 ;;
    --install) BENCH_INSTALL=1; shift ;;
    -h|--help) usage ;;
    *) echo "run_all.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ $ROWS =~ ^[0-9]+$ && $ROWS -ge 1000 ]] || { echo "run_all.sh: --rows must be a number >= 1000" >&2; exit 2; }
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 ]] || { echo "run_all.sh: --runs must be a number >= 1" >&2; exit 2; }
ONLY=${ONLY^^}
for b in ${ONLY//,/ }; do
  [[ $b =~ ^B(1|3|4|5|6|7|8|9|10|11|12|13|14|15|16)$ ]] || { echo "run_all.sh: unknown benchmark '$b' (B1, B3, B4, B5, B6, B7, B8, B9, B10, B11, B12, B13, B14, B15, B16)" >&2; exit 2; }
done
selected() { [[ ,$ONLY, == *,$1,* ]]; }

# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=b1_backfill.sh
source "$here/b1_backfill.sh"
# shellcheck source=b3_b9_mysql.sh
source "$here/b3_b9_mysql.sh"
# shellcheck source=b5_sqlite.sh
source "$here/b5_sqlite.sh"
# shellcheck source=b6_merge.sh
source "$here/b6_merge.sh"
# shellcheck source=b7_cursor.sh
source "$here/b7_cursor.sh"
# shellcheck source=b8_cdc.sh
source "$here/b8_cdc.sh"
# shellcheck source=b10_reconcile.sh
source "$here/b10_reconcile.sh"
# shellcheck source=b11_rebackfill.sh
source "$here/b11_rebackfill.sh"
# shellcheck source=b12_gui.sh
source "$here/b12_gui.sh"
# shellcheck source=b13_large.sh
source "$here/b13_large.sh"
# shellcheck source=b14_twoway.sh
source "$here/b14_twoway.sh"
# shellcheck source=b15_tablesize.sh
source "$here/b15_tablesize.sh"
# shellcheck source=b16_addcolumn.sh
source "$here/b16_addcolumn.sh"
# B8 drains two 1M-row workloads twice per round: 3 rounds keep it near 5 minutes on 2 cores.
[[ -n $RUNS_GIVEN ]] || B8_RUNS=${B8_RUNS:-3}

# --- tools and binaries -------------------------------------------------------------------------

[[ -x /usr/bin/time || -z $BENCH_INSTALL ]] || install_packages time || true
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time, or --install); it measures peak RSS"
command -v cmake >/dev/null || die "cmake is missing"
if [[ -z $BUILD ]]; then
  for d in "$repo/build/bench" "$repo/build/dev"; do
    [[ -f $d/CMakeCache.txt ]] && { BUILD=$d; break; }
  done
  [[ -n $BUILD ]] || die "no build tree found; configure one first:
  cmake -S $repo -B $repo/build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DDRIFTLESS_BUILD_UI=OFF"
fi
[[ -d $BUILD ]] || die "no build tree at $BUILD"
BUILD=$(cd "$BUILD" && pwd)
[[ -f $BUILD/CMakeCache.txt ]] || die "$BUILD is not a configured build tree"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt")
[[ $build_type == Release ]] || log "warning: $BUILD is a '$build_type' build; benchmark a Release build"

BUILD_LOG=$BUILD/driftless-cli-build.log
log "building driftless-cli in $BUILD"
if ! cmake --build "$BUILD" --target driftless-cli >"$BUILD_LOG" 2>&1; then
  grep -E -B2 -A6 'error|FAILED' "$BUILD_LOG" | tail -n 40 >&2
  die "building driftless-cli failed (log: $BUILD_LOG)"
fi
CLI=$BUILD/app/driftless-cli
[[ -x $CLI ]] || die "no $CLI after the build"

BENCH_DRIVER=
if selected B6 || selected B9; then
  if cmake --build "$BUILD" --target help 2>/dev/null | grep -qw 'driftless-bench'; then
    log "building driftless-bench in $BUILD"
    cmake --build "$BUILD" --target driftless-bench >/dev/null || die "building driftless-bench failed"
    BENCH_DRIVER=$BUILD/tests/bench/driftless-bench
  else
    # The project does not build tests/bench: build the driver on its own against this tree.
    log "building driftless-bench in $BUILD/bench-driver (standalone)"
    gen=()
    command -v ninja >/dev/null && gen=(-G Ninja)
    if ! { cmake -S "$here/standalone" -B "$BUILD/bench-driver" "${gen[@]}" -DDRIFTLESS_BUILD_DIR="$BUILD" \
             -DCMAKE_BUILD_TYPE=Release && cmake --build "$BUILD/bench-driver"; } >"$BUILD/bench-driver.log" 2>&1; then
      tail -n 30 "$BUILD/bench-driver.log" >&2
      die "building driftless-bench failed (log: $BUILD/bench-driver.log)"
    fi
    BENCH_DRIVER=$BUILD/bench-driver/driver/driftless-bench
  fi
  [[ -x $BENCH_DRIVER ]] || die "no $BENCH_DRIVER after the build"
fi

# --- servers and scratch space ------------------------------------------------------------------

WORK=$(mktemp -d "${TMPDIR:-/tmp}/driftless-bench.XXXXXX")
own_servers=
BENCH_PIDS=() # background processes of a benchmark (B8, B11 and B14: engine, pollers, pgbench), ended on exit
cleanup() {
  local rc=$? pid
  for pid in "${BENCH_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [[ -n $own_servers ]]; then
    bash "$repo/tests/support/servers.sh" stop "$WORK/servers.env" >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -n $SERVERS_ENV ]]; then
  [[ -f $SERVERS_ENV ]] || die "no env file $SERVERS_ENV"
  # shellcheck disable=SC1090
  source "$SERVERS_ENV"
else
  log "starting throwaway servers"
  own_servers=1
  bash "$repo/tests/support/servers.sh" start "$WORK/servers.env" >&2 || die "could not start the test servers"
  # shellcheck disable=SC1091
  source "$WORK/servers.env"
fi
[[ -n ${PG_PASSWORD:-} ]] || die "the servers' env file has no PG_PASSWORD"
export PGPASSWORD=$PG_PASSWORD
: "${PG_BIN:=/usr/lib/postgresql/15/bin}"
[[ -x $PG_BIN/psql ]] || PG_BIN=$(dirname "$(command -v psql)")
pg_value postgres "SELECT 1" >/dev/null || die "cannot reach Postgres at $PG_HOST:$PG_PORT"

: >"$WORK/results.txt"
if selected B1 || selected B4 || selected B5 || selected B6 || selected B7 || selected B10; then
  log "generating bench.t with $ROWS rows (database seed)"
  fresh_db seed
  generate_table seed "$ROWS"
fi

t_start=$EPOCHREALTIME
selected B1 && bench_b1
selected B3 && bench_b3
selected B4 && bench_b4
selected B5 && bench_b5
selected B6 && bench_b6
selected B7 && bench_b7
selected B8 && bench_b8
selected B9 && bench_b9
selected B10 && bench_b10
selected B11 && bench_b11
selected B12 && bench_b12
selected B13 && bench_b13
selected B14 && bench_b14
selected B15 && bench_b15
selected B16 && bench_b16

log "done in $(printf '%.0f' "$(elapsed "$t_start" "$EPOCHREALTIME")") s; results:"
sed 's/^/  /' "$WORK/results.txt" >&2
if ((${#REFUSED[@]})); then
  log "refused (a baseline is missing, no figures): ${REFUSED[*]}"
  exit 1
fi
