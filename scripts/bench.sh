#!/usr/bin/env bash
# Builds and runs Kiln's benchmarks (they are not lit tests). Each prints its
# figures with ratios against baselines measured in the same process.
#   KILN_BUILD_DIR=build-rt scripts/bench.sh [BATCHES]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${KILN_BUILD_DIR:-build}
scripts/build.sh --target kiln-bench-guard-dispatch kiln-run >/dev/null
"$BUILD_DIR/bin/kiln-bench-guard-dispatch" "$@"
# CPU codegen: Kiln vs interpreter vs PyTorch eager, copy loop and OpenBLAS.
KILN_BUILD_DIR="$BUILD_DIR" /usr/bin/python3 bench/cpu_bench.py
# Saved-activation bytes of kiln-partition vs functorch's partitioners.
scripts/build.sh --target kiln-opt >/dev/null
/usr/bin/python3 bench/partition_bytes.py --build-dir "$BUILD_DIR"
