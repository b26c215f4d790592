#!/bin/bash
# Prepares .gpu/ for scripts/gpu/device_check.sh on the GPU machine (which
# has no LLVM/MLIR): the corpus (scripts/gpu/make_corpus.py) and the
# benchmark's packages (bench/gpu/*.mlir through kiln-compile
# --backend=nvptx). Run from the repository root after scripts/build.sh.
#   scripts/gpu/prepare.sh [--chip sm_90a]
set -eu
CHIP=sm_90a
[ "${1:-}" = --chip ] && CHIP=$2
mkdir -p .gpu/bench
for f in bench/gpu/*.mlir; do
  build/bin/kiln-compile "$f" --backend=nvptx --chip="$CHIP" \
    -o ".gpu/bench/$(basename "${f%.mlir}").so"
done
mkdir -p .gpu/checks
build/bin/kiln-compile scripts/gpu/checks/checks.mlir --backend=nvptx \
  --chip="$CHIP" --entry=gather,embedding,remainder,linear,bmm64,matmul_empty_k,nll_w,ce_ls,nll0,check,random,special,special2,scatter1 \
  -o .gpu/checks/checks.so
build/bin/kiln-opt scripts/gpu/checks/train.mlir -kiln-autodiff -kiln-partition \
  -o .gpu/checks/train.kt.mlir
build/bin/kiln-compile .gpu/checks/train.kt.mlir --backend=nvptx --chip="$CHIP" \
  --entry=clf_fwd,clf_bwd -o .gpu/checks/train.so
/usr/bin/python3 scripts/gpu/make_corpus.py --out .gpu --chip "$CHIP"
du -sh .gpu
