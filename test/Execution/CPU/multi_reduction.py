# RUN: %python %s
# REQUIRES: numpy
# linalg.generics with two reduction results over one iteration space
# through the CPU backend (kiln-cpu-tile-vectorize's reduction fast path:
# one read of the inputs, one accumulator per result, cascaded f32 blocks
# for f32 terms summed into f64, partial reductions merged per result; see
# docs/codegen.md "Convolution training, round 11") against NumPy in
# float64: rows of 1, 3, 17, 31, 33, 1000, 4099 (not multiples of the
# vector width, partial cascade blocks), batch_norm_backward's [N, C, HW]
# form (dims 0 and 2 reduced), f32 and f64, large values with a large mean
# (tolerance scaled by the sum of |terms|), a sum with a max, and the forms
# the fast path refuses (a combiner without a neutral element, a result
# reading the other's accumulator, a loop-invariant term: a count), which
# must stay correct.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import numpy as np
from kiln_testing import run, KilnRunError, Suite, ttype as T

suite = Suite(__file__, seed=25)
rng = suite.rng
record = suite.record


def module(shape, red, elem, acc, body, outs=2):
    """func @main(x, y) -> `outs` results of shape `shape` without the dims
    in `red`, each accumulated in `acc` from 0 (for max from -inf) by
    `body` (a list of lines over %a, %b and the accumulators %o, %p)."""
    rank = len(shape)
    dims = ", ".join("d%d" % i for i in range(rank))
    keep = [i for i in range(rank) if i not in red]
    oshape = [shape[i] for i in keep]
    idm = "affine_map<(%s) -> (%s)>" % (dims, dims)
    om = "affine_map<(%s) -> (%s)>" % (dims, ", ".join("d%d" % i for i in keep))
    iters = ", ".join('"reduction"' if i in red else '"parallel"' for i in range(rank))
    tx, to = T(shape, elem), T(oshape, acc)
    lines = ["func.func @main(%%x: %s, %%y: %s) -> (%s, %s) {" % (tx, tx, to, to)]
    inits = []
    for k, v in enumerate(body["init"]):
        lines.append("  %%z%d = arith.constant %s : %s" % (k, v, acc))
        lines.append("  %%e%d = tensor.empty() : %s" % (k, to))
        lines.append("  %%f%d = linalg.fill ins(%%z%d : %s) outs(%%e%d : %s) -> %s"
                     % (k, k, acc, k, to, to))
        inits.append("%%f%d" % k)
    lines.append("  %%r:2 = linalg.generic {indexing_maps = [%s, %s, %s, %s], "
                 "iterator_types = [%s]} ins(%%x, %%y : %s, %s) outs(%s : %s, %s) {"
                 % (idm, idm, om, om, iters, tx, tx, ", ".join(inits), to, to))
    lines.append("  ^bb0(%%a: %s, %%b: %s, %%o: %s, %%p: %s):" % (elem, elem, acc, acc))
    lines += ["    " + l for l in body["lines"]]
    lines.append("    linalg.yield %%v, %%v2 : %s, %s" % (acc, acc))
    lines.append("  } -> (%s, %s)" % (to, to))
    lines.append("  return %%r#0, %%r#1 : %s, %s" % (to, to))
    lines.append("}")
    return "\n".join(lines) + "\n"


# sum(a) and sum(a * b) (batch_norm_backward's pair), the product in the
# element type, each term widened to f64 when the element type is f32.
WIDENED = {"init": ["0.0", "0.0"], "lines": [
    "%w = arith.extf %a : f32 to f64", "%v = arith.addf %o, %w : f64",
    "%m = arith.mulf %a, %b : f32", "%w2 = arith.extf %m : f32 to f64",
    "%v2 = arith.addf %w2, %p : f64"]}
PLAIN = {"init": ["0.0", "0.0"], "lines": [
    "%v = arith.addf %o, %a : {e}", "%m = arith.mulf %a, %b : {e}",
    "%v2 = arith.addf %p, %m : {e}"]}
SUM_MAX = {"init": ["0.0", "0xFF800000"], "lines": [
    "%v = arith.addf %o, %a : f32", "%v2 = arith.maximumf %p, %b : f32"]}
# Refused by the fast path: a - acc has no neutral element; the second
# result adds the first's accumulator (a sum of prefix sums).
SUB = {"init": ["0.0", "0.0"], "lines": [
    "%v = arith.addf %o, %a : f32", "%v2 = arith.subf %b, %p : f32"]}
PREFIX = {"init": ["0.0", "0.0"], "lines": [
    "%v = arith.addf %o, %a : f32", "%v2 = arith.addf %p, %o : f32"]}


# Refused: a loop-invariant term (a count).
COUNT = {"init": ["0.0", "0.0"], "lines": [
    "%one = arith.constant 1.0 : f32",
    "%v = arith.addf %o, %a : f32", "%v2 = arith.addf %p, %one : f32"]}


def fmt(body, elem):
    return {"init": body["init"], "lines": [l.replace("{e}", elem) for l in body["lines"]]}


def check(label, shape, red, elem, acc, body, want_fn, large=False, rtol=None):
    dt = np.float32 if elem == "f32" else np.float64
    if large:
        x = (rng.standard_normal(shape) * 1e3 + 1e6).astype(dt)
    else:
        x = (rng.standard_normal(shape) * 3 + 1).astype(dt)
    y = rng.standard_normal(shape).astype(dt)
    mlir = module(shape, red, elem, acc, fmt(body, elem))
    try:
        got = run(mlir, [x, y], extra_args=["--backend=cpu", "--cpu-threads=2"])
    except KilnRunError as e:
        record(label, False, "kiln-run failed: %s" % str(e)[-400:])
        return
    wants, scales = want_fn(x, y, tuple(red))
    for i, (g, w, sc) in enumerate(zip(got, wants, scales)):
        g = np.asarray(g, dtype=np.float64)
        # Accumulation-order tolerance: relative to the sum of |terms|.
        tol = (rtol if rtol is not None else
               (2e-6 if acc == "f32" else (1e-6 if elem == "f32" else 1e-12)))
        ok = g.shape == w.shape and np.all(np.abs(g - w) <= tol * sc + 1e-30)
        record("%s result%d" % (label, i), ok,
               "" if ok else "max err %g (scale %g)" % (
                   np.max(np.abs(g - w)) if g.shape == w.shape else -1, np.max(sc)))


def sums(x, y, red):
    """sum(x), sum(x * y) (the product rounded in the element type) and
    their sums of |terms|, in float64."""
    p = (x * y).astype(np.float64)
    x64 = x.astype(np.float64)
    return ([x64.sum(axis=red), p.sum(axis=red)],
            [np.abs(x64).sum(axis=red), np.abs(p).sum(axis=red)])


def sum_max(x, y, red):
    x64 = x.astype(np.float64)
    return ([x64.sum(axis=red), y.astype(np.float64).max(axis=red)],
            [np.abs(x64).sum(axis=red), np.abs(y.astype(np.float64)).max(axis=red)])


def sub(x, y, red):
    # p_k = b_k - p_{k-1} from 0 along the (single, last) reduced dim.
    y64 = y.astype(np.float64)
    p = np.zeros(y.shape[:-1])
    for k in range(y.shape[-1]):
        p = y64[..., k] - p
    x64 = x.astype(np.float64)
    return ([x64.sum(axis=red), p], [np.abs(x64).sum(axis=red), np.abs(y64).sum(axis=red)])


def prefix(x, y, red):
    x64 = x.astype(np.float64)
    c = np.cumsum(x64, axis=-1) - x64   # the accumulator before each step
    return ([x64.sum(axis=red), c.sum(axis=-1)],
            [np.abs(x64).sum(axis=red), np.abs(np.cumsum(np.abs(x64), axis=-1)).sum(axis=-1)])


# Rows: f32 terms into f64 (cascade), f32 into f32, f64 into f64.
for k in [1, 3, 17, 31, 33, 1000, 4099]:
    for rows in ([1, 5] if k < 1000 else [7]):
        check("widened rows %dx%d" % (rows, k), (rows, k), [1], "f32", "f64", WIDENED, sums)
        check("f32 rows %dx%d" % (rows, k), (rows, k), [1], "f32", "f32", PLAIN, sums,
              rtol=2e-6 * max(1, np.sqrt(k) / 8))
        check("f64 rows %dx%d" % (rows, k), (rows, k), [1], "f64", "f64", PLAIN, sums)
# batch_norm_backward's [N, C, HW]: threads over C (enough work), N and HW
# reduced.
for shape in [(8, 16, 3001), (3, 5, 17), (1, 33, 1), (2, 7, 785), (8, 64, 196)]:
    check("widened bn %s" % (shape,), shape, [0, 2], "f32", "f64", WIDENED, sums)
    check("f64 bn %s" % (shape,), shape, [0, 2], "f64", "f64", PLAIN, sums)
# Large values with a large mean: 1e6 + N(0, 1e3) over 100k elements per
# channel; f32 blocks summed into f64.
check("widened bn large values", (4, 6, 25001), [0, 2], "f32", "f64", WIDENED, sums,
      large=True)
check("f64 bn large values", (4, 6, 25001), [0, 2], "f64", "f64", PLAIN, sums, large=True)
# A sum with a max.
for k in [5, 100, 1001]:
    check("sum and max 9x%d" % k, (9, k), [1], "f32", "f32", SUM_MAX, sum_max,
          rtol=2e-6 * max(1, np.sqrt(k) / 8))
# Refused forms stay correct.
for k in [1, 7, 100]:
    check("sum and sub 4x%d (refused)" % k, (4, k), [1], "f32", "f32", SUB, sub, rtol=1e-5)
    check("prefix sums 4x%d (refused)" % k, (4, k), [1], "f32", "f32", PREFIX, prefix,
          rtol=1e-5)

def count(x, y, red):
    x64 = x.astype(np.float64)
    n = np.full(x.shape[:-1], float(x.shape[-1]))
    return ([x64.sum(axis=red), n], [np.abs(x64).sum(axis=red), n])


for k in [1, 5, 100]:
    check("sum and count 3x%d (refused)" % k, (3, k), [1], "f32", "f32", COUNT, count,
          rtol=1e-5)

suite.finish()
