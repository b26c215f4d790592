# RUN: %python %s
# REQUIRES: numpy
# Tests each guard kind kiln-run can exercise through a session: dtype, rank,
# size (static and symbolic), kg.guard_shape_relation, kg.guard_value on a
# scalar argument, and kg.guard_backend in the printed entries; the exact
# recompile reasons; and that every printed entry is valid IR for kiln-opt.
# (requires_grad, strides and identity need the C API: not covered here.)

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
tmp = tempfile.mkdtemp(prefix="kiln-rt-guards-")


def expect(label, r, expected, **counts):
    """r ran; each call's result matches `expected[k]`; stats equal counts."""
    if r.rc != 0:
        s.record(label, False, repr(r))
        return
    for k, e in enumerate(expected):
        res = r.results[k]
        ok, msg = (len(res) == 1, "%d results" % len(res))
        if ok:
            ok, msg = close(res[0], e, 1e-6, 1e-6)
            if ok and res[0].dtype != np.asarray(e).dtype:
                ok, msg = False, "dtype %s != %s" % (res[0].dtype, e.dtype)
        s.record("%s call %d" % (label, k), ok, msg)
    for key, v in counts.items():
        got = stat(r, key.replace("_", " "))
        s.record("%s %s" % (label, key), got == v, "%s: %s != %s\n%s" % (
            key, got, v, r.stdout))


def kiln_opt_accepts(label, text):
    path = os.path.join(tmp, "entry.mlir")
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([KILN_OPT, path], capture_output=True, text=True)
    s.record(label, p.returncode == 0 and "kg.program" in p.stdout,
             p.stderr + text)


DOUBLE = """
kg.program @double(%x: tensor<4xf32>) -> tensor<4xf32> {
  kg.guard_tensor %x {dtype = f32, shape = [4]} : tensor<4xf32>
  %y = kg.graph @double_g0(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = kt.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    kg.yield %0 : tensor<4xf32>
  }
  kg.return %y : tensor<4xf32>
}
"""

# dtype: an f64 input makes a new entry (f64 through the graph).
x32 = s.randn(4)
x64 = s.randn(4, dtype=np.float64)
r = run_calls(DOUBLE, [[x32], [x64], [x64 + 1], [x32 - 1]], "--stats",
              "--print-entries")
expect("dtype", r, [2 * x32, 2 * x64, 2 * (x64 + 1), 2 * (x32 - 1)],
       compiles=2, cache_hits=2, cache_misses=2)
s.record("dtype reason", reasons(r) == [
    "tensor 'x' dtype mismatch. expected f32, actual f64"], r.stdout)
es = entries(r)
s.record("dtype entries", len(es) == 2 and "tensor<4xf64>" in es[1] and
         "dtype = f64" in es[1], r.stdout)
# The backend guard (BACKEND_MATCH) is part of every entry.
s.record("backend guard", len(es) == 2 and all(
    'kg.guard_backend {backend = "eager"}' in e for e in es), r.stdout)
for i, e in enumerate(es):
    kiln_opt_accepts("dtype entry %d is valid IR" % i, e)

# rank: a rank-2 input makes a new static entry (a size change on a rank
# change is not a reason to go dynamic).
x2 = s.randn(2, 3)
r = run_calls(DOUBLE, [[x32], [x2]], "--stats", "--print-entries")
expect("rank", r, [2 * x32, 2 * x2], compiles=2, cache_misses=2)
s.record("rank reason", reasons(r) == [
    "tensor 'x' rank mismatch. expected 1, actual 2"], r.stdout)
es = entries(r)
s.record("rank entry", len(es) == 2 and "tensor<2x3xf32>" in es[1] and
         "shape = [2, 3]" in es[1], r.stdout)

# Symbolic dims: "s0" shared by two arguments is one size (a DimSame check),
# with a relation.
ADD = """
kg.program @add(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  kg.guard_tensor %a {dtype = f32, shape = ["s0", 3]} : tensor<?x3xf32>
  kg.guard_tensor %b {dtype = f32, shape = ["s0", 3]} : tensor<?x3xf32>
  kg.guard_shape_relation "s0 >= 2"
  %y = kg.graph @add_g0(%a, %b) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32> {
  ^bb0(%x: tensor<?x3xf32>, %z: tensor<?x3xf32>):
    %0 = kt.add %x, %z : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    kg.yield %0 : tensor<?x3xf32>
  }
  kg.return %y : tensor<?x3xf32>
}
"""
a5, b5 = s.randn(5, 3), s.randn(5, 3)
a7, b7 = s.randn(7, 3), s.randn(7, 3)
a1, b1 = s.randn(1, 3), s.randn(1, 3)
r = run_calls(ADD, [[a5, b5], [a7, b7], [a1, b1], [a1 + 1, b1], [a5, b5]],
              "--stats", "--print-entries")
expect("relation", r, [a5 + b5, a7 + b7, a1 + b1, a1 + 1 + b1, a5 + b5],
       compiles=2, cache_hits=3, cache_misses=2)
# The inputs that violate the relation recompile, and the reason names it.
s.record("relation reason", reasons(r) == [
    "shape relation failed: s0 (= 1) >= 2"], r.stdout)
es = entries(r)
s.record("relation entries", len(es) == 2 and
         'shape = ["s0", 3]' in es[0] and
         'kg.guard_shape_relation "s0 >= 2"' in es[0] and
         "shape = [1, 3]" in es[1] and "guard_shape_relation" not in es[1],
         r.stdout)
for i, e in enumerate(es):
    kiln_opt_accepts("relation entry %d is valid IR" % i, e)

# The same size symbol on both arguments: a different size of b recompiles
# (the entry would have taken it otherwise); the static entry then fails to
# specialize with a clear error (the add cannot broadcast 5 and 7).
r = run_calls(ADD, [[a5, b5], [a5, b7]], "--stats")
s.record("shared symbol mismatch", r.rc == 1 and
         "cannot specialize @add for these inputs" in r.stderr and
         "broadcast" in r.stderr, repr(r))

# Static specialization of a program with relations: the relations over
# dims that became static are dropped (or rewritten with the size).
r = run_calls(ADD, [[a5, b5], [a7, b7]], "--stats", "--print-entries",
              "--dynamic=static")
expect("relation static", r, [a5 + b5, a7 + b7], compiles=2)
es = entries(r)
s.record("relation static entries", len(es) == 2 and
         "shape = [5, 3]" in es[0] and "guard_shape_relation" not in es[0],
         r.stdout)
REL2 = ADD.replace('shape = ["s0", 3]} : tensor<?x3xf32>\n  kg.guard_shape_relation',
                   'shape = ["s1", 3]} : tensor<?x3xf32>\n  kg.guard_shape_relation "s0 <= s1"\n  kg.guard_shape_relation', 1)
REL2 = REL2.replace('%b {dtype = f32, shape = ["s0", 3]}',
                    '%b {dtype = f32, shape = ["s1", 3]}')
a4x3 = s.randn(4, 3)
b4x3 = s.randn(4, 3)
r = run_calls(REL2, [[a5, b5], [a4x3, b4x3]], "--stats", "--print-entries",
              "--mark-static=0:0")
expect("relation partly static", r, [a5 + b5, a4x3 + b4x3], compiles=2)
es = entries(r)
s.record("relation partly static entry", len(es) == 2 and
         'kg.guard_shape_relation "5 <= s1"' in es[0] and
         "s0 >= 2" not in es[0] and 'shape = ["s1", 3]' in es[0], r.stdout)
s.record("relation partly static reason", reasons(r) == [
    "tensor 'a' size mismatch at index 0. expected 5, actual 4"], r.stdout)
for i, e in enumerate(es):
    kiln_opt_accepts("partly static entry %d is valid IR" % i, e)

# kg.guard_value on a scalar argument (a rank-0 .npy): each value is an
# entry; the reason names the argument and both values.
SCALE = """
kg.program @scale(%x: tensor<3xf32>, %k: f32) -> tensor<3xf32> {
  kg.guard_tensor %x {dtype = f32, shape = [3]} : tensor<3xf32>
  kg.guard_value %k {value = 2.0 : f32} : f32
  %t = kg.from_host %k : f32 -> tensor<f32>
  %y = kg.graph @scale_g0(%x, %t) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>, %c: tensor<f32>):
    %0 = kt.mul %a, %c : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    kg.yield %0 : tensor<3xf32>
  }
  kg.return %y : tensor<3xf32>
}
"""
x3 = s.randn(3)
k2, k3 = np.array(2.0, np.float32), np.array(3.0, np.float32)
r = run_calls(SCALE, [[x3, k2], [x3, k3], [x3 + 1, k2], [x3, k3]], "--stats",
              "--print-entries")
expect("guard_value", r, [x3 * 2, x3 * 3, (x3 + 1) * 2, x3 * 3], compiles=2,
       cache_hits=2)
s.record("guard_value reason", reasons(r) == ["'k' == 2 failed (actual 3)"],
         r.stdout)
es = entries(r)
s.record("guard_value entries", len(es) == 2 and
         "kg.guard_value %k {value = 2.000000e+00 : f32}" in es[0] and
         "kg.guard_value %k {value = 3.000000e+00 : f32}" in es[1], r.stdout)
for i, e in enumerate(es):
    kiln_opt_accepts("guard_value entry %d is valid IR" % i, e)

# An integer guard_value: the loop trip count of the host code.
LOOP = """
kg.program @loop(%x: tensor<2x2xf32>, %n: i64) -> tensor<2x2xf32> {
  kg.guard_tensor %x {dtype = f32, shape = [2, 2]} : tensor<2x2xf32>
  kg.guard_value %n {value = 3 : i64} : i64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ub = arith.index_cast %n : i64 to index
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %x) -> (tensor<2x2xf32>) {
    %y = kg.graph @loop_g0(%acc) : (tensor<2x2xf32>) -> tensor<2x2xf32> {
    ^bb0(%a: tensor<2x2xf32>):
      %0 = kt.add %a, %a : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      kg.yield %0 : tensor<2x2xf32>
    }
    scf.yield %y : tensor<2x2xf32>
  }
  kg.return %r : tensor<2x2xf32>
}
"""
xx = s.randn(2, 2)
r = run_calls(LOOP, [[xx, np.array(3, np.int64)], [xx, np.array(0, np.int64)],
                     [xx, np.array(3, np.int64)]], "--stats")
expect("int guard_value", r, [xx * 8, xx, xx * 8], compiles=2, cache_hits=1)
s.record("int guard_value reason", reasons(r) == ["'n' == 3 failed (actual 0)"],
         r.stdout)

# A rank-0 tensor for a tensor argument is a rank change, not an error.
r = run_calls(DOUBLE, [[x32], [np.array(1.5, np.float32)]], "--stats")
expect("rank 0", r, [2 * x32, np.array(3.0, np.float32)], compiles=2)
s.record("rank 0 reason", reasons(r) == [
    "tensor 'x' rank mismatch. expected 1, actual 0"], r.stdout)

s.finish()
