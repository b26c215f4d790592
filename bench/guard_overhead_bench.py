#!/usr/bin/python3
"""Per-call cost of kiln's Python guards (issue 12, item 4).

A tiny function (`x * SCALE + m.bias_scale`: a guarded global and a module
reached through a global, so a few guarded names) is compiled with the
eager backend and called --calls times (default 10,000) on a 4-element
tensor; the baseline is the same function called uncompiled, in the same
process, interleaved with the compiled runs (--repeats rounds, minimum and
median of each). Also times `Guards.values()` alone on that function's
guard set. Prints microseconds per call and the compiled/eager ratio.

    KILN_BUILD_DIR=build PYTHONPATH=python /usr/bin/python3 \
        bench/guard_overhead_bench.py [--calls 10000] [--repeats 7]

Two functions: one reading globals and a module's attributes (all guarded
values on the fast path: read from the dicts as they are), and a closure
reading cells and a global dict (guarded values frozen on every call).

The machine is shared: the load (from /proc/loadavg) is printed first;
compare ratios and the values() figure, run before/after interleaved.
"""
import argparse
import statistics
import time

import torch

import kiln

SCALE = 2.0
LIMIT = 3
NAME = "relu"


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bias_scale = 0.5
        self.eps = 1e-5
        self.lin = torch.nn.Linear(4, 4)


MOD = M()


def f(x):
    y = x * SCALE + MOD.bias_scale
    if NAME == "relu" and LIMIT > 2:
        y = y + MOD.eps
    return y


def make_closure():
    """A function whose guards are mostly frozen values: closure cells (a
    number, a string, a tuple) and a global dict (guarded by its items)."""
    alpha, mode, shape = 0.5, "relu", (2, 2)

    def g(x):
        y = x * alpha + OPTS["beta"]
        if mode == "relu" and shape[0] == 2:
            y = y + OPTS["gamma"]
        return y
    return g


OPTS = {"beta": 1.0, "gamma": 0.25, "k": 3}


def timed(fn, x, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn(x)
    return (time.perf_counter() - t0) / n * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=7)
    a = ap.parse_args()
    with open("/proc/loadavg") as fh:
        print("load:", fh.read().split()[:3])
    torch.set_num_threads(1)
    x = torch.randn(4)
    for label, fn in (("globals + module", f), ("closure + dict", make_closure())):
        print("==", label)
        run(fn, x, a)


def run(f, x, a):
    cf = kiln.compile(f, backend="eager")
    cf(x)
    assert torch.equal(cf(x), f(x))
    g = cf._kiln.guards   # the compiled function's own guard set
    print("guarded names:", g.count, g._labels)
    eager, comp, vals = [], [], []
    for _ in range(a.repeats):
        eager.append(timed(f, x, a.calls))
        comp.append(timed(cf, x, a.calls))
        t0 = time.perf_counter()
        for _ in range(a.calls):
            g.values()
        vals.append((time.perf_counter() - t0) / a.calls * 1e6)
    for name, xs in (("eager f(x)", eager), ("compiled cf(x)", comp),
                     ("Guards.values()", vals)):
        print("%-18s min %7.2f us  median %7.2f us" % (
            name, min(xs), statistics.median(xs)))
    print("compiled/eager: min %.2fx  median %.2fx" % (
        min(comp) / min(eager),
        statistics.median(comp) / statistics.median(eager)))
    print("overhead per call (min): %.2f us" % (min(comp) - min(eager)))


if __name__ == "__main__":
    main()
