#!/usr/bin/env bash
# Every C++ file of the repository as .clang-format lays it out (clang-format-14, the version
# Debian 12 has). Prints the files that differ and the command that fixes them, and exits 1; or
# exits 0.
#   format.sh SOURCE_DIR
set -euo pipefail
cd "${1:?usage: format.sh SOURCE_DIR}"
command -v clang-format-14 >/dev/null ||
  { echo "format: clang-format-14 is missing: apt-get install clang-format-14" >&2; exit 1; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h')
else
  mapfile -t files < <(find app core tests ui -name '*.cpp' -o -name '*.h' | sort)
fi
mapfile -t bad < <(clang-format-14 --dry-run --Werror "${files[@]}" 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if ((${#bad[@]})); then
  printf 'not formatted: %s\n' "${bad[@]}"
  if ((${#bad[@]} <= 10)); then
    echo "format: ${#bad[@]} file(s) differ from .clang-format; fix them with: clang-format-14 -i ${bad[*]}" >&2
  else
    echo "format: ${#bad[@]} files differ from .clang-format; fix them with: git ls-files '*.cpp' '*.h' | xargs clang-format-14 -i" >&2
  fi
  exit 1
fi
echo "format: ${#files[@]} files as .clang-format lays them out"
