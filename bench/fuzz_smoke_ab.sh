#!/bin/bash
# A/B of the fuzz smoke pass's generator-driven harnesses (test/Fuzz/smoke.test's
# diff and pipeline RUN lines), interleaved in one script on the shared machine:
#   bench/fuzz_smoke_ab.sh OLD_BIN_DIR NEW_BIN_DIR [ROUNDS]
# Prints wall and CPU seconds per harness and binary, with the load.
set -u
old=$1 new=$2 rounds=${3:-2}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
run() { # bin harness
  local b=$1 h=$2 extra="" runs
  case $h in
    kiln-fuzz-pipeline) runs=1000; extra="-dict=$src/fuzz/kiln-fuzz-parse.dict -max_len=4096";;
    kiln-fuzz-diff) runs=80; extra="-max_len=256";;
  esac
  rm -rf "$tmp/c"; mkdir -p "$tmp/c"
  local t0=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$tmp/t" env ASAN_OPTIONS=allocator_may_return_null=1 OMP_NUM_THREADS=1 \
    "$b/$h" "$tmp/c" "$src/fuzz/corpus/$h" -seed=1 -runs=$runs $extra -timeout=120 \
    -artifact_prefix="$tmp/c/" > "$tmp/log" 2>&1
  local rc=$? t1=$(date +%s.%N)
  [ $rc -ne 0 ] && cp "$tmp/log" "${KEEP_LOG:-/tmp}/fuzz_smoke_ab.$h.$3.log"
  local cpu=$(tail -1 "$tmp/t" | awk '{print $1+$2}')
  printf "%-20s %-4s rc=%d wall %6.1f s cpu %6.1f s  %s  load %s\n" "$h" "$3" $rc \
    "$(echo "$t1 - $t0" | bc)" "$cpu" "$(grep -c 'ERROR:' "$tmp/log") errors" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
}
for r in $(seq "$rounds"); do
  for h in kiln-fuzz-diff kiln-fuzz-pipeline; do
    run "$old" $h old
    run "$new" $h new
  done
done
rm -rf "$tmp"
