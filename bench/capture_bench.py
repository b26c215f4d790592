#!/usr/bin/python3
"""Capture-time cost of PyTorch's argument-parser check (kiln._signatures).

Every call_method / builtin call_function node is checked once at capture
by calling the same method on meta stand-ins (docs/python.md, "Arguments
PyTorch refuses"). This measures the time of the capture (kiln._tracer.trace:
tracing and import, no backend compile) of torchvision's mobilenet_v2 and of
the GPT-2 block of test/python/models.py, with the check (candidate) and
without it (baseline: check_call replaced by a no-op), interleaved in this
process, and the time spent inside the check itself. Prints medians over
--repeat captures and the candidate / baseline ratios (of the medians and
of the minima).

    KILN_BUILD_DIR=build PYTHONPATH=python:test/python \\
        /usr/bin/python3 bench/capture_bench.py [--repeat 7]

The machine is shared: compare ratios, and note the load (printed first).
"""
import argparse
import statistics
import time

import torch

import kiln
from kiln import _signatures, _tracer

import models


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    opts = ap.parse_args()
    print("load:", open("/proc/loadavg").read().split()[:3])
    torch.set_num_threads(1)

    timing = {"trace": 0.0, "check": 0.0, "nodes": 0}
    real_trace, real_check = _tracer.trace, _signatures.check_call

    def timed_trace(*a, **k):
        t = time.perf_counter()
        try:
            return real_trace(*a, **k)
        finally:
            timing["trace"] += time.perf_counter() - t

    def timed_check(*a, **k):
        t = time.perf_counter()
        try:
            return real_check(*a, **k)
        finally:
            timing["check"] += time.perf_counter() - t
            timing["nodes"] += 1

    _tracer.trace = timed_trace
    cases = [("mobilenet_v2", models.torchvision_model("mobilenet_v2"),
              torch.randn(1, 3, 32, 32)),
             ("gpt2_block", models.gpt2_block(), torch.randn(2, 16, 32))]
    for name, model, x in cases:
        times = {"baseline": [], "candidate": []}
        check_times, nodes = [], 0
        for _ in range(opts.repeat):
            for mode in ("baseline", "candidate"):
                _signatures.check_call = timed_check if mode == "candidate" \
                    else (lambda *a, **k: None)
                timing.update(trace=0.0, check=0.0, nodes=0)
                with torch.no_grad():
                    kiln.compile(model, backend="eager")(x)
                times[mode].append(timing["trace"])
                if mode == "candidate":
                    check_times.append(timing["check"])
                    nodes = timing["nodes"]
        _signatures.check_call = real_check
        b = statistics.median(times["baseline"])
        c = statistics.median(times["candidate"])
        bmin, cmin = min(times["baseline"]), min(times["candidate"])
        print("%-13s capture baseline %.3f s, with the check %.3f s "
              "(medians; ratio %.3f; of the minima %.3f); in the check %.4f s "
              "over %d nodes (%.1f us a node)" % (
                  name, b, c, c / b, cmin / bmin,
                  statistics.median(check_times), nodes,
                  1e6 * statistics.median(check_times) / max(nodes, 1)))


if __name__ == "__main__":
    main()
