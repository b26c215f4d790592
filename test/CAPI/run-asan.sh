#!/usr/bin/env bash
# Builds the C API tests, the C API and the runtime sources they drive
# (lib/CAPI, lib/Runtime) with AddressSanitizer + LeakSanitizer, and runs the
# three test programs. The rest (interpreter, dialects, MLIR) is linked
# uninstrumented from an existing build; ASan's allocator still covers it.
# Needs clang's sanitizer runtime (libclang-rt-22-dev, in install-deps.sh).
#
#   test/CAPI/run-asan.sh [BUILD_DIR (default build)] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
BUILD=$(cd "${1:-build}" && pwd)
OUT=${2:-$BUILD/capi-asan}
mkdir -p "$OUT"
cd "$BUILD"
ninja bin/kiln-capi-toy >/dev/null
SAN="-O1 -g -fsanitize=address -fno-omit-frame-pointer"
# Compile and link commands of the normal build, with -O3 -> sanitizer flags.
strip_cmd() {
  sed -e 's#^ccache ##' -e 's#^: && ##' -e 's# && :$##' -e 's# -o [^ ]*# #' \
      -e 's#-MD -MT [^ ]* -MF [^ ]*##' -e "s# -O3 # $SAN #"
}
CXX=$(ninja -t commands lib/Runtime/CMakeFiles/obj.KilnRuntime.dir/Session.cpp.o |
      tail -1 | strip_cmd | sed -e 's# -c [^ ]*Session.cpp##')
CC=$(ninja -t commands bin/kiln-capi-toy | grep 'toy_example.c.o -c' | head -1 |
     strip_cmd | sed -e 's# -c [^ ]*toy_example.c##')
LINK=$(ninja -t commands bin/kiln-capi-toy | tail -1 | strip_cmd |
       sed -e 's#test/CAPI/CMakeFiles/kiln-capi-toy.dir/toy_example.c.o#@OBJS@#')
OBJS=()
for f in lib/CAPI/Kiln.cpp lib/Runtime/Session.cpp lib/Runtime/Guards.cpp \
         lib/Runtime/Specialize.cpp lib/Runtime/Aliasing.cpp; do
  o="$OUT/$(basename "$f").o"
  $CXX -c "$SRC/$f" -o "$o"
  OBJS+=("$o")
done
status=0
for t in toy_example errors strides aliasing; do
  $CC -c "$SRC/test/CAPI/$t.c" -o "$OUT/$t.c.o"
  # The instrumented objects come first, so the archives' copies stay out.
  ${LINK/@OBJS@/$OUT/$t.c.o ${OBJS[*]}} -o "$OUT/$t"
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
       "$OUT/$t" "$SRC/examples/toy_example.mlir" >"$OUT/$t.out" 2>"$OUT/$t.err"; then
    echo "asan $t: ok"
  else
    echo "asan $t: FAILED (see $OUT/$t.err)"; status=1
  fi
done
exit $status
