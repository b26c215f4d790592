#!/usr/bin/python3
"""conv2d training cost per convolution (issue 13): the joint program that
kiln-autodiff emits for one kt.conv2d (forward, input gradient as
kt.conv_transpose2d, weight gradient as a kt.conv2d over x and gy with
batch and channels swapped; no bias) on the cpu backend, against PyTorch
eager's conv2d + convolution_backward (input and weight) on the same
shapes, 2 threads each.

    /usr/bin/python3 bench/conv_grad_bench.py [--builds DIR,DIR] [--rounds 2]
        [--repeat 10] [--threads 2] [--only SUBSTRING]

Each Kiln figure is the minimum kernel time of `kiln-run --backend=cpu
--random-inputs --repeat=N --stats` (compile excluded, disk cache off),
each eager one the best of `--rounds` x 5 calls; rounds are interleaved
(eager, then each build) and the best of each side is reported. `--builds`
compares several Kiln builds (e.g. main's and a branch's) in one run. The
machine is shared: the load is printed before and after.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, N, C, H, W, O, k, stride, padding): resnet18's convolutions at a
# 64x64 input (batch 8) and the first 3x3 block at 224x224.
SHAPES = [
    ("stem 7x7 s2 3->64 64x64", 8, 3, 64, 64, 64, 7, 2, 3),
    ("3x3 64->64 16x16", 8, 64, 16, 16, 64, 3, 1, 1),
    ("3x3 s2 64->128 16x16", 8, 64, 16, 16, 128, 3, 2, 1),
    ("1x1 s2 64->128 16x16", 8, 64, 16, 16, 128, 1, 2, 0),
    ("3x3 128->128 8x8", 8, 128, 8, 8, 128, 3, 1, 1),
    ("3x3 256->256 4x4", 8, 256, 4, 4, 256, 3, 1, 1),
    ("3x3 512->512 2x2", 8, 512, 2, 2, 512, 3, 1, 1),
    ("3x3 64->64 56x56", 8, 64, 56, 56, 64, 3, 1, 1),
    # resnet18's strided convolutions at 224x224 (their input gradients
    # are transposed convolutions with stride 2).
    ("3x3 s2 64->128 56x56", 8, 64, 56, 56, 128, 3, 2, 1),
    ("1x1 s2 64->128 56x56", 8, 64, 56, 56, 128, 1, 2, 0),
    ("3x3 s2 128->256 28x28", 8, 128, 28, 28, 256, 3, 2, 1),
    # mobilenet_v2's depthwise convolutions (groups = channels, the 10th
    # field; 1 when absent) at 224x224.
    ("dw 3x3 32 112x112", 8, 32, 112, 112, 32, 3, 1, 1, 32),
    ("dw 3x3 s2 96 112x112", 8, 96, 112, 112, 96, 3, 2, 1, 96),
    ("dw 3x3 144 56x56", 8, 144, 56, 56, 144, 3, 1, 1, 144),
    ("dw 3x3 s2 144 56x56", 8, 144, 56, 56, 144, 3, 2, 1, 144),
    ("dw 3x3 192 28x28", 8, 192, 28, 28, 192, 3, 1, 1, 192),
    ("dw 3x3 384 14x14", 8, 384, 14, 14, 384, 3, 1, 1, 384),
    ("dw 3x3 960 7x7", 8, 960, 7, 7, 960, 3, 1, 1, 960),
    ("grouped 3x3 64->64 g8 28x28", 8, 64, 28, 28, 64, 3, 1, 1, 8),
]


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()


def joint_module(kiln_opt, N, C, H, W, O, k, s, p, g=1):
    OH, OW = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
    t = lambda *d: "tensor<%sxf32>" % "x".join(map(str, d))
    text = ("func.func @f(%%x: %s, %%w: %s) -> %s attributes {kg.differentiate} {\n"
            "  %%0 = kt.conv2d %%x, %%w {stride = [%d, %d], padding = [%d, %d], "
            "groups = %d : i64} : (%s, %s) -> %s\n  return %%0 : %s\n}\n" % (
                t(N, C, H, W), t(O, C // g, k, k), t(N, O, OH, OW), s, s, p, p,
                g, t(N, C, H, W), t(O, C // g, k, k), t(N, O, OH, OW),
                t(N, O, OH, OW)))
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        return subprocess.check_output([kiln_opt, f.name, "-kiln-autodiff"],
                                       text=True)
    finally:
        os.unlink(f.name)


def kiln_ms(build, joint, repeat, threads):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(joint)
    try:
        out = subprocess.run(
            [os.path.join(build, "bin", "kiln-run"), f.name, "--entry=f_joint",
             "--backend=cpu", "--random-inputs", "--repeat=%d" % repeat,
             "--stats", "--cpu-threads=%d" % threads],
            capture_output=True, text=True,
            env=dict(os.environ, KILN_CACHE_DIR="off"))
    finally:
        os.unlink(f.name)
    m = re.search(r"kernel time: median ([\d.]+) s, min ([\d.]+)",
                  out.stdout + out.stderr)
    if not m:
        sys.exit("kiln-run failed: " + out.stderr[-500:])
    return float(m.group(2)) * 1e3


def eager_ms(torch, N, C, H, W, O, k, s, p, groups=1):
    x, w = torch.randn(N, C, H, W), torch.randn(O, C // groups, k, k)
    g = torch.randn_like(torch.conv2d(x, w, None, s, p, 1, groups))

    def step():
        torch.conv2d(x, w, None, s, p, 1, groups)
        torch.ops.aten.convolution_backward(g, x, w, None, [s, s], [p, p],
                                            [1, 1], False, [0, 0], groups,
                                            [True, True, False])
    step()
    t = time.perf_counter()
    for _ in range(5):
        step()
    return (time.perf_counter() - t) / 5 * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builds", default=os.environ.get(
        "KILN_BUILD_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    builds = args.builds.split(",")
    print("load before: %s; threads %d" % (loadavg(), args.threads))
    print("| conv (batch 8) | eager ms | " +
          " | ".join("Kiln %s ms" % b for b in builds) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in builds) + " |")
    for name, *shape in SHAPES:
        if args.only and args.only not in name:
            continue
        joints = [joint_module(os.path.join(b, "bin", "kiln-opt"), *shape)
                  for b in builds]
        best = [float("inf")] * (1 + len(builds))
        for _ in range(args.rounds):
            best[0] = min(best[0], eager_ms(torch, *shape))
            for i, (b, j) in enumerate(zip(builds, joints)):
                best[1 + i] = min(best[1 + i],
                                  kiln_ms(b, j, args.repeat, args.threads))
        print("| %s | %s |" % (name, " | ".join("%.2f" % v for v in best)),
              flush=True)
    print("load after: %s" % loadavg())
    print("Kiln: forward + input gradient + weight gradient of one conv2d "
          "(kiln-autodiff's joint), min kernel time; eager: conv2d + "
          "convolution_backward, best of the rounds.")


if __name__ == "__main__":
    main()
