#!/usr/bin/env python3
"""The GPU check's run-time errors and library calls, on the GPU machine:
loads .gpu/checks/checks.so (scripts/gpu/checks/checks.mlir, compiled by
scripts/gpu/prepare.sh) with libkiln_rt and checks that

* an out-of-range index in kt.gather / kt.embedding and an integer
  remainder by zero fail the call with the CPU backend's message (the
  kernels' device error record), and the next call with good inputs works;
* kt.linear (cuBLAS with the bias in the init) and an f64 batched matmul
  match torch; an empty contraction gives zeros;
* nll_loss / cross_entropy (weights, ignore_index, label smoothing, 0-d)
  match torch and a target out of range fails the call with the CPU's
  message (the device error record); kt.check fails with its message;
* kt.rand / kt.randn / kt.dropout equal scripts/gpu/philox_ref.py (the
  interpreter's Philox stream: bit for bit, randn f64 within 4e-15);
* kt.special (libdevice and the device build of the runtime's functions)
  and kt.zeta match torch.special (f64); a one-position kt.scatter matches
  torch and fails on an index out of range;
* a classifier's training step (.gpu/checks/train.so: kiln-autodiff +
  kiln-partition, forward and backward) matches torch.autograd.

Without a CUDA device it prints why and exits 0 (nothing checked).

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
    if not torch.cuda.is_available():
        print("gpu checks: SKIPPED, no CUDA device (torch.cuda.is_available() "
              "is False): nothing checked")
        return 0
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
    failed += gpu28_checks(p, a.package, report, expect_error, dev)
    print("gpu checks: %d failed" % failed)
    return 1 if failed else 0


def gpu28_checks(p, package, report, expect_error, dev):
    """The losses, kt.check, random ops, special functions and a training
    step (gpu28). Returns 0: failures go through `report`."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    import kiln_rt
    sys.path.insert(0, HERE)
    import philox_ref as P

    g = torch.Generator().manual_seed(28)
    x = torch.randn(37, 5, generator=g, dtype=torch.float64)
    t = torch.randint(0, 5, (37,), generator=g)
    t[3] = 2  # ignored
    w = torch.rand(5, generator=g, dtype=torch.float64) + 0.5
    r = p["nll_w"](x.float().to(dev), t.to(dev), w.float().to(dev))[0]
    ref = F.nll_loss(x, t, w, ignore_index=2)
    report("nll_loss mean, weight, ignore", abs(r.item() - ref.item()) < 1e-5,
           "%r vs %r" % (r.item(), ref.item()))
    bad = t.clone()
    bad[7] = 9
    expect_error("nll_loss target 9 of 5", "nll_w",
                 [x.float().to(dev), bad.to(dev), w.float().to(dev)],
                 ["checks.mlir", "target 9 is out of range [0, 5)"])
    r = p["nll_w"](x.float().to(dev), t.to(dev), w.float().to(dev))[0]
    report("nll_loss after the error", abs(r.item() - ref.item()) < 1e-5)
    lm, ln = p["ce_ls"](x.float().to(dev), t.to(dev))
    rm = F.cross_entropy(x, t, label_smoothing=0.1)
    rn = F.cross_entropy(x, t, reduction="none")
    report("cross_entropy smoothing, none",
           abs(lm.item() - rm.item()) < 1e-5 and
           torch.allclose(ln.double().cpu(), rn, rtol=1e-5, atol=1e-5))
    expect_error("cross_entropy target -1", "ce_ls",
                 [x.float().to(dev), torch.full((37,), -1).to(dev)],
                 ["checks.mlir", "target -1 is out of range [0, 5)"])
    r = p["nll0"](x[0].to(dev), torch.tensor(4).to(dev))[0]
    report("nll_loss 0-d", r.item() == -x[0, 4].item())
    expect_error("nll_loss 0-d target 5", "nll0",
                 [x[0].to(dev), torch.tensor(5).to(dev)],
                 ["checks.mlir", "target 5 is out of range [0, 5)"])
    o = torch.arange(6).to(dev)
    r = p["check"](o, torch.ones(6, dtype=torch.bool).to(dev))[0]
    report("kt.check passes", torch.equal(r, o))
    ok = torch.ones(6, dtype=torch.bool)
    ok[4] = False
    expect_error("kt.check fails", "check", [o, ok.to(dev)],
                 ["checks.mlir", "offsets have to be sorted"])

    xs3 = torch.randn(3, 4, generator=g).to(dev)
    src = torch.tensor([[2.5]], device=dev)
    r = p["scatter1"](xs3, torch.tensor([[2]], device=dev), src)[0]
    report("scatter one position", torch.equal(
        r, xs3.scatter_add(0, torch.tensor([[2]], device=dev), src)))
    expect_error("scatter index 3 of 3", "scatter1",
                 [xs3, torch.tensor([[3]], device=dev), src],
                 ["checks.mlir", "index 3 is out of bounds for dim 0 with size 3"])

    xr = torch.randn(37, 29, generator=g).to(dev)
    yr = torch.randn(513, generator=g, dtype=torch.float64).to(dev)
    for seed in (0, 42, -1234567890123, 2**63 - 1):
        outs = [v.cpu().numpy() for v in p["random"](
            torch.tensor(seed).to(dev), xr, yr)]
        ref = [P.uniform(seed, 1000, False).astype(np.float32),
               P.uniform(seed, 1000, True),
               P.normal(seed, 1000, False).astype(np.float32),
               P.normal(seed, 1000, True),
               P.uniform(seed, 1, False).astype(np.float32).reshape(()),
               P.dropout(xr.cpu().numpy(), seed, 0.3).astype(np.float32),
               P.dropout(yr.cpu().numpy(), seed, 0.75),
               P.uniform(seed, 15, False).astype(np.float32).astype(
                   np.float16).reshape(3, 5)]
        names = ["rand f32", "rand f64", "randn f32", "randn f64", "rand 0-d",
                 "dropout f32", "dropout f64", "rand f16"]
        for name, a, b in zip(names, outs, ref):
            if name == "randn f64":
                ok, d = np.abs(a - b).max() <= 4e-15, np.abs(a - b).max()
            elif name == "randn f32":
                # libdevice's log/cos vs libm's: a last-bit difference of the
                # f64 value can change the f32 rounding (rarely).
                ne = int((a != b).sum())
                ok = np.abs(a.astype(np.float64) - b).max() <= \
                    np.abs(b).max() * 2.0 ** -23
                d = "%d of 1000 differ in the last bit" % ne
            else:
                ok = a.shape == b.shape and np.array_equal(
                    np.atleast_1d(a).view(np.uint8),
                    np.atleast_1d(b).view(np.uint8))
                d = "bit-identical" if ok else "%d differ" % int((a != b).sum())
            report("%s seed %d" % (name, seed), ok, str(d))

    xs = torch.linspace(-4.5, 30, 301, dtype=torch.float64)
    xs = xs[(xs - xs.round()).abs() > 1e-9]  # no poles of lgamma
    ps = torch.linspace(-0.999, 0.999, 97, dtype=torch.float64)
    r = p["special"](xs.to(dev), ps.to(dev))
    S = torch.special
    # (ndtri of -0.999..0.999: NaN below 0, as torch's)
    refs = [torch.lgamma(xs), S.erfc(xs), S.erfinv(ps), S.erfcx(xs),
            S.ndtr(xs), S.ndtri(ps), S.i0(xs), S.i1(xs), S.bessel_j0(xs),
            S.bessel_j1(xs), S.bessel_y0(xs), S.bessel_y1(xs)]
    names = ["lgamma", "erfc", "erfinv", "erfcx", "ndtr", "ndtri", "i0", "i1",
             "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"]
    for name, a, b in zip(names, r, refs):
        a = a.cpu()
        fin = torch.isfinite(b)
        ok = torch.equal(torch.isfinite(a), fin) and torch.allclose(
            a[fin], b[fin], rtol=1e-10, atol=1e-12)
        report("special %s (libdevice)" % name, ok,
               "max |diff| %.2e" % (a[fin] - b[fin]).abs().max().item())

    # The device build of the runtime's functions (kiln_special_device.bc).
    xp = torch.linspace(0.05, 30, 300, dtype=torch.float64)
    qs = torch.full_like(xp, 2.5)
    r = p["special2"](xp.to(dev), qs.to(dev))
    refs = [S.digamma(xp), S.polygamma(2, xp), S.log_ndtr(xp),
            S.i0e(xp), S.i1e(xp), S.modified_bessel_k0(xp),
            S.modified_bessel_k1(xp), S.scaled_modified_bessel_k0(xp),
            S.scaled_modified_bessel_k1(xp), S.spherical_bessel_j0(xp),
            S.airy_ai(xp), S.zeta(qs, xp)]
    names = ["digamma", "polygamma 2", "log_ndtr", "i0e", "i1e", "k0", "k1",
             "k0e", "k1e", "spherical_j0", "airy_ai", "zeta"]
    for name, a, b in zip(names, r, refs):
        a = a.cpu()
        fin = torch.isfinite(b)
        report("special %s (device build)" % name,
               torch.equal(torch.isfinite(a), fin) and
               torch.allclose(a[fin], b[fin], rtol=1e-10, atol=1e-12),
               "max |diff| %.2e" % (a[fin] - b[fin]).abs().max().item())

    train = os.path.join(os.path.dirname(package), "train.so")
    if not os.path.exists(train):
        report("training step", False, "no %s" % train)
        return 0
    q = kiln_rt.Package(train)
    xt = torch.randn(24, 16, generator=g)
    w1 = torch.randn(32, 16, generator=g) * 0.3
    b1 = torch.randn(32, generator=g) * 0.1
    w2 = torch.randn(10, 32, generator=g) * 0.3
    b2 = torch.randn(10, generator=g) * 0.1
    tt = torch.randint(0, 10, (24,), generator=g)
    params = [v.double().requires_grad_() for v in (xt, w1, b1, w2, b2)]
    h = F.relu(F.linear(params[0], params[1], params[2]))
    loss = F.cross_entropy(F.linear(h, params[3], params[4]), tt,
                           label_smoothing=0.1)
    loss.backward()
    fwd = q["clf_fwd"](*[v.to(dev) for v in (xt, w1, b1, w2, b2, tt)])
    report("training forward loss", abs(fwd[0].item() - loss.item()) < 1e-5,
           "%r vs %r" % (fwd[0].item(), loss.item()))
    grads = q["clf_bwd"](*fwd[1:], torch.tensor(1.0).to(dev))
    for name, gk, pt in zip(["x", "w1", "b1", "w2", "b2"], grads, params):
        report("training grad %s" % name,
               torch.allclose(gk.double().cpu(), pt.grad, rtol=1e-4, atol=1e-5),
               "max |diff| %.2e" % (gk.double().cpu() - pt.grad).abs().max().item())
    return 0


if __name__ == "__main__":
    sys.exit(main())
