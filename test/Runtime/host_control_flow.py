# RUN: %python %s
# REQUIRES: numpy
# Tests the host code of kg.programs run through kiln-run sessions: scf.if on
# kg.to_host of a graph result, scf.for over graphs, kg.break regions (host
# calls and host-side ops), an unknown host callback (a clear runtime error),
# outlined graphs (func.func with kg.graph_function) specialized per entry,
# and kg.is_compiling on the host path.

import os
import subprocess
import sys
import tempfile

import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs"))
from kiln_testing import Suite, close
from runtime_helpers import KILN_OPT, entries, reasons, run_calls, stat

s = Suite(__file__)
tmp = tempfile.mkdtemp(prefix="kiln-rt-host-")


def kiln_opt_accepts(label, text):
    path = os.path.join(tmp, "entry.mlir")
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([KILN_OPT, path], capture_output=True, text=True)
    s.record(label, p.returncode == 0 and "kg.program" in p.stdout,
             p.stderr + text)


def expect(label, r, expected):
    if r.rc != 0:
        s.record(label, False, repr(r))
        return
    for k, e in enumerate(expected):
        res = r.results[k]
        if not isinstance(e, list):
            e = [e]
        ok, msg = len(res) == len(e), "%d results" % len(res)
        for got, want in zip(res, e):
            if ok:
                ok, msg = close(got, want, 1e-6, 1e-6)
        s.record("%s call %d" % (label, k), ok, msg)


# scf.if on a host scalar from kg.to_host of a graph result (max > 1 picks
# the branch); the branches run different graphs.
IF = """
kg.program @clip(%x: tensor<5xf32>) -> tensor<5xf32> {
  kg.guard_tensor %x {dtype = f32, shape = [5]} : tensor<5xf32>
  %m = kg.graph @clip_g0(%x) : (tensor<5xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<5xf32>):
    %0 = kt.amax %a {dim = [0]} : (tensor<5xf32>) -> tensor<f32>
    kg.yield %0 : tensor<f32>
  }
  %mh = kg.to_host %m : tensor<f32> -> f32
  %one = arith.constant 1.0 : f32
  %c = arith.cmpf ogt, %mh, %one : f32
  %r = scf.if %c -> (tensor<5xf32>) {
    %y = kg.graph @clip_g1(%x, %m) : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32> {
    ^bb0(%a: tensor<5xf32>, %b: tensor<f32>):
      %0 = kt.div %a, %b : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
      kg.yield %0 : tensor<5xf32>
    }
    scf.yield %y : tensor<5xf32>
  } else {
    scf.yield %x : tensor<5xf32>
  }
  kg.return %r : tensor<5xf32>
}
"""
big = s.uniform(-4, 4, 5)
big[2] = 4.5
small = s.uniform(-1, 0.9, 5)
r = run_calls(IF, [[big], [small]], "--stats")
expect("scf.if", r, [big / big.max(), small])
s.record("scf.if: one entry", stat(r, "compiles") == 1 and
         stat(r, "cache hits") == 1, r.stdout)

# scf.for over graphs, a break whose host code makes a value (a disallowed
# op moved out of the graph), and a host call printing it each iteration.
FOR = """
kg.program @loop(%x: tensor<3xf32>) -> tensor<3xf32> {
  kg.guard_tensor %x {dtype = f32, shape = [3]} : tensor<3xf32>
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> (tensor<3xf32>) {
    %y = kg.graph @loop_g0(%acc) : (tensor<3xf32>) -> tensor<3xf32> {
    ^bb0(%a: tensor<3xf32>):
      %0 = kt.add %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      kg.yield %0 : tensor<3xf32>
    }
    %z = kg.break "disallowed op kt.neg" -> tensor<3xf32> {
      %n = kt.neg %y : (tensor<3xf32>) -> tensor<3xf32>
      kg.host_call @print(%n) : (tensor<3xf32>) -> ()
      kg.yield %n : tensor<3xf32>
    }
    scf.yield %z : tensor<3xf32>
  }
  kg.return %r : tensor<3xf32>
}
"""
x = np.array([1.0, -2.0, 0.5], np.float32)
r = run_calls(FOR, [[x], [x * 3]], "--stats")
expect("scf.for + break", r, [-8 * x, -24 * x])
prints = [l for l in r.stdout.splitlines() if l.startswith("print: ")]
s.record("scf.for: host call per iteration", prints == [
    "print: [-2, 4, -1]", "print: [4, -8, 2]", "print: [-8, 16, -4]",
    "print: [-6, 12, -3]", "print: [12, -24, 6]", "print: [-24, 48, -12]"],
    r.stdout)

# The same loop at a new size: the break region's types are refined too.
x4 = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
r = run_calls(FOR, [[x], [x4], [x4 + 1]], "--stats", "--print-entries")
expect("scf.for new size", r, [-8 * x, -8 * x4, -8 * (x4 + 1)])
es = entries(r)
s.record("scf.for new size entry", len(es) == 2 and
         'kg.break "disallowed op kt.neg" -> tensor<?xf32>' in es[1] and
         "kt.neg %1 : (tensor<?xf32>) -> tensor<?xf32>" in es[1], r.stdout)

# An unknown host callback: exit 1, naming the callback and its location.
UNKNOWN = FOR.replace("@print", "@no_such_callback")
r = run_calls(UNKNOWN, [[x]])
s.record("unknown callback", r.rc == 1 and
         "no host callback is registered as 'no_such_callback'" in r.stderr and
         "call #0 of @loop failed" in r.stderr and r.results == [[]], repr(r))

# Outlined graphs: the graph function is specialized along with the program
# (a new size refines its signature in the entry's copy of the module).
OUTLINED = """
func.func private @scale_g0(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32>
    attributes {kg.graph_function} {
  %0 = kt.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = kt.add %0, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
kg.program @scale(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
  kg.guard_tensor %w {dtype = f32, shape = [4]} : tensor<4xf32>
  %y = kg.graph @scale_g0(%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  kg.return %y : tensor<4xf32>
}
"""
a, w = s.randn(4), s.randn(4)
a6, w6 = s.randn(6), s.randn(6)
a9, w9 = s.randn(9), s.randn(9)
r = run_calls(OUTLINED, [[a, w], [a6, w6], [a9, w9], [a, w]], "--stats",
              "--print-entries")
expect("outlined", r, [a * w + a, a6 * w6 + a6, a9 * w9 + a9, a * w + a])
s.record("outlined: counts", stat(r, "compiles") == 2 and
         stat(r, "cache hits") == 2, r.stdout)
es = entries(r)
s.record("outlined: entry shows its graph function", len(es) == 2 and
         "func.func private @scale_g0(%arg0: tensor<?xf32>" in es[1] and
         "func.func private @scale_g0(%arg0: tensor<4xf32>" in es[0], r.stdout)
for i, e in enumerate(es):
    kiln_opt_accepts("outlined entry %d is valid IR" % i, e)

# kg.is_compiling is false on the host path and true inside a graph.
IS_COMPILING = """
kg.program @ic(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<i1>) {
  kg.guard_tensor %x {dtype = f32, shape = [2]} : tensor<2xf32>
  %c = kg.is_compiling
  %t = kg.from_host %c : i1 -> tensor<i1>
  %y = kg.graph @ic_g0(%x) : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    %0 = kt.neg %a : (tensor<2xf32>) -> tensor<2xf32>
    kg.yield %0 : tensor<2xf32>
  }
  kg.return %y, %t : tensor<2xf32>, tensor<i1>
}
"""
x2 = np.array([1.0, -3.0], np.float32)
r = run_calls(IS_COMPILING, [[x2]])
expect("is_compiling", r, [[-x2, np.array(False)]])

s.finish()
