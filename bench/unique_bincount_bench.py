#!/usr/bin/python3
"""Compiled torch.unique / unique_consecutive / bincount against PyTorch
eager (issue 16: data-dependent sizes).

Each function is compiled once with kiln.compile(backend=..., fullgraph=True)
and called on inputs of n elements (--sizes) whose number of distinct
values (and so the result length) changes from call to call (one compile
serves them all); the baseline is the same function run by PyTorch eager
in the same process, interleaved with the compiled calls (--repeats rounds
of --calls calls each; minimum and median of the rounds). Prints
microseconds per call and the compiled/eager ratio (< 1: Kiln faster).

    KILN_BUILD_DIR=build PYTHONPATH=python /usr/bin/python3 \\
        bench/unique_bincount_bench.py [--backend cpu] [--sizes 1000,100000]

The machine is shared: the load (from /proc/loadavg) is printed first and
last; compare ratios.
"""
import argparse
import statistics
import time

import torch

import kiln


def unique_all(x):
    return torch.unique(x, return_inverse=True, return_counts=True)


def unique_consecutive(x):
    return torch.unique_consecutive(x, return_counts=True)


def bincount_w(i, w):
    return torch.bincount(i, w, minlength=4)


def inputs(name, n, k, g):
    """Inputs of n elements with about n // k distinct values."""
    hi = max(1, n // k)
    if name == "bincount_w":
        return (torch.randint(0, hi, (n,), generator=g),
                torch.rand(n, generator=g))
    x = torch.randint(0, hi, (n,), generator=g).float()
    if name == "unique_consecutive":
        x, _ = torch.sort(x)
    return (x,)


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def timed(fn, args_list, calls):
    t0 = time.perf_counter()
    for k in range(calls):
        fn(*args_list[k % len(args_list)])
    return (time.perf_counter() - t0) / calls * 1e6


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", default="cpu")
    p.add_argument("--sizes", default="1000,100000")
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    print("load %s (1-min average)" % load())
    g = torch.Generator().manual_seed(0)
    print("%-20s %8s %12s %12s %12s %12s %7s %7s" % (
        "function", "n", "kiln min us", "kiln med us", "eager min us",
        "eager med us", "min r", "med r"))
    for fn in (unique_all, unique_consecutive, bincount_w):
        for n in [int(s) for s in a.sizes.split(",")]:
            # Distinct counts n/2, n/10, n/100: three result lengths.
            args_list = [inputs(fn.__name__, n, k, g) for k in (2, 10, 100)]
            cf = kiln.compile(fn, backend=a.backend, fullgraph=True)
            for args in args_list:   # compile + check against eager
                for got, want in zip(*(
                        [r] if isinstance(r, torch.Tensor) else r
                        for r in (cf(*args), fn(*args)))):
                    torch.testing.assert_close(got, want)
            compiles = [p.stats()["compiles"]
                        for p in cf._kiln.programs.values()]
            ks, es = [], []
            for _ in range(a.repeats):   # interleaved
                ks.append(timed(cf, args_list, a.calls))
                es.append(timed(fn, args_list, a.calls))
            print("%-20s %8d %12.1f %12.1f %12.1f %12.1f %7.2f %7.2f%s" % (
                fn.__name__, n, min(ks), statistics.median(ks), min(es),
                statistics.median(es), min(ks) / min(es),
                statistics.median(ks) / statistics.median(es),
                "" if compiles == [1] else "  compiles %s" % compiles))
    print("load %s (1-min average)" % load())


if __name__ == "__main__":
    main()
