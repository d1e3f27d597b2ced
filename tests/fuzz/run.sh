#!/usr/bin/env bash
# Builds the binlog decoder's libFuzzer target with clang and runs it for a bounded time.
#
#   run.sh OUTDIR [SECONDS]     build OUTDIR/fuzz_binlog and fuzz for SECONDS (default 60),
#                               keeping the corpus in OUTDIR/corpus and crashes in OUTDIR
#
# Exits 77 (ctest's SKIP_RETURN_CODE) when clang++ or libFuzzer is not installed
# (Debian 12: clang-14 and libclang-rt-14-dev, see packaging/install-deps.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: run.sh OUTDIR [SECONDS]}
seconds=${2:-60}
mkdir -p "$out/corpus"

cxx=""
for c in clang++ clang++-14 clang++-15 clang++-16; do
  if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
done
if [[ -z $cxx ]]; then
  echo "fuzz_binlog: SKIPPED, no clang++ (install clang-14 and libclang-rt-14-dev)"
  exit 77
fi
probe="$out/probe.cpp"
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }' > "$probe"
if ! "$cxx" -fsanitize=fuzzer "$probe" -o "$out/probe" >/dev/null 2>&1; then
  echo "fuzz_binlog: SKIPPED, $cxx cannot link libFuzzer (install libclang-rt-14-dev)"
  exit 77
fi

sources=(
  "$root/tests/fuzz/fuzz_binlog.cpp"
  "$root/core/readers/binlog/binlogdecoder.cpp"
  "$root/core/readers/binlog/binlogtablemap.cpp"
  "$root/core/readers/binlog/binlogvalues.cpp"
  "$root/core/model/error.cpp"
)
"$cxx" -std=c++20 -O1 -g -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root" "${sources[@]}" -o "$out/fuzz_binlog"

cd "$out"
# -rss_limit_mb and -max_len keep one input's cost bounded; a crash leaves crash-* here and
# makes this script (and the ctest) fail.
exec ./fuzz_binlog -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=2048 -print_final_stats=1 \
  -timeout=10 corpus
