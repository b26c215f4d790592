#!/usr/bin/env bash
# Builds Kiln and runs the demo: a small transformer-style block
# (examples/block.mlir) through the reference interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
BUILD=${KILN_BUILD_DIR:-build}
echo "== kiln-run examples/block.mlir --entry=block --random-inputs --seed=0 --print"
"$BUILD/bin/kiln-run" examples/block.mlir --entry=block --random-inputs --seed=0 --print
