# RUN: %python %s
# REQUIRES: numpy, torch
# Tests the torch.compile FAQ's toy_example (examples/toy_example.mlir) run
# through kiln-run sessions against PyTorch: both branches, the print break,
# recompiles on a new size with TorchDynamo's reason text, automatic dynamic
# shapes, cache_size_limit with its warning and fallback, frozen mode,
# --dynamic=dynamic and --mark-dynamic / --mark-static.

import os
import sys

import numpy as np
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
from kiln_testing import Suite, close
from runtime_helpers import entries, reasons, run_calls, stat

s = Suite(__file__)
TOY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "examples", "toy_example.mlir")


def toy_example(a, b):
    a = torch.from_numpy(a)
    b = torch.from_numpy(b)
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return (x * b).numpy()


def pair(n, negative):
    a = s.randn(n)
    b = s.uniform(0.5, 2.0, n)
    return [a, -b if negative else b]


def check_results(label, r, calls):
    if r.rc != 0:
        s.record(label, False, repr(r))
        return
    for k, (call, res) in enumerate(zip(calls, r.results)):
        if len(res) != 1:
            s.record("%s call %d" % (label, k), False, "%d results" % len(res))
            continue
        ok, msg = close(res[0], toy_example(*call), 1e-6, 1e-6)
        s.record("%s call %d" % (label, k), ok, msg)


# Both branches in one session; the second call hits the first entry (the
# branch is host control flow, not a guard).
calls = [pair(10, False), pair(10, True)]
r = run_calls(TOY, calls, "--stats")
check_results("branches", r, calls)
s.record("branches: one compile, one hit",
         stat(r, "compiles") == 1 and stat(r, "cache hits") == 1 and
         stat(r, "cache misses") == 1 and stat(r, "calls") == 2, r.stdout)
# The print break runs the host callback: x, once per call, in call order.
prints = [l for l in r.stdout.splitlines() if l.startswith("print: ")]


def printed(line):
    return np.array([float(v) for v in line[len("print: ["):-1].split(",")])


s.record("print callback", len(prints) == 2 and all(
    close(printed(p), c[0] / (np.abs(c[0]) + 1), 1e-6, 1e-6)[0]
    for p, c in zip(prints, calls)), r.stdout)
s.record("print before results", r.stdout.find("print: ") <
         r.stdout.find("stats @toy_example"), r.stdout)

# Recompile on a new size, then automatic dynamic: the second entry has `?`
# dims with symbolic guards and takes every later size (compiles stays 2).
calls = [pair(10, False), pair(20, True), pair(30, False), pair(7, True),
         pair(10, True)]
r = run_calls(TOY, calls, "--stats", "--print-entries")
check_results("auto dynamic", r, calls)
s.record("auto dynamic: counts",
         stat(r, "calls") == 5 and stat(r, "compiles") == 2 and
         stat(r, "cache hits") == 3 and stat(r, "cache misses") == 2 and
         stat(r, "fallbacks") == 0, r.stdout)
s.record("auto dynamic: reason", reasons(r) == [
    "tensor 'a' size mismatch at index 0. expected 10, actual 20"], r.stdout)
es = entries(r)
s.record("auto dynamic: entries", len(es) == 2 and
         "tensor<10xf32>" in es[0] and "shape = [10]" in es[0] and
         "tensor<?xf32>" in es[1] and 'shape = ["s0"]' in es[1] and
         'shape = ["s1"]' in es[1] and "tensor<10xf32>" not in es[1], r.stdout)

# --dynamic=static with cache_size_limit=2 and four sizes: two entries, then
# a warning (once, with the recorded reasons) and fallbacks; results stay
# correct.
calls = [pair(10, False), pair(20, True), pair(30, False), pair(40, True),
         pair(10, True), pair(50, False)]
r = run_calls(TOY, calls, "--stats", "--dynamic=static", "--cache-size-limit=2")
check_results("cache limit", r, calls)
s.record("cache limit: counts",
         stat(r, "compiles") == 2 and stat(r, "fallbacks") == 3 and
         stat(r, "cache hits") == 1 and stat(r, "cache misses") == 5, r.stdout)
warnings = [l for l in r.stderr.splitlines() if "warning" in l]
s.record("cache limit: warned once", len(warnings) == 1 and
         "@toy_example reached cache_size_limit (2)" in warnings[0], r.stderr)
s.record("cache limit: warning lists reasons",
         "1. tensor 'a' size mismatch at index 0. expected 10, actual 20" in r.stderr
         and "2. tensor 'a' size mismatch at index 0. expected 20, actual 30"
         in r.stderr and "actual 40" not in r.stderr, r.stderr)
s.record("cache limit: reasons recorded", reasons(r) == [
    "tensor 'a' size mismatch at index 0. expected 10, actual 20",
    "tensor 'a' size mismatch at index 0. expected 20, actual 30",
    "tensor 'a' size mismatch at index 0. expected 20, actual 40",
    "tensor 'a' size mismatch at index 0. expected 20, actual 50"], r.stdout)

# Frozen (dynamo.run): nothing compiles; every call runs the fallback, which
# still gives the right answer for the captured size and for new sizes.
calls = [pair(10, False), pair(10, True), pair(13, True)]
r = run_calls(TOY, calls, "--stats", "--frozen")
check_results("frozen", r, calls)
s.record("frozen: no compiles", stat(r, "compiles") == 0 and
         stat(r, "fallbacks") == 3 and stat(r, "cache hits") == 0 and
         "warning" not in r.stderr, r.stdout + r.stderr)

# --dynamic=dynamic: the first entry is already dynamic.
calls = [pair(10, False), pair(20, True), pair(5, False)]
r = run_calls(TOY, calls, "--stats", "--print-entries", "--dynamic=dynamic")
check_results("dynamic", r, calls)
es = entries(r)
s.record("dynamic: one dynamic entry", stat(r, "compiles") == 1 and
         stat(r, "cache hits") == 2 and len(es) == 1 and
         "tensor<?xf32>" in es[0] and 'shape = ["s0"]' in es[0], r.stdout)

# --mark-dynamic=0:0: a dynamic from the first compile, b static.
calls = [pair(10, False), pair(20, True)]
calls[1][1] = calls[1][1][:10].copy()
calls[1][0] = calls[1][0][:10].copy()
calls.append([s.randn(10), s.uniform(0.5, 2.0, 10)])
r = run_calls(TOY, calls, "--stats", "--print-entries", "--mark-dynamic=0:0")
check_results("mark dynamic", r, calls)
es = entries(r)
s.record("mark dynamic: first entry", stat(r, "compiles") == 1 and
         len(es) == 1 and "%a: tensor<?xf32>" in es[0] and
         "%b: tensor<10xf32>" in es[0], r.stdout)
# The marked dim takes other sizes without a recompile (b has 10 elements
# only where a does, since x * b broadcasts).
calls = [pair(10, False), [s.randn(1), s.uniform(0.5, 2, 10)]]
r = run_calls(TOY, calls, "--stats", "--mark-dynamic=0:0")
check_results("mark dynamic broadcast", r, calls)
s.record("mark dynamic: no recompile", stat(r, "compiles") == 1 and
         stat(r, "cache hits") == 1, r.stdout)

# --mark-static=0:0 overrides automatic dynamic: every new size of a
# recompiles a static entry, while b (changed too) becomes dynamic.
calls = [pair(10, False), pair(20, True), pair(30, False)]
r = run_calls(TOY, calls, "--stats", "--print-entries", "--mark-static=0:0")
check_results("mark static", r, calls)
es = entries(r)
s.record("mark static: entries", stat(r, "compiles") == 3 and len(es) == 3 and
         "%a: tensor<20xf32>" in es[1] and "%b: tensor<?xf32>" in es[1] and
         "%a: tensor<30xf32>" in es[2], r.stdout)
s.record("mark static: reasons", reasons(r) == [
    "tensor 'a' size mismatch at index 0. expected 10, actual 20",
    "tensor 'a' size mismatch at index 0. expected 20, actual 30"], r.stdout)

# --mark-dynamic with --dynamic=static: the mark wins for its dim.
calls = [pair(10, False), pair(20, True)]
r = run_calls(TOY, calls, "--stats", "--dynamic=static", "--mark-dynamic=0:0",
              "--mark-dynamic=1:0")
check_results("mark dynamic over static", r, calls)
s.record("mark dynamic over static", stat(r, "compiles") == 1, r.stdout)

s.finish()
