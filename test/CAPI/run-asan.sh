#!/usr/bin/env bash
# Builds the C API tests, the C API and the runtime and CPU backend sources
# they drive (lib/CAPI, lib/Runtime, lib/Backend/CPU, and the compiled-code
# runtime's CallContext.cpp: per-call state OpenMP workers touch, and the
# OMPT callbacks that tell TSan about libomp's fork, which an uninstrumented
# copy would not) with a sanitizer, and
# runs the test programs. The rest (interpreter, dialects, MLIR) is linked
# uninstrumented from an existing build. A quick check next to the
# whole-project sanitizer builds (KILN_SANITIZE, docs/debugging.md).
#   SAN=address (default): AddressSanitizer + LeakSanitizer + UBSan; ASan's
#     allocator still covers the uninstrumented code.
#   SAN=thread: ThreadSanitizer; runs the 8-thread stress test (threads.c)
#     with OMP_NUM_THREADS=2, TSAN_OPTIONS=halt_on_error=1 and the
#     suppressions in test/CAPI/tsan.supp (libomp is not instrumented).
# Needs clang's sanitizer runtime (libclang-rt-22-dev, in install-deps.sh).
#
#   [SAN=thread] test/CAPI/run-asan.sh [BUILD_DIR (default build)] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
BUILD=$(cd "${1:-build}" && pwd)
SAN=${SAN:-address}
OUT=${2:-$BUILD/capi-$SAN}
mkdir -p "$OUT"
cd "$BUILD"
ninja bin/kiln-capi-toy >/dev/null
case "$SAN" in
  address) FLAGS="-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all" ;;
  thread) FLAGS="-fsanitize=thread" ;;
  *) echo "SAN must be address or thread, not '$SAN'" >&2; exit 2 ;;
esac
SANFLAGS="-O1 -g $FLAGS -fno-omit-frame-pointer"
# Compile and link commands of the normal build, with -O3 -> sanitizer flags.
strip_cmd() {
  sed -e 's#^ccache ##' -e 's#^: && ##' -e 's# && :$##' -e 's# -o [^ ]*# #' \
      -e 's#-MD -MT [^ ]* -MF [^ ]*##' -e "s# -O3 # $SANFLAGS #"
}
CXX=$(ninja -t commands lib/Runtime/CMakeFiles/obj.KilnRuntime.dir/Session.cpp.o |
      tail -1 | strip_cmd | sed -e 's# -c [^ ]*Session.cpp##')
CC=$(ninja -t commands bin/kiln-capi-toy | grep 'toy_example.c.o -c' | head -1 |
     strip_cmd | sed -e 's# -c [^ ]*toy_example.c##')
LINK=$(ninja -t commands bin/kiln-capi-toy | tail -1 | strip_cmd |
       sed -e 's#test/CAPI/CMakeFiles/kiln-capi-toy.dir/toy_example.c.o#@OBJS@#')
OBJS=()
# In a unity build (KILN_UNITY) these sources are left out of the combined
# units (their CMakeLists say so): otherwise the archive's unity object
# holding one would be linked too and define its symbols twice.
# The backend's compile definitions (library paths) are its own.
CXXCPU=$(ninja -t commands lib/Backend/CPU/CMakeFiles/obj.KilnCPUBackend.dir/RuntimeErrors.cpp.o |
         tail -1 | strip_cmd | sed -e 's# -c [^ ]*RuntimeErrors.cpp##')
for f in lib/CAPI/Kiln.cpp lib/Runtime/Session.cpp lib/Runtime/Guards.cpp \
         lib/Runtime/Specialize.cpp lib/Runtime/Aliasing.cpp \
         lib/Runtime/Repro.cpp lib/Logs/Logging.cpp lib/Logs/Trace.cpp \
         lib/Backend/CPU/CPUBackend.cpp lib/Backend/CPU/RuntimeErrors.cpp \
         lib/Backend/CPU/BufferPool.cpp runtime/lib/CallContext.cpp; do
  o="$OUT/$(basename "$f").o"
  case "$f" in
    # (its -D values carry shell-quoted strings)
    lib/Backend/*) eval "$CXXCPU -c '$SRC/$f' -o '$o'" ;;
    *) $CXX -c "$SRC/$f" -o "$o" ;;
  esac
  OBJS+=("$o")
done
status=0
if [ "$SAN" = thread ]; then TESTS="threads"; else TESTS="toy_example errors strides aliasing borrow host_results threads entries transform logs fatal dangling"; fi
for t in $TESTS; do
  $CC -c "$SRC/test/CAPI/$t.c" -o "$OUT/$t.c.o"
  # The instrumented objects come first, so the archives' copies stay out.
  ${LINK/@OBJS@/$OUT/$t.c.o ${OBJS[*]}} -lpthread -o "$OUT/$t"
  # allocator_may_return_null: errors.c checks that a 256 TiB request fails
  # cleanly (ASan would abort on it).
  # fatal.c abandons pipeline builds at LLVM's fatal errors: what they had
  # allocated is leaked by design (kiln/Support/FatalErrors.h; ~6 KB per
  # abandoned build, allocated in uninstrumented libMLIR/libLLVM frames that
  # LeakSanitizer's fast unwinder cannot tie to the build, and the full
  # unwinder makes the run take tens of minutes), so it runs without leak
  # detection; the other programs check leaks.
  LEAKS=1
  if [ "$t" = fatal ]; then LEAKS=0; fi
  if env ASAN_OPTIONS=detect_leaks=$LEAKS:abort_on_error=0:allocator_may_return_null=1 \
       UBSAN_OPTIONS=print_stacktrace=1 \
       TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$SRC/test/CAPI/tsan.supp \
       OMP_NUM_THREADS=2 \
       "$OUT/$t" "$SRC/examples/toy_example.mlir" $(test "$t" = logs && echo "$OUT/trace.json") >"$OUT/$t.out" 2>"$OUT/$t.err"; then
    echo "$SAN $t: ok"
  else
    echo "$SAN $t: FAILED (see $OUT/$t.err; its first 60 lines follow)"; status=1
    head -60 "$OUT/$t.err" | sed 's/^/  | /'
  fi
done
exit $status
