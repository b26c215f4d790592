#!/usr/bin/python3
"""Cost of a compiled call that writes its tensor argument in place (a ref
argument: the runtime copies it, the program updates the copy, the final
contents are written back into the caller's memory; docs/runtime.md "Ref
arguments"), for two builds of libKilnCAPI.so, A/B interleaved in one
script: `--library` (default: this checkout's build/lib) and `--baseline`
(a copy of the library before a change). Each round runs one worker
process per library, alternating, so both see the same load; each worker
times `b.add_(g)` compiled with backend="cpu" on contiguous float32
tensors of `--sizes` elements (and eager PyTorch, for scale), CPU time and
wall time per call. Prints the best round per side, the ratio
baseline/library, and `uptime`'s load before and after.

    cp build/lib/libKilnCAPI.so /tmp/base.so    # before the change
    ... rebuild ...
    /usr/bin/python3 bench/ref_writeback_bench.py --baseline /tmp/base.so
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def worker(sizes, calls):
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import warnings
    import torch
    import kiln
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)

    def f(b, g):
        b.add_(g)
    out = {}
    for n in sizes:
        b, g = torch.randn(n), torch.randn(n)
        c = kiln.compile(f, backend="cpu")
        for _ in range(3):
            c(b, g)
        t, p = time.perf_counter(), time.process_time()
        for _ in range(calls):
            c(b, g)
        kw = (time.perf_counter() - t) / calls * 1e3
        kc = (time.process_time() - p) / calls * 1e3
        t = time.perf_counter()
        for _ in range(calls):
            f(b, g)
        ew = (time.perf_counter() - t) / calls * 1e3
        out[str(n)] = (kw, kc, ew)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--library",
                    default=os.path.join(ROOT, "build", "lib",
                                         "libKilnCAPI.so"))
    ap.add_argument("--baseline", required="--worker" not in sys.argv)
    ap.add_argument("--sizes", default="65536,1048576")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--worker", action="store_true")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    if a.worker:
        worker(sizes, a.calls)
        return
    print("load before: %.2f" % os.getloadavg()[0])
    best = {}
    for _ in range(a.rounds):
        for side, lib in (("library", a.library), ("baseline", a.baseline)):
            env = dict(os.environ, KILN_LIBRARY=lib, KILN_CACHE_DIR="off",
                       PYTHONPATH=os.path.join(ROOT, "python"))
            r = subprocess.run(
                [sys.executable, __file__, "--worker", "--sizes", a.sizes,
                 "--calls", str(a.calls)], env=env, check=True,
                capture_output=True, text=True)
            res = json.loads(r.stdout.strip().splitlines()[-1])
            for n, v in res.items():
                cur = best.get((side, n))
                best[(side, n)] = v if cur is None else tuple(
                    min(x, y) for x, y in zip(cur, v))
    print("%-9s %12s %12s %12s %12s %9s %9s" % (
        "elements", "lib cpu ms", "base cpu ms", "lib wall ms",
        "base wall ms", "base/lib", "eager ms"))
    for n in sizes:
        lw, lc, ew = best[("library", str(n))]
        bw, bc, _ = best[("baseline", str(n))]
        print("%-9d %12.3f %12.3f %12.3f %12.3f %9.2f %9.3f" % (
            n, lc, bc, lw, bw, bc / lc, ew))
    print("load after: %.2f" % os.getloadavg()[0])


if __name__ == "__main__":
    main()
