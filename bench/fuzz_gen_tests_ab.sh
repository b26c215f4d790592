#!/bin/bash
# CI cost of test/Tools/kiln-fuzz-gen (generator.test, zero-dims.test) before
# and after a change, interleaved in one script on the shared machine:
#   bench/fuzz_gen_tests_ab.sh OLD_COMMIT OLD_KILN_FUZZ_GEN [ROUNDS]
# Runs every RUN line of the old commit's test files with the old binary and
# of the working tree's with build/bin/kiln-fuzz-gen (FileCheck replaced by
# a sink), and prints wall and CPU seconds per file and side, with the load.
set -u
oldc=$1 oldbin=$2 rounds=${3:-2}
src=$(cd "$(dirname "$0")/.." && pwd)
newbin=$src/build/bin/kiln-fuzz-gen
not=$(llvm-config-22 --bindir)/not
tmp=$(mktemp -d)
lines() { # text of a test file -> its RUN commands for binary $2
  grep '^# RUN:' "$1" | sed -e 's/^# RUN: //' \
    -e "s#kiln-fuzz-gen#$2#g" -e "s#%t#$tmp/t#g" \
    -e 's#| *FileCheck.*$#> /dev/null#' -e 's#| *md5sum *> /dev/null#> /dev/null#' \
    -e "s#^not #$not #"
}
for f in generator.test zero-dims.test; do
  git -C "$src" show "$oldc:test/Tools/kiln-fuzz-gen/$f" > "$tmp/old.$f"
  cp "$src/test/Tools/kiln-fuzz-gen/$f" "$tmp/new.$f"
  lines "$tmp/old.$f" "$oldbin" > "$tmp/old.$f.sh"
  lines "$tmp/new.$f" "$newbin" > "$tmp/new.$f.sh"
done
for r in $(seq "$rounds"); do
  for f in generator.test zero-dims.test; do
    for side in old new; do
      t0=$(date +%s.%N)
      /usr/bin/time -f "%U %S" -o "$tmp/time" bash "$tmp/$side.$f.sh" > /dev/null 2>&1
      t1=$(date +%s.%N)
      printf "%-15s %-3s wall %6.1f s cpu %6.1f s  load %s\n" $f $side \
        "$(echo "$t1 - $t0" | bc)" "$(tail -1 "$tmp/time" | awk '{print $1+$2}')" \
        "$(cut -d' ' -f1-3 /proc/loadavg)"
    done
  done
done
rm -rf "$tmp"
