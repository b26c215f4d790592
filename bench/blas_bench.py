#!/usr/bin/python3
"""f32 products of the CPU backend: which library a BLAS call goes to.

For each product shape (transformer projections and attention, classifiers,
1x1-conv-like GEMMs): kiln-run --backend=cpu --matmul=openblas with
--sgemm=openblas (Debian's OpenBLAS) and --sgemm=onednn (oneDNN's JIT sgemm
through libkiln_onednn), in interleaved rounds, the in-process 'kernel
time' minimum of --repeat calls, best round of each; and eager PyTorch's
torch.matmul on the same shapes in this process (Debian's PyTorch calls
OpenBLAS) as the baseline. Prints a table with the ratios. The measurements
behind kiln-cpu's sgemm=auto (docs/codegen.md, "Which BLAS").

    /usr/bin/python3 bench/blas_bench.py [--threads 2] [--rounds 3]
        [--repeat 21] [--only TEXT]

Run it on an idle machine (uptime load < 1) and give the load with the
figures.
"""
import argparse
import os
import re
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
KILN_RUN = os.path.join(BUILD, "bin", "kiln-run")

# (label, batch, M, N, K, B transposed)
SHAPES = [
    ("transformer QKV 4096x768x256 (linear)", 1, 4096, 768, 256, True),
    ("transformer FFN up 4096x1024x256", 1, 4096, 1024, 256, True),
    ("transformer FFN down 4096x256x1024", 1, 4096, 256, 1024, True),
    ("attention Q K^T 64 x 512x512x32", 64, 512, 512, 32, True),
    ("attention P V 64 x 512x32x512", 64, 512, 32, 512, False),
    ("classifier 8x1000x1280 (linear)", 1, 8, 1000, 1280, True),
    ("classifier 1x1000x512 (linear)", 1, 1, 1000, 512, True),
    ("square 1024", 1, 1024, 1024, 1024, False),
    ("square 256", 1, 256, 256, 256, False),
    ("square 192", 1, 192, 192, 192, False),
    ("square 128", 1, 128, 128, 128, False),
    ("square 64", 1, 64, 64, 64, False),
    ("square 32", 1, 32, 32, 32, False),
    ("thin 16x256x256", 1, 16, 256, 256, False),
    ("batched 96 x 64x64x64", 96, 64, 64, 64, False),
]


def module(batch, m, n, k, tb):
    if batch == 1:
        A = "tensor<%dx%dxf32>" % (m, k)
        B = "tensor<%dx%dxf32>" % ((n, k) if tb else (k, n))
        C = "tensor<%dx%dxf32>" % (m, n)
    else:
        A = "tensor<%dx%dx%dxf32>" % (batch, m, k)
        B = "tensor<%dx%dx%dxf32>" % ((batch, n, k) if tb else (batch, k, n))
        C = "tensor<%dx%dx%dxf32>" % (batch, m, n)
    if tb and batch == 1:
        body = "  %%c = kt.linear %%a, %%b : (%s, %s) -> %s\n" % (A, B, C)
    elif tb:
        BT = "tensor<%dx%dx%dxf32>" % (batch, k, n)
        body = ("  %%t = kt.transpose %%b {dim0 = 1 : i64, dim1 = 2 : i64} : "
                "(%s) -> %s\n  %%c = kt.matmul %%a, %%t : (%s, %s) -> %s\n"
                % (B, BT, A, BT, C))
    else:
        body = "  %%c = kt.matmul %%a, %%b : (%s, %s) -> %s\n" % (A, B, C)
    return ("func.func @main(%%a: %s, %%b: %s) -> %s {\n%s"
            "  return %%c : %s\n}\n" % (A, B, C, body, C))


def kiln_ms(path, sgemm, threads, repeat):
    r = subprocess.run(
        [KILN_RUN, path, "--backend=cpu", "--matmul=openblas",
         "--sgemm=" + sgemm, "--random-inputs", "--repeat=%d" % repeat,
         "--cpu-threads=%d" % threads],
        capture_output=True, text=True,
        env=dict(os.environ, KILN_CACHE_DIR="off"))
    m = re.search(r"kernel time: median [0-9.e-]+ s, min ([0-9.e-]+) s",
                  r.stdout + r.stderr)
    if not m:
        raise SystemExit("kiln-run failed on %s:\n%s" % (path, r.stderr))
    return float(m.group(1)) * 1e3


def eager_ms(batch, m, n, k, tb, repeat):
    import torch
    a = torch.randn(batch, m, k) if batch > 1 else torch.randn(m, k)
    if tb:
        b = torch.randn(batch, n, k) if batch > 1 else torch.randn(n, k)
        f = (lambda: torch.matmul(a, b.transpose(-1, -2)))
    else:
        b = torch.randn(batch, k, n) if batch > 1 else torch.randn(k, n)
        f = (lambda: torch.matmul(a, b))
    f()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    print("load before: %s; threads %d" % (
        " ".join("%.2f" % x for x in os.getloadavg()), args.threads))
    print("| product | eager ms | OpenBLAS ms | oneDNN ms | "
          "OpenBLAS/oneDNN | eager/oneDNN |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for label, batch, m, n, k, tb in SHAPES:
            if args.only and args.only not in label:
                continue
            path = os.path.join(tmp, "p.mlir")
            with open(path, "w") as f:
                f.write(module(batch, m, n, k, tb))
            best = {"openblas": float("inf"), "onednn": float("inf"),
                    "eager": float("inf")}
            for _ in range(args.rounds):
                for s in ("openblas", "onednn"):
                    best[s] = min(best[s], kiln_ms(path, s, args.threads,
                                                   args.repeat))
                best["eager"] = min(best["eager"], eager_ms(
                    batch, m, n, k, tb, args.repeat))
            print("| %s | %.3f | %.3f | %.3f | %.2fx | %.2fx |" % (
                label, best["eager"], best["openblas"], best["onednn"],
                best["openblas"] / best["onednn"],
                best["eager"] / best["onednn"]))
    print("load after: %s" % " ".join("%.2f" % x for x in os.getloadavg()))


if __name__ == "__main__":
    main()
