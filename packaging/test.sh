#!/usr/bin/env bash
# The whole test suite, in one command: installs what is missing, builds with warnings as
# errors, and runs every test (unit, integration, fault, gui) against throwaway Postgres 15 and
# MariaDB 10.11 servers that the suite starts and stops itself.
#
#   packaging/test.sh [ctest args...]     e.g. packaging/test.sh -L unit
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
bash "$ROOT/packaging/install-deps.sh"
cd "$ROOT"
cmake --preset ci
cmake --build --preset ci
export QT_QPA_PLATFORM=offscreen
ctest --preset ci "$@"
