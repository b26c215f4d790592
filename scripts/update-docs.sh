#!/usr/bin/env bash
# Regenerates docs/dialects/{kt,kg}.md from the ODS definitions (mlir-tblgen
# -gen-dialect-doc), docs/core-aten.md (scripts/gen-core-aten-table.py) and
# docs/opinfo.md with test/python/opinfo_expected.txt (from the committed
# OpInfo results, scripts/opinfo_sweep.py --report).
# With --check, fails if a committed file is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${KILN_BUILD_DIR:-build}
cmake --build "$BUILD" --target kiln-doc >/dev/null
status=0
for d in KT KG; do
  gen="$BUILD/include/kiln/Dialect/$d/IR/${d}Dialect.md"
  doc="docs/dialects/$(echo "$d" | tr A-Z a-z).md"
  if [ "${1:-}" = "--check" ]; then
    if ! cmp -s "$gen" "$doc"; then
      echo "$doc is out of date: run scripts/update-docs.sh" >&2
      status=1
    else
      echo "$doc is up to date"
    fi
  else
    mkdir -p docs/dialects
    cp "$gen" "$doc"
    echo "wrote $doc"
  fi
done
# docs/core-aten.md: the Core ATen table (scripts/gen-core-aten-table.py).
if ! /usr/bin/python3 scripts/gen-core-aten-table.py ${1:-}; then
  status=1
fi
# docs/opinfo.md and test/python/opinfo_expected.txt: generated from the
# committed OpInfo sweep results (scripts/opinfo_sweep.py; the sweep itself
# is not rerun here).
if ! /usr/bin/python3 scripts/opinfo_sweep.py --report \
    test/python/opinfo_results.tsv ${1:+--check}; then
  status=1
fi
exit $status
