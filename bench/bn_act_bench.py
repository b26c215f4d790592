#!/usr/bin/python3
"""Batch norm + ReLU / ReLU6 backward (issue 12 section 4, bnb24): the
backward function that `kiln-autodiff` + `kiln-partition` (mincut) emit
for `act(batch_norm_train(x))` (optionally followed by a 1x1 conv, whose
weight gradient needs the activation's result recomputed, as in
mobilenet_v2), run on the cpu backend by each build given, and PyTorch
eager's backward of the same (F.batch_norm + F.relu6 / F.relu, autograd)
as the baseline in this process.

    /usr/bin/python3 bench/bn_act_bench.py [--builds DIR[:on|off],...] [--rounds 3]
        [--repeat 10] [--threads 2] [--only SUBSTRING] [--fold on|off]

Each Kiln figure is the minimum kernel time of `kiln-run --backend=cpu
--random-inputs --repeat=N --stats --entry=f_bwd` (compile excluded, disk
cache off; each build's own kiln-opt builds its backward, with
`fold-norm-activation=true` where it has the option and the fold is on:
`--fold`, or per build `DIR:on` / `DIR:off`), eager's the
best of `--rounds` x 5 backward calls; rounds interleave eager and the
builds, and the best of each is reported, with each build's time over the
first build's and over eager's. The machine is shared: the load is
printed before and after.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, N, C, H, W, activation, 1x1 conv after it): mobilenet_v2's
# expanded layers (batch 8, 224x224 input).
SHAPES = [
    ("relu6 8x144x56x56", 8, 144, 56, 56, "relu6", False),
    ("relu6 8x96x112x112", 8, 96, 112, 112, "relu6", False),
    ("relu6 8x384x14x14", 8, 384, 14, 14, "relu6", False),
    ("relu 8x64x56x56", 8, 64, 56, 56, "relu", False),
    ("relu6 8x144x56x56 + 1x1 conv", 8, 144, 56, 56, "relu6", True),
]


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()


def module(N, C, H, W, act, conv):
    t = "tensor<%dx%dx%dx%dxf32>" % (N, C, H, W)
    v = "tensor<%dxf32>" % C
    w2 = "tensor<%dx%dx1x1xf32>" % (C, C)
    a = ("kt.clamp %y#0 {min = 0.0, max = 6.0}" if act == "relu6"
         else "kt.relu %y#0")
    args = "%%x: %s, %%w: %s, %%b: %s" % (t, v, v)
    if conv:
        args += ", %%w2: %s" % w2
    lines = [
        "func.func @f(%s) -> %s attributes {kg.differentiate} {" % (args, t),
        "  %%y:3 = kt.batch_norm_train %%x weight %%w bias %%b : (%s, %s, %s)"
        " -> (%s, %s, %s)" % (t, v, v, t, v, v),
        "  %%r = %s : (%s) -> %s" % (a, t, t)]
    if conv:
        lines.append("  %%o = kt.conv2d %%r, %%w2 : (%s, %s) -> %s" % (t, w2, t))
        lines.append("  return %%o : %s" % t)
    else:
        lines.append("  return %%r : %s" % t)
    lines.append("}")
    return "\n".join(lines) + "\n"


def backward_module(build, text, fold):
    """The mincut backward by `build`'s kiln-opt; kiln-autodiff's
    fold-norm-activation set to `fold` where the build has the option (on
    by default since rd25; main's before bnb24 does not have it: its plain
    kiln-autodiff, which does not fold, is used)."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        opt = os.path.join(build, "bin", "kiln-opt")
        out = subprocess.run(
            [opt, f.name, "-kiln-autodiff=fold-norm-activation=%s" %
             ("true" if fold else "false"),
             "-kiln-partition=policy=mincut"], capture_output=True,
            text=True)
        if out.returncode == 0:
            return out.stdout
        return subprocess.check_output(
            [opt, f.name, "-kiln-autodiff", "-kiln-partition=policy=mincut"],
            text=True)
    finally:
        os.unlink(f.name)


def kiln_ms(build, text, repeat, threads):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run(
            [os.path.join(build, "bin", "kiln-run"), f.name, "--entry=f_bwd",
             "--backend=cpu", "--random-inputs", "--repeat=%d" % repeat,
             "--stats", "--cpu-threads=%d" % threads],
            capture_output=True, text=True,
            env=dict(os.environ, KILN_CACHE_DIR="off"))
    finally:
        os.unlink(f.name)
    m = re.search(r"kernel time: median ([\d.]+) s, min ([\d.]+)",
                  out.stdout + out.stderr)
    if not m:
        sys.exit("kiln-run failed: " + out.stderr[-800:])
    return float(m.group(2)) * 1e3


def eager_ms(torch, N, C, H, W, act, conv):
    F = torch.nn.functional
    x = torch.randn(N, C, H, W, requires_grad=True)
    w = torch.randn(C, requires_grad=True)
    b = torch.randn(C, requires_grad=True)
    w2 = torch.randn(C, C, 1, 1, requires_grad=True)
    y = F.batch_norm(x, None, None, w, b, training=True)
    r = F.relu6(y) if act == "relu6" else F.relu(y)
    o = F.conv2d(r, w2) if conv else r
    g = torch.randn_like(o)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        torch.autograd.grad(o, [x, w, b] + ([w2] if conv else []), g,
                            retain_graph=True)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builds", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--fold", choices=("on", "off"), default="on",
                    help="kiln-autodiff's fold-norm-activation where a build "
                    "has it")
    args = ap.parse_args()
    # DIR or DIR:on / DIR:off (the fold for that build only), so one run
    # interleaves e.g. main unfolded, this build unfolded and folded.
    builds, folds = [], []
    for spec in args.builds.split(","):
        d, _, f = spec.partition(":")
        builds.append(d)
        folds.append((f or args.fold) == "on")
    import torch
    torch.set_num_threads(args.threads)
    print("load before: %s" % loadavg())
    rows = []
    for name, *shape in SHAPES:
        if args.only not in name:
            continue
        text = module(*shape)
        bwds = [backward_module(b, text, f) for b, f in zip(builds, folds)]
        best = [float("inf")] * (1 + len(builds))
        for _ in range(args.rounds):
            best[0] = min(best[0], eager_ms(torch, *shape))
            for i, (b, m) in enumerate(zip(builds, bwds)):
                best[1 + i] = min(best[1 + i],
                                  kiln_ms(b, m, args.repeat, args.threads))
        rows.append((name, best))
        print("%-32s eager %8.2f ms | " % (name, best[0]) + " | ".join(
            "%s%s %8.2f ms (%.2fx first, %.2fx eager)" % (
                os.path.basename(os.path.dirname(os.path.abspath(b))),
                "/fold" if folds[i] else "",
                best[1 + i], best[1] / best[1 + i], best[0] / best[1 + i])
            for i, b in enumerate(builds)), flush=True)
    print("load after: %s" % loadavg())


if __name__ == "__main__":
    main()
