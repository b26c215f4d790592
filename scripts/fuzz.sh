#!/usr/bin/env bash
# Runs Kiln's libFuzzer harnesses (fuzz/; docs/debugging.md, "Fuzzing").
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]
#
# Builds the fuzz build (KILN_FUZZ=ON, in ${KILN_FUZZ_BUILD_DIR:-build-fuzz})
# if needed, then runs each harness (default: all five) for SECONDS (default
# 60) on a working copy of its seed corpus fuzz/corpus/<harness> (the checked-in
# corpus is not changed). Everything goes under an output directory it prints
# (${KILN_FUZZ_OUT:-fuzz-out/<date>}): <harness>.log, corpus/<harness>/ (the
# grown corpus) and crashes/<harness>/ (reproducers: crash-*, timeout-*,
# oom-*, leak-*). Exits 1 if any harness found something. libFuzzer's
# slow-unit-* files (an input slower than -report_slow_units, default 10 s)
# are listed apart with the slowest time: not findings (on the shared
# machine mostly load; replay one to see whether it is super-linear).
#
# Environment: KILN_FUZZ_TIMEOUT (seconds one input may take, default 120: the JIT is
# slow), KILN_FUZZ_ARGS (more libFuzzer flags).
set -uo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=60
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
  SECONDS_EACH=$1
  shift
fi
ALL=(kiln-fuzz-npy kiln-fuzz-parse kiln-fuzz-pipeline kiln-fuzz-diff kiln-fuzz-capi)
HARNESSES=("$@")
[[ ${#HARNESSES[@]} -eq 0 ]] && HARNESSES=("${ALL[@]}")
for h in "${HARNESSES[@]}"; do
  if [[ ! " ${ALL[*]} " =~ " $h " ]]; then
    echo "fuzz.sh: unknown harness '$h' (known: ${ALL[*]})" >&2
    exit 2
  fi
done

BUILD=${KILN_FUZZ_BUILD_DIR:-build-fuzz}
KILN_BUILD_DIR=$BUILD KILN_FUZZ=ON scripts/build.sh --target "${HARNESSES[@]}" ||
  { echo "fuzz.sh: the fuzz build failed" >&2; exit 2; }

OUT=${KILN_FUZZ_OUT:-fuzz-out/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
echo "fuzz.sh: output in $OUT"
# Impossible allocations must fail cleanly (an error), not abort in ASan.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

found=0
for h in "${HARNESSES[@]}"; do
  mkdir -p "$OUT/corpus/$h" "$OUT/crashes/$h"
  dict=()
  case $h in
    kiln-fuzz-parse|kiln-fuzz-pipeline) dict=(-dict=fuzz/kiln-fuzz-parse.dict) ;;
  esac
  maxlen=4096
  [[ $h == kiln-fuzz-diff || $h == kiln-fuzz-capi ]] && maxlen=256
  echo "== $h (${SECONDS_EACH}s)"
  # shellcheck disable=SC2086
  "$BUILD/bin/$h" "$OUT/corpus/$h" "fuzz/corpus/$h" "${dict[@]}" \
    -max_total_time="$SECONDS_EACH" -timeout="${KILN_FUZZ_TIMEOUT:-120}" \
    -rss_limit_mb=4096 -max_len=$maxlen -print_final_stats=1 \
    -artifact_prefix="$OUT/crashes/$h/" ${KILN_FUZZ_ARGS:-} \
    > "$OUT/$h.log" 2>&1
  rc=$?
  # The last status line: "#N DONE cov: C ft: F corp: ... exec/s: E ...".
  status=$(grep -E '^#[0-9]+' "$OUT/$h.log" | tail -1)
  echo "   ${status:-no status line}"
  findings=$(ls "$OUT/crashes/$h" | grep -v '^slow-unit-' | tr '\n' ' ')
  slow=$(ls "$OUT/crashes/$h" | grep -c '^slow-unit-')
  if [[ $slow -gt 0 ]]; then
    # "Slowest unit: N s:" lines, one per new slowest input.
    slowest=$(grep -oE 'Slowest unit: [0-9]+ s' "$OUT/$h.log" | tail -1)
    echo "   $slow slow unit(s), not findings (${slowest:-Slowest unit: ?}): $(ls "$OUT/crashes/$h" | grep '^slow-unit-' | tr '\n' ' ')"
  fi
  if [[ $rc -ne 0 || -n $findings ]]; then
    found=1
    echo "   FINDING (exit $rc): $findings"
    grep -m3 -E 'ERROR: |runtime error|kiln-fuzz|pass .* succeeded|pipeline .* failed|SUMMARY' "$OUT/$h.log" | sed 's/^/   /'
  fi
done
echo "fuzz.sh: output in $OUT"
exit $found
