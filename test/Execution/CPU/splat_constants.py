# RUN: %python %s
# REQUIRES: numpy
# Splat kt.constant values on the CPU backend (compiled as fills, never as
# dense globals: test/Conversion/CPU/kiln-cpu-splat*.mlir), compared with
# NumPy: a large splat returned as it is and read by a matmul and a
# pointwise op, and splats of every element type.
import numpy as np
from kiln_testing import KilnRunError, Suite, run

s = Suite(__file__)


def cpu_case(label, mlir, inputs, refs, extra=()):
    for fuse in ("true", "false"):
        try:
            got = run(mlir, inputs, extra_args=["--backend=cpu", "--cpu-fuse=" + fuse,
                                                *extra])
        except KilnRunError as e:
            s.record("%s fuse=%s" % (label, fuse), False, str(e))
            continue
        s.record("%s fuse=%s result count" % (label, fuse), len(got) == len(refs),
                 "%d results" % len(got))
        for i, (g, r) in enumerate(zip(got, refs)):
            ok = g.shape == r.shape and g.dtype == r.dtype and \
                np.allclose(g.astype(np.float64), r.astype(np.float64), rtol=1e-5, atol=1e-5)
            s.record("%s fuse=%s result%d" % (label, fuse, i), ok,
                     "got %s %s, expected %s %s" % (g.dtype, g.shape, r.dtype, r.shape))


# 2048 x 2048 f32 (16 MiB): returned, added to an input row, multiplied.
n = 2048
x = s.randn(n)
w = s.randn(n, 8)
mlir = """
func.func @main(%x: tensor<{n}xf32>, %w: tensor<{n}x8xf32>) -> (tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>, tensor<{n}x8xf32>) {{
  %c = kt.constant {{value = dense<0.75> : tensor<{n}x{n}xf32>}} : () -> tensor<{n}x{n}xf32>
  %0 = kt.add %c, %x : (tensor<{n}x{n}xf32>, tensor<{n}xf32>) -> tensor<{n}x{n}xf32>
  %1 = kt.matmul %c, %w : (tensor<{n}x{n}xf32>, tensor<{n}x8xf32>) -> tensor<{n}x8xf32>
  return %c, %0, %1 : tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>, tensor<{n}x8xf32>
}}
""".format(n=n)
c = np.full((n, n), 0.75, np.float32)
cpu_case("splat %dx%d f32" % (n, n), mlir, [x, w],
         [c, c + x, (c.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)])

# Splats of each element type, returned and used (f16 and bf16 go through f32).
for elem, value, np_type in [("f64", "-2.5", np.float64), ("f16", "3.0", np.float16),
                             ("i64", "-7", np.int64), ("i32", "5", np.int32),
                             ("i1", "true", np.bool_)]:
    t = "tensor<33x17x%s>" % elem
    mlir = """
func.func @main() -> ({t}, {t}) {{
  %c = kt.constant {{value = dense<{v}> : {t}}} : () -> {t}
  %0 = kt.{op} %c, %c : ({t}, {t}) -> {t}
  return %c, %0 : {t}, {t}
}}
""".format(t=t, v=value, op="logical_or" if elem == "i1" else "add")
    v = np.full((33, 17), True if elem == "i1" else float(value)).astype(np_type)
    cpu_case("splat %s" % t, mlir, [], [v, (v | v) if elem == "i1" else v + v])

# Reductions of splats (kiln-cpu-fuse-elementwise folds the fill into the
# reduction's body: the term is then loop-invariant, and upstream's
# vectorizer combined it once, `sum(ones(8, 64), 1)` = 1; found by
# kiln-reduce's value step). Sum, mean, prod, amax, amin over the inner, the
# outer and all dims, f32 (accumulated in f64) and f64, plus an input.
for elem, np_type in [("f32", np.float32), ("f64", np.float64)]:
    t = "tensor<8x64x%s>" % elem
    rows = "tensor<8x%s>" % elem
    cols = "tensor<64x%s>" % elem
    scalar = "tensor<%s>" % elem
    xin = s.randn(8).astype(np_type)
    mlir = """
func.func @main(%x: {rows}) -> ({rows}, {rows}, {cols}, {scalar}, {rows}, {rows}, {cols}) {{
  %c = kt.constant {{value = dense<1.5> : {t}}} : () -> {t}
  %ones = kt.constant {{value = dense<1.0> : {t}}} : () -> {t}
  %s = kt.sum %ones {{dim = [1]}} : ({t}) -> {rows}
  %sx = kt.add %s, %x : ({rows}, {rows}) -> {rows}
  %m = kt.mean %c {{dim = [1]}} : ({t}) -> {rows}
  %so = kt.sum %c {{dim = [0]}} : ({t}) -> {cols}
  %all = kt.sum %c : ({t}) -> {scalar}
  %mx = kt.amax %c {{dim = [1]}} : ({t}) -> {rows}
  %mn = kt.amin %c {{dim = [1]}} : ({t}) -> {rows}
  %p = kt.prod %ones {{dim = [0]}} : ({t}) -> {cols}
  return %sx, %m, %so, %all, %mx, %mn, %p : {rows}, {rows}, {cols}, {scalar}, {rows}, {rows}, {cols}
}}
""".format(t=t, rows=rows, cols=cols, scalar=scalar)
    c = np.full((8, 64), 1.5, np_type)
    ones = np.ones((8, 64), np_type)
    cpu_case("reductions of splat %s" % t, mlir, [xin],
             [ones.sum(1) + xin, c.mean(1), c.sum(0), np.array(c.sum(), np_type),
              c.max(1), c.min(1), ones.prod(0)])

s.finish()
