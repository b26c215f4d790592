#!/usr/bin/env bash
# The whole test command: installs dependencies (idempotent), builds, runs
# every test: lit, then the Python package's pytest suite. Output ends with
# pytest's summary.
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
lit_status=0
"$LIT" -sv "${KILN_BUILD_DIR:-build}/test" || lit_status=$?
# The kiln Python package (python/kiln) against eager PyTorch; pytest's
# summary line ends the output.
KILN_BUILD_DIR=$(realpath "${KILN_BUILD_DIR:-build}") PYTHONPATH=python \
  /usr/bin/python3 -m pytest test/python -q -p no:cacheprovider
exit $lit_status
