#!/usr/bin/env bash
# Builds one decoder's libFuzzer target with clang and runs it for a bounded time.
#
#   run.sh OUTDIR [SECONDS] [TARGET]
#       TARGET binlog (the default) or pgoutput: build OUTDIR/fuzz_TARGET and fuzz for SECONDS
#       (default 60), keeping crashes in OUTDIR and the corpus in OUTDIR/corpus (binlog) or
#       OUTDIR/corpus-pgoutput. pgoutput also starts from the captured messages in
#       seeds_pgoutput.txt, written to OUTDIR/seeds-pgoutput on every run.
#
# Exits 77 (ctest's SKIP_RETURN_CODE) when clang++ or libFuzzer is not installed
# (Debian 12: clang-14 and libclang-rt-14-dev, see packaging/install-deps.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: run.sh OUTDIR [SECONDS] [binlog|pgoutput]}
mkdir -p "$out"
out=$(cd "$out" && pwd) # the fuzzer runs from inside it
seconds=${2:-60}
target=${3:-binlog}
case $target in
  binlog)
    corpus=("$out/corpus")
    sources=(
      "$root/tests/fuzz/fuzz_binlog.cpp"
      "$root/core/readers/binlog/binlogdecoder.cpp"
      "$root/core/readers/binlog/binlogtablemap.cpp"
      "$root/core/readers/binlog/binlogvalues.cpp"
      "$root/core/model/error.cpp"
    )
    ;;
  pgoutput)
    # libFuzzer adds what it finds to the first directory and only reads the others.
    corpus=("$out/corpus-pgoutput" "$out/seeds-pgoutput")
    sources=(
      "$root/tests/fuzz/fuzz_pgoutput.cpp"
      "$root/core/readers/pgoutput.cpp"
      "$root/core/model/error.cpp"
    )
    ;;
  *)
    echo "run.sh: unknown target '$target' (binlog or pgoutput)" >&2
    exit 2
    ;;
esac
name=fuzz_$target
mkdir -p "${corpus[@]}"
if [[ $target == pgoutput ]]; then
  while read -r seed hex; do
    [[ -z $seed || $seed == \#* ]] && continue
    printf '%b' "$(sed 's/../\\x&/g' <<<"$hex")" > "$out/seeds-pgoutput/$seed"
  done < "$here/seeds_pgoutput.txt"
fi

cxx=""
for c in clang++ clang++-14 clang++-15 clang++-16; do
  if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
done
if [[ -z $cxx ]]; then
  echo "$name: SKIPPED, no clang++ (install clang-14 and libclang-rt-14-dev)"
  exit 77
fi
probe="$out/probe-$target.cpp"
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }' > "$probe"
if ! "$cxx" -fsanitize=fuzzer "$probe" -o "$out/probe-$target" >/dev/null 2>&1; then
  echo "$name: SKIPPED, $cxx cannot link libFuzzer (install libclang-rt-14-dev)"
  exit 77
fi

"$cxx" -std=c++20 -O1 -g -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root" "${sources[@]}" -o "$out/$name"

cd "$out"
# -rss_limit_mb and -max_len keep one input's cost bounded; a crash leaves crash-* here and
# makes this script (and the ctest) fail.
exec "./$name" -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=2048 -print_final_stats=1 \
  -timeout=10 "${corpus[@]}"
