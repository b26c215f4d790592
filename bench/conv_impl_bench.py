#!/usr/bin/python3
"""Convolution implementations of the CPU backend, one conv at a time.

For each conv shape: kiln-run --backend=cpu --conv=direct|im2col|onednn
(in-process 'kernel time' median of --repeat calls), in interleaved rounds,
best round of each reported. The measurements behind chooseConvImpl's rule
for conv=auto (docs/codegen.md, "Convolution").

    /usr/bin/python3 bench/conv_impl_bench.py [--threads 2] [--rounds 3]
        [--repeat 11] [--modes direct,im2col,onednn,onednn-blocked] [--only TEXT]
"""
import argparse
import os
import re
import subprocess
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
KILN_RUN = os.path.join(BUILD, "bin", "kiln-run")

# (label, N, C, H, W, F, KH, KW, stride, padding, groups)
SHAPES = [
    ("3x3 64->64 56x56 b8", 8, 64, 56, 56, 64, 3, 3, 1, 1, 1),
    ("3x3 64->128 s2 56x56 b8", 8, 64, 56, 56, 128, 3, 3, 2, 1, 1),
    ("7x7 s2 3->64 224x224 b1", 1, 3, 224, 224, 64, 7, 7, 2, 3, 1),
    ("7x7 s2 3->64 224x224 b8", 8, 3, 224, 224, 64, 7, 7, 2, 3, 1),
    ("3x3 256->256 14x14 b8", 8, 256, 14, 14, 256, 3, 3, 1, 1, 1),
    ("3x3 512->512 7x7 b1", 1, 512, 7, 7, 512, 3, 3, 1, 1, 1),
    ("1x1 256->64 56x56 b8", 8, 256, 56, 56, 64, 1, 1, 1, 0, 1),
    ("1x1 64->256 56x56 b8", 8, 64, 56, 56, 256, 1, 1, 1, 0, 1),
    ("1x1 32->192 56x56 b8", 8, 32, 56, 56, 192, 1, 1, 1, 0, 1),
    ("dw 3x3 192 56x56 b8", 8, 192, 56, 56, 192, 3, 3, 1, 1, 192),
    ("dw 3x3 64 56x56 b8", 8, 64, 56, 56, 64, 3, 3, 1, 1, 64),
    ("dw 3x3 s2 96 112x112 b1", 1, 96, 112, 112, 96, 3, 3, 2, 1, 96),
    ("3x3 64->64 groups 8 56x56 b8", 8, 64, 56, 56, 64, 3, 3, 1, 1, 8),
    ("3x3 32->32 32x32 b8", 8, 32, 32, 32, 32, 3, 3, 1, 1, 1),
    ("3x3 3->16 32x32 b8", 8, 3, 32, 32, 16, 3, 3, 1, 1, 1),
    ("3x3 16->16 32x32 b8", 8, 16, 32, 32, 16, 3, 3, 1, 1, 1),
    ("3x3 8->8 8x8 b1", 1, 8, 8, 8, 8, 3, 3, 1, 1, 1),
    ("1x1 8->8 56x56 b8", 8, 8, 56, 56, 8, 1, 1, 1, 0, 1),
    ("1x1 3->64 32x32 b2", 2, 3, 32, 32, 64, 1, 1, 1, 0, 1),
]


def module(n, c, h, w, f, kh, kw, s, p, g):
    oh = (h + 2 * p - kh) // s + 1
    ow = (w + 2 * p - kw) // s + 1
    X = "tensor<%dx%dx%dx%dxf32>" % (n, c, h, w)
    W = "tensor<%dx%dx%dx%dxf32>" % (f, c // g, kh, kw)
    B = "tensor<%dxf32>" % f
    Y = "tensor<%dx%dx%dx%dxf32>" % (n, f, oh, ow)
    attrs = "stride = [%d, %d], padding = [%d, %d], groups = %d" % (s, s, p, p, g)
    return ("func.func @main(%%x: %s, %%w: %s, %%b: %s) -> %s {\n"
            "  %%y = kt.conv2d %%x, %%w, %%b {%s} : (%s, %s, %s) -> %s\n"
            "  return %%y : %s\n}\n" % (X, W, B, Y, attrs, X, W, B, Y, Y))


def kernel_ms(tmp, mlir, inputs, mode, threads, repeat):
    # "onednn-blocked": oneDNN with KILN_ONEDNN_LAYOUT=blocked (activations
    # reordered to oneDNN's blocked layout and back per call).
    env = dict(os.environ)
    if mode.endswith("-blocked"):
        mode = mode[:-len("-blocked")]
        env["KILN_ONEDNN_LAYOUT"] = "blocked"
    elif mode == "onednn":
        env["KILN_ONEDNN_LAYOUT"] = "plain"
    path = os.path.join(tmp, "conv.mlir")
    with open(path, "w") as f:
        f.write(mlir)
    args = [KILN_RUN, path, "--backend=cpu", "--conv=" + mode, "--stats",
            "--cpu-threads=%d" % threads, "--repeat=%d" % repeat,
            "--output-dir=" + os.path.join(tmp, "out")] + ["--input=" + p for p in inputs]
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if r.returncode:
        return None
    m = re.search(r"kernel time: median ([0-9.]+)", r.stdout) or \
        re.search(r"call time: median ([0-9.]+)", r.stdout)
    return float(m.group(1)) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--modes", default="direct,im2col,onednn")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    modes = args.modes.split(",")
    rng = np.random.default_rng(0)
    print("load: %s" % open("/proc/loadavg").read().strip())
    print("| conv | " + " | ".join("%s ms" % m for m in modes) + " | best |")
    print("|" + " --- |" * (len(modes) + 2))
    with tempfile.TemporaryDirectory(prefix="kiln-conv-") as tmp:
        for label, n, c, h, w, f, kh, kw, s, p, g in SHAPES:
            if args.only and args.only not in label:
                continue
            ins = []
            for i, shape in enumerate([(n, c, h, w), (f, c // g, kh, kw), (f,)]):
                path = os.path.join(tmp, "in%d.npy" % i)
                np.save(path, rng.standard_normal(shape).astype(np.float32))
                ins.append(path)
            mlir = module(n, c, h, w, f, kh, kw, s, p, g)
            best = {m: None for m in modes}
            for _ in range(args.rounds):
                for m in modes:
                    t = kernel_ms(tmp, mlir, ins, m, args.threads, args.repeat)
                    if t is not None and (best[m] is None or t < best[m]):
                        best[m] = t
            done = {m: t for m, t in best.items() if t is not None}
            win = min(done, key=done.get) if done else "-"
            print("| %s | %s | %s |" % (label, " | ".join(
                "%.3f" % best[m] if best[m] is not None else "fail" for m in modes), win),
                flush=True)
    print("load after: %s" % open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
