#!/usr/bin/env bash
# Regenerates docs/dialects/kt.md from the ODS definitions (mlir-tblgen
# -gen-dialect-doc). With --check, fails if the committed file is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${KILN_BUILD_DIR:-build}
cmake --build "$BUILD" --target kiln-doc >/dev/null
gen="$BUILD/include/kiln/Dialect/KT/IR/KTDialect.md"
if [ "${1:-}" = "--check" ]; then
  if ! cmp -s "$gen" docs/dialects/kt.md; then
    echo "docs/dialects/kt.md is out of date: run scripts/update-docs.sh" >&2
    exit 1
  fi
  echo "docs/dialects/kt.md is up to date"
else
  mkdir -p docs/dialects
  cp "$gen" docs/dialects/kt.md
  echo "wrote docs/dialects/kt.md"
fi
