#!/usr/bin/env bash
# Builds a whole-project sanitizer build and runs lit under it
# (docs/debugging.md, "Sanitizer builds"). Not part of CI (scripts/test.sh):
# on 2 cores the ASan+UBSan build and its whole lit suite take hours.
#
#   scripts/sanitize.sh [address|thread] [LIT_PATH...]
#
# address (default): KILN_SANITIZE=address,undefined in
#   ${KILN_ASAN_BUILD_DIR:-build-asan}; LIT_PATHs default to the whole suite.
# thread: KILN_SANITIZE=thread in ${KILN_TSAN_BUILD_DIR:-build-tsan};
#   LIT_PATHs default to the runtime and C API tests (test/CAPI, test/Runtime).
# LIT_PATHs are relative to test/ (e.g. Dialect Tools/kiln-run).
#
# The build is a unity build, nice'd, with ${KILN_SAN_JOBS:-1} compile jobs;
# lit runs nice'd with ${KILN_SAN_LIT_JOBS:-1} workers. Sanitizer options
# (ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS, TSAN_OPTIONS) default to what
# the tests need; lit.cfg.py adds the checked-in suppression files
# (test/lsan.supp, test/CAPI/tsan.supp). Each test may run
# ${KILN_SAN_LIT_TIMEOUT:-1200} seconds. The lit log goes to
# <build>/sanitize-lit.log. Exits with lit's status.
set -uo pipefail
cd "$(dirname "$0")/.."
SAN=address
if [[ $# -gt 0 && ( $1 == address || $1 == thread ) ]]; then
  SAN=$1
  shift
fi
if [[ $SAN == address ]]; then
  BUILD=${KILN_ASAN_BUILD_DIR:-build-asan}
  FLAGS=address,undefined
  PATHS=("$@")
  [[ ${#PATHS[@]} -eq 0 ]] && PATHS=(.)
else
  BUILD=${KILN_TSAN_BUILD_DIR:-build-tsan}
  FLAGS=thread
  PATHS=("$@")
  [[ ${#PATHS[@]} -eq 0 ]] && PATHS=(CAPI Runtime)
fi

start=$(date +%s)
KILN_BUILD_DIR=$BUILD KILN_SANITIZE=$FLAGS KILN_UNITY=${KILN_UNITY:-ON} \
  nice -n 10 scripts/build.sh -j"${KILN_SAN_JOBS:-1}" ||
  { echo "sanitize.sh: the $SAN build failed" >&2; exit 2; }
echo "sanitize.sh: build $(( $(date +%s) - start )) s"

# Impossible allocations (e.g. 256 TiB) must fail with Kiln's error, not
# abort in ASan; leaks are findings; every finding aborts the process (the
# build has -fno-sanitize-recover=all): with the default exit code 1 a
# finding in a test that expects an error (`not kiln-opt ...`, the pipeline
# sweeps) would pass as that error.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:abort_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-allocator_may_return_null=1:halt_on_error=1:abort_on_error=1:second_deadlock_stack=1}
export KILN_CACHE_DIR=off

LIT=$(llvm-config-22 --bindir)/lit
args=()
for p in "${PATHS[@]}"; do args+=("$BUILD/test/$p"); done
LOG=$BUILD/sanitize-lit.log
start=$(date +%s)
# A per-test time-out (KILN_SAN_LIT_TIMEOUT seconds, default 1200; lit
# needs psutil, which Debian's python3 has): a TSan report in a process
# whose LLVM signal handler then runs (the tools install it) can deadlock
# inside TSan's allocator instead of dying (seen with kiln-run), which must
# fail the test, not stop the run.
nice -n 10 "$LIT" -v -j"${KILN_SAN_LIT_JOBS:-1}" \
  --timeout="${KILN_SAN_LIT_TIMEOUT:-1200}" "${args[@]}" > "$LOG" 2>&1
status=$?
tail -n 25 "$LOG"
echo "sanitize.sh: lit $(( $(date +%s) - start )) s, log in $LOG"
exit $status
