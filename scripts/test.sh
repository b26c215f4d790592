#!/usr/bin/env bash
# The whole test command: installs dependencies (idempotent), builds, runs
# every test: lit, then the Python package's pytest suite. Output ends with
# pytest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# Tests never use the user's compiled-code disk cache (docs/codegen.md, "Disk
# cache"); those of the cache itself use directories of their own.
export KILN_CACHE_DIR=off
start=$(date +%s)
# A build directory configured here is a unity build (scripts/build.sh): a
# cold build, as on CI's fresh clone, in ~190 s instead of ~325 s on 2 cores.
# KILN_UNITY=OFF keeps one translation unit per source (faster rebuilds
# after an edit).
KILN_UNITY=${KILN_UNITY:-ON} scripts/build.sh
echo "build: $(( $(date +%s) - start )) s"
# Generated dialect docs must match the committed ones.
scripts/update-docs.sh --check
LIT=$($(command -v llvm-config-22) --bindir)/lit
lit_status=0
# A fresh build has no test times: lit's smart order would run the tests by
# name and the longest could start last, with one worker idle meanwhile.
TIMES="${KILN_BUILD_DIR:-build}/test/.lit_test_times.txt"
[ -f "$TIMES" ] || grep -v '^#' test/lit-test-times.txt > "$TIMES"
"$LIT" -sv "${KILN_BUILD_DIR:-build}/test" || lit_status=$?
# Sanitizers in CI (docs/debugging.md, "Sanitizer builds"): the C API, the
# runtime and the CPU backend instrumented with ASan+LSan+UBSan (every C API
# test program) and with TSan (the 8-thread stress test), side by side (~3 min
# on 2 cores). KILN_SKIP_SANITIZERS=1 skips them.
san_status=0
if [ "${KILN_SKIP_SANITIZERS:-0}" != 1 ]; then
  B=$(realpath "${KILN_BUILD_DIR:-build}")
  ninja -C "$B" bin/kiln-capi-toy >/dev/null  # (the scripts' ninja is then a no-op)
  SAN=address test/CAPI/run-asan.sh "$B" > "$B/sanitizer-address.log" 2>&1 &
  asan=$!
  SAN=thread test/CAPI/run-asan.sh "$B" > "$B/sanitizer-thread.log" 2>&1 &
  tsan=$!
  wait $asan || san_status=1
  wait $tsan || san_status=1
  cat "$B/sanitizer-address.log" "$B/sanitizer-thread.log"
  [ $san_status = 0 ] && echo "sanitizers: all passed" || echo "sanitizers: FAILED"
fi
# The kiln Python package (python/kiln) against eager PyTorch; pytest's
# summary line ends the output. Its tests are independent processes' work
# (compiles, mostly on one core): pytest-xdist runs them on
# KILN_PYTEST_JOBS workers (default 2; 0 = one process, no xdist).
JOBS=${KILN_PYTEST_JOBS:-2}
XDIST=()
if [ "$JOBS" != 0 ] && /usr/bin/python3 -c "import xdist" 2>/dev/null; then
  XDIST=(-n "$JOBS")
fi
KILN_BUILD_DIR=$(realpath "${KILN_BUILD_DIR:-build}") PYTHONPATH=python \
  /usr/bin/python3 -m pytest test/python -q -p no:cacheprovider "${XDIST[@]}"
[ $lit_status != 0 ] && exit $lit_status
exit $san_status
