#!/usr/bin/env bash
# The whole test command: installs dependencies (idempotent), builds, runs
# every test. Output ends with lit's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
start=$(date +%s)
scripts/build.sh
echo "build: $(( $(date +%s) - start )) s"
# Generated dialect docs must match the committed ones.
scripts/update-docs.sh --check
LIT=$($(command -v llvm-config-22) --bindir)/lit
"$LIT" -sv "${KILN_BUILD_DIR:-build}/test"
