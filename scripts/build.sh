#!/usr/bin/env bash
# Configures (once) and builds Kiln into ${KILN_BUILD_DIR:-build}.
# Uses clang++-22, lld, the shared libMLIR.so and ccache (see TOOLCHAIN.md).
# KILN_SANITIZE=address,undefined (or thread) configures a sanitizer build
# (docs/debugging.md); give it its own KILN_BUILD_DIR. KILN_FUZZ=ON
# configures the libFuzzer build (fuzz/; build it with the target kiln-fuzz,
# or use scripts/fuzz.sh). KILN_UNITY=ON configures a unity build (8 sources
# per translation unit: a cold build in ~60% of the time, but an edit
# recompiles its whole batch); scripts/test.sh, the CI's command, turns it
# on for the build directories it configures. Both settings apply when the
# directory is first configured.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${KILN_BUILD_DIR:-build}
LLVM_CONFIG=${LLVM_CONFIG:-llvm-config-22}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=${KILN_BUILD_TYPE:-Release} \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    -DMLIR_DIR="$($LLVM_CONFIG --libdir)/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$($LLVM_CONFIG --bindir)/lit" \
    ${KILN_SANITIZE:+-DKILN_SANITIZE=$KILN_SANITIZE} \
    ${KILN_FUZZ:+-DKILN_FUZZ=$KILN_FUZZ} \
    -DCMAKE_UNITY_BUILD=${KILN_UNITY:-OFF} -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
    ${KILN_CMAKE_ARGS:-}
fi
cmake --build "$BUILD_DIR" "$@"
