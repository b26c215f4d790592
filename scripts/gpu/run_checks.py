#!/usr/bin/env python3
"""The GPU check's run-time errors and library calls, on the GPU machine:
loads .gpu/checks/checks.so (scripts/gpu/checks/checks.mlir, compiled by
scripts/gpu/prepare.sh) with libkiln_rt and checks that

* an out-of-range index in kt.gather / kt.embedding and an integer
  remainder by zero fail the call with the CPU backend's message (the
  kernels' device error record), and the next call with good inputs works;
* kt.linear (cuBLAS with the bias in the init) and an f64 batched matmul
  match torch; an empty contraction gives zeros.

    python3 scripts/gpu/run_checks.py --package .gpu/checks/checks.so --library libkiln_rt.so.0

Exits 1 when a check fails.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runtime", "python"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--package", required=True)
    ap.add_argument("--library", required=True)
    a = ap.parse_args()
    import torch
    import kiln_rt
    kiln_rt.load_library(a.library)
    p = kiln_rt.Package(a.package)
    dev = torch.device("cuda")
    failed = 0

    def report(name, ok, detail=""):
        nonlocal failed
        failed += 0 if ok else 1
        print("%-34s %s %s" % (name, "ok  " if ok else "FAIL", detail), flush=True)

    def expect_error(name, entry, args, words):
        try:
            p[entry](*args)[0]
            report(name, False, "no error")
        except kiln_rt.KilnRtError as e:
            msg = str(e)
            report(name, all(w in msg for w in words), msg)

    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 5, generator=g).to(dev)
    good = torch.tensor([[0, 4, 2]] * 4, dtype=torch.int64, device=dev)
    bad = good.clone()
    bad[2, 1] = 7
    expect_error("gather index 7 of 5", "gather", [x, bad],
                 ["checks.mlir", "index 7", "size 5"])
    r = p["gather"](x, good)[0]
    report("gather after the error", torch.equal(r, torch.gather(x, 1, good)))
    w = torch.randn(10, 8, generator=g).to(dev)
    expect_error("embedding index -1", "embedding",
                 [w, torch.tensor([3, -1, 2], device=dev)],
                 ["checks.mlir", "index -1", "embedding table of 10 rows"])
    i = torch.tensor([9, 0, 3], device=dev)
    r = p["embedding"](w, i)[0]
    report("embedding", torch.equal(r, torch.nn.functional.embedding(i, w)))
    xs = torch.arange(-500, 500, dtype=torch.int32, device=dev)
    ys = torch.full((1000,), 7, dtype=torch.int32, device=dev)
    r = p["remainder"](xs, ys)[0]
    report("remainder", torch.equal(r, torch.remainder(xs, ys)))
    ys[123] = 0
    expect_error("remainder by zero", "remainder", [xs, ys],
                 ["checks.mlir", "division by zero"])
    xl = torch.randn(37, 96, generator=g).to(dev)
    wl = torch.randn(40, 96, generator=g).to(dev)
    bl = torch.randn(40, generator=g).to(dev)
    r = p["linear"](xl, wl, bl)[0]
    ref = torch.nn.functional.linear(xl.double(), wl.double(), bl.double())
    report("linear (cuBLAS)", torch.allclose(r.double(), ref, rtol=1e-4, atol=1e-4),
           "max |diff| %.2e" % (r.double() - ref).abs().max().item())
    aa = torch.randn(3, 17, 33, dtype=torch.float64, generator=g).to(dev)
    bb = torch.randn(3, 33, 9, dtype=torch.float64, generator=g).to(dev)
    r = p["bmm64"](aa, bb)[0]
    report("bmm f64 (cuBLAS)", torch.allclose(r, aa @ bb, rtol=1e-12, atol=1e-12),
           "max |diff| %.2e" % (r - aa @ bb).abs().max().item())
    r = p["matmul_empty_k"](torch.empty(5, 0, device=dev),
                            torch.empty(0, 7, device=dev))[0]
    report("matmul k = 0", torch.equal(r, torch.zeros(5, 7, device=dev)))
    print("gpu checks: %d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
