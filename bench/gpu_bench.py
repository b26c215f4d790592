#!/usr/bin/env python3
"""GPU benchmark: Kiln CUDA packages against PyTorch eager, torch.compile
(Inductor) and the hardware limits, in one process, on the GPU machine.

    python3 bench/gpu_bench.py --packages DIR --library libkiln_rt.so.0
        [--no-compile] [--repeat N]

The packages are bench/gpu/*.mlir compiled here by
`kiln-compile --backend=nvptx` (scripts/gpu/device_check.sh runs this after
building libkiln_rt there). Each case prints the median wall time per call
(after warm-up; a call includes libkiln_rt's synchronization and the
ctypes/DLPack overhead), the ratio to eager and to torch.compile, the
effective bandwidth against a device copy of the same bytes (memory-bound
cases) or the ratio to cuBLAS (matmul), and the largest difference from
eager's result.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(fn, repeat):
    import torch
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--packages", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args()
    import torch
    sys.path.insert(0, os.path.join(HERE, "..", "runtime", "python"))
    import kiln_rt
    kiln_rt.load_library(a.library)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, device=dev, generator=g)

    def chain_eager(x, y):
        t = torch.sigmoid((x + y) * x) - y
        t = torch.tanh(t)
        return -torch.exp(torch.relu(t * t + x))

    n = 64 * 1024 * 1024
    cases = [
        ("chain 10 ops, 64M f32", "chain", lambda: [randn(n), randn(n)],
         chain_eager, 3 * 4 * n),
        ("softmax 8192x8192 f32", "softmax", lambda: [randn(8192, 8192)],
         lambda x: torch.softmax(x, -1), 2 * 4 * 8192 * 8192),
        ("layer_norm 32768x1024 f32", "layer_norm",
         lambda: [randn(32768, 1024), randn(1024), randn(1024)],
         lambda x, w, b: torch.nn.functional.layer_norm(x, (1024,), w, b),
         2 * 4 * 32768 * 1024),
        ("matmul 2048^3 f32", "matmul",
         lambda: [randn(2048, 2048), randn(2048, 2048)], torch.matmul, None),
        ("3 ops on 1K f32 (host overhead)", "small", lambda: [randn(1024)],
         lambda x: torch.relu(torch.exp(x) + x), None),
    ]
    print("device: %s, torch %s" % (torch.cuda.get_device_name(), torch.__version__))
    # The copy limit: a device-to-device copy of 256 MiB (read + write).
    src = randn(n)
    dst = torch.empty_like(src)
    copy_s = timed(lambda: dst.copy_(src), a.repeat)
    copy_bw = 2 * 4 * n / copy_s / 1e9
    print("copy kernel: %.1f GB/s (256 MiB read + write, %.3f ms)" %
          (copy_bw, copy_s * 1e3))
    del src, dst
    for title, name, make, eager, nbytes in cases:
        path = os.path.join(a.packages, name + ".so")
        args = make()
        try:
            pkg = kiln_rt.Package(path)
            entry = pkg[pkg.entries[0]]
            out = entry(*args)[0]
            ref = eager(*args)
            diff = (out.float() - ref.float()).abs().max().item()
            kiln_s = timed(lambda: entry(*args), a.repeat)
        except Exception as e:
            print("%-34s kiln failed: %s" % (title, e))
            continue
        eager_s = timed(lambda: eager(*args), a.repeat)
        comp = ""
        if not a.no_compile:
            try:
                t0 = time.perf_counter()
                c = torch.compile(eager)
                c(*args)
                torch.cuda.synchronize()
                cold = time.perf_counter() - t0
                comp_s = timed(lambda: c(*args), a.repeat)
                comp = ", torch.compile %.3f ms (cold %.1f s): kiln %.2fx of it" % (
                    comp_s * 1e3, cold, comp_s / kiln_s)
            except Exception as e:
                comp = ", torch.compile failed: %s" % str(e)[:100]
        extra = ""
        if nbytes:
            bw = nbytes / kiln_s / 1e9
            extra = ", %.1f GB/s = %.0f%% of copy" % (bw, 100 * bw / copy_bw)
        if name == "matmul":
            flops = 2 * 2048 ** 3
            extra = ", %.2f TFLOP/s; cuBLAS %.2f TFLOP/s" % (
                flops / kiln_s / 1e12, flops / eager_s / 1e12)
        print("%-34s kiln %.3f ms, eager %.3f ms: kiln %.2fx of eager%s%s; "
              "max |diff| %.2e" % (title, kiln_s * 1e3, eager_s * 1e3,
                                   eager_s / kiln_s, comp, extra, diff),
              flush=True)
        del pkg, entry, out, args
    print("libkiln_rt device memory:", kiln_rt.cuda_memory_stats())


if __name__ == "__main__":
    main()
